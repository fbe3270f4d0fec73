package events

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
)

// toyFlow is a FlowChecker with toy rules, enough to drive the state
// machine: every roll that dice.Sequence says is played (per-roll-v1: every
// roll) is played; the game is over after the move of roll overAt; a
// finished end must name seat 0 with 1 point. Its position is the text
// "<rolls>/<moves>" or "over"; it records every call.
type toyFlow struct {
	overAt uint32
	calls  []string
}

func (c *toyFlow) CheckMove(in MoveInput) ([]byte, error) {
	c.calls = append(c.calls, fmt.Sprintf("move %d", in.Move.N))
	if strings.Contains(in.Move.Play, "illegal") {
		return nil, errors.New("toy rule: no illegal plays")
	}
	if in.Move.N == c.overAt {
		return []byte("over"), nil
	}
	return append(bytes.Clone(in.Position), 'm'), nil
}

func (c *toyFlow) CheckRoll(in MoveInput) ([]byte, bool, error) {
	c.calls = append(c.calls, fmt.Sprintf("roll %d", in.Roll.N))
	if string(in.Position) == "over" {
		return nil, false, errors.New("toy rule: the game is over")
	}
	played := in.Scheme == PerRoll || !(in.Roll.Kind == dice.KindOpening && (in.Roll.Dice.IsDouble() || strings.Contains(string(in.Settings), "turkish")))
	return append(bytes.Clone(in.Position), 'r'), played, nil
}

func (c *toyFlow) CheckEnd(in MoveInput, end End) error {
	c.calls = append(c.calls, "end")
	if end.Winner != 0 || end.Points != 1 {
		return fmt.Errorf("toy rule: seat 0 wins 1 point, not seat %d %d", end.Winner, end.Points)
	}
	return nil
}

// loggedGames returns a game of each scheme whose settings declare their
// moves logged: every played roll followed by its move (seat 0 plays
// everything; the toy rules do not care), then a finished end.
func loggedGames(t testing.TB, f *fixture) map[Scheme][]*Event {
	out := map[Scheme][]*Event{}
	settings := []byte(`{"moves":"logged","opening":"turkish-reroll","variant":"portes"}`)

	b := f.builder(t, Tavlarena, exGame)
	c, err := NewTavlarenaCommit(uuid(t, exGame), [2]dice.UUID{uuid(t, exSeat0), uuid(t, exSeat1)}, settings, seq32(0))
	if err != nil {
		t.Fatal(err)
	}
	b.add(c)
	b.add(Contribution{Contribution: seq32(0x20), Seat: 0})
	b.add(Contribution{Contribution: seq32(0x40), Seat: 1})
	b.playRolls(dice.NewTavlarena(seq32(0), uuid(t, exGame), [2][32]byte{seq32(0x20), seq32(0x40)}), dice.OpeningTurkishReroll, 8)
	b.add(End{Points: 1, Result: Finished, Winner: 0})
	b.add(Reveal{Seed: seq32(0)})
	out[Tavlarena] = b.events

	b = f.builder(t, Anchored, "logged.game-1")
	anchor := AnchorRef{Chain: h32(t, quicknetHash), Round: beaconRound}
	ac, err := NewAnchoredCommit("logged", 1, anchor, f.start.Add(-time.Second), []byte(`{"moves":"logged","variant":"plakoto"}`), seq32(0x90))
	if err != nil {
		t.Fatal(err)
	}
	b.add(ac)
	tokens := [2]string{"a", "b"}
	b.add(TokenContribution{Seat: 0, Token: tokens[0]})
	b.add(TokenContribution{Seat: 1, Token: tokens[1]})
	b.add(Beacon{Chain: anchor.Chain, Randomness: h32(t, beaconRand), Round: beaconRound, Signature: hexBytes(t, beaconSig)})
	b.playRolls(dice.NewAnchored(seq32(0x90), dice.AnchoredBinding("logged", 1, tokens, dice.Anchor{Chain: anchor.Chain, Round: anchor.Round, Randomness: h32(t, beaconRand)})), dice.OpeningWestern, 8)
	b.add(End{Points: 1, Result: Finished, Winner: 0})
	b.add(Reveal{Seed: seq32(0x90)})
	out[Anchored] = b.events

	b = f.builder(t, PerRoll, exGame)
	b.add(PerRollCommit{Settings: []byte(`{"moves":"logged","variant":"fevga"}`)})
	for i := range 6 {
		rollID := uuid(t, fmt.Sprintf("30000000-0000-4000-8000-%012d", i+1))
		seed, second := seq32(0x60+byte(i)), seq32(0x80+byte(i))
		b.add(NewRollCommit(rollID, seed))
		b.add(RollSecond{RollID: rollID, Second: second, SecondFrom: FromClient})
		b.add(NewRollReveal(uuid(t, exGame), rollID, second, seed))
		b.add(Move{N: uint32(i), Play: "p", Seat: 0})
	}
	b.add(End{Points: 1, Result: Finished, Winner: 0})
	out[PerRoll] = b.events
	return out
}

