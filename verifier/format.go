package verifier

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
)

// ErrNoEvidence is wrapped by the errors of EvidenceOf: the game cannot be
// written as a dice-proof-v1 evidence file (yet).
var ErrNoEvidence = errors.New("no evidence file for this game")

// EvidenceOf returns the dice-proof-v1 evidence of a closed game, as the
// events the game was replayed from give it: the values the verifier checks
// in a proof bundle, and the top-level fields a publisher writes (without
// the Log, which the caller adds). The game must be closed (a per-game
// scheme's reveal, a per-roll-v1 match's end, applied); an anchored-v1 game
// needs its beacon; the settings must satisfy the evidence file's rules
// (settings.opening and settings.opponent, SCHEMES.md §7). Errors wrap
// ErrNoEvidence.
func EvidenceOf(g *events.Game) (*Evidence, error) {
	ev, ie := evidenceOf(g)
	if ie != nil {
		return nil, fmt.Errorf("%w: %s", ErrNoEvidence, ie.Error())
	}
	return ev, nil
}

// evidenceOf is EvidenceOf with a translatable error.
func evidenceOf(g *events.Game) (*Evidence, *InputError) {
	if g == nil || !g.Closed {
		id := ""
		if g != nil {
			id = g.ID
		}
		return nil, &InputError{msg: msg(mEoNotClosed, id)}
	}
	so, err := cjson.Decode(g.Settings)
	settings, isObj := so.(cjson.Object)
	if err != nil || !isObj { // events.Parse admits only canonical JSON objects
		return nil, &InputError{Field: "settings", msg: msg(mEoSettings, "settings")}
	}
	ev := &Evidence{Scheme: string(g.Scheme)}
	var p parser
	p.settings(ev, cjson.Node{Path: "settings", Value: settings})
	if p.err != nil {
		field := p.err.(*InputError).Field
		return nil, &InputError{Field: field, msg: msg(mEoSettings, field)}
	}
	switch g.Scheme {
	case events.Tavlarena:
		id, _ := dice.ParseUUID(g.ID) // events.Parse admits only UUID game ids here
		ev.Tavlarena = &TavlarenaEvidence{GameID: id, Seats: g.Seats, Commitment: g.Commitment, Seed: *g.Seed,
			Contributions: g.Contributions, Rolls: append([]dice.Roll{}, g.Rolls...)}
	case events.Anchored:
		if g.Beacon == nil {
			return nil, &InputError{msg: msg(mEoNoBeacon, g.ID)}
		}
		b := g.Beacon
		ev.Anchored = &AnchoredEvidence{MatchID: g.MatchID, GameNo: g.GameNo, Tokens: g.Tokens,
			Fingerprint: g.Fingerprint, Seed: *g.Seed, SealedAt: g.SealedAt, Rolls: append([]dice.Roll{}, g.Rolls...),
			Anchor: Beacon{Chain: b.Chain, Round: b.Round, Signature: append([]byte{}, b.Signature...), Randomness: b.Randomness}}
	case events.PerRoll:
		id, _ := dice.ParseUUID(g.ID)
		pr := &PerRollEvidence{MatchID: id, Rolls: make([]PerRollRoll, len(g.RollRecords))}
		for i, r := range g.RollRecords {
			pr.Rolls[i] = PerRollRoll{RollID: r.RollID, Commitment: r.Commitment, Seed: r.Seed, Second: r.Second,
				SecondFrom: string(r.SecondFrom), Dice: r.Dice}
		}
		ev.PerRoll = pr
	default:
		return nil, &InputError{msg: msg(mEoNotClosed, g.ID)}
	}
	return ev, nil
}

// Format returns the evidence file of ev as canonical JSON (SCHEMES.md §1):
// the dice-proof-v1 members of its scheme and, for a proof bundle, the log
// member (FORMATS.md §3). It refuses evidence that Parse would refuse, so its
// output always parses, and Parse gives back ev.
func Format(ev *Evidence) ([]byte, error) {
	if ev == nil || countSet(ev) != 1 {
		return nil, errors.New("format evidence: exactly one of Tavlarena, Anchored and PerRoll must be set")
	}
	o := evidenceObject(ev)
	if l := ev.Log; l != nil {
		hashes := make([]any, len(l.Hashes))
		for i, h := range l.Hashes {
			hashes[i] = hexs(h[:])
		}
		entries := make([]any, len(l.Entries))
		for i, e := range l.Entries {
			if !utf8.Valid(e.Leaf) {
				return nil, fmt.Errorf("format evidence: log entry %d: the leaf is not UTF-8", i)
			}
			proof := make([]any, len(e.Proof))
			for j, k := range e.Proof {
				proof[j] = int64(k)
			}
			entries[i] = cjson.Object{{Key: "index", Value: int64(e.Index)}, {Key: "leaf", Value: string(e.Leaf)}, {Key: "proof", Value: proof}}
		}
		o = append(o, cjson.Member{Key: "log", Value: cjson.Object{
			{Key: "checkpoint", Value: string(l.Checkpoint)}, {Key: "entries", Value: entries}, {Key: "hashes", Value: hashes}}})
	}
	b, err := cjson.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("format evidence: %w", err)
	}
	if _, err := Parse(b); err != nil {
		return nil, fmt.Errorf("format evidence: the result does not parse: %w", err)
	}
	return b, nil
}

