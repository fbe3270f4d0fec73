package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/merkle"
)

// The entry bundles are stored in pieces (store format 6 for the growing
// bundle, 8 for all): each group writes only the entries it appended, as a
// piece under 'p' N S (S the index in the bundle of its first entry, in the
// bundle's own format), and a bundle is never written again, full or not.
// Bundle N is 'e' N, if any, followed by its pieces in order.
//
// Before format 6 each group rewrote the growing bundle whole: a bundle
// holding a few hundred events of the largest size (an emitter opening
// games with 60 KB of settings) made every group, every emitter's, write
// and sync megabytes (BenchmarkAppendAfterBigLeaves, docs/BENCHMARKS.md
// "Fair share"). A format-5 store's growing bundle is stored whole under
// 'e' N: its next entries go in pieces after it. Formats 6 and 7 wrote a
// bundle whole under 'e' N once full, in the batch of the group that filled
// it, and deleted its pieces: every entry of a bundle not filled by one
// group was written twice (at a human pace, a fifth of the WAL: docs/
// BENCHMARKS.md "the store's writes at a human pace, by key kind"). Their
// full bundles stay 'e' records; a format-8 store's are pieces, which
// readBundle and withEntry read the same way (BenchmarkReadBundle: a
// bundle of a few pieces reads about as fast as one record).

// pieceKey returns the key of the piece of entry bundle n whose first entry
// is the bundle's entry s.
func pieceKey(n uint64, s int) []byte {
	return append(binary.BigEndian.AppendUint64([]byte{prefixPiece}, n), byte(s))
}

// piecesEnd returns the first key after every piece of entry bundle n.
func piecesEnd(n uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{prefixPiece}, n+1)
}

// bundleEntries returns the number of entries of the (partial) bundle data,
// or an error wrapping ErrCorrupt if data is not a sequence of entries.
func bundleEntries(data []byte) (int, error) {
	n := 0
	for off := 0; off < len(data); n++ {
		if len(data)-off < 2 {
			return 0, fmt.Errorf("entry %d's length cut short at byte %d of %d: %w", n, off, len(data), ErrCorrupt)
		}
		l := int(binary.BigEndian.Uint16(data[off:]))
		off += 2
		if len(data)-off < l {
			return 0, fmt.Errorf("entry %d of %d bytes cut short at byte %d of %d: %w", n, l, off, len(data), ErrCorrupt)
		}
		off += l
	}
	return n, nil
}

// readBundle returns entry bundle n as stored: 'e' n followed by its
// pieces, as a new slice. It returns an error wrapping pebble.ErrNotFound
// if neither exists, and one wrapping ErrCorrupt if a piece does not start
// where the entries before it end. The pieces are read in two passes, one
// to check them and size the result, one to copy them: appending them to a
// growing slice cost more than the scan (BenchmarkReadBundle).
func readBundle(r pebble.Reader, n uint64) ([]byte, error) {
	whole, err := get(r, tileKey(merkle.Tile{Level: merkle.EntriesLevel, Index: n}))
	if err != nil && !errors.Is(err, pebble.ErrNotFound) {
		return nil, err
	}
	found := err == nil
	have, err := bundleEntries(whole)
	if err != nil {
		return nil, fmt.Errorf("entry bundle %d: %w", n, err)
	}
	if have == merkle.TileWidth {
		return whole, nil // full and whole (formats 6 and 7): it has no pieces
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: pieceKey(n, 0), UpperBound: piecesEnd(n)})
	if err != nil {
		return nil, err
	}
	size := len(whole)
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) != 10 {
			it.Close()
			return nil, fmt.Errorf("entry bundle %d: a piece's key %x: %w", n, k, ErrCorrupt)
		}
		if s := int(k[9]); s != have {
			it.Close()
			return nil, fmt.Errorf("entry bundle %d: a piece starts at entry %d, the entries before it end at %d: %w", n, s, have, ErrCorrupt)
		}
		v := it.Value()
		m, err := bundleEntries(v)
		if err != nil || m == 0 {
			it.Close()
			return nil, fmt.Errorf("entry bundle %d: the piece from entry %d: %w", n, have, errors.Join(ErrCorrupt, err))
		}
		size += len(v)
		have += m
		found = true
	}
	if err := it.Error(); err != nil {
		it.Close()
		return nil, err
	}
	if !found {
		it.Close()
		return nil, fmt.Errorf("entry bundle %d: %w", n, pebble.ErrNotFound)
	}
	out := append(make([]byte, 0, size), whole...)
	for it.First(); it.Valid(); it.Next() {
		out = append(out, it.Value()...)
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, err
	}
	if len(out) != size {
		return nil, fmt.Errorf("entry bundle %d: its pieces changed while read: %w", n, ErrCorrupt)
	}
	return out, nil
}

