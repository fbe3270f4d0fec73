package verifier

import (
	"encoding/hex"
	"errors"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
)

// FormatName is the value of an evidence file's "format" member.
const FormatName = "dice-proof-v1"

// MaxEvidenceSize is the largest evidence file Parse reads (64 MiB); a
// finished game's proof bundle is a few hundred kilobytes at most
// (docs/FORMATS.md §3).
const MaxEvidenceSize = 64 << 20

// Opponent values of a game's settings ("opponent" member).
const (
	OpponentHuman    = "human"    // the default: an online game between two players
	OpponentComputer = "computer" // a game against the computer, run on the player's device
)

// Evidence is a parsed dice-proof-v1 evidence file. Exactly one of
// Tavlarena, Anchored and PerRoll is set, matching Scheme.
type Evidence struct {
	Scheme string // dice.Tavlarena, dice.Anchored or dice.PerRoll

	// Settings is the settings object in canonical JSON. It is required for
	// the per-game schemes; for per-roll-v1 it is optional (nil if absent).
	Settings []byte
	Opening  dice.Opening // from settings.opening; western when absent
	Opponent string       // from settings.opponent; OpponentHuman when absent

	Tavlarena *TavlarenaEvidence
	Anchored  *AnchoredEvidence
	PerRoll   *PerRollEvidence

	// Log is the "log" member of a proof bundle, nil in a plain evidence
	// file.
	Log *Log
}

// TavlarenaEvidence holds the fields of a tavlarena-v1 game.
type TavlarenaEvidence struct {
	GameID        dice.UUID
	Seats         [2]dice.UUID
	Commitment    [32]byte
	Seed          [32]byte
	Contributions [2][32]byte
	Rolls         []dice.Roll
}

// AnchoredEvidence holds the fields of an anchored-v1 game.
type AnchoredEvidence struct {
	MatchID     string
	GameNo      uint32
	Tokens      [2]string
	Fingerprint [32]byte
	Seed        [32]byte
	Anchor      Beacon
	SealedAt    time.Time
	Rolls       []dice.Roll
}

// A Beacon is the drand beacon an anchored-v1 game names.
type Beacon struct {
	Chain      [32]byte
	Round      uint64
	Signature  []byte
	Randomness [32]byte
}

// PerRollEvidence holds the fields of a per-roll-v1 match.
type PerRollEvidence struct {
	MatchID dice.UUID
	Rolls   []PerRollRoll
}

// A PerRollRoll is one roll of a per-roll-v1 match.
type PerRollRoll struct {
	RollID     dice.UUID
	Commitment [32]byte
	Seed       [32]byte
	Second     [32]byte
	SecondFrom string // "client" or "server"
	Dice       dice.Dice
}

// ErrInput is matched (errors.Is) by every *InputError.
var ErrInput = errors.New("bad input")

// An InputError says why a file is not a well-formed evidence file: which
// field (a JSON path such as "rolls[3].dice[0]", empty for the whole file)
// and what was wrong. The verifier's exit code for it is 2.
type InputError struct {
	Field string
	Err   error // the underlying error (a *cjson.SyntaxError, a read error), or nil
	msg   Message
}

func (e *InputError) Error() string { return e.msg.In(English) }

// Message returns the translatable description of the error.
func (e *InputError) Message() Message { return e.msg }

// Is reports whether target is ErrInput.
func (e *InputError) Is(target error) bool { return target == ErrInput }

func (e *InputError) Unwrap() error { return e.Err }

// Parse parses a dice-proof-v1 evidence file strictly: the whole file must
// be JSON under the canonical-JSON value rules (UTF-8, no duplicate keys at
// any depth, integers only with |n| ≤ 2^53−1, nesting at most 64 deep —
// whitespace and member order are free); required members must be present
// with the right types; unknown members are ignored. Errors are
// *InputError and name the field.
func Parse(data []byte) (*Evidence, error) {
	if len(data) > MaxEvidenceSize {
		return nil, &InputError{msg: msg(mInTooLarge, MaxEvidenceSize)}
	}
	v, err := cjson.Decode(data)
	if err != nil {
		return nil, jsonError(err)
	}
	root, ok := v.(cjson.Object)
	if !ok {
		return nil, &InputError{msg: msg(mInNotObject)}
	}
	p := parser{}
	ev := p.evidence(cjson.Root(root))
	if p.err != nil {
		return nil, p.err
	}
	return ev, nil
}

