package merkle

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"math/bits"
	"slices"
)

// maxLevels is the number of hash-tile levels a tree of up to 2^64−1 leaves
// can have: level 7 holds subtrees of 2^56 leaves, level 8 would need 2^64.
const maxLevels = 8

// A State is what a writer persists of its tree between appends: the size and
// the compact range of [0, Size), the roots of the perfect subtrees that
// cover the leaves, left to right (largest first). It has exactly
// popcount(Size) hashes, at most 64. Together with the stored partial tiles it
// is all a Builder needs to continue.
//
// The binary form (MarshalBinary) is the byte 0x01 (the format version), Size
// as a big-endian uint64, then the hashes: 9 + 32·popcount(Size) bytes.
type State struct {
	Size  uint64
	Range []Hash
}

// stateVersion is the first byte of a marshaled State.
const stateVersion = 1

// Root returns the root hash of the tree s describes, or an error if s.Range
// does not have popcount(s.Size) hashes.
func (s State) Root() (Hash, error) {
	if err := s.check(); err != nil {
		return Hash{}, err
	}
	return foldRange(s.Range), nil
}

func (s State) check() error {
	if want := bits.OnesCount64(s.Size); len(s.Range) != want {
		return fmt.Errorf("tree state of size %d has %d range hashes, want %d: %w", s.Size, len(s.Range), want, ErrMalformed)
	}
	return nil
}

// foldRange hashes a compact range of [0, size) into the tree's root.
func foldRange(r []Hash) Hash {
	if len(r) == 0 {
		return emptyRoot
	}
	root := r[len(r)-1]
	for i := len(r) - 2; i >= 0; i-- {
		root = NodeHash(r[i], root)
	}
	return root
}

// AppendBinary appends the binary form of s to b.
func (s State) AppendBinary(b []byte) ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	b = append(b, stateVersion)
	b = binary.BigEndian.AppendUint64(b, s.Size)
	for _, h := range s.Range {
		b = append(b, h[:]...)
	}
	return b, nil
}

// MarshalBinary returns the binary form of s.
func (s State) MarshalBinary() ([]byte, error) {
	return s.AppendBinary(make([]byte, 0, 9+HashSize*len(s.Range)))
}

// UnmarshalBinary sets s from its binary form. Anything but exactly the
// bytes MarshalBinary returns is an error wrapping ErrMalformed, and leaves s
// unchanged.
func (s *State) UnmarshalBinary(data []byte) error {
	if len(data) < 9 || data[0] != stateVersion {
		return fmt.Errorf("tree state of %d bytes has no version %d header: %w", len(data), stateVersion, ErrMalformed)
	}
	size := binary.BigEndian.Uint64(data[1:])
	n := bits.OnesCount64(size)
	if len(data) != 9+HashSize*n {
		return fmt.Errorf("tree state of size %d is %d bytes, want %d: %w", size, len(data), 9+HashSize*n, ErrMalformed)
	}
	r := make([]Hash, n)
	for i := range r {
		copy(r[i][:], data[9+HashSize*i:])
	}
	s.Size, s.Range = size, r
	return nil
}

// A TileData is a tile or entry bundle with its contents: Width hashes of a
// hash tile (32·Width bytes), or the bundle of Width entries.
type TileData struct {
	Tile Tile
	Data []byte
}

