package publisher

// This file is the bundle store: the proof bundles the Bundler has built,
// kept in a Pebble database of their own. The store is derived from the log
// and holds nothing else: deleting it (or Reset) and running the Bundler
// again rebuilds it. It is separate from the ledger's database, so the
// publisher cannot change the log.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/internal/pebblefs"
)

// ErrNoBundle is returned by Store.Bundle for a game the store has no
// bundle of.
var ErrNoBundle = errors.New("no proof bundle")

// ErrStoreMismatch is returned by OpenStore when the store belongs to
// another log (another origin).
var ErrStoreMismatch = errors.New("bundle store belongs to another log")

// Keys of the bundle store. Every key starts with one ASCII byte naming its
// table; numbers are big-endian.
//
//	b game            the game's proof bundle (canonical JSON)
//	o I:u64           game id: the game whose final event is leaf I (publication order)
//	g game            the game's GameRow (JSON): its summary and its dice by seat
//	s seal:5 I:u64    game id: a game with this seal code (per-roll-v1: one per roll)
//	p n:1 emitter:n seat:16 I:u64
//	                  game id: a tavlarena-v1 game that emitter logged with this seat id
//	q seat:16 emitter (empty): emitter logged a game with this seat id
//	m cursor          u64: every finished game whose final event's index is below it is decided
//	m witnessed       u64: every stored bundle of a game whose final event's index is below it is
//	                  at a witnessed checkpoint (absent: 0)
//	m origin          the origin of the log the bundles belong to
//	m indexes         the version of the g, s, p and q tables ("2"); another: rebuilt on open
//
// A seat id belongs to the emitter that logged it: the p table is by
// emitter first, so that the games another emitter logs with the same id
// (seat ids are public in every bundle) are never among them.
const (
	keyBundle   = 'b'
	keyOrder    = 'o'
	keyRow      = 'g'
	keySeal     = 's'
	keySeat     = 'p'
	keyEmitters = 'q'
)

var (
	keyCursor    = []byte("mcursor")
	keyWitnessed = []byte("mwitnessed")
	keyOrigin    = []byte("morigin")
	keyIndexes   = []byte("mindexes")
)

// indexesVersion is the version of the row, seal and seat tables. A store
// with another (made before the tables existed, or with version 1's seat
// table of every emitter's games together, or its rows without their
// emitter) gets them rebuilt from its bundles when it is opened.
const indexesVersion = "2"

// indexTables are the tables derived from the bundles (rebuilt by
// buildIndexes), as key ranges.
var indexTables = [][2][]byte{{{keyRow}, {keyRow + 1}}, {{keySeal}, {keySeal + 1}}, {{keySeat}, {keySeat + 1}}, {{keyEmitters}, {keyEmitters + 1}}}

// StoreConfig configures a Store.
type StoreConfig struct {
	// Dir is the store's Pebble directory; created if missing. Required.
	Dir string
	// Origin is the log's origin: a new store records it, an existing one
	// must have the same (ErrStoreMismatch). Required.
	Origin string
	// FS is the file system. Nil means the operating system's.
	FS vfs.FS
	// Logger receives Pebble's logs. Nil discards them.
	Logger *slog.Logger
}

// A Store holds proof bundles by game id, in the order the games finished,
// with the Bundler's cursor. Its methods are safe for concurrent use.
// Writes are durable (fsynced) when they return.
type Store struct {
	db *pebble.DB
}

// A StoredBundle is one game's bundle as the Bundler stores it.
type StoredBundle struct {
	Index  uint64 // the leaf index of the game's final event
	Game   string
	Bundle []byte
}

// A BundleRef names a stored bundle, in publication order.
type BundleRef struct {
	Index uint64 // the leaf index of the game's final event
	Game  string
}

// OpenStore opens (or creates) the bundle store in cfg.Dir.
func OpenStore(cfg StoreConfig) (*Store, error) {
	if cfg.Dir == "" || cfg.Origin == "" {
		return nil, errors.New("publisher: bundle store: Dir and Origin are required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, err := pebble.Open(cfg.Dir, pebblefs.Options(cfg.FS, log, "bundle store", 4<<20, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("publisher: opening the bundle store in %s: %w", cfg.Dir, err)
	}
	s := &Store{db: db}
	origin, err := s.get(keyOrigin)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		if err := db.Set(keyOrigin, []byte(cfg.Origin), pebble.Sync); err != nil {
			return nil, errors.Join(fmt.Errorf("publisher: bundle store: %w", err), db.Close())
		}
	case err != nil:
		return nil, errors.Join(fmt.Errorf("publisher: bundle store: %w", err), db.Close())
	case string(origin) != cfg.Origin:
		return nil, errors.Join(fmt.Errorf("publisher: %w: %s holds bundles of %q, not %q", ErrStoreMismatch, cfg.Dir, origin, cfg.Origin), db.Close())
	}
	if err := s.buildIndexes(); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return s, nil
}