// getTile reads tile t as stored (a growing tile at least as wide as the
// durable tree has it): an entry bundle with readBundle, a hash tile with
// one lookup.
func getTile(r pebble.Reader, t merkle.Tile) ([]byte, error) {
	if t.Level == merkle.EntriesLevel {
		return readBundle(r, t.Index)
	}
	return get(r, tileKey(t))
}

// setTiles adds to batch the tiles an append to a tree of size from
// changed (merkle.Builder.AppendHashed's): a hash tile whole; an entry
// bundle, full or growing, only its entries from from on, as a piece.
func setTiles(batch *pebble.Batch, tiles []merkle.TileData, from uint64) error {
	for _, td := range tiles {
		t := td.Tile
		if t.Level != merkle.EntriesLevel {
			batch.Set(tileKey(t), td.Data, nil)
			continue
		}
		s := 0 // the entries stored already
		if first := t.Index * merkle.TileWidth; from > first {
			s = int(from - first)
		}
		if s >= t.Width {
			return fmt.Errorf("%s changed, but the tree of size %d has its %d entries", t.Path(), from, s)
		}
		off := 0
		for range s {
			if len(td.Data)-off < 2 {
				return fmt.Errorf("%s: entry bundle cut short: %w", t.Path(), ErrCorrupt)
			}
			off += 2 + int(binary.BigEndian.Uint16(td.Data[off:]))
		}
		if off > len(td.Data) {
			return fmt.Errorf("%s: entry bundle cut short: %w", t.Path(), ErrCorrupt)
		}
		batch.Set(pieceKey(t.Index, s), td.Data[off:], nil)
	}
	return nil
}

// withEntry calls f with leaf index, read in place from r's entry bundles
// (valid only during f): in a whole bundle (formats 6 and 7) one lookup,
// else the lookup and a forward scan of the keys of the pieces that start
// at or before it, then a seek to the last. (A backward seek to it, SeekLT,
// copies the piece whole: 57 KB for a bundle one group filled,
// BenchmarkReadBundle.) ok is false if r does not hold the leaf (yet).
func withEntry(r pebble.Reader, index uint64, f func(leaf []byte)) (ok bool, err error) {
	n, j := index/merkle.TileWidth, int(index%merkle.TileWidth)
	have := 0
	d, c, err := r.Get(tileKey(merkle.Tile{Level: merkle.EntriesLevel, Index: n}))
	switch {
	case err == nil:
		leaf, ok, err := bundleEntry(d, j)
		if ok {
			f(leaf)
		} else if err == nil {
			have, err = bundleEntries(d) // a format-5 store's growing bundle
		}
		c.Close()
		if ok || err != nil {
			return ok, err
		}
	case !errors.Is(err, pebble.ErrNotFound):
		return false, fmt.Errorf("reading the entry bundle of leaf %d: %w", index, err)
	}
	if j < have {
		return false, nil
	}
	// The piece that holds entry j is the last one that starts at or
	// before it.
	hi := piecesEnd(n)
	if j+1 < merkle.TileWidth {
		hi = pieceKey(n, j+1)
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: pieceKey(n, have), UpperBound: hi})
	if err != nil {
		return false, err
	}
	defer it.Close()
	s := -1
	for valid := it.First(); valid; valid = it.Next() {
		k := it.Key()
		if len(k) != 10 {
			return false, fmt.Errorf("entry bundle %d: a piece's key %x: %w", n, k, ErrCorrupt)
		}
		s = int(k[9])
	}
	if err := it.Error(); err != nil || s < 0 {
		return false, err
	}
	if !it.SeekGE(pieceKey(n, s)) {
		return false, errors.Join(it.Error(), fmt.Errorf("entry bundle %d: the piece from entry %d went away: %w", n, s, ErrCorrupt))
	}
	leaf, ok, err := bundleEntry(it.Value(), j-s)
	if err != nil {
		return false, fmt.Errorf("entry bundle %d, the piece from entry %d: %w", n, s, err)
	}
	if ok {
		f(leaf)
	}
	return ok, nil
}
