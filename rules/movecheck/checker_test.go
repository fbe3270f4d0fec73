package movecheck_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
)

var schemes = []events.Scheme{events.Tavlarena, events.Anchored, events.PerRoll}

var openings = []rules.Opening{rules.OpeningWestern, rules.OpeningTurkishReroll}

// play plays a game with gamegen and returns its events, parsed back from
// their canonical bytes as the ledger receives them.
func play(t testing.TB, c testonly.Config) (*testonly.Played, []*events.Event) {
	t.Helper()
	p, err := testonly.Play(c)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := testonly.Events(c, p.Bodies, signer(t))
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		b, err := events.Format(ev)
		if err != nil {
			t.Fatal(err)
		}
		if evs[i], err = events.Parse(b); err != nil {
			t.Fatal(err)
		}
	}
	return p, evs
}

// applyAll applies evs with the checker and returns every state.
func applyAll(t testing.TB, evs []*events.Event) []*events.Game {
	t.Helper()
	var g *events.Game
	out := make([]*events.Game, 0, len(evs))
	for i, ev := range evs {
		ng, err := events.Apply(g, ev, testonly.Env(ev, uint64(i), movecheck.Checker{}))
		if err != nil {
			t.Fatalf("event %d (%s): %v", i, ev.Type, err)
		}
		g = ng
		out = append(out, g)
	}
	return out
}

