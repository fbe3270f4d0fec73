package ledger

// This file is Import: a ledger that keeps a copy of a log another ledger
// sequences (a standby of `zarlog serve --storage`, or a node restored
// from the bucket) appends the other's leaves as they are, with their
// append times, instead of judging them afresh through Append: the same
// tree, and the same projections and dedup state, because each leaf is
// replayed with the time the sequencer judged it at (as Rebuild does).

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// An ImportBatch is a run of leaves of the log, verified by the caller to
// be the log's, to append as they are.
type ImportBatch struct {
	// Start is the index of the first leaf: the ledger's tree size.
	Start uint64
	// Leaves are the leaves [Start, Start+len(Leaves)).
	Leaves [][]byte
	// Times are the append times of the leaves, in index order: the one
	// in effect at Start (its Index may be lower; with Start > 0 it may be
	// left out if the ledger's own time in effect at Start-1 continues),
	// then those of the later groups.
	Times []AppendTime
	// Root is the root the tree must have after the leaves: the signed
	// checkpoint's, or a root at that size proved consistent with one.
	Root merkle.Hash
	// Note, if not nil, is the log's signed checkpoint of the tree after
	// the leaves (its size Start+len(Leaves), its root Root): it is stored
	// and published, as if this ledger had signed it.
	Note []byte
}

// Import appends b's leaves to the log as they are: their tree tiles, their
// append times, and the projections replayed from them (events.Next with
// their append times, signatures not checked again, as Rebuild does), in
// one durable batch; then, with b.Note, stores that checkpoint and
// publishes it (Config.Publish is not called: the checkpoint came from
// where Publish writes).
//
// Nothing is written if b.Start is not the tree's size (ErrRange), if the
// leaves do not give b.Root (ErrTampered: they are not the log's), if
// b.Note is not a checkpoint of the log's key of that tree, or if the times
// are out of order. A leaf the state machine refuses on replay (this
// ledger's rules or pinned drand chains differ from the sequencer's) stops
// the ledger with an error naming the leaf, as in Rebuild. Appends wait
// while it runs.
func (l *Ledger) Import(ctx context.Context, b ImportBatch) error {
	if err := l.begin(); err != nil {
		return err
	}
	defer l.appends.Done()
	if err := l.Err(); err != nil {
		return err
	}
	r := &request{imp: &b, impCtx: ctx, done: make(chan struct{})}
	select {
	case l.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	}
	<-r.done
	return r.err
}

// runImport is Import in the sequencer goroutine.
func (l *Ledger) runImport(r *request) {
	if err := l.Err(); err != nil {
		r.finish(err)
		return
	}
	l.signMu.Lock()
	defer l.signMu.Unlock()
	p, err := l.seq.importLeaves(r.impCtx, r.imp)
	if err != nil {
		r.finish(err)
		return
	}
	l.met.imported.Add(float64(len(r.imp.Leaves)))
	if p != nil {
		l.signed = p
		l.setLatest(p)
	}
	r.finish(nil)
}

