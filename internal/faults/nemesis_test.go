package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zarlog/zarlog/internal/faults"
	"github.com/zarlog/zarlog/internal/testonly"
)

// The kinds of fault, each at least once in a run, in a seeded order.
var faultKinds = []string{
	"isolate-leader", // the stream's leader cut off from the other NATS nodes
	"cut-minority",   // another NATS node cut off from the rest
	"cut-primary",    // the primary cut off from NATS and from the bucket
	"pause-primary",  // SIGSTOP, SIGCONT
	"pause-nats",     // SIGSTOP, SIGCONT
	"kill-nats",      // SIGKILL, restart
	"truncate-nats",  // SIGKILL, the newest block file truncated, restart
	"kill-primary",   // SIGKILL, restart once the standby took over
}

// A span is a fault in force.
type span struct {
	name     string
	from, to time.Time
}

// A takeover after kill -9 of the primary.
type takeover struct {
	took, receipt time.Duration // until the standby took over; until the next receipt
}

type takeovers []takeover

func (ts takeovers) String() string {
	if len(ts) == 0 {
		return "none in this run"
	}
	med := func(f func(takeover) time.Duration) (time.Duration, time.Duration) {
		var ds []time.Duration
		for _, t := range ts {
			ds = append(ds, f(t))
		}
		slices.Sort(ds)
		return ds[len(ds)/2].Round(100 * time.Millisecond), ds[len(ds)-1].Round(100 * time.Millisecond)
	}
	m1, x1 := med(func(t takeover) time.Duration { return t.took })
	m2, x2 := med(func(t takeover) time.Duration { return t.receipt })
	return fmt.Sprintf("%d; the standby took over after median %v, max %v; the next receipt after median %v, max %v (lease 6 s, the default)", len(ts), m1, x1, m2, x2)
}

