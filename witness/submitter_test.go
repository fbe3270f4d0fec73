package witness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/merkle"
)

// A liveLog is a testLog that grows while a Submitter reads it: the log's
// side of witnessing (LogSource and merkle.ConsistencyProver), safe for
// concurrent use.
type liveLog struct {
	mu   sync.Mutex
	l    *testLog
	note []byte
	next chan struct{}
}

func newLiveLog(t testing.TB, prefix string) *liveLog {
	return &liveLog{l: newTestLog(t, "zarlog.example/live", 7, prefix), next: make(chan struct{})}
}

// grow appends n leaves and publishes the new checkpoint.
func (g *liveLog) grow(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.note = g.l.grow(n)
	close(g.next)
	g.next = make(chan struct{})
}

func (g *liveLog) Latest() ([]byte, merkle.Checkpoint, <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.note == nil {
		return nil, merkle.Checkpoint{}, g.next
	}
	return g.note, merkle.Checkpoint{Origin: g.l.origin, Size: g.l.size(), Hash: g.l.b.Root()}, g.next
}

func (g *liveLog) ConsistencyProof(ctx context.Context, from, to uint64) ([]merkle.Hash, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return merkle.ConsistencyProof(ctx, g.l.tiles, from, to)
}

func (g *liveLog) size() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.l.size()
}

// A testWitness is a Witness reached in process: a transport that calls its
// handler directly (so that a testing/synctest bubble holds everything),
// counting the requests, and that can play a dead or a hanging witness.
type testWitness struct {
	w    *Witness
	name string
	url  string
	vkey string
	hits atomic.Int64
	dead atomic.Bool // refuse connections
	hang atomic.Bool // answer nothing until the request's context ends
}

// witnessNet routes requests to the testWitnesses by host.
type witnessNet map[string]*testWitness

