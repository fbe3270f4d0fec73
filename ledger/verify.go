package ledger

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/merkle"
)

// A TamperError says how the stored log differs from what the ledger signed
// or stored: which check failed, the sizes and hashes involved, and the
// tile, when one can be named. It wraps ErrTampered (and the underlying
// error, if any).
type TamperError struct {
	Check          string       // the check that failed, e.g. "root at the checkpoint's size"
	Size           uint64       // the tree size checked
	CheckpointSize uint64       // the last signed checkpoint's size, where it matters
	Want, Got      merkle.Hash  // the expected and the computed hash, where they matter
	Tile           *merkle.Tile // the tile or entry bundle that differs, if known
	Index          uint64       // with an entry bundle: the entry in it that differs
	Err            error
}

func (e *TamperError) Error() string {
	s := "tampered store: " + e.Check
	if e.Tile != nil {
		s += ": " + e.Tile.Path()
		if e.Tile.IsEntries() {
			s += fmt.Sprintf(" entry %d", e.Index)
		}
	}
	switch {
	case e.Size != 0 && e.CheckpointSize != 0:
		s += fmt.Sprintf(" (tree size %d, last signed checkpoint size %d)", e.Size, e.CheckpointSize)
	case e.Size != 0:
		s += fmt.Sprintf(" (tree size %d)", e.Size)
	case e.CheckpointSize != 0:
		s += fmt.Sprintf(" (last signed checkpoint size %d)", e.CheckpointSize)
	}
	if e.Want != e.Got {
		s += fmt.Sprintf(": computed %x, want %x", e.Got, e.Want)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *TamperError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrTampered, e.Err}
	}
	return []error{ErrTampered}
}

