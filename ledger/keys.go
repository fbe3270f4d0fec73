package ledger

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// The Pebble key layout. Every key starts with one ASCII byte naming its
// table; numbers are big-endian so keys sort in index order. README.md has
// the same table with the reasons.
//
//	log (the source of truth; authenticated by the tree, except "a"):
//	  'e' N:u64             entry bundle N, once full, as formats 6 and 7 wrote it
//	                        (tlog-tiles); a format-5 store's growing bundle, as it was
//	                        when the store was upgraded. Format 8 writes none
//	  'p' N:u64 S:u8        entries S.. of entry bundle N, as a bundle's bytes: the
//	                        entries a group appended (bundle.go); the bundle is 'e' N,
//	                        if any, then its pieces
//	  't' L:u8 N:u64        hash tile L/N, the growing one (tlog-tiles)
//	  'a' I:u64             append time of the group whose first leaf is I: i64 Unix ns
//	  'm' "state"           merkle.State of the stored tree
//	  'm' "checkpoint"      the last signed checkpoint note, as published
//	  'm' "format"          the store format version (u8 9) and the origin
//	projections (derived from the log; Rebuild recreates them byte for byte, but for
//	where it cuts a game's history into chunks):
//	  'd' E 0x00 id         dedup, by (emitter, event id): leaf index u64 ‖ leaf hash [32],
//	                        for the ids that are not their event's canonical id
//	                        (events.CanonicalID): those are found through their game's
//	                        leaves, and a game is its committing emitter's
//	  ('i' id               the dedup index of format 3, by id alone; Open moves it to 'd')
//	  'g' game              0xff ‖ N:u64 ‖ the game's head: N is the game's number, the
//	                        leaf index of its first event (its commit), and the head what
//	                        its commit and set-up events set (events.Game.AppendHead),
//	                        written when the game begins and when one of them changes it
//	                        (events.SameHead); formats 7 and 8: the head alone; format 6
//	                        and before: the game's state without its history, version 2
//	  'l' N:u64             the live part of game number N: status, position, pending
//	                        roll, end... (events.Game.AppendLive), rewritten at each of
//	                        its events; formats 7 and 8: 'l' game
//	  'h' N:u64 I:u64       a chunk of game number N's history, from its leaf I on
//	                        (AppendHistory); formats 3 to 8: 'h' game 0x00 I:u64
//	                        A game's number grows with the log, so the games in play
//	                        have their live parts and new chunks in a narrow, recent
//	                        range of keys, apart from the finished games' (compactions
//	                        do not rewrite those), and each key is 9 or 17 bytes where
//	                        a game id is up to 128 (36 in the benchmark)
//	  'f' I:u64             game finished by leaf I: status u8 ‖ game id
//	  'o' E                 emitter E's open games: uvarint count ‖ uvarint bytes (events.Game.Size)
//	  'm' "stats"           Stats, MarshalBinary
//	  'm' "rebuild"         present while a Rebuild is unfinished
//	  'm' "split-heads"     present while Open splits a format-6 store's game heads
//	                        (migrateHeads): the format record says 7 from its first batch
//	  'm' "game-numbers"    present while Open moves a format-8 store's live parts and
//	                        history chunks to their game's number (migrateGameNumbers):
//	                        the format record says 9 from its first batch
//	  'm' "legacy-ids"      present if an event took another's canonical id (before format 3)
//	operator data (not derived from the log):
//	  'r' S:u64             rejected input S (Rejection, MarshalBinary)
//	  'y' E 0x00 id 0x00 S:u64  by-(emitter, id) index of the rejected store (empty value)
//	  ('x' id 0x00 S:u64    the by-id index of older versions; Open deletes it)
//	  'm' "rejected"        the rejected store's counters
const (
	prefixBundle     = 'e'
	prefixPiece      = 'p'
	prefixTile       = 't'
	prefixTime       = 'a'
	prefixMeta       = 'm'
	prefixDedup      = 'd'
	prefixGame       = 'g'
	prefixLive       = 'l'
	prefixHistory    = 'h'
	prefixFinished   = 'f'
	prefixOpen       = 'o'
	prefixRejected   = 'r'
	prefixRejectedID = 'y'
	// prefixRejectedIDv1 is the by-id index of rejected-store version 1,
	// without the emitter: migrateRejected deletes it.
	prefixRejectedIDv1 = 'x'
	// prefixDedupV3 is the dedup index of store format 3, by event id
	// alone: migrateDedup moves its records to prefixDedup.
	prefixDedupV3 = 'i'
)

