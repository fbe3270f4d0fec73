package merkle

import (
	"container/list"
	"context"
	"fmt"
	"sync"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
)

// A TileReader reads the tiles and entry bundles of one log: a store, an
// HTTP client, a directory, or a map in a test.
//
// ReadTiles returns the contents of the given tiles, in the same order: for a
// hash tile its Width hashes (32·Width bytes), for an entry bundle its Width
// entries in bundle form. It may instead return a wider version of a tile (a
// store that keeps one growing tile per Level and Index returns what it has);
// the functions in this package use the prefix of the requested width and
// reject anything narrower. If a tile does not exist, ReadTiles returns an
// error wrapping ErrNotFound. The returned data is not modified by this
// package; it must not be modified by the reader afterwards either (a cached
// buffer is fine). ReadTiles must not retain or modify tiles.
//
// Functions in this package call ReadTiles once per operation, with every
// tile the operation needs, and never concurrently. A reader that the caller
// shares between goroutines (HTTP handlers, say) must be safe for concurrent
// use. Retries, timeouts and caching are the reader's business; it should
// return promptly when ctx is done.
type TileReader interface {
	ReadTiles(ctx context.Context, tiles []Tile) ([][]byte, error)
}

// readTiles reads tiles and trims each to exactly its width.
func readTiles(ctx context.Context, r TileReader, tiles []Tile) ([][]byte, error) {
	data, err := r.ReadTiles(ctx, tiles)
	if err != nil {
		return nil, fmt.Errorf("reading %d tiles: %w", len(tiles), err)
	}
	if len(data) != len(tiles) {
		return nil, fmt.Errorf("reading %d tiles: reader returned %d: %w", len(tiles), len(data), ErrMalformed)
	}
	out := make([][]byte, len(data))
	for i, t := range tiles {
		var err error
		if t.Level == EntriesLevel {
			out[i], err = BundlePrefix(data[i], t.Width)
		} else {
			out[i], err = TilePrefix(data[i], t.Width)
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", t.Path(), err)
		}
	}
	return out, nil
}

// tileKey identifies a hash tile independently of its width.
type tileKey struct {
	level int
	index uint64
}

// A tileTree is a hash tile with the interior nodes computed above its
// hashes: levels[r] holds the hashes of the complete subtrees of height r
// within the tile (levels[0] is the tile itself).
type tileTree struct {
	levels [TileHeight + 1][]Hash
	need   int // the highest r needed
}

// A NodeCache keeps the interior nodes computed from hash tiles, so that
// proofs in the same part of a tree share the hashing: an inclusion proof
// from tiles hashes the whole of each tile on the leaf's path (up to 255
// SHA-256 blocks a tile level), and the receipts of one checkpoint are
// mostly of recent leaves, on the same few tiles. It keeps the most
// recently used tiles, as many as NewNodeCache was given (each at most 511
// hashes, 16 KiB), keyed by level, index and width: a log's tile of a
// given width never changes, so a NodeCache serves one log only. Its
// methods are the package's functions of the same names; a nil *NodeCache
// caches nothing. It is safe for concurrent use.
type NodeCache struct {
	mu    sync.Mutex
	max   int
	trees map[cacheKey]*list.Element // of *cachedTree
	lru   list.List                  // most recently used first
}

type cacheKey struct {
	level int
	index uint64
	width int
}

type cachedTree struct {
	key  cacheKey
	tree *tileTree // every level computed; never modified once cached
}

// NewNodeCache returns a NodeCache of at most tiles tiles (at least 1).
func NewNodeCache(tiles int) *NodeCache {
	return &NodeCache{max: max(tiles, 1), trees: map[cacheKey]*list.Element{}}
}

func (c *NodeCache) get(k cacheKey) *tileTree {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.trees[k]
	if !ok {
		return nil
	}
	c.lru.MoveToFront(e)
	return e.Value.(*cachedTree).tree
}

func (c *NodeCache) put(k cacheKey, t *tileTree) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.trees[k]; ok {
		return
	}
	c.trees[k] = c.lru.PushFront(&cachedTree{key: k, tree: t})
	for c.lru.Len() > c.max {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.trees, old.Value.(*cachedTree).key)
	}
}

