package merkle

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
)

// exhaustiveSize is the largest tree size for which every root, inclusion
// proof and consistency proof is checked. ZARLOG_SLOW=1 raises it.
func exhaustiveSize() uint64 {
	if os.Getenv("ZARLOG_SLOW") != "" {
		return 700
	}
	return 300
}

// batchSizes is the cycle of batch sizes the builder tests append with.
var batchSizes = []int{1, 2, 3, 1, 5, 8, 13, 1, 255, 256, 257, 7, 1, 1, 30, 512, 100}

// build appends leaves 0…n−1 in batches cycling through sizes, checking after
// every batch that the tiles returned are exactly NewTiles(old, new) with the
// contents computed from scratch, that the root matches the reference and a
// compact.Range, and that a Builder reopened from the marshaled state and
// the stored tiles agrees. It returns the store.
func build(t *testing.T, n uint64, sizes []int) (*memReader, *ref) {
	t.Helper()
	ctx := context.Background()
	leaves := make([][]byte, n)
	hashes := make([]Hash, n)
	for i := range n {
		leaves[i] = refLeaf(i)
		hashes[i] = refLeafHash(leaves[i])
	}
	rf := newRef(hashes)
	store := newMemReader()
	b, err := NewBuilder(ctx, nil, State{})
	if err != nil {
		t.Fatal(err)
	}
	cr := (&compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}).NewEmptyRange(0)
	for k, size := 0, uint64(0); size < n; k++ {
		old := size
		size = min(n, size+uint64(sizes[k%len(sizes)]))
		// Every other batch comes with its leaf hashes (AppendHashed), as
		// the ledger appends: the tiles must be the same.
		var tds []TileData
		var err error
		if k%2 == 1 {
			tds, err = b.AppendHashed(leaves[old:size], hashes[old:size])
		} else {
			tds, err = b.Append(leaves[old:size])
		}
		if err != nil {
			t.Fatalf("append [%d, %d): %v", old, size, err)
		}
		checkTiles(t, rf, leaves, old, size, tds)
		store.store(tds)
		for i := old; i < size; i++ {
			if err := cr.Append(hashes[i][:], nil); err != nil {
				t.Fatal(err)
			}
		}
		want := rf.mth(0, size)
		crRoot, err := cr.GetRootHash(nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.Root(); got != want || !bytes.Equal(crRoot, want[:]) {
			t.Fatalf("size %d: builder root %x, compact.Range %x, reference %x", size, got, crRoot, want)
		}
		st := b.State()
		if st.Size != size || !slices.EqualFunc(slicesOf(st.Range), cr.Hashes(), bytes.Equal) {
			t.Fatalf("size %d: state range differs from compact.Range", size)
		}
		enc, err := st.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var st2 State
		if err := st2.UnmarshalBinary(enc); err != nil {
			t.Fatalf("size %d: unmarshal state: %v", size, err)
		}
		b2, err := NewBuilder(ctx, store.clone(), st2)
		if err != nil {
			t.Fatalf("size %d: reopen: %v", size, err)
		}
		if b2.Root() != want || b2.Size() != size {
			t.Fatalf("size %d: reopened builder has root %x size %d", size, b2.Root(), b2.Size())
		}
		if k%2 == 1 {
			b = b2 // continue with the reopened builder half of the time
		}
	}
	return store, rf
}

// checkTiles checks the tiles an Append from old to size returned.
func checkTiles(t *testing.T, rf *ref, leaves [][]byte, old, size uint64, tds []TileData) {
	t.Helper()
	var got []Tile
	for _, td := range tds {
		got = append(got, td.Tile)
		var want []byte
		if td.Tile.Level == EntriesLevel {
			lo := td.Tile.Index * TileWidth
			var err error
			want, err = FormatBundle(leaves[lo : lo+uint64(td.Tile.Width)])
			if err != nil {
				t.Fatal(err)
			}
		} else {
			want = rf.tile(td.Tile)
		}
		if !bytes.Equal(td.Data, want) {
			t.Fatalf("append [%d, %d): %s differs from the tile computed from scratch", old, size, td.Tile.Path())
		}
	}
	if want := NewTiles(old, size); !slices.Equal(got, want) {
		t.Fatalf("append [%d, %d): returned tiles %v, want %v", old, size, got, want)
	}
}

// A prefixReader returns exactly the width asked for, as a static file
// server of partial tiles does.
type prefixReader struct{ r TileReader }