func (n witnessNet) RoundTrip(r *http.Request) (*http.Response, error) {
	w := n[r.URL.Host]
	if w == nil {
		return nil, fmt.Errorf("no route to %s", r.URL.Host)
	}
	w.hits.Add(1)
	if w.dead.Load() {
		return nil, errors.New("connection refused")
	}
	if w.hang.Load() {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	rec := httptest.NewRecorder()
	w.w.Handler().ServeHTTP(rec, r)
	return rec.Result(), nil
}

// newTestWitnesses starts n witnesses of the live log's key.
func newTestWitnesses(t testing.TB, g *liveLog, n int) (witnessNet, []*testWitness) {
	t.Helper()
	net := witnessNet{}
	var ws []*testWitness
	for i := range n {
		name := fmt.Sprintf("witness.example/w%d", i)
		skey, vkey, err := merkle.GenerateCosignerKey(testRand(byte(70+i)), name)
		if err != nil {
			t.Fatal(err)
		}
		w, err := New(context.Background(), Config{Dir: "/w", FS: vfs.NewMem(), Logs: []note.Verifier{g.l.verifier()}, Key: skey})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		host := fmt.Sprintf("w%d.test", i)
		tw := &testWitness{w: w, name: name, url: "http://" + host, vkey: vkey}
		net[host] = tw
		ws = append(ws, tw)
	}
	return net, ws
}

// policyOf is a policy of the live log and the witnesses, with quorum q
// (a witness name W0…, or "all"/"any"/k for a group of them all).
func policyOf(t testing.TB, g *liveLog, ws []*testWitness, q string) []byte {
	t.Helper()
	text := "log " + g.l.vkey + "\n"
	var names []string
	for i, w := range ws {
		text += fmt.Sprintf("witness W%d %s %s\n", i, w.vkey, w.url)
		names = append(names, fmt.Sprintf("W%d", i))
	}
	if strings.HasPrefix(q, "W") {
		text += "quorum " + q + "\n"
	} else {
		text += "group G " + q + " " + strings.Join(names, " ") + "\nquorum G\n"
	}
	parsed(t, []byte(text))
	return []byte(text)
}

// parsed parses a policy text.
func parsed(t testing.TB, text []byte) *merkle.Policy {
	t.Helper()
	p, err := merkle.ParsePolicy(text)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newTestSubmitter returns a Submitter of the live log to the witnesses,
// keeping its witnessed checkpoints in wd (a new store on fs if nil).
func newTestSubmitter(t testing.TB, g *liveLog, net witnessNet, p []byte, fs vfs.FS, reg prometheus.Registerer) *Submitter {
	t.Helper()
	grp, err := NewGroup(parsed(t, p), &http.Client{Transport: net})
	if err != nil {
		t.Fatal(err)
	}
	if fs == nil {
		fs = vfs.NewMem()
	}
	wd, err := OpenWitnessed(fs, "/log/witnessed", g.l.verifier(), p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSubmitter(SubmitterConfig{Group: grp, Log: g, Proofs: g, LogKey: g.l.verifier(), Witnessed: wd,
		Interval: time.Minute, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSubmitterCadence: a log that signs a checkpoint every 100 ms for ten
// minutes is sent to its two witnesses once at the start and then at most
// once a minute, the latest checkpoint each time; every checkpoint kept
// meets the quorum and the witnessed size follows the log within a minute;
// once the log stops growing nothing more is sent. A restarted Submitter
// knows the witnesses' sizes from the kept checkpoint: its first round is
// one request per witness, not a 409 and another.
func TestSubmitterCadence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newLiveLog(t, "a")
		net, ws := newTestWitnesses(t, g, 2)
		p := policyOf(t, g, ws, "all")
		fs := vfs.NewMem()
		reg := prometheus.NewRegistry()
		s := newTestSubmitter(t, g, net, p, fs, reg)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()

		const run = 10 * time.Minute
		start := time.Now()
		var kept []uint64
		seen := s.Witnessed()
		for time.Since(start) < run {
			g.grow(3)
			time.Sleep(100 * time.Millisecond)
			if n, cp, _ := seen.Latest(); n != nil && (len(kept) == 0 || kept[len(kept)-1] != cp.Size) {
				if _, err := parsed(t, p).CheckWitnesses(n); err != nil {
					t.Fatalf("a kept checkpoint does not meet the quorum: %v", err)
				}
				kept = append(kept, cp.Size)
			}
		}
		synctest.Wait()
		rounds := int(run/time.Minute) + 1 // at 0, 1m, …, 10m
		for _, w := range ws {
			if got := w.hits.Load(); got > int64(rounds) || got < int64(rounds-1) {
				t.Errorf("%s got %d requests in %v, want %d (one at the start, one a minute)", w.name, got, run, rounds)
			}
		}
		t.Logf("in %v: %d and %d requests, %d witnessed checkpoints kept, the last of size %d (the log's %d)", run, ws[0].hits.Load(), ws[1].hits.Load(), len(kept), kept[len(kept)-1], g.size())
		if len(kept) < rounds-1 {
			t.Errorf("%d witnessed checkpoints kept in %v: %v", len(kept), run, kept)
		}
		// The log stops growing: the last round (within a minute) sends the
		// final checkpoint, and then nothing is sent.
		time.Sleep(time.Minute)
		synctest.Wait()
		_, wcp, _ := seen.Latest()
		if wcp.Size != g.size() {
			t.Errorf("witnessed size %d a minute after the log stopped at %d", wcp.Size, g.size())
		}
		hits := ws[0].hits.Load()
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if got := ws[0].hits.Load(); got != hits {
			t.Errorf("%d requests sent for a log that did not grow", got-hits)
		}
		if got := testutil.ToFloat64(s.m.requests.WithLabelValues(ws[0].name)); got != float64(hits) {
			t.Errorf("zarlog_witnessing_requests_total = %v, the witness got %d", got, hits)
		}
		if got := testutil.ToFloat64(s.m.size); got != float64(g.size()) {
			t.Errorf("zarlog_witnessing_witnessed_size = %v, want %d", got, g.size())
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v", err)
		}

		// A restart, on the kept state, after the log grew.
		g.grow(5)
		s2 := newTestSubmitter(t, g, net, p, fs, nil)
		before := ws[0].hits.Load()
		if err := s2.Round(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := ws[0].hits.Load() - before; got != 1 {
			t.Errorf("the restarted submitter's first round made %d requests, want 1", got)
		}
		if _, cp, _ := s2.Witnessed().Latest(); cp.Size != g.size() {
			t.Errorf("after the restart witnessed %d, the log is at %d", cp.Size, g.size())
		}
	})
}

// TestSubmitterSlowAndDeadWitness: under a 1-of-2 policy, a witness that
// hangs delays only its own round (bounded by the round's timeout) and one
// that refuses connections fails fast; the other's cosignature is enough,
// neither failure is an inconsistency, and Health stays nil.
func TestSubmitterSlowAndDeadWitness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newLiveLog(t, "a")
		net, ws := newTestWitnesses(t, g, 2)
		p := policyOf(t, g, ws, "any")
		s := newTestSubmitter(t, g, net, p, nil, nil)
		g.grow(10)
		ws[1].hang.Store(true)
		start := time.Now()
		if err := s.Round(t.Context()); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != DefaultRoundTimeout {
			t.Errorf("a round with a hanging witness took %v, want the timeout %v", took, DefaultRoundTimeout)
		}
		ws[1].hang.Store(false)
		ws[1].dead.Store(true)
		g.grow(10)
		start = time.Now()
		if err := s.Round(t.Context()); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("a round with a dead witness took %v", took)
		}
		st := s.Status()
		if st[0].Cosigned != 20 || st[1].Cosigned != 0 || st[1].LastErr == nil || st[1].Inconsistent {
			t.Errorf("status: %+v", st)
		}
		if err := s.Health(); err != nil {
			t.Errorf("Health: %v", err)
		}
		if _, cp, _ := s.Witnessed().Latest(); cp.Size != 20 {
			t.Errorf("witnessed %d", cp.Size)
		}
	})
}

