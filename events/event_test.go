package events

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gowebpki/jcs"

	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
)

// allEvents returns the events of the three full games.
func allEvents(t testing.TB, f *fixture) []*Event {
	var evs []*Event
	evs = append(evs, tavlarenaGame(t, f)...)
	evs = append(evs, anchoredGame(t, f)...)
	evs = append(evs, perRollMatch(t, f)...)
	return evs
}

// TestFormatParseRoundTrip checks every event of the full games: Format
// gives text that an independent RFC 8785 implementation leaves unchanged,
// Parse gives back an equal event, and Format of that gives the same bytes.
func TestFormatParseRoundTrip(t *testing.T) {
	f := newFixture(t)
	evs := allEvents(t, f)
	types := map[Type]map[Scheme]bool{}
	for _, ev := range evs {
		b := mustFormat(t, ev)
		if j, err := jcs.Transform(b); err != nil || !bytes.Equal(j, b) {
			t.Errorf("%s: Format is not RFC 8785 canonical (jcs: %v):\n%s\n%s", ev.ID, err, b, j)
		}
		p, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: Parse(Format): %v\n%s", ev.ID, err, b)
		}
		if !reflect.DeepEqual(p, ev) {
			t.Errorf("%s: Parse(Format(ev)) = %+v, want %+v", ev.ID, p, ev)
		}
		if b2 := mustFormat(t, p); !bytes.Equal(b2, b) {
			t.Errorf("%s: Format(Parse(b)) != b", ev.ID)
		}
		if types[ev.Type] == nil {
			types[ev.Type] = map[Scheme]bool{}
		}
		types[ev.Type][ev.Scheme] = true
	}
	// Every (type, scheme) pair of FORMATS.md §1.2 appears in the games.
	for _, typ := range []Type{TypeCommit, TypeContribution, TypeBeacon, TypeRoll, TypeMove, TypeEnd, TypeReveal, TypeRollCommit, TypeRollSecond, TypeRollReveal} {
		for _, s := range []Scheme{Tavlarena, Anchored, PerRoll} {
			if typ.Allowed(s) && !types[typ][s] {
				t.Errorf("the test games have no %s %s event", s, typ)
			}
		}
	}
}

