package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// Reads see the ledger as of its last durable commit (a Pebble snapshot per
// committed group): they never block the sequencer and never show a batch
// whose commit failed. Every read method is safe for concurrent use.

// Size returns the number of leaves durably in the log. It may be ahead of
// the latest signed checkpoint.
func (l *Ledger) Size() (uint64, error) {
	v, err := l.acquire()
	if err != nil {
		return 0, err
	}
	defer v.release()
	return v.size, nil
}

// Stats returns the statistics projection as of the last committed group.
func (l *Ledger) Stats() (Stats, error) {
	v, err := l.acquire()
	if err != nil {
		return Stats{}, err
	}
	defer v.release()
	return v.stats, nil
}

// Tally returns the statistics' events.Tally and the number of leaves it
// was counted over (every leaf is an event), as of the last committed group
// (publisher.LogStore).
func (l *Ledger) Tally() (events.Tally, uint64, error) {
	st, err := l.Stats()
	return st.Tally, st.Events, err
}

// TileReader returns a merkle.TileReader over the ledger's tiles and entry
// bundles. It returns each tile as stored: the full tile, or the partial
// tile as wide as the durable tree has it (at least as wide as any signed
// checkpoint needs), which package merkle trims to the width asked for. Use
// ReadTile to serve a tlog-tiles path exactly. It is safe for concurrent use.
func (l *Ledger) TileReader() merkle.TileReader { return ledgerTiles{l} }

type ledgerTiles struct{ l *Ledger }

func (t ledgerTiles) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	v, err := t.l.acquire()
	if err != nil {
		return nil, err
	}
	defer v.release()
	return tileReader{v.snap}.ReadTiles(ctx, tiles)
}

// ReadTile returns the contents of one tlog-tiles resource at exactly the
// tile's width (the prefix of the stored, possibly wider, tile), or
// ErrNotFound if the durable tree does not have it at that width.
func (l *Ledger) ReadTile(ctx context.Context, t merkle.Tile) ([]byte, error) {
	v, err := l.acquire()
	if err != nil {
		return nil, err
	}
	defer v.release()
	return readTileAt(v, t)
}

// tree returns a tile reader on v for a tree of the given size.
func (v *view) tree(size uint64) (merkle.TileReader, error) {
	if size > v.size {
		return nil, fmt.Errorf("tree size %d, the log has %d leaves: %w", size, v.size, ErrRange)
	}
	return tileReader{v.snap}, nil
}

// ProofCacheTiles is how many tiles' interior nodes the Ledger keeps for
// its inclusion proofs (Ledger.nodes): 64, a few checkpoints' worth of
// the tiles on the right edge of the tree (each of a tree's tile levels
// has one partial tile, at a new width with each checkpoint), at most
// ProofCacheTileBytes each.
const ProofCacheTiles = 64

// ProofCacheTileBytes bounds what one cached tile holds: the 511 hashes of
// a full tile's levels (256 + 128 + … + 1, 32 bytes each), their slices
// and the cache's entry.
const ProofCacheTileBytes = 17 << 10

// InclusionProof returns the inclusion proof of leaf index in the tree of
// the given size (a signed checkpoint's), computed from the stored tiles,
// whose interior nodes it keeps for the next proofs (merkle.NodeCache): a
// proof from tiles alone hashes the whole of each tile on the leaf's path,
// up to 255 SHA-256 blocks for each of the tree's tile levels.
func (l *Ledger) InclusionProof(ctx context.Context, index, size uint64) ([]merkle.Hash, error) {
	v, err := l.acquire()
	if err != nil {
		return nil, err
	}
	defer v.release()
	r, err := v.tree(size)
	if err != nil {
		return nil, err
	}
	if index >= size {
		return nil, fmt.Errorf("leaf %d in tree size %d: %w", index, size, ErrRange)
	}
	return l.nodes.InclusionProof(ctx, r, index, size)
}