func (p prefixReader) ReadTiles(ctx context.Context, tiles []Tile) ([][]byte, error) {
	data, err := p.r.ReadTiles(ctx, tiles)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(data))
	for i, t := range tiles {
		if t.Level == EntriesLevel {
			out[i], err = BundlePrefix(data[i], t.Width)
		} else {
			out[i], err = TilePrefix(data[i], t.Width)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// TestExhaustive checks, for every tree size up to exhaustiveSize, the root
// from tiles and every inclusion and consistency proof from tiles against the
// naive reference, and that they verify.
func TestExhaustive(t *testing.T) {
	ctx := context.Background()
	n := exhaustiveSize()
	store, rf := build(t, n, batchSizes)
	for size := uint64(0); size <= n; size++ {
		var r TileReader = store
		if size%3 == 1 {
			r = prefixReader{store}
		}
		root, err := RootHash(ctx, r, size)
		if err != nil {
			t.Fatalf("RootHash(%d): %v", size, err)
		}
		if want := rf.mth(0, size); root != want {
			t.Fatalf("RootHash(%d) = %x, want %x", size, root, want)
		}
		for m := range size {
			p, err := InclusionProof(ctx, r, m, size)
			if err != nil {
				t.Fatalf("InclusionProof(%d, %d): %v", m, size, err)
			}
			if want := rf.path(m, 0, size); !slices.Equal(p, want) {
				t.Fatalf("InclusionProof(%d, %d) differs from the reference", m, size)
			}
			if err := CheckInclusion(rf.leaves[m], m, size, p, root); err != nil {
				t.Fatalf("CheckInclusion(%d, %d): %v", m, size, err)
			}
		}
		for m := uint64(0); m <= size; m++ {
			p, err := ConsistencyProof(ctx, r, m, size)
			if err != nil {
				t.Fatalf("ConsistencyProof(%d, %d): %v", m, size, err)
			}
			if want := rf.proof(m, size); !slices.Equal(p, want) {
				t.Fatalf("ConsistencyProof(%d, %d) differs from the reference", m, size)
			}
			if err := CheckConsistency(m, size, rf.mth(0, m), root, p); err != nil {
				t.Fatalf("CheckConsistency(%d, %d): %v", m, size, err)
			}
		}
	}
}

// TestBuilderBatchesAgree checks that batch size does not change any tile:
// the stores built one leaf at a time and in mixed batches are identical.
func TestBuilderBatchesAgree(t *testing.T) {
	n := uint64(3*TileWidth + 17)
	a, _ := build(t, n, []int{1})
	b, _ := build(t, n, []int{1000})
	c, _ := build(t, n, batchSizes)
	for _, other := range []*memReader{b, c} {
		if len(other.tiles) != len(a.tiles) {
			t.Fatalf("stores have %d and %d tiles", len(a.tiles), len(other.tiles))
		}
		for k, v := range a.tiles {
			if !bytes.Equal(other.tiles[k], v) {
				t.Fatalf("tile %v differs between batch sizes", k)
			}
		}
	}
}

func TestReadLeafHashesAndEntries(t *testing.T) {
	ctx := context.Background()
	n := uint64(2*TileWidth + 40)
	store, rf := build(t, n, batchSizes)
	for _, c := range [][3]uint64{{0, 0, n}, {0, 1, 1}, {0, n, n}, {3, 300, 301}, {255, 257, 260}, {100, 100, 200}, {256, 512, 512}} {
		start, end, size := c[0], c[1], c[2]
		hs, err := ReadLeafHashes(ctx, store, start, end, size)
		if err != nil {
			t.Fatalf("ReadLeafHashes(%d, %d, %d): %v", start, end, size, err)
		}
		es, err := ReadEntries(ctx, prefixReader{store}, start, end, size)
		if err != nil {
			t.Fatalf("ReadEntries(%d, %d, %d): %v", start, end, size, err)
		}
		if uint64(len(hs)) != end-start || uint64(len(es)) != end-start {
			t.Fatalf("[%d, %d): got %d hashes, %d entries", start, end, len(hs), len(es))
		}
		for i := range hs {
			idx := start + uint64(i)
			if hs[i] != rf.leaves[idx] || !bytes.Equal(es[i], refLeaf(idx)) {
				t.Fatalf("leaf %d differs", idx)
			}
		}
	}
	if _, err := ReadEntries(ctx, store, 0, n+TileWidth, n+TileWidth); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ReadEntries past the stored tree: %v, want ErrNotFound", err)
	}
	if _, err := ReadLeafHashes(ctx, store, 5, 4, n); err == nil {
		t.Fatal("ReadLeafHashes with start > end succeeded")
	}
}

func TestProofArgs(t *testing.T) {
	ctx := context.Background()
	store, _ := build(t, 10, []int{10})
	if _, err := InclusionProof(ctx, store, 10, 10); err == nil {
		t.Error("InclusionProof(10, 10) succeeded")
	}
	if _, err := ConsistencyProof(ctx, store, 11, 10); err == nil {
		t.Error("ConsistencyProof(11, 10) succeeded")
	}
	if _, err := RootHash(ctx, store, 300); !errors.Is(err, ErrNotFound) {
		t.Errorf("RootHash(300) of a tree of 10: %v, want ErrNotFound", err)
	}
	if _, err := RootHash(ctx, store, 11); !errors.Is(err, ErrMalformed) {
		t.Errorf("RootHash(11) of a tree of 10: %v, want ErrMalformed (the stored tile is too narrow)", err)
	}
}

func TestStateBinary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []uint64{0, 1, 2, 3, 255, 256, 1<<64 - 1, 1 << 63} {
		s := State{Size: size, Range: make([]Hash, popcount(size))}
		for i := range s.Range {
			for j := range s.Range[i] {
				s.Range[i][j] = byte(rng.Uint32())
			}
		}
		enc, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got State
		if err := got.UnmarshalBinary(enc); err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if got.Size != s.Size || !slices.Equal(got.Range, s.Range) {
			t.Fatalf("size %d: round trip differs", size)
		}
		for _, bad := range [][]byte{enc[:len(enc)-1], append(slices.Clone(enc), 0), append([]byte{2}, enc[1:]...)} {
			if err := got.UnmarshalBinary(bad); !errors.Is(err, ErrMalformed) {
				t.Fatalf("size %d: bad encoding accepted: %v", size, err)
			}
		}
	}
	if _, err := (State{Size: 3}).MarshalBinary(); err == nil {
		t.Fatal("State of size 3 without range marshaled")
	}
}