// A Builder appends leaves to a tree and produces the tiles and entry
// bundles a writer stores. It keeps the compact range and the partial tile at
// each level (and the partial entry bundle) in memory, so an append hashes
// each leaf once and each new interior node once, and never reads storage.
//
// The writer's protocol (the ledger's):
//
//  1. Open: NewBuilder(ctx, r, state) with the State last persisted (the zero
//     State for a new log) and a TileReader over the stored tiles; it reads
//     the partial tiles once and checks them against the state.
//  2. Append a batch of leaves. It returns each changed tile with its whole
//     current contents.
//  3. In one atomic write (a Pebble batch) store the leaves' own records,
//     each returned tile under a key made of its Level and Index only (not
//     its Width), and State() marshaled. A partial tile's key is overwritten
//     as it grows and finally by the full tile.
//  4. If that write fails, discard the Builder and open a new one from the
//     persisted state: the Builder has moved on and cannot be rolled back.
//
// Storing one growing tile per (Level, Index) serves every width: a tile's
// hashes and an entry bundle's entries never change once written (a hash at
// level L is the root of a complete subtree of 256^L leaves; the tree only
// grows to the right), so the partial tile of width W that a client asks for
// ("….p/W") is exactly the first W hashes or entries of the stored, possibly
// wider or full, tile; see TilePrefix and BundlePrefix. A client asks for
// width W only after seeing a checkpoint of a size that has it, and the
// stored tile is at least that wide because the tiles are written before the
// checkpoint is signed.
//
// Memory: one partial hash tile per level (at most 8 KiB each) and the
// partial entry bundle (up to 255 entries). Rewriting partial tiles costs
// write amplification: about 32·(position in tile) bytes per level per
// append, so a writer that appends one leaf at a time writes far more tile
// bytes than one that batches.
//
// A Builder is not safe for concurrent use.
type Builder struct {
	size  uint64
	rng   []Hash              // compact range of [0, size), cap 64
	tiles [maxLevels][]byte   // partial hash tile per level, nil if none
	touch [maxLevels + 1]bool // per level+1 (0 = entries): changed in this Append
	bund  []byte              // partial entry bundle, nil if none
	bundN int                 // entries in bund
	// bundLast is the length of the last full entry bundle this Builder
	// made (0: none yet), what the next one is allocated for.
	bundLast int

	root    Hash
	rootSet bool

	leafHash hash.Hash // reused SHA-256 state for leaf hashes
	prefix   [1]byte   // the leaf hash prefix 0x00, here so it does not escape per call
	out      []TileData
}

// NewBuilder returns a Builder that continues the tree described by s. For
// s.Size > 0 it reads the partial tiles and the partial entry bundle of the
// tree of size s.Size from r, in one ReadTiles call, and checks them against
// s: every entry must hash to its level-0 hash and the tiles must hash to
// s.Range, else the error wraps ErrStateMismatch. A missing tile is an error
// wrapping ErrNotFound. r may be nil for the empty tree (every other size
// has a partial tile at some level).
func NewBuilder(ctx context.Context, r TileReader, s State) (*Builder, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	b := &Builder{
		size:     s.Size,
		rng:      append(make([]Hash, 0, 64), s.Range...),
		leafHash: sha256.New(),
	}
	var need []Tile
	for level := range maxLevels {
		if w := tileWidthAt(level, s.Size>>(TileHeight*(level+1)), s.Size); w > 0 {
			need = append(need, Tile{Level: level, Index: s.Size >> (TileHeight * (level + 1)), Width: w})
		}
	}
	if len(need) == 0 {
		return b, nil
	}
	w0 := int(s.Size % TileWidth)
	if w0 > 0 {
		need = append(need, Tile{Level: EntriesLevel, Index: s.Size / TileWidth, Width: w0})
	}
	if r == nil {
		return nil, fmt.Errorf("opening tree of size %d: no tile reader for its %d partial tiles", s.Size, len(need))
	}
	data, err := readTiles(ctx, r, need)
	if err != nil {
		return nil, fmt.Errorf("opening tree of size %d: %w", s.Size, err)
	}
	for i, t := range need {
		if t.Level == EntriesLevel {
			entries, err := ParseBundle(data[i])
			if err != nil {
				return nil, fmt.Errorf("opening tree of size %d: %s: %w", s.Size, t.Path(), err)
			}
			t0 := data[0] // level 0 is first in need when w0 > 0
			for j, e := range entries {
				if LeafHash(e) != Hash(t0[HashSize*j:]) {
					return nil, fmt.Errorf("opening tree of size %d: entry %d does not hash to its level-0 hash: %w", s.Size, t.Index*TileWidth+uint64(j), ErrStateMismatch)
				}
			}
			b.bund = append(make([]byte, 0, max(2*len(data[i]), 4096)), data[i]...)
			b.bundN = len(entries)
			continue
		}
		b.tiles[t.Level] = append(make([]byte, 0, TileWidth*HashSize), data[i]...)
	}
	// Recompute the compact range from the tiles, highest level first.
	want := make([]Hash, 0, len(s.Range))
	for level := maxLevels - 1; level >= 0; level-- {
		t := b.tiles[level]
		w := len(t) / HashSize
		for r := TileHeight - 1; r >= 0; r-- {
			if w>>r&1 == 0 {
				continue
			}
			start := w >> (r + 1) << (r + 1)
			want = append(want, subtreeHash(t[start*HashSize:(start+1<<r)*HashSize]))
		}
	}
	for i := range want {
		if want[i] != s.Range[i] {
			return nil, fmt.Errorf("opening tree of size %d: range hash %d of %d differs from the stored tiles: %w", s.Size, i, len(want), ErrStateMismatch)
		}
	}
	return b, nil
}

