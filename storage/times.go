package storage

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
)

// The append times of the leaves (ledger.AppendTime: not in the tree, but
// what the ledger judged each leaf at) travel beside the entry bundles, one
// object per bundle at each width the bundle is written at:
//
//	zarlog/times/<the bundle's tile path after tile/entries/>
//
// so that a standby, or a node restored from the bucket, replays each leaf
// as the sequencer judged it (ledger.Import). The content is one line per
// time, "<leaf index> <Unix nanoseconds>", the first for the bundle's
// first leaf (the time in effect there), then one per later group that
// begins in the bundle, in index order.

// TimesPath returns the key of the append times of entry bundle t.
func TimesPath(t merkle.Tile) string {
	return "zarlog/times/" + strings.TrimPrefix(t.Path(), "tile/entries/")
}

// FormatTimes returns the times object of entry bundle t.
func FormatTimes(ts []ledger.AppendTime) []byte {
	var b []byte
	for _, t := range ts {
		b = strconv.AppendUint(b, t.Index, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, t.Time.UnixNano(), 10)
		b = append(b, '\n')
	}
	return b
}

// ParseTimes parses the times object of entry bundle t: the first time is
// for the bundle's first leaf, the others are in increasing index order
// within the bundle, and every time is after 1970.
func ParseTimes(t merkle.Tile, b []byte) ([]ledger.AppendTime, error) {
	if !t.IsEntries() {
		return nil, fmt.Errorf("times of %s: not an entry bundle: %w", t.Path(), ErrMalformed)
	}
	first := t.Index * merkle.TileWidth
	end := first + uint64(t.Width)
	var out []ledger.AppendTime
	for len(b) > 0 {
		line, rest, ok := bytes.Cut(b, []byte("\n"))
		if !ok {
			return nil, fmt.Errorf("times of %s: no newline at the end: %w", t.Path(), ErrMalformed)
		}
		b = rest
		is, ns, ok := bytes.Cut(line, []byte(" "))
		if !ok {
			return nil, fmt.Errorf("times of %s: line %q: %w", t.Path(), line, ErrMalformed)
		}
		i, err := strconv.ParseUint(string(is), 10, 64)
		if err != nil || strconv.FormatUint(i, 10) != string(is) {
			return nil, fmt.Errorf("times of %s: index %q: %w", t.Path(), is, ErrMalformed)
		}
		n, err := strconv.ParseInt(string(ns), 10, 64)
		if err != nil || strconv.FormatInt(n, 10) != string(ns) || n <= 0 {
			return nil, fmt.Errorf("times of %s: time %q: %w", t.Path(), ns, ErrMalformed)
		}
		switch {
		case len(out) == 0 && i != first:
			return nil, fmt.Errorf("times of %s: the first is for leaf %d, want %d: %w", t.Path(), i, first, ErrMalformed)
		case len(out) > 0 && i <= out[len(out)-1].Index, i >= end:
			return nil, fmt.Errorf("times of %s: leaf %d is out of order or beyond the bundle: %w", t.Path(), i, ErrMalformed)
		}
		out = append(out, ledger.AppendTime{Index: i, Time: time.Unix(0, n).UTC()})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("times of %s: empty: %w", t.Path(), ErrMalformed)
	}
	return out, nil
}