// ConsistencyProof returns the consistency proof from tree size oldSize to
// newSize. The Ledger is the ConsistencyProver its Witness gets.
func (l *Ledger) ConsistencyProof(ctx context.Context, oldSize, newSize uint64) ([]merkle.Hash, error) {
	v, err := l.acquire()
	if err != nil {
		return nil, err
	}
	defer v.release()
	r, err := v.tree(newSize)
	if err != nil {
		return nil, err
	}
	if oldSize > newSize {
		return nil, fmt.Errorf("consistency from size %d to %d: %w", oldSize, newSize, ErrRange)
	}
	return merkle.ConsistencyProof(ctx, r, oldSize, newSize)
}

// ProveMulti returns the shared-hash inclusion proofs of several leaves in
// the tree of the given size, as docs/FORMATS.md §3 stores them (see
// merkle.ProveMulti).
func (l *Ledger) ProveMulti(ctx context.Context, indices []uint64, size uint64) ([]merkle.Hash, [][]int, error) {
	v, err := l.acquire()
	if err != nil {
		return nil, nil, err
	}
	defer v.release()
	r, err := v.tree(size)
	if err != nil {
		return nil, nil, err
	}
	for _, i := range indices {
		if i >= size {
			return nil, nil, fmt.Errorf("leaf %d in tree size %d: %w", i, size, ErrRange)
		}
	}
	return merkle.ProveMulti(ctx, r, indices, size)
}

// Leaves returns the leaves [start, end) of the log, as new slices.
func (l *Ledger) Leaves(ctx context.Context, start, end uint64) ([][]byte, error) {
	v, err := l.acquire()
	if err != nil {
		return nil, err
	}
	defer v.release()
	if start > end || end > v.size {
		return nil, fmt.Errorf("leaves [%d, %d) of %d: %w", start, end, v.size, ErrRange)
	}
	es, err := merkle.ReadEntries(ctx, tileReader{v.snap}, start, end, v.size)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(es))
	for i, e := range es {
		out[i] = append([]byte(nil), e...)
	}
	return out, nil
}

// LeavesAt returns the leaves at the given indices, in that order.
func (l *Ledger) LeavesAt(ctx context.Context, indices []uint64) ([][]byte, error) {
	v, err := l.acquire()
	if err != nil {
		return nil, err
	}
	defer v.release()
	out := make([][]byte, len(indices))
	bundles := map[uint64][][]byte{}
	for i, idx := range indices {
		if idx >= v.size {
			return nil, fmt.Errorf("leaf %d of %d: %w", idx, v.size, ErrRange)
		}
		n := idx / merkle.TileWidth
		es, ok := bundles[n]
		if !ok {
			t, _ := merkle.TileAt(merkle.EntriesLevel, n, v.size)
			d, err := readBundle(v.snap, n)
			if err != nil {
				return nil, errNotFound(err, t.Path())
			}
			if es, err = merkle.ParseBundle(d); err != nil {
				return nil, fmt.Errorf("%s: %w", t.Path(), err)
			}
			bundles[n] = es
		}
		j := int(idx % merkle.TileWidth)
		if j >= len(es) {
			return nil, fmt.Errorf("leaf %d: its bundle has %d entries: %w", idx, len(es), ErrCorrupt)
		}
		out[i] = es[j]
	}
	return out, nil
}

// Game returns the state of a game; Game.Leaves lists the log index of each
// of its events. It returns ErrNotFound for a game with no events.
func (l *Ledger) Game(ctx context.Context, id string) (*events.Game, error) {
	v, err := l.acquire()
	if err != nil {
		return nil, err
	}
	defer v.release()
	g, err := loadGame(v.snap, id)
	if err == nil && g == nil {
		err = errNotFound(pebble.ErrNotFound, "game "+id)
	}
	return g, err
}

// Lookup returns the leaf index and leaf hash of emitter's event with the
// given id, or ErrNotFound. Event ids are per emitter: another emitter's
// event under the same id is not found. An id of the form of a canonical id
// (game:seq) is looked up in its game, if that game is emitter's, any other
// in the dedup index.
func (l *Ledger) Lookup(ctx context.Context, emitter, eventID string) (uint64, merkle.Hash, error) {
	v, err := l.acquire()
	if err != nil {
		return 0, merkle.Hash{}, err
	}
	defer v.release()
	var hash merkle.Hash
	index, err := lookup(v.snap, emitter, eventID, l.canonicalIndexed(), &hash)
	return index, hash, err
}

