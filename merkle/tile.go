package merkle

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Tile geometry, fixed by C2SP tlog-tiles.
const (
	// TileHeight is the height of a tile: each tile is a subtree of height 8.
	TileHeight = 8
	// TileWidth is the number of hashes in a full tile and the number of
	// entries in a full entry bundle.
	TileWidth = 1 << TileHeight
	// EntriesLevel is the Level of an entry bundle ("tile/entries/…"). Hash
	// tiles have levels 0 to MaxLevel.
	EntriesLevel = -1
	// MaxLevel is the highest level a tile path may name.
	MaxLevel = 63
	// MaxEntrySize is the largest entry an entry bundle can hold: its length
	// is a big-endian uint16.
	MaxEntrySize = 1<<16 - 1
)

// A Tile names one tlog-tiles resource: a hash tile at a level from 0 to
// MaxLevel, or an entry bundle (Level EntriesLevel).
//
// A hash tile at level L and index N holds, for i from 0 to Width−1, the
// Merkle tree hash of the leaves [(N·256+i)·256^L, (N·256+i+1)·256^L): at
// level 0 the leaf hashes, above it the roots of the full tiles of the level
// below. An entry bundle with index N holds the entries N·256 … N·256+Width−1.
//
// Width is the number of hashes or entries, from 1 to TileWidth; a tile of
// width TileWidth is full, any other is partial and its path ends in .p/W.
// Tiles only grow: a tile's hashes or entries never change once present, so
// the tile of width W is the prefix of every wider version of the same tile
// (same Level and Index). See Builder for how a store uses that.
type Tile struct {
	Level int    // 0…MaxLevel for hash tiles, EntriesLevel for entry bundles
	Index uint64 // the tile's index within its level
	Width int    // 1…TileWidth
}

// IsFull reports whether t has all TileWidth hashes or entries.
func (t Tile) IsFull() bool { return t.Width == TileWidth }

// IsEntries reports whether t is an entry bundle rather than a hash tile.
func (t Tile) IsEntries() bool { return t.Level == EntriesLevel }

// valid reports whether t's fields are in range.
func (t Tile) valid() bool {
	return t.Level >= EntriesLevel && t.Level <= MaxLevel && t.Width >= 1 && t.Width <= TileWidth
}

// String returns t's path, or a description of t if its fields are out of
// range.
func (t Tile) String() string {
	if !t.valid() {
		return fmt.Sprintf("invalid tile (level %d, index %d, width %d)", t.Level, t.Index, t.Width)
	}
	return t.Path()
}

// Path returns the tlog-tiles path of t, relative to the log's prefix:
// "tile/<L>/<N>[.p/<W>]" or "tile/entries/<N>[.p/<W>]", with N written in
// three-digit groups, all but the last prefixed with "x". Path panics if t's
// Level or Width is out of range: it is for tiles the caller built.
func (t Tile) Path() string {
	if !t.valid() {
		panic(fmt.Sprintf("merkle: invalid tile level %d width %d", t.Level, t.Width))
	}
	b := make([]byte, 0, 48)
	b = append(b, "tile/"...)
	if t.Level == EntriesLevel {
		b = append(b, "entries"...)
	} else {
		b = strconv.AppendInt(b, int64(t.Level), 10)
	}
	b = append(b, '/')
	b = appendTileIndex(b, t.Index)
	if t.Width < TileWidth {
		b = append(b, ".p/"...)
		b = strconv.AppendInt(b, int64(t.Width), 10)
	}
	return string(b)
}

// appendTileIndex appends n as zero-padded three-digit path elements, all but
// the last prefixed with "x": 1234067 becomes "x001/x234/067".
func appendTileIndex(b []byte, n uint64) []byte {
	var groups [7]uint64 // 2^64 has 20 decimal digits: at most 7 groups
	k := 0
	for {
		groups[k] = n % 1000
		k++
		n /= 1000
		if n == 0 {
			break
		}
	}
	for i := k - 1; i >= 0; i-- {
		if i > 0 {
			b = append(b, 'x')
		}
		g := groups[i]
		b = append(b, byte('0'+g/100), byte('0'+g/10%10), byte('0'+g%10))
		if i > 0 {
			b = append(b, '/')
		}
	}
	return b
}

// ParseTilePath parses a tlog-tiles path, as returned by Tile.Path, relative
// to the log's prefix (no leading slash). It accepts exactly the paths Path
// returns: a level from 0 to 63 without leading zeros, an index in
// three-digit groups without a leading "x000" group, and a partial width from
// 1 to 255 without leading zeros. Any other path is an error wrapping
// ErrMalformed, so for a parsed tile t, t.Path() == path.
func ParseTilePath(path string) (Tile, error) {
	t, err := parseTilePath(path)
	if err != nil {
		return Tile{}, fmt.Errorf("tile path %q: %s: %w", path, err, ErrMalformed)
	}
	return t, nil
}

