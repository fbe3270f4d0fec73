package ledger

import (
	"cmp"
	"context"
	"encoding/binary"
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

// migrateBatchBytes bounds the batches of migrateGameNumbers, whose games
// carry their history: a batch ends after the game that takes it past.
const migrateBatchBytes = 16 << 20

// migrateGameNumbers moves the live parts and history chunks of a format-8
// store's games from their game id's keys ('l' game, 'h' game 0x00 I) to
// their game number's ('l' N, 'h' N I), with the same values, and writes
// each head record again as numberedHead ‖ N ‖ head. A game's number is its
// first leaf: its first chunk's key says it, and the chunk's first leaf
// must be it. It works in batches of at most chunk games (and about
// migrateBatchBytes), each written durably with every record of each of
// its games, in key order. The first batch also sets the format record to
// 9 and the marker keyGameNums, so that from the first moved game on an
// older version refuses the store (its loadGame would find no live part),
// and Open knows that a store of format 9 with the marker is still being
// moved; the batch that finds no unnumbered game left deletes the marker
// (and sets the format record to 9, if it is also the first). So a crash
// leaves either a store of format 8 as it was, or one of format 9 and the
// marker whose games are each whole in one layout or the other (loadGame
// reads both, by the head record: parseHeadRecord), and the next Open goes
// on where it stopped. It returns how many games it moved.
func (l *Ledger) migrateGameNumbers(ctx context.Context, chunk int) (int, error) {
	db := l.db
	moved := 0
	start := time.Now()
	lo := []byte{prefixGame}
	var key, val, last []byte
	first := true
	for {
		if err := ctx.Err(); err != nil {
			return moved, err
		}
		it, err := db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lo, UpperBound: prefixEnd(prefixGame)})
		if err != nil {
			return moved, err
		}
		b := db.NewBatch()
		n := 0
		ok := it.First()
		for ; ok && n < chunk && b.Len() < migrateBatchBytes; ok = it.Next() {
			last = append(last[:0], it.Key()...)
			id := string(it.Key()[1:])
			at, head, err := parseHeadRecord(id, it.Value())
			if err == nil && oldHead(head) {
				err = fmt.Errorf("the head of game %q is of format 6: %w", id, ErrCorrupt)
			}
			if err == nil && !at.numbered {
				key, val, err = moveGame(db, b, id, head, key, val)
				n++
			}
			if err != nil {
				it.Close()
				b.Close()
				return moved, err
			}
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			b.Close()
			return moved, err
		}
		lo = append(slices.Clone(last), 0) // the next batch starts after the last game of this one
		if first || !ok {
			b.Set(keyFormat, append([]byte{9}, l.origin...), nil)
		}
		if !ok {
			b.Delete(keyGameNums, nil)
		} else if first {
			b.Set(keyGameNums, nil, nil)
		}
		first = false
		err = l.commit(b, fmt.Sprintf("moving %d games to their numbers' keys", n))
		b.Close()
		if err != nil {
			return moved, err
		}
		moved += n
		if !ok {
			l.log.Info("moved each game's records to its number's keys", "games", moved, "took", time.Since(start))
			return moved, nil
		}
		l.log.Info("moving each game's records to its number's keys", "games", moved)
	}
}

// moveGame adds to b the records of game id, whose format-8 head is head,
// under its number's keys (migrateGameNumbers), and the deletions of its
// format-8 keys. key and val are scratch buffers, returned for reuse.
func moveGame(db *pebble.DB, b *pebble.Batch, id string, head, key, val []byte) ([]byte, []byte, error) {
	old := gamePlace{id: id}
	lo, hi := old.historyBounds()
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return key, val, err
	}
	defer it.Close()
	var num uint64
	chunks := 0
	for ok := it.First(); ok; ok = it.Next() {
		k := it.Key()
		if len(k) != len(lo)+8 {
			return key, val, fmt.Errorf("history chunk key %q of game %q: %w", k, id, ErrCorrupt)
		}
		from := binary.BigEndian.Uint64(k[len(lo):])
		if chunks == 0 {
			_, leaf, err := events.HistoryLeaf(it.Value(), 0)
			if err != nil || leaf != from || from >= maxGameNumber {
				return key, val, fmt.Errorf("the first history chunk of game %q, at leaf %d, begins at leaf %d: %w", id, from, leaf, errors.Join(ErrCorrupt, err))
			}
			num = from
		}
		key = appendHistoryKey(key[:0], num, from)
		b.Set(key, it.Value(), nil)
		b.Delete(k, nil)
		chunks++
	}
	if err := it.Error(); err != nil {
		return key, val, fmt.Errorf("reading the history of game %q: %w", id, err)
	}
	if chunks == 0 {
		return key, val, fmt.Errorf("game %q has a head but no history: %w", id, ErrCorrupt)
	}
	liveKey := old.liveKey()
	live, err := get(db, liveKey)
	if errors.Is(err, pebble.ErrNotFound) {
		return key, val, fmt.Errorf("game %q has a head but no live part: %w", id, ErrCorrupt)
	}
	if err != nil {
		return key, val, fmt.Errorf("reading the live part of game %q: %w", id, err)
	}
	key = appendLiveKey(key[:0], num)
	b.Set(key, live, nil)
	b.Delete(liveKey, nil)
	val = append(appendHeadRecord(val[:0], num), head...)
	key = append(append(key[:0], prefixGame), id...)
	b.Set(key, val, nil)
	return key, val, nil
}