// canonicalIndexed reports whether the dedup index may hold a canonical
// id (events.CanonicalID): only if the log holds an event that took
// another's (legacyIDs), or tests let events take them (allowReservedIDs).
// Otherwise a lookup of such an id goes to its game at once.
func (l *Ledger) canonicalIndexed() bool {
	return l.legacyIDs.Load() || l.allowReservedIDs
}

// lookup finds emitter's event eventID in r, as Lookup, and sets *hash (if
// not nil) to its leaf hash. An id that is not its event's canonical id
// has a dedup record. A canonical id, game:seq, is found without decoding
// the game's state: its head says whose game it is (events.PeekHead), the
// leaves of its history chunks where its event seq is (events.HistoryLeaf),
// and that leaf's "id" member whether that event has this id (an event may
// have chosen another: then this id is not in the log, since no other
// event may take it, or, in a log with legacy ids, it has a dedup record,
// which is read first when indexed says the index may hold canonical ids).
// So a status request costs a few reads, not a decode of the game
// (BenchmarkLookup).
func lookup(r pebble.Reader, emitter, eventID string, indexed bool, hash *merkle.Hash) (uint64, error) {
	what := func() string { return fmt.Sprintf("event %q of emitter %s", eventID, emitter) }
	game, seq, canon := events.ParseCanonicalID(eventID)
	if !canon || indexed {
		rec, ok, err := lookupID(r, emitter, eventID)
		if err != nil {
			return 0, err
		}
		if ok {
			if hash != nil {
				*hash = rec.LeafHash
			}
			return rec.Index, nil
		}
		if !canon {
			return 0, errNotFound(pebble.ErrNotFound, what())
		}
	}
	index, ok, err := gameLeaf(r, emitter, game, seq)
	if err != nil {
		return 0, err
	}
	if ok {
		ok, err = leafHasID(r, index, eventID, hash)
	}
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, errNotFound(pebble.ErrNotFound, what())
	}
	return index, nil
}

// peekGameHead reads game's head record: where its other records are
// (parseHeadRecord), its owner and the leaves its head holds
// (events.PeekHead). found is false if r holds no state of game.
func peekGameHead(r pebble.Reader, game string) (place gamePlace, owner string, leaves []uint64, found bool, err error) {
	v, c, err := r.Get(strKey(prefixGame, game))
	if errors.Is(err, pebble.ErrNotFound) {
		return gamePlace{}, "", nil, false, nil
	}
	if err != nil {
		return gamePlace{}, "", nil, false, fmt.Errorf("reading the state of game %q: %w", game, err)
	}
	defer c.Close()
	place, head, err := parseHeadRecord(game, v)
	var id string
	if err == nil {
		id, owner, leaves, err = events.PeekHead(head)
	}
	if errors.Is(err, ErrCorrupt) {
		return gamePlace{}, "", nil, false, err
	}
	if err != nil {
		return gamePlace{}, "", nil, false, fmt.Errorf("state of game %q: %w: %w", game, ErrCorrupt, err)
	}
	if id != game {
		return gamePlace{}, "", nil, false, fmt.Errorf("the state of game %q is game %q's: %w", game, id, ErrCorrupt)
	}
	return place, owner, leaves, true, nil
}

// gameLeaf returns the log index of event seq of game, if r holds the
// game's state, the game is emitter's and it has that many events. It reads
// the game's head and the leaves of its history chunks, never its state
// (loadGame).
func gameLeaf(r pebble.Reader, emitter, game string, seq uint64) (uint64, bool, error) {
	place, owner, leaves, found, err := peekGameHead(r, game)
	if err != nil || !found {
		return 0, false, err
	}
	if owner != emitter {
		return 0, false, nil
	}
	if seq < uint64(len(leaves)) {
		return leaves[seq], true, nil
	}
	at := seq - uint64(len(leaves)) // the leaf's place past the chunks read
	lo, hi := place.historyBounds()
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, false, fmt.Errorf("reading the history of game %q: %w", game, err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		n, index, err := events.HistoryLeaf(it.Value(), int(min(at, 1<<31)))
		if err != nil {
			return 0, false, fmt.Errorf("history of game %q at leaf %x: %w: %w", game, it.Key()[len(lo):], ErrCorrupt, err)
		}
		if at < uint64(n) {
			return index, true, nil
		}
		at -= uint64(n)
	}
	if err := it.Error(); err != nil {
		return 0, false, fmt.Errorf("reading the history of game %q: %w", game, err)
	}
	return 0, false, nil
}

