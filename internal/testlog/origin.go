package testlog

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sumnote "golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/serve"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/publisher"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
	"github.com/zarlog/zarlog/witness"
)

// Names of the test log and emitter.
const (
	LogName = "origin.zarlog.example/log"
	Emitter = "tavla-east"
)

// Now is the origin's clock: a fixed time 30 s before gamegen's drand
// round, so that anchored-v1 games anchored to it are accepted.
var Now = testonly.BeaconTime.Add(-30 * time.Second)

// An Origin is a running origin log.
type Origin struct {
	L       *ledger.Ledger
	Bundles *publisher.Store
	VKey    string // the log's verifier key
	URL     string // the tlog-tiles prefix, without a trailing slash
	Server  *httptest.Server

	// With OriginConfig.Witnesses: the witnesses, the witnessed
	// checkpoints and the policy the origin publishes.
	Witnesses []*witness.Witness
	Witnessed *witness.Witnessed
	Submitter *witness.Submitter
	Policy    []byte

	emitter   events.Signer
	mu        sync.Mutex
	handler   http.Handler
	hook      func(w http.ResponseWriter, r *http.Request) bool
	stored    map[string]bool // games whose bundle is stored
	witnessed map[string]bool // games whose bundle is stored at a witnessed checkpoint
	cond      *sync.Cond
}

// OriginConfig configures an Origin.
type OriginConfig struct {
	// Dir is the data directory. Required.
	Dir string
	// CheckpointInterval is the ledger's; zero means none: Sign signs.
	CheckpointInterval time.Duration
	// Witnesses, if not zero, is how many witnesses (package witness, in
	// this process, over HTTP) the origin has its checkpoints witnessed by,
	// all of them needed, at most once per WitnessInterval (zero: 20 ms);
	// it then serves /checkpoint.witnessed, /witness-policy and
	// /emitter-keys as zarlog serve does, and builds the games' bundles
	// again at the witnessed checkpoints.
	Witnesses       int
	WitnessInterval time.Duration
}