// TestGoldenLeaves pins the exact leaf text of a few events, written by hand
// from FORMATS.md §1: member names, order and value forms.
func TestGoldenLeaves(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 37, 31, 123_900_000, time.FixedZone("TRT", 3*3600))
	for _, tt := range []struct {
		h    Header
		body Body
		want string
	}{
		{
			Header{Scheme: Tavlarena, Game: exGame, Seq: 5, Emitter: "tavla-east", Time: at},
			Roll{Dice: dice.Dice{5, 1}, Kind: dice.KindOpening, N: 2},
			`{"body":{"dice":[5,1],"kind":"opening","n":2},"emitter":"tavla-east","game":"00112233-4455-6677-8899-aabbccddeeff","id":"00112233-4455-6677-8899-aabbccddeeff:5","scheme":"tavlarena-v1","seq":5,"time":"2026-11-30T07:37:31.123Z","type":"roll","v":1}`,
		},
		{
			Header{ID: "x.1", Scheme: Anchored, Game: "m1.g2", Seq: 1, Emitter: "nard", Time: at},
			TokenContribution{Seat: 1, Token: "a\"\\\n\u00e7"},
			`{"body":{"seat":1,"token":"a\"\\\nç"},"emitter":"nard","game":"m1.g2","id":"x.1","scheme":"anchored-v1","seq":1,"time":"2026-11-30T07:37:31.123Z","type":"contribution","v":1}`,
		},
		{
			Header{Scheme: PerRoll, Game: exGame, Seq: 2, Emitter: "e", Time: at},
			RollSecond{RollID: uuid(t, exRollID), Second: seq32(0x80), SecondFrom: FromServer},
			`{"body":{"rollId":"30000000-0000-4000-8000-000000000001","second":"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f","secondFrom":"server"},"emitter":"e","game":"00112233-4455-6677-8899-aabbccddeeff","id":"00112233-4455-6677-8899-aabbccddeeff:2","scheme":"per-roll-v1","seq":2,"time":"2026-11-30T07:37:31.123Z","type":"roll-second","v":1}`,
		},
		{
			Header{Scheme: Tavlarena, Game: exGame, Seq: 3, Emitter: "e", Time: at},
			Move{N: 3, Play: "8/5 6/5", Seat: 0},
			`{"body":{"n":3,"play":"8/5 6/5","seat":0},"emitter":"e","game":"00112233-4455-6677-8899-aabbccddeeff","id":"00112233-4455-6677-8899-aabbccddeeff:3","scheme":"tavlarena-v1","seq":3,"time":"2026-11-30T07:37:31.123Z","type":"move","v":1}`,
		},
	} {
		ev, err := New(tt.h, tt.body)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(mustFormat(t, ev)); got != tt.want {
			t.Errorf("Format:\n got %s\nwant %s", got, tt.want)
		}
	}

	// A binding event: the signed message is the prefix and the text
	// without "sig"; the leaf has "sig" between "seq" and "time".
	f := newFixture(t)
	c, err := NewTavlarenaCommit(uuid(t, exGame), [2]dice.UUID{uuid(t, exSeat0), uuid(t, exSeat1)}, []byte(exSettings), seq32(0))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := New(Header{Scheme: Tavlarena, Game: exGame, Emitter: emitter, Time: at}, c)
	if err != nil {
		t.Fatal(err)
	}
	unsigned := `{"body":{"commitment":"` + exCommitment + `","seats":["` + exSeat0 + `","` + exSeat1 + `"],"settings":{"doublingCube":false,"matchLength":5,"opening":"turkish-reroll","rulesVersion":"tavla-1","variant":"portes"}},"emitter":"tavla-east","game":"` + exGame + `","id":"` + exGame + `:0","scheme":"tavlarena-v1","seq":0,"time":"2026-11-30T07:37:31.123Z","type":"commit","v":1}`
	msg, err := SigningMessage(ev)
	if err != nil {
		t.Fatal(err)
	}
	if string(msg) != "zarlog-event-v1\n"+unsigned {
		t.Errorf("signing message:\n got %q\nwant %q", msg, "zarlog-event-v1\n"+unsigned)
	}
	if _, err := Format(ev); err == nil {
		t.Error("Format of an unsigned commit succeeded")
	}
	if err := Sign(ev, f.signer); err != nil {
		t.Fatal(err)
	}
	leaf := string(mustFormat(t, ev))
	withSig := strings.Replace(unsigned, `"seq":0,`, `"seq":0,"sig":"`+hexOf(ev.Sig)+`",`, 1)
	if leaf != withSig {
		t.Errorf("signed leaf:\n got %s\nwant %s", leaf, withSig)
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	s := make([]byte, 0, 2*len(b))
	for _, c := range b {
		s = append(s, digits[c>>4], digits[c&15])
	}
	return string(s)
}