// nemesis runs faults for duration: every kind once (kill-primary three
// times) in a seeded order, then kinds at random, with a quiet second or three between them.
func (d *deployment) nemesis(ctx context.Context, rng *rand.Rand, duration time.Duration, rec *recorder) takeovers {
	nc, err := nats.Connect(d.natsURLs(), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		d.t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	// Every kind once, and kill-primary twice more: three takeovers to
	// measure in the shortest run.
	order := append(slices.Clone(faultKinds), "kill-primary", "kill-primary")
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	var tos takeovers
	end := time.Now().Add(duration)
	for i := 0; i < len(order) || time.Now().Before(end); i++ {
		if ctx.Err() != nil || d.t.Failed() {
			break
		}
		kind := faultKinds[rng.IntN(len(faultKinds))]
		if i < len(order) {
			kind = order[i]
		}
		sp := span{name: kind, from: time.Now()}
		if to, ok := d.apply(ctx, rng, js, kind, rec); ok {
			tos = append(tos, to)
		}
		sp.to = time.Now()
		d.mu.Lock()
		d.spans = append(d.spans, sp)
		d.mu.Unlock()
		time.Sleep(time.Second + time.Duration(rng.Int64N(int64(2*time.Second))))
	}
	return tos
}

// holdFor returns a time between lo and hi seconds.
func holdFor(rng *rand.Rand, lo, hi float64) time.Duration {
	return time.Duration((lo + rng.Float64()*(hi-lo)) * float64(time.Second)).Round(100 * time.Millisecond)
}

// streamLeader returns the index of the events stream's leader, or -1.
func (d *deployment) streamLeader(ctx context.Context, js jetstream.JetStream) int {
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	s, err := js.Stream(cctx, streamName)
	if err != nil {
		return -1
	}
	info := s.CachedInfo()
	if info.Cluster == nil {
		return -1
	}
	for i := range d.nats {
		if info.Cluster.Leader == fmt.Sprintf("n%d", i+1) {
			return i
		}
	}
	return -1
}

func (d *deployment) otherNATS(i int) []*faults.Host {
	var hs []*faults.Host
	for j, h := range d.natsHosts {
		if j != i {
			hs = append(hs, h)
		}
	}
	return hs
}

// apply applies one fault, holds it and heals it.
func (d *deployment) apply(ctx context.Context, rng *rand.Rand, js jetstream.JetStream, kind string, rec *recorder) (takeover, bool) {
	t := d.t
	switch kind {
	case "isolate-leader", "cut-minority":
		leader := d.streamLeader(ctx, js)
		i := leader
		if kind == "cut-minority" || i < 0 {
			for i = rng.IntN(3); i == leader; i = rng.IntN(3) {
			}
		}
		h := d.natsHosts[i]
		if err := h.Cut(d.otherNATS(i)...); err != nil {
			t.Error(err)
		}
		what := "a minority: n%d (not the stream's leader, n%d) cut off from the other NATS nodes"
		if kind == "isolate-leader" {
			what = "the stream's leader n%d isolated from the other NATS nodes (leader n%d)"
		}
		hd := holdFor(rng, 2, 6)
		d.logf(what+" for %v", i+1, leader+1, hd)
		time.Sleep(hd)
		if err := h.Heal(); err != nil {
			t.Error(err)
		}
	case "cut-primary":
		p := d.waitPrimary(time.Minute)
		if err := p.host.Cut(append(slices.Clone(d.natsHosts), d.s3Host)...); err != nil {
			t.Error(err)
		}
		hd := holdFor(rng, 2, 10)
		d.logf("the primary %s cut off from NATS and the bucket for %v", p.name, hd)
		time.Sleep(hd)
		if err := p.host.Heal(); err != nil {
			t.Error(err)
		}
	case "pause-primary":
		p := d.waitPrimary(time.Minute)
		if err := p.proc.Pause(); err != nil {
			t.Logf("pausing %s: %v", p.name, err)
			return takeover{}, false
		}
		hd := holdFor(rng, 1, 9)
		d.logf("the primary %s paused (SIGSTOP) for %v", p.name, hd)
		time.Sleep(hd)
		p.proc.Resume()
	case "pause-nats":
		i := rng.IntN(3)
		if err := d.nats[i].Pause(); err != nil {
			t.Error(err)
		}
		hd := holdFor(rng, 1, 5)
		d.logf("NATS n%d paused (SIGSTOP) for %v", i+1, hd)
		time.Sleep(hd)
		d.nats[i].Resume()
	case "kill-nats", "truncate-nats":
		i := rng.IntN(3)
		if err := d.nats[i].Kill(); err != nil {
			t.Error(err)
		}
		what := "killed (SIGKILL)"
		if kind == "truncate-nats" {
			what += ", " + d.truncateNewestBlock(rng, i) + ","
		}
		hd := holdFor(rng, 0.5, 3)
		d.logf("NATS n%d %s restarted after %v", i+1, what, hd)
		time.Sleep(hd)
		if err := d.nats[i].Start(); err != nil {
			t.Error(err)
		}
	case "kill-primary":
		p := d.waitPrimary(time.Minute)
		var other *zNode
		for _, nd := range d.nodes {
			if nd != p {
				other = nd
			}
		}
		// The standby must be up to take over.
		if !d.waitReady(other, time.Minute) {
			d.logf("kill-primary skipped: the standby %s is not running", other.name)
			return takeover{}, false
		}
		other.mu.Lock()
		tookBefore := len(other.took)
		other.mu.Unlock()
		p.mu.Lock()
		p.hold = true
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			p.hold = false
			p.mu.Unlock()
		}()
		t0 := time.Now()
		if err := p.proc.Kill(); err != nil {
			t.Error(err)
		}
		d.logf("the primary %s killed (SIGKILL); restarted once %s took over", p.name, other.name)
		var to takeover
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			other.mu.Lock()
			took := other.took
			other.mu.Unlock()
			if len(took) > tookBefore {
				to.took = took[len(took)-1].Sub(t0)
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("the standby %s did not take over within a minute of kill -9 of %s:\n%s", other.name, p.name, other.proc.Tail())
				return takeover{}, false
			}
		}
		if at, ok := rec.nextReceiptAfter(t0.Add(to.took), time.Minute); ok {
			to.receipt = at.Sub(t0)
		}
		d.logf("takeover: %s took over %.1fs after the kill; the next receipt %.1fs after it", other.name, to.took.Seconds(), to.receipt.Seconds())
		return to, true
	}
	return takeover{}, false
}