// playRolls adds nrolls rolls of a per-game scheme, each played roll
// followed by its move.
func (b *builder) playRolls(roller dice.Roller, o dice.Opening, nrolls int) {
	s := dice.NewSequence(o)
	for n := range uint32(nrolls) {
		r := dice.Roll{N: n, Dice: roller.Roll(n), Kind: s.WantKind()}
		if err := s.Next(r); err != nil {
			b.t.Fatal(err)
		}
		b.add(Roll{N: r.N, Dice: r.Dice, Kind: r.Kind})
		if r.Kind != dice.KindOpening || !r.Dice.IsDouble() && o == dice.OpeningWestern {
			b.add(Move{N: n, Play: "p", Seat: 0})
		}
	}
}

// applyFlow applies evs with checker c and returns every state.
func applyFlow(t testing.TB, f *fixture, evs []*Event, c MoveChecker) []*Game {
	t.Helper()
	var g *Game
	var out []*Game
	for i, ev := range evs {
		env := f.env(ev, uint64(i))
		env.Moves = c
		ng, err := Apply(g, ev, env)
		if err != nil {
			t.Fatalf("event %d (%s): %v", i, ev.Type, err)
		}
		g = ng
		out = append(out, g)
	}
	return out
}

func TestParseSettings(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want GameSettings
	}{
		{`{}`, GameSettings{Opening: dice.OpeningWestern, Opponent: "human"}},
		{`{"opening":"turkish-reroll","opponent":"computer","variant":"tavla"}`, GameSettings{Opening: dice.OpeningTurkishReroll, Opponent: "computer", Variant: "tavla"}},
		{`{"moves":"logged","variant":"backgammon"}`, GameSettings{Opening: dice.OpeningWestern, Opponent: "human", Variant: "backgammon", MovesLogged: true, Cube: true}},
		{`{"doublingCube":false,"moves":"logged","variant":"backgammon"}`, GameSettings{Opening: dice.OpeningWestern, Opponent: "human", Variant: "backgammon", MovesLogged: true}},
		{`{"doublingCube":true,"variant":"portes"}`, GameSettings{Opening: dice.OpeningWestern, Opponent: "human", Variant: "portes"}},
		{`{"doublingCube":false,"moves":"logged","variant":"fevga"}`, GameSettings{Opening: dice.OpeningWestern, Opponent: "human", Variant: "fevga", MovesLogged: true}},
		{`{"matchLength":5,"rulesVersion":"x","variant":"plakoto"}`, GameSettings{Opening: dice.OpeningWestern, Opponent: "human", Variant: "plakoto"}},
	} {
		got, err := ParseSettings([]byte(tt.in))
		if err != nil || got != tt.want {
			t.Errorf("ParseSettings(%s) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	for _, tt := range []struct{ in, field, says string }{
		{`[]`, "body.settings", "an array"},
		{`{"a":1.5}`, "body.settings", "fraction"},
		{`{"variant":"nard"}`, "body.settings.variant", `"nard", want one of "backgammon", "portes", "tavla", "plakoto", "fevga"`},
		{`{"variant":"Portes"}`, "body.settings.variant", `"Portes"`},
		{`{"variant":null}`, "body.settings.variant", `is null`},
		{`{"opening":"greek"}`, "body.settings.opening", `want one of "western", "turkish-reroll"`},
		{`{"opponent":"robot"}`, "body.settings.opponent", `want one of "human", "computer"`},
		{`{"moves":"yes","variant":"portes"}`, "body.settings.moves", `is "yes", want "logged"`},
		{`{"moves":true,"variant":"portes"}`, "body.settings.moves", `is true`},
		{`{"moves":"logged"}`, "body.settings.variant", "must name its variant"},
		{`{"doublingCube":"no"}`, "body.settings.doublingCube", `want true or false`},
		{`{"doublingCube":true,"moves":"logged","variant":"tavla"}`, "body.settings.doublingCube", "tavla is played without the doubling cube"},
	} {
		_, err := ParseSettings([]byte(tt.in))
		var re *RejectError
		if !errors.As(err, &re) || re.Code != CodeMalformed || re.Field != tt.field || !strings.Contains(re.Msg, tt.says) {
			t.Errorf("ParseSettings(%s) = %v; want malformed %s saying %q", tt.in, err, tt.field, tt.says)
		}
	}
}

// TestSettingsAtCommit checks that Parse refuses a commit of every scheme
// whose settings ParseSettings refuses, naming the member.
func TestSettingsAtCommit(t *testing.T) {
	f := newFixture(t)
	commits := [][]byte{mustFormat(t, tavlarenaGame(t, f)[0]), mustFormat(t, anchoredGame(t, f)[0]), mustFormat(t, perRollMatch(t, f)[0])}
	for _, c := range commits {
		for _, tt := range []struct {
			member string
			v      any
		}{
			{"variant", "nard"},
			{"opening", "greek"},
			{"opponent", "robot"},
			{"moves", "always"},
		} {
			_, err := Parse(mutate(t, c, "body.settings."+tt.member, tt.v))
			var re *RejectError
			if !errors.As(err, &re) || re.Code != CodeMalformed || re.Field != "body.settings."+tt.member {
				t.Errorf("%s commit with %s %v: %v", strings.SplitN(string(c), `"scheme":"`, 2)[1][:12], tt.member, tt.v, err)
			}
		}
	}
}

// TestFlowGating drives the three move-logged games through a FlowChecker:
// the checker sees every roll, move and finished end; the move of each
// played roll is owed until it is logged; and the games replay to the same
// states from their encodings.
func TestFlowGating(t *testing.T) {
	f := newFixture(t)
	for scheme, evs := range loggedGames(t, f) {
		t.Run(string(scheme), func(t *testing.T) {
			c := &toyFlow{overAt: 1 << 31}
			states := applyFlow(t, f, evs, c)
			g := states[len(states)-1]
			if !g.MovesLogged || g.MoveOwed || !g.Closed {
				t.Fatalf("final state: logged %v owed %v closed %v", g.MovesLogged, g.MoveOwed, g.Closed)
			}
			rolls, moves := 0, 0
			for i, ev := range evs {
				s := states[i]
				switch ev.Type {
				case TypeRoll, TypeRollReveal:
					rolls++
					if want := i+1 < len(evs) && evs[i+1].Type == TypeMove; s.MoveOwed != want {
						t.Errorf("after event %d (%s): owed %v, want %v", i, ev.Type, s.MoveOwed, want)
					}
				case TypeMove:
					moves++
					if s.MoveOwed {
						t.Errorf("after move %d: a move is still owed", i)
					}
				}
				if rolls > 0 && len(s.Position) == 0 {
					t.Errorf("after event %d: no position", i)
				}
				// Replay from the encoding gives the same state.
				if i > 0 {
					var r Game
					if err := r.UnmarshalBinary(mustMarshal(t, states[i-1])); err != nil {
						t.Fatal(err)
					}
					env := f.env(ev, uint64(i))
					env.Moves = &toyFlow{overAt: 1 << 31}
					ng, err := Apply(&r, ev, env)
					if err != nil || !reflect.DeepEqual(ng, s) {
						t.Fatalf("event %d: replay from the encoding: %v", i, err)
					}
				}
			}
			want := rolls + moves + 1 // every roll, every move, the end
			if len(c.calls) != want || c.calls[len(c.calls)-1] != "end" {
				t.Errorf("calls %v, want %d ending with the end", c.calls, want)
			}
			if got, want := string(g.Position), positionOf(evs); got != want {
				t.Errorf("position %q, want %q", got, want)
			}
		})
	}
}

// positionOf is the toy checker's position after evs: an r per roll and an
// m per move.
func positionOf(evs []*Event) string {
	var b strings.Builder
	for _, ev := range evs {
		switch ev.Type {
		case TypeRoll, TypeRollReveal:
			b.WriteByte('r')
		case TypeMove:
			b.WriteByte('m')
		}
	}
	return b.String()
}

// TestFlowRejects covers the rejections of move-logged games, and what
// stays allowed: without a FlowChecker, and in games that do not log moves,
// nothing is owed.
func TestFlowRejects(t *testing.T) {
	f := newFixture(t)
	games := loggedGames(t, f)
	type tc struct {
		name    string
		scheme  Scheme
		at      int // apply events[:at] first (-1: up to the first move), then ev
		ev      func(evs []*Event) *Event
		checker MoveChecker
		code    Code   // "" for accepted
		field   string //
	}
	mk := func(scheme Scheme, game string, seq uint64, body Body) *Event {
		ev, err := NewSigned(Header{Scheme: scheme, Game: game, Seq: seq, Emitter: emitter, Time: f.start}, body, f.signer)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	// firstMove returns the index of the first move event.
	firstMove := func(evs []*Event) int {
		for i, ev := range evs {
			if ev.Type == TypeMove {
				return i
			}
		}
		t.Fatal("no move")
		return 0
	}
	// skipMove returns the event after the first move, renumbered to
	// take the move's seq.
	skipMove := func(evs []*Event) *Event {
		m := firstMove(evs)
		e := *evs[m+1]
		e.Seq--
		e.Sig = nil
		if e.Type.Binding() {
			if err := Sign(&e, f.signer); err != nil {
				t.Fatal(err)
			}
		}
		return &e
	}
	endNow := func(res Result, w int, pts uint32) func([]*Event) *Event {
		return func(evs []*Event) *Event {
			m := firstMove(evs)
			return mk(evs[0].Scheme, evs[0].Game, uint64(m), End{Result: res, Winner: w, Points: pts})
		}
	}
	flow := &toyFlow{overAt: 1 << 31}
	plain := moveFunc(func(in MoveInput) ([]byte, error) { return nil, nil })
	var cases []tc
	for _, s := range []Scheme{Tavlarena, Anchored, PerRoll} {
		end := len(games[s]) - 2 // the end; per-roll-v1 has no reveal after it
		if s == PerRoll {
			end++
		}
		fm := firstMove(games[s])
		cases = append(cases,
			tc{"next roll before the move", s, -1, skipMove, flow, CodeMoveOwed, "type"},
			tc{"finished end before the move", s, -1, endNow(Finished, 0, 1), flow, CodeMoveOwed, "type"},
			tc{"resigned end before the move", s, -1, endNow(Resigned, 1, 2), flow, "", ""},
			tc{"abandoned end before the move", s, -1, endNow(Abandoned, NoWinner, 0), flow, "", ""},
			tc{"next roll before the move, checker not a FlowChecker", s, -1, skipMove, plain, "", ""},
			tc{"next roll before the move, no checker", s, -1, skipMove, nil, "", ""},
			tc{"wrong result", s, end, func(evs []*Event) *Event {
				return mk(s, evs[end].Game, evs[end].Seq, End{Result: Finished, Winner: 1, Points: 1})
			}, flow, CodeWrongResult, "body"},
			tc{"illegal move", s, fm, func(evs []*Event) *Event {
				mv := evs[fm].Body.(Move)
				mv.Play = "illegal"
				return mk(s, evs[fm].Game, evs[fm].Seq, mv)
			}, flow, CodeIllegalMove, "body.play"},
		)
		if s.PerGame() {
			// The toy game is over after the first move: the next roll
			// is refused.
			over := &toyFlow{overAt: games[s][fm].Body.(Move).N}
			cases = append(cases, tc{"roll after the game is over", s, fm + 1, func(evs []*Event) *Event { return evs[fm+1] }, over, CodeNotAllowedNow, "type"})
		}
	}
	for _, tt := range cases {
		t.Run(string(tt.scheme)+"/"+tt.name, func(t *testing.T) {
			evs := games[tt.scheme]
			at := tt.at
			if at < 0 {
				at = firstMove(evs)
			}
			states := applyFlow(t, f, evs[:at], tt.checker)
			g := states[len(states)-1]
			ev := tt.ev(evs)
			env := f.env(ev, uint64(at))
			env.Moves = tt.checker
			_, err := Apply(g, ev, env)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Apply = %v, want it accepted", err)
				}
				return
			}
			var re *RejectError
			if !errors.As(err, &re) || re.Code != tt.code || re.Field != tt.field {
				t.Fatalf("Apply = %v; want %s at %q", err, tt.code, tt.field)
			}
			if tt.code == CodeMoveOwed && !strings.Contains(re.Msg, "roll "+strconv.Itoa(int(lastRollOf(g)))) {
				t.Errorf("message %q does not name roll %d", re.Msg, lastRollOf(g))
			}
			if tt.code != CodeMoveOwed && re.Err == nil {
				t.Errorf("the checker's error is not wrapped: %v", err)
			}
		})
	}
}

