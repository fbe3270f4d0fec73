package events

import (
	"fmt"
	"strconv"
	"time"

	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
)

// Format returns the canonical leaf bytes of ev. It refuses (with a
// *RejectError) any event that Parse would refuse, so its output always
// parses; and for an event returned by Parse(b) it returns exactly b. A
// binding event must be signed first (Sign).
func Format(ev *Event) ([]byte, error) {
	if err := preflight(ev); err != nil {
		return nil, err
	}
	b := appendEvent(make([]byte, 0, 512), ev, true)
	if _, err := Parse(b); err != nil {
		return nil, err
	}
	return b, nil
}

// preflight checks what Parse cannot see in the bytes appendEvent writes:
// the body's Go type, times below the millisecond, and settings bytes that
// are not one canonical JSON object (they are copied verbatim).
func preflight(ev *Event) error {
	if ev == nil {
		return reject(CodeMalformed, "", "nil event")
	}
	if ev.Body == nil {
		return reject(CodeMalformed, "body", "missing")
	}
	if ev.Body.Type() != ev.Type || !ev.Body.fits(ev.Scheme) {
		return reject(CodeMalformed, "body", "a %T is not the body of a %s %s event", ev.Body, ev.Scheme, ev.Type)
	}
	if err := checkMillis(ev.Time, "time"); err != nil {
		return err
	}
	var settings []byte
	switch b := ev.Body.(type) {
	case TavlarenaCommit:
		settings = b.Settings
	case AnchoredCommit:
		settings = b.Settings
		if err := checkMillis(b.SealedAt, "body.sealedAt"); err != nil {
			return err
		}
	case PerRollCommit:
		settings = b.Settings
	default:
		return nil
	}
	if err := cjson.Check(settings); err != nil || settings[0] != '{' {
		return &RejectError{Code: CodeMalformed, Field: "body.settings", Msg: "is not one canonical JSON object (use New, which canonicalizes it)", Err: err}
	}
	return nil
}

func checkMillis(t time.Time, field string) error {
	if t.Nanosecond()%int(time.Millisecond) != 0 {
		return reject(CodeMalformed, field, "%s has sub-millisecond precision", t.Format(time.RFC3339Nano))
	}
	return nil
}

// appendEvent appends the canonical JSON of ev, with or without its sig
// member. It does not validate.
func appendEvent(dst []byte, ev *Event, withSig bool) []byte {
	dst = appendKey(append(dst, '{'), true, "body")
	if ev.Body == nil {
		dst = append(dst, "null"...)
	} else {
		dst = ev.Body.appendJSON(dst)
	}
	dst = appendKey(dst, false, "emitter")
	dst = cjson.AppendString(dst, ev.Emitter)
	dst = appendKey(dst, false, "game")
	dst = cjson.AppendString(dst, ev.Game)
	dst = appendKey(dst, false, "id")
	dst = cjson.AppendString(dst, ev.ID)
	dst = appendKey(dst, false, "scheme")
	dst = cjson.AppendString(dst, string(ev.Scheme))
	dst = appendKey(dst, false, "seq")
	dst = appendUint(dst, ev.Seq)
	if withSig && ev.Sig != nil {
		dst = appendKey(dst, false, "sig")
		dst = appendHex(dst, ev.Sig)
	}
	dst = appendKey(dst, false, "time")
	dst = appendTime(dst, ev.Time)
	dst = appendKey(dst, false, "type")
	dst = cjson.AppendString(dst, string(ev.Type))
	dst = appendKey(dst, false, "v")
	dst = strconv.AppendInt(dst, int64(ev.V), 10)
	return append(dst, '}')
}

// A Header is the part of an event's envelope a backend chooses; New fills in
// the rest.
type Header struct {
	ID      string // the event id; "" means "<Game>:<Seq>", the SDK's convention
	Scheme  Scheme
	Game    string
	Seq     uint64
	Emitter string
	Time    time.Time // converted to UTC and truncated to the millisecond
}