var (
	keyState      = []byte("mstate")
	keyCheckpoint = []byte("mcheckpoint")
	keyFormat     = []byte("mformat")
	keyStats      = []byte("mstats")
	keyRebuild    = []byte("mrebuild")
	keySplitHeads = []byte("msplit-heads")
	keyGameNums   = []byte("mgame-numbers")
	keyLegacyIDs  = []byte("mlegacy-ids")
	keyRejMeta    = []byte("mrejected")
)

// storeFormat is the first byte of the "format" record. Format 1 kept
// each game's state whole under 'g'; format 2 kept a dedup record for every
// event id, the canonical ones too. Open rebuilds the projections of a
// format-1 or format-2 store into format 4's (the log itself is the same).
// Format 3 deduplicated event ids across the whole log, under 'i' id; format
// 4 deduplicates them per emitter, under 'd' emitter 0x00 id: Open moves a
// format-3 store's records (migrateDedup). Format 5 counts each emitter's
// open games and their bytes, under 'o' emitter: Open counts a format-4
// store's (migrateOpenGames). Format 6 stores the growing entry bundle in
// pieces, a group's entries each (bundle.go): Open marks a format-5 store
// format 6, whose growing bundle is then its 'e' record and pieces after it.
// Format 7 splits each game's head (format 6's: its state without its
// history, rewritten at each of its events) into the head its set-up writes
// once ('g') and the live part each event rewrites ('l'): Open rewrites a
// format-6 store's heads (migrateHeads), under the format record 7 and the
// marker keySplitHeads until the last is split, so that an older version
// refuses the store from the first split head on. Format 8 keeps a full
// entry bundle as the pieces its groups wrote, where formats 6 and 7 wrote
// it again whole under 'e' and deleted them (bundle.go): Open marks a
// format-7 store format 8 (after the split of a format-6 store's heads),
// whose full bundles stay 'e' records, so that an older version refuses it:
// format 7's readers would read it (they scan the pieces after a missing
// 'e' record), but an older version opens only the layouts it wrote.
// Format 9 keys each game's live part and history chunks by the game's
// number (the leaf index of its first event) instead of its id, and its
// head record says the number: Open rewrites a format-8 store's games
// (migrateGameNumbers), under the format record 9 and the marker
// keyGameNums until the last is moved, so that an older version refuses
// the store from the first moved game on.
const storeFormat = 9

// An openCount is an emitter's open games: how many, and the bytes of their
// states (events.Game.Size).
type openCount struct {
	Games, Bytes uint64
}

func (o openCount) marshal() []byte {
	return binary.AppendUvarint(binary.AppendUvarint(nil, o.Games), o.Bytes)
}

func parseOpenCount(b []byte) (openCount, error) {
	var o openCount
	g, n := binary.Uvarint(b)
	if n <= 0 {
		return o, fmt.Errorf("open-games record %x: %w", b, ErrCorrupt)
	}
	by, m := binary.Uvarint(b[n:])
	if m <= 0 || n+m != len(b) || !slices.Equal(b, openCount{g, by}.marshal()) {
		return o, fmt.Errorf("open-games record %x: %w", b, ErrCorrupt)
	}
	return openCount{g, by}, nil
}

// appendDedupKey appends the dedup index's key of (emitter, id) to b. An
// emitter cannot hold 0x00 (events.ValidEmitter), so the key is unique.
func appendDedupKey(b []byte, emitter, id string) []byte {
	return append(append(append(append(b, prefixDedup), emitter...), 0), id...)
}

// scopedID is the sequencer's in-memory key of an event id: the emitter,
// 0x00, the id (the dedup index's key without its prefix).
func scopedID(emitter, id string) string { return emitter + "\x00" + id }

