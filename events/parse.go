package events

import (
	"bytes"
	"crypto/ed25519"
	"time"
	"unicode/utf8"

	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
)

// Parse decodes one event from its leaf bytes. It is strict: b must be at
// most MaxEventSize bytes and already canonical JSON (cjson.Check), every
// envelope and body member must be present with the right type and range,
// and no other member may appear (FORMATS.md §1.1–1.2). It returns a
// *RejectError with Code CodeTooLarge, CodeNotCanonical or CodeMalformed.
//
// If Parse(b) succeeds, Format returns exactly b.
func Parse(b []byte) (*Event, error) {
	if len(b) > MaxEventSize {
		return nil, reject(CodeTooLarge, "", "event is %d bytes, the limit is %d", len(b), MaxEventSize)
	}
	if ev, ok := parseCanonicalFast(b); ok {
		return ev, nil
	}
	return parseReference(b)
}

// parseReference is the reference parser: Parse by way of the
// canonical-JSON tree. It decodes b, compares its canonical re-encoding with
// b, and walks the tree. It decides every input, with the precise reason for
// a refusal, and defines what Parse accepts; parseCanonicalFast (parse_fast.go),
// the fast path, decides the common canonical inputs the same way and leaves
// the rest, and every refusal, to it (FuzzParseCanonicalFast holds the two to
// the same answers). b is at most MaxEventSize bytes.
func parseReference(b []byte) (*Event, error) {
	// The same test as cjson.Check, without decoding twice.
	v, err := cjson.Decode(b)
	if err != nil {
		return nil, &RejectError{Code: CodeMalformed, Msg: err.Error(), Err: err}
	}
	if c := cjson.Append(make([]byte, 0, len(b)), v); !bytes.Equal(c, b) {
		i := 0
		for i < len(c) && i < len(b) && c[i] == b[i] {
			i++
		}
		err := &cjson.SyntaxError{Offset: i, Msg: "text is valid but not canonical (whitespace, key order, escaping or number form)", Err: cjson.ErrNotCanonical}
		return nil, &RejectError{Code: CodeNotCanonical, Msg: err.Error(), Err: err}
	}
	var p parser
	ev := p.event(cjson.Root(v))
	if p.err != nil {
		return nil, p.err
	}
	return ev, nil
}

// parser walks a decoded canonical-JSON tree (cjson.Node: each value with
// its path) and keeps the first error; after an error its methods return
// zero values.
type parser struct {
	err *RejectError
}

func (p *parser) fail(field, format string, args ...any) {
	if p.err == nil {
		p.err = reject(CodeMalformed, field, format, args...)
	}
}

// object checks that n is an object with exactly the members keys (given in
// canonical order) and returns those members in that order, or nil.
func (p *parser) object(n cjson.Node, keys ...string) []cjson.Node {
	if p.err != nil {
		return nil
	}
	o, ok := n.Object()
	if !ok {
		p.fail(n.Path, "is %s, want an object", n.Kind())
		return nil
	}
	if len(o) == len(keys) {
		match := true
		for i, m := range o {
			if m.Key != keys[i] {
				match = false
				break
			}
		}
		if match {
			out := make([]cjson.Node, len(o))
			for i, m := range o {
				out[i] = cjson.Node{Path: n.Field(m.Key), Value: m.Value}
			}
			return out
		}
	}
	for _, k := range keys {
		if _, ok := o.Get(k); !ok {
			p.fail(n.Field(k), "missing")
			return nil
		}
	}
	for _, m := range o {
		known := false
		for _, k := range keys {
			known = known || m.Key == k
		}
		if !known {
			p.fail(n.Field(m.Key), "unknown member")
			return nil
		}
	}
	p.fail(n.Path, "members out of order") // unreachable: the text is canonical
	return nil
}

func (p *parser) str(n cjson.Node) string {
	if p.err != nil {
		return ""
	}
	s, ok := n.Str()
	if !ok {
		p.fail(n.Path, "is %s, want a string", n.Kind())
	}
	return s
}