// subtreeHash returns the Merkle tree hash of a power-of-two number of
// consecutive hashes.
func subtreeHash(hashes []byte) Hash {
	n := len(hashes) / HashSize
	if n == 1 {
		return Hash(hashes)
	}
	return NodeHash(subtreeHash(hashes[:n/2*HashSize]), subtreeHash(hashes[n/2*HashSize:]))
}

// Size returns the number of leaves in the tree.
func (b *Builder) Size() uint64 { return b.size }

// Root returns the root hash of the tree. It is computed on the first call
// after an Append (popcount(Size)−1 hashes) and cached.
func (b *Builder) Root() Hash {
	if !b.rootSet {
		b.root, b.rootSet = foldRange(b.rng), true
	}
	return b.root
}

// State returns the tree's state to persist with the tiles of the last
// Append. The returned State does not share memory with b.
func (b *Builder) State() State {
	return State{Size: b.size, Range: slices.Clone(b.rng)}
}

// Append appends leaves to the tree and returns every tile and entry bundle
// that changed, each with its whole current contents and its current width:
// full tiles completed by this batch and the partial tile of each level that
// received hashes. They are ordered by level (entry bundles first), then
// index. A batch of n leaves at size s returns about n/256+1 entry bundles
// and level-0 tiles, and more only where a tile above filled up.
//
// The returned Data slices are never modified afterwards (tiles only grow, and
// a grown tile is a new slice), so they stay valid after later Appends; the
// returned []TileData itself is reused by the next Append.
//
// Append checks every leaf first: if one is longer than MaxEntrySize (wrapping
// ErrLeafTooLarge) or the tree would overflow, it returns an error and
// appends nothing.
func (b *Builder) Append(leaves [][]byte) ([]TileData, error) {
	return b.AppendHashed(leaves, nil)
}

// AppendHashed is Append for leaves whose leaf hashes (LeafHash) the caller
// has computed already: hashes[i] must be LeafHash(leaves[i]), or the tree
// does not commit to the entry bundles. With hashes nil it computes them,
// as Append does; otherwise len(hashes) must be len(leaves).
func (b *Builder) AppendHashed(leaves [][]byte, hashes []Hash) ([]TileData, error) {
	if hashes != nil && len(hashes) != len(leaves) {
		return nil, fmt.Errorf("%d leaves and %d leaf hashes", len(leaves), len(hashes))
	}
	for i, leaf := range leaves {
		if len(leaf) > MaxEntrySize {
			return nil, fmt.Errorf("leaf %d of batch (index %d) is %d bytes, more than %d: %w", i, b.size+uint64(i), len(leaf), MaxEntrySize, ErrLeafTooLarge)
		}
	}
	if uint64(len(leaves)) > ^uint64(0)-b.size {
		return nil, fmt.Errorf("appending %d leaves to a tree of size %d overflows", len(leaves), b.size)
	}
	b.out = b.out[:0]
	b.touch = [maxLevels + 1]bool{}
	if len(leaves) == 0 {
		return b.out, nil
	}
	b.rootSet = false
	for i, leaf := range leaves {
		if hashes != nil {
			b.appendLeaf(leaf, &hashes[i])
		} else {
			b.appendLeaf(leaf, nil)
		}
	}
	// The partial tiles that received data.
	if b.touch[0] && b.bundN > 0 {
		b.out = append(b.out, TileData{
			Tile: Tile{Level: EntriesLevel, Index: b.size / TileWidth, Width: b.bundN},
			Data: b.bund[:len(b.bund):len(b.bund)],
		})
	}
	for level := range maxLevels {
		t := b.tiles[level]
		if !b.touch[level+1] || len(t) == 0 {
			continue
		}
		b.out = append(b.out, TileData{
			Tile: Tile{Level: level, Index: b.size >> (TileHeight * (level + 1)), Width: len(t) / HashSize},
			Data: t[:len(t):len(t)],
		})
	}
	slices.SortFunc(b.out, func(x, y TileData) int {
		return cmp.Or(cmp.Compare(x.Tile.Level, y.Tile.Level), cmp.Compare(x.Tile.Index, y.Tile.Index))
	})
	return b.out, nil
}

