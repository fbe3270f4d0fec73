package follow

import (
	"context"
	"fmt"

	"github.com/transparency-dev/merkle/compact"

	"github.com/zarlog/zarlog/merkle"
)

// stateAt returns the merkle.State of the tree of the given size (its
// compact range), computed from the tiles r returns: the state a Builder
// continues from. The follower uses it to go back to the verified tree when
// it drops leaves fetched for a checkpoint it refused.
func stateAt(ctx context.Context, r merkle.TileReader, size uint64) (merkle.State, error) {
	if size == 0 {
		return merkle.State{}, nil
	}
	ids := compact.RangeNodes(0, size, nil)
	type key struct {
		level int
		index uint64
	}
	var tiles []merkle.Tile
	pos := map[key]int{}
	for _, id := range ids {
		level := int(id.Level / merkle.TileHeight)
		j := id.Index << (id.Level % merkle.TileHeight) // the node's first hash at the tile level
		k := key{level, j / merkle.TileWidth}
		if _, ok := pos[k]; ok {
			continue
		}
		t, ok := merkle.TileAt(level, k.index, size)
		if !ok {
			return merkle.State{}, fmt.Errorf("tree state at size %d: no tile %d/%d", size, level, k.index)
		}
		pos[k] = len(tiles)
		tiles = append(tiles, t)
	}
	data, err := r.ReadTiles(ctx, tiles)
	if err != nil {
		return merkle.State{}, fmt.Errorf("tree state at size %d: %w", size, err)
	}
	if len(data) != len(tiles) {
		return merkle.State{}, fmt.Errorf("tree state at size %d: the reader returned %d tiles for %d", size, len(data), len(tiles))
	}
	st := merkle.State{Size: size, Range: make([]merkle.Hash, len(ids))}
	for i, id := range ids {
		level := int(id.Level / merkle.TileHeight)
		rr := id.Level % merkle.TileHeight
		j := id.Index << rr
		n := pos[key{level, j / merkle.TileWidth}]
		d, err := merkle.TilePrefix(data[n], tiles[n].Width)
		if err != nil {
			return merkle.State{}, fmt.Errorf("tree state at size %d: %s: %w", size, tiles[n], err)
		}
		off := int(j%merkle.TileWidth) * merkle.HashSize
		st.Range[i] = subtree(d[off : off+(1<<rr)*merkle.HashSize])
	}
	return st, nil
}

// subtree returns the Merkle tree hash of a power-of-two number of
// consecutive hashes.
func subtree(hashes []byte) merkle.Hash {
	if len(hashes) == merkle.HashSize {
		return merkle.Hash(hashes)
	}
	half := len(hashes) / 2
	return merkle.NodeHash(subtree(hashes[:half]), subtree(hashes[half:]))
}