// truncateNewestBlock truncates the newest message block file of the
// events stream in NATS node i's store (it is not running) to a random
// length, as Jepsen did, and says what it did.
func (d *deployment) truncateNewestBlock(rng *rand.Rand, i int) string {
	var newest string
	var newestTime time.Time
	filepath.WalkDir(d.natsDirs[i], func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".blk") || !strings.Contains(p, streamName) {
			return nil
		}
		if info, err := e.Info(); err == nil && (newest == "" || info.ModTime().After(newestTime)) {
			newest, newestTime = p, info.ModTime()
		}
		return nil
	})
	if newest == "" {
		return "no block file to truncate"
	}
	info, err := os.Stat(newest)
	if err != nil {
		return err.Error()
	}
	size := info.Size()
	to := int64(0)
	if size > 0 {
		to = rng.Int64N(size)
	}
	if err := os.Truncate(newest, to); err != nil {
		d.t.Error(err)
	}
	return fmt.Sprintf("its newest block file %s truncated from %d to %d bytes", filepath.Base(newest), size, to)
}

// healAll removes every partition, resumes every process and starts
// every one not running.
func (d *deployment) healAll() {
	for _, h := range append(slices.Clone(d.natsHosts), d.s3Host, d.nodes[0].host, d.nodes[1].host) {
		if err := h.Heal(); err != nil {
			d.t.Error(err)
		}
	}
	for _, p := range d.nats {
		if p.Running() {
			p.Resume()
		} else if err := p.Start(); err != nil {
			d.t.Error(err)
		}
	}
	for _, nd := range d.nodes {
		nd.mu.Lock()
		nd.hold = false
		nd.mu.Unlock()
		if nd.proc.Running() {
			nd.proc.Resume()
		}
	}
}

// faultsDone lists the faults applied, in order.
func (d *deployment) faultsDone() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, s := range d.spans {
		out = append(out, s.name)
	}
	return out
}

// faultsDuring names the faults in force between from and to, and the
// last one that ended in the 10 s before from.
func (d *deployment) faultsDuring(from, to time.Time) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var names []string
	for i, s := range d.spans {
		switch {
		case s.to.Before(from) && from.Sub(s.to) < 10*time.Second && (i+1 == len(d.spans) || d.spans[i+1].from.After(from)):
			names = append(names, "after "+s.name)
		case !s.to.Before(from) && !s.from.After(to):
			names = append(names, s.name)
		}
	}
	return strings.Join(names, ", ")
}

