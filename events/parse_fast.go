package events

import (
	"bytes"
	"crypto/ed25519"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
)

// The fast path of Parse. An event's canonical encoding is fixed down to the
// byte: its members come in one order, with no whitespace, integers without
// sign or leading zeros, lowercase hex, and strings whose only escapes are
// the ones cjson.AppendString writes. parseCanonicalFast reads the bytes once,
// straight into the typed fields, matching that encoding literally, and runs
// the same checks of ranges and identifiers as the tree walk of parseReference.
// It accepts only what it can see is exactly canonical and valid: anything
// else — including valid events it does not handle, such as strings with
// escapes — makes it give up (ok false), and Parse then runs parseReference,
// which accepts or refuses with the precise reason. The tests hold the two
// to the same decision and the same Event (FuzzParseCanonicalFast).

// A scanner reads canonical JSON from b at i. Its methods return false when
// the text is not what they expect; the caller then gives up.
type scanner struct {
	b []byte
	i int
}

// lit consumes s.
func (s *scanner) lit(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// str consumes a string without escapes or control characters and returns
// its bytes: such a string is canonical exactly when it is valid UTF-8.
func (s *scanner) str() ([]byte, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	ascii := true
	for j := start; j < len(s.b); j++ {
		c := s.b[j]
		if strPlain[c] {
			continue
		}
		switch {
		case c == '"':
			v := s.b[start:j]
			if !ascii && !utf8.Valid(v) {
				return nil, false
			}
			s.i = j + 1
			return v, true
		case c == '\\' || c < 0x20:
			return nil, false
		default: // c >= 0x80
			ascii = false
		}
	}
	return nil, false
}

// strPlain[c] reports whether byte c stands for itself inside a canonical
// JSON string and is ASCII: not '"', not '\\', not a control character.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// uint consumes a canonical non-negative integer of at most hi.
func (s *scanner) uint(hi uint64) (uint64, bool) {
	j := s.i
	var n uint64
	for j < len(s.b) && '0' <= s.b[j] && s.b[j] <= '9' {
		if j-s.i >= 16 { // more digits than 2^53−1 has
			return 0, false
		}
		n = n*10 + uint64(s.b[j]-'0')
		j++
	}
	if j == s.i || s.b[s.i] == '0' && j-s.i > 1 || n > hi {
		return 0, false
	}
	s.i = j
	return n, true
}

// hex consumes a string of lowercase hex digits and decodes it into dst,
// which it must fill exactly.
func (s *scanner) hex(dst []byte) bool {
	if len(s.b)-s.i < 2*len(dst)+2 || s.b[s.i] != '"' || s.b[s.i+1+2*len(dst)] != '"' {
		return false
	}
	if !decodeLowerHex(dst, s.b[s.i+1:]) {
		return false
	}
	s.i += 2*len(dst) + 2
	return true
}

// hexVar consumes a string of lo..hi bytes in lowercase hex.
func (s *scanner) hexVar(lo, hi int) ([]byte, bool) {
	v, ok := s.str()
	if !ok || len(v)%2 != 0 || len(v)/2 < lo || len(v)/2 > hi {
		return nil, false
	}
	return lowerHex(v)
}

func (s *scanner) uuid() (dice.UUID, bool) {
	v, ok := s.str()
	if !ok {
		return dice.UUID{}, false
	}
	return parseUUID(v)
}

func (s *scanner) time() (time.Time, bool) {
	v, ok := s.str()
	if !ok {
		return time.Time{}, false
	}
	return parseTime(v)
}

func (s *scanner) seat() (int, bool) {
	n, ok := s.uint(1)
	return int(n), ok
}

func (s *scanner) u32() (uint32, bool) {
	n, ok := s.uint(maxU32)
	return uint32(n), ok
}

func (s *scanner) die() (int, bool) {
	n, ok := s.uint(6)
	return int(n), ok && n >= 1
}

func (s *scanner) dice() (d dice.Dice, ok bool) {
	if !s.lit("[") {
		return d, false
	}
	if d[0], ok = s.die(); !ok || !s.lit(",") {
		return d, false
	}
	if d[1], ok = s.die(); !ok || !s.lit("]") {
		return d, false
	}
	return d, true
}

// maxFastDepth is the deepest nesting of a body (counted from the body
// object) the fast path reads; deeper ones go to parseReference, which counts the
// depth from the event as cjson.MaxDepth requires.
const maxFastDepth = 16

// value consumes one value whose strings have no escapes and returns its
// text. It checks only the nesting; settings checks the rest.
func (s *scanner) value() ([]byte, bool) {
	start, depth := s.i, 0
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			if _, ok := s.str(); !ok {
				return nil, false
			}
			if depth == 0 {
				return s.b[start:s.i], true
			}
			continue
		case '{', '[':
			depth++
			if depth > maxFastDepth {
				return nil, false
			}
		case '}', ']':
			depth--
			if depth < 0 {
				return nil, false
			}
			if depth == 0 {
				s.i++
				return s.b[start:s.i], true
			}
		case ',', ':':
			if depth == 0 {
				return nil, false
			}
		}
		s.i++
	}
	return nil, false
}

