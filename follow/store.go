package follow

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/pebblefs"
	"github.com/zarlog/zarlog/merkle"
)

// Keys of the store. Every key starts with one ASCII byte naming its table;
// numbers are big-endian so that keys sort in index order.
//
//	e N:u64        entry bundle N, the growing one (as merkle.Builder returns it)
//	t L:u8 N:u64   hash tile L/N, the growing one
//	m state        merkle.State of the stored tree; its size is at least the checkpoint's
//	m checkpoint   the accepted signed checkpoint note, verbatim
//	m source       where the accepted checkpoint was read (a URL)
//	m log          0x01 ‖ origin: the store's format and the log it belongs to
//	m projected    u64: the leaves [0, n) are projected
//	m stats        Stats, binary
//	g game         events.Game, binary: the state of a game after its projected events
//	f I:u64        status byte ‖ game id: the game whose final event is leaf I
//	x I:u64        kind byte ‖ reason: leaf I is not a zarlog event, or one the
//	               state machine refuses (the first MaxUnusable such leaves)
const (
	keyBundle   = 'e'
	keyTile     = 't'
	keyGame     = 'g'
	keyFinished = 'f'
	keyUnusable = 'x'
)

var (
	keyState      = []byte("mstate")
	keyCheckpoint = []byte("mcheckpoint")
	keySource     = []byte("msource")
	keyLog        = []byte("mlog")
	keyProjected  = []byte("mprojected")
	keyStats      = []byte("mstats")
)

// storeFormat is the first byte of the "m log" record.
const storeFormat = 1

// Errors of the store.
var (
	// ErrStoreMismatch is returned by OpenStore for a store of another log
	// (another origin), or whose checkpoint the given key did not sign.
	ErrStoreMismatch = errors.New("the store belongs to another log")
	// ErrCorrupt marks a stored record that does not decode.
	ErrCorrupt = errors.New("corrupt store record")
	// ErrNotFound is returned for a game the projection has not seen, or a
	// leaf beyond the accepted tree. It is merkle.ErrNotFound, as the
	// ledger's is, so that both are a publisher.LogStore.
	ErrNotFound = merkle.ErrNotFound
)

// StoreConfig configures a Store.
type StoreConfig struct {
	// Dir is the Pebble directory; created if missing. Required.
	Dir string
	// FS is the file system. Nil means the operating system's.
	FS vfs.FS
	// LogKey is the log's checkpoint verifier key: a new store records its
	// name (the origin); an existing store must be of that origin and its
	// checkpoint signed by this key (ErrStoreMismatch). Required.
	LogKey note.Verifier
	// Logger receives Pebble's logs. Nil discards them.
	Logger *slog.Logger
}

// A Store is a follower's copy of a log: its tree (entry bundles, hash tiles
// and builder state), the accepted signed checkpoint, and the projection of
// its zarlog events. Its read methods are safe for concurrent use; one
// Follower writes it. Writes are durable (fsynced) when they return.
type Store struct {
	db     *pebble.DB
	origin string

	mu     sync.Mutex
	v      view
	next   chan struct{}
	closed bool
}

// A view is what the readers see: the accepted checkpoint and the
// projection's progress.
type view struct {
	note      []byte // nil: no checkpoint accepted yet
	cp        merkle.Checkpoint
	source    string
	state     merkle.State // the stored tree
	projected uint64
	stats     Stats
}

