// Package events is zarlog's event model: the leaves of the log. It defines
// the event envelope and a typed body for every event type of the three dice
// schemes, their one canonical encoding (Parse and Format), the Ed25519
// signatures of the binding events (Sign, Verify, Keyring), and the per-game
// state machine that decides whether an event may follow its game's history
// (Game, Apply), and what the projections of the log count over the events
// they apply (Tally, RollCounts, FinishedGame).
//
// The contract is docs/FORMATS.md §1; the dice arithmetic is package
// events/dice (docs/SCHEMES.md, from the shared DICE.md). The package is pure:
// no I/O, no clock, no global state. The ledger, the emitter SDK, the
// publisher and the offline verifier all import it.
//
// An event travels as follows: the ledger checks the size and the bytes
// (Parse), the emitter and its signature (Verify), then the game's history
// (Apply with an Env that carries what the ledger knows). Each step returns a
// *RejectError with a stable Code when it refuses the event.
package events

import (
	"strconv"
	"time"

	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
)

// MaxEventSize is the largest event in bytes: the tlog-tiles entry-bundle
// limit of 65,535 bytes per entry.
const MaxEventSize = 65535

// Version is the value of every event's "v" member.
const Version = 1

// TimeLayout is the exact form of every time in an event: UTC with
// millisecond precision.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// A Scheme is one of the three dice schemes.
type Scheme string

// The schemes (DICE.md §2–4).
const (
	Tavlarena Scheme = dice.Tavlarena
	Anchored  Scheme = dice.Anchored
	PerRoll   Scheme = dice.PerRoll
)

// PerGame reports whether s commits to a whole game at once (tavlarena-v1,
// anchored-v1) rather than roll by roll (per-roll-v1).
func (s Scheme) PerGame() bool { return s == Tavlarena || s == Anchored }

func (s Scheme) valid() bool { return s == Tavlarena || s == Anchored || s == PerRoll }

// A Type is an event type (FORMATS.md §1.2).
type Type string

// The event types.
const (
	TypeCommit       Type = "commit"
	TypeContribution Type = "contribution"
	TypeBeacon       Type = "beacon"
	TypeRoll         Type = "roll"
	TypeMove         Type = "move"
	TypeEnd          Type = "end"
	TypeReveal       Type = "reveal"
	TypeRollCommit   Type = "roll-commit"
	TypeRollSecond   Type = "roll-second"
	TypeRollReveal   Type = "roll-reveal"
)

// Binding reports whether events of type t must carry the emitter's
// signature: commit, end, reveal, roll-commit and roll-reveal.
func (t Type) Binding() bool {
	switch t {
	case TypeCommit, TypeEnd, TypeReveal, TypeRollCommit, TypeRollReveal:
		return true
	}
	return false
}

// Allowed reports whether events of type t exist in scheme s.
func (t Type) Allowed(s Scheme) bool {
	switch t {
	case TypeCommit, TypeMove, TypeEnd:
		return s.valid()
	case TypeContribution, TypeRoll, TypeReveal:
		return s.PerGame()
	case TypeBeacon:
		return s == Anchored
	case TypeRollCommit, TypeRollSecond, TypeRollReveal:
		return s == PerRoll
	}
	return false
}

// An Event is one leaf of the log: the envelope of FORMATS.md §1.1 and a
// typed body. Events returned by Parse are valid; an Event built by hand is
// checked by Format, Sign and New.
type Event struct {
	V       int    // always Version
	ID      string // unique in the log; the JetStream Nats-Msg-Id
	Type    Type
	Scheme  Scheme
	Game    string
	Seq     uint64 // position in the game, from 0 (the commit)
	Emitter string
	Time    time.Time // the emitter's clock (informational), millisecond precision
	Body    Body      // its concrete type matches Type and Scheme
	Sig     []byte    // Ed25519 signature; present exactly on binding types
}

