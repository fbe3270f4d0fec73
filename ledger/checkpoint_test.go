package ledger

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zarlog/zarlog/merkle"
)

// TestRestartContinuity closes and reopens the ledger, with and without an
// unsigned tail: indices and checkpoints continue, and every checkpoint is
// consistent with the next.
func TestRestartContinuity(t *testing.T) {
	e := newTestEnv(t)
	gen := newStreamGen(t, e.k, "restart", 3, 5)
	ctx := context.Background()
	var cps []merkle.Checkpoint
	var size uint64
	for round := range 6 {
		l := e.open()
		if got, _ := l.Size(); got != size {
			t.Fatalf("round %d: reopened with %d leaves, want %d", round, got, size)
		}
		if n, cp, _ := l.Latest(); len(cps) > 0 && (n == nil || cp.Size != cps[len(cps)-1].Size || cp.Hash != cps[len(cps)-1].Hash) {
			t.Fatalf("round %d: latest checkpoint %+v, want %+v", round, cp, cps[len(cps)-1])
		}
		n := 100 + 37*round
		appendAll(t, l, gen.take(n), 9)
		size += uint64(n)
		if round%2 == 0 { // odd rounds leave an unsigned tail
			cps = append(cps, mustSign(t, l))
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	l := e.open()
	final := mustSign(t, l)
	if final.Size != size {
		t.Fatalf("final size %d, want %d", final.Size, size)
	}
	for _, cp := range cps {
		p, err := l.ConsistencyProof(ctx, cp.Size, final.Size)
		if err != nil {
			t.Fatal(err)
		}
		if err := merkle.CheckConsistency(cp.Size, final.Size, cp.Hash, final.Hash, p); err != nil {
			t.Errorf("checkpoint %d is not consistent with %d: %v", cp.Size, final.Size, err)
		}
	}
}

// TestCheckpoints covers Sign, Resign, Latest, WaitCovering and the signer
// loop.
func TestCheckpoints(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	ctx := context.Background()
	gen := newStreamGen(t, e.k, "cp", 5, 3)
	if n, _, _ := l.Latest(); n != nil {
		t.Fatalf("a new log has a checkpoint: %s", n)
	}
	// The empty tree is signed too.
	if cp := mustSign(t, l); cp.Size != 0 || cp.Hash != merkle.EmptyRoot() {
		t.Fatalf("empty checkpoint %+v", cp)
	}
	_, _, next := l.Latest()
	appendAll(t, l, gen.take(10), 10)
	waited := make(chan []byte)
	go func() {
		n, err := l.WaitCovering(ctx, 9)
		if err != nil {
			t.Error(err)
		}
		waited <- n
	}()
	cp := mustSign(t, l)
	<-next // closed by the new checkpoint
	n := <-waited
	if got, err := merkle.Open(n, e.k.verifier); err != nil || got.Size != 10 || got.Hash != cp.Hash {
		t.Fatalf("WaitCovering returned %+v (%v), want %+v", got, err, cp)
	}
	// Nothing new: the same note, and nothing published.
	n1, _ := l.Sign(ctx)
	if !bytes.Equal(n1, n) {
		t.Error("signing an unchanged tree changed the note")
	}
	select {
	case <-func() <-chan struct{} { _, _, c := l.Latest(); return c }():
		t.Error("an unchanged checkpoint was published again")
	default:
	}
	// WaitCovering returns at once for a covered index, and the context's
	// error for one that is not covered.
	if _, err := l.WaitCovering(ctx, 3); err != nil {
		t.Error(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.WaitCovering(cctx, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitCovering beyond the tree: %v", err)
	}

	// The signer loop signs on its own.
	e2 := newTestEnv(t)
	e2.cfg.CheckpointInterval = time.Millisecond
	l2 := e2.open()
	appendAll(t, l2, newStreamGen(t, e2.k, "loop", 1, 2).take(5), 5)
	if n, err := l2.WaitCovering(ctx, 4); err != nil || !strings.Contains(string(n), "\n5\n") {
		t.Errorf("signer loop: %q, %v", n, err)
	}
	// Close signs a last checkpoint over everything appended.
	appendAll(t, l2, newStreamGen(t, e2.k, "loop2", 1, 2).take(3), 3)
	l2.Close()
	l2 = e2.open()
	if _, cp, _ := l2.Latest(); cp.Size != 8 {
		t.Errorf("after Close, the stored checkpoint has size %d, want 8", cp.Size)
	}
}
