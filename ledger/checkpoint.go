package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zarlog/zarlog/merkle"
)

// signLoop signs a checkpoint every CheckpointInterval when the tree grew,
// and every ResignInterval when it did not.
func (l *Ledger) signLoop() {
	defer close(l.signDone)
	t := time.NewTicker(l.cfg.CheckpointInterval)
	defer t.Stop()
	for {
		select {
		case <-l.signStop:
			return
		case <-l.stopped:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.cfg.WitnessTimeout)
		if _, err := l.sign(ctx, false); err != nil {
			l.log.Error("signing a checkpoint", "err", err)
		}
		cancel()
	}
}

// Sign signs a checkpoint of the durable tree now, if it grew since the last
// one (or none was signed), stores it durably and publishes it, and returns
// the latest signed checkpoint note. The signer loop calls it; tests and
// tools that set a negative CheckpointInterval call it directly.
func (l *Ledger) Sign(ctx context.Context) ([]byte, error) {
	p, err := l.sign(ctx, false)
	if err != nil {
		return nil, err
	}
	return p.note, nil
}

// Resign is Sign that signs (and sends to the witnesses) even if the tree
// did not grow.
func (l *Ledger) Resign(ctx context.Context) ([]byte, error) {
	p, err := l.sign(ctx, true)
	if err != nil {
		return nil, err
	}
	return p.note, nil
}

// sign is the signing procedure. It signs only the tree of a view (a
// durable commit) and only after checking that tree against the last signed
// checkpoint; it stores the note durably before publishing it.
func (l *Ledger) sign(ctx context.Context, force bool) (*published, error) {
	l.signMu.Lock()
	defer l.signMu.Unlock()
	if err := l.Err(); err != nil {
		return nil, err
	}
	v, err := l.acquire()
	if err != nil {
		return nil, err
	}
	defer v.release()
	last := l.latest.Load()
	now := l.now()
	if last.ok && last.cp.Size == v.size && !force && now.Sub(l.lastSign) < l.cfg.ResignInterval {
		return last, nil
	}
	if err := l.checkBeforeSigning(ctx, v, last); err != nil {
		// The tiles disagree with the tree state or the last checkpoint:
		// a broken store. Nothing more may be signed.
		l.stop(err)
		return nil, l.Err()
	}
	cp := merkle.Checkpoint{Origin: l.origin, Size: v.size, Hash: v.root}
	signed, err := merkle.Sign(cp, l.cfg.Signer)
	if err != nil {
		return nil, fmt.Errorf("signing checkpoint of size %d: %w", v.size, err)
	}
	start := time.Now()
	if !last.ok || !bytes.Equal(signed, last.note) {
		if err := l.persistCheckpoint(signed, cp); err != nil {
			return nil, err
		}
	}
	if l.cfg.Witness != nil {
		if cosigned, err := l.cosign(ctx, signed, cp); err != nil {
			l.log.Warn("witnesses did not cosign; publishing the checkpoint with the log's signature alone", "size", cp.Size, "err", err)
		} else if !bytes.Equal(cosigned, signed) {
			if err := l.persistCheckpoint(cosigned, cp); err != nil {
				return nil, err
			}
			signed = cosigned
		}
	}
	l.lastSign = now
	l.met.signSeconds.Observe(time.Since(start).Seconds())
	if last.ok && bytes.Equal(signed, last.note) {
		return last, nil
	}
	p := &published{note: signed, cp: cp, ok: true, next: make(chan struct{})}
	l.latest.Store(p)
	close(last.next)
	l.met.checkpoint(cp)
	return p, nil
}