func TestParseRejects(t *testing.T) {
	f := newFixture(t)
	tav := tavlarenaGame(t, f)
	anc := anchoredGame(t, f)
	pr := perRollMatch(t, f)
	leaf := func(evs []*Event, typ Type) []byte {
		for _, ev := range evs {
			if ev.Type == typ {
				return mustFormat(t, ev)
			}
		}
		t.Fatalf("no %s event", typ)
		return nil
	}
	commit, contrib, roll, move := leaf(tav, TypeCommit), leaf(tav, TypeContribution), leaf(tav, TypeRoll), leaf(tav, TypeMove)
	end, reveal := leaf(tav, TypeEnd), leaf(tav, TypeReveal)
	acommit, token, beacon := leaf(anc, TypeCommit), leaf(anc, TypeContribution), leaf(anc, TypeBeacon)
	pcommit, rcommit, rsecond, rreveal := leaf(pr, TypeCommit), leaf(pr, TypeRollCommit), leaf(pr, TypeRollSecond), leaf(pr, TypeRollReveal)
	str := func(n int) string { return strings.Repeat("a", n) }
	arr := func(v ...any) []any { return v }
	obj := func(kv ...any) cjson.Object {
		var o cjson.Object
		for i := 0; i < len(kv); i += 2 {
			o = append(o, cjson.Member{Key: kv[i].(string), Value: kv[i+1]})
		}
		return o
	}

	for _, tt := range []struct {
		name  string
		b     []byte
		code  Code
		field string
	}{
		{"too large", mutate(t, contrib, "body.contribution", str(MaxEventSize)), CodeTooLarge, ""},
		{"not json", []byte(`{"v":1`), CodeMalformed, ""},
		{"float", bytes.Replace(roll, []byte(`"v":1`), []byte(`"v":1.0`), 1), CodeMalformed, ""},
		{"invalid utf-8", append(bytes.Clone(roll[:len(roll)-1]), 0xff, '}'), CodeMalformed, ""},
		{"whitespace", bytes.Replace(roll, []byte(`"v":1`), []byte(`"v": 1`), 1), CodeNotCanonical, ""},
		{"key order", bytes.Replace(roll, []byte(`"type":"roll","v":1`), []byte(`"v":1,"type":"roll"`), 1), CodeNotCanonical, ""},
		{"escaped letter", bytes.Replace(roll, []byte(`"type":"roll"`), []byte(`"type":"\u0072oll"`), 1), CodeNotCanonical, ""},
		{"array", []byte(`[1]`), CodeMalformed, ""},
		{"unknown member", mutate(t, roll, "x", int64(1)), CodeMalformed, "x"},
		{"missing member", mutate(t, roll, "time", deleteMember), CodeMalformed, "time"},
		{"unknown body member", mutate(t, roll, "body.extra", true), CodeMalformed, "body.extra"},
		{"missing body member", mutate(t, roll, "body.kind", deleteMember), CodeMalformed, "body.kind"},
		{"version 2", mutate(t, roll, "v", int64(2)), CodeMalformed, "v"},
		{"version string", mutate(t, roll, "v", "1"), CodeMalformed, "v"},
		{"unknown type", mutate(t, roll, "type", "rolls"), CodeMalformed, "type"},
		{"unknown scheme", mutate(t, roll, "scheme", "tavlarena-v2"), CodeMalformed, "scheme"},
		{"type not in scheme", mutate(t, beacon, "scheme", string(Tavlarena)), CodeMalformed, "type"},
		{"roll in per-roll", mutate(t, roll, "scheme", string(PerRoll)), CodeMalformed, "type"},
		{"empty id", mutate(t, roll, "id", ""), CodeMalformed, "id"},
		{"id charset", mutate(t, roll, "id", "a/b"), CodeMalformed, "id"},
		{"id leading dot", mutate(t, roll, "id", ".a"), CodeMalformed, "id"},
		{"id too long", mutate(t, roll, "id", str(129)), CodeMalformed, "id"},
		{"game colon", mutate(t, token, "game", "a:b"), CodeMalformed, "game"},
		{"game not uuid", mutate(t, roll, "game", "game-1"), CodeMalformed, "game"},
		{"game upper uuid", mutate(t, roll, "game", strings.ToUpper(exGame)), CodeMalformed, "game"},
		{"per-roll game not uuid", mutate(t, rsecond, "game", "m1"), CodeMalformed, "game"},
		{"negative seq", mutate(t, roll, "seq", int64(-1)), CodeMalformed, "seq"},
		{"emitter upper", mutate(t, roll, "emitter", "Tavla"), CodeMalformed, "emitter"},
		{"emitter too long", mutate(t, roll, "emitter", str(64)), CodeMalformed, "emitter"},
		{"emitter leading dash", mutate(t, roll, "emitter", "-a"), CodeMalformed, "emitter"},
		{"time no millis", mutate(t, roll, "time", "2026-11-30T10:37:31Z"), CodeMalformed, "time"},
		{"time micros", mutate(t, roll, "time", "2026-11-30T10:37:31.123456Z"), CodeMalformed, "time"},
		{"time offset", mutate(t, roll, "time", "2026-11-30T10:37:31.123+00:00"), CodeMalformed, "time"},
		{"time lower z", mutate(t, roll, "time", "2026-11-30T10:37:31.123z"), CodeMalformed, "time"},
		{"time feb 30", mutate(t, roll, "time", "2026-02-30T10:37:31.123Z"), CodeMalformed, "time"},
		{"time leap second", mutate(t, roll, "time", "2026-12-31T23:59:60.000Z"), CodeMalformed, "time"},
		{"commit without sig", mutate(t, commit, "sig", deleteMember), CodeMalformed, "sig"},
		{"roll with sig", mutate(t, roll, "sig", strings.Repeat("ab", 64)), CodeMalformed, "sig"},
		{"short sig", mutate(t, end, "sig", strings.Repeat("ab", 63)), CodeMalformed, "sig"},
		{"upper sig", mutate(t, end, "sig", strings.Repeat("AB", 64)), CodeMalformed, "sig"},
		{"body not object", mutate(t, roll, "body", arr(int64(1))), CodeMalformed, "body"},
		{"commitment short", mutate(t, commit, "body.commitment", exCommitment[:62]), CodeMalformed, "body.commitment"},
		{"commitment upper", mutate(t, commit, "body.commitment", strings.ToUpper(exCommitment)), CodeMalformed, "body.commitment"},
		{"seats one", mutate(t, commit, "body.seats", arr(exSeat0)), CodeMalformed, "body.seats"},
		{"seats equal", mutate(t, commit, "body.seats", arr(exSeat0, exSeat0)), CodeMalformed, "body.seats"},
		{"seat uuid upper", mutate(t, commit, "body.seats", arr(exSeat0, strings.ToUpper("2000000a-0000-4000-8000-000000000000"))), CodeMalformed, "body.seats[1]"},
		{"seat uuid no dashes", mutate(t, commit, "body.seats", arr(exSeat0, "20000000000040008000000000000000")), CodeMalformed, "body.seats[1]"},
		{"settings not object", mutate(t, commit, "body.settings", "portes"), CodeMalformed, "body.settings"},
		{"unknown opening", mutate(t, commit, "body.settings.opening", "greek"), CodeMalformed, "body.settings.opening"},
		{"opening not string", mutate(t, acommit, "body.settings.opening", int64(1)), CodeMalformed, "body.settings.opening"},
		{"per-roll settings not object", mutate(t, pcommit, "body.settings", int64(1)), CodeMalformed, "body.settings"},
		{"anchor round 0", mutate(t, acommit, "body.anchor.round", int64(0)), CodeMalformed, "body.anchor.round"},
		{"anchor extra", mutate(t, acommit, "body.anchor.period", int64(3)), CodeMalformed, "body.anchor.period"},
		{"gameNo too big", mutate(t, acommit, "body.gameNo", int64(1)<<32), CodeMalformed, "body.gameNo"},
		{"matchId empty", mutate(t, acommit, "body.matchId", ""), CodeMalformed, "body.matchId"},
		{"matchId too long", mutate(t, acommit, "body.matchId", str(257)), CodeMalformed, "body.matchId"},
		{"sealedAt form", mutate(t, acommit, "body.sealedAt", "2026-11-30 10:37:31.123Z"), CodeMalformed, "body.sealedAt"},
		{"seat 2", mutate(t, contrib, "body.seat", int64(2)), CodeMalformed, "body.seat"},
		{"seat null", mutate(t, contrib, "body.seat", nil), CodeMalformed, "body.seat"},
		{"token empty", mutate(t, token, "body.token", ""), CodeMalformed, "body.token"},
		{"token 257 bytes", mutate(t, token, "body.token", str(257)), CodeMalformed, "body.token"},
		{"beacon sig odd", mutate(t, beacon, "body.signature", "abc"), CodeMalformed, "body.signature"},
		{"beacon sig empty", mutate(t, beacon, "body.signature", ""), CodeMalformed, "body.signature"},
		{"beacon sig too long", mutate(t, beacon, "body.signature", strings.Repeat("ab", MaxBeaconSignature+1)), CodeMalformed, "body.signature"},
		{"die 0", mutate(t, roll, "body.dice", arr(int64(0), int64(3))), CodeMalformed, "body.dice[0]"},
		{"die 7", mutate(t, roll, "body.dice", arr(int64(3), int64(7))), CodeMalformed, "body.dice[1]"},
		{"three dice", mutate(t, roll, "body.dice", arr(int64(3), int64(3), int64(3))), CodeMalformed, "body.dice"},
		{"kind", mutate(t, roll, "body.kind", "double"), CodeMalformed, "body.kind"},
		{"n too big", mutate(t, roll, "body.n", int64(1)<<32), CodeMalformed, "body.n"},
		{"play too long", mutate(t, move, "body.play", str(MaxPlay+1)), CodeMalformed, "body.play"},
		{"result", mutate(t, end, "body.result", "draw"), CodeMalformed, "body.result"},
		{"resigned without winner", mutate(t, end, "body.winner", nil), CodeMalformed, "body.winner"},
		{"finished draw with points", mutate(t, mutate(t, end, "body.result", "finished"), "body.winner", nil), CodeMalformed, "body.points"},
		{"unknown variant", mutate(t, commit, "body.settings.variant", "nard"), CodeMalformed, "body.settings.variant"},
		{"per-roll unknown variant", mutate(t, pcommit, "body.settings.variant", "nard"), CodeMalformed, "body.settings.variant"},
		{"per-roll unknown opening", mutate(t, pcommit, "body.settings.opening", "greek"), CodeMalformed, "body.settings.opening"},
		{"unknown opponent", mutate(t, acommit, "body.settings.opponent", "bot"), CodeMalformed, "body.settings.opponent"},
		{"moves not logged", mutate(t, commit, "body.settings.moves", "unlogged"), CodeMalformed, "body.settings.moves"},
		{"moves without variant", mutate(t, mutate(t, pcommit, "body.settings.variant", deleteMember), "body.settings.moves", "logged"), CodeMalformed, "body.settings.variant"},
		{"doublingCube not boolean", mutate(t, commit, "body.settings.doublingCube", int64(1)), CodeMalformed, "body.settings.doublingCube"},
		{"cube in a move-logged portes game", mutate(t, mutate(t, commit, "body.settings.doublingCube", true), "body.settings.moves", "logged"), CodeMalformed, "body.settings.doublingCube"},
		{"points without winner", mutate(t, mutate(t, end, "body.result", "abandoned"), "body.winner", nil), CodeMalformed, "body.points"},
		{"winner 2", mutate(t, end, "body.winner", int64(2)), CodeMalformed, "body.winner"},
		{"points negative", mutate(t, end, "body.points", int64(-1)), CodeMalformed, "body.points"},
		{"seed short", mutate(t, reveal, "body.seed", "00"), CodeMalformed, "body.seed"},
		{"rollId upper", mutate(t, rcommit, "body.rollId", strings.ToUpper("3000000a-0000-4000-8000-000000000001")), CodeMalformed, "body.rollId"},
		{"secondFrom", mutate(t, rsecond, "body.secondFrom", "both"), CodeMalformed, "body.secondFrom"},
		{"roll-reveal dice", mutate(t, rreveal, "body.dice", obj("a", int64(1))), CodeMalformed, "body.dice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := Parse(tt.b)
			var re *RejectError
			if !errors.As(err, &re) {
				t.Fatalf("Parse(%s) = %+v, %v; want a *RejectError", tt.b, ev, err)
			}
			if re.Code != tt.code || re.Field != tt.field {
				t.Errorf("Parse: %v; want code %s field %q\n%s", err, tt.code, tt.field, tt.b)
			}
			if code, ok := CodeOf(err); !ok || code != tt.code {
				t.Errorf("CodeOf = %q, %v", code, ok)
			}
		})
	}
}