// A pathError is a reason a tile path is invalid; ParseTilePath wraps it.
type pathError string

func (e pathError) Error() string { return string(e) }

func parseTilePath(path string) (Tile, error) {
	rest, ok := strings.CutPrefix(path, "tile/")
	if !ok {
		return Tile{}, pathError("does not start with tile/")
	}
	levelStr, rest, ok := strings.Cut(rest, "/")
	if !ok {
		return Tile{}, pathError("no index")
	}
	t := Tile{Width: TileWidth}
	if levelStr == "entries" {
		t.Level = EntriesLevel
	} else {
		l, ok := parseDecimal(levelStr, MaxLevel)
		if !ok {
			return Tile{}, pathError("level is not a decimal from 0 to 63 without leading zeros")
		}
		t.Level = int(l)
	}
	indexStr, widthStr, partial := strings.Cut(rest, ".p/")
	if partial {
		w, ok := parseDecimal(widthStr, TileWidth-1)
		if !ok || w == 0 {
			return Tile{}, pathError("partial width is not a decimal from 1 to 255 without leading zeros")
		}
		t.Width = int(w)
	}
	n, err := parseTileIndex(indexStr)
	if err != nil {
		return Tile{}, err
	}
	t.Index = n
	return t, nil
}

// parseTileIndex parses the three-digit groups of a tile index.
func parseTileIndex(s string) (uint64, error) {
	var n uint64
	for i := 0; ; i++ {
		group, rest, more := strings.Cut(s, "/")
		if more {
			if len(group) != 4 || group[0] != 'x' {
				return 0, pathError("index element is not x followed by three digits")
			}
			group = group[1:]
			if i == 0 && group == "000" {
				return 0, pathError("index has a leading x000 element")
			}
		} else if len(group) != 3 {
			return 0, pathError("last index element is not three digits")
		}
		var g uint64
		for _, c := range []byte(group) {
			if c < '0' || c > '9' {
				return 0, pathError("index element is not three digits")
			}
			g = g*10 + uint64(c-'0')
		}
		if n > (1<<64-1-g)/1000 {
			return 0, pathError("index does not fit in 64 bits")
		}
		n = n*1000 + g
		if !more {
			return n, nil
		}
		s = rest
	}
}

// parseDecimal parses a decimal without sign or leading zeros that is at
// most limit (limit < 2^63).
func parseDecimal(s string, limit uint64) (uint64, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	var n uint64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
		if n > limit {
			return 0, false
		}
	}
	return n, true
}

// tileWidthAt returns the width of the tile (level, index) in a tree of the
// given size, where level is a hash-tile level or EntriesLevel (which has the
// width of the level-0 tile). It returns 0 if the tree has no such tile.
func tileWidthAt(level int, index, size uint64) int {
	if level == EntriesLevel {
		level = 0
	}
	shift := uint(TileHeight * level)
	if shift >= 64 {
		return 0
	}
	hashes := size >> shift // hashes at this level
	full := hashes >> TileHeight
	switch {
	case index < full:
		return TileWidth
	case index == full:
		return int(hashes & (TileWidth - 1)) // 0 if there is no partial tile
	default:
		return 0
	}
}

// TileAt returns the tile with the given level and index in a tree of the
// given size, at the width that tree has, and whether the tree has that tile
// at all. level may be EntriesLevel.
func TileAt(level int, index, size uint64) (Tile, bool) {
	if level < EntriesLevel || level > MaxLevel {
		return Tile{}, false
	}
	w := tileWidthAt(level, index, size)
	if w == 0 {
		return Tile{}, false
	}
	return Tile{Level: level, Index: index, Width: w}, true
}

// NewTiles returns the tiles and entry bundles that a tree of size newSize
// has and a tree of size oldSize does not: each full or partial tile whose
// contents changed, at its width in newSize. They are ordered by level, entry
// bundles first, then by index. It returns nil if newSize <= oldSize.
//
// A mirror fetches these to follow a log from oldSize to newSize; a static
// export writes them.
func NewTiles(oldSize, newSize uint64) []Tile {
	if newSize <= oldSize {
		return nil
	}
	var tiles []Tile
	for level := EntriesLevel; level <= MaxLevel; level++ {
		l := max(level, 0)
		shift := uint(TileHeight * l)
		if shift >= 64 || newSize>>shift == 0 {
			break
		}
		oldHashes, newHashes := oldSize>>shift, newSize>>shift
		if oldHashes == newHashes {
			if level >= 0 {
				break // no level above changes either
			}
			continue
		}
		// Tiles from the one holding hash oldHashes to the one holding
		// hash newHashes−1 changed.
		for n := oldHashes >> TileHeight; n <= (newHashes-1)>>TileHeight; n++ {
			tiles = append(tiles, Tile{Level: level, Index: n, Width: tileWidthAt(level, n, newSize)})
		}
	}
	return tiles
}

