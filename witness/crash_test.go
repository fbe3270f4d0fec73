package witness

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// TestCrashNeverForgets cosigns a growing log and, after each cosignature,
// simulates a power loss (a crash clone of the file system holding only what
// was synced, plus a random part of what was not) and restarts the witness
// on it: it always remembers the size it cosigned, and answers 409 with it.
func TestCrashNeverForgets(t *testing.T) {
	ctx := context.Background()
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	mem := vfs.NewCrashableMem()
	w := openWitness(t, mem, "/w", a)
	var old uint64
	for i := range 6 {
		cp := a.grow(i + 1)
		if _, err := w.AddCheckpoint(ctx, old, a.proof(old), cp); err != nil {
			t.Fatal(err)
		}
		old = a.size()
		for seed := range 4 {
			crashed := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50 * (seed % 2), RNG: rand.New(rand.NewPCG(uint64(seed), 0))})
			w2, err := openWitnessErr(crashed, "/w", a)
			if err != nil {
				t.Fatalf("size %d, crash %d: reopening: %v", old, seed, err)
			}
			if got := cosignedSize(t, w2, a.origin); got != old {
				t.Fatalf("size %d, crash %d: the restarted witness has %d", old, seed, got)
			}
			var conflict *ConflictError
			if _, err := w2.AddCheckpoint(ctx, 0, nil, cp); !errors.As(err, &conflict) || conflict.Size != old {
				t.Fatalf("size %d, crash %d: old size 0 gives %v", old, seed, err)
			}
			w2.Close()
		}
	}
}

// TestCrashDetectsMissingSync is the control of TestCrashNeverForgets: on a
// file system whose syncs do nothing, the same crash loses the state. So that
// test would catch a store that does not sync.
func TestCrashDetectsMissingSync(t *testing.T) {
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	mem := vfs.NewCrashableMem()
	w := openWitness(t, noSyncFS{mem}, "/w", a)
	if _, err := w.AddCheckpoint(context.Background(), 0, nil, a.grow(3)); err != nil {
		t.Fatal(err)
	}
	w2, err := openWitnessErr(mem.CrashClone(vfs.CrashCloneCfg{}), "/w", a)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if got := cosignedSize(t, w2, a.origin); got != 0 {
		t.Fatalf("without syncs the crash kept size %d: the crash test cannot tell", got)
	}
}

// noSyncFS is a file system whose files and directories ignore Sync.
type noSyncFS struct{ vfs.FS }

type noSyncFile struct{ vfs.File }

func (noSyncFile) Sync() error { return nil }

func (fs noSyncFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

func (fs noSyncFS) OpenDir(name string) (vfs.File, error) {
	f, err := fs.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

// TestWriteFailure fails, in turn, each file system operation of a state
// write, then crashes and restarts: the request fails without a cosignature,
// the witness reports itself unhealthy until a write succeeds, and the
// restarted witness has either the old or the new state, never a damaged
// one; if the request succeeded, the new one.
func TestWriteFailure(t *testing.T) {
	ctx := context.Background()
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	cp3 := a.grow(3)
	cp5 := a.grow(2)
	proof := a.proof(3)
	cp7 := a.grow(2)
	for k := int64(0); ; k++ {
		mem := vfs.NewCrashableMem()
		inj := &failAt{target: -1}
		w := openWitness(t, errorfs.Wrap(mem, inj), "/w", a)
		if _, err := w.AddCheckpoint(ctx, 0, nil, cp3); err != nil {
			t.Fatal(err)
		}
		inj.arm(k)
		_, err := w.AddCheckpoint(ctx, 3, proof, cp5)
		injected := inj.fired.Load()
		if injected != (err != nil) {
			t.Fatalf("op %d: injected %v, AddCheckpoint = %v", k, injected, err)
		}
		if err != nil && (errors.Is(err, ErrInconsistent) || errors.Is(err, ErrConflict) || w.Healthy()) {
			t.Fatalf("op %d: error %v, healthy %v", k, err, w.Healthy())
		}
		if err != nil {
			// Memory was not updated: still at 3; a later write heals.
			if got := cosignedSize(t, w, a.origin); got != 3 {
				t.Fatalf("op %d: after a failed write the witness has %d", k, got)
			}
		}
		crashed := mem.CrashClone(vfs.CrashCloneCfg{})
		w2, rerr := openWitnessErr(crashed, "/w", a)
		if rerr != nil {
			t.Fatalf("op %d: reopening after the crash: %v", k, rerr)
		}
		got := cosignedSize(t, w2, a.origin)
		w2.Close()
		if got != 5 && (err == nil || got != 3) {
			t.Fatalf("op %d: after the crash the witness has %d (request error %v)", k, got, err)
		}
		if err == nil {
			if k < 5 {
				t.Fatalf("only %d operations in a state write", k)
			}
			return // k is past the last operation of a write
		}
		inj.arm(-1)
		if _, err := w.AddCheckpoint(ctx, 3, proof, cp5); err != nil {
			t.Fatalf("op %d: retry: %v", k, err)
		}
		if !w.Healthy() {
			t.Fatalf("op %d: unhealthy after a successful write", k)
		}
		if _, err := w.AddCheckpoint(ctx, 5, a.proofTo(5, 7), cp7); err != nil {
			t.Fatalf("op %d: next: %v", k, err)
		}
	}
}

// failAt fails the target'th file system operation after being armed.
type failAt struct {
	target int64 // -1: disarmed
	n      atomic.Int64
	fired  atomic.Bool
}

func (f *failAt) arm(target int64) {
	f.target = target
	f.n.Store(0)
	f.fired.Store(false)
}

func (f *failAt) String() string { return "failAt" }

func (f *failAt) MaybeError(op errorfs.Op) error {
	if f.target < 0 {
		return nil
	}
	if f.n.Add(1)-1 == f.target {
		f.fired.Store(true)
		return errorfs.ErrInjected
	}
	return nil
}
