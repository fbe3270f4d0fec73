package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// rebuildChunk is how many leaves Rebuild replays per batch.
const rebuildChunk = 8192

// Rebuild replays every leaf of the log into fresh projections: the dedup
// index, the game states, the finished-games index and the statistics. The
// result is byte for byte what appending the same events produced, because
// each event is judged again with the append time stored with it
// (events.Env.Now) and its own emitter. Appends wait while it runs.
//
// Rebuild first marks the store as rebuilding and deletes the old
// projections, in one durable batch; if it is interrupted (a crash, ctx), the
// next Open finishes it. A leaf the state machine refuses on replay (the
// rules or the pinned drand chains changed since it was appended) stops the
// ledger with an error naming the leaf. The rejected store is not a
// projection and is kept.
func (l *Ledger) Rebuild(ctx context.Context) error {
	if err := l.begin(); err != nil {
		return err
	}
	defer l.appends.Done()
	if err := l.Err(); err != nil {
		return err
	}
	r := &request{rebuild: ctx, done: make(chan struct{})}
	select {
	case l.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	}
	<-r.done
	return r.err
}

func (l *Ledger) runRebuild(r *request) {
	if err := l.Err(); err != nil {
		r.finish(err)
		return
	}
	l.epoch.Add(1)
	l.seq.forget()
	err := l.seq.rebuild(r.rebuild)
	l.seq.forget()
	l.epoch.Add(1)
	if err != nil {
		l.stop(fmt.Errorf("rebuilding the projections: %w", err))
		r.finish(l.Err())
		return
	}
	l.install(l.seq.b.Size(), l.seq.b.Root(), &l.seq.stats, &l.seq.rej.sum)
	r.finish(nil)
}

// rebuild is Rebuild in the sequencer (or in Open, before it starts).
func (s *sequencer) rebuild(ctx context.Context) error {
	l := s.l
	db := l.db
	size := s.b.Size()
	start := time.Now()
	b := db.NewBatch()
	b.Set(keyRebuild, nil, nil)
	for _, p := range []byte{prefixDedup, prefixDedupV3, prefixGame, prefixLive, prefixHistory, prefixFinished, prefixOpen} {
		b.DeleteRange([]byte{p}, prefixEnd(p), nil)
	}
	b.Delete(keyStats, nil)
	b.Delete(keyLegacyIDs, nil)
	err := l.commit(b, "deleting the old projections")
	b.Close()
	if err != nil {
		return fmt.Errorf("deleting the old projections: %w", err)
	}
	s.games.clear()
	for e := range s.open {
		l.setOpen(e, openCount{})
	}
	clear(s.open)
	s.openBytes = 0
	s.stats = Stats{}
	l.legacyIDs.Store(false)
	s.reset()

	times, err := db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: []byte{prefixTime}, UpperBound: prefixEnd(prefixTime)})
	if err != nil {
		return err
	}
	defer times.Close()
	times.First()
	var now time.Time
	env := events.Env{ClockSkew: l.cfg.ClockSkew, Beacons: l.cfg.Beacons, Moves: l.cfg.Moves}
	for i := uint64(0); i < size; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := i / merkle.TileWidth
		d, err := readBundle(db, n)
		if errors.Is(err, pebble.ErrNotFound) {
			return fmt.Errorf("entry bundle %d is missing: %w", n, ErrCorrupt)
		}
		if err != nil {
			return fmt.Errorf("entry bundle %d: %w", n, err)
		}
		entries, err := merkle.ParseBundle(d)
		if err != nil {
			return fmt.Errorf("entry bundle %d: %w", n, err)
		}
		for _, leaf := range entries {
			if i >= size {
				break
			}
			for times.Valid() && beUint64(times.Key()[1:]) <= i {
				if now, err = parseTime(times.Value()); err != nil {
					return fmt.Errorf("append time of leaf %d: %w", beUint64(times.Key()[1:]), err)
				}
				times.Next()
			}
			if now.IsZero() {
				return fmt.Errorf("no append time for leaf %d: %w", i, ErrCorrupt)
			}
			env.Now = now
			if err := s.replay(leaf, i, &env); err != nil {
				return err
			}
			i++
			if len(s.leaves) == rebuildChunk {
				if err := s.flushRebuild(false); err != nil {
					return err
				}
			}
		}
	}
	if err := times.Error(); err != nil {
		return err
	}
	if err := s.flushRebuild(true); err != nil {
		return err
	}
	l.log.Info("rebuilt the projections", "leaves", size, "games", s.stats.Games, "took", time.Since(start))
	return nil
}

// replay applies leaf i of the log to the projections being rebuilt.
func (s *sequencer) replay(leaf []byte, i uint64, env *events.Env) error {
	ev, err := events.Parse(leaf)
	if err != nil {
		return fmt.Errorf("leaf %d does not parse: %w", i, err)
	}
	g, size, err := s.game(ev.Game)
	if err != nil {
		return err
	}
	// An id of the form of a canonical id that is not the event's own was
	// allowed before store format 3: its record stays in the index, and
	// canonical ids are then looked up there too (legacyIDs).
	game, seq, taken := takenCanonicalID(ev)
	if taken && !s.l.legacyIDs.Load() {
		s.l.log.Warn("the log holds an event whose id has the form of another event's canonical id: canonical ids are looked up in the dedup index too", "leaf", i, "id", ev.ID)
		s.l.legacyIDs.Store(true)
	}
	t, ok := s.recent[scopedID(ev.Emitter, ev.ID)]
	rec := t.rec
	if !ok && s.l.indexed(ev) {
		if rec, ok, err = lookupID(s.l.db, ev.Emitter, ev.ID); err != nil {
			return err
		}
	}
	if !ok && (taken || ev.HasCanonicalID()) {
		holder := g // the game the id names
		if taken {
			if holder, _, err = s.game(game); err != nil {
				return err
			}
		} else {
			seq = ev.Seq
		}
		if rec, ok, err = byGame(s.l.db, ev.Emitter, ev.ID, holder, seq, nil); err != nil {
			return err
		}
	}
	if ok {
		return fmt.Errorf("leaf %d repeats emitter %s's event id %q of leaf %d: %w", i, ev.Emitter, ev.ID, rec.Index, ErrCorrupt)
	}
	env.Emitter, env.Index = ev.Emitter, i
	g, ng, err := s.next(nil, g, ev, *env)
	if err != nil {
		return fmt.Errorf("leaf %d (event %q, %s of game %q) is refused on replay: %w", i, ev.ID, ev.Type, ev.Game, err)
	}
	s.add(ev, nil, merkle.LeafHash(leaf), g, ng, i, size, events.SizeAfter(size, g, ng))
	return nil
}

// flushRebuild writes the projections replayed so far; the last flush also
// removes the rebuild marker.
func (s *sequencer) flushRebuild(last bool) error {
	b := s.l.db.NewBatch()
	defer b.Close()
	if err := s.writeProjections(b); err != nil {
		return err
	}
	if s.l.legacyIDs.Load() {
		b.Set(keyLegacyIDs, nil, nil)
	}
	if last {
		b.Delete(keyRebuild, nil)
	}
	if err := s.l.commit(b, "writing rebuilt projections"); err != nil {
		return err
	}
	for id, p := range s.pend {
		s.cache(id, p.g, p.size)
	}
	clear(s.recent) // committed: the index has them
	s.nRecent = 0
	s.reset()
	return nil
}
