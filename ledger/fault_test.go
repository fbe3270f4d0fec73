package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/merkle"
)

// A faultFS injects errInjected into every write and sync of the WAL files
// it opens once armed. It wraps Create and ReuseForWrite (errorfs does not
// wrap recycled WAL files).
//
// The fault is armed for new WAL files only, and the test then rotates the
// WAL (DB.Flush): the first commit on the new WAL fails in its write or sync,
// the path where Pebble reports the failure to the committer. A failure that
// hits while Pebble closes a WAL during a rotation makes Pebble panic and the
// process die instead; TestCrash covers a dying process.
type faultFS struct {
	walFS
	serial   atomic.Int64 // files opened so far
	failFrom atomic.Int64 // files with a serial ≥ this fail; MaxInt64 means none
	hits     atomic.Int64
}

var errInjected = errors.New("injected disk fault")

func newFaultFS(fs vfs.FS) *faultFS {
	f := &faultFS{}
	f.walFS = walFS{fs, f.wrapWAL}
	f.failFrom.Store(math.MaxInt64)
	return f
}

// arm makes the WAL files opened from now on fail.
func (f *faultFS) arm() { f.failFrom.Store(f.serial.Load()) }

// clear ends the fault.
func (f *faultFS) clear() { f.failFrom.Store(math.MaxInt64) }

func (f *faultFS) wrapWAL(file vfs.File) vfs.File {
	return &faultFile{File: file, fs: f, serial: f.serial.Add(1) - 1}
}

// A walFS passes the WAL files (*.log) that Pebble creates or recycles
// through wrap; the other files are FS's own.
type walFS struct {
	vfs.FS
	wrap func(vfs.File) vfs.File
}

func (w walFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return w.wal(name)(w.FS.Create(name, c))
}

func (w walFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return w.wal(newname)(w.FS.ReuseForWrite(oldname, newname, c))
}

func (w walFS) wal(name string) func(vfs.File, error) (vfs.File, error) {
	return func(f vfs.File, err error) (vfs.File, error) {
		if err != nil || !strings.HasSuffix(name, ".log") {
			return f, err
		}
		return w.wrap(f), nil
	}
}

type faultFile struct {
	vfs.File
	fs     *faultFS
	serial int64
}

func (f *faultFile) fail() error {
	if f.serial >= f.fs.failFrom.Load() {
		f.fs.hits.Add(1)
		return errInjected
	}
	return nil
}

func (f *faultFile) Write(p []byte) (int, error) {
	if err := f.fail(); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fail(); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *faultFile) Sync() error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *faultFile) SyncData() error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.File.SyncData()
}

func (f *faultFile) SyncTo(n int64) (bool, error) {
	if err := f.fail(); err != nil {
		return false, err
	}
	return f.File.SyncTo(n)
}

// breakWAL arms the fault and rotates the WAL onto a failing file. It holds
// the ledger's commit lock so that no commit rotates the WAL in between.
func breakWAL(t testing.TB, l *Ledger, f *faultFS) {
	t.Helper()
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	f.arm()
	if err := l.db.Flush(); err != nil {
		t.Fatalf("rotating the WAL: %v", err)
	}
}