// integer returns n's value if it is an integer from lo to hi.
func (p *parser) integer(n cjson.Node, lo, hi int64) int64 {
	if p.err != nil {
		return 0
	}
	i, ok := n.Int()
	if !ok {
		p.fail(n.Path, "is %s, want an integer", n.Kind())
		return 0
	}
	if i < lo || i > hi {
		p.fail(n.Path, "%d is out of range %d..%d", i, lo, hi)
		return 0
	}
	return i
}

func (p *parser) seat(n cjson.Node) int { return int(p.integer(n, 0, 1)) }

// hexBytes decodes lowercase hex of lo..hi bytes.
func (p *parser) hexBytes(n cjson.Node, lo, hi int) []byte {
	s := p.str(n)
	if p.err != nil {
		return nil
	}
	if len(s)%2 != 0 || len(s)/2 < lo || len(s)/2 > hi {
		if lo == hi {
			p.fail(n.Path, "is %d hex digits, want %d", len(s), 2*lo)
		} else {
			p.fail(n.Path, "is %d hex digits, want an even number from %d to %d", len(s), 2*lo, 2*hi)
		}
		return nil
	}
	b, ok := lowerHex(s)
	if !ok {
		p.fail(n.Path, "is not lowercase hex")
		return nil
	}
	return b
}

func (p *parser) hex32(n cjson.Node) (h [32]byte) {
	copy(h[:], p.hexBytes(n, 32, 32))
	return h
}

func (p *parser) uuid(n cjson.Node) dice.UUID {
	s := p.str(n)
	if p.err != nil {
		return dice.UUID{}
	}
	u, ok := parseUUID(s)
	if !ok {
		p.fail(n.Path, "%q is not a lowercase 8-4-4-4-12 UUID", s)
	}
	return u
}

func (p *parser) time(n cjson.Node) time.Time {
	s := p.str(n)
	if p.err != nil {
		return time.Time{}
	}
	t, ok := parseTime(s)
	if !ok {
		p.fail(n.Path, "%q is not a UTC time of the form 2026-11-30T10:37:31.123Z", s)
	}
	return t
}

func (p *parser) dice(n cjson.Node) dice.Dice {
	if p.err != nil {
		return dice.Dice{}
	}
	a, ok := n.Array()
	if !ok || len(a) != 2 {
		if ok {
			p.fail(n.Path, "has %d elements, want 2", len(a))
		} else {
			p.fail(n.Path, "is %s, want an array of two dice", n.Kind())
		}
		return dice.Dice{}
	}
	return dice.Dice{int(p.integer(n.Elem(a, 0), 1, 6)), int(p.integer(n.Elem(a, 1), 1, 6))}
}

// settings checks a settings object and returns its canonical bytes: the
// members zarlog reads must be valid (ParseSettings).
func (p *parser) settings(n cjson.Node) []byte {
	if p.err != nil {
		return nil
	}
	o, ok := n.Object()
	if !ok {
		p.fail(n.Path, "is %s, want an object", n.Kind())
		return nil
	}
	if _, member, why := settingsOf(o); member != "" {
		p.fail(n.Field(member), "%s", why)
		return nil
	}
	return cjson.Append(nil, o)
}

// utf8Len checks a string of lo..hi bytes of UTF-8 (the decoder already
// refuses invalid UTF-8; the check is kept for Format's callers).
func (p *parser) utf8Len(n cjson.Node, lo, hi int) string {
	s := p.str(n)
	if p.err != nil {
		return ""
	}
	if len(s) < lo || len(s) > hi || !utf8.ValidString(s) {
		p.fail(n.Path, "is %d bytes, want %d..%d bytes of UTF-8", len(s), lo, hi)
		return ""
	}
	return s
}

var (
	envelopeKeys       = []string{"body", "emitter", "game", "id", "scheme", "seq", "time", "type", "v"}
	envelopeKeysSigned = []string{"body", "emitter", "game", "id", "scheme", "seq", "sig", "time", "type", "v"}
)

