package events

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"strings"
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
	ev := p.event(v)
	if p.err != nil {
		return nil, p.err
	}
	return ev, nil
}

// parser walks a decoded canonical-JSON tree and keeps the first error;
// after an error its methods return zero values.
type parser struct {
	err *RejectError
}

func (p *parser) fail(field, format string, args ...any) {
	if p.err == nil {
		p.err = reject(CodeMalformed, field, format, args...)
	}
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case int64:
		return "an integer"
	case string:
		return "a string"
	case []any:
		return "an array"
	case cjson.Object:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// object checks that v is an object with exactly the members keys (given in
// canonical order) and returns it (its members are then in that order), or
// nil.
func (p *parser) object(v any, field string, keys ...string) cjson.Object {
	if p.err != nil {
		return nil
	}
	o, ok := v.(cjson.Object)
	if !ok {
		p.fail(field, "is %s, want an object", typeName(v))
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
			return o
		}
	}
	for _, k := range keys {
		if _, ok := o.Get(k); !ok {
			p.fail(join(field, k), "missing")
			return nil
		}
	}
	for _, m := range o {
		known := false
		for _, k := range keys {
			known = known || m.Key == k
		}
		if !known {
			p.fail(join(field, m.Key), "unknown member")
			return nil
		}
	}
	p.fail(field, "members out of order") // unreachable: the text is canonical
	return nil
}

func join(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

func (p *parser) str(v any, field string) string {
	if p.err != nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		p.fail(field, "is %s, want a string", typeName(v))
	}
	return s
}

// integer returns v if it is an integer from lo to hi.
func (p *parser) integer(v any, field string, lo, hi int64) int64 {
	if p.err != nil {
		return 0
	}
	n, ok := v.(int64)
	if !ok {
		p.fail(field, "is %s, want an integer", typeName(v))
		return 0
	}
	if n < lo || n > hi {
		p.fail(field, "%d is out of range %d..%d", n, lo, hi)
		return 0
	}
	return n
}

func (p *parser) seat(v any, field string) int { return int(p.integer(v, field, 0, 1)) }