// TestSubmitterInconsistent: a witness that cosigned another history of the
// log (a fork with the same key), or a larger checkpoint than the log now
// has (the log went back), refuses the log's checkpoint; the Submitter
// reports it in Health, its status and zarlog_witnessing_inconsistent_total,
// and keeps no witnessed checkpoint under a 2-of-2 policy. The report clears
// when the witness cosigns again.
func TestSubmitterInconsistent(t *testing.T) {
	g := newLiveLog(t, "a")
	net, ws := newTestWitnesses(t, g, 2)
	p := policyOf(t, g, ws, "all")
	s := newTestSubmitter(t, g, net, p, nil, nil)
	ctx := t.Context()

	// The fork: same key, other leaves, shown to witness 1 only.
	fork := newTestLog(t, g.l.origin, 7, "fork")
	if _, err := ws[1].w.AddCheckpoint(ctx, 0, nil, fork.grow(5)); err != nil {
		t.Fatal(err)
	}
	g.grow(12)
	if err := s.Round(ctx); err == nil {
		t.Fatal("a round with a witness refusing the checkpoint kept it")
	}
	st := s.Status()
	if !st[1].Inconsistent || st[0].Inconsistent || !errors.Is(st[1].LastErr, ErrInconsistent) {
		t.Fatalf("status after the fork: %+v", st)
	}
	if err := s.Health(); err == nil || !strings.Contains(err.Error(), ws[1].name) {
		t.Errorf("Health after the fork: %v", err)
	}
	if got := testutil.ToFloat64(s.m.inconsistent.WithLabelValues(ws[1].name)); got != 1 {
		t.Errorf("zarlog_witnessing_inconsistent_total = %v", got)
	}
	if got := testutil.ToFloat64(s.m.refusing); got != 1 {
		t.Errorf("zarlog_witnessing_refusing_witnesses = %v", got)
	}
	if n, _, _ := s.Witnessed().Latest(); n != nil {
		t.Errorf("a checkpoint was kept without the quorum:\n%s", n)
	}

	// A log gone back: witness 0 has cosigned size 12 of this history; a
	// log restored to size 8 of it (a prefix) asks it again.
	back := newLiveLog(t, "a")
	back.grow(8)
	s2 := newTestSubmitter(t, back, net, policyOf(t, back, ws[:1], "W0"), nil, nil)
	if err := s2.Round(ctx); err == nil {
		t.Fatal("a log gone back was witnessed")
	}
	var ahead *AheadError
	if st := s2.Status(); !st[0].Inconsistent || !errors.As(st[0].LastErr, &ahead) || ahead.Size != 12 || ahead.Asked != 8 {
		t.Errorf("status of a log gone back: %+v", st)
	}

	// Witness 1 is healed (its state reset to this history): the report clears.
	w1, err := New(ctx, Config{Dir: "/w", FS: vfs.NewMem(), Logs: []note.Verifier{g.l.verifier()}, Key: mustKey(t, 71, ws[1].name)})
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Close()
	net["w1.test"].w = w1
	if err := s.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Health(); err != nil {
		t.Errorf("Health after the witness cosigned again: %v", err)
	}
}

func mustKey(t testing.TB, seed byte, name string) string {
	skey, _, err := merkle.GenerateCosignerKey(testRand(seed), name)
	if err != nil {
		t.Fatal(err)
	}
	return skey
}