func jsonError(err error) error {
	var se *cjson.SyntaxError
	if !errors.As(err, &se) {
		return &InputError{Err: err, msg: msg(mInJSON, 0)}
	}
	id := mInJSON
	switch {
	case errors.Is(err, cjson.ErrDuplicateKey):
		id = mInJSONDup
	case errors.Is(err, cjson.ErrNotInteger):
		id = mInJSONFloat
	case errors.Is(err, cjson.ErrUnsafeInteger):
		id = mInJSONUnsafe
	case errors.Is(err, cjson.ErrTooDeep):
		id = mInJSONDepth
	}
	return &InputError{Err: err, msg: msg(id, se.Offset)}
}

// parser walks a decoded document (cjson.Node: each value with its path,
// the walk the events package's reference parser uses too) and records the
// first error; later calls are no-ops, so field extraction reads straight
// down without an if after every line. Unlike the events parser it ignores
// members it does not know.
type parser struct{ err error }

func (p *parser) fail(field string, id msgID, args ...any) {
	if p.err == nil {
		p.err = &InputError{Field: field, msg: msg(id, append([]any{field}, args...)...)}
	}
}

// want records that n holds a value where want was expected.
func (p *parser) want(n cjson.Node, want msgID) {
	p.fail(n.Path, mInWant, msg(want), snippet(n.Value))
}