// checkBeforeSigning checks that the tiles of view v hash to the tree the
// sequencer built, and that this tree is consistent with the last signed
// checkpoint: the root at the old size recomputed from the stored tiles is
// the old root, and a consistency proof from those tiles verifies.
func (l *Ledger) checkBeforeSigning(ctx context.Context, v *view, last *published) error {
	r := tileReader{v.snap}
	root, err := merkle.RootHash(ctx, r, v.size)
	if err != nil {
		return fmt.Errorf("before signing size %d: %w", v.size, err)
	}
	if root != v.root {
		return &TamperError{Check: "root before signing", Size: v.size, Want: v.root, Got: root}
	}
	if !last.ok {
		return nil
	}
	if last.cp.Size > v.size {
		return &TamperError{Check: "tree size before signing", Size: v.size, CheckpointSize: last.cp.Size}
	}
	old, err := merkle.RootHash(ctx, r, last.cp.Size)
	if err != nil {
		return fmt.Errorf("before signing size %d: root at the last checkpoint's size %d: %w", v.size, last.cp.Size, err)
	}
	if old != last.cp.Hash {
		return &TamperError{Check: "root at the last checkpoint before signing", Size: last.cp.Size, Want: last.cp.Hash, Got: old}
	}
	p, err := merkle.ConsistencyProof(ctx, r, last.cp.Size, v.size)
	if err != nil {
		return fmt.Errorf("before signing size %d: consistency proof from %d: %w", v.size, last.cp.Size, err)
	}
	if err := merkle.CheckConsistency(last.cp.Size, v.size, last.cp.Hash, v.root, p); err != nil {
		return &TamperError{Check: "consistency before signing", Size: v.size, CheckpointSize: last.cp.Size, Err: err}
	}
	return nil
}

// persistCheckpoint stores a signed checkpoint durably.
func (l *Ledger) persistCheckpoint(signed []byte, cp merkle.Checkpoint) error {
	b := l.db.NewBatch()
	defer b.Close()
	b.Set(keyCheckpoint, signed, nil)
	return l.commit(b, fmt.Sprintf("storing the checkpoint of size %d", cp.Size))
}

// cosign has the witnesses cosign a checkpoint and checks that what they
// return is the same checkpoint, still signed by the log.
func (l *Ledger) cosign(ctx context.Context, signed []byte, cp merkle.Checkpoint) ([]byte, error) {
	out, err := l.cfg.Witness.Cosign(ctx, signed, l)
	if err != nil && out != nil && errors.Is(err, merkle.ErrSignature) {
		l.log.Warn("witnesses: the policy's quorum is not met; publishing the cosignatures gathered", "err", err)
		err = nil
	}
	if err != nil {
		return nil, err
	}
	got, err := merkle.Open(out, l.cfg.Verifier)
	if err != nil {
		return nil, fmt.Errorf("the witnesses returned a note the log's key does not open: %w", err)
	}
	if got.Size != cp.Size || got.Hash != cp.Hash || !bytes.HasPrefix(out, signed[:bytes.Index(signed, []byte("\n\n"))+2]) {
		return nil, fmt.Errorf("the witnesses returned another checkpoint (size %d) than the one sent (size %d)", got.Size, cp.Size)
	}
	return out, nil
}

// Latest returns the latest published checkpoint note and a channel that is
// closed when a newer one is published. The note is nil if none was ever
// signed.
func (l *Ledger) Latest() (note []byte, cp merkle.Checkpoint, next <-chan struct{}) {
	p := l.latest.Load()
	if !p.ok {
		return nil, merkle.Checkpoint{}, p.next
	}
	return p.note, p.cp, p.next
}

// WaitCovering waits until a published checkpoint covers leaf index (its
// size is greater than index) and returns its signed note. It returns
// ctx's error, ErrClosed, or ErrStopped if the ledger stops first.
func (l *Ledger) WaitCovering(ctx context.Context, index uint64) ([]byte, error) {
	for {
		p := l.latest.Load()
		if p.ok && p.cp.Size > index {
			return p.note, nil
		}
		select {
		case <-p.next:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-l.stopped:
			return nil, l.Err()
		case <-l.closedCh:
			return nil, ErrClosed
		}
	}
}