// buildIndexes builds the seal and seat tables from the stored bundles if
// the store does not have them yet.
func (s *Store) buildIndexes() error {
	v, err := s.get(keyIndexes)
	if err == nil && string(v) == indexesVersion {
		return nil
	}
	if err != nil && !errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("publisher: bundle store: %w", err)
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, r := range indexTables {
		if err := b.DeleteRange(r[0], r[1], nil); err != nil {
			return err
		}
	}
	for from := uint64(0); ; {
		refs, err := s.List(context.Background(), from, 1000)
		if err != nil {
			return fmt.Errorf("publisher: rebuilding the bundle store's indexes: %w", err)
		}
		for _, ref := range refs {
			bundle, err := s.Bundle(context.Background(), ref.Game)
			if err != nil {
				return fmt.Errorf("publisher: rebuilding the bundle store's indexes: %w", err)
			}
			if err := index(b, StoredBundle{Index: ref.Index, Game: ref.Game, Bundle: bundle}); err != nil {
				return fmt.Errorf("publisher: rebuilding the bundle store's indexes: %w", err)
			}
		}
		if len(refs) < 1000 {
			break
		}
		from = refs[len(refs)-1].Index + 1
	}
	if err := b.Set(keyIndexes, []byte(indexesVersion), nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("publisher: rebuilding the bundle store's indexes: %w", err)
	}
	return nil
}

