package storage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zarlog/zarlog/bucket"
	"github.com/zarlog/zarlog/internal/workload"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/storage"
)

const origin = "zarlog.storage.test/log"

type env struct {
	t      *testing.T
	bucket bucket.Store
	gen    *workload.Generator
	signer ledger.Config
	lease  time.Duration
	// now and reg, if set, are the nodes' Config.Now and Registerer.
	now func() time.Time
	reg prometheus.Registerer
}

func newEnv(t *testing.T, b bucket.Store) *env {
	gen, err := workload.New(workload.Config{Seed: 7, Concurrent: 6, Rolls: 6, Emitters: 2})
	if err != nil {
		t.Fatal(err)
	}
	s, vkey, err := workload.Key(origin)
	if err != nil {
		t.Fatal(err)
	}
	v, err := merkle.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, bucket: b, gen: gen, lease: 300 * time.Millisecond,
		signer: ledger.Config{Signer: s, Verifier: v, Emitters: gen.Keyring(), Beacons: workload.Beacons, CheckpointInterval: -1}}
}

// A node is a Node with its ledger, running until stop.
type node struct {
	n    *storage.Node
	l    *ledger.Ledger
	fs   vfs.FS
	stop context.CancelFunc
	done chan struct{}
	err  error // Run's, once done is closed
}