// TestParseAccepts covers the edges that must parse.
func TestParseAccepts(t *testing.T) {
	f := newFixture(t)
	tav := tavlarenaGame(t, f)
	roll := mustFormat(t, tav[3])
	end := mustFormat(t, tav[len(tav)-2])
	for _, b := range [][]byte{
		mutate(t, roll, "id", strings.Repeat("a", 128)),
		mutate(t, roll, "id", "A.b_c-d:9"),
		mutate(t, roll, "emitter", strings.Repeat("z", 63)),
		mutate(t, roll, "seq", int64(cjson.MaxSafeInteger)),
		mutate(t, roll, "time", "0000-01-01T00:00:00.000Z"),
		mutate(t, roll, "time", "9999-12-31T23:59:59.999Z"),
		mutate(t, roll, "body.n", int64(1)<<32-1),
		mutate(t, mutate(t, mutate(t, end, "body.result", "abandoned"), "body.winner", nil), "body.points", int64(0)),
		mutate(t, mutate(t, mutate(t, end, "body.result", "finished"), "body.winner", nil), "body.points", int64(0)), // a plakoto draw
	} {
		ev, err := Parse(b)
		if err != nil {
			t.Errorf("Parse(%s): %v", b, err)
			continue
		}
		if got := mustFormat(t, ev); !bytes.Equal(got, b) {
			t.Errorf("Format(Parse(b)) = %s, want %s", got, b)
		}
	}
}