// StartOrigin starts an origin in cfg.Dir and stops it in t.Cleanup. Another
// Origin started in another directory has the same key: a fork.
func StartOrigin(t testing.TB, cfg OriginConfig) *Origin {
	t.Helper()
	signer, vkey, err := testonly.Key(LogName)
	if err != nil {
		t.Fatal(err)
	}
	verifier, err := merkle.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	es, evkey, err := testonly.Key(Emitter)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := events.NewKeyring(evkey)
	if err != nil {
		t.Fatal(err)
	}
	interval := cfg.CheckpointInterval
	if interval == 0 {
		interval = -1
	}
	ctx := context.Background()
	l, err := ledger.Open(ctx, ledger.Config{Dir: cfg.Dir + "/ledger", Signer: signer, Verifier: verifier, Emitters: kr,
		Moves: movecheck.Checker{}, CheckpointInterval: interval, Now: func() time.Time { return Now }})
	if err != nil {
		t.Fatal(err)
	}
	store, err := publisher.OpenStore(publisher.StoreConfig{Dir: cfg.Dir + "/bundles", Origin: LogName})
	if err != nil {
		l.Close()
		t.Fatal(err)
	}
	o := &Origin{L: l, Bundles: store, VKey: vkey, emitter: es.(events.Signer), stored: map[string]bool{}, witnessed: map[string]bool{}}
	o.cond = sync.NewCond(&o.mu)
	ctx, stopAll := context.WithCancel(ctx)
	var done sync.WaitGroup
	var wit publisher.WitnessReader
	var wsrc publisher.WitnessedSource
	if cfg.Witnesses > 0 {
		o.Submitter = o.startWitnesses(t, cfg, verifier)
		done.Go(func() { o.Submitter.Run(ctx) })
		wit, wsrc = serve.WitnessReader(o.Witnessed), o.Witnessed
	}
	bundler, err := publisher.NewBundler(publisher.BundlerConfig{Source: serve.NewBundleSource(l), Store: store, Witnessed: wsrc, Workers: 2,
		Announce: func(ctx context.Context, a publisher.Announcement) error {
			o.mu.Lock()
			o.stored[a.Game] = true
			o.witnessed[a.Game] = a.Witnessed
			o.cond.Broadcast()
			o.mu.Unlock()
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := serve.Handler(l, store, wit, vkey, []string{evkey}, nil, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	o.handler = h
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		hook := o.hook
		o.mu.Unlock()
		if hook != nil && hook(w, r) {
			return
		}
		h.ServeHTTP(w, r)
	}))
	o.URL = o.Server.URL
	done.Go(func() { bundler.Run(ctx) })
	t.Cleanup(func() {
		o.Server.Close()
		stopAll()
		done.Wait()
		o.mu.Lock()
		o.cond.Broadcast()
		o.mu.Unlock()
		store.Close()
		l.Close()
	})
	return o
}

// startWitnesses starts cfg.Witnesses witnesses of the log with key v, each
// an HTTP server, and returns the Submitter that has the log's checkpoints
// witnessed by them.
func (o *Origin) startWitnesses(t testing.TB, cfg OriginConfig, v sumnote.Verifier) *witness.Submitter {
	t.Helper()
	text := ""
	var names []string
	for i := range cfg.Witnesses {
		name := fmt.Sprintf("w%d.witness.example", i)
		seed := testonly.Label32(fmt.Sprintf("%s witness %d", LogName, i))
		skey, wvkey, err := merkle.GenerateCosignerKey(bytes.NewReader(append(seed[:], seed[:]...)), name)
		if err != nil {
			t.Fatal(err)
		}
		w, err := witness.New(context.Background(), witness.Config{Dir: fmt.Sprintf("%s/witness%d", cfg.Dir, i), Logs: []sumnote.Verifier{v}, Key: skey})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(w.Handler())
		t.Cleanup(func() { srv.Close(); w.Close() })
		o.Witnesses = append(o.Witnesses, w)
		text += fmt.Sprintf("witness W%d %s %s\n", i, wvkey, srv.URL)
		names = append(names, fmt.Sprintf("W%d", i))
	}
	text += "group all all " + strings.Join(names, " ") + "\nquorum all\n"
	policy, p, err := serve.PolicyFor([]byte(text), o.VKey)
	if err != nil {
		t.Fatal(err)
	}
	o.Policy = policy
	if o.Witnessed, err = witness.OpenWitnessed(nil, cfg.Dir+"/witnessed", v, policy); err != nil {
		t.Fatal(err)
	}
	g, err := witness.NewGroup(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	interval := cfg.WitnessInterval
	if interval == 0 {
		interval = 20 * time.Millisecond
	}
	sub, err := witness.NewSubmitter(witness.SubmitterConfig{Group: g, Log: o.L, Proofs: o.L, LogKey: v, Witnessed: o.Witnessed, Interval: interval})
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

// WaitWitnessed waits until the games' bundles are stored at a witnessed
// checkpoint.
func (o *Origin) WaitWitnessed(t testing.TB, ids ...string) {
	t.Helper()
	o.wait(t, "witnessed", func() bool {
		for _, id := range ids {
			if !o.witnessed[id] {
				return false
			}
		}
		return true
	})
}

// Handler returns the origin's own HTTP handler (without the hook).
func (o *Origin) Handler() http.Handler { return o.handler }

// SetHook makes hook see every request first; it answers the request itself
// by returning true. Nil removes it.
func (o *Origin) SetHook(hook func(w http.ResponseWriter, r *http.Request) bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.hook = hook
}

// schemes rotate over the games a Play call makes.
var schemes = []struct {
	scheme  events.Scheme
	variant rules.Variant
}{
	{events.Tavlarena, rules.Portes},
	{events.PerRoll, rules.Plakoto},
	{events.Anchored, rules.Backgammon},
}

// Games returns the leaves of n finished games (the three schemes in turn,
// up to maxRolls rolls each) labelled label/0 … label/n-1, one slice per
// game, and their ids.
func (o *Origin) Games(t testing.TB, label string, n, maxRolls int) (ids []string, games [][][]byte) {
	t.Helper()
	for i := range n {
		s := schemes[i%len(schemes)]
		c := testonly.Config{Scheme: s.scheme, Variant: s.variant, Label: fmt.Sprintf("%s/%d", label, i), Emitter: Emitter, MaxRolls: maxRolls}
		p, err := testonly.Play(c)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := testonly.Events(c, p.Bodies, o.emitter)
		if err != nil {
			t.Fatal(err)
		}
		leaves := make([][]byte, len(evs))
		for j, ev := range evs {
			if leaves[j], err = events.Format(ev); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, c.GameID())
		games = append(games, leaves)
	}
	return ids, games
}

// Interleave returns the games' leaves in one sequence, taking one event of
// each game in turn, so that games overlap in the log.
func Interleave(games [][][]byte) [][]byte {
	var out [][]byte
	for i := 0; ; i++ {
		more := false
		for _, g := range games {
			if i < len(g) {
				out = append(out, g[i])
				more = true
			}
		}
		if !more {
			return out
		}
	}
}

// Append appends leaves (events of the test emitter) in calls of at most
// batch leaves, and fails unless every one is appended.
func (o *Origin) Append(t testing.TB, leaves [][]byte, batch int) {
	t.Helper()
	for len(leaves) > 0 {
		n := min(batch, len(leaves))
		in := make([]ledger.Input, n)
		for i := range in {
			in[i] = ledger.Input{Emitter: Emitter, Data: leaves[i]}
		}
		outs, err := o.L.Append(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for i, out := range outs {
			if out.Result != ledger.Appended {
				t.Fatalf("leaf %d: %v %v", i, out.Result, out.Reject)
			}
		}
		leaves = leaves[n:]
	}
}

// Play appends n games and signs a checkpoint over them; it returns their
// ids.
func (o *Origin) Play(t testing.TB, label string, n, maxRolls int) []string {
	t.Helper()
	ids, games := o.Games(t, label, n, maxRolls)
	o.Append(t, Interleave(games), 500)
	o.Sign(t)
	return ids
}

// Sign signs a checkpoint over the log now and returns it.
func (o *Origin) Sign(t testing.TB) []byte {
	t.Helper()
	n, err := o.L.Sign(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// WaitBundles waits until the games' bundles are stored.
func (o *Origin) WaitBundles(t testing.TB, ids ...string) {
	t.Helper()
	o.wait(t, "stored", func() bool {
		for _, id := range ids {
			if !o.stored[id] {
				return false
			}
		}
		return true
	})
}

// wait waits until cond holds (under o.mu), or fails after a minute.
func (o *Origin) wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		o.mu.Lock()
		o.cond.Broadcast()
		o.mu.Unlock()
	})
	defer stop()
	o.mu.Lock()
	defer o.mu.Unlock()
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("the games' bundles were not %s: %v", what, ctx.Err())
		}
		o.cond.Wait()
	}
}