// A Body is the type-specific part of an event. Its concrete type is one of
// the body types of this package, chosen by the event's type and scheme:
//
//	commit        TavlarenaCommit, AnchoredCommit, PerRollCommit
//	contribution  Contribution (tavlarena-v1), TokenContribution (anchored-v1)
//	beacon        Beacon
//	roll          Roll
//	move          Move
//	end           End
//	reveal        Reveal
//	roll-commit   RollCommit
//	roll-second   RollSecond
//	roll-reveal   RollReveal
type Body interface {
	// Type returns the event type the body belongs to.
	Type() Type
	// fits reports whether the body is the one of its type in scheme s.
	fits(s Scheme) bool
	// appendJSON appends the body's canonical JSON.
	appendJSON(dst []byte) []byte
}

// A TavlarenaCommit opens a tavlarena-v1 game.
type TavlarenaCommit struct {
	Commitment [32]byte
	Seats      [2]dice.UUID
	Settings   []byte // canonical JSON object
}

// An AnchorRef names the drand round an anchored-v1 game is anchored to.
type AnchorRef struct {
	Chain [32]byte // drand chain hash
	Round uint64
}

// An AnchoredCommit opens an anchored-v1 game.
type AnchoredCommit struct {
	Anchor      AnchorRef
	Fingerprint [32]byte // SHA-256(seed)
	GameNo      uint32
	MatchID     string    // 1..256 bytes of UTF-8
	SealedAt    time.Time // millisecond precision
	Settings    []byte    // canonical JSON object
}

// A PerRollCommit opens a per-roll-v1 match.
type PerRollCommit struct {
	Settings []byte // canonical JSON object
}

// A Contribution is a seat's 32-byte contribution to a tavlarena-v1 game.
type Contribution struct {
	Contribution [32]byte
	Seat         int // 0 or 1
}

// A TokenContribution is a player's token in an anchored-v1 game.
type TokenContribution struct {
	Seat  int    // 0 or 1
	Token string // 1..256 bytes of UTF-8
}

// A Beacon is the drand beacon an anchored-v1 game's commit named.
type Beacon struct {
	Chain      [32]byte
	Randomness [32]byte // SHA-256(Signature)
	Round      uint64
	Signature  []byte // 1..MaxBeaconSignature bytes
}

// MaxBeaconSignature is the longest drand beacon signature accepted, in bytes
// (quicknet's are 48, G2 signatures 96).
const MaxBeaconSignature = 256

// A Roll is one roll of a per-game scheme.
type Roll struct {
	Dice dice.Dice
	Kind dice.Kind
	N    uint32
}

// A Move is the checker play of roll N by seat Seat, in the rules engine's
// notation (at most MaxPlay bytes; empty when the roll cannot be played, if
// the rules engine says so).
type Move struct {
	N    uint32
	Play string
	Seat int
}

// MaxPlay is the longest move play in bytes.
const MaxPlay = 1024

// A Result is how a game or match ended.
type Result string

// Results.
const (
	Finished  Result = "finished"
	Resigned  Result = "resigned"
	Abandoned Result = "abandoned"
)

// NoWinner is End.Winner when the result names no winner (JSON null).
const NoWinner = -1

// An End ends a game (per-game schemes) or a match (per-roll-v1).
type End struct {
	Points uint32
	Result Result
	Winner int // 0, 1 or NoWinner
}

// A Reveal reveals a per-game scheme's seed.
type Reveal struct {
	Seed [32]byte
}

// A RollCommit commits to the next roll of a per-roll-v1 match.
type RollCommit struct {
	Commitment [32]byte // SHA-256(seed_r)
	RollID     dice.UUID
}

// SecondFrom says who made a per-roll-v1 second number.
type SecondFrom string

// Sources of the second number.
const (
	FromClient SecondFrom = "client"
	FromServer SecondFrom = "server"
)

// A RollSecond carries the second number of the pending roll.
type RollSecond struct {
	RollID     dice.UUID
	Second     [32]byte
	SecondFrom SecondFrom
}

// A RollReveal reveals the pending roll's seed and its dice.
type RollReveal struct {
	Dice   dice.Dice
	RollID dice.UUID
	Seed   [32]byte
}