// TestDiskFault makes the WAL fail during an append or while a checkpoint is
// stored: the ledger stops, signs nothing more, keeps serving what was
// durable, and recovers when it is reopened after the fault clears.
func TestDiskFault(t *testing.T) {
	for _, during := range []string{"append", "checkpoint"} {
		t.Run(during, func(t *testing.T) {
			e := newTestEnv(t)
			fault := newFaultFS(e.fs)
			e.cfg.FS = fault
			ctx := context.Background()
			l, err := Open(ctx, e.cfg)
			if err != nil {
				t.Fatal(err)
			}
			gen := newStreamGen(t, e.k, "fault", 19, 4)
			appendAll(t, l, gen.take(500), 50)
			cp1 := mustSign(t, l)
			pending := gen.take(100)
			if during == "checkpoint" {
				appendAll(t, l, pending, 100)
			}

			breakWAL(t, l, fault)
			var failed error
			if during == "append" {
				_, failed = l.Append(ctx, inputs(t, pending...))
			} else {
				_, failed = l.Sign(ctx)
			}
			if !errors.Is(failed, ErrStopped) || !errors.Is(failed, errInjected) {
				t.Fatalf("%s under a fault: %v, want ErrStopped wrapping the injected error", during, failed)
			}
			<-l.Done()
			if err := l.Err(); !errors.Is(err, ErrStopped) {
				t.Errorf("Err: %v", err)
			}
			// Stopped: nothing is appended or signed, even once the
			// fault is gone.
			fault.clear()
			if _, err := l.Append(ctx, inputs(t, gen.take(1)...)); !errors.Is(err, ErrStopped) {
				t.Errorf("Append after the failure: %v", err)
			}
			if _, err := l.Sign(ctx); !errors.Is(err, ErrStopped) {
				t.Errorf("Sign after the failure: %v", err)
			}
			if _, err := l.WaitCovering(ctx, cp1.Size); !errors.Is(err, ErrStopped) {
				t.Errorf("WaitCovering after the failure: %v", err)
			}
			if _, cp, _ := l.Latest(); cp.Size != cp1.Size || cp.Hash != cp1.Hash {
				t.Errorf("the latest checkpoint moved from %d to %d", cp1.Size, cp.Size)
			}
			// Reads still show the durable log, not the failed batch.
			wantSize := cp1.Size
			if during == "checkpoint" {
				wantSize += uint64(len(pending))
			}
			if size, err := l.Size(); err != nil || size != wantSize {
				t.Errorf("Size after the failure: %d, %v; want %d", size, err, wantSize)
			}
			if _, err := l.InclusionProof(ctx, 3, cp1.Size); err != nil {
				t.Errorf("a proof at the last checkpoint: %v", err)
			}
			l.Close() // may report the WAL's error

			// Reopen: the failed batch may or may not have reached the
			// WAL. Sending it again is safe either way.
			l, err = Open(ctx, e.cfg)
			if err != nil {
				t.Fatalf("reopening after the fault cleared: %v", err)
			}
			defer l.Close()
			for _, o := range mustAppend(t, l, inputs(t, pending...)) {
				if o.Result != Appended && o.Result != Duplicate {
					t.Fatalf("resending after recovery: %+v %v", o, o.Reject)
				}
			}
			cp2 := mustSign(t, l)
			if cp2.Size != cp1.Size+uint64(len(pending)) {
				t.Errorf("after recovery the log has %d leaves, want %d", cp2.Size, cp1.Size+uint64(len(pending)))
			}
			p, err := l.ConsistencyProof(ctx, cp1.Size, cp2.Size)
			if err != nil {
				t.Fatal(err)
			}
			if err := merkle.CheckConsistency(cp1.Size, cp2.Size, cp1.Hash, cp2.Hash, p); err != nil {
				t.Errorf("the checkpoint after recovery is not consistent with the one before: %v", err)
			}
			appendAll(t, l, gen.take(10), 10)
		})
	}
}