func TestNewAndFormatRefuse(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	h := Header{Scheme: Tavlarena, Game: exGame, Seq: 1, Emitter: emitter, Time: at}
	for _, tt := range []struct {
		name  string
		h     Header
		body  Body
		field string
	}{
		{"body of another scheme", h, TokenContribution{Seat: 0, Token: "x"}, "body"},
		{"nil body", h, nil, "body"},
		{"seat", h, Contribution{Seat: 2}, "body.seat"},
		{"dice", h, Roll{Dice: dice.Dice{0, 1}, Kind: dice.KindTurn}, "body.dice[0]"},
		{"kind", h, Roll{Dice: dice.Dice{1, 1}}, "body.kind"},
		{"winner", h, End{Result: Finished, Winner: -2}, "body.winner"},
		{"settings", h, TavlarenaCommit{Seats: [2]dice.UUID{{1}, {2}}, Settings: []byte(`[1]`)}, "body.settings"},
		{"settings json", h, TavlarenaCommit{Seats: [2]dice.UUID{{1}, {2}}, Settings: []byte(`{"a":1.5}`)}, "body.settings"},
		{"id too long", Header{Scheme: Tavlarena, Game: exGame, Seq: 1, Emitter: emitter, ID: strings.Repeat("a", 129)}, Reveal{}, "id"},
		{"emitter", Header{Scheme: Tavlarena, Game: exGame, Emitter: "A"}, Reveal{}, "emitter"},
		{"year 10000", Header{Scheme: Tavlarena, Game: exGame, Emitter: emitter, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, Reveal{}, "time"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.h, tt.body)
			var re *RejectError
			if !errors.As(err, &re) || re.Field != tt.field {
				t.Errorf("New: %v, want a rejection of %q", err, tt.field)
			}
		})
	}

	// Format is stricter than New: it does not truncate or canonicalize.
	ev, err := New(h, Roll{Dice: dice.Dice{1, 2}, Kind: dice.KindOpening})
	if err != nil {
		t.Fatal(err)
	}
	if !ev.Time.Equal(at) {
		t.Fatalf("time %v, want %v", ev.Time, at)
	}
	e := *ev
	e.Time = at.Add(time.Microsecond)
	if _, err := Format(&e); err == nil {
		t.Error("Format accepted a sub-millisecond time")
	}
	c, err := New(Header{Scheme: PerRoll, Game: exGame, Emitter: emitter}, PerRollCommit{Settings: []byte(` { "b" : 1, "a" : [ ] } `)})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(c.Body.(PerRollCommit).Settings); got != `{"a":[],"b":1}` {
		t.Errorf("New settings = %s", got)
	}
	e = *c
	e.Body = PerRollCommit{Settings: []byte(`{"b":1,"a":[]}`)}
	e.Sig = make([]byte, 64)
	if _, err := Format(&e); err == nil {
		t.Error("Format accepted non-canonical settings")
	}
	e.Body = PerRollCommit{Settings: []byte(`{},"x":{}`)}
	if _, err := Format(&e); err == nil {
		t.Error("Format accepted settings that inject members")
	}
}