// appendScopedID appends the bytes of scopedID(emitter, id) to b: a map
// indexed with string(appendScopedID(...)) is looked up without a copy.
func appendScopedID(b []byte, emitter, id string) []byte {
	return append(append(append(b, emitter...), 0), id...)
}

// numberedHead is the first byte of a game's head record ('g' game) in
// store format 9: the game's number and its head follow. A head of formats
// 3 to 8 begins with its version, 2 or 3 (events.Game.AppendHead), so the
// head record says in which layout a game's records are: a format-8 store
// has both while Open moves its games (migrateGameNumbers).
const numberedHead = 0xff

// maxGameNumber bounds a game's number (its first leaf's index): the first
// byte of a number's key is 0x00, which no game id holds
// (events.ValidGameID), so the keys of both layouts never meet while Open
// moves a format-8 store's games. A log holds far fewer leaves.
const maxGameNumber = 1 << 56

// appendHeadRecord appends to b the start of a game's head record in
// store format 9, numberedHead ‖ n: its head follows
// (events.Game.AppendHead).
func appendHeadRecord(b []byte, n uint64) []byte {
	return binary.BigEndian.AppendUint64(append(b, numberedHead), n)
}

// A gamePlace is where a game's live part and history chunks are, as its
// head record ('g' game) says: by its number in store format 9, by its id
// in formats 3 to 8.
type gamePlace struct {
	id       string
	n        uint64 // the game's number, if numbered
	numbered bool
}

// parseHeadRecord splits the head record of game id (a 'g' value) into
// where the game's other records are and its head. A format-9 record
// must hold a number below maxGameNumber and a head of format 7 on (not a
// format-6 state: oldHead); the head itself is not checked here.
func parseHeadRecord(id string, v []byte) (gamePlace, []byte, error) {
	if len(v) == 0 || v[0] != numberedHead {
		return gamePlace{id: id}, v, nil
	}
	if len(v) < 10 {
		return gamePlace{}, nil, fmt.Errorf("head record of game %q is %d bytes: %w", id, len(v), ErrCorrupt)
	}
	n := binary.BigEndian.Uint64(v[1:9])
	if n >= maxGameNumber || oldHead(v[9:]) || v[9] == numberedHead {
		return gamePlace{}, nil, fmt.Errorf("head record of game %q: number %d, head version %d: %w", id, n, v[9], ErrCorrupt)
	}
	return gamePlace{id: id, n: n, numbered: true}, v[9:], nil
}

// liveKey returns the key of the game's live part.
func (p gamePlace) liveKey() []byte {
	if p.numbered {
		return u64Key(prefixLive, p.n)
	}
	return strKey(prefixLive, p.id)
}

// historyBounds returns the bounds of the keys of the game's history
// chunks: lo is their common prefix, and every chunk key is lo ‖ I:u64.
func (p gamePlace) historyBounds() (lo, hi []byte) {
	if p.numbered {
		return u64Key(prefixHistory, p.n), u64Key(prefixHistory, p.n+1) // n+1 <= maxGameNumber
	}
	lo = append(append([]byte{prefixHistory}, p.id...), 0)
	return lo, append(lo[:len(lo)-1:len(lo)-1], 1)
}

// appendLiveKey appends the key of game number n's live part to b.
func appendLiveKey(b []byte, n uint64) []byte {
	return binary.BigEndian.AppendUint64(append(b, prefixLive), n)
}

// appendHistoryKey appends the key of the chunk of game number n's history
// that starts at leaf first to b. The chunks of one game are the keys that
// start with 'h' n, in the order they were written.
func appendHistoryKey(b []byte, n, first uint64) []byte {
	return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(append(b, prefixHistory), n), first)
}

// tileKey returns the key of a tile or entry bundle, independent of its
// width: one growing record per (level, index), so serving any width is one
// lookup (merkle.TilePrefix, merkle.BundlePrefix).
func tileKey(t merkle.Tile) []byte {
	if t.Level == merkle.EntriesLevel {
		return binary.BigEndian.AppendUint64([]byte{prefixBundle}, t.Index)
	}
	return binary.BigEndian.AppendUint64([]byte{prefixTile, byte(t.Level)}, t.Index)
}