// appendLeaf appends one leaf: its entry, its leaf hash (hash, or computed
// if nil), and the interior nodes it completes.
func (b *Builder) appendLeaf(leaf []byte, hash *Hash) {
	index := b.size
	b.size++

	// The entry.
	if b.bund == nil {
		// A bundle is allocated once for its 256 entries: as large as the
		// last one and a sixteenth (the bundles of a workload differ by
		// a few percent), or for the first, from this leaf's size. A
		// bundle that outgrows it is copied into one twice as large.
		size := TileWidth * (2 + len(leaf)) * 5 / 4
		if b.bundLast > 0 {
			size = b.bundLast + b.bundLast/16
		}
		b.bund = make([]byte, 0, max(4096, size))
	}
	b.bund = binary.BigEndian.AppendUint16(b.bund, uint16(len(leaf)))
	b.bund = append(b.bund, leaf...)
	b.bundN++
	b.touch[0] = true
	if b.bundN == TileWidth {
		b.out = append(b.out, TileData{
			Tile: Tile{Level: EntriesLevel, Index: index / TileWidth, Width: TileWidth},
			Data: b.bund[:len(b.bund):len(b.bund)],
		})
		b.bundLast = len(b.bund)
		b.bund, b.bundN = nil, 0
	}

	// The leaf hash, written straight into the level-0 tile.
	t0 := b.tiles[0]
	if t0 == nil {
		t0 = make([]byte, 0, TileWidth*HashSize)
	}
	if hash != nil {
		t0 = append(t0, hash[:]...)
	} else {
		h := b.leafHash
		h.Reset()
		h.Write(b.prefix[:])
		h.Write(leaf)
		t0 = h.Sum(t0)
	}
	node := Hash(t0[len(t0)-HashSize:])
	b.tiles[0] = t0
	b.touch[1] = true
	if len(t0) == TileWidth*HashSize {
		b.emitFull(0)
	}

	// Merge with the compact range: one interior node per trailing one bit of
	// index. A node of height 8·L (L ≥ 1) is the root of a full tile of
	// level L−1 and becomes the next hash of the tile at level L.
	height := 0
	for i := index; i&1 == 1; i >>= 1 {
		node = NodeHash(b.rng[len(b.rng)-1], node)
		b.rng = b.rng[:len(b.rng)-1]
		height++
		if height%TileHeight == 0 {
			level := height / TileHeight
			t := b.tiles[level]
			if t == nil {
				t = make([]byte, 0, TileWidth*HashSize)
			}
			b.tiles[level] = append(t, node[:]...)
			b.touch[level+1] = true
			if len(b.tiles[level]) == TileWidth*HashSize {
				b.emitFull(level)
			}
		}
	}
	b.rng = append(b.rng, node)
}

// emitFull records the full tile at level and starts a new one.
func (b *Builder) emitFull(level int) {
	t := b.tiles[level]
	b.out = append(b.out, TileData{
		Tile: Tile{Level: level, Index: b.size>>(TileHeight*level)/TileWidth - 1, Width: TileWidth},
		Data: t,
	})
	b.tiles[level] = nil
}