// TestWitnessedPut: only a checkpoint signed by the log that meets the
// quorum is kept; the witnessed checkpoint never shrinks or forks; Latest's
// channel closes when a newer one is kept.
func TestWitnessedPut(t *testing.T) {
	g := newLiveLog(t, "a")
	net, ws := newTestWitnesses(t, g, 2)
	p := policyOf(t, g, ws, "all")
	s := newTestSubmitter(t, g, net, p, nil, nil)
	wd := s.Witnessed()
	g.grow(4)
	n4, _, _ := g.Latest()
	if err := wd.Put(n4); !errors.Is(err, ErrNotWitnessed) {
		t.Errorf("a checkpoint without cosignatures: %v", err)
	}
	if err := s.Round(t.Context()); err != nil {
		t.Fatal(err)
	}
	w4, _, next := wd.Latest()
	g.grow(4)
	if err := s.Round(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-next:
	default:
		t.Error("Latest's channel is open after a newer checkpoint was kept")
	}
	if err := wd.Put(w4); err == nil {
		t.Error("a smaller witnessed checkpoint replaced the latest")
	}
	other := newTestLog(t, "zarlog.example/other", 8, "a")
	if err := wd.Put(other.grow(8)); !errors.Is(err, ErrNotWitnessed) {
		t.Errorf("another log's checkpoint: %v", err)
	}

	// A policy the kept checkpoint does not meet (another witness): nothing
	// is witnessed, and Latest's channel says so; back to the first policy,
	// the kept checkpoint is witnessed again.
	kept, _, next := wd.Latest()
	_, ws2 := newTestWitnesses(t, g, 3)
	if err := wd.SetPolicy(policyOf(t, g, ws2[2:], "W0")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-next:
	default:
		t.Error("Latest's channel is open after a policy change")
	}
	if n, _, _ := wd.Latest(); n != nil {
		t.Errorf("a checkpoint is witnessed under a policy its cosignatures do not meet:\n%s", n)
	}
	if err := wd.SetPolicy(p); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := wd.Latest(); !bytes.Equal(n, kept) {
		t.Errorf("back to the first policy, Latest is %q", n)
	}
	// A store opened without a policy witnesses nothing until it gets one.
	none, err := OpenWitnessed(vfs.NewMem(), "/none", g.l.verifier(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := none.Put(kept); !errors.Is(err, ErrNotWitnessed) {
		t.Errorf("Put without a policy: %v", err)
	}
	if err := none.SetPolicy(p); err != nil {
		t.Fatal(err)
	}
	if err := none.Put(kept); err != nil {
		t.Errorf("Put after SetPolicy: %v", err)
	}
	// Reopened without a policy, it has the one it kept, and the checkpoint.
	again, err := OpenWitnessed(none.fs, "/none", g.l.verifier(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := again.Latest(); !bytes.Equal(again.PolicyText(), p) || !bytes.Equal(n, kept) {
		t.Errorf("reopened: policy %q, checkpoint %q", again.PolicyText(), n)
	}
	// A policy that does not list the log is refused.
	noLog := p[bytes.IndexByte(p, '\n')+1:]
	parsed(t, noLog)
	if err := none.SetPolicy(noLog); err == nil {
		t.Error("a policy without the log's line was accepted")
	}
}

// TestWitnessedCrash keeps witnessed checkpoints and, after each, simulates
// a power loss (a crash clone of the file system: only what was synced,
// plus a random part of what was not): the reopened store has the
// checkpoint kept. On a file system whose syncs do nothing the same crash
// loses it, so the test would catch a store that does not sync. A store of
// another log's directory is refused.
func TestWitnessedCrash(t *testing.T) {
	g := newLiveLog(t, "a")
	net, ws := newTestWitnesses(t, g, 1)
	p := policyOf(t, g, ws, "W0")
	for _, sync := range []bool{true, false} {
		mem := vfs.NewCrashableMem()
		var fs vfs.FS = mem
		if !sync {
			fs = noSyncFS{mem}
		}
		s := newTestSubmitter(t, g, net, p, fs, nil)
		for i := range 4 {
			g.grow(i + 1)
			if err := s.Round(t.Context()); err != nil {
				t.Fatal(err)
			}
			want, _, _ := s.Witnessed().Latest()
			for seed := range 3 {
				crashed := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50 * (seed % 2), RNG: rand.New(rand.NewPCG(uint64(seed), 0))})
				wd, err := OpenWitnessed(crashed, "/log/witnessed", g.l.verifier(), p)
				if err != nil {
					t.Fatal(err)
				}
				got, _, _ := wd.Latest()
				if sync && string(got) != string(want) {
					t.Fatalf("after a crash the store has %q, want %q", got, want)
				}
				if !sync && got != nil && seed == 0 {
					t.Fatalf("without syncs the crash kept the checkpoint: the test cannot tell")
				}
			}
		}
	}
	mem := vfs.NewMem()
	s := newTestSubmitter(t, g, net, p, mem, nil)
	if err := s.Round(t.Context()); err != nil {
		t.Fatal(err)
	}
	other := newTestLog(t, "zarlog.example/other", 8, "a")
	if _, err := OpenWitnessed(mem, "/log/witnessed", other.verifier(), p); err == nil {
		t.Error("a store of another log's witnessed checkpoints was opened")
	}
}