func (TavlarenaCommit) Type() Type   { return TypeCommit }
func (AnchoredCommit) Type() Type    { return TypeCommit }
func (PerRollCommit) Type() Type     { return TypeCommit }
func (Contribution) Type() Type      { return TypeContribution }
func (TokenContribution) Type() Type { return TypeContribution }
func (Beacon) Type() Type            { return TypeBeacon }
func (Roll) Type() Type              { return TypeRoll }
func (Move) Type() Type              { return TypeMove }
func (End) Type() Type               { return TypeEnd }
func (Reveal) Type() Type            { return TypeReveal }
func (RollCommit) Type() Type        { return TypeRollCommit }
func (RollSecond) Type() Type        { return TypeRollSecond }
func (RollReveal) Type() Type        { return TypeRollReveal }

func (TavlarenaCommit) fits(s Scheme) bool   { return s == Tavlarena }
func (AnchoredCommit) fits(s Scheme) bool    { return s == Anchored }
func (PerRollCommit) fits(s Scheme) bool     { return s == PerRoll }
func (Contribution) fits(s Scheme) bool      { return s == Tavlarena }
func (TokenContribution) fits(s Scheme) bool { return s == Anchored }
func (Beacon) fits(s Scheme) bool            { return TypeBeacon.Allowed(s) }
func (Roll) fits(s Scheme) bool              { return TypeRoll.Allowed(s) }
func (Move) fits(s Scheme) bool              { return TypeMove.Allowed(s) }
func (End) fits(s Scheme) bool               { return TypeEnd.Allowed(s) }
func (Reveal) fits(s Scheme) bool            { return TypeReveal.Allowed(s) }
func (RollCommit) fits(s Scheme) bool        { return TypeRollCommit.Allowed(s) }
func (RollSecond) fits(s Scheme) bool        { return TypeRollSecond.Allowed(s) }
func (RollReveal) fits(s Scheme) bool        { return TypeRollReveal.Allowed(s) }

// JSON writers. Members are written in canonical (sorted) order by hand;
// Format re-parses its output, so a slip here cannot produce a leaf that
// Parse would refuse.

func appendKey(dst []byte, first bool, key string) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

func appendHex(dst []byte, b []byte) []byte {
	const digits = "0123456789abcdef"
	dst = append(dst, '"')
	for _, c := range b {
		dst = append(dst, digits[c>>4], digits[c&15])
	}
	return append(dst, '"')
}

func appendUUID(dst []byte, u dice.UUID) []byte {
	dst = append(dst, '"')
	dst = append(dst, u.String()...)
	return append(dst, '"')
}

func appendUint(dst []byte, n uint64) []byte { return strconv.AppendUint(dst, n, 10) }

func appendDice(dst []byte, d dice.Dice) []byte {
	dst = append(dst, '[')
	dst = strconv.AppendInt(dst, int64(d[0]), 10)
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, int64(d[1]), 10)
	return append(dst, ']')
}

func appendTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, TimeLayout)
	return append(dst, '"')
}

func appendSettings(dst, settings []byte) []byte {
	if len(settings) == 0 {
		return append(dst, "null"...) // refused by Parse
	}
	return append(dst, settings...)
}

func (b TavlarenaCommit) appendJSON(dst []byte) []byte {
	dst = appendKey(append(dst, '{'), true, "commitment")
	dst = appendHex(dst, b.Commitment[:])
	dst = appendKey(dst, false, "seats")
	dst = appendUUID(append(dst, '['), b.Seats[0])
	dst = appendUUID(append(dst, ','), b.Seats[1])
	dst = appendKey(append(dst, ']'), false, "settings")
	dst = appendSettings(dst, b.Settings)
	return append(dst, '}')
}

func (b AnchoredCommit) appendJSON(dst []byte) []byte {
	dst = appendKey(append(dst, '{'), true, "anchor")
	dst = appendKey(append(dst, '{'), true, "chain")
	dst = appendHex(dst, b.Anchor.Chain[:])
	dst = appendKey(dst, false, "round")
	dst = appendUint(dst, b.Anchor.Round)
	dst = appendKey(append(dst, '}'), false, "fingerprint")
	dst = appendHex(dst, b.Fingerprint[:])
	dst = appendKey(dst, false, "gameNo")
	dst = appendUint(dst, uint64(b.GameNo))
	dst = appendKey(dst, false, "matchId")
	dst = cjson.AppendString(dst, b.MatchID)
	dst = appendKey(dst, false, "sealedAt")
	dst = appendTime(dst, b.SealedAt)
	dst = appendKey(dst, false, "settings")
	dst = appendSettings(dst, b.Settings)
	return append(dst, '}')
}