// OpenStore opens (or creates) the store in cfg.Dir. It checks that the store
// belongs to the log of cfg.LogKey and that its records decode.
func OpenStore(cfg StoreConfig) (*Store, error) {
	if cfg.Dir == "" || cfg.LogKey == nil {
		return nil, errors.New("follow: store: Dir and LogKey are required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, err := pebble.Open(cfg.Dir, pebblefs.Options(cfg.FS, log, "follow store", 32<<20, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("follow: opening the store in %s: %w", cfg.Dir, err)
	}
	s := &Store{db: db, origin: cfg.LogKey.Name(), next: make(chan struct{})}
	if err := s.load(cfg.LogKey); err != nil {
		return nil, errors.Join(fmt.Errorf("follow: store %s: %w", cfg.Dir, err), db.Close())
	}
	return s, nil
}

func (s *Store) load(key note.Verifier) error {
	rec, err := s.get(keyLog)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		if err := s.db.Set(keyLog, append([]byte{storeFormat}, s.origin...), pebble.Sync); err != nil {
			return err
		}
	case err != nil:
		return err
	case len(rec) == 0 || rec[0] != storeFormat:
		return fmt.Errorf("log record of %d bytes is not format %d: %w", len(rec), storeFormat, ErrCorrupt)
	case string(rec[1:]) != s.origin:
		return fmt.Errorf("%w: it holds a copy of %q, not %q", ErrStoreMismatch, rec[1:], s.origin)
	}
	var v view
	if n, err := s.get(keyCheckpoint); err == nil {
		cp, err := merkle.Open(n, key)
		if err != nil {
			return fmt.Errorf("%w: its checkpoint does not open with the key %s: %w", ErrStoreMismatch, key.Name(), err)
		}
		v.note, v.cp = n, cp
		src, err := s.get(keySource)
		if err != nil && !errors.Is(err, pebble.ErrNotFound) {
			return err
		}
		v.source = string(src)
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	if b, err := s.get(keyState); err == nil {
		if err := v.state.UnmarshalBinary(b); err != nil {
			return fmt.Errorf("tree state: %w: %w", ErrCorrupt, err)
		}
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	if v.state.Size < v.cp.Size {
		return fmt.Errorf("the stored tree has %d leaves, fewer than its checkpoint's %d: %w", v.state.Size, v.cp.Size, ErrCorrupt)
	}
	if b, err := s.get(keyProjected); err == nil {
		if len(b) != 8 {
			return fmt.Errorf("projection cursor of %d bytes: %w", len(b), ErrCorrupt)
		}
		v.projected = binary.BigEndian.Uint64(b)
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	if v.projected > v.cp.Size {
		return fmt.Errorf("the projection is at leaf %d, beyond the checkpoint's %d: %w", v.projected, v.cp.Size, ErrCorrupt)
	}
	if b, err := s.get(keyStats); err == nil {
		if err := v.stats.UnmarshalBinary(b); err != nil {
			return err
		}
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	s.v = v
	return nil
}

// Close closes the store. Calls after the first return nil.
func (s *Store) Close() error {
	s.mu.Lock()
	closed := s.closed
	s.closed = true
	s.mu.Unlock()
	if closed {
		return nil
	}
	return s.db.Close()
}

// DiskUsage returns the bytes the store's files take (Pebble's tables,
// write-ahead log and other files, obsolete ones not yet deleted included).
func (s *Store) DiskUsage() int64 { return int64(s.db.Metrics().DiskSpaceUsage()) }

// Origin returns the origin of the log the store holds.
func (s *Store) Origin() string { return s.origin }

func (s *Store) get(key []byte) ([]byte, error) {
	v, c, err := s.db.Get(key)
	if err != nil {
		return nil, err
	}
	out := bytes.Clone(v)
	return out, c.Close()
}

func (s *Store) view() view {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.v
}

// update changes the view under the lock and wakes the waiters of Latest.
func (s *Store) update(f func(v *view)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.v)
	close(s.next)
	s.next = make(chan struct{})
}

// Checkpoint returns the accepted signed checkpoint note (verbatim), the
// checkpoint, and where it was read; note is nil if none was accepted yet.
func (s *Store) Checkpoint() (signed []byte, cp merkle.Checkpoint, source string) {
	v := s.view()
	return v.note, v.cp, v.source
}

// Latest returns the accepted checkpoint like Checkpoint, and a channel that
// is closed when the store changes next (a checkpoint accepted, leaves
// projected).
func (s *Store) Latest() (signed []byte, cp merkle.Checkpoint, next <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.v.note, s.v.cp, s.next
}

// State returns the stored tree's state. Its size is at least the accepted
// checkpoint's: the leaves beyond it were fetched for a checkpoint that is
// not verified yet.
func (s *Store) State() merkle.State { return s.view().state }

// Projected returns how many leaves the projection has applied.
func (s *Store) Projected() uint64 { return s.view().projected }

// Stats returns the projection's counters.
func (s *Store) Stats() Stats { return s.view().stats }

// Tally returns the projection's events.Tally and the number of leaves
// projected (publisher.LogStore). The error is always nil.
func (s *Store) Tally() (events.Tally, uint64, error) {
	st := s.Stats()
	return st.Tally, st.Leaves, nil
}

// tileKey is the key of a tile or entry bundle, without its width.
func tileKey(t merkle.Tile) []byte {
	if t.Level == merkle.EntriesLevel {
		return binary.BigEndian.AppendUint64([]byte{keyBundle}, t.Index)
	}
	return binary.BigEndian.AppendUint64([]byte{keyTile, byte(t.Level)}, t.Index)
}

func u64Key(prefix byte, n uint64) []byte { return binary.BigEndian.AppendUint64([]byte{prefix}, n) }

// ReadTiles implements merkle.TileReader over every stored tile, including
// those of leaves fetched for a checkpoint not yet verified. It returns each
// tile as stored (possibly wider than asked); a missing one is an error
// wrapping merkle.ErrNotFound.
func (s *Store) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, err := s.get(tileKey(t))
		if errors.Is(err, pebble.ErrNotFound) {
			return nil, fmt.Errorf("%s: %w", t, merkle.ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("follow: reading %s: %w", t, err)
		}
		out[i] = d
	}
	return out, nil
}

// Verified returns a merkle.TileReader of the tiles of the accepted
// checkpoint's tree only: a tile or bundle that the tree of that size does
// not have, or has narrower than asked, is an error wrapping
// merkle.ErrNotFound. It is what a mirror serves.
func (s *Store) Verified() merkle.TileReader { return verifiedReader{s} }

type verifiedReader struct{ s *Store }

func (r verifiedReader) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	v := r.s.view()
	for _, t := range tiles {
		if v.note == nil {
			return nil, fmt.Errorf("%s: no checkpoint verified yet: %w", t, merkle.ErrNotFound)
		}
		have, ok := merkle.TileAt(t.Level, t.Index, v.cp.Size)
		if !ok || have.Width < t.Width {
			return nil, fmt.Errorf("%s is not in the verified tree of size %d: %w", t, v.cp.Size, merkle.ErrNotFound)
		}
	}
	return r.s.ReadTiles(ctx, tiles)
}

// writeTree stores tiles and the tree state st in one durable batch.
func (s *Store) writeTree(tiles []merkle.TileData, st merkle.State) error {
	b := s.db.NewBatch()
	defer b.Close()
	for _, t := range tiles {
		if err := b.Set(tileKey(t.Tile), t.Data, nil); err != nil {
			return err
		}
	}
	sb, err := st.MarshalBinary()
	if err != nil {
		return err
	}
	if err := b.Set(keyState, sb, nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("follow: storing %d tiles at tree size %d: %w", len(tiles), st.Size, err)
	}
	s.mu.Lock()
	s.v.state = st
	s.mu.Unlock()
	return nil
}

// accept stores a verified checkpoint durably and publishes it.
func (s *Store) accept(signed []byte, cp merkle.Checkpoint, source string) error {
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.Set(keyCheckpoint, signed, nil); err != nil {
		return err
	}
	if err := b.Set(keySource, []byte(source), nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("follow: storing the checkpoint of size %d: %w", cp.Size, err)
	}
	s.update(func(v *view) { v.note, v.cp, v.source = signed, cp, source })
	return nil
}

// Leaves returns the leaves [start, end) of the accepted tree.
func (s *Store) Leaves(ctx context.Context, start, end uint64) ([][]byte, error) {
	v := s.view()
	if end > v.cp.Size || start > end {
		return nil, fmt.Errorf("follow: leaves [%d, %d) of a verified tree of size %d: %w", start, end, v.cp.Size, ErrNotFound)
	}
	return merkle.ReadEntries(ctx, s, start, end, v.cp.Size)
}

// LeavesAt returns the leaves at the given indices of the accepted tree, in
// the order given, reading each entry bundle once.
func (s *Store) LeavesAt(ctx context.Context, indices []uint64) ([][]byte, error) {
	v := s.view()
	bundles := map[uint64][][]byte{}
	out := make([][]byte, len(indices))
	for i, idx := range indices {
		if idx >= v.cp.Size {
			return nil, fmt.Errorf("follow: leaf %d of a verified tree of size %d: %w", idx, v.cp.Size, ErrNotFound)
		}
		n := idx / merkle.TileWidth
		entries, ok := bundles[n]
		if !ok {
			t, _ := merkle.TileAt(merkle.EntriesLevel, n, v.cp.Size)
			d, err := s.ReadTiles(ctx, []merkle.Tile{t})
			if err != nil {
				return nil, err
			}
			p, err := merkle.BundlePrefix(d[0], t.Width)
			if err != nil {
				return nil, fmt.Errorf("follow: stored %s: %w", t, err)
			}
			if entries, err = merkle.ParseBundle(p); err != nil {
				return nil, fmt.Errorf("follow: stored %s: %w", t, err)
			}
			bundles[n] = entries
		}
		out[i] = entries[idx%merkle.TileWidth]
	}
	return out, nil
}