func lastRollOf(g *Game) uint32 {
	if g.Scheme.PerGame() {
		return g.Rolls[len(g.Rolls)-1].N
	}
	return uint32(len(g.RollRecords) - 1)
}

// TestFlowOnlyForLoggedGames checks that a FlowChecker is asked only
// about moves in games whose settings do not log moves, so nothing is owed.
func TestFlowOnlyForLoggedGames(t *testing.T) {
	f := newFixture(t)
	for _, evs := range [][]*Event{tavlarenaGame(t, f), anchoredGame(t, f), perRollMatch(t, f)} {
		c := &toyFlow{overAt: 1 << 31}
		states := applyFlow(t, f, evs, c)
		for i, s := range states {
			if s.MovesLogged || s.MoveOwed {
				t.Fatalf("event %d: logged %v owed %v", i, s.MovesLogged, s.MoveOwed)
			}
		}
		for _, call := range c.calls {
			if !strings.HasPrefix(call, "move ") {
				t.Errorf("%s: checker asked %q", evs[0].Scheme, call)
			}
		}
	}
}

// FuzzParseSettings: never a panic; an error is a malformed *RejectError
// naming a member of the settings; and a commit carrying settings that
// parse is accepted by Parse, one carrying settings that do not is not.
func FuzzParseSettings(f *testing.F) {
	for _, s := range []string{`{}`, exSettings, `{"moves":"logged","variant":"backgammon","doublingCube":true}`,
		`{"moves":"logged"}`, `{"variant":"nard"}`, `{"opponent":"computer","opening":"western"}`, `[1]`, `{"doublingCube":1}`} {
		f.Add([]byte(s))
	}
	fx := newFixture(f)
	commit := mustFormat(f, perRollMatch(f, fx)[0])
	f.Fuzz(func(t *testing.T, b []byte) {
		gs, err := ParseSettings(b)
		if err != nil {
			var re *RejectError
			if !errors.As(err, &re) || re.Code != CodeMalformed || !strings.HasPrefix(re.Field, "body.settings") {
				t.Fatalf("ParseSettings(%q) = %v", b, err)
			}
		}
		v, derr := cjson.Decode(b)
		if derr != nil {
			return
		}
		_, perr := Parse(mutate(t, commit, "body.settings", v))
		if (err == nil) != (perr == nil) {
			t.Fatalf("settings %q: ParseSettings %v, Parse of a commit %v", b, err, perr)
		}
		if err == nil && gs.MovesLogged && gs.Variant == "" {
			t.Fatalf("settings %q: moves logged without a variant", b)
		}
	})
}