func (p *parser) event(root cjson.Node) *Event {
	o, ok := root.Object()
	if !ok {
		p.fail("", "is %s, want an object", root.Kind())
		return nil
	}
	_, hasSig := o.Get("sig")
	keys := envelopeKeys
	if hasSig {
		keys = envelopeKeysSigned
	}
	vals := p.object(root, keys...)
	if vals == nil {
		return nil
	}
	get := func(k string) cjson.Node {
		for i, key := range keys {
			if key == k {
				return vals[i]
			}
		}
		panic("events: unknown envelope key " + k)
	}
	p.integer(get("v"), Version, Version)
	typ := Type(p.str(get("type")))
	if p.err == nil && !typ.Allowed(PerRoll) && !typ.Allowed(Tavlarena) && !typ.Allowed(Anchored) {
		p.fail("type", "%q is not an event type", typ)
	}
	scheme := Scheme(p.str(get("scheme")))
	if p.err == nil && !scheme.valid() {
		p.fail("scheme", "%q is not a scheme (tavlarena-v1, anchored-v1, per-roll-v1)", scheme)
	}
	if p.err == nil && !typ.Allowed(scheme) {
		p.fail("type", "%q events do not exist in %s", typ, scheme)
	}
	id := p.str(get("id"))
	if p.err == nil && !ValidEventID(id) {
		p.fail("id", "%q is not an event id ([A-Za-z0-9][A-Za-z0-9._:-]{0,127})", id)
	}
	game := p.str(get("game"))
	if p.err == nil && !ValidGameID(game) {
		p.fail("game", "%q is not a game id ([A-Za-z0-9][A-Za-z0-9._-]{0,127})", game)
	}
	if p.err == nil && scheme != Anchored {
		if _, ok := parseUUID(game); !ok {
			p.fail("game", "%q: a %s game id must be a lowercase UUID", game, scheme)
		}
	}
	seq := p.integer(get("seq"), 0, cjson.MaxSafeInteger)
	emitter := p.str(get("emitter"))
	if p.err == nil && !ValidEmitter(emitter) {
		p.fail("emitter", "%q is not an emitter id ([a-z0-9][a-z0-9-]{0,62})", emitter)
	}
	t := p.time(get("time"))
	var sig []byte
	if p.err == nil {
		switch {
		case typ.Binding() && !hasSig:
			p.fail("sig", "missing: %s events are binding and must be signed", typ)
		case !typ.Binding() && hasSig:
			p.fail("sig", "present: %s events are not binding and must not have a sig", typ)
		case hasSig:
			sig = p.hexBytes(get("sig"), ed25519.SignatureSize, ed25519.SignatureSize)
		}
	}
	if p.err != nil {
		return nil
	}
	body := p.body(scheme, typ, get("body"))
	if p.err != nil {
		return nil
	}
	return &Event{V: Version, ID: id, Type: typ, Scheme: scheme, Game: game, Seq: uint64(seq),
		Emitter: emitter, Time: t, Body: body, Sig: sig}
}

const maxU32 = 1<<32 - 1