// importLeaves checks and writes an import. Errors before anything is
// written leave the ledger as it was; a refusal on replay or a failed
// commit stops it.
func (s *sequencer) importLeaves(ctx context.Context, b *ImportBatch) (*published, error) {
	l := s.l
	size := s.b.Size()
	end := b.Start + uint64(len(b.Leaves))
	if b.Start != size {
		return nil, fmt.Errorf("ledger: import at leaf %d, the tree has %d: %w", b.Start, size, ErrRange)
	}
	if end < b.Start {
		return nil, fmt.Errorf("ledger: import of %d leaves at %d overflows: %w", len(b.Leaves), b.Start, ErrRange)
	}
	hashes := make([]merkle.Hash, len(b.Leaves))
	for i, leaf := range b.Leaves {
		if len(leaf) > merkle.MaxEntrySize {
			return nil, fmt.Errorf("ledger: import: leaf %d is %d bytes, more than %d: %w", b.Start+uint64(i), len(leaf), merkle.MaxEntrySize, merkle.ErrLeafTooLarge)
		}
		hashes[i] = merkle.LeafHash(leaf)
	}
	if root := extendRoot(s.b.State(), hashes); root != b.Root {
		return nil, &TamperError{Check: "imported leaves", Size: end, Want: b.Root, Got: root}
	}
	var p *published
	if b.Note != nil {
		cp, err := merkle.Open(b.Note, l.cfg.Verifier)
		if err != nil {
			return nil, fmt.Errorf("ledger: import: the checkpoint: %w", err)
		}
		if cp.Size != end || cp.Hash != b.Root {
			return nil, fmt.Errorf("ledger: import: the checkpoint has size %d and root %x…, the leaves give size %d and root %x…: %w",
				cp.Size, cp.Hash[:8], end, b.Root[:8], ErrTampered)
		}
		if last := l.signed; last.ok && last.cp.Size > cp.Size {
			return nil, fmt.Errorf("ledger: import: the checkpoint of size %d is older than the one stored, of size %d: %w", cp.Size, last.cp.Size, ErrRange)
		}
		p = &published{note: slices.Clone(b.Note), cp: cp, ok: true, next: make(chan struct{})}
	}
	// The time in effect at each leaf: the batch's, or for the first
	// leaves the ledger's own.
	var (
		now    time.Time // in effect at the current leaf
		stored time.Time // the ledger's in effect at Start-1 (zero at 0)
	)
	if b.Start > 0 {
		ts, err := appendTimes(ctx, l.view.Load().snap, size, b.Start-1, b.Start)
		if err != nil {
			return nil, fmt.Errorf("ledger: import: %w", err)
		}
		stored = ts[0].Time
		now = stored
	}
	for i, t := range b.Times {
		if i > 0 && t.Index <= b.Times[i-1].Index || t.Index >= max(end, b.Start+1) || t.Time.IsZero() {
			return nil, fmt.Errorf("ledger: import: append time %d (leaf %d) is out of order or range [%d, %d): %w", i, t.Index, b.Start, end, ErrCorrupt)
		}
	}
	times := b.Times
	for len(times) > 0 && times[0].Index <= b.Start {
		now = times[0].Time
		times = times[1:]
	}
	if len(b.Leaves) > 0 && now.IsZero() {
		return nil, fmt.Errorf("ledger: import: no append time for leaf %d: %w", b.Start, ErrCorrupt)
	}
	if len(b.Leaves) == 0 && p == nil {
		return nil, nil
	}

	// From here on a failure stops the ledger: the in-memory projections
	// may be ahead of Pebble.
	l.epoch.Add(1)
	defer l.epoch.Add(1)
	s.forget()
	s.reset()
	batch := l.db.NewBatch()
	defer batch.Close()
	env := events.Env{ClockSkew: l.cfg.ClockSkew, Beacons: l.cfg.Beacons, Moves: l.cfg.Moves}
	if len(b.Leaves) > 0 && !now.Equal(stored) {
		batch.Set(u64Key(prefixTime, b.Start), marshalTime(now), nil)
	}
	for i, leaf := range b.Leaves {
		idx := b.Start + uint64(i)
		if len(times) > 0 && times[0].Index == idx {
			if !times[0].Time.Equal(now) {
				now = times[0].Time
				batch.Set(u64Key(prefixTime, idx), marshalTime(now), nil)
			}
			times = times[1:]
		}
		env.Now = now
		if err := s.replay(leaf, idx, &env); err != nil {
			err = fmt.Errorf("importing: %w", err)
			s.reset()
			s.forget()
			l.stop(err)
			return nil, l.Err()
		}
		s.leaves[len(s.leaves)-1] = leaf
	}
	if len(b.Leaves) > 0 {
		tiles, err := s.b.AppendHashed(s.leaves, s.hashes)
		if err != nil {
			l.stop(fmt.Errorf("importing leaves at %d: %w", b.Start, err))
			return nil, l.Err()
		}
		if err := setTiles(batch, tiles, b.Start); err != nil {
			l.stop(fmt.Errorf("importing leaves at %d: %w", b.Start, err))
			return nil, l.Err()
		}
		st, err := s.b.State().MarshalBinary()
		if err != nil {
			l.stop(err)
			return nil, l.Err()
		}
		batch.Set(keyState, st, nil)
		if err := s.writeProjections(batch); err != nil {
			l.stop(err)
			return nil, l.Err()
		}
		if l.legacyIDs.Load() {
			batch.Set(keyLegacyIDs, nil, nil)
		}
	}
	if p != nil {
		batch.Set(keyCheckpoint, p.note, nil)
	}
	if err := l.commit(batch, fmt.Sprintf("importing leaves %d to %d", b.Start, end)); err != nil {
		s.reset()
		s.forget()
		return nil, l.Err()
	}
	for id, pg := range s.pend {
		s.cache(id, pg.g, pg.size)
	}
	s.reset()
	s.forget()
	l.install(s.b.Size(), s.b.Root(), &s.stats, &s.rej.sum)
	return p, nil
}

// extendRoot returns the root of the tree st describes with the leaves of
// the given hashes appended.
func extendRoot(st merkle.State, hashes []merkle.Hash) merkle.Hash {
	rng := slices.Clone(st.Range)
	size := st.Size
	for _, h := range hashes {
		rng = append(rng, h)
		for n := size; n&1 == 1; n >>= 1 {
			k := len(rng)
			rng = append(rng[:k-2], merkle.NodeHash(rng[k-2], rng[k-1]))
		}
		size++
	}
	if len(rng) == 0 {
		return merkle.EmptyRoot()
	}
	root := rng[len(rng)-1]
	for i := len(rng) - 2; i >= 0; i-- {
		root = merkle.NodeHash(rng[i], root)
	}
	return root
}