func FuzzParse(f *testing.F) {
	fx := newFixture(f)
	for _, ev := range allEvents(f, fx) {
		f.Add(mustFormat(f, ev))
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"body":{},"emitter":"e","game":"g","id":"i","scheme":"anchored-v1","seq":0,"time":"2026-11-30T10:37:31.123Z","type":"beacon","v":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := Parse(b)
		if err != nil {
			if _, ok := CodeOf(err); !ok {
				t.Fatalf("Parse error is not a *RejectError: %v", err)
			}
			return
		}
		out, err := Format(ev)
		if err != nil {
			t.Fatalf("Format(Parse(b)): %v\n%s", err, b)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("Format(Parse(b)) != b\n got %s\nwant %s", out, b)
		}
	})
}

// FuzzParseTime checks the hand-written time parser against the standard
// library: it accepts exactly the strings that time.Parse accepts and
// formats back unchanged, with the same instant.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{
		"2026-11-30T10:37:31.123Z", "0000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z",
		"2024-02-29T00:00:00.000Z", "2026-02-29T00:00:00.000Z", "2026-04-31T00:00:00.000Z",
		"2026-12-31T23:59:60.000Z", "2026-11-30T24:00:00.000Z", "2026-11-30T10:37:31.12Z",
		"2026-11-30T10:37:31.123z", "2026-11-30 10:37:31.123Z", "+026-11-30T10:37:31.123Z",
		"2026-00-30T10:37:31.123Z", "2026-11-00T10:37:31.123Z", "2026-1a-30T10:37:31.123Z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseTime(s)
		want, err := time.Parse(TimeLayout, s)
		wantOK := err == nil && want.Format(TimeLayout) == s
		if ok != wantOK || ok && !got.Equal(want) {
			t.Fatalf("parseTime(%q) = %v, %v; time.Parse gives %v, %v", s, got, ok, want, wantOK)
		}
	})
}
