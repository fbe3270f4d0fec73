package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/merkle"
)

// The growing entry bundle is stored in pieces (store format 6): each group
// writes only the entries it appended, as a piece under 'p' N S (S the
// index in the bundle of its first entry, in the bundle's own format), and
// the group that fills the bundle writes it whole under 'e' N and deletes
// its pieces, in the same batch. Bundle N is 'e' N, if any, followed by its
// pieces in order. Before format 6 each group rewrote the growing bundle
// whole: a bundle holding a few hundred events of the largest size (an
// emitter opening games with 60 KB of settings) made every group, every
// emitter's, write and sync megabytes (BenchmarkAppendAfterBigLeaves,
// docs/BENCHMARKS.md "Fair share"). A format-5 store's growing bundle is
// stored whole under 'e' N: its next entries go in pieces after it.

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
// where the entries before it end.
func readBundle(r pebble.Reader, n uint64) ([]byte, error) {
	out, err := get(r, tileKey(merkle.Tile{Level: merkle.EntriesLevel, Index: n}))
	if err != nil && !errors.Is(err, pebble.ErrNotFound) {
		return nil, err
	}
	found := err == nil
	have, err := bundleEntries(out)
	if err != nil {
		return nil, fmt.Errorf("entry bundle %d: %w", n, err)
	}
	if have == merkle.TileWidth {
		return out, nil // full: it has no pieces
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: pieceKey(n, 0), UpperBound: piecesEnd(n)})
	if err != nil {
		return nil, err
	}
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
		out = append(out, v...)
		have += m
		found = true
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("entry bundle %d: %w", n, pebble.ErrNotFound)
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
// changed (merkle.Builder.AppendHashed's): a hash tile whole; a full entry
// bundle whole, its pieces deleted; the growing entry bundle only its
// entries from from on, as a piece.
func setTiles(batch *pebble.Batch, tiles []merkle.TileData, from uint64) error {
	for _, td := range tiles {
		t := td.Tile
		switch {
		case t.Level != merkle.EntriesLevel:
			batch.Set(tileKey(t), td.Data, nil)
		case t.Width == merkle.TileWidth:
			batch.Set(tileKey(t), td.Data, nil)
			if err := batch.DeleteRange(pieceKey(t.Index, 0), piecesEnd(t.Index), nil); err != nil {
				return err
			}
		default:
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
	}
	return nil
}

// withEntry calls f with leaf index, read in place from r's entry bundles
// (valid only during f): in a full bundle one lookup, in the growing one
// the lookup and a seek to the piece that holds it. ok is false if r does
// not hold the leaf (yet).
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
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: pieceKey(n, have), UpperBound: piecesEnd(n)})
	if err != nil {
		return false, err
	}
	defer it.Close()
	// The piece that holds entry j is the last one that starts at or
	// before it.
	seek := piecesEnd(n)
	if j+1 < merkle.TileWidth {
		seek = pieceKey(n, j+1)
	}
	if !it.SeekLT(seek) {
		return false, it.Error()
	}
	k := it.Key()
	if len(k) != 10 {
		return false, fmt.Errorf("entry bundle %d: a piece's key %x: %w", n, k, ErrCorrupt)
	}
	leaf, ok, err := bundleEntry(it.Value(), j-int(k[9]))
	if err != nil {
		return false, fmt.Errorf("entry bundle %d, the piece from entry %d: %w", n, k[9], err)
	}
	if ok {
		f(leaf)
	}
	return ok, nil
}