// hexBytes decodes lowercase hex of lo..hi bytes.
func (p *parser) hexBytes(v any, field string, lo, hi int) []byte {
	s := p.str(v, field)
	if p.err != nil {
		return nil
	}
	if len(s)%2 != 0 || len(s)/2 < lo || len(s)/2 > hi {
		if lo == hi {
			p.fail(field, "is %d hex digits, want %d", len(s), 2*lo)
		} else {
			p.fail(field, "is %d hex digits, want an even number from %d to %d", len(s), 2*lo, 2*hi)
		}
		return nil
	}
	b := make([]byte, len(s)/2)
	for i := range b {
		hi, ok1 := hexDigit(s[2*i])
		lo, ok2 := hexDigit(s[2*i+1])
		if !ok1 || !ok2 {
			p.fail(field, "is not lowercase hex")
			return nil
		}
		b[i] = hi<<4 | lo
	}
	return b
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func (p *parser) hex32(v any, field string) (h [32]byte) {
	copy(h[:], p.hexBytes(v, field, 32, 32))
	return h
}

func (p *parser) uuid(v any, field string) dice.UUID {
	s := p.str(v, field)
	if p.err != nil {
		return dice.UUID{}
	}
	u, ok := parseUUID(s)
	if !ok {
		p.fail(field, "%q is not a lowercase 8-4-4-4-12 UUID", s)
	}
	return u
}

// parseUUID parses the lowercase 8-4-4-4-12 form of a UUID.
func parseUUID[T string | []byte](s T) (dice.UUID, bool) {
	var u dice.UUID
	if len(s) != 36 {
		return u, false
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return u, false
			}
			i++
			continue
		}
		hi, ok1 := hexDigit(s[i])
		lo, ok2 := hexDigit(s[i+1])
		if !ok1 || !ok2 {
			return u, false
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	return u, true
}

func (p *parser) time(v any, field string) time.Time {
	s := p.str(v, field)
	if p.err != nil {
		return time.Time{}
	}
	t, ok := parseTime(s)
	if !ok {
		p.fail(field, "%q is not a UTC time of the form 2026-11-30T10:37:31.123Z", s)
	}
	return t
}

// parseTime parses the exact form YYYY-MM-DDTHH:MM:SS.mmmZ of a real UTC
// time (no leap seconds).
func parseTime[T string | []byte](s T) (time.Time, bool) {
	if len(s) != len(TimeLayout) {
		return time.Time{}, false
	}
	num := func(i, n int) int {
		v := 0
		for j := i; j < i+n; j++ {
			c := s[j]
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	const form = "    -  -  T  :  :  .   Z"
	for i := 0; i < len(form); i++ {
		if c := form[i]; c != ' ' && s[i] != c {
			return time.Time{}, false
		}
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, minute, sec, ms := num(11, 2), num(14, 2), num(17, 2), num(20, 3)
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
		sec < 0 || sec > 59 || ms < 0 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, ms*int(time.Millisecond), time.UTC)
	if t.Day() != day { // February 30 and the like
		return time.Time{}, false
	}
	return t, true
}

func (p *parser) dice(v any, field string) dice.Dice {
	if p.err != nil {
		return dice.Dice{}
	}
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		if ok {
			p.fail(field, "has %d elements, want 2", len(a))
		} else {
			p.fail(field, "is %s, want an array of two dice", typeName(v))
		}
		return dice.Dice{}
	}
	return dice.Dice{
		int(p.integer(a[0], field+"[0]", 1, 6)),
		int(p.integer(a[1], field+"[1]", 1, 6)),
	}
}

// settings checks a settings object and returns its canonical bytes: the
// members zarlog reads must be valid (ParseSettings).
func (p *parser) settings(v any, field string) []byte {
	if p.err != nil {
		return nil
	}
	o, ok := v.(cjson.Object)
	if !ok {
		p.fail(field, "is %s, want an object", typeName(v))
		return nil
	}
	if _, member, why := settingsOf(o); member != "" {
		p.fail(field+"."+member, "%s", why)
		return nil
	}
	return cjson.Append(nil, o)
}

// utf8Len checks a string of lo..hi bytes of UTF-8 (the decoder already
// refuses invalid UTF-8; the check is kept for Format's callers).
func (p *parser) utf8Len(v any, field string, lo, hi int) string {
	s := p.str(v, field)
	if p.err != nil {
		return ""
	}
	if len(s) < lo || len(s) > hi || !utf8.ValidString(s) {
		p.fail(field, "is %d bytes, want %d..%d bytes of UTF-8", len(s), lo, hi)
		return ""
	}
	return s
}

// Identifier syntax (FORMATS.md §1.1).
func validID[T string | []byte](s T, extra string, maxLen int) bool {
	if len(s) == 0 || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && strings.IndexByte(extra, c) >= 0:
		default:
			return false
		}
	}
	return true
}

// ValidEventID reports whether s is a valid event id:
// [A-Za-z0-9][A-Za-z0-9._:-]{0,127}.
func ValidEventID(s string) bool { return validID(s, "._:-", 128) }

// ValidGameID reports whether s is a valid game id:
// [A-Za-z0-9][A-Za-z0-9._-]{0,127}. Under tavlarena-v1 and per-roll-v1 the
// game id must moreover be a lowercase UUID.
func ValidGameID(s string) bool { return validID(s, "._-", 128) }

// ValidEmitter reports whether s is a valid emitter id: [a-z0-9][a-z0-9-]{0,62}.
func ValidEmitter(s string) bool { return validEmitter(s) }

func validEmitter[T string | []byte](s T) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || i > 0 && c == '-') {
			return false
		}
	}
	return true
}

var (
	envelopeKeys       = []string{"body", "emitter", "game", "id", "scheme", "seq", "time", "type", "v"}
	envelopeKeysSigned = []string{"body", "emitter", "game", "id", "scheme", "seq", "sig", "time", "type", "v"}
)