// Len returns the number of tiles c holds.
func (c *NodeCache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// InclusionProof is the package's InclusionProof, with c's nodes.
func (c *NodeCache) InclusionProof(ctx context.Context, r TileReader, index, size uint64) ([]Hash, error) {
	nodes, err := proof.Inclusion(index, size)
	if err != nil {
		return nil, fmt.Errorf("inclusion proof of leaf %d in tree size %d: %w", index, size, err)
	}
	p, err := c.proveNodes(ctx, r, size, nodes)
	if err != nil {
		return nil, fmt.Errorf("inclusion proof of leaf %d in tree size %d: %w", index, size, err)
	}
	return p, nil
}

// readNodes returns the hashes of the nodes ids in the tree of the given
// size, computed from the tiles r returns, or from c's. Every node must be
// complete in that tree (the nodes proof.Nodes lists are).
func (c *NodeCache) readNodes(ctx context.Context, r TileReader, size uint64, ids []compact.NodeID) ([]Hash, error) {
	trees := make(map[tileKey]*tileTree)
	var tiles []Tile
	for _, id := range ids {
		if id.Level >= 64 || id.Index >= size>>id.Level {
			return nil, fmt.Errorf("node %d at height %d is not complete in a tree of size %d", id.Index, id.Level, size)
		}
		level, rr := int(id.Level/TileHeight), int(id.Level%TileHeight)
		k := tileKey{level, id.Index << rr >> TileHeight}
		t, ok := trees[k]
		if !ok {
			w := tileWidthAt(k.level, k.index, size)
			if t = c.get(cacheKey{k.level, k.index, w}); t != nil {
				trees[k] = t // complete, and shared: not written to
				continue
			}
			t = new(tileTree)
			trees[k] = t
			tiles = append(tiles, Tile{Level: k.level, Index: k.index, Width: w})
		}
		if t.levels[0] == nil { // one of tiles, not a cached one
			t.need = max(t.need, rr)
		}
	}
	if len(tiles) == 0 {
		return nodesOf(trees, ids), nil
	}
	data, err := readTiles(ctx, r, tiles)
	if err != nil {
		return nil, err
	}
	for i, tile := range tiles {
		t := trees[tileKey{tile.Level, tile.Index}]
		d := data[i]
		lv := make([]Hash, len(d)/HashSize)
		for j := range lv {
			lv[j] = Hash(d[HashSize*j:])
		}
		t.levels[0] = lv
		if c != nil {
			t.need = TileHeight // cached whole: later proofs may need any level
		}
		for rr := 1; rr <= t.need && len(t.levels[rr-1]) >= 2; rr++ {
			below := t.levels[rr-1]
			up := make([]Hash, len(below)/2)
			for j := range up {
				up[j] = NodeHash(below[2*j], below[2*j+1])
			}
			t.levels[rr] = up
		}
		if c != nil {
			c.put(cacheKey{tile.Level, tile.Index, tile.Width}, t)
		}
	}
	return nodesOf(trees, ids), nil
}

// nodesOf returns the hashes of ids from their tiles' trees.
func nodesOf(trees map[tileKey]*tileTree, ids []compact.NodeID) []Hash {
	out := make([]Hash, len(ids))
	for i, id := range ids {
		level, rr := int(id.Level/TileHeight), int(id.Level%TileHeight)
		j := id.Index << rr // hash index at the tile's level
		t := trees[tileKey{level, j >> TileHeight}]
		out[i] = t.levels[rr][(j%TileWidth)>>rr]
	}
	return out
}

// readNodes is NodeCache.readNodes without a cache.
func readNodes(ctx context.Context, r TileReader, size uint64, ids []compact.NodeID) ([]Hash, error) {
	return (*NodeCache)(nil).readNodes(ctx, r, size, ids)
}

// RootHash returns the root hash of the tree of the given size, computed
// from the tiles r returns (at most one tile per level). The empty tree's
// root needs no tiles.
func RootHash(ctx context.Context, r TileReader, size uint64) (Hash, error) {
	if size == 0 {
		return emptyRoot, nil
	}
	ids := compact.RangeNodes(0, size, nil)
	hashes, err := readNodes(ctx, r, size, ids)
	if err != nil {
		return Hash{}, fmt.Errorf("root hash of tree size %d: %w", size, err)
	}
	return foldRange(hashes), nil
}

// InclusionProof returns the RFC 6962 inclusion proof of the leaf at index
// in the tree of the given size, from the leaf's sibling up to the root's
// child, computed from the tiles r returns. It requires index < size.
func InclusionProof(ctx context.Context, r TileReader, index, size uint64) ([]Hash, error) {
	return (*NodeCache)(nil).InclusionProof(ctx, r, index, size)
}

// A ConsistencyProver returns the RFC 6962 consistency proof from the tree
// of size oldSize to the tree of size newSize of a log, 0 < oldSize <
// newSize. The ledger is one (its Witness is handed it), and TileProver
// makes one of any TileReader; package witness asks it for the proofs its
// witnesses need.
type ConsistencyProver interface {
	ConsistencyProof(ctx context.Context, oldSize, newSize uint64) ([]Hash, error)
}

// TileProver returns the ConsistencyProver that computes proofs from r's
// tiles (ConsistencyProof). r must have the tiles of every size asked for.
func TileProver(r TileReader) ConsistencyProver { return tileProver{r} }

type tileProver struct{ r TileReader }

func (p tileProver) ConsistencyProof(ctx context.Context, oldSize, newSize uint64) ([]Hash, error) {
	return ConsistencyProof(ctx, p.r, oldSize, newSize)
}

// ConsistencyProof returns the RFC 6962 consistency proof from the tree of
// size oldSize to the tree of size newSize, computed from the tiles of the
// newer tree that r returns. It requires oldSize <= newSize; the proof is
// empty if oldSize is 0 or equal to newSize.
func ConsistencyProof(ctx context.Context, r TileReader, oldSize, newSize uint64) ([]Hash, error) {
	nodes, err := proof.Consistency(oldSize, newSize)
	if err != nil {
		return nil, fmt.Errorf("consistency proof from tree size %d to %d: %w", oldSize, newSize, err)
	}
	p, err := proveNodes(ctx, r, newSize, nodes)
	if err != nil {
		return nil, fmt.Errorf("consistency proof from tree size %d to %d: %w", oldSize, newSize, err)
	}
	return p, nil
}

// proveNodes reads the hashes of nodes and rehashes its ephemeral node.
func proveNodes(ctx context.Context, r TileReader, size uint64, nodes proof.Nodes) ([]Hash, error) {
	return (*NodeCache)(nil).proveNodes(ctx, r, size, nodes)
}

func (c *NodeCache) proveNodes(ctx context.Context, r TileReader, size uint64, nodes proof.Nodes) ([]Hash, error) {
	hashes, err := c.readNodes(ctx, r, size, nodes.IDs)
	if err != nil {
		return nil, err
	}
	return rehash(nodes, hashes)
}

// rehash folds the ephemeral node's hashes as nodes.Rehash does, on Hash
// values.
func rehash(nodes proof.Nodes, hashes []Hash) ([]Hash, error) {
	s := make([][]byte, len(hashes))
	for i := range hashes {
		s[i] = hashes[i][:]
	}
	s, err := nodes.Rehash(s, nodeHashSlices)
	if err != nil {
		return nil, err
	}
	out := make([]Hash, len(s))
	for i := range s {
		out[i] = Hash(s[i])
	}
	return out, nil
}

// ReadLeafHashes returns the leaf hashes of the leaves [start, end) of the
// tree of the given size, from its level-0 tiles. It requires
// start <= end <= size.
func ReadLeafHashes(ctx context.Context, r TileReader, start, end, size uint64) ([]Hash, error) {
	tiles, err := rangeTiles(0, start, end, size)
	if err != nil {
		return nil, fmt.Errorf("leaf hashes [%d, %d) of tree size %d: %w", start, end, size, err)
	}
	if len(tiles) == 0 {
		return nil, nil
	}
	data, err := readTiles(ctx, r, tiles)
	if err != nil {
		return nil, fmt.Errorf("leaf hashes [%d, %d) of tree size %d: %w", start, end, size, err)
	}
	out := make([]Hash, 0, end-start)
	for i, t := range tiles {
		for j := range t.Width {
			if idx := t.Index*TileWidth + uint64(j); idx >= start && idx < end {
				out = append(out, Hash(data[i][HashSize*j:]))
			}
		}
	}
	return out, nil
}

// ReadEntries returns the entries [start, end) of the tree of the given
// size, from its entry bundles, as subslices of what r returns. It requires
// start <= end <= size. The entries are as the reader gave them: they are
// authenticated only once checked against a root (CheckInclusion of their
// LeafHash, or by rebuilding the tree with a Builder).
func ReadEntries(ctx context.Context, r TileReader, start, end, size uint64) ([][]byte, error) {
	tiles, err := rangeTiles(EntriesLevel, start, end, size)
	if err != nil {
		return nil, fmt.Errorf("entries [%d, %d) of tree size %d: %w", start, end, size, err)
	}
	if len(tiles) == 0 {
		return nil, nil
	}
	data, err := readTiles(ctx, r, tiles)
	if err != nil {
		return nil, fmt.Errorf("entries [%d, %d) of tree size %d: %w", start, end, size, err)
	}
	out := make([][]byte, 0, end-start)
	for i, t := range tiles {
		entries, err := ParseBundle(data[i])
		if err != nil {
			return nil, fmt.Errorf("entries [%d, %d) of tree size %d: %s: %w", start, end, size, t.Path(), err)
		}
		for j, e := range entries {
			if idx := t.Index*TileWidth + uint64(j); idx >= start && idx < end {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// rangeTiles returns the level-0 tiles (or entry bundles) holding the leaves
// [start, end) of a tree of the given size.
func rangeTiles(level int, start, end, size uint64) ([]Tile, error) {
	if start > end || end > size {
		return nil, fmt.Errorf("range out of bounds")
	}
	if start == end {
		return nil, nil
	}
	var tiles []Tile
	for n := start / TileWidth; n <= (end-1)/TileWidth; n++ {
		tiles = append(tiles, Tile{Level: level, Index: n, Width: tileWidthAt(level, n, size)})
	}
	return tiles, nil
}