// New builds an event of the body's type from a header, without hand-written
// JSON. The settings of a commit body may be any JSON object text; New
// stores its canonical form. New checks the result as Parse would (a binding
// event is checked as if it were signed) and returns a *RejectError if it is
// not a valid event. A binding event is returned unsigned: call Sign, or use
// NewSigned.
func New(h Header, body Body) (*Event, error) {
	if body == nil {
		return nil, reject(CodeMalformed, "body", "missing")
	}
	var err error
	switch b := body.(type) {
	case TavlarenaCommit:
		b.Settings, err = canonicalSettings(b.Settings)
		body = b
	case AnchoredCommit:
		b.Settings, err = canonicalSettings(b.Settings)
		b.SealedAt = b.SealedAt.UTC().Truncate(time.Millisecond)
		body = b
	case PerRollCommit:
		b.Settings, err = canonicalSettings(b.Settings)
		body = b
	}
	if err != nil {
		return nil, err
	}
	ev := &Event{
		V:       Version,
		ID:      h.ID,
		Type:    body.Type(),
		Scheme:  h.Scheme,
		Game:    h.Game,
		Seq:     h.Seq,
		Emitter: h.Emitter,
		Time:    h.Time.UTC().Truncate(time.Millisecond),
		Body:    body,
	}
	if ev.ID == "" {
		ev.ID = CanonicalID(h.Game, h.Seq)
	}
	if err := check(ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// NewSigned is New followed, for a binding type, by Sign.
func NewSigned(h Header, body Body, s Signer) (*Event, error) {
	ev, err := New(h, body)
	if err != nil {
		return nil, err
	}
	if ev.Type.Binding() {
		if err := Sign(ev, s); err != nil {
			return nil, err
		}
	}
	return ev, nil
}

func canonicalSettings(s []byte) ([]byte, error) {
	c, err := cjson.Parse(s)
	if err != nil {
		return nil, &RejectError{Code: CodeMalformed, Field: "body.settings", Msg: err.Error(), Err: err}
	}
	if c[0] != '{' {
		return nil, reject(CodeMalformed, "body.settings", "is not a JSON object")
	}
	return c, nil
}

// check validates ev as Format does; a binding event without a sig is
// checked with a placeholder signature.
func check(ev *Event) error {
	if ev != nil && ev.Type.Binding() && ev.Sig == nil {
		e := *ev
		e.Sig = make([]byte, 64)
		ev = &e
	}
	_, err := Format(ev)
	return err
}

// NewTavlarenaCommit returns the body of a tavlarena-v1 commit: the
// commitment to seed for the game, its seats and its settings (any JSON
// object text; stored canonical).
func NewTavlarenaCommit(gameID dice.UUID, seats [2]dice.UUID, settings []byte, seed [32]byte) (TavlarenaCommit, error) {
	c, err := canonicalSettings(settings)
	if err != nil {
		return TavlarenaCommit{}, err
	}
	h, err := dice.SettingsHash(c)
	if err != nil {
		return TavlarenaCommit{}, fmt.Errorf("settings hash: %w", err)
	}
	return TavlarenaCommit{Commitment: dice.TavlarenaCommitment(gameID, h, seats, seed), Seats: seats, Settings: c}, nil
}

// NewAnchoredCommit returns the body of an anchored-v1 commit: the
// fingerprint of seed, the match, the anchor round and the time the game
// was sealed (truncated to the millisecond).
func NewAnchoredCommit(matchID string, gameNo uint32, anchor AnchorRef, sealedAt time.Time, settings []byte, seed [32]byte) (AnchoredCommit, error) {
	c, err := canonicalSettings(settings)
	if err != nil {
		return AnchoredCommit{}, err
	}
	return AnchoredCommit{Anchor: anchor, Fingerprint: dice.Fingerprint(seed), GameNo: gameNo, MatchID: matchID,
		SealedAt: sealedAt.UTC().Truncate(time.Millisecond), Settings: c}, nil
}

// NewRollCommit returns the body of a per-roll-v1 roll-commit to seed.
func NewRollCommit(rollID dice.UUID, seed [32]byte) RollCommit {
	return RollCommit{Commitment: dice.Fingerprint(seed), RollID: rollID}
}

// NewRollReveal returns the body of a per-roll-v1 roll-reveal: the seed and
// the dice it gives with the match id, the roll id and the second number.
func NewRollReveal(matchID, rollID dice.UUID, second, seed [32]byte) RollReveal {
	return RollReveal{Dice: dice.NewPerRoll(seed, matchID, rollID, second).Roll(0), RollID: rollID, Seed: seed}
}