func (b PerRollCommit) appendJSON(dst []byte) []byte {
	dst = appendKey(append(dst, '{'), true, "settings")
	dst = appendSettings(dst, b.Settings)
	return append(dst, '}')
}

func (b Contribution) appendJSON(dst []byte) []byte {
	dst = appendKey(append(dst, '{'), true, "contribution")
	dst = appendHex(dst, b.Contribution[:])
	dst = appendKey(dst, false, "seat")
	dst = strconv.AppendInt(dst, int64(b.Seat), 10)
	return append(dst, '}')
}

func (b TokenContribution) appendJSON(dst []byte) []byte {
	dst = appendKey(append(dst, '{'), true, "seat")
	dst = strconv.AppendInt(dst, int64(b.Seat), 10)
	dst = appendKey(dst, false, "token")
	dst = cjson.AppendString(dst, b.Token)
	return append(dst, '}')
}

func (b Beacon) appendJSON(dst []byte) []byte {
	dst = appendKey(append(dst, '{'), true, "chain")
	dst = appendHex(dst, b.Chain[:])
	dst = appendKey(dst, false, "randomness")
	dst = appendHex(dst, b.Randomness[:])
	dst = appendKey(dst, false, "round")
	dst = appendUint(dst, b.Round)
	dst = appendKey(dst, false, "signature")
	dst = appendHex(dst, b.Signature)
	return append(dst, '}')
}

func (b Roll) appendJSON(dst []byte) []byte {
	dst = appendKey(append(dst, '{'), true, "dice")
	dst = appendDice(dst, b.Dice)
	dst = appendKey(dst, false, "kind")
	dst = cjson.AppendString(dst, string(b.Kind))
	dst = appendKey(dst, false, "n")
	dst = appendUint(dst, uint64(b.N))
	return append(dst, '}')
}

func (b Move) appendJSON(dst []byte) []byte {
	dst = appendKey(append(dst, '{'), true, "n")
	dst = appendUint(dst, uint64(b.N))
	dst = appendKey(dst, false, "play")
	dst = cjson.AppendString(dst, b.Play)
	dst = appendKey(dst, false, "seat")
	dst = strconv.AppendInt(dst, int64(b.Seat), 10)
	return append(dst, '}')
}

func (b End) appendJSON(dst []byte) []byte {
	dst = appendKey(append(dst, '{'), true, "points")
	dst = appendUint(dst, uint64(b.Points))
	dst = appendKey(dst, false, "result")
	dst = cjson.AppendString(dst, string(b.Result))
	dst = appendKey(dst, false, "winner")
	if b.Winner == NoWinner {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, int64(b.Winner), 10)
	}
	return append(dst, '}')
}

func (b Reveal) appendJSON(dst []byte) []byte {
	dst = appendKey(append(dst, '{'), true, "seed")
	dst = appendHex(dst, b.Seed[:])
	return append(dst, '}')
}

func (b RollCommit) appendJSON(dst []byte) []byte {
	dst = appendKey(append(dst, '{'), true, "commitment")
	dst = appendHex(dst, b.Commitment[:])
	dst = appendKey(dst, false, "rollId")
	dst = appendUUID(dst, b.RollID)
	return append(dst, '}')
}

func (b RollSecond) appendJSON(dst []byte) []byte {
	dst = appendKey(append(dst, '{'), true, "rollId")
	dst = appendUUID(dst, b.RollID)
	dst = appendKey(dst, false, "second")
	dst = appendHex(dst, b.Second[:])
	dst = appendKey(dst, false, "secondFrom")
	dst = cjson.AppendString(dst, string(b.SecondFrom))
	return append(dst, '}')
}

func (b RollReveal) appendJSON(dst []byte) []byte {
	dst = appendKey(append(dst, '{'), true, "dice")
	dst = appendDice(dst, b.Dice)
	dst = appendKey(dst, false, "rollId")
	dst = appendUUID(dst, b.RollID)
	dst = appendKey(dst, false, "seed")
	dst = appendHex(dst, b.Seed[:])
	return append(dst, '}')
}
