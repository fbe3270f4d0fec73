package ledger

// This file is the ledger's side of a log kept elsewhere too (package
// storage, `zarlog serve --storage`): the checkpoint handed to
// Config.Publish before it is published, with read access to the tree it
// covers, and the append times that travel with the leaves.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/merkle"
)

// ErrFenced is wrapped by a Config.Publish error that means another
// sequencer holds the log: the ledger stops (Err wraps ErrStopped and it)
// and signs nothing more.
var ErrFenced = errors.New("another sequencer holds the log")

// ErrNotSequencer is matched (errors.Is) by a Config.Publish error that
// means this node does not sequence the log now, and nothing is wrong: a
// standby, or a node waiting for a lapsed lease. The checkpoint is offered
// again by the next round; the ledger logs this once, at Info, and does
// not count it as a failed publication.
var ErrNotSequencer = errors.New("this node does not sequence the log")

// A Commit is a signed checkpoint offered to Config.Publish, with the tree
// it covers. Its readers are valid only during the Publish call.
type Commit struct {
	// Note is the signed checkpoint note, as it will be published.
	Note []byte
	// Checkpoint is the note's checkpoint.
	Checkpoint merkle.Checkpoint

	v *view
}

// ReadTile returns a tlog-tiles resource of the committed tree at exactly
// the tile's width, as Ledger.ReadTile does.
func (c Commit) ReadTile(ctx context.Context, t merkle.Tile) ([]byte, error) {
	return readTileAt(c.v, t)
}

// AppendTimes returns the append times of the leaves [start, end) of the
// committed tree (see AppendTime).
func (c Commit) AppendTimes(ctx context.Context, start, end uint64) ([]AppendTime, error) {
	return appendTimes(ctx, c.v.snap, c.v.size, start, end)
}

// An AppendTime is the ledger's clock when it appended a group of leaves
// (the Env.Now the state machine judged them with): it applies to the leaf
// Index and to every later one up to the next AppendTime's. The times are
// not in the tree; they travel with the leaves so that another ledger can
// replay them as this one judged them (Import, Rebuild).
type AppendTime struct {
	Index uint64
	Time  time.Time
}

// AppendTimes returns the append times of the leaves [start, end) of the
// durable tree: the one in effect at start (with Index start), then each
// later one whose group begins before end.
func (l *Ledger) AppendTimes(ctx context.Context, start, end uint64) ([]AppendTime, error) {
	v, err := l.acquire()
	if err != nil {
		return nil, err
	}
	defer v.release()
	return appendTimes(ctx, v.snap, v.size, start, end)
}

func appendTimes(ctx context.Context, r pebble.Reader, size, start, end uint64) ([]AppendTime, error) {
	if start >= end || end > size {
		return nil, fmt.Errorf("append times of leaves [%d, %d) of a tree of %d: %w", start, end, size, ErrRange)
	}
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixTime}, UpperBound: u64Key(prefixTime, end)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []AppendTime
	// The one in effect at start.
	if !it.SeekLT(u64Key(prefixTime, start+1)) {
		return nil, errors.Join(fmt.Errorf("append time of leaf %d: %w", start, ErrCorrupt), it.Error())
	}
	for ; it.Valid(); it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t, err := parseTime(it.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, AppendTime{Index: max(start, beUint64(it.Key()[1:])), Time: t})
	}
	return out, it.Error()
}

// readTileAt returns tile t of view v at exactly its width.
func readTileAt(v *view, t merkle.Tile) ([]byte, error) {
	// The tree has the tile at width t.Width if it has the leaves under
	// its last hash (or entry): (Index·256 + Width)·256^Level ≤ size.
	if t.Width < 1 || t.Width > merkle.TileWidth || t.Level < merkle.EntriesLevel || t.Level > 7 ||
		t.Index > (^uint64(0)-uint64(t.Width))/merkle.TileWidth {
		return nil, fmt.Errorf("%s: %w", t, ErrNotFound)
	}
	span := uint64(1)
	if t.Level > 0 {
		span = 1 << (merkle.TileHeight * t.Level)
	}
	if t.Index*merkle.TileWidth+uint64(t.Width) > v.size/span {
		return nil, fmt.Errorf("%s: the tree has %d leaves: %w", t.Path(), v.size, ErrNotFound)
	}
	d, err := getTile(v.snap, t)
	if err != nil {
		return nil, errNotFound(err, t.Path())
	}
	if t.IsEntries() {
		return merkle.BundlePrefix(d, t.Width)
	}
	return merkle.TilePrefix(d, t.Width)
}

// Signed returns the last checkpoint signed and stored, which with
// Config.Publish may not be published yet (Latest), or nil if none was.
func (l *Ledger) Signed() (note []byte, cp merkle.Checkpoint) {
	l.signMu.Lock()
	defer l.signMu.Unlock()
	if !l.signed.ok {
		return nil, merkle.Checkpoint{}
	}
	return l.signed.note, l.signed.cp
}
