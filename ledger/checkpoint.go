package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zarlog/zarlog/merkle"
)

// signLoop signs a checkpoint every CheckpointInterval when the tree grew.
// It never waits for anyone but the disk: witnessing is another loop's
// (package witness, Submitter), which reads the published checkpoints.
func (l *Ledger) signLoop() {
	defer close(l.signDone)
	t := time.NewTicker(l.cfg.CheckpointInterval)
	defer t.Stop()
	var (
		lastLog time.Time
		quiet   int  // failures not logged since lastLog
		standby bool // Publish said ErrNotSequencer, and it was logged
	)
	for {
		select {
		case <-l.signStop:
			return
		case <-l.stopped:
			return
		case <-t.C:
		}
		if _, err := l.sign(context.Background()); err != nil {
			if errors.Is(err, ErrNotSequencer) {
				// A standby: expected until it takes the log over.
				if !standby {
					l.log.Info("checkpoints are signed but not published while this node does not sequence the log", "reason", err)
					standby = true
				}
				continue
			}
			// A failing Publish (the bucket away) fails every round:
			// logged at most every 10 s.
			if time.Since(lastLog) < 10*time.Second {
				quiet++
				continue
			}
			l.log.Error("signing a checkpoint", "err", err, "failures_not_logged", quiet)
			lastLog, quiet = time.Now(), 0
		}
	}
}

// Sign signs a checkpoint of the durable tree now, if it grew since the last
// one (or none was signed), stores it durably and publishes it, and returns
// the latest signed checkpoint note. The signer loop calls it; tests and
// tools that set a negative CheckpointInterval call it directly.
func (l *Ledger) Sign(ctx context.Context) ([]byte, error) {
	p, err := l.sign(ctx)
	if err != nil {
		return nil, err
	}
	return p.note, nil
}

// sign is the signing procedure. It signs only the tree of a view (a
// durable commit) and only after checking that tree against the last signed
// checkpoint; it stores the note durably before publishing it. With
// Config.Publish, a checkpoint is published only once Publish has accepted
// it: one signed and stored but not yet accepted (Publish failed) is offered
// to Publish again by the next call, before anything larger is signed over
// it.
func (l *Ledger) sign(ctx context.Context) (*published, error) {
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
	last := l.signed
	if last.ok && last.cp.Size == v.size {
		if l.latest.Load() == last {
			return last, nil
		}
		return l.publish(ctx, last, v)
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
	if err := l.persistCheckpoint(signed, cp); err != nil {
		return nil, err
	}
	l.met.signSeconds.Observe(time.Since(start).Seconds())
	p := &published{note: signed, cp: cp, ok: true, next: make(chan struct{})}
	l.signed = p
	return l.publish(ctx, p, v)
}

// publish makes a signed and stored checkpoint the latest published one,
// after Config.Publish (if set) has accepted it. signMu is held; v is the
// view p was signed over (or a later one of the same size).
func (l *Ledger) publish(ctx context.Context, p *published, v *view) (*published, error) {
	if l.cfg.Publish != nil {
		start := time.Now()
		err := l.cfg.Publish(ctx, Commit{Note: p.note, Checkpoint: p.cp, v: v})
		if errors.Is(err, ErrFenced) {
			l.stop(fmt.Errorf("publishing the checkpoint of size %d: %w", p.cp.Size, err))
			return nil, l.Err()
		}
		if err != nil {
			if !errors.Is(err, ErrNotSequencer) {
				l.met.publishFailures.Inc()
			}
			return nil, fmt.Errorf("publishing the checkpoint of size %d: %w", p.cp.Size, err)
		}
		l.met.publishSeconds.Observe(time.Since(start).Seconds())
	}
	l.setLatest(p)
	return p, nil
}

// setLatest publishes p: Latest returns it and WaitCovering callers it
// covers are released.
func (l *Ledger) setLatest(p *published) {
	old := l.latest.Swap(p)
	close(old.next)
	l.met.checkpoint(p.cp)
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