// checkStore verifies the stored tree of state st against the last signed
// checkpoint pub at the configured level, and returns the builder that
// continues it.
func (l *Ledger) checkStore(ctx context.Context, r pebble.Reader, st merkle.State, pub *published) (*merkle.Builder, error) {
	tr := tileReader{r}
	if pub.ok {
		cp := pub.cp
		if cp.Size > st.Size {
			return nil, &TamperError{Check: "the last signed checkpoint is larger than the stored tree", Size: st.Size, CheckpointSize: cp.Size}
		}
		root, err := merkle.RootHash(ctx, tr, cp.Size)
		if err != nil {
			return nil, &TamperError{Check: "reading the tiles of the last signed checkpoint", Size: st.Size, CheckpointSize: cp.Size, Err: err}
		}
		if root != cp.Hash {
			terr := &TamperError{Check: "root of the stored tiles at the checkpoint's size", Size: cp.Size, CheckpointSize: cp.Size, Want: cp.Hash, Got: root}
			// Name the tile if the tile tree can.
			if err := checkTiles(ctx, r, st.Size); err != nil {
				terr.Err = err
			}
			return nil, terr
		}
	}
	b, err := merkle.NewBuilder(ctx, tr, st)
	if err != nil {
		cs := uint64(0)
		if pub.ok {
			cs = pub.cp.Size
		}
		return nil, &TamperError{Check: "the tree state against its partial tiles", Size: st.Size, CheckpointSize: cs, Err: err}
	}
	if pub.ok && st.Size > pub.cp.Size {
		// The unsigned tail after a crash: the tree must extend the
		// checkpoint. Both roots come from the same tiles, so this checks
		// the tiles between the two sizes.
		p, err := merkle.ConsistencyProof(ctx, tr, pub.cp.Size, st.Size)
		if err == nil {
			err = merkle.CheckConsistency(pub.cp.Size, st.Size, pub.cp.Hash, b.Root(), p)
		}
		if err != nil {
			return nil, &TamperError{Check: "consistency of the stored tree with the last signed checkpoint", Size: st.Size, CheckpointSize: pub.cp.Size, Err: err}
		}
	}
	if l.cfg.Check >= CheckTiles {
		if err := checkTiles(ctx, r, st.Size); err != nil {
			return nil, err
		}
	}
	if l.cfg.Check >= CheckEntries {
		if err := checkEntries(ctx, r, st.Size); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// checkTiles checks every full hash tile of a tree of the given size against
// the tile above it: the hash of tile L/N is hash N mod 256 of tile
// L+1/(N/256). It returns a *TamperError naming the first tile that differs.
func checkTiles(ctx context.Context, r pebble.Reader, size uint64) error {
	for level := 0; ; level++ {
		full := size >> (merkle.TileHeight * (level + 1)) // full tiles at this level
		if full == 0 {
			return nil
		}
		var above []byte
		for n := uint64(0); n < full; n++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if n%merkle.TileWidth == 0 {
				t, _ := merkle.TileAt(level+1, n/merkle.TileWidth, size)
				d, err := get(r, tileKey(t))
				if err != nil {
					return &TamperError{Check: "reading a tile", Size: size, Tile: &t, Err: err}
				}
				if len(d) < t.Width*merkle.HashSize || len(d)%merkle.HashSize != 0 {
					return &TamperError{Check: fmt.Sprintf("tile of %d bytes, want %d hashes", len(d), t.Width), Size: size, Tile: &t}
				}
				above = d
			}
			t := merkle.Tile{Level: level, Index: n, Width: merkle.TileWidth}
			d, err := get(r, tileKey(t))
			if err != nil {
				return &TamperError{Check: "reading a tile", Size: size, Tile: &t, Err: err}
			}
			if len(d) != merkle.TileWidth*merkle.HashSize {
				return &TamperError{Check: fmt.Sprintf("full tile of %d bytes", len(d)), Size: size, Tile: &t}
			}
			got := tileRoot(d)
			i := n % merkle.TileWidth
			want := merkle.Hash(above[i*merkle.HashSize:])
			if got != want {
				upper, _ := merkle.TileAt(level+1, n/merkle.TileWidth, size)
				return &TamperError{Check: fmt.Sprintf("the hash of this tile differs from hash %d of %s", i, upper.Path()),
					Size: size, Tile: &t, Want: want, Got: got}
			}
		}
	}
}

// tileRoot returns the Merkle hash of a full tile's 256 hashes.
func tileRoot(d []byte) merkle.Hash {
	var level [merkle.TileWidth]merkle.Hash
	n := merkle.TileWidth
	for i := range n {
		level[i] = merkle.Hash(d[i*merkle.HashSize:])
	}
	for n > 1 {
		for i := 0; i < n/2; i++ {
			level[i] = merkle.NodeHash(level[2*i], level[2*i+1])
		}
		n /= 2
	}
	return level[0]
}

// checkEntries hashes every entry of every entry bundle of a tree of the
// given size and compares it with the level-0 tiles.
func checkEntries(ctx context.Context, r pebble.Reader, size uint64) error {
	for n := uint64(0); n*merkle.TileWidth < size; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		bt, _ := merkle.TileAt(merkle.EntriesLevel, n, size)
		tt, _ := merkle.TileAt(0, n, size)
		bd, err := readBundle(r, bt.Index)
		if err != nil {
			return &TamperError{Check: "reading an entry bundle", Size: size, Tile: &bt, Err: err}
		}
		td, err := get(r, tileKey(tt))
		if err != nil {
			return &TamperError{Check: "reading a tile", Size: size, Tile: &tt, Err: err}
		}
		entries, err := merkle.ParseBundle(bd)
		if err != nil || len(entries) < bt.Width || len(td) < tt.Width*merkle.HashSize {
			return &TamperError{Check: "an entry bundle or tile too short or malformed", Size: size, Tile: &bt, Err: err}
		}
		for j := range bt.Width {
			got := merkle.LeafHash(entries[j])
			want := merkle.Hash(td[j*merkle.HashSize:])
			if got != want {
				return &TamperError{Check: fmt.Sprintf("entry %d does not hash to its level-0 hash in %s", n*merkle.TileWidth+uint64(j), tt.Path()),
					Size: size, Tile: &bt, Index: uint64(j), Want: want, Got: got}
			}
		}
	}
	return nil
}

// errNotFound maps Pebble's not-found to ErrNotFound.
func errNotFound(err error, what string) error {
	if errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

func beUint64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }
