package sdk

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/merkle"
)

// SnapshotFormat is the "format" member of a game snapshot.
const SnapshotFormat = "zarlog-sdk-game-v1"

// MaxSnapshotSize is the largest snapshot ParseSnapshot reads (64 MiB).
const MaxSnapshotSize = 64 << 20

// maxSnapshotNote bounds a receipt's checkpoint in a snapshot (a signed note
// with cosignatures; merkle.MaxNoteSize).
const maxSnapshotNote = 64 << 10

// ErrSnapshot is wrapped by every error of ParseSnapshot, FormatSnapshot and
// the Resume functions about the snapshot itself.
var ErrSnapshot = errors.New("bad game snapshot")

// A Snapshot is a game's state as a backend persists it to resume the game
// after its own restart: every event of the game so far, how many of them
// JetStream has acknowledged, the game's secrets and the commit's receipt.
//
// A snapshot holds secrets — the seed of a game that is not revealed, a
// pending per-roll-v1 seed, withheld contributions — that decide the dice:
// store it as you store keys (encrypted at rest, not in logs, not sent to
// players) and never log it. String and the games' String, GoString and
// LogValue never print them.
//
// Its encoding (FormatSnapshot, ParseSnapshot) is one canonical JSON object
// (docs/SCHEMES.md §1):
//
//	{"acked": int,              events[:acked] are acknowledged by JetStream
//	 "events": [string, ...],   every event of the game, seq 0 first, each its canonical JSON
//	 "format": "zarlog-sdk-game-v1",
//	 "held": [hex32|null, hex32|null],   tavlarena-v1 only: contributions withheld (omitted when none)
//	 "local": bool,             a device's game (nothing published; acked is then every event)
//	 "receipt": {"checkpoint": string, "index": int, "proof": [base64, ...]},   the commit's receipt, once held
//	 "seed": hex32}             per-game schemes: the game's seed; per-roll-v1: the pending roll's
//
// ParseSnapshot checks the encoding; Backend.Resume* replay the events
// through the same state machine as the ledger and check every secret against
// the commitments they are bound to.
type Snapshot struct {
	Events  [][]byte
	Acked   int
	Local   bool
	Seed    *[32]byte
	Held    [2]*[32]byte
	Receipt *SnapshotReceipt
}

// A SnapshotReceipt is the commit's receipt kept in a snapshot: its leaf
// index, signed checkpoint and inclusion proof (the leaf is the snapshot's
// first event). Proof is nil in the snapshots of SDK versions whose
// receipts held no proof (no "proof" member): Resume then drops the receipt
// and asks the ledger again. An empty proof (a tree of one leaf) is a
// non-nil empty slice ("proof": []).
type SnapshotReceipt struct {
	Index      uint64
	Checkpoint []byte
	Proof      []merkle.Hash
}

// String describes the snapshot without its secrets.
func (s *Snapshot) String() string {
	return fmt.Sprintf("snapshot of %d events (%d acknowledged, secrets elided)", len(s.Events), s.Acked)
}

// GoString describes the snapshot without its secrets.
func (s *Snapshot) GoString() string { return s.String() }

func snapErr(format string, args ...any) error {
	return fmt.Errorf("sdk: %w: "+format, append([]any{ErrSnapshot}, args...)...)
}

// FormatSnapshot encodes s as canonical JSON. It refuses what ParseSnapshot
// would refuse, so ParseSnapshot(FormatSnapshot(s)) gives back s.
func FormatSnapshot(s *Snapshot) ([]byte, error) {
	o := cjson.Object{{Key: "acked", Value: int64(s.Acked)}}
	evs := make([]any, len(s.Events))
	for i, e := range s.Events {
		evs[i] = string(e)
	}
	o = append(o, cjson.Member{Key: "events", Value: evs}, cjson.Member{Key: "format", Value: SnapshotFormat})
	if s.Held[0] != nil || s.Held[1] != nil {
		held := make([]any, 2)
		for i, h := range s.Held {
			if h != nil {
				held[i] = hex.EncodeToString(h[:])
			}
		}
		o = append(o, cjson.Member{Key: "held", Value: held})
	}
	o = append(o, cjson.Member{Key: "local", Value: s.Local})
	if s.Receipt != nil {
		r := cjson.Object{
			{Key: "checkpoint", Value: string(s.Receipt.Checkpoint)},
			{Key: "index", Value: int64(s.Receipt.Index)},
		}
		if s.Receipt.Proof != nil {
			proof := make([]any, len(s.Receipt.Proof))
			for i, h := range s.Receipt.Proof {
				proof[i] = base64.StdEncoding.EncodeToString(h[:])
			}
			r = append(r, cjson.Member{Key: "proof", Value: proof})
		}
		o = append(o, cjson.Member{Key: "receipt", Value: r})
	}
	if s.Seed != nil {
		o = append(o, cjson.Member{Key: "seed", Value: hex.EncodeToString(s.Seed[:])})
	}
	b, err := cjson.Marshal(o)
	if err != nil {
		return nil, snapErr("%w", err)
	}
	if _, err := ParseSnapshot(b); err != nil {
		return nil, err
	}
	return b, nil
}

// ParseSnapshot decodes a snapshot strictly: one canonical JSON object with
// exactly the members FormatSnapshot writes, each of its type and range
// (events: 1 or more strings of 1 to events.MaxEventSize bytes; acked: 0 to
// their number, all of them when local; held: two entries, hex32 or null,
// not both null; receipt only when not local). It does not look inside the
// events: Resume does. Errors wrap ErrSnapshot.
func ParseSnapshot(b []byte) (*Snapshot, error) {
	if len(b) > MaxSnapshotSize {
		return nil, snapErr("%d bytes, more than %d", len(b), MaxSnapshotSize)
	}
	if err := cjson.Check(b); err != nil {
		return nil, snapErr("%w", err)
	}
	v, err := cjson.Decode(b)
	if err != nil {
		return nil, snapErr("%w", err)
	}
	o, ok := v.(cjson.Object)
	if !ok {
		return nil, snapErr("not a JSON object")
	}
	s := &Snapshot{}
	seen := map[string]bool{}
	for _, m := range o {
		seen[m.Key] = true
		switch m.Key {
		case "acked":
			n, ok := m.Value.(int64)
			if !ok || n < 0 {
				return nil, snapErr("acked is not a non-negative integer")
			}
			s.Acked = int(min(n, MaxSnapshotSize)) // checked against len(events) below
		case "events":
			a, ok := m.Value.([]any)
			if !ok || len(a) == 0 {
				return nil, snapErr("events is not a non-empty array")
			}
			for i, e := range a {
				str, ok := e.(string)
				if !ok || len(str) == 0 || len(str) > events.MaxEventSize {
					return nil, snapErr("events[%d] is not a string of 1 to %d bytes", i, events.MaxEventSize)
				}
				s.Events = append(s.Events, []byte(str))
			}
		case "format":
			if f, ok := m.Value.(string); !ok || f != SnapshotFormat {
				return nil, snapErr("format is not %q", SnapshotFormat)
			}
		case "held":
			a, ok := m.Value.([]any)
			if !ok || len(a) != 2 {
				return nil, snapErr("held is not an array of two entries")
			}
			for i, e := range a {
				if e == nil {
					continue
				}
				h, err := hex32(e)
				if err != nil {
					return nil, snapErr("held[%d]: %w", i, err)
				}
				s.Held[i] = &h
			}
			if s.Held[0] == nil && s.Held[1] == nil {
				return nil, snapErr("held has no contribution (omit it)")
			}
		case "local":
			l, ok := m.Value.(bool)
			if !ok {
				return nil, snapErr("local is not a boolean")
			}
			s.Local = l
		case "receipt":
			r, ok := m.Value.(cjson.Object)
			if !ok || len(r) < 2 || len(r) > 3 || r[0].Key != "checkpoint" || r[1].Key != "index" || len(r) == 3 && r[2].Key != "proof" {
				return nil, snapErr(`receipt is not an object {"checkpoint", "index", "proof"}`)
			}
			cp, ok := r[0].Value.(string)
			if !ok || len(cp) == 0 || len(cp) > maxSnapshotNote || !utf8.ValidString(cp) {
				return nil, snapErr("receipt.checkpoint is not a string of 1 to %d bytes", maxSnapshotNote)
			}
			idx, ok := r[1].Value.(int64)
			if !ok || idx < 0 {
				return nil, snapErr("receipt.index is not a non-negative integer")
			}
			s.Receipt = &SnapshotReceipt{Index: uint64(idx), Checkpoint: []byte(cp)}
			if len(r) == 3 {
				a, ok := r[2].Value.([]any)
				if !ok || len(a) > 64 {
					return nil, snapErr("receipt.proof is not an array of at most 64 hashes")
				}
				s.Receipt.Proof = make([]merkle.Hash, len(a))
				for i, e := range a {
					str, _ := e.(string)
					h, err := base64.StdEncoding.Strict().DecodeString(str)
					if err != nil || len(h) != merkle.HashSize || base64.StdEncoding.EncodeToString(h) != str {
						return nil, snapErr("receipt.proof[%d] is not standard base64 of %d bytes", i, merkle.HashSize)
					}
					s.Receipt.Proof[i] = merkle.Hash(h)
				}
			}
		case "seed":
			h, err := hex32(m.Value)
			if err != nil {
				return nil, snapErr("seed: %w", err)
			}
			s.Seed = &h
		default:
			return nil, snapErr("unknown member %q", m.Key)
		}
	}
	for _, k := range []string{"acked", "events", "format", "local"} {
		if !seen[k] {
			return nil, snapErr("member %q is missing", k)
		}
	}
	if s.Acked > len(s.Events) {
		return nil, snapErr("acked %d exceeds the %d events", s.Acked, len(s.Events))
	}
	if s.Local && (s.Acked != len(s.Events) || s.Receipt != nil) {
		return nil, snapErr("a device game has every event acknowledged (%d of %d) and no receipt", s.Acked, len(s.Events))
	}
	return s, nil
}

// hex32 reads a JSON string of exactly 64 lowercase hex digits.
func hex32(v any) ([32]byte, error) {
	var h [32]byte
	s, ok := v.(string)
	if !ok || len(s) != 64 {
		return h, errors.New("not 64 hex digits")
	}
	for i := range len(s) {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return h, errors.New("not 64 lowercase hex digits")
		}
	}
	_, err := hex.Decode(h[:], []byte(s))
	return h, err
}

// snapshot returns the game's snapshot (the game's lock held).
func (g *game) snapshot() *Snapshot {
	s := &Snapshot{Events: append([][]byte(nil), g.leaves...), Acked: g.acked, Local: g.b.Local(), Held: g.held}
	if g.seed != nil {
		c := *g.seed
		s.Seed = &c
	}
	for i, h := range g.held {
		if h != nil {
			c := *h
			s.Held[i] = &c
		}
	}
	if g.receipt != nil {
		s.Receipt = &SnapshotReceipt{Index: g.receipt.Index, Checkpoint: append([]byte(nil), g.receipt.Checkpoint...),
			Proof: append([]merkle.Hash{}, g.receipt.Proof...)}
	}
	return s
}

// Snapshot returns the game's snapshot, canonical JSON: save it after every
// call (or as often as losing the calls since costs you), and resume the
// game from it with the Backend's Resume function of its scheme. It holds
// the game's secrets: see Snapshot.
func (g *game) Snapshot(ctx context.Context) ([]byte, error) {
	if err := g.acquire(ctx); err != nil {
		return nil, err
	}
	defer g.release()
	return FormatSnapshot(g.snapshot())
}

// restore rebuilds a game from a snapshot: it replays every event through
// events.Apply (without the clock checks, which applied when the events
// were made) and checks each secret against what binds it.
func (b *Backend) restore(data []byte, scheme events.Scheme) (*game, error) {
	s, err := ParseSnapshot(data)
	if err != nil {
		return nil, err
	}
	if s.Local != b.Local() {
		return nil, snapErr("a device game (local: %t) cannot be resumed by this backend (local: %t)", s.Local, b.Local())
	}
	if first, err := events.Parse(s.Events[0]); err == nil && first.Scheme != scheme {
		return nil, snapErr("the game is %s, not %s", first.Scheme, scheme)
	}
	var st *events.Game
	evs := make([]*events.Event, len(s.Events))
	for i, leaf := range s.Events {
		ev, err := events.Parse(leaf)
		if err != nil {
			return nil, snapErr("events[%d]: %w", i, err)
		}
		if ev.Emitter != b.emitter {
			return nil, snapErr("events[%d] is emitter %q's, this backend is %q", i, ev.Emitter, b.emitter)
		}
		if st, err = events.Apply(st, ev, b.replayEnv(uint64(i))); err != nil {
			return nil, snapErr("events[%d] does not follow the game: %w", i, err)
		}
		evs[i] = ev
	}
	if st.Scheme != scheme {
		return nil, snapErr("the game is %s, not %s", st.Scheme, scheme)
	}
	gs, err := events.ParseSettings(st.Settings)
	if err != nil {
		return nil, snapErr("settings: %w", err)
	}
	if b.Local() && gs.Opponent != "computer" {
		return nil, snapErr("a device game's settings must say \"opponent\": \"computer\"")
	}
	g := newGame(b, scheme, st.ID, gs)
	g.first, g.st, g.evs, g.leaves, g.acked = evs[0].Body, st, evs, s.Events, s.Acked
	g.seed, g.held = s.Seed, s.Held
	if s.Receipt != nil && s.Receipt.Proof != nil {
		// A receipt without a proof (an older SDK's) is dropped: the game
		// asks the ledger again when it needs it.
		r := Receipt{EventID: evs[0].ID, TlogProof: merkle.TlogProof{Extra: s.Events[0], Index: s.Receipt.Index, Proof: s.Receipt.Proof, Checkpoint: s.Receipt.Checkpoint}}
		if b.client == nil {
			return nil, snapErr("a receipt in a device game")
		}
		if err := b.client.check(&r, s.Events[0]); err != nil {
			return nil, snapErr("the commit's receipt: %w", err)
		}
		g.receipt = &r
	}
	if (s.Held[0] != nil || s.Held[1] != nil) && (scheme != events.Tavlarena || st.Contributed[0] || st.Contributed[1]) {
		return nil, snapErr("withheld contributions in a game that has none to withhold")
	}
	if s.Held[0] != nil && s.Held[1] != nil {
		return nil, snapErr("both contributions withheld (they are logged as soon as both have arrived)")
	}
	switch scheme {
	case events.Tavlarena:
		if s.Seed == nil {
			return nil, snapErr("the seed is missing")
		}
		gid, _ := dice.ParseUUID(st.ID)
		sh, err := dice.SettingsHash(st.Settings)
		if err != nil {
			return nil, snapErr("settings: %w", err)
		}
		if dice.TavlarenaCommitment(gid, sh, st.Seats, *s.Seed) != st.Commitment {
			return nil, snapErr("the seed does not give the game's commitment")
		}
		if st.Contributed[0] && st.Contributed[1] {
			g.roller = dice.NewTavlarena(*s.Seed, gid, st.Contributions)
		}
	case events.Anchored:
		if s.Seed == nil {
			return nil, snapErr("the seed is missing")
		}
		if dice.Fingerprint(*s.Seed) != st.Fingerprint {
			return nil, snapErr("the seed does not give the game's fingerprint")
		}
		if st.Beacon != nil {
			binding := dice.AnchoredBinding(st.MatchID, st.GameNo, st.Tokens,
				dice.Anchor{Chain: st.Beacon.Chain, Round: st.Beacon.Round, Randomness: st.Beacon.Randomness})
			g.roller = dice.NewAnchored(*s.Seed, binding)
		}
	case events.PerRoll:
		waiting := st.Pending != nil && st.Pending.Stage != events.RollRevealed
		switch {
		case waiting && s.Seed == nil:
			return nil, snapErr("the pending roll's seed is missing")
		case !waiting && s.Seed != nil:
			return nil, snapErr("a seed but no pending roll")
		case waiting && sha256.Sum256(s.Seed[:]) != st.Pending.Commitment:
			return nil, snapErr("the seed does not give the pending roll's commitment")
		}
	}
	if b.client != nil && !b.Local() {
		// The stream may have lost acknowledged events since (its lazy
		// fsync, a truncated file): the Client follows them until the
		// ledger reports them logged, and publishes again the lost ones
		// (follow.go). A commit with its receipt is logged.
		for i := range s.Acked {
			if i == 0 && g.receipt != nil {
				continue
			}
			if err := b.client.Follow(Event{ID: evs[i].ID, Data: s.Events[i], OrderKey: g.id}); err != nil {
				return nil, snapErr("events[%d]: %w", i, err)
			}
		}
	}
	return g, nil
}

// ResumeTavlarena resumes a tavlarena-v1 game from its Snapshot. Events that
// JetStream had not acknowledged are published by the game's next call (or
// Flush); the ledger deduplicates any that had arrived. The acknowledged
// ones are given to Client.Follow: the Client (unless a negative
// Config.FollowInterval turned following off) publishes again any the
// stream lost (WaitLogged waits for them).
func (b *Backend) ResumeTavlarena(snapshot []byte) (*TavlarenaGame, error) {
	g, err := b.restore(snapshot, events.Tavlarena)
	if err != nil {
		return nil, err
	}
	return &TavlarenaGame{*g}, nil
}

// ResumeAnchored resumes an anchored-v1 game from its Snapshot (see
// ResumeTavlarena).
func (b *Backend) ResumeAnchored(snapshot []byte) (*AnchoredGame, error) {
	g, err := b.restore(snapshot, events.Anchored)
	if err != nil {
		return nil, err
	}
	return &AnchoredGame{*g}, nil
}

// ResumePerRoll resumes a per-roll-v1 match from its Snapshot (see
// ResumeTavlarena).
func (b *Backend) ResumePerRoll(snapshot []byte) (*PerRollMatch, error) {
	g, err := b.restore(snapshot, events.PerRoll)
	if err != nil {
		return nil, err
	}
	return &PerRollMatch{*g}, nil
}