func (p *parser) event(v any) *Event {
	o, ok := v.(cjson.Object)
	if !ok {
		p.fail("", "is %s, want an object", typeName(v))
		return nil
	}
	_, hasSig := o.Get("sig")
	keys := envelopeKeys
	if hasSig {
		keys = envelopeKeysSigned
	}
	vals := p.object(o, "", keys...)
	if vals == nil {
		return nil
	}
	get := func(k string) any {
		for _, m := range vals {
			if m.Key == k {
				return m.Value
			}
		}
		panic("events: unknown envelope key " + k)
	}
	p.integer(get("v"), "v", Version, Version)
	typ := Type(p.str(get("type"), "type"))
	if p.err == nil && !typ.Allowed(PerRoll) && !typ.Allowed(Tavlarena) && !typ.Allowed(Anchored) {
		p.fail("type", "%q is not an event type", typ)
	}
	scheme := Scheme(p.str(get("scheme"), "scheme"))
	if p.err == nil && !scheme.valid() {
		p.fail("scheme", "%q is not a scheme (tavlarena-v1, anchored-v1, per-roll-v1)", scheme)
	}
	if p.err == nil && !typ.Allowed(scheme) {
		p.fail("type", "%q events do not exist in %s", typ, scheme)
	}
	id := p.str(get("id"), "id")
	if p.err == nil && !ValidEventID(id) {
		p.fail("id", "%q is not an event id ([A-Za-z0-9][A-Za-z0-9._:-]{0,127})", id)
	}
	game := p.str(get("game"), "game")
	if p.err == nil && !ValidGameID(game) {
		p.fail("game", "%q is not a game id ([A-Za-z0-9][A-Za-z0-9._-]{0,127})", game)
	}
	if p.err == nil && scheme != Anchored {
		if _, ok := parseUUID(game); !ok {
			p.fail("game", "%q: a %s game id must be a lowercase UUID", game, scheme)
		}
	}
	seq := p.integer(get("seq"), "seq", 0, cjson.MaxSafeInteger)
	emitter := p.str(get("emitter"), "emitter")
	if p.err == nil && !ValidEmitter(emitter) {
		p.fail("emitter", "%q is not an emitter id ([a-z0-9][a-z0-9-]{0,62})", emitter)
	}
	t := p.time(get("time"), "time")
	var sig []byte
	if p.err == nil {
		switch {
		case typ.Binding() && !hasSig:
			p.fail("sig", "missing: %s events are binding and must be signed", typ)
		case !typ.Binding() && hasSig:
			p.fail("sig", "present: %s events are not binding and must not have a sig", typ)
		case hasSig:
			sig = p.hexBytes(get("sig"), "sig", ed25519.SignatureSize, ed25519.SignatureSize)
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

func (p *parser) body(scheme Scheme, typ Type, v any) Body {
	const f = "body"
	switch typ {
	case TypeCommit:
		switch scheme {
		case Tavlarena:
			m := p.object(v, f, "commitment", "seats", "settings")
			if m == nil {
				return nil
			}
			var b TavlarenaCommit
			b.Commitment = p.hex32(m[0].Value, f+".commitment")
			if seats, ok := m[1].Value.([]any); !ok || len(seats) != 2 {
				p.fail(f+".seats", "is not an array of two UUIDs")
			} else {
				b.Seats[0] = p.uuid(seats[0], f+".seats[0]")
				b.Seats[1] = p.uuid(seats[1], f+".seats[1]")
				if p.err == nil && b.Seats[0] == b.Seats[1] {
					p.fail(f+".seats", "both seats are %s", b.Seats[0])
				}
			}
			b.Settings = p.settings(m[2].Value, f+".settings")
			return b
		case Anchored:
			m := p.object(v, f, "anchor", "fingerprint", "gameNo", "matchId", "sealedAt", "settings")
			if m == nil {
				return nil
			}
			var b AnchoredCommit
			if a := p.object(m[0].Value, f+".anchor", "chain", "round"); a != nil {
				b.Anchor.Chain = p.hex32(a[0].Value, f+".anchor.chain")
				b.Anchor.Round = uint64(p.integer(a[1].Value, f+".anchor.round", 1, cjson.MaxSafeInteger))
			}
			b.Fingerprint = p.hex32(m[1].Value, f+".fingerprint")
			b.GameNo = uint32(p.integer(m[2].Value, f+".gameNo", 0, maxU32))
			b.MatchID = p.utf8Len(m[3].Value, f+".matchId", 1, 256)
			b.SealedAt = p.time(m[4].Value, f+".sealedAt")
			b.Settings = p.settings(m[5].Value, f+".settings")
			return b
		default:
			m := p.object(v, f, "settings")
			if m == nil {
				return nil
			}
			return PerRollCommit{Settings: p.settings(m[0].Value, f+".settings")}
		}
	case TypeContribution:
		if scheme == Tavlarena {
			m := p.object(v, f, "contribution", "seat")
			if m == nil {
				return nil
			}
			return Contribution{Contribution: p.hex32(m[0].Value, f+".contribution"), Seat: p.seat(m[1].Value, f+".seat")}
		}
		m := p.object(v, f, "seat", "token")
		if m == nil {
			return nil
		}
		b := TokenContribution{Seat: p.seat(m[0].Value, f+".seat"), Token: p.str(m[1].Value, f+".token")}
		if p.err == nil {
			if err := dice.CheckToken(b.Token); err != nil {
				p.fail(f+".token", "%s", err.Error())
			}
		}
		return b
	case TypeBeacon:
		m := p.object(v, f, "chain", "randomness", "round", "signature")
		if m == nil {
			return nil
		}
		return Beacon{
			Chain:      p.hex32(m[0].Value, f+".chain"),
			Randomness: p.hex32(m[1].Value, f+".randomness"),
			Round:      uint64(p.integer(m[2].Value, f+".round", 1, cjson.MaxSafeInteger)),
			Signature:  p.hexBytes(m[3].Value, f+".signature", 1, MaxBeaconSignature),
		}
	case TypeRoll:
		m := p.object(v, f, "dice", "kind", "n")
		if m == nil {
			return nil
		}
		b := Roll{Dice: p.dice(m[0].Value, f+".dice"), Kind: dice.Kind(p.str(m[1].Value, f+".kind")), N: uint32(p.integer(m[2].Value, f+".n", 0, maxU32))}
		if p.err == nil && b.Kind != dice.KindOpening && b.Kind != dice.KindReroll && b.Kind != dice.KindTurn {
			p.fail(f+".kind", "%q is not opening, reroll or turn", b.Kind)
		}
		return b
	case TypeMove:
		m := p.object(v, f, "n", "play", "seat")
		if m == nil {
			return nil
		}
		return Move{N: uint32(p.integer(m[0].Value, f+".n", 0, maxU32)), Play: p.utf8Len(m[1].Value, f+".play", 0, MaxPlay), Seat: p.seat(m[2].Value, f+".seat")}
	case TypeEnd:
		m := p.object(v, f, "points", "result", "winner")
		if m == nil {
			return nil
		}
		b := End{Points: uint32(p.integer(m[0].Value, f+".points", 0, maxU32)), Result: Result(p.str(m[1].Value, f+".result")), Winner: NoWinner}
		if p.err == nil && b.Result != Finished && b.Result != Resigned && b.Result != Abandoned {
			p.fail(f+".result", "%q is not finished, resigned or abandoned", b.Result)
		}
		if m[2].Value != nil {
			b.Winner = p.seat(m[2].Value, f+".winner")
		}
		if p.err == nil && b.Winner == NoWinner && b.Result == Resigned {
			p.fail(f+".winner", "null, but a resigned game has a winner")
		}
		if p.err == nil && b.Winner == NoWinner && b.Points != 0 {
			p.fail(f+".points", "%d points without a winner", b.Points)
		}
		return b
	case TypeReveal:
		m := p.object(v, f, "seed")
		if m == nil {
			return nil
		}
		return Reveal{Seed: p.hex32(m[0].Value, f+".seed")}
	case TypeRollCommit:
		m := p.object(v, f, "commitment", "rollId")
		if m == nil {
			return nil
		}
		return RollCommit{Commitment: p.hex32(m[0].Value, f+".commitment"), RollID: p.uuid(m[1].Value, f+".rollId")}
	case TypeRollSecond:
		m := p.object(v, f, "rollId", "second", "secondFrom")
		if m == nil {
			return nil
		}
		b := RollSecond{RollID: p.uuid(m[0].Value, f+".rollId"), Second: p.hex32(m[1].Value, f+".second"), SecondFrom: SecondFrom(p.str(m[2].Value, f+".secondFrom"))}
		if p.err == nil && b.SecondFrom != FromClient && b.SecondFrom != FromServer {
			p.fail(f+".secondFrom", "%q is not client or server", b.SecondFrom)
		}
		return b
	case TypeRollReveal:
		m := p.object(v, f, "dice", "rollId", "seed")
		if m == nil {
			return nil
		}
		return RollReveal{Dice: p.dice(m[0].Value, f+".dice"), RollID: p.uuid(m[1].Value, f+".rollId"), Seed: p.hex32(m[2].Value, f+".seed")}
	}
	p.fail("type", "%q is not an event type", typ) // unreachable: checked by the caller
	return nil
}