func countSet(ev *Evidence) int {
	n := 0
	for _, set := range []bool{ev.Tavlarena != nil, ev.Anchored != nil, ev.PerRoll != nil} {
		if set {
			n++
		}
	}
	return n
}

// evidenceObject returns the dice-proof-v1 members of ev (without a log) as
// a decoded JSON object: what Format writes, and what log-agreement
// compares. Values that Parse normalized are written in their normal form
// (the settings canonical, sealedAt in UTC).
func evidenceObject(ev *Evidence) cjson.Object {
	o := cjson.Object{{Key: "format", Value: FormatName}, {Key: "scheme", Value: ev.Scheme}}
	if ev.Settings != nil {
		s, err := cjson.Decode(ev.Settings)
		if err != nil {
			s = string(ev.Settings) // not canonical JSON: Format's parse refuses it
		}
		o = append(o, cjson.Member{Key: "settings", Value: s})
	}
	add := func(k string, v any) { o = append(o, cjson.Member{Key: k, Value: v}) }
	h32 := func(b [32]byte) any { return hexs(b[:]) }
	switch {
	case ev.Tavlarena != nil:
		t := ev.Tavlarena
		add("gameId", t.GameID.String())
		add("seats", []any{t.Seats[0].String(), t.Seats[1].String()})
		add("commitment", h32(t.Commitment))
		add("seed", h32(t.Seed))
		add("contributions", []any{h32(t.Contributions[0]), h32(t.Contributions[1])})
		add("rolls", gameRollsValue(t.Rolls))
	case ev.Anchored != nil:
		a := ev.Anchored
		add("matchId", a.MatchID)
		add("gameNo", int64(a.GameNo))
		add("tokens", []any{a.Tokens[0], a.Tokens[1]})
		add("fingerprint", h32(a.Fingerprint))
		add("seed", h32(a.Seed))
		add("anchor", cjson.Object{{Key: "chain", Value: h32(a.Anchor.Chain)}, {Key: "round", Value: int64(a.Anchor.Round)},
			{Key: "signature", Value: hexs(a.Anchor.Signature)}, {Key: "randomness", Value: h32(a.Anchor.Randomness)}})
		add("sealedAt", formatTime(a.SealedAt))
		add("rolls", gameRollsValue(a.Rolls))
	case ev.PerRoll != nil:
		p := ev.PerRoll
		add("matchId", p.MatchID.String())
		rolls := make([]any, len(p.Rolls))
		for i, r := range p.Rolls {
			rolls[i] = cjson.Object{{Key: "rollId", Value: r.RollID.String()}, {Key: "commitment", Value: h32(r.Commitment)},
				{Key: "seed", Value: h32(r.Seed)}, {Key: "second", Value: h32(r.Second)},
				{Key: "secondFrom", Value: r.SecondFrom}, {Key: "dice", Value: diceValue(r.Dice)}}
		}
		add("rolls", rolls)
	}
	return o
}

func gameRollsValue(rolls []dice.Roll) []any {
	out := make([]any, len(rolls))
	for i, r := range rolls {
		out[i] = cjson.Object{{Key: "n", Value: int64(r.N)}, {Key: "dice", Value: diceValue(r.Dice)}, {Key: "kind", Value: string(r.Kind)}}
	}
	return out
}

func diceValue(d dice.Dice) []any { return []any{int64(d[0]), int64(d[1])} }

// formatTime writes t in UTC, in the events' millisecond form when it has
// no finer digits, else with all of them.
func formatTime(t time.Time) string {
	if t.Nanosecond()%int(time.Millisecond) == 0 {
		return t.UTC().Format(events.TimeLayout)
	}
	return t.UTC().Format(time.RFC3339Nano)
}