// leafHasID reports whether leaf index, which r holds, has the event id
// id, reading its entry bundle in place and the leaf's "id" member only
// (leafIDIs). If it has, it sets *hash (if not nil) to the leaf's hash.
func leafHasID(r pebble.Reader, index uint64, id string, hash *merkle.Hash) (bool, error) {
	has := false
	_, err := withEntry(r, index, func(leaf []byte) {
		if leafIDIs(leaf, id) {
			has = true
			if hash != nil {
				*hash = merkle.LeafHash(leaf)
			}
		}
	})
	return has, err
}

// leafIDIs reports whether leaf, a logged event, has the id id. A logged
// event is canonical JSON (events.Parse accepts no other) whose members
// come in a fixed order: "body", "emitter", "game", "id", then "scheme",
// "seq", "sig", "time", "type" and "v", whose values hold no quote. So the
// last `,"id":"` of the leaf starts its own id member, and ids need no
// escapes (events.ValidEventID). TestLeafIDIs holds it to events.Parse.
func leafIDIs(leaf []byte, id string) bool {
	const member = `,"id":"`
	i := bytes.LastIndex(leaf, []byte(member))
	if i < 0 {
		return false
	}
	rest := leaf[i+len(member):]
	return len(rest) > len(id) && string(rest[:len(id)]) == id && rest[len(id)] == '"'
}

// bundleEntry returns entry j of entry bundle d, in place; ok is false if
// the bundle holds fewer entries.
func bundleEntry(d []byte, j int) (entry []byte, ok bool, err error) {
	for k, off := 0, 0; off < len(d); k++ {
		if len(d)-off < 2 {
			return nil, false, fmt.Errorf("entry bundle: entry %d length cut short at byte %d of %d: %w", k, off, len(d), ErrCorrupt)
		}
		n := int(binary.BigEndian.Uint16(d[off:]))
		off += 2
		if len(d)-off < n {
			return nil, false, fmt.Errorf("entry bundle: entry %d of %d bytes cut short at byte %d of %d: %w", k, n, off, len(d), ErrCorrupt)
		}
		if k == j {
			return d[off : off+n : off+n], true, nil
		}
		off += n
	}
	return nil, false, nil
}

// AppendTime returns the ledger's clock when it appended leaf index: the
// Env.Now the state machine judged it with.
func (l *Ledger) AppendTime(ctx context.Context, index uint64) (time.Time, error) {
	v, err := l.acquire()
	if err != nil {
		return time.Time{}, err
	}
	defer v.release()
	if index >= v.size {
		return time.Time{}, fmt.Errorf("leaf %d of %d: %w", index, v.size, ErrRange)
	}
	it, err := v.snap.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: []byte{prefixTime}, UpperBound: u64Key(prefixTime, index+1)})
	if err != nil {
		return time.Time{}, err
	}
	defer it.Close()
	if !it.Last() {
		return time.Time{}, errors.Join(fmt.Errorf("append time of leaf %d: %w", index, ErrCorrupt), it.Error())
	}
	return parseTime(it.Value())
}

// Finished returns up to limit entries of the finished-games index (games
// whose last event, the reveal or per-roll-v1 the end, is logged) whose last
// event has a leaf index ≥ from, in log order. The next page starts at the
// last Index + 1.
func (l *Ledger) Finished(ctx context.Context, from uint64, limit int) ([]events.FinishedGame, error) {
	v, err := l.acquire()
	if err != nil {
		return nil, err
	}
	defer v.release()
	it, err := v.snap.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: u64Key(prefixFinished, from), UpperBound: prefixEnd(prefixFinished)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []events.FinishedGame
	for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
		f, err := parseFinished(it.Key(), it.Value())
		if err != nil {
			return out, err
		}
		out = append(out, f)
	}
	return out, it.Error()
}