// snippet is a short, language-neutral rendering of a JSON value.
func snippet(v any) string {
	b := cjson.Append(nil, v)
	const max = 40
	if len(b) <= max {
		return string(b)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return string(b[:cut]) + "…"
}

// get returns member key of n, which must be there.
func (p *parser) get(n cjson.Node, key string) (cjson.Node, bool) {
	if p.err != nil {
		return cjson.Node{}, false
	}
	m, ok := n.Member(key)
	if !ok {
		p.fail(m.Path, mInMissing)
	}
	return m, ok
}

// object returns member key of n, which must be an object.
func (p *parser) object(n cjson.Node, key string) cjson.Node {
	m, ok := p.get(n, key)
	if ok {
		if _, isObj := m.Object(); !isObj {
			p.want(m, mWantObject)
		}
	}
	return m
}

func (p *parser) str(n cjson.Node, key string) string {
	m, ok := p.get(n, key)
	if !ok {
		return ""
	}
	s, ok := m.Str()
	if !ok {
		p.want(m, mWantString)
	}
	return s
}

// oneOf reads a string member that must be one of values.
func (p *parser) oneOf(n cjson.Node, key string, want msgID, values ...string) string {
	m, ok := p.get(n, key)
	if !ok {
		return ""
	}
	if s, ok := m.Str(); ok {
		for _, x := range values {
			if s == x {
				return s
			}
		}
	}
	p.want(m, want)
	return ""
}

func (p *parser) integer(n cjson.Node, key string, lo, hi int64, want msgID) int64 {
	m, ok := p.get(n, key)
	if !ok {
		return 0
	}
	return p.intValue(m, lo, hi, want)
}

func (p *parser) intValue(n cjson.Node, lo, hi int64, want msgID) int64 {
	i, ok := n.Int()
	if !ok || i < lo || i > hi {
		p.want(n, want)
		return 0
	}
	return i
}

// elems returns the elements of member key of n, which must be an array.
func (p *parser) elems(n cjson.Node, key string) (cjson.Node, []cjson.Node) {
	m, ok := p.get(n, key)
	if !ok {
		return m, nil
	}
	a, ok := m.Array()
	if !ok {
		p.want(m, mWantArray)
		return m, nil
	}
	out := make([]cjson.Node, len(a))
	for i := range a {
		out[i] = m.Elem(a, i)
	}
	return m, out
}

// pair returns the two elements of member key of n, an array of two, or
// nil.
func (p *parser) pair(n cjson.Node, key string) []cjson.Node {
	m, a := p.elems(n, key)
	if p.err == nil && len(a) != 2 {
		p.want(m, mWantPair)
	}
	if p.err != nil {
		return nil
	}
	return a
}

var (
	hex32RE = regexp.MustCompile(`^[0-9a-f]{64}$`)
	hexRE   = regexp.MustCompile(`^(?:[0-9a-f]{2})*$`)
	uuidRE  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	// timeRE is RFC 3339 date-time; "T" and "Z" may be lower case (RFC 3339 §5.6).
	timeRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$`)
)

func (p *parser) hex32Value(n cjson.Node) [32]byte {
	var out [32]byte
	s, ok := n.Str()
	if !ok || !hex32RE.MatchString(s) {
		p.want(n, mWantHex32)
		return out
	}
	hex.Decode(out[:], []byte(s))
	return out
}

func (p *parser) hex32(n cjson.Node, key string) [32]byte {
	m, ok := p.get(n, key)
	if !ok {
		return [32]byte{}
	}
	return p.hex32Value(m)
}

func (p *parser) uuidValue(n cjson.Node) dice.UUID {
	s, ok := n.Str()
	if !ok || !uuidRE.MatchString(s) {
		p.want(n, mWantUUID)
		return dice.UUID{}
	}
	u, err := dice.ParseUUID(s)
	if err != nil { // unreachable after the pattern; kept as a guard
		p.want(n, mWantUUID)
	}
	return u
}

func (p *parser) uuid(n cjson.Node, key string) dice.UUID {
	m, ok := p.get(n, key)
	if !ok {
		return dice.UUID{}
	}
	return p.uuidValue(m)
}

func (p *parser) evidence(root cjson.Node) *Evidence {
	ev := &Evidence{}
	p.oneOf(root, "format", mWantFormat, FormatName)
	ev.Scheme = p.oneOf(root, "scheme", mWantScheme, dice.Tavlarena, dice.Anchored, dice.PerRoll)
	if p.err != nil {
		return nil
	}
	if _, ok := root.Member("settings"); ok || ev.Scheme != dice.PerRoll {
		p.settings(ev, p.object(root, "settings"))
	} else {
		ev.Opening, ev.Opponent = dice.OpeningWestern, OpponentHuman
	}
	if _, ok := root.Member("log"); ok {
		ev.Log = p.log(p.object(root, "log"))
	}
	switch ev.Scheme {
	case dice.Tavlarena:
		ev.Tavlarena = p.tavlarena(root)
	case dice.Anchored:
		ev.Anchored = p.anchored(root)
	case dice.PerRoll:
		ev.PerRoll = p.perRoll(root)
	}
	if p.err != nil {
		return nil
	}
	return ev
}

func (p *parser) settings(ev *Evidence, s cjson.Node) {
	if p.err != nil {
		return
	}
	ev.Settings = cjson.Append(nil, s.Value)
	ev.Opening, ev.Opponent = dice.OpeningWestern, OpponentHuman
	if _, ok := s.Member("opening"); ok {
		ev.Opening = dice.Opening(p.oneOf(s, "opening", mWantOpening, string(dice.OpeningWestern), string(dice.OpeningTurkishReroll)))
	}
	if _, ok := s.Member("opponent"); ok {
		ev.Opponent = p.oneOf(s, "opponent", mWantOpponent, OpponentHuman, OpponentComputer)
	}
}

// rollObject reports whether r, an element of "rolls", is an object, and
// records the error if it is not.
func (p *parser) rollObject(r cjson.Node) bool {
	if _, ok := r.Object(); !ok {
		p.want(r, mWantObject)
		return false
	}
	return true
}

func (p *parser) gameRolls(root cjson.Node) []dice.Roll {
	_, objs := p.elems(root, "rolls")
	rolls := make([]dice.Roll, 0, len(objs))
	for _, o := range objs {
		if !p.rollObject(o) {
			return nil
		}
		n := p.integer(o, "n", 0, math.MaxUint32, mWantU32)
		d := p.dice(o)
		k := p.oneOf(o, "kind", mWantKind, string(dice.KindOpening), string(dice.KindReroll), string(dice.KindTurn))
		if p.err != nil {
			return nil
		}
		rolls = append(rolls, dice.Roll{N: uint32(n), Dice: d, Kind: dice.Kind(k)})
	}
	return rolls
}

func (p *parser) dice(o cjson.Node) dice.Dice {
	var d dice.Dice
	for j, v := range p.pair(o, "dice") {
		if p.err != nil {
			break
		}
		d[j] = int(p.intValue(v, 1, 6, mWantDie))
	}
	return d
}

func (p *parser) tavlarena(root cjson.Node) *TavlarenaEvidence {
	t := &TavlarenaEvidence{}
	t.GameID = p.uuid(root, "gameId")
	for i, v := range p.pair(root, "seats") {
		if p.err == nil {
			t.Seats[i] = p.uuidValue(v)
		}
	}
	t.Commitment = p.hex32(root, "commitment")
	t.Seed = p.hex32(root, "seed")
	for i, v := range p.pair(root, "contributions") {
		if p.err == nil {
			t.Contributions[i] = p.hex32Value(v)
		}
	}
	t.Rolls = p.gameRolls(root)
	return t
}

func (p *parser) anchored(root cjson.Node) *AnchoredEvidence {
	a := &AnchoredEvidence{}
	a.MatchID = p.str(root, "matchId")
	a.GameNo = uint32(p.integer(root, "gameNo", 0, math.MaxUint32, mWantU32))
	for i, v := range p.pair(root, "tokens") {
		if p.err != nil {
			break
		}
		s, ok := v.Str()
		if !ok || dice.CheckToken(s) != nil {
			p.want(v, mWantToken)
			break
		}
		a.Tokens[i] = s
	}
	a.Fingerprint = p.hex32(root, "fingerprint")
	a.Seed = p.hex32(root, "seed")
	an := p.object(root, "anchor")
	if p.err == nil {
		a.Anchor.Chain = p.hex32(an, "chain")
		a.Anchor.Round = uint64(p.integer(an, "round", 0, cjson.MaxSafeInteger, mWantUint))
		if v, ok := p.get(an, "signature"); ok {
			s, ok := v.Str()
			if !ok || !hexRE.MatchString(s) {
				p.want(v, mWantHex)
			} else {
				a.Anchor.Signature, _ = hex.DecodeString(s)
			}
		}
		a.Anchor.Randomness = p.hex32(an, "randomness")
	}
	if v, ok := p.get(root, "sealedAt"); ok {
		s, _ := v.Str()
		t, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s))
		if !timeRE.MatchString(s) || err != nil {
			p.want(v, mWantTime)
		}
		a.SealedAt = t
	}
	a.Rolls = p.gameRolls(root)
	return a
}

func (p *parser) perRoll(root cjson.Node) *PerRollEvidence {
	pr := &PerRollEvidence{}
	pr.MatchID = p.uuid(root, "matchId")
	_, objs := p.elems(root, "rolls")
	pr.Rolls = make([]PerRollRoll, 0, len(objs))
	for _, o := range objs {
		if !p.rollObject(o) {
			return nil
		}
		var x PerRollRoll
		x.RollID = p.uuid(o, "rollId")
		x.Commitment = p.hex32(o, "commitment")
		x.Seed = p.hex32(o, "seed")
		x.Second = p.hex32(o, "second")
		x.SecondFrom = p.oneOf(o, "secondFrom", mWantSecondFrom, "client", "server")
		x.Dice = p.dice(o)
		if p.err != nil {
			return nil
		}
		pr.Rolls = append(pr.Rolls, x)
	}
	return pr
}