func (p *parser) body(scheme Scheme, typ Type, n cjson.Node) Body {
	switch typ {
	case TypeCommit:
		switch scheme {
		case Tavlarena:
			m := p.object(n, "commitment", "seats", "settings")
			if m == nil {
				return nil
			}
			var b TavlarenaCommit
			b.Commitment = p.hex32(m[0])
			if seats, ok := m[1].Array(); !ok || len(seats) != 2 {
				p.fail(m[1].Path, "is not an array of two UUIDs")
			} else {
				b.Seats[0], b.Seats[1] = p.uuid(m[1].Elem(seats, 0)), p.uuid(m[1].Elem(seats, 1))
				if p.err == nil && b.Seats[0] == b.Seats[1] {
					p.fail(m[1].Path, "both seats are %s", b.Seats[0])
				}
			}
			b.Settings = p.settings(m[2])
			return b
		case Anchored:
			m := p.object(n, "anchor", "fingerprint", "gameNo", "matchId", "sealedAt", "settings")
			if m == nil {
				return nil
			}
			var b AnchoredCommit
			if a := p.object(m[0], "chain", "round"); a != nil {
				b.Anchor.Chain = p.hex32(a[0])
				b.Anchor.Round = uint64(p.integer(a[1], 1, cjson.MaxSafeInteger))
			}
			b.Fingerprint = p.hex32(m[1])
			b.GameNo = uint32(p.integer(m[2], 0, maxU32))
			b.MatchID = p.utf8Len(m[3], 1, 256)
			b.SealedAt = p.time(m[4])
			b.Settings = p.settings(m[5])
			return b
		default:
			m := p.object(n, "settings")
			if m == nil {
				return nil
			}
			return PerRollCommit{Settings: p.settings(m[0])}
		}
	case TypeContribution:
		if scheme == Tavlarena {
			m := p.object(n, "contribution", "seat")
			if m == nil {
				return nil
			}
			return Contribution{Contribution: p.hex32(m[0]), Seat: p.seat(m[1])}
		}
		m := p.object(n, "seat", "token")
		if m == nil {
			return nil
		}
		b := TokenContribution{Seat: p.seat(m[0]), Token: p.str(m[1])}
		if p.err == nil {
			if err := dice.CheckToken(b.Token); err != nil {
				p.fail(m[1].Path, "%s", err.Error())
			}
		}
		return b
	case TypeBeacon:
		m := p.object(n, "chain", "randomness", "round", "signature")
		if m == nil {
			return nil
		}
		return Beacon{
			Chain:      p.hex32(m[0]),
			Randomness: p.hex32(m[1]),
			Round:      uint64(p.integer(m[2], 1, cjson.MaxSafeInteger)),
			Signature:  p.hexBytes(m[3], 1, MaxBeaconSignature),
		}
	case TypeRoll:
		m := p.object(n, "dice", "kind", "n")
		if m == nil {
			return nil
		}
		b := Roll{Dice: p.dice(m[0]), Kind: dice.Kind(p.str(m[1])), N: uint32(p.integer(m[2], 0, maxU32))}
		if p.err == nil && b.Kind != dice.KindOpening && b.Kind != dice.KindReroll && b.Kind != dice.KindTurn {
			p.fail(m[1].Path, "%q is not opening, reroll or turn", b.Kind)
		}
		return b
	case TypeMove:
		m := p.object(n, "n", "play", "seat")
		if m == nil {
			return nil
		}
		return Move{N: uint32(p.integer(m[0], 0, maxU32)), Play: p.utf8Len(m[1], 0, MaxPlay), Seat: p.seat(m[2])}
	case TypeEnd:
		m := p.object(n, "points", "result", "winner")
		if m == nil {
			return nil
		}
		b := End{Points: uint32(p.integer(m[0], 0, maxU32)), Result: Result(p.str(m[1])), Winner: NoWinner}
		if p.err == nil && b.Result != Finished && b.Result != Resigned && b.Result != Abandoned {
			p.fail(m[1].Path, "%q is not finished, resigned or abandoned", b.Result)
		}
		if m[2].Value != nil {
			b.Winner = p.seat(m[2])
		}
		if p.err == nil && b.Winner == NoWinner && b.Result == Resigned {
			p.fail(m[2].Path, "null, but a resigned game has a winner")
		}
		if p.err == nil && b.Winner == NoWinner && b.Points != 0 {
			p.fail(m[0].Path, "%d points without a winner", b.Points)
		}
		return b
	case TypeReveal:
		m := p.object(n, "seed")
		if m == nil {
			return nil
		}
		return Reveal{Seed: p.hex32(m[0])}
	case TypeRollCommit:
		m := p.object(n, "commitment", "rollId")
		if m == nil {
			return nil
		}
		return RollCommit{Commitment: p.hex32(m[0]), RollID: p.uuid(m[1])}
	case TypeRollSecond:
		m := p.object(n, "rollId", "second", "secondFrom")
		if m == nil {
			return nil
		}
		b := RollSecond{RollID: p.uuid(m[0]), Second: p.hex32(m[1]), SecondFrom: SecondFrom(p.str(m[2]))}
		if p.err == nil && b.SecondFrom != FromClient && b.SecondFrom != FromServer {
			p.fail(m[2].Path, "%q is not client or server", b.SecondFrom)
		}
		return b
	case TypeRollReveal:
		m := p.object(n, "dice", "rollId", "seed")
		if m == nil {
			return nil
		}
		return RollReveal{Dice: p.dice(m[0]), RollID: p.uuid(m[1]), Seed: p.hex32(m[2])}
	}
	p.fail("type", "%q is not an event type", typ) // unreachable: checked by the caller
	return nil
}
