package merkle

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"sync"
)

// This file holds the test oracles: a tiny naive RFC 6962 reference (§2.1
// MTH, PATH and PROOF, written from the RFC's recursive definitions) and an
// in-memory TileReader fed by a Builder.

// refLeaf returns the leaf data used for leaf i in tests: varied lengths,
// including empty.
func refLeaf(i uint64) []byte {
	n := int(i*7%61) + int(i%3)
	b := make([]byte, 0, 8+n)
	b = binary.BigEndian.AppendUint64(b, i)
	for j := range n {
		b = append(b, byte(i)+byte(j))
	}
	if i%97 == 5 {
		return nil
	}
	return b
}

func refLeafHash(leaf []byte) Hash {
	return sha256.Sum256(append([]byte{0}, leaf...))
}

func refNode(l, r Hash) Hash {
	return sha256.Sum256(append(append([]byte{1}, l[:]...), r[:]...))
}

// A ref is the naive reference tree over a list of leaf hashes. mth is
// memoized on (lo, hi) so exhaustive tests stay fast.
type ref struct {
	leaves []Hash
	memo   map[[2]uint64]Hash
}

func newRef(leaves []Hash) *ref { return &ref{leaves: leaves, memo: map[[2]uint64]Hash{}} }

// split returns the largest power of two smaller than n (n > 1).
func split(n uint64) uint64 {
	k := uint64(1)
	for k<<1 < n {
		k <<= 1
	}
	return k
}

// mth is MTH(D[lo:hi]).
func (r *ref) mth(lo, hi uint64) Hash {
	switch n := hi - lo; n {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return r.leaves[lo]
	default:
		if h, ok := r.memo[[2]uint64{lo, hi}]; ok {
			return h
		}
		k := split(n)
		h := refNode(r.mth(lo, lo+k), r.mth(lo+k, hi))
		r.memo[[2]uint64{lo, hi}] = h
		return h
	}
}

// path is PATH(m, D[lo:hi]), the inclusion proof of leaf lo+m.
func (r *ref) path(m, lo, hi uint64) []Hash {
	n := hi - lo
	if n == 1 {
		return nil
	}
	k := split(n)
	if m < k {
		return append(r.path(m, lo, lo+k), r.mth(lo+k, hi))
	}
	return append(r.path(m-k, lo+k, hi), r.mth(lo, lo+k))
}

// proof is PROOF(m, D[0:n]).
func (r *ref) proof(m, n uint64) []Hash {
	if m == 0 || m == n {
		return nil
	}
	return r.subproof(m, 0, n, true)
}

func (r *ref) subproof(m, lo, hi uint64, b bool) []Hash {
	n := hi - lo
	if m == n {
		if b {
			return nil
		}
		return []Hash{r.mth(lo, hi)}
	}
	k := split(n)
	if m <= k {
		return append(r.subproof(m, lo, lo+k, b), r.mth(lo+k, hi))
	}
	return append(r.subproof(m-k, lo+k, hi, false), r.mth(lo, lo+k))
}

// refTile returns the tile (level, index) of the tree of size n, computed
// from scratch by its definition in tlog-tiles.
func (r *ref) tile(t Tile) []byte {
	var b []byte
	if t.Level == EntriesLevel {
		panic("ref.tile of entries")
	}
	span := uint64(1) << (TileHeight * t.Level)
	for i := range uint64(t.Width) {
		lo := (t.Index*TileWidth + i) * span
		h := r.mth(lo, lo+span)
		b = append(b, h[:]...)
	}
	return b
}

// A memReader is a TileReader over the tiles a Builder returned, keyed by
// level and index as a store keeps them: each key holds the widest version
// seen. It counts calls.
type memReader struct {
	mu    sync.Mutex
	tiles map[tileKey][]byte
	calls int
}

func newMemReader() *memReader { return &memReader{tiles: map[tileKey][]byte{}} }

func (m *memReader) store(tds []TileData) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, td := range tds {
		m.tiles[tileKey{td.Tile.Level, td.Tile.Index}] = td.Data
	}
}

func (m *memReader) clone() *memReader {
	m.mu.Lock()
	defer m.mu.Unlock()
	return &memReader{tiles: maps.Clone(m.tiles)}
}

func (m *memReader) ReadTiles(ctx context.Context, tiles []Tile) ([][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		d, ok := m.tiles[tileKey{t.Level, t.Index}]
		if !ok {
			return nil, fmt.Errorf("%s: %w", t.Path(), ErrNotFound)
		}
		out[i] = d
	}
	return out, nil
}