// FormatBundle returns the entry bundle holding entries: each entry as a
// big-endian uint16 length followed by its bytes. It returns an error if there
// are no entries or more than TileWidth, or if an entry is longer than
// MaxEntrySize (wrapping ErrLeafTooLarge).
func FormatBundle(entries [][]byte) ([]byte, error) {
	if len(entries) == 0 || len(entries) > TileWidth {
		return nil, fmt.Errorf("entry bundle of %d entries, want 1 to %d", len(entries), TileWidth)
	}
	n := 0
	for i, e := range entries {
		if len(e) > MaxEntrySize {
			return nil, fmt.Errorf("entry %d of bundle is %d bytes, more than %d: %w", i, len(e), MaxEntrySize, ErrLeafTooLarge)
		}
		n += 2 + len(e)
	}
	b := make([]byte, 0, n)
	for _, e := range entries {
		b = binary.BigEndian.AppendUint16(b, uint16(len(e)))
		b = append(b, e...)
	}
	return b, nil
}

// ParseBundle returns the entries of an entry bundle, as subslices of data.
// A bundle holds 1 to TileWidth entries; a length prefix or entry cut short,
// or more than TileWidth entries, is an error wrapping ErrMalformed. Every
// bundle ParseBundle accepts is canonical: FormatBundle gives back data.
//
// Entries may be empty: the format allows a zero length, RFC 6962 hashes an
// empty leaf, and a mirror must read other logs' bundles. Whether an empty
// entry is a valid event is for the layer above to say.
func ParseBundle(data []byte) ([][]byte, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("entry bundle is empty: %w", ErrMalformed)
	}
	entries := make([][]byte, 0, min(TileWidth, len(data)/2))
	for off := 0; off < len(data); {
		if len(entries) == TileWidth {
			return nil, fmt.Errorf("entry bundle has data after entry %d at byte %d: %w", TileWidth, off, ErrMalformed)
		}
		if len(data)-off < 2 {
			return nil, fmt.Errorf("entry bundle: entry %d length cut short at byte %d of %d: %w", len(entries), off, len(data), ErrMalformed)
		}
		n := int(binary.BigEndian.Uint16(data[off:]))
		off += 2
		if len(data)-off < n {
			return nil, fmt.Errorf("entry bundle: entry %d of %d bytes cut short at byte %d of %d: %w", len(entries), n, off, len(data), ErrMalformed)
		}
		entries = append(entries, data[off:off+n:off+n])
		off += n
	}
	return entries, nil
}

// BundlePrefix returns the first width entries of an entry bundle, as a
// prefix of data: the partial bundle of that width. A store that keeps one
// growing bundle per index serves "tile/entries/N.p/W" with it. It returns an
// error wrapping ErrMalformed if data is not a bundle of at least width
// entries.
func BundlePrefix(data []byte, width int) ([]byte, error) {
	if width < 1 || width > TileWidth {
		return nil, fmt.Errorf("entry bundle prefix of %d entries, want 1 to %d: %w", width, TileWidth, ErrMalformed)
	}
	off := 0
	for i := 0; i < width; i++ {
		if len(data)-off < 2 {
			return nil, fmt.Errorf("entry bundle has %d entries, want at least %d: %w", i, width, ErrMalformed)
		}
		n := int(binary.BigEndian.Uint16(data[off:]))
		off += 2
		if len(data)-off < n {
			return nil, fmt.Errorf("entry bundle: entry %d of %d bytes cut short at byte %d of %d: %w", i, n, off, len(data), ErrMalformed)
		}
		off += n
	}
	return data[:off:off], nil
}

// TilePrefix returns the first width hashes of a hash tile, as a prefix of
// data: the partial tile of that width. It returns an error wrapping
// ErrMalformed if data is not a whole number of hashes, is wider than a full
// tile, or holds fewer than width hashes.
func TilePrefix(data []byte, width int) ([]byte, error) {
	if width < 1 || width > TileWidth {
		return nil, fmt.Errorf("tile prefix of %d hashes, want 1 to %d: %w", width, TileWidth, ErrMalformed)
	}
	if len(data)%HashSize != 0 || len(data) > TileWidth*HashSize || len(data) < width*HashSize {
		return nil, fmt.Errorf("tile of %d bytes does not hold %d hashes: %w", len(data), width, ErrMalformed)
	}
	return data[: width*HashSize : width*HashSize], nil
}
