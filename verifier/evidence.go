package verifier

import (
	"encoding/hex"
	"errors"
	"fmt"
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
	ev := p.evidence(obj{root, ""})
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

// obj is a JSON object and its path.
type obj struct {
	o    cjson.Object
	path string
}

func (o obj) at(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// parser records the first error; later calls are no-ops, so field
// extraction reads straight down without an if after every line.
type parser struct{ err error }

func (p *parser) fail(field string, id msgID, args ...any) {
	if p.err == nil {
		p.err = &InputError{Field: field, msg: msg(id, append([]any{field}, args...)...)}
	}
}

// want records that field holds v where want was expected.
func (p *parser) want(field string, want msgID, v any) {
	p.fail(field, mInWant, msg(want), snippet(v))
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

func (p *parser) get(o obj, key string) (any, bool) {
	if p.err != nil {
		return nil, false
	}
	v, ok := o.o.Get(key)
	if !ok {
		p.fail(o.at(key), mInMissing)
	}
	return v, ok
}

func (p *parser) object(o obj, key string) obj {
	v, ok := p.get(o, key)
	if !ok {
		return obj{path: o.at(key)}
	}
	x, ok := v.(cjson.Object)
	if !ok {
		p.want(o.at(key), mWantObject, v)
	}
	return obj{x, o.at(key)}
}

func (p *parser) str(o obj, key string) string {
	v, ok := p.get(o, key)
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		p.want(o.at(key), mWantString, v)
	}
	return s
}

// oneOf reads a string member that must be one of values.
func (p *parser) oneOf(o obj, key string, want msgID, values ...string) string {
	v, ok := p.get(o, key)
	if !ok {
		return ""
	}
	if s, ok := v.(string); ok {
		for _, x := range values {
			if s == x {
				return s
			}
		}
	}
	p.want(o.at(key), want, v)
	return ""
}

func (p *parser) integer(o obj, key string, lo, hi int64, want msgID) int64 {
	v, ok := p.get(o, key)
	if !ok {
		return 0
	}
	return p.intValue(o.at(key), v, lo, hi, want)
}

func (p *parser) intValue(field string, v any, lo, hi int64, want msgID) int64 {
	n, ok := v.(int64)
	if !ok || n < lo || n > hi {
		p.want(field, want, v)
		return 0
	}
	return n
}

func (p *parser) array(o obj, key string) []any {
	v, ok := p.get(o, key)
	if !ok {
		return nil
	}
	a, ok := v.([]any)
	if !ok {
		p.want(o.at(key), mWantArray, v)
	}
	return a
}

func (p *parser) pair(o obj, key string) [2]any {
	a := p.array(o, key)
	if p.err == nil && len(a) != 2 {
		p.want(o.at(key), mWantPair, a)
	}
	if p.err != nil {
		return [2]any{}
	}
	return [2]any{a[0], a[1]}
}

var (
	hex32RE = regexp.MustCompile(`^[0-9a-f]{64}$`)
	hexRE   = regexp.MustCompile(`^(?:[0-9a-f]{2})*$`)
	uuidRE  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	// timeRE is RFC 3339 date-time; "T" and "Z" may be lower case (RFC 3339 §5.6).
	timeRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$`)
)

func (p *parser) hex32Value(field string, v any) [32]byte {
	var out [32]byte
	s, ok := v.(string)
	if !ok || !hex32RE.MatchString(s) {
		p.want(field, mWantHex32, v)
		return out
	}
	hex.Decode(out[:], []byte(s))
	return out
}

func (p *parser) hex32(o obj, key string) [32]byte {
	v, ok := p.get(o, key)
	if !ok {
		return [32]byte{}
	}
	return p.hex32Value(o.at(key), v)
}

func (p *parser) uuidValue(field string, v any) dice.UUID {
	s, ok := v.(string)
	if !ok || !uuidRE.MatchString(s) {
		p.want(field, mWantUUID, v)
		return dice.UUID{}
	}
	u, err := dice.ParseUUID(s)
	if err != nil { // unreachable after the pattern; kept as a guard
		p.want(field, mWantUUID, v)
	}
	return u
}

func (p *parser) uuid(o obj, key string) dice.UUID {
	v, ok := p.get(o, key)
	if !ok {
		return dice.UUID{}
	}
	return p.uuidValue(o.at(key), v)
}

func (p *parser) evidence(root obj) *Evidence {
	ev := &Evidence{}
	p.oneOf(root, "format", mWantFormat, FormatName)
	ev.Scheme = p.oneOf(root, "scheme", mWantScheme, dice.Tavlarena, dice.Anchored, dice.PerRoll)
	if p.err != nil {
		return nil
	}
	if _, ok := root.o.Get("settings"); ok || ev.Scheme != dice.PerRoll {
		p.settings(ev, p.object(root, "settings"))
	} else {
		ev.Opening, ev.Opponent = dice.OpeningWestern, OpponentHuman
	}
	if _, ok := root.o.Get("log"); ok {
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

func (p *parser) settings(ev *Evidence, s obj) {
	if p.err != nil {
		return
	}
	ev.Settings = cjson.Append(nil, s.o)
	ev.Opening, ev.Opponent = dice.OpeningWestern, OpponentHuman
	if _, ok := s.o.Get("opening"); ok {
		ev.Opening = dice.Opening(p.oneOf(s, "opening", mWantOpening, string(dice.OpeningWestern), string(dice.OpeningTurkishReroll)))
	}
	if _, ok := s.o.Get("opponent"); ok {
		ev.Opponent = p.oneOf(s, "opponent", mWantOpponent, OpponentHuman, OpponentComputer)
	}
}

func (p *parser) gameRolls(root obj) []dice.Roll {
	a := p.array(root, "rolls")
	rolls := make([]dice.Roll, 0, len(a))
	for i, v := range a {
		path := fmt.Sprintf("rolls[%d]", i)
		r, ok := v.(cjson.Object)
		if !ok {
			p.want(path, mWantObject, v)
			return nil
		}
		o := obj{r, path}
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

func (p *parser) dice(o obj) dice.Dice {
	pr := p.pair(o, "dice")
	var d dice.Dice
	for j, v := range pr {
		if p.err != nil {
			break
		}
		d[j] = int(p.intValue(fmt.Sprintf("%s.dice[%d]", o.path, j), v, 1, 6, mWantDie))
	}
	return d
}

func (p *parser) tavlarena(root obj) *TavlarenaEvidence {
	t := &TavlarenaEvidence{}
	t.GameID = p.uuid(root, "gameId")
	seats := p.pair(root, "seats")
	for i, v := range seats {
		if p.err == nil {
			t.Seats[i] = p.uuidValue(fmt.Sprintf("seats[%d]", i), v)
		}
	}
	t.Commitment = p.hex32(root, "commitment")
	t.Seed = p.hex32(root, "seed")
	cs := p.pair(root, "contributions")
	for i, v := range cs {
		if p.err == nil {
			t.Contributions[i] = p.hex32Value(fmt.Sprintf("contributions[%d]", i), v)
		}
	}
	t.Rolls = p.gameRolls(root)
	return t
}

func (p *parser) anchored(root obj) *AnchoredEvidence {
	a := &AnchoredEvidence{}
	a.MatchID = p.str(root, "matchId")
	a.GameNo = uint32(p.integer(root, "gameNo", 0, math.MaxUint32, mWantU32))
	toks := p.pair(root, "tokens")
	for i, v := range toks {
		if p.err != nil {
			break
		}
		s, ok := v.(string)
		if !ok || dice.CheckToken(s) != nil {
			p.want(fmt.Sprintf("tokens[%d]", i), mWantToken, v)
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
			s, ok := v.(string)
			if !ok || !hexRE.MatchString(s) {
				p.want(an.at("signature"), mWantHex, v)
			} else {
				a.Anchor.Signature, _ = hex.DecodeString(s)
			}
		}
		a.Anchor.Randomness = p.hex32(an, "randomness")
	}
	if v, ok := p.get(root, "sealedAt"); ok {
		s, _ := v.(string)
		t, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s))
		if !timeRE.MatchString(s) || err != nil {
			p.want("sealedAt", mWantTime, v)
		}
		a.SealedAt = t
	}
	a.Rolls = p.gameRolls(root)
	return a
}

func (p *parser) perRoll(root obj) *PerRollEvidence {
	pr := &PerRollEvidence{}
	pr.MatchID = p.uuid(root, "matchId")
	arr := p.array(root, "rolls")
	pr.Rolls = make([]PerRollRoll, 0, len(arr))
	for i, v := range arr {
		path := fmt.Sprintf("rolls[%d]", i)
		r, ok := v.(cjson.Object)
		if !ok {
			p.want(path, mWantObject, v)
			return nil
		}
		o := obj{r, path}
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