// finalLog waits until the primary serves a checkpoint covering every
// receipt, the one the bucket holds, and reads the whole log from it.
func (d *deployment) finalLog(ctx context.Context, primary *zNode, rec *recorder) *faults.Log {
	t := d.t
	var maxIndex int64 = -1
	for _, r := range rec.receipts {
		maxIndex = max(maxIndex, r.index)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		l, err := faults.FetchLog(ctx, c, primary.base(), d.verifier)
		if err == nil && l.Checkpoint.Size > maxIndex {
			b, berr := os.ReadFile(filepath.Join(d.s3Root, bucketName, "checkpoint"))
			if berr == nil && bytes.Equal(b, l.Checkpoint.Note) {
				d.logf("final log: size %d, from %s, the bucket's checkpoint", l.Checkpoint.Size, primary.name)
				return l
			}
			err = fmt.Errorf("the bucket's checkpoint is not the primary's yet (%v)", berr)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the final log: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// standbyCatchesUp checks that the other node serves the final checkpoint.
func (d *deployment) standbyCatchesUp(ctx context.Context, primary *zNode, l *faults.Log) {
	for _, nd := range d.nodes {
		if nd == primary {
			continue
		}
		deadline := time.Now().Add(time.Minute)
		for {
			l2, err := faults.FetchLog(ctx, http.DefaultClient, nd.base(), d.verifier)
			if err == nil && bytes.Equal(l2.Checkpoint.Note, l.Checkpoint.Note) {
				d.logf("the standby %s serves the final checkpoint and the same %d entries", nd.name, len(l2.Entries))
				for i := range l.Entries {
					if !bytes.Equal(l.Entries[i], l2.Entries[i]) {
						d.t.Errorf("the standby's entry %d differs", i)
					}
				}
				break
			}
			if time.Now().After(deadline) {
				d.t.Errorf("the standby %s does not serve the final checkpoint a minute later: %v\n%s", nd.name, err, nd.proc.Tail())
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}

// verifyBundles fetches every finished game's bundle from the primary and
// checks it with zarlog-verify, with the log's and the emitter's keys.
func (d *deployment) verifyBundles(ctx context.Context, primary *zNode, rec *recorder) int {
	t := d.t
	_, evkey, _ := testonly.Key(emitterName)
	dir := t.TempDir()
	verified := 0
	deadline := time.Now().Add(2 * time.Minute)
	for _, id := range rec.finished {
		var bundle []byte
		for {
			resp, err := http.Get(primary.base() + "games/" + id + "/proof.json")
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					bundle = b
					break
				}
				err = fmt.Errorf("%s", resp.Status)
			}
			if time.Now().After(deadline) {
				t.Errorf("game %s finished and has no bundle at %s: %v", id, primary.name, err)
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		if bundle == nil {
			continue
		}
		file := filepath.Join(dir, id+".json")
		if err := os.WriteFile(file, bundle, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(ctx, d.bins["zarlog-verify"], "--log-key", d.vkey, "--emitter-key", evkey, file).CombinedOutput()
		if err != nil {
			t.Errorf("zarlog-verify on game %s's bundle: %v\n%s", id, err, out)
			continue
		}
		verified++
	}
	return verified
}

// streamStates returns each NATS node's view of the events stream
// (messages, first and last sequence), from its monitoring endpoint.
func (d *deployment) streamStates() string {
	var out []string
	for i, h := range d.natsHosts {
		resp, err := http.Get("http://" + h.IP + ":8222/jsz?accounts=true&streams=true")
		if err != nil {
			out = append(out, fmt.Sprintf("n%d: %v", i+1, err))
			continue
		}
		var jsz struct {
			Accounts []struct {
				Streams []struct {
					Name  string `json:"name"`
					State struct {
						Msgs     uint64 `json:"messages"`
						FirstSeq uint64 `json:"first_seq"`
						LastSeq  uint64 `json:"last_seq"`
					} `json:"state"`
				} `json:"stream_detail"`
			} `json:"account_details"`
		}
		err = json.NewDecoder(resp.Body).Decode(&jsz)
		resp.Body.Close()
		if err != nil {
			out = append(out, fmt.Sprintf("n%d: %v", i+1, err))
			continue
		}
		for _, a := range jsz.Accounts {
			for _, st := range a.Streams {
				if st.Name == streamName {
					out = append(out, fmt.Sprintf("n%d: %d messages, seq %d–%d", i+1, st.State.Msgs, st.State.FirstSeq, st.State.LastSeq))
				}
			}
		}
	}
	return strings.Join(out, "; ")
}

// bucketHoldsLog reads the log again from the bucket's own objects (the
// directory versitygw serves, through a plain file server): the same
// checkpoint and entries as the final log.
func (d *deployment) bucketHoldsLog(ctx context.Context, l *faults.Log) {
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(d.s3Root, bucketName))))
	defer srv.Close()
	b, err := faults.FetchLog(ctx, srv.Client(), srv.URL+"/", d.verifier)
	if err != nil {
		d.t.Errorf("the bucket's log: %v", err)
		return
	}
	if !bytes.Equal(b.Checkpoint.Note, l.Checkpoint.Note) || len(b.Entries) != len(l.Entries) {
		d.t.Errorf("the bucket's log has size %d, the final log %d", b.Checkpoint.Size, l.Checkpoint.Size)
		return
	}
	for i := range l.Entries {
		if !bytes.Equal(b.Entries[i], l.Entries[i]) {
			d.t.Errorf("the bucket's entry %d differs from the primary's", i)
			return
		}
	}
	d.logf("the bucket's own objects hold the same log: checkpoint, tiles and %d entries", len(b.Entries))
}