func mustMarshal(t testing.TB, g *events.Game) []byte {
	t.Helper()
	b, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func state(t testing.TB, g *events.Game) movecheck.State {
	t.Helper()
	s, err := movecheck.ParseState(g.Position)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFullGames plays a game of every variant and opening under every
// scheme (two games in a per-roll-v1 match), chosen by rules.Choose with
// fixed seeds, through events.Apply with the Checker; it checks the end
// against the last result and that replaying each event on the state
// decoded from the ledger's encoding (the Checker parses the stored
// position) gives the same state as on the state Apply returned (the
// Checker takes back the decoded form it returned).
func TestFullGames(t *testing.T) {
	for _, s := range schemes {
		for _, v := range rules.AllVariants() {
			for _, o := range openings {
				t.Run(fmt.Sprintf("%s/%s/%s", s, v, o), func(t *testing.T) {
					c := testonly.Config{Scheme: s, Variant: v, Opening: o, Label: "full/" + string(v), Games: 2}
					p, evs := play(t, c)
					states := applyAll(t, evs)
					g := states[len(states)-1]
					if !g.Closed || g.MoveOwed || !g.MovesLogged || g.Status != events.StatusVerified {
						t.Fatalf("final: closed %v owed %v logged %v status %s", g.Closed, g.MoveOwed, g.MovesLogged, g.Status)
					}
					if len(g.Moves) != p.Moves || p.Moves == 0 {
						t.Errorf("%d moves logged, %d played", len(g.Moves), p.Moves)
					}
					games := 1
					if s == events.PerRoll {
						games = 2
					}
					if len(p.Results) != games {
						t.Fatalf("%d games over on the board, want %d", len(p.Results), games)
					}
					end := *g.End
					last := p.Results[len(p.Results)-1]
					if end.Result != events.Finished || end.Winner != last.Winner || int(end.Points) != last.Multiplier {
						t.Errorf("end %+v, last result %v", end, last)
					}
					if st := state(t, g); st.Phase != movecheck.PhaseOver {
						t.Errorf("final phase %c", st.Phase)
					}
					// Replay from the encoded state, event by event.
					for i := 1; i < len(evs); i++ {
						var r events.Game
						b, err := states[i-1].MarshalBinary()
						if err != nil {
							t.Fatal(err)
						}
						if err := r.UnmarshalBinary(b); err != nil {
							t.Fatal(err)
						}
						ng, err := events.Apply(&r, evs[i], testonly.Env(evs[i], uint64(i), movecheck.Checker{}))
						if err != nil {
							t.Fatalf("replay of event %d: %v", i, err)
						}
						// The replay parses the stored position (the
						// encoding keeps no decoded form); states[i] was
						// made from the decoded form the Checker returned
						// with event i-1. Their encodings hold every
						// field but that cache (TestStateRoundTrip,
						// package events).
						if !bytes.Equal(mustMarshal(t, ng), mustMarshal(t, states[i])) {
							t.Fatalf("replay of event %d: state differs", i)
						}
					}
				})
			}
		}
	}
}

// TestAgreesWithRulesGame follows the same games with rules.Game, the
// engine's own flow, and requires the same decisions after every roll and
// move: the roll's kind, the seat and dice that wait, the position, the end.
func TestAgreesWithRulesGame(t *testing.T) {
	for _, s := range schemes {
		for _, v := range rules.AllVariants() {
			for _, o := range openings {
				c := testonly.Config{Scheme: s, Variant: v, Opening: o, Label: "agree/" + string(v), Games: 2}
				_, evs := play(t, c)
				states := applyAll(t, evs)
				var rg *rules.Game
				base := 0 // the match index of the rules.Game's roll 0
				for i, ev := range evs {
					st := states[i]
					var d rules.Dice
					n := -1
					switch b := ev.Body.(type) {
					case events.Roll:
						d, n = rules.Dice(b.Dice), int(b.N)
					case events.RollReveal:
						d, n = rules.Dice(b.Dice), len(st.RollRecords)-1
					case events.Move:
						if err := rg.Move(int(b.N)-base, b.Seat, b.Play); err != nil {
							t.Fatalf("%s %s %s event %d: rules.Game refuses %+v: %v", s, v, o, i, b, err)
						}
					default:
						continue
					}
					if n >= 0 {
						if rg == nil || rg.Over() {
							var err error
							if rg, err = rules.NewGame(v, o); err != nil {
								t.Fatal(err)
							}
							base = n
						}
						kind, err := rg.Roll(n-base, d)
						if err != nil {
							t.Fatalf("event %d: rules.Game refuses roll %d: %v", i, n, err)
						}
						if r, ok := ev.Body.(events.Roll); ok && string(r.Kind) != string(kind) {
							t.Fatalf("event %d: kind %s, rules.Game says %s", i, r.Kind, kind)
						}
					}
					ms := state(t, st)
					pn, pd, seat, pending := rg.Pending()
					if pending != (ms.Phase == movecheck.PhasePlay) || pending && (seat != ms.Seat || pd != ms.Dice || pn+base != int(ms.N)) {
						t.Fatalf("%s %s %s event %d: rules.Game pending %v roll %d %s seat %d; checker %+v", s, v, o, i, pending, pn+base, pd, seat, ms)
					}
					if rg.Position() != ms.Position || rg.Over() != (ms.Phase == movecheck.PhaseOver) {
						t.Fatalf("event %d: positions differ", i)
					}
					if !rg.Over() && !pending && ms.Phase != movecheck.PhaseOpening && rg.Turn() != ms.Seat {
						t.Fatalf("event %d: rules.Game turn %d, checker seat %d", i, rg.Turn(), ms.Seat)
					}
				}
			}
		}
	}
}

// TestOpeningTies finds games whose opening has ties and checks that ties
// (and, under turkish-reroll, the deciding roll) owe no move.
func TestOpeningTies(t *testing.T) {
	for _, o := range openings {
		found := false
		for i := 0; i < 40 && !found; i++ {
			c := testonly.Config{Scheme: events.Tavlarena, Variant: rules.Portes, Opening: o, Label: fmt.Sprintf("ties/%d", i), MaxRolls: 6}
			_, evs := play(t, c)
			states := applyAll(t, evs)
			r0 := evs[3].Body.(events.Roll)
			if !r0.Dice.IsDouble() {
				continue
			}
			found = true
			for j, ev := range evs {
				r, ok := ev.Body.(events.Roll)
				if !ok {
					continue
				}
				unplayed := r.Kind == "opening" && (r.Dice.IsDouble() || o == rules.OpeningTurkishReroll)
				if states[j].MoveOwed == unplayed {
					t.Errorf("%s: roll %d %s %v: owed %v", o, r.N, r.Kind, r.Dice, states[j].MoveOwed)
				}
			}
		}
		if !found {
			t.Errorf("%s: no game among 40 labels opens with a tie", o)
		}
	}
}

func ruleOf(err error) rules.Rule {
	var me *rules.IllegalMoveError
	if errors.As(err, &me) {
		return me.Rule
	}
	var re *rules.RollError
	if errors.As(err, &re) {
		return re.Rule
	}
	return ""
}

const start = "0000050300005000000000020/0000050300005000000000020"

// TestCheckMoveRules checks moves against hand-made states: every flow
// rule and a selection of board rules, each named.
func TestCheckMoveRules(t *testing.T) {
	bg := func(flow, pos string) []byte { return []byte("backgammon western " + flow + " " + pos) }
	settings := []byte(`{"moves":"logged","variant":"backgammon"}`)
	for _, tt := range []struct {
		state []byte
		move  events.Move
		rule  rules.Rule // "" for legal
	}{
		{bg("p0:0:65", start), events.Move{N: 0, Seat: 0, Play: "24/13"}, ""},
		{bg("p0:0:65", start), events.Move{N: 0, Seat: 0, Play: "13/2"}, ""},
		{bg("p0:0:65", start), events.Move{N: 0, Seat: 0, Play: "13/8 8/2"}, rules.RuleNonCanonical},
		{bg("p0:0:65", start), events.Move{N: 0, Seat: 0, Play: "24/18/13"}, rules.RuleNonCanonical},
		{bg("p0:0:65", start), events.Move{N: 0, Seat: 0, Play: "6/1"}, rules.RuleBlocked},
		{bg("p0:0:65", start), events.Move{N: 0, Seat: 0, Play: "-"}, rules.RuleMustMove},
		{bg("p0:0:65", start), events.Move{N: 0, Seat: 0, Play: "13/7"}, rules.RuleBothDice},
		{bg("p0:0:65", start), events.Move{N: 0, Seat: 0, Play: "bar/20"}, rules.RuleNoChecker},
		{bg("p0:0:65", start), events.Move{N: 0, Seat: 0, Play: "13/8*"}, rules.RuleHitMark},
		{bg("p0:0:65", start), events.Move{N: 0, Seat: 0, Play: "6/off"}, rules.RuleBearOffNotHome},
		{bg("p0:0:65", start), events.Move{N: 0, Seat: 0, Play: "13/9 13/8"}, rules.RuleDice},
		{bg("p0:0:65", start), events.Move{N: 0, Seat: 0, Play: "13 / 7"}, rules.RuleNotation},
		{bg("p0:0:65", start), events.Move{N: 0, Seat: 1, Play: "24/13"}, rules.RuleNotOnTurn},
		{bg("p0:7:65", start), events.Move{N: 6, Seat: 0, Play: "24/13"}, rules.RuleRollMismatch},
		{bg("t1", start), events.Move{N: 0, Seat: 1, Play: "24/13"}, rules.RuleNotOnTurn},
		{bg("o", start), events.Move{N: 0, Seat: 0, Play: "24/13"}, rules.RuleNotOnTurn},
		{bg("x", "0000000000000000000000000/f000000000000000000000000"), events.Move{N: 9, Seat: 0, Play: "-"}, rules.RuleGameOver},
		// Bearing off: the last checker borne off ends the game.
		{bg("p1:40:21", "f000000000000000000000000/1000000000000000000000000"), events.Move{N: 40, Seat: 1, Play: "1/off"}, ""},
		{bg("p1:40:21", "f000000000000000000000000/2000000000000000000000000"), events.Move{N: 40, Seat: 1, Play: "1/off(2)"}, ""},
		{bg("p1:40:21", "f000000000000000000000000/0200000000000000000000000"), events.Move{N: 40, Seat: 1, Play: "2/off 2/1"}, rules.RuleNonCanonical},
	} {
		in := events.MoveInput{Scheme: events.Tavlarena, Settings: settings, Position: tt.state, Move: tt.move}
		pos, err := movecheck.Checker{}.CheckMove(in)
		if got := ruleOf(err); got != tt.rule || (err != nil) != (tt.rule != "") {
			t.Errorf("%s %+v: %v; want rule %q", tt.state, tt.move, err, tt.rule)
			continue
		}
		if err != nil {
			var me *rules.IllegalMoveError
			if errors.As(err, &me) && me.Play != tt.move.Play {
				t.Errorf("%+v: error names play %q", tt.move, me.Play)
			}
			continue
		}
		s, err := movecheck.ParseState(pos)
		if err != nil {
			t.Fatalf("%+v: the new state %q does not parse: %v", tt.move, pos, err)
		}
		_, over := rules.Outcome(rules.Backgammon, s.Position)
		if over != (s.Phase == movecheck.PhaseOver) || !over && (s.Phase != movecheck.PhaseTurn || s.Seat != 1-tt.move.Seat) {
			t.Errorf("%+v: new state %s", tt.move, pos)
		}
	}
}

// TestCheckEnd checks finished ends against final positions: winners,
// multipliers, the cube, draws, and games not over.
func TestCheckEnd(t *testing.T) {
	// Seat 0 has borne off everything; seat 1 has borne off one checker
	// (single), none (double) or none with one on the bar (triple, in
	// backgammon).
	single := "0000000000000000000000000/e000000000000000000000000"
	double := "0000000000000000000000000/f000000000000000000000000"
	triple := "0000000000000000000000000/e000000000000000000000001" // a checker on the bar
	draw := "e0000000000000000000000p0/e0000000000000000000000p0"   // both mothers pinned
	type end = events.End
	f := events.Finished
	for _, tt := range []struct {
		variant  rules.Variant
		settings string
		state    string
		end      events.End
		reason   movecheck.Reason // "" for accepted
	}{
		{rules.Portes, "", "x " + single, end{Result: f, Winner: 0, Points: 1}, ""},
		{rules.Portes, "", "x " + single, end{Result: f, Winner: 1, Points: 1}, movecheck.WrongWinner},
		{rules.Portes, "", "x " + single, end{Result: f, Winner: 0, Points: 2}, movecheck.WrongPoints},
		{rules.Portes, "", "x " + double, end{Result: f, Winner: 0, Points: 2}, ""},
		{rules.Portes, "", "x " + triple, end{Result: f, Winner: 0, Points: 2}, ""}, // no triple game in portes
		{rules.Tavla, "", "x " + triple, end{Result: f, Winner: 0, Points: 3}, movecheck.WrongPoints},
		{rules.Backgammon, `"doublingCube":false,`, "x " + triple, end{Result: f, Winner: 0, Points: 3}, ""},
		{rules.Backgammon, `"doublingCube":false,`, "x " + triple, end{Result: f, Winner: 0, Points: 6}, movecheck.WrongPoints},
		{rules.Backgammon, "", "x " + triple, end{Result: f, Winner: 0, Points: 6}, ""},       // cube at 2
		{rules.Backgammon, "", "x " + triple, end{Result: f, Winner: 0, Points: 3 << 15}, ""}, // cube at 2^15
		{rules.Backgammon, "", "x " + triple, end{Result: f, Winner: 0, Points: 3 << 16}, movecheck.WrongPoints},
		{rules.Backgammon, "", "x " + triple, end{Result: f, Winner: 0, Points: 9}, movecheck.WrongPoints},
		{rules.Backgammon, "", "x " + single, end{Result: f, Winner: 0, Points: 3}, movecheck.WrongPoints},
		{rules.Backgammon, "", "x " + double, end{Result: f, Winner: 0, Points: 8}, ""},
		{rules.Plakoto, "", "x " + draw, end{Result: f, Winner: events.NoWinner}, ""},
		{rules.Plakoto, "", "x " + draw, end{Result: f, Winner: 0, Points: 1}, movecheck.WrongWinner},
		{rules.Portes, "", "t1 " + start, end{Result: f, Winner: 0, Points: 1}, movecheck.NotOver},
		{rules.Portes, "", "o " + start, end{Result: f, Winner: 0, Points: 1}, movecheck.NotOver},
	} {
		st := []byte(string(tt.variant) + " western " + tt.state)
		if _, err := movecheck.ParseState(st); err != nil {
			t.Fatalf("test state %s: %v", st, err)
		}
		in := events.MoveInput{Scheme: events.Tavlarena, Settings: []byte("{" + tt.settings + `"moves":"logged","variant":"` + string(tt.variant) + `"}`), Position: st}
		err := movecheck.Checker{}.CheckEnd(in, tt.end)
		var re *movecheck.ResultError
		switch {
		case tt.reason == "" && err != nil:
			t.Errorf("%s %s %+v: %v", tt.variant, tt.state, tt.end, err)
		case tt.reason != "" && (!errors.As(err, &re) || re.Reason != tt.reason):
			t.Errorf("%s %s %+v: %v; want %s", tt.variant, tt.state, tt.end, err, tt.reason)
		}
	}
}

// TestRejections plays games and breaks one event of each through
// events.Apply: the rejection's code, and the rule it names.
func TestRejections(t *testing.T) {
	type mutation struct {
		name string
		// at returns the index of the event to replace and its new body,
		// or -1 to drop the event at the index (later seqs shift down).
		edit func(p *testonly.Played, evs []*events.Event, states []*events.Game) (int, events.Body, bool)
		code events.Code
		rule rules.Rule
	}
	moveAt := func(evs []*events.Event, k int) int { // the k-th move event
		for i, ev := range evs {
			if ev.Type == events.TypeMove {
				if k == 0 {
					return i
				}
				k--
			}
		}
		return -1
	}
	muts := []mutation{
		{"illegal move", func(p *testonly.Played, evs []*events.Event, states []*events.Game) (int, events.Body, bool) {
			for k := 5; ; k++ { // the first move from the sixth on that is not empty
				i := moveAt(evs, k)
				if m := evs[i].Body.(events.Move); m.Play != rules.EmptyPlay {
					m.Play = rules.EmptyPlay
					return i, m, false
				}
			}
		}, events.CodeIllegalMove, rules.RuleMustMove},
		{"move by the wrong seat", func(p *testonly.Played, evs []*events.Event, states []*events.Game) (int, events.Body, bool) {
			i := moveAt(evs, 5)
			m := evs[i].Body.(events.Move)
			m.Seat = 1 - m.Seat
			return i, m, false
		}, events.CodeIllegalMove, rules.RuleNotOnTurn},
		{"missing move", func(p *testonly.Played, evs []*events.Event, states []*events.Game) (int, events.Body, bool) {
			return moveAt(evs, 5), nil, true
		}, events.CodeMoveOwed, ""},
		{"wrong winner", func(p *testonly.Played, evs []*events.Event, states []*events.Game) (int, events.Body, bool) {
			for i, ev := range evs {
				if e, ok := ev.Body.(events.End); ok {
					e.Winner = 1 - e.Winner
					return i, e, false
				}
			}
			return -1, nil, false
		}, events.CodeWrongResult, ""},
	}
	for _, s := range schemes {
		for _, v := range rules.AllVariants() {
			c := testonly.Config{Scheme: s, Variant: v, Label: "reject/" + string(v)}
			p, evs := play(t, c)
			states := applyAll(t, evs)
			for _, m := range muts {
				t.Run(fmt.Sprintf("%s/%s/%s", s, v, m.name), func(t *testing.T) {
					i, body, drop := m.edit(p, evs, states)
					bodies := slices.Clone(p.Bodies)
					if drop {
						bodies = slices.Delete(bodies, i, i+1)
					} else {
						bodies[i] = body
					}
					bad, err := testonly.Events(c, bodies, signer(t))
					if err != nil {
						t.Fatal(err)
					}
					g := states[i-1]
					_, err = events.Apply(g, bad[i], testonly.Env(bad[i], uint64(i), movecheck.Checker{}))
					code, _ := events.CodeOf(err)
					if code != m.code || ruleOf(err) != m.rule {
						t.Fatalf("event %d (%s): %v; want %s, rule %q", i, bad[i].Type, err, m.code, m.rule)
					}
					if m.rule != "" && !strings.Contains(err.Error(), string(m.rule)) {
						t.Errorf("the message %q does not name the rule", err)
					}
					// Without the checker the whole game passes: only the
					// rules engine sees the change.
					var ng *events.Game
					for j, ev := range bad {
						if ng, err = events.Apply(ng, ev, testonly.Env(ev, uint64(j), nil)); err != nil {
							t.Fatalf("without the checker, event %d: %v", j, err)
						}
					}
				})
			}
		}
	}
}

// TestRollAfterTheEnd refuses a roll after a per-game game is over on the
// board, and starts a new game with it under per-roll-v1.
func TestRollAfterTheEnd(t *testing.T) {
	settings := []byte(`{"moves":"logged","variant":"portes"}`)
	over := []byte("portes western x 0000000000000000000000000/e000000000000000000000001")
	in := events.MoveInput{Scheme: events.Anchored, Settings: settings, Position: over, Roll: rollOf(12, 3, 1, "turn")}
	if _, _, err := (movecheck.Checker{}).CheckRoll(in); ruleOf(err) != rules.RuleGameOver {
		t.Errorf("per-game roll after the end: %v", err)
	}
	in.Scheme, in.Roll = events.PerRoll, rollOf(12, 3, 1, "")
	pos, played, err := movecheck.Checker{}.CheckRoll(in)
	if err != nil || !played || string(pos) != "portes western p0:12:31 "+start {
		t.Errorf("per-roll roll after a game: %q %v %v", pos, played, err)
	}
	// A roll whose logged kind is not the flow's is a fault.
	in = events.MoveInput{Scheme: events.Tavlarena, Settings: settings, Roll: rollOf(0, 3, 1, "turn")}
	if _, _, err := (movecheck.Checker{}).CheckRoll(in); !errors.Is(err, movecheck.ErrState) {
		t.Errorf("kind mismatch: %v", err)
	}
}

// TestUnloggedGames checks that games that do not declare their moves get
// no position and no check: moves may be anything.
func TestUnloggedGames(t *testing.T) {
	for _, s := range schemes {
		in := events.MoveInput{Scheme: s, Settings: []byte(`{"variant":"tavla"}`), Move: events.Move{N: 3, Play: "nonsense", Seat: 1}}
		if pos, err := (movecheck.Checker{}).CheckMove(in); pos != nil || err != nil {
			t.Errorf("%s: CheckMove of an unlogged game = %q, %v", s, pos, err)
		}
		if pos, played, err := (movecheck.Checker{}).CheckRoll(in); pos != nil || played || err != nil {
			t.Errorf("%s: CheckRoll of an unlogged game = %q, %v, %v", s, pos, played, err)
		}
		if err := (movecheck.Checker{}).CheckEnd(in, events.End{Result: events.Finished, Winner: 1, Points: 7}); err != nil {
			t.Errorf("%s: CheckEnd of an unlogged game: %v", s, err)
		}
	}
}

// TestVariantNames keeps events' list of variant names, which commits are
// checked against, equal to the rules engine's.
func TestVariantNames(t *testing.T) {
	var names []string
	for _, v := range rules.AllVariants() {
		names = append(names, string(v))
	}
	if !slices.Equal(names, events.Variants()) {
		t.Errorf("events.Variants() = %v, rules.AllVariants() = %v", events.Variants(), names)
	}
}