// object consumes an object (as value does) and returns its text.
func (s *scanner) object() ([]byte, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return nil, false
	}
	return s.value()
}

// settings consumes a commit's settings object, which must be canonical and
// valid as parser.settings requires, and returns a copy of its text. Commits
// are about one event in a hundred, so this uses the canonical-JSON decoder.
func (s *scanner) settings() ([]byte, bool) {
	v, ok := s.object()
	if !ok {
		return nil, false
	}
	tree, err := cjson.Decode(v)
	if err != nil {
		return nil, false
	}
	o, isObj := tree.(cjson.Object)
	if !isObj {
		return nil, false
	}
	if _, member, _ := settingsOf(o); member != "" {
		return nil, false
	}
	c := cjson.Append(make([]byte, 0, len(v)), o)
	return c, bytes.Equal(c, v)
}

// parseCanonicalFast is the fast path of Parse: it returns the event if b is exactly
// the canonical encoding of a valid event whose strings have no escapes, and
// ok false otherwise (parseReference then decides).
func parseCanonicalFast(b []byte) (ev *Event, ok bool) {
	s := scanner{b: b}
	if !s.lit(`{"body":`) {
		return nil, false
	}
	bodyStart := s.i
	if _, ok := s.object(); !ok {
		return nil, false
	}
	body := scanner{b: b[:s.i], i: bodyStart}
	var emitter, game, id, scheme, typ []byte
	if !s.lit(`,"emitter":`) {
		return nil, false
	}
	if emitter, ok = s.str(); !ok || !s.lit(`,"game":`) {
		return nil, false
	}
	if game, ok = s.str(); !ok || !s.lit(`,"id":`) {
		return nil, false
	}
	if id, ok = s.str(); !ok || !s.lit(`,"scheme":`) {
		return nil, false
	}
	if scheme, ok = s.str(); !ok || !s.lit(`,"seq":`) {
		return nil, false
	}
	seq, ok := s.uint(cjson.MaxSafeInteger)
	if !ok {
		return nil, false
	}
	var sig []byte
	if s.lit(`,"sig":`) {
		sig = make([]byte, ed25519.SignatureSize)
		if !s.hex(sig) {
			return nil, false
		}
	}
	if !s.lit(`,"time":`) {
		return nil, false
	}
	t, ok := s.time()
	if !ok || !s.lit(`,"type":`) {
		return nil, false
	}
	if typ, ok = s.str(); !ok || !s.lit(`,"v":1}`) || s.i != len(b) {
		return nil, false
	}

	ev = &Event{V: Version, Seq: seq, Time: t, Sig: sig}
	if ev.Scheme, ok = schemeOf(scheme); !ok {
		return nil, false
	}
	if ev.Type, ok = typeOf(typ); !ok || !ev.Type.Allowed(ev.Scheme) || ev.Type.Binding() != (sig != nil) {
		return nil, false
	}
	if !validID(id, eventRest, 128) || !validID(game, gameRest, 128) || !validEmitter(emitter) {
		return nil, false
	}
	if ev.Scheme != Anchored {
		if _, ok := parseUUID(game); !ok {
			return nil, false
		}
	}
	var text []byte // the body's one free-text member, if any
	if ev.Body, text, ok = parseBodyFast(&body, ev.Scheme, ev.Type); !ok || body.i != len(body.b) {
		return nil, false
	}
	// One allocation for the event's strings (a Builder's String does
	// not copy).
	var sb strings.Builder
	sb.Grow(len(id) + len(game) + len(emitter) + len(text))
	sb.Write(id)
	sb.Write(game)
	sb.Write(emitter)
	sb.Write(text)
	all := sb.String()
	ev.ID, all = all[:len(id)], all[len(id):]
	ev.Game, all = all[:len(game)], all[len(game):]
	ev.Emitter, all = all[:len(emitter)], all[len(emitter):]
	switch x := ev.Body.(type) {
	case AnchoredCommit:
		x.MatchID = all
		ev.Body = x
	case TokenContribution:
		x.Token = all
		ev.Body = x
	case Move:
		x.Play = all
		ev.Body = x
	}
	return ev, true
}