// index adds a bundle's rows of the game, seal and seat tables to b.
func index(b *pebble.Batch, x StoredBundle) error {
	sum, ev, err := Summarize(x.Game, x.Bundle)
	if err != nil {
		return err
	}
	row, err := json.Marshal(GameRow{GameSummary: sum, Index: x.Index, Dice: DiceOf(sum, ev)})
	if err != nil {
		return err
	}
	if err := b.Set(append([]byte{keyRow}, x.Game...), row, nil); err != nil {
		return err
	}
	for _, seal := range sum.Seals {
		k := binary.BigEndian.AppendUint64(append([]byte{keySeal}, seal[:]...), x.Index)
		if err := b.Set(k, []byte(x.Game), nil); err != nil {
			return err
		}
	}
	if sum.HasSeats && events.ValidEmitter(sum.Emitter) {
		for i, seat := range sum.Seats {
			if i == 1 && seat == sum.Seats[0] {
				break
			}
			k := binary.BigEndian.AppendUint64(seatPrefix(sum.Emitter, seat), x.Index)
			if err := b.Set(k, []byte(x.Game), nil); err != nil {
				return err
			}
			if err := b.Set(append(append([]byte{keyEmitters}, seat[:]...), sum.Emitter...), nil, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// seatPrefix is the prefix of the p table's keys of one emitter's seat id.
func seatPrefix(emitter string, seat dice.UUID) []byte {
	k := make([]byte, 0, 2+len(emitter)+16+8)
	k = append(append(append(k, keySeat, byte(len(emitter))), emitter...), seat[:]...)
	return k
}

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

func (s *Store) get(key []byte) ([]byte, error) {
	v, c, err := s.db.Get(key)
	if err != nil {
		return nil, err
	}
	out := bytes.Clone(v)
	return out, c.Close()
}

func bundleKey(game string) []byte { return append([]byte{keyBundle}, game...) }

func orderKey(i uint64) []byte { return binary.BigEndian.AppendUint64([]byte{keyOrder}, i) }

// Bundle returns the stored proof bundle of game, or an error wrapping
// ErrNoBundle.
func (s *Store) Bundle(ctx context.Context, game string) ([]byte, error) {
	b, err := s.get(bundleKey(game))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("game %q: %w", game, ErrNoBundle)
	}
	if err != nil {
		return nil, fmt.Errorf("publisher: reading the bundle of %q: %w", game, err)
	}
	return b, nil
}

// Cursor returns the Bundler's cursor: every finished game whose final
// event has a leaf index below it has been decided (its bundle stored, or
// skipped with an error that was logged). It is 0 for a new store.
func (s *Store) Cursor() (uint64, error) { return s.u64(keyCursor, "bundle cursor") }

// WitnessedCursor returns the Bundler's witnessed cursor: every stored
// bundle of a game whose final event has a leaf index below it is at a
// witnessed checkpoint (built at one, or replaced by Upgrade). It is never
// above Cursor, and 0 for a new store or a log without witnesses.
func (s *Store) WitnessedCursor() (uint64, error) { return s.u64(keyWitnessed, "witnessed cursor") }

func (s *Store) u64(key []byte, what string) (uint64, error) {
	v, err := s.get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("publisher: reading the %s: %w", what, err)
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("publisher: the %s has %d bytes, want 8", what, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Add stores bundles and moves the cursor to next, in one durable batch.
// A bundle of a game that already has one is not replaced (the Bundler
// never builds one twice; Reset starts over). next must not be below the
// current cursor, and every bundle's Index must be in [cursor, next). Add
// is for one writer (the Bundler): calls must not overlap.
func (s *Store) Add(ctx context.Context, next uint64, bundles []StoredBundle) error {
	return s.add(ctx, next, bundles, false)
}

// AddWitnessed is Add of bundles at a witnessed checkpoint: the witnessed
// cursor, which must be the cursor, moves to next too.
func (s *Store) AddWitnessed(ctx context.Context, next uint64, bundles []StoredBundle) error {
	return s.add(ctx, next, bundles, true)
}

func (s *Store) add(ctx context.Context, next uint64, bundles []StoredBundle, witnessed bool) error {
	cur, err := s.Cursor()
	if err != nil {
		return err
	}
	if next < cur {
		return fmt.Errorf("publisher: bundle cursor %d would move back from %d", next, cur)
	}
	b := s.db.NewBatch()
	defer b.Close()
	if witnessed {
		w, err := s.WitnessedCursor()
		if err != nil {
			return err
		}
		if w != cur {
			return fmt.Errorf("publisher: witnessed bundles added at cursor %d, but the witnessed cursor is %d", cur, w)
		}
		if err := b.Set(keyWitnessed, binary.BigEndian.AppendUint64(nil, next), nil); err != nil {
			return err
		}
	}
	for _, x := range bundles {
		if x.Index < cur || x.Index >= next {
			return fmt.Errorf("publisher: bundle of %q at index %d is outside [%d, %d)", x.Game, x.Index, cur, next)
		}
		if _, err := s.get(bundleKey(x.Game)); err == nil {
			continue
		} else if !errors.Is(err, pebble.ErrNotFound) {
			return fmt.Errorf("publisher: bundle store: %w", err)
		}
		if err := b.Set(bundleKey(x.Game), x.Bundle, nil); err != nil {
			return err
		}
		if err := b.Set(orderKey(x.Index), []byte(x.Game), nil); err != nil {
			return err
		}
		if err := index(b, x); err != nil {
			return fmt.Errorf("publisher: indexing the bundle of %q: %w", x.Game, err)
		}
	}
	if err := b.Set(keyCursor, binary.BigEndian.AppendUint64(nil, next), nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("publisher: storing %d bundles: %w", len(bundles), err)
	}
	return nil
}

// Upgrade replaces stored bundles by the same games' bundles at a witnessed
// checkpoint and moves the witnessed cursor to next, in one durable batch.
// Every bundle's game must have a stored bundle, its Index in [witnessed
// cursor, next), and next must be in [witnessed cursor, cursor]. It is for
// the Bundler, the store's one writer.
func (s *Store) Upgrade(ctx context.Context, next uint64, bundles []StoredBundle) error {
	cur, err := s.Cursor()
	if err != nil {
		return err
	}
	w, err := s.WitnessedCursor()
	if err != nil {
		return err
	}
	if next < w || next > cur {
		return fmt.Errorf("publisher: witnessed cursor %d outside [%d, %d]", next, w, cur)
	}
	b := s.db.NewBatch()
	defer b.Close()
	for _, x := range bundles {
		if x.Index < w || x.Index >= next {
			return fmt.Errorf("publisher: witnessed bundle of %q at index %d is outside [%d, %d)", x.Game, x.Index, w, next)
		}
		g, err := s.get(orderKey(x.Index))
		if err != nil || string(g) != x.Game {
			return fmt.Errorf("publisher: upgrading the bundle of %q at index %d: the store has no bundle of it there (%v)", x.Game, x.Index, err)
		}
		if err := b.Set(bundleKey(x.Game), x.Bundle, nil); err != nil {
			return err
		}
		if err := index(b, x); err != nil {
			return fmt.Errorf("publisher: indexing the bundle of %q: %w", x.Game, err)
		}
	}
	if err := b.Set(keyWitnessed, binary.BigEndian.AppendUint64(nil, next), nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("publisher: storing %d witnessed bundles: %w", len(bundles), err)
	}
	return nil
}

// List returns up to limit stored bundles whose game's final event has a
// leaf index ≥ from, in log order. The next page starts at the last Index
// + 1.
func (s *Store) List(ctx context.Context, from uint64, limit int) ([]BundleRef, error) {
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: orderKey(from), UpperBound: []byte{keyOrder + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []BundleRef
	for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
		k := it.Key()
		if len(k) != 9 {
			return out, fmt.Errorf("publisher: bundle store: order key of %d bytes", len(k))
		}
		out = append(out, BundleRef{Index: binary.BigEndian.Uint64(k[1:]), Game: string(it.Value())})
	}
	return out, it.Error()
}

// Reset deletes every bundle and the cursors, durably: the Bundler then
// builds every finished game's bundle again, at the latest checkpoint (at
// the latest witnessed one where it covers the game).
func (s *Store) Reset(ctx context.Context) error {
	b := s.db.NewBatch()
	defer b.Close()
	for _, r := range append([][2][]byte{{{keyBundle}, {keyBundle + 1}}, {{keyOrder}, {keyOrder + 1}}}, indexTables...) {
		if err := b.DeleteRange(r[0], r[1], nil); err != nil {
			return err
		}
	}
	if err := b.Delete(keyCursor, nil); err != nil {
		return err
	}
	if err := b.Delete(keyWitnessed, nil); err != nil {
		return err
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("publisher: resetting the bundle store: %w", err)
	}
	return nil
}

// Row returns the stored row of game, or an error wrapping ErrNoBundle.
func (s *Store) Row(ctx context.Context, game string) (GameRow, error) {
	v, err := s.get(append([]byte{keyRow}, game...))
	if errors.Is(err, pebble.ErrNotFound) {
		return GameRow{}, fmt.Errorf("game %q: %w", game, ErrNoBundle)
	}
	if err != nil {
		return GameRow{}, fmt.Errorf("publisher: reading the row of %q: %w", game, err)
	}
	var r GameRow
	if err := json.Unmarshal(v, &r); err != nil {
		return GameRow{}, fmt.Errorf("publisher: the row of %q: %w", game, err)
	}
	return r, nil
}

// Recent returns up to limit stored bundles, the game that finished last
// first.
func (s *Store) Recent(ctx context.Context, limit int) ([]BundleRef, error) {
	return s.scanBack(ctx, []byte{keyOrder}, limit)
}

// FindSeal returns up to limit games that have seal as a seal code, the
// game that finished last first. A seal code is 40 bits: in a log of about
// a million games, two games share one by chance, and both are returned.
func (s *Store) FindSeal(ctx context.Context, seal dice.Seal, limit int) ([]BundleRef, error) {
	return s.scanBack(ctx, append([]byte{keySeal}, seal[:]...), limit)
}

// GamesOf returns up to limit tavlarena-v1 games that emitter logged with
// seat among their seat ids, the game that finished last first. Games of
// other emitters with the same seat id are not among them.
func (s *Store) GamesOf(ctx context.Context, emitter string, seat dice.UUID, limit int) ([]BundleRef, error) {
	if !events.ValidEmitter(emitter) {
		return nil, nil
	}
	return s.scanBack(ctx, seatPrefix(emitter, seat), limit)
}

// EmittersOf returns up to limit emitters that logged a tavlarena-v1 game
// with seat among its seat ids, in the order of their ids.
func (s *Store) EmittersOf(ctx context.Context, seat dice.UUID, limit int) ([]string, error) {
	prefix := append([]byte{keyEmitters}, seat[:]...)
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []string
	for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
		e := string(it.Key()[len(prefix):])
		if !events.ValidEmitter(e) {
			return out, fmt.Errorf("publisher: bundle store: an emitter key of %d bytes", len(it.Key()))
		}
		out = append(out, e)
	}
	return out, it.Error()
}

// scanBack lists the rows under prefix whose keys end in a leaf index,
// from the last.
func (s *Store) scanBack(ctx context.Context, prefix []byte, limit int) ([]BundleRef, error) {
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []BundleRef
	for ok := it.Last(); ok && len(out) < limit; ok = it.Prev() {
		k := it.Key()
		if len(k) != len(prefix)+8 {
			return out, fmt.Errorf("publisher: bundle store: key of %d bytes under %q", len(k), prefix[:1])
		}
		out = append(out, BundleRef{Index: binary.BigEndian.Uint64(k[len(prefix):]), Game: string(it.Value())})
	}
	return out, it.Error()
}

// prefixEnd returns the first key after every key that starts with prefix
// (a prefix of a table's one-byte name at least, so never all 0xff).
func prefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	panic("publisher: bundle store: a prefix of only 0xff bytes")
}