func popcount(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// TestBuilderTampered checks that NewBuilder refuses stored tiles that do
// not match the state: a changed entry, a changed hash, a wrong state.
func TestBuilderTampered(t *testing.T) {
	ctx := context.Background()
	n := uint64(TileWidth + 5)
	store, _ := build(t, n, []int{int(n)})
	var st State
	{
		b, _ := NewBuilder(ctx, nil, State{})
		leaves := make([][]byte, n)
		for i := range n {
			leaves[i] = refLeaf(i)
		}
		if _, err := b.Append(leaves); err != nil {
			t.Fatal(err)
		}
		st = b.State()
	}
	if _, err := NewBuilder(ctx, store.clone(), st); err != nil {
		t.Fatalf("untampered store: %v", err)
	}
	flip := func(k tileKey, at int) *memReader {
		s := store.clone()
		d := slices.Clone(s.tiles[k])
		d[at] ^= 1
		s.tiles[k] = d
		return s
	}
	cases := map[string]struct {
		r  TileReader
		st State
		is error
	}{
		"flipped-entry":    {flip(tileKey{EntriesLevel, 1}, 3), st, ErrStateMismatch},
		"flipped-hash":     {flip(tileKey{0, 1}, 40), st, ErrStateMismatch},
		"flipped-level1":   {flip(tileKey{1, 0}, 0), st, ErrStateMismatch},
		"wrong-state-hash": {store, State{Size: st.Size, Range: []Hash{st.Range[0], {1}, st.Range[2]}}, ErrStateMismatch},
		"wrong-state-size": {store, State{Size: st.Size - 2, Range: st.Range}, ErrStateMismatch},
		"missing-tiles":    {newMemReader(), st, ErrNotFound},
		"range-length":     {store, State{Size: st.Size, Range: st.Range[:1]}, ErrMalformed},
		"truncated-bundle": {func() *memReader {
			s := store.clone()
			k := tileKey{EntriesLevel, 1}
			s.tiles[k] = s.tiles[k][:len(s.tiles[k])-1]
			return s
		}(), st, ErrMalformed},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := NewBuilder(ctx, c.r, c.st); !errors.Is(err, c.is) {
				t.Fatalf("NewBuilder: %v, want %v", err, c.is)
			}
		})
	}
}

// TestAppendHashedLengths: AppendHashed refuses a hash count other than the
// leaf count, and appends nothing.
func TestAppendHashedLengths(t *testing.T) {
	b, err := NewBuilder(context.Background(), nil, State{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AppendHashed([][]byte{refLeaf(0), refLeaf(1)}, []Hash{LeafHash(refLeaf(0))}); err == nil || b.Size() != 0 {
		t.Errorf("2 leaves, 1 hash: %v, size %d", err, b.Size())
	}
}

func TestBuilderLeafTooLarge(t *testing.T) {
	b, err := NewBuilder(context.Background(), nil, State{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append([][]byte{{1}, make([]byte, MaxEntrySize+1)}); !errors.Is(err, ErrLeafTooLarge) {
		t.Fatalf("Append of an oversize leaf: %v", err)
	}
	if b.Size() != 0 || b.Root() != EmptyRoot() {
		t.Fatal("failed Append changed the tree")
	}
	tds, err := b.Append([][]byte{make([]byte, MaxEntrySize)})
	if err != nil || len(tds) != 2 {
		t.Fatalf("Append of a maximal leaf: %d tiles, %v", len(tds), err)
	}
}