func (e *env) node(id string, standby bool, fs vfs.FS) *node {
	e.t.Helper()
	if fs == nil {
		fs = vfs.NewMem()
	}
	n, err := storage.New(storage.Config{Bucket: e.bucket, LogKey: e.signer.Verifier, NodeID: id, Standby: standby, Lease: e.lease, Now: e.now, Registerer: e.reg})
	if err != nil {
		e.t.Fatal(err)
	}
	cfg := e.signer
	cfg.Dir, cfg.FS, cfg.Publish = "db", fs, n.Publish
	l, err := ledger.Open(context.Background(), cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { l.Close() })
	if err := n.Prepare(context.Background(), l); err != nil {
		e.t.Fatalf("Prepare %s: %v", id, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	nd := &node{n: n, l: l, fs: fs, stop: cancel, done: make(chan struct{})}
	go func() { nd.err = n.Run(ctx); close(nd.done) }()
	e.t.Cleanup(func() { cancel(); <-nd.done })
	return nd
}

// appendEvents appends the next k events of the stream to l.
func (e *env) appendEvents(l *ledger.Ledger, k int) { e.appendFrom(e.gen, l, k) }

// otherEvents returns a stream of other games than e's.
func (e *env) otherEvents() *workload.Generator {
	gen, err := workload.New(workload.Config{Seed: 8, Prefix: "other", Concurrent: 3, Rolls: 6, Emitters: 2})
	if err != nil {
		e.t.Fatal(err)
	}
	return gen
}

func (e *env) appendFrom(gen *workload.Generator, l *ledger.Ledger, k int) {
	e.t.Helper()
	evs, err := gen.Take(k)
	if err != nil {
		e.t.Fatal(err)
	}
	in := make([]ledger.Input, len(evs))
	for i, ev := range evs {
		in[i] = ledger.Input{Emitter: ev.Emitter, MsgID: ev.ID, Data: ev.Data}
	}
	out, err := l.Append(context.Background(), in)
	if err != nil {
		e.t.Fatal(err)
	}
	for i, o := range out {
		if o.Result != ledger.Appended {
			e.t.Fatalf("event %d: %v %v", i, o.Result, o.Reject)
		}
	}
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// waitSize waits until l publishes a checkpoint of at least size leaves.
func waitSize(t *testing.T, l *ledger.Ledger, size uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := l.WaitCovering(ctx, size-1); err != nil {
		t.Fatalf("waiting for a checkpoint of %d leaves: %v", size, err)
	}
}

// bucketLog reads the bucket's checkpoint and checks that its tiles give
// its root; it returns the checkpoint.
func bucketLog(t *testing.T, e *env) merkle.Checkpoint {
	t.Helper()
	ctx := context.Background()
	b, _, err := e.bucket.Get(ctx, "checkpoint", "")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := merkle.Open(b, e.signer.Verifier)
	if err != nil {
		t.Fatal(err)
	}
	// A fresh ledger restored from the bucket alone has that tree.
	fresh := e.node(fmt.Sprint("check-", time.Now().UnixNano()), true, nil)
	n, got, _ := fresh.l.Latest()
	if !bytes.Equal(n, b) || got.Hash != cp.Hash {
		t.Fatalf("a node restored from the bucket publishes %q, the bucket has %q", n, b)
	}
	fresh.stop()
	return cp
}

// TestPrimaryStandby: a primary publishes through the bucket, a standby
// follows it with the same projections, takes over once the primary stops
// renewing, and the primary, fenced, can publish nothing more.
func TestPrimaryStandby(t *testing.T) {
	mem := bucket.NewMem()
	e := newEnv(t, mem)
	a := e.node("node-a", false, nil)
	wait(t, a.n.Leading(), "the primary to lead")
	e.appendEvents(a.l, 500)
	if _, err := a.l.Sign(context.Background()); err != nil {
		t.Fatal(err)
	}
	if mem.Object(storage.LockKey) == nil || mem.Object("checkpoint") == nil || len(mem.Keys("tile/entries/")) == 0 || len(mem.Keys("zarlog/times/")) == 0 {
		t.Fatalf("the bucket lacks the log: %v", mem.Keys(""))
	}
	b := e.node("node-b", true, nil)
	waitSize(t, b.l, 500)
	e.appendEvents(a.l, 300)
	a.l.Sign(context.Background())
	waitSize(t, b.l, 800)
	if b.n.IsLeader() {
		t.Fatal("the standby leads while the primary renews")
	}
	an, acp, _ := a.l.Latest()
	bn, _, _ := b.l.Latest()
	if !bytes.Equal(an, bn) {
		t.Fatalf("the standby publishes %q, the primary %q", bn, an)
	}

	// The primary stops renewing: the standby takes over.
	a.stop()
	<-a.done
	wait(t, b.n.Leading(), "the standby to take over")
	e.appendEvents(b.l, 200)
	bcp := mustSign(t, b.l)
	ctx := context.Background()
	proof, err := b.l.ConsistencyProof(ctx, acp.Size, bcp.Size)
	if err != nil {
		t.Fatal(err)
	}
	if err := merkle.CheckConsistency(acp.Size, bcp.Size, acp.Hash, bcp.Hash, proof); err != nil {
		t.Fatal(err)
	}

	// The old primary, still running its ledger, appends and signs: its
	// write of the lock fails on the compare and its ledger stops, with
	// nothing published.
	e.appendFrom(e.otherEvents(), a.l, 50)
	_, err = a.l.Sign(ctx)
	if !errors.Is(err, ledger.ErrFenced) || !errors.Is(err, ledger.ErrStopped) {
		t.Fatalf("the fenced primary's Sign: %v", err)
	}
	if n, _, _ := a.l.Latest(); !bytes.Equal(n, an) {
		t.Fatal("the fenced primary published")
	}
	if got := bucketLog(t, e); got.Size != bcp.Size || got.Hash != bcp.Hash {
		t.Fatalf("the bucket has %d leaves, the new primary signed %d", got.Size, bcp.Size)
	}
}

func mustSign(t *testing.T, l *ledger.Ledger) merkle.Checkpoint {
	t.Helper()
	n, err := l.Sign(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, cp, _ := l.Latest()
	if !bytes.Equal(n, mustLatest(l)) {
		t.Fatal("Sign returned another note than Latest")
	}
	return cp
}

func mustLatest(l *ledger.Ledger) []byte {
	n, _, _ := l.Latest()
	return n
}

// TestCrashBetweenTilesAndLock: the sequencer dies after writing the tiles
// of a checkpoint and before the lock (the commit point), or after the lock
// and before the public checkpoint. Nothing was published, so no receipt
// exists; the standby takes over from the lock, writes the public
// checkpoint, and replaces the dead sequencer's tiles beyond it with its
// own; a node restored from the bucket has the standby's log.
func TestCrashBetweenTilesAndLock(t *testing.T) {
	for _, failing := range []string{storage.LockKey, "checkpoint"} {
		t.Run(failing, func(t *testing.T) {
			mem := bucket.NewMem()
			e := newEnv(t, mem)
			a := e.node("node-a", false, nil)
			wait(t, a.n.Leading(), "the primary to lead")
			e.appendEvents(a.l, 300)
			cp0 := mustSign(t, a.l)
			b := e.node("node-b", true, nil)
			waitSize(t, b.l, cp0.Size)

			// The next publish dies at `failing`: a stops.
			mem.SetHooks(bucket.MemHooks{BeforePut: func(key string, _ []byte) error {
				if key == failing {
					return errors.New("killed")
				}
				return nil
			}})
			e.appendEvents(a.l, 100)
			if _, err := a.l.Sign(context.Background()); err == nil {
				t.Fatal("Sign published although the bucket write failed")
			}
			if n := mustLatest(a.l); !bytes.Equal(n, mustNote(t, mem)) && failing == storage.LockKey {
				t.Fatal("the primary published a checkpoint the lock does not have")
			}
			a.stop()
			<-a.done
			mem.SetHooks(bucket.MemHooks{})

			wait(t, b.n.Leading(), "the standby to take over")
			want := cp0.Size
			if failing == "checkpoint" {
				want += 100 // the lock had it: the standby continues from it
			}
			if _, cp, _ := b.l.Latest(); cp.Size != want {
				t.Fatalf("the standby took over at %d leaves, want %d", cp.Size, want)
			}
			// Other events than the dead primary's unpublished ones.
			e.appendFrom(e.otherEvents(), b.l, 100)
			bcp := mustSign(t, b.l)
			got := bucketLog(t, e)
			if got.Size != bcp.Size || got.Hash != bcp.Hash {
				t.Fatalf("the bucket has %d leaves, the new primary signed %d", got.Size, bcp.Size)
			}
		})
	}
}

// TestZombieReplacesNothing: a primary cut off from the lock past its
// lease (its lock writes fail, its other writes go through) is taken over;
// the new primary publishes; the old one, not knowing yet, publishes other
// leaves at the same tree sizes. It must not replace the new primary's
// tiles and bundles, which a checkpoint of the lock covers: it stops,
// fenced, and a node restored from the bucket has the new primary's log.
func TestZombieReplacesNothing(t *testing.T) {
	mem := bucket.NewMem()
	e := newEnv(t, mem)
	a := e.node("node-a", false, nil)
	wait(t, a.n.Leading(), "the primary to lead")
	e.appendEvents(a.l, 300)
	cp0 := mustSign(t, a.l)
	b := e.node("node-b", true, nil)
	waitSize(t, b.l, cp0.Size)

	// a's writes of the lock fail from now on: it cannot renew it.
	mem.SetHooks(bucket.MemHooks{BeforePut: func(key string, data []byte) error {
		if k, err := storage.ParseLock(data); key == storage.LockKey && err == nil && k.Holder == "node-a" {
			return errors.New("cut off")
		}
		return nil
	}})
	wait(t, b.n.Leading(), "the standby to take over")
	e.appendFrom(e.otherEvents(), b.l, 100)
	bcp := mustSign(t, b.l)

	e.appendEvents(a.l, 100)
	if _, err := a.l.Sign(context.Background()); err == nil {
		t.Fatal("the old primary published a checkpoint after the takeover")
	}
	if err := a.n.LostErr(); !errors.Is(err, ledger.ErrFenced) {
		t.Errorf("the old primary's node: %v, want it fenced", err)
	}
	mem.SetHooks(bucket.MemHooks{})
	got := bucketLog(t, e)
	if got.Size != bcp.Size || got.Hash != bcp.Hash {
		t.Fatalf("the bucket has %d leaves, the new primary signed %d", got.Size, bcp.Size)
	}
}

// mustNote returns the checkpoint note in the lock.
func mustNote(t *testing.T, mem *bucket.Mem) []byte {
	t.Helper()
	k, err := storage.ParseLock(mem.Object(storage.LockKey))
	if err != nil {
		t.Fatal(err)
	}
	return k.Note
}

// TestLostReply: the lock is written but its reply is lost; the next round
// finds its own write and goes on, without fencing itself.
func TestLostReply(t *testing.T) {
	mem := bucket.NewMem()
	e := newEnv(t, mem)
	a := e.node("node-a", false, nil)
	wait(t, a.n.Leading(), "the primary to lead")
	e.appendEvents(a.l, 100)
	mem.SetHooks(bucket.MemHooks{AfterPut: func(key string) error {
		if key == storage.LockKey {
			return errors.New("connection reset")
		}
		return nil
	}})
	if _, err := a.l.Sign(context.Background()); err == nil || errors.Is(err, ledger.ErrFenced) {
		t.Fatalf("Sign with the reply lost: %v", err)
	}
	mem.SetHooks(bucket.MemHooks{})
	cp := mustSign(t, a.l)
	if cp.Size != 100 || a.l.Err() != nil {
		t.Fatalf("after the lost reply: size %d, %v", cp.Size, a.l.Err())
	}
}

// TestRestartedHolder: the holder restarted on its own data directory takes
// its lock back at once, without waiting for its lease.
func TestRestartedHolder(t *testing.T) {
	mem := bucket.NewMem()
	e := newEnv(t, mem)
	e.lease = time.Hour
	fs := vfs.NewMem()
	a := e.node("node-a", false, fs)
	wait(t, a.n.Leading(), "the primary to lead")
	e.appendEvents(a.l, 100)
	mustSign(t, a.l)
	e.appendEvents(a.l, 40) // appended, never signed
	a.stop()
	<-a.done
	a.l.Close()
	a2 := e.node("node-a", false, fs)
	wait(t, a2.n.Leading(), "the restarted holder to lead")
	if cp := mustSign(t, a2.l); cp.Size != 140 {
		t.Fatalf("the restarted holder published %d leaves", cp.Size)
	}
}

// TestDiverged: a ledger with leaves the bucket's log does not have, whose
// log another node holds, is refused by Prepare.
func TestDiverged(t *testing.T) {
	mem := bucket.NewMem()
	e := newEnv(t, mem)
	a := e.node("node-a", false, nil)
	wait(t, a.n.Leading(), "the primary to lead")
	e.appendEvents(a.l, 100)
	mustSign(t, a.l)

	n, err := storage.New(storage.Config{Bucket: mem, LogKey: e.signer.Verifier, NodeID: "node-c", Lease: e.lease})
	if err != nil {
		t.Fatal(err)
	}
	cfg := e.signer
	cfg.Dir, cfg.FS, cfg.Publish = "db", vfs.NewMem(), n.Publish
	l, err := ledger.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	e.appendFrom(e.otherEvents(), l, 150) // other leaves than the bucket's
	if err := n.Prepare(context.Background(), l); !errors.Is(err, storage.ErrDiverged) {
		t.Fatalf("Prepare: %v", err)
	}
}

// TestNotLeaderIsExpected: a standby's refusal to publish is
// ledger.ErrNotSequencer (logged by the ledger as expected), never
// ledger.ErrFenced.
func TestNotLeaderIsExpected(t *testing.T) {
	if !errors.Is(storage.ErrNotLeader, ledger.ErrNotSequencer) || errors.Is(storage.ErrNotLeader, ledger.ErrFenced) {
		t.Fatal("ErrNotLeader does not match ledger.ErrNotSequencer alone")
	}
	if !errors.Is(fmt.Errorf("publishing: %w", storage.ErrNotLeader), storage.ErrNotLeader) {
		t.Fatal("a wrapped ErrNotLeader is not ErrNotLeader")
	}
}

// A fakeClock is a Config.Now that moves only when told.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestFresh: a primary is Fresh from its first write of the lock; with its
// writes failing it stops being fresh once half its lease has passed
// since the last successful one was sent (by its Config.Now), and is fresh
// again after the next success; fenced, it is never fresh again. The
// zarlog_storage_lease_fresh gauge says the same.
func TestFresh(t *testing.T) {
	mem := bucket.NewMem()
	e := newEnv(t, mem)
	clk := &fakeClock{t: time.Unix(1_800_000_000, 0)}
	reg := prometheus.NewRegistry()
	e.now, e.reg = clk.Now, reg
	a := e.node("node-a", false, nil)
	wait(t, a.n.Leading(), "the primary to lead")
	gauge := func(want int) {
		t.Helper()
		exp := fmt.Sprintf("# HELP zarlog_storage_lease_fresh %s\n# TYPE zarlog_storage_lease_fresh gauge\nzarlog_storage_lease_fresh %d\n",
			"1 while this node holds the log's lock and its last successful write of it was sent less than half the lease ago (Node.Fresh): only then does it ingest and answer receipt and status requests.", want)
		if err := testutil.GatherAndCompare(reg, strings.NewReader(exp), "zarlog_storage_lease_fresh"); err != nil {
			t.Error(err)
		}
	}
	// Leading an empty bucket, before the first checkpoint writes the
	// lock: not fresh (another node could still create the log).
	if a.n.Fresh() || a.n.Hold() == nil {
		t.Fatal("fresh before the lock was ever written")
	}
	gauge(0)
	e.appendEvents(a.l, 10)
	mustSign(t, a.l)
	if !a.n.Fresh() || a.n.Hold() != nil {
		t.Fatalf("not fresh after writing the lock: %v", a.n.Hold())
	}
	gauge(1)

	// Every write of the lock fails from now on.
	var failing sync.Mutex
	fail := true
	mem.SetHooks(bucket.MemHooks{BeforePut: func(key string, _ []byte) error {
		failing.Lock()
		defer failing.Unlock()
		if fail && key == storage.LockKey {
			return errors.New("the bucket is cut off")
		}
		return nil
	}})
	// Let renewals fail for a while by the real clock: the fake one
	// stands, so the last success is still as old as it was.
	for range 3 {
		time.Sleep(e.lease / 4)
		if !a.n.Fresh() {
			t.Fatal("not fresh although no time passed since the last write")
		}
	}
	clk.Add(e.lease/2 - time.Millisecond)
	if !a.n.Fresh() {
		t.Fatalf("not fresh %v after the last write: %v", e.lease/2-time.Millisecond, a.n.Hold())
	}
	clk.Add(time.Millisecond)
	err := a.n.Hold()
	if a.n.Fresh() || err == nil || !strings.Contains(err.Error(), "half its lease") {
		t.Fatalf("half the lease after the last successful write: Fresh %t, Hold %v", a.n.Fresh(), err)
	}
	gauge(0)
	if !a.n.IsLeader() {
		t.Fatal("the node stopped leading: failed writes are not a lost lock")
	}

	// The bucket is back: the next renewal makes it fresh again.
	failing.Lock()
	fail = false
	failing.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for !a.n.Fresh() {
		if time.Now().After(deadline) {
			t.Fatalf("not fresh again after the bucket came back: %v", a.n.Hold())
		}
		time.Sleep(e.lease / 16)
	}
	gauge(1)

	// Another node writes the lock: the primary's next write fails on
	// the compare, and it is never fresh again.
	k, err := storage.ParseLock(mem.Object(storage.LockKey))
	if err != nil {
		t.Fatal(err)
	}
	k.Holder, k.Term, k.Renewal = "node-b", k.Term+1, k.Renewal+1
	if _, err := mem.Put(context.Background(), storage.LockKey, k.Format(), bucket.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	wait(t, a.n.Lost(), "the primary to lose the lock")
	if a.n.Fresh() || !errors.Is(a.n.Hold(), ledger.ErrNotSequencer) {
		t.Fatalf("fenced: Fresh %t, Hold %v", a.n.Fresh(), a.n.Hold())
	}
	gauge(0)
}
