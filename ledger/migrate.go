package ledger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// migrateChunk is how many dedup records migrateDedup moves per batch.
const migrateChunk = 1 << 16

// migrateDedup moves the dedup index of a format-3 store, keyed by event id
// alone ('i' id), to format 4's, keyed by (emitter, id) ('d' emitter 0x00
// id): the emitter of each record is read from its leaf, which must parse,
// carry the record's id and hash to the record's leaf hash. The SDK's
// events have canonical ids and no record, so for their logs there is
// nothing to move.
//
// It works in chunks of chunk records. Each chunk's leaves are read
// in index order, every entry bundle once, and its batch writes the new
// records and deletes the old ones, durably; the batch that finds the old
// index empty sets the format record to 4 (and migrateOpenGames then takes
// it to 6, and migrateHeads to 7). So an interrupted migration
// goes on where it stopped at the next Open, and a store is never of
// format 4 with records left in the old index. It returns how many records
// it moved.
func (l *Ledger) migrateDedup(ctx context.Context, chunk int) (int, error) {
	db := l.db
	moved := 0
	start := time.Now()
	type rec struct {
		id  string
		rec dedupRecord
	}
	for {
		if err := ctx.Err(); err != nil {
			return moved, err
		}
		var recs []rec
		it, err := db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: []byte{prefixDedupV3}, UpperBound: prefixEnd(prefixDedupV3)})
		if err != nil {
			return moved, err
		}
		for ok := it.First(); ok && len(recs) < chunk; ok = it.Next() {
			r, err := parseDedup(it.Value())
			if err != nil {
				it.Close()
				return moved, fmt.Errorf("format-3 dedup record %q: %w", it.Key()[1:], err)
			}
			recs = append(recs, rec{string(it.Key()[1:]), r})
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return moved, err
		}
		slices.SortFunc(recs, func(a, b rec) int { return cmp.Compare(a.rec.Index, b.rec.Index) })
		b := db.NewBatch()
		var bundle [][]byte
		bundleN := ^uint64(0)
		var key []byte
		for _, r := range recs {
			n := r.rec.Index / merkle.TileWidth
			if n != bundleN {
				d, err := readBundle(db, n)
				if err != nil {
					b.Close()
					return moved, fmt.Errorf("the entry bundle of leaf %d, named by the dedup record of %q: %w", r.rec.Index, r.id, errors.Join(ErrCorrupt, err))
				}
				if bundle, err = merkle.ParseBundle(d); err != nil {
					b.Close()
					return moved, fmt.Errorf("entry bundle %d: %w", n, err)
				}
				bundleN = n
			}
			j := int(r.rec.Index % merkle.TileWidth)
			if j >= len(bundle) {
				b.Close()
				return moved, fmt.Errorf("the dedup record of %q names leaf %d, which the log does not hold: %w", r.id, r.rec.Index, ErrCorrupt)
			}
			leaf := bundle[j]
			ev, err := events.Parse(leaf)
			if err != nil {
				b.Close()
				return moved, fmt.Errorf("leaf %d, named by the dedup record of %q: %w: %w", r.rec.Index, r.id, ErrCorrupt, err)
			}
			if h := merkle.LeafHash(leaf); ev.ID != r.id || h != r.rec.LeafHash {
				b.Close()
				return moved, fmt.Errorf("the dedup record of %q names leaf %d, whose event is %q with leaf hash %x…: %w", r.id, r.rec.Index, ev.ID, h[:8], ErrCorrupt)
			}
			key = appendDedupKey(key[:0], ev.Emitter, ev.ID)
			b.Set(key, r.rec.marshal(), nil)
			b.Delete(strKey(prefixDedupV3, r.id), nil)
		}
		last := len(recs) < chunk
		if last {
			b.Set(keyFormat, append([]byte{4}, l.origin...), nil)
		}
		err = l.commit(b, fmt.Sprintf("moving %d dedup records to the per-emitter index", len(recs)))
		b.Close()
		if err != nil {
			return moved, err
		}
		moved += len(recs)
		if last {
			l.log.Info("moved the dedup index to per-emitter keys", "records", moved, "took", time.Since(start))
			return moved, nil
		}
		l.log.Info("moving the dedup index to per-emitter keys", "records", moved)
	}
}

// migrateHeads splits the game heads of a format-6 store into format 7's
// head and live part: each head of version 2 (the game's state without its
// history) is decoded and written again as events.Game.AppendHead and
// AppendLive write it; the history chunks stay. It works in batches of
// chunk games, each written durably with both parts of each of its games,
// in key order. The first batch also sets the format record to 7 and the
// marker keySplitHeads, so that from the first split head on an older
// version refuses the store (its loadGame would fail on a split game), and
// Open knows that a store of format 7 with the marker is still being split;
// the batch that finds no head of version 2 left deletes the marker (and
// sets the format record to 7, if it is also the first). So a crash leaves
// either a store of format 6 as it was, or one of format 7 and the marker
// whose games are each whole in one format or the other (loadGame reads
// both), and the next Open goes on where it stopped. It returns how many
// heads it split.
func (l *Ledger) migrateHeads(ctx context.Context, chunk int) (int, error) {
	db := l.db
	split := 0
	start := time.Now()
	lo := []byte{prefixGame}
	var key, head, live, last []byte
	first := true
	for {
		if err := ctx.Err(); err != nil {
			return split, err
		}
		it, err := db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(prefixGame)})
		if err != nil {
			return split, err
		}
		b := db.NewBatch()
		n := 0
		ok := it.First()
		for ; ok && n < chunk; ok = it.Next() {
			last = append(last[:0], it.Key()...)
			if !oldHead(it.Value()) {
				continue // split by an interrupted migration
			}
			id := string(it.Key()[1:])
			var g events.Game
			err := g.UnmarshalBinary(it.Value())
			if err == nil && g.History() != (events.History{}) {
				err = fmt.Errorf("the head holds %+v of history", g.History())
			}
			if err == nil {
				if head, err = g.AppendHead(head[:0]); err == nil {
					live, err = g.AppendLive(live[:0])
				}
			}
			if err != nil {
				it.Close()
				b.Close()
				return split, fmt.Errorf("the format-6 head of game %q: %w: %w", id, ErrCorrupt, err)
			}
			b.Set(it.Key(), head, nil)
			key = append(append(key[:0], prefixLive), id...)
			b.Set(key, live, nil)
			n++
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			b.Close()
			return split, err
		}
		lo = append(slices.Clone(last), 0) // the next batch starts after the last game of this one
		if first || !ok {
			b.Set(keyFormat, append([]byte{7}, l.origin...), nil)
		}
		if !ok {
			b.Delete(keySplitHeads, nil)
		} else if first {
			b.Set(keySplitHeads, nil, nil)
		}
		first = false
		err = l.commit(b, fmt.Sprintf("splitting %d game heads", n))
		b.Close()
		if err != nil {
			return split, err
		}
		split += n
		if !ok {
			l.log.Info("split the game heads", "games", split, "took", time.Since(start))
			return split, nil
		}
		l.log.Info("splitting the game heads", "games", split)
	}
}
