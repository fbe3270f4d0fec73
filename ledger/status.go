package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// LocateEach is Locate of each of emitter's event ids, in one view of the
// ledger, sharing its reads. An event among the latest RecentLookups
// appended is found in memory; the others in Pebble, a game's owner and
// leaves read once, and an entry bundle once, however many of the ids they
// serve. The ingest answers a status request with it (up to 256 of an
// emitter's events, asked about a second or so after their
// acknowledgement), so following the events costs the ledger a map lookup
// per event at the rates it sustains, and a few reads otherwise, never a
// game's decode. out[i] and errs[i] are what Locate returns for ids[i].
func (l *Ledger) LocateEach(ctx context.Context, emitter string, ids []string) (out []Outcome, errs []error) {
	out, errs = make([]Outcome, len(ids)), make([]error, len(ids))
	v, err := l.acquire()
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return out, errs
	}
	c := lookupCache{r: v.snap, indexed: l.canonicalIndexed()}
	var missing []int
	for i, id := range ids {
		if index, ok := l.recent.get(emitter, id); ok && index < v.size {
			out[i] = Outcome{Result: Appended, ID: id, Index: index}
			continue
		}
		index, err := c.lookup(emitter, id)
		switch {
		case err == nil:
			out[i] = Outcome{Result: Appended, ID: id, Index: index}
		case errors.Is(err, ErrNotFound):
			missing = append(missing, i)
		default:
			errs[i] = err
		}
	}
	v.release()
	for _, i := range missing {
		r, err := l.RejectedByID(ctx, emitter, ids[i])
		if err != nil {
			errs[i] = err
			continue
		}
		out[i] = Outcome{Result: Rejected, RecordID: ids[i], Seq: r.Seq,
			Reject: &events.RejectError{Code: r.Code, Field: r.Field, Msg: r.Reason}}
	}
	return out, errs
}

// A lookupCache makes lookup's reads of one batch of lookups (LocateEach)
// once each: every game's owner and leaves, every entry bundle.
type lookupCache struct {
	r       pebble.Reader
	indexed bool // the dedup index may hold canonical ids (Ledger.canonicalIndexed)
	games   map[string]*gameLeaves
	bundles map[uint64][][]byte
}

// gameLeaves is what a lookup needs of a game: its committing emitter and
// the log index of each of its events (nil: no state in the log).
type gameLeaves struct {
	emitter string
	leaves  []uint64
}

// lookup is lookup(c.r, emitter, eventID, c.indexed, nil), with the
// game's leaves and the entry bundles read once per cache.
func (c *lookupCache) lookup(emitter, eventID string) (uint64, error) {
	what := func() string { return fmt.Sprintf("event %q of emitter %s", eventID, emitter) }
	game, seq, canon := events.ParseCanonicalID(eventID)
	if !canon || c.indexed {
		rec, ok, err := lookupID(c.r, emitter, eventID)
		if err != nil || ok {
			return rec.Index, err
		}
		if !canon {
			return 0, errNotFound(pebble.ErrNotFound, what())
		}
	}
	g, err := c.game(game)
	if err != nil {
		return 0, err
	}
	if g.emitter != emitter || seq >= uint64(len(g.leaves)) {
		return 0, errNotFound(pebble.ErrNotFound, what())
	}
	index := g.leaves[seq]
	leaf, ok, err := c.leaf(index)
	if err != nil {
		return 0, err
	}
	if !ok || !leafIDIs(leaf, eventID) {
		return 0, errNotFound(pebble.ErrNotFound, what())
	}
	return index, nil
}

// game returns the owner and leaves of game, from its head and the leaves
// of its history chunks (never its state).
func (c *lookupCache) game(game string) (*gameLeaves, error) {
	if g, ok := c.games[game]; ok {
		return g, nil
	}
	g, err := readGameLeaves(c.r, game)
	if err != nil {
		return nil, err
	}
	if c.games == nil {
		c.games = map[string]*gameLeaves{}
	}
	c.games[game] = g
	return g, nil
}

// readGameLeaves reads game's owner and leaves: its head's start
// (events.PeekHead) and its history chunks' leaves (events.HistoryLeaves).
// A game without a state has no leaves.
func readGameLeaves(r pebble.Reader, game string) (*gameLeaves, error) {
	place, owner, leaves, found, err := peekGameHead(r, game)
	if err != nil {
		return nil, err
	}
	if !found {
		return &gameLeaves{}, nil
	}
	lo, hi := place.historyBounds()
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, fmt.Errorf("reading the history of game %q: %w", game, err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if leaves, err = events.HistoryLeaves(it.Value(), leaves); err != nil {
			return nil, fmt.Errorf("history of game %q at leaf %x: %w: %w", game, it.Key()[len(lo):], ErrCorrupt, err)
		}
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("reading the history of game %q: %w", game, err)
	}
	return &gameLeaves{emitter: owner, leaves: leaves}, nil
}

// leaf returns leaf index, reading and parsing its entry bundle once per
// cache; ok is false if the log does not hold it.
func (c *lookupCache) leaf(index uint64) ([]byte, bool, error) {
	n := index / merkle.TileWidth
	es, ok := c.bundles[n]
	if !ok {
		d, err := readBundle(c.r, n) // its 'e' record and pieces (store format 6)
		switch {
		case errors.Is(err, pebble.ErrNotFound):
		case err != nil:
			return nil, false, fmt.Errorf("reading the entry bundle of leaf %d: %w", index, err)
		default:
			if es, err = merkle.ParseBundle(d); err != nil {
				return nil, false, fmt.Errorf("the entry bundle of leaf %d: %w: %w", index, ErrCorrupt, err)
			}
		}
		if c.bundles == nil {
			c.bundles = map[uint64][][]byte{}
		}
		c.bundles[n] = es
	}
	j := int(index % merkle.TileWidth)
	if j >= len(es) {
		return nil, false, nil
	}
	return es[j], true, nil
}