// TestDiskFaultCrash appends from several goroutines with the signer loop
// running, breaks the WAL at a random moment, then simulates a power loss
// (only synced data survives). On the recovered store every acknowledged
// event is at its index and every published checkpoint is consistent with
// the tree: nothing was signed that had not been persisted.
func TestDiskFaultCrash(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			e := newTestEnv(t)
			mem := vfs.NewCrashableMem()
			fault := newFaultFS(mem)
			e.cfg.FS = fault
			e.cfg.CheckpointInterval = time.Millisecond
			ctx := context.Background()
			l, err := Open(ctx, e.cfg)
			if err != nil {
				t.Fatal(err)
			}

			// Watch every published checkpoint.
			var cpMu sync.Mutex
			var published [][]byte
			watchDone := make(chan struct{})
			go func() {
				defer close(watchDone)
				for {
					n, _, next := l.Latest()
					if n != nil {
						cpMu.Lock()
						published = append(published, n)
						cpMu.Unlock()
					}
					select {
					case <-next:
					case <-l.Done():
						return
					}
				}
			}()

			type ack struct {
				index uint64
				leaf  []byte
			}
			var ackMu sync.Mutex
			var acks []ack
			broken := false
			faultAt := 200 + rng.IntN(800)
			workers := 4
			streams := make([][][]byte, workers)
			for w := range streams {
				streams[w] = newStreamGen(t, e.k, fmt.Sprintf("crash%d-w%d", seed, w), seed*10+uint64(w), 3).take(600)
			}
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					s := streams[w]
					wrng := rand.New(rand.NewPCG(seed, uint64(w)))
					for i := 0; i < len(s); {
						n := min(1+wrng.IntN(16), len(s)-i)
						out, err := l.Append(ctx, inputs(t, s[i:i+n]...))
						if err != nil {
							if !errors.Is(err, ErrStopped) {
								t.Errorf("worker %d: %v", w, err)
							}
							return
						}
						ackMu.Lock()
						for j, o := range out {
							if o.Result != Appended {
								t.Errorf("worker %d input %d: %+v %v", w, i+j, o, o.Reject)
							}
							acks = append(acks, ack{o.Index, s[i+j]})
						}
						if len(acks) >= faultAt && !broken {
							broken = true
							breakWAL(t, l, fault)
						}
						ackMu.Unlock()
						i += n
					}
				})
			}
			wg.Wait()
			if !broken {
				t.Fatalf("the fault was never switched on (%d acks, threshold %d)", len(acks), faultAt)
			}
			<-l.Done()
			<-watchDone

			// Power loss: keep only what was synced, or a random part of
			// what was not.
			crashed := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: int(seed%2) * 50, RNG: rand.New(rand.NewPCG(seed, 1))})
			l.Close()
			e.cfg.FS = crashed
			l, err = Open(ctx, e.cfg)
			if err != nil {
				t.Fatalf("opening the crashed store: %v", err)
			}
			defer l.Close()
			size, _ := l.Size()
			for _, a := range acks {
				got, err := l.LeavesAt(ctx, []uint64{a.index})
				if err != nil || !bytes.Equal(got[0], a.leaf) {
					t.Fatalf("acknowledged leaf %d is lost (size %d): %v", a.index, size, err)
				}
			}
			final := mustSign(t, l)
			if len(published) == 0 {
				t.Fatal("no checkpoint was published")
			}
			for _, n := range published {
				cp, err := merkle.Open(n, e.k.verifier)
				if err != nil {
					t.Fatal(err)
				}
				if cp.Size > final.Size {
					t.Fatalf("published checkpoint %d covers more than the %d leaves that survived", cp.Size, final.Size)
				}
				p, err := l.ConsistencyProof(ctx, cp.Size, final.Size)
				if err != nil {
					t.Fatal(err)
				}
				if err := merkle.CheckConsistency(cp.Size, final.Size, cp.Hash, final.Hash, p); err != nil {
					t.Fatalf("published checkpoint %d is inconsistent with the recovered tree: %v", cp.Size, err)
				}
			}
			t.Logf("%d acks, fault after %d, %d published checkpoints, %d leaves survived", len(acks), faultAt, len(published), final.Size)
		})
	}
}

// TestBackgroundErrors: a failed flush or compaction (Pebble's background
// error) makes the ledger Degraded while the errors last, heals by itself
// when they stop, and stops the ledger only when they go on for
// bgStopAfter; the errors are logged a few times, not once each.
func TestBackgroundErrors(t *testing.T) {
	e := newTestEnv(t)
	var logged bytes.Buffer
	e.cfg.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	l := e.open()
	advance := func(d time.Duration) { e.clock.mu.Lock(); e.clock.t = e.clock.t.Add(d); e.clock.mu.Unlock() }
	enospc := &fs.PathError{Op: "write", Path: "000005.sst", Err: syscall.ENOSPC}

	l.backgroundError(enospc)
	if err := l.Degraded(); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("after a background error: Degraded %v", err)
	}
	if l.Err() != nil {
		t.Fatalf("one background error stopped the ledger: %v", l.Err())
	}
	advance(bgStreakGap + time.Second)
	if err := l.Degraded(); err != nil {
		t.Errorf("after the errors stopped: %v", err)
	}
	// A streak: an error every 100 ms for longer than bgStopAfter.
	for range int(bgStopAfter/(100*time.Millisecond)) + 2 {
		l.backgroundError(enospc)
		advance(100 * time.Millisecond)
	}
	if !errors.Is(l.Err(), ErrStopped) || !strings.Contains(l.Err().Error(), "no space left") {
		t.Errorf("after a streak of %v: Err %v", bgStopAfter, l.Err())
	}
	if n := strings.Count(logged.String(), "background error"); n > 6 {
		t.Errorf("%d log lines for %d errors", n, int(bgStopAfter/(100*time.Millisecond))+3)
	}
}
