package merkle

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"
)

// The tests in this file use golang.org/x/mod/sumdb/tlog, an independent
// implementation of the same tree and of tiles of the same hashes (its tile
// paths carry the height and call entry bundles "data"), as an oracle for
// trees with three tile levels, too large to check exhaustively.

// tlogStore is an in-memory tlog hash storage.
type tlogStore []tlog.Hash

func (s tlogStore) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		out[i] = s[x]
	}
	return out, nil
}

// largeSize has a partial tile at each of levels 0, 1 and 2.
const largeSize = TileWidth*TileWidth + 3*TileWidth + 17

func buildLarge(t *testing.T) (*memReader, tlogStore) {
	t.Helper()
	ctx := context.Background()
	b, err := NewBuilder(ctx, nil, State{})
	if err != nil {
		t.Fatal(err)
	}
	store := newMemReader()
	var ts tlogStore
	batch := make([][]byte, 0, 1000)
	for i := range uint64(largeSize) {
		leaf := refLeaf(i)
		hs, err := tlog.StoredHashes(int64(i), leaf, ts)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, hs...)
		batch = append(batch, leaf)
		if len(batch) == cap(batch) || i == largeSize-1 {
			tds, err := b.Append(batch)
			if err != nil {
				t.Fatal(err)
			}
			store.store(tds)
			batch = batch[:0]
		}
	}
	th, err := tlog.TreeHash(largeSize, ts)
	if err != nil {
		t.Fatal(err)
	}
	if b.Root() != Hash(th) {
		t.Fatalf("builder root %x, tlog %x", b.Root(), th)
	}
	return store, ts
}

func TestLargeTreeAgainstTlog(t *testing.T) {
	ctx := context.Background()
	store, ts := buildLarge(t)

	// Every stored tile, at the final size, equals tlog's.
	for k, data := range store.tiles {
		if k.level == EntriesLevel {
			continue
		}
		tile, ok := TileAt(k.level, k.index, largeSize)
		if !ok {
			t.Fatalf("stored tile %v is not in the tree", k)
		}
		want, err := tlog.ReadTileData(tlog.Tile{H: TileHeight, L: k.level, N: int64(k.index), W: tile.Width}, ts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(data, want) {
			t.Fatalf("%s differs from tlog", tile.Path())
		}
	}
	if got, want := len(store.tiles), 2*(largeSize/TileWidth+1)+(largeSize>>16+1)+1; got != want {
		t.Fatalf("store has %d tiles, want %d", got, want)
	}

	rng := rand.New(rand.NewPCG(3, 4))
	sizes := []uint64{1, 255, 256, 257, 65535, 65536, 65537, largeSize - 1, largeSize}
	for range 40 {
		sizes = append(sizes, 1+rng.Uint64N(largeSize))
	}
	for _, size := range sizes {
		root, err := RootHash(ctx, store, size)
		if err != nil {
			t.Fatal(err)
		}
		th, err := tlog.TreeHash(int64(size), ts)
		if err != nil {
			t.Fatal(err)
		}
		if root != Hash(th) {
			t.Fatalf("RootHash(%d) differs from tlog", size)
		}
		for _, idx := range []uint64{0, size - 1, rng.Uint64N(size), rng.Uint64N(size)} {
			p, err := InclusionProof(ctx, store, idx, size)
			if err != nil {
				t.Fatal(err)
			}
			want, err := tlog.ProveRecord(int64(size), int64(idx), ts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p, []Hash(asHashes(want))) {
				t.Fatalf("InclusionProof(%d, %d) differs from tlog", idx, size)
			}
			if err := CheckInclusion(Hash(ts[tlog.StoredHashIndex(0, int64(idx))]), idx, size, p, root); err != nil {
				t.Fatal(err)
			}
		}
		for _, old := range []uint64{1, size, rng.Uint64N(size + 1), rng.Uint64N(size + 1)} {
			old = max(1, min(old, size))
			p, err := ConsistencyProof(ctx, store, old, size)
			if err != nil {
				t.Fatal(err)
			}
			want, err := tlog.ProveTree(int64(size), int64(old), ts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p, []Hash(asHashes(want))) {
				t.Fatalf("ConsistencyProof(%d, %d) differs from tlog", old, size)
			}
			oldRoot, err := RootHash(ctx, prefixReader{store}, old)
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckConsistency(old, size, oldRoot, root, p); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func asHashes(hs []tlog.Hash) []Hash {
	out := make([]Hash, len(hs))
	for i := range hs {
		out[i] = Hash(hs[i])
	}
	return out
}

// TestTilePathAgainstTlog checks Path and ParseTilePath against tlog's
// encoding of the same tiles.
func TestTilePathAgainstTlog(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	indexes := []uint64{0, 1, 999, 1000, 1001, 999999, 1000000, 1234067, 1<<63 - 1}
	for range 200 {
		indexes = append(indexes, rng.Uint64N(1<<63)>>rng.UintN(63))
	}
	for _, n := range indexes {
		for _, level := range []int{EntriesLevel, 0, 1, 7, 63} {
			for _, w := range []int{1, 17, 255, 256} {
				tile := Tile{Level: level, Index: n, Width: w}
				want := tlog.Tile{H: TileHeight, L: level, N: int64(n), W: w}.Path()
				want = strings.Replace(want, "tile/8/data/", "tile/entries/", 1)
				want = strings.Replace(want, "tile/8/", "tile/", 1)
				if got := tile.Path(); got != want {
					t.Fatalf("%+v: Path %q, tlog %q", tile, got, want)
				}
				back, err := ParseTilePath(want)
				if err != nil || back != tile {
					t.Fatalf("ParseTilePath(%q) = %+v, %v", want, back, err)
				}
			}
		}
	}
}