func u64Key(prefix byte, n uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{prefix}, n)
}

func strKey(prefix byte, s string) []byte {
	return append([]byte{prefix}, s...)
}

// prefixEnd returns the first key after every key starting with prefix.
func prefixEnd(prefix byte) []byte { return []byte{prefix + 1} }

// A dedupRecord is the dedup index's value for one event id.
type dedupRecord struct {
	Index    uint64
	LeafHash merkle.Hash
}

const dedupSize = 8 + merkle.HashSize

func (d dedupRecord) marshal() []byte { return d.append(make([]byte, 0, dedupSize)) }

func (d dedupRecord) append(b []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, d.Index)
	return append(b, d.LeafHash[:]...)
}

func parseDedup(b []byte) (dedupRecord, error) {
	if len(b) != dedupSize {
		return dedupRecord{}, fmt.Errorf("dedup record is %d bytes, want %d: %w", len(b), dedupSize, ErrCorrupt)
	}
	return dedupRecord{Index: binary.BigEndian.Uint64(b), LeafHash: merkle.Hash(b[8:])}, nil
}

func marshalTime(t time.Time) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano()))
}

func parseTime(b []byte) (time.Time, error) {
	if len(b) != 8 {
		return time.Time{}, fmt.Errorf("append time is %d bytes, want 8: %w", len(b), ErrCorrupt)
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(b))).UTC(), nil
}

// finished records map a game's status to one byte.
var finishedStatus = []events.Status{events.StatusOpen, events.StatusEnded, events.StatusVerified, events.StatusFailed}

func marshalFinished(st events.Status, game string) []byte {
	var c byte
	for i, s := range finishedStatus {
		if s == st {
			c = byte(i)
		}
	}
	return append([]byte{c}, game...)
}

func parseFinished(key, val []byte) (events.FinishedGame, error) {
	if len(key) != 9 || len(val) < 2 || int(val[0]) >= len(finishedStatus) {
		return events.FinishedGame{}, fmt.Errorf("finished-game record %x = %x: %w", key, val, ErrCorrupt)
	}
	return events.FinishedGame{Index: binary.BigEndian.Uint64(key[1:]), Status: finishedStatus[val[0]], Game: string(val[1:])}, nil
}

// loadGame reads a game's state from r (the database or a snapshot): its
// head record, its live part and its history chunks, where the head record
// says they are (parseHeadRecord). A head of format 6 and before (version
// 2, during an upgrade) has no live part. A numbered game's first leaf must
// be its number. It returns nil, nil for a game with no events.
func loadGame(r pebble.Reader, id string) (*events.Game, error) {
	rec, err := get(r, strKey(prefixGame, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the state of game %q: %w", id, err)
	}
	at, head, err := parseHeadRecord(id, rec)
	if err != nil {
		return nil, err
	}
	var live []byte
	if !oldHead(head) {
		live, err = get(r, at.liveKey())
		if errors.Is(err, pebble.ErrNotFound) {
			return nil, fmt.Errorf("game %q has a head but no live part: %w", id, ErrCorrupt)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the live part of game %q: %w", id, err)
		}
	}
	lo, hi := at.historyBounds()
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, fmt.Errorf("reading the history of game %q: %w", id, err)
	}
	var chunks [][]byte
	for it.First(); it.Valid(); it.Next() {
		chunks = append(chunks, append([]byte(nil), it.Value()...))
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("reading the history of game %q: %w", id, err)
	}
	g := new(events.Game)
	if err := g.UnmarshalSplit(head, live, chunks); err != nil {
		return nil, fmt.Errorf("state of game %q: %w: %w", id, ErrCorrupt, err)
	}
	if f, ok := g.FirstLeaf(); at.numbered && (!ok || f != at.n) {
		return nil, fmt.Errorf("game %q is number %d, but its first leaf is %d (%v): %w", id, at.n, f, ok, ErrCorrupt)
	}
	return g, nil
}

// oldHead reports whether head is a head of store format 6 or before: a
// game's state without its history (events.Game.UnmarshalBinary's version
// 2), which has no live part.
func oldHead(head []byte) bool { return len(head) > 0 && head[0] == 2 }