// parseBodyFast reads the body of an event of scheme and typ. A body with a
// free-text member (matchId, token, play) returns its bytes as text, to be
// set by the caller.
func parseBodyFast(s *scanner, scheme Scheme, typ Type) (body Body, text []byte, ok bool) {
	switch typ {
	case TypeCommit:
		switch scheme {
		case Tavlarena:
			var b TavlarenaCommit
			if !s.lit(`{"commitment":`) || !s.hex(b.Commitment[:]) || !s.lit(`,"seats":[`) {
				return nil, nil, false
			}
			if b.Seats[0], ok = s.uuid(); !ok || !s.lit(",") {
				return nil, nil, false
			}
			if b.Seats[1], ok = s.uuid(); !ok || b.Seats[0] == b.Seats[1] || !s.lit(`],"settings":`) {
				return nil, nil, false
			}
			if b.Settings, ok = s.settings(); !ok || !s.lit("}") {
				return nil, nil, false
			}
			return b, nil, true
		case Anchored:
			var b AnchoredCommit
			if !s.lit(`{"anchor":{"chain":`) || !s.hex(b.Anchor.Chain[:]) || !s.lit(`,"round":`) {
				return nil, nil, false
			}
			if b.Anchor.Round, ok = s.uint(cjson.MaxSafeInteger); !ok || b.Anchor.Round < 1 || !s.lit(`},"fingerprint":`) {
				return nil, nil, false
			}
			if !s.hex(b.Fingerprint[:]) || !s.lit(`,"gameNo":`) {
				return nil, nil, false
			}
			if b.GameNo, ok = s.u32(); !ok || !s.lit(`,"matchId":`) {
				return nil, nil, false
			}
			if text, ok = s.str(); !ok || len(text) < 1 || len(text) > 256 || !s.lit(`,"sealedAt":`) {
				return nil, nil, false
			}
			if b.SealedAt, ok = s.time(); !ok || !s.lit(`,"settings":`) {
				return nil, nil, false
			}
			if b.Settings, ok = s.settings(); !ok || !s.lit("}") {
				return nil, nil, false
			}
			return b, text, true
		default:
			var b PerRollCommit
			if !s.lit(`{"settings":`) {
				return nil, nil, false
			}
			if b.Settings, ok = s.settings(); !ok || !s.lit("}") {
				return nil, nil, false
			}
			return b, nil, true
		}
	case TypeContribution:
		if scheme == Tavlarena {
			var b Contribution
			if !s.lit(`{"contribution":`) || !s.hex(b.Contribution[:]) || !s.lit(`,"seat":`) {
				return nil, nil, false
			}
			if b.Seat, ok = s.seat(); !ok || !s.lit("}") {
				return nil, nil, false
			}
			return b, nil, true
		}
		var b TokenContribution
		if !s.lit(`{"seat":`) {
			return nil, nil, false
		}
		if b.Seat, ok = s.seat(); !ok || !s.lit(`,"token":`) {
			return nil, nil, false
		}
		if text, ok = s.str(); !ok || !s.lit("}") || dice.CheckToken(string(text)) != nil {
			return nil, nil, false
		}
		return b, text, true
	case TypeBeacon:
		var b Beacon
		if !s.lit(`{"chain":`) || !s.hex(b.Chain[:]) || !s.lit(`,"randomness":`) || !s.hex(b.Randomness[:]) || !s.lit(`,"round":`) {
			return nil, nil, false
		}
		if b.Round, ok = s.uint(cjson.MaxSafeInteger); !ok || b.Round < 1 || !s.lit(`,"signature":`) {
			return nil, nil, false
		}
		if b.Signature, ok = s.hexVar(1, MaxBeaconSignature); !ok || !s.lit("}") {
			return nil, nil, false
		}
		return b, nil, true
	case TypeRoll:
		var b Roll
		if !s.lit(`{"dice":`) {
			return nil, nil, false
		}
		if b.Dice, ok = s.dice(); !ok || !s.lit(`,"kind":`) {
			return nil, nil, false
		}
		var kind []byte
		if kind, ok = s.str(); !ok || !s.lit(`,"n":`) {
			return nil, nil, false
		}
		switch string(kind) {
		case string(dice.KindOpening):
			b.Kind = dice.KindOpening
		case string(dice.KindReroll):
			b.Kind = dice.KindReroll
		case string(dice.KindTurn):
			b.Kind = dice.KindTurn
		default:
			return nil, nil, false
		}
		if b.N, ok = s.u32(); !ok || !s.lit("}") {
			return nil, nil, false
		}
		return b, nil, true
	case TypeMove:
		var b Move
		if !s.lit(`{"n":`) {
			return nil, nil, false
		}
		if b.N, ok = s.u32(); !ok || !s.lit(`,"play":`) {
			return nil, nil, false
		}
		if text, ok = s.str(); !ok || len(text) > MaxPlay || !s.lit(`,"seat":`) {
			return nil, nil, false
		}
		if b.Seat, ok = s.seat(); !ok || !s.lit("}") {
			return nil, nil, false
		}
		return b, text, true
	case TypeEnd:
		b := End{Winner: NoWinner}
		if !s.lit(`{"points":`) {
			return nil, nil, false
		}
		if b.Points, ok = s.u32(); !ok || !s.lit(`,"result":`) {
			return nil, nil, false
		}
		var result []byte
		if result, ok = s.str(); !ok || !s.lit(`,"winner":`) {
			return nil, nil, false
		}
		switch string(result) {
		case string(Finished):
			b.Result = Finished
		case string(Resigned):
			b.Result = Resigned
		case string(Abandoned):
			b.Result = Abandoned
		default:
			return nil, nil, false
		}
		if !s.lit("null") {
			if b.Winner, ok = s.seat(); !ok {
				return nil, nil, false
			}
		}
		if !s.lit("}") || b.Winner == NoWinner && (b.Result == Resigned || b.Points != 0) {
			return nil, nil, false
		}
		return b, nil, true
	case TypeReveal:
		var b Reveal
		if !s.lit(`{"seed":`) || !s.hex(b.Seed[:]) || !s.lit("}") {
			return nil, nil, false
		}
		return b, nil, true
	case TypeRollCommit:
		var b RollCommit
		if !s.lit(`{"commitment":`) || !s.hex(b.Commitment[:]) || !s.lit(`,"rollId":`) {
			return nil, nil, false
		}
		if b.RollID, ok = s.uuid(); !ok || !s.lit("}") {
			return nil, nil, false
		}
		return b, nil, true
	case TypeRollSecond:
		var b RollSecond
		if !s.lit(`{"rollId":`) {
			return nil, nil, false
		}
		if b.RollID, ok = s.uuid(); !ok || !s.lit(`,"second":`) || !s.hex(b.Second[:]) || !s.lit(`,"secondFrom":`) {
			return nil, nil, false
		}
		from, ok := s.str()
		if !ok || !s.lit("}") {
			return nil, nil, false
		}
		switch string(from) {
		case string(FromClient):
			b.SecondFrom = FromClient
		case string(FromServer):
			b.SecondFrom = FromServer
		default:
			return nil, nil, false
		}
		return b, nil, true
	case TypeRollReveal:
		var b RollReveal
		if !s.lit(`{"dice":`) {
			return nil, nil, false
		}
		if b.Dice, ok = s.dice(); !ok || !s.lit(`,"rollId":`) {
			return nil, nil, false
		}
		if b.RollID, ok = s.uuid(); !ok || !s.lit(`,"seed":`) || !s.hex(b.Seed[:]) || !s.lit("}") {
			return nil, nil, false
		}
		return b, nil, true
	}
	return nil, nil, false
}

func schemeOf(b []byte) (Scheme, bool) {
	switch string(b) {
	case string(Tavlarena):
		return Tavlarena, true
	case string(Anchored):
		return Anchored, true
	case string(PerRoll):
		return PerRoll, true
	}
	return "", false
}

func typeOf(b []byte) (Type, bool) {
	switch string(b) {
	case string(TypeCommit):
		return TypeCommit, true
	case string(TypeContribution):
		return TypeContribution, true
	case string(TypeBeacon):
		return TypeBeacon, true
	case string(TypeRoll):
		return TypeRoll, true
	case string(TypeMove):
		return TypeMove, true
	case string(TypeEnd):
		return TypeEnd, true
	case string(TypeReveal):
		return TypeReveal, true
	case string(TypeRollCommit):
		return TypeRollCommit, true
	case string(TypeRollSecond):
		return TypeRollSecond, true
	case string(TypeRollReveal):
		return TypeRollReveal, true
	}
	return "", false
}
