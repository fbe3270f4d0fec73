package rules

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// mkpos builds a position of variant v from two lists of "point:count"
// (own numbering; "bar:n" for the bar, "q:p" for a single pinned checker);
// the rest of each seat's checkers are borne off.
func mkpos(t testing.TB, v Variant, s0, s1 string) Position {
	t.Helper()
	var p Position
	for s, spec := range []string{s0, s1} {
		left := NumCheckers
		for f := range strings.FieldsSeq(spec) {
			k, n, ok := strings.Cut(f, ":")
			if !ok {
				t.Fatalf("bad field %q", f)
			}
			q := Bar
			if k != "bar" {
				var err error
				if q, err = strconv.Atoi(k); err != nil {
					t.Fatalf("bad point %q", k)
				}
			}
			c := 1
			if n == "p" {
				p.pin[s] |= 1 << q
			} else {
				var err error
				if c, err = strconv.Atoi(n); err != nil {
					t.Fatalf("bad count %q", n)
				}
			}
			p.n[s][q] += int8(c)
			left -= c
		}
		p.n[s][Off] = int8(left)
	}
	if err := Check(v, p); err != nil {
		t.Fatalf("mkpos(%s, %q, %q): %v", v, s0, s1, err)
	}
	return p
}

const startSpec = "24:2 13:5 8:3 6:5"

func TestRuleCodes(t *testing.T) {
	for _, c := range []struct {
		name   string
		v      Variant
		s0, s1 string // seat 0 plays
		dice   Dice
		play   string
		rule   Rule // "" for legal
		canon  string
	}{
		{"legal", Backgammon, startSpec, startSpec, Dice{3, 1}, "8/5 6/5", "", "8/5 6/5"},
		{"legal chain written as two moves", Backgammon, startSpec, startSpec, Dice{6, 5}, "24/18 18/13", "", "24/13"},
		{"legal with shown intermediate", Backgammon, startSpec, startSpec, Dice{6, 5}, "24/18/13", "", "24/13"},
		{"legal, any order", Backgammon, startSpec, startSpec, Dice{3, 1}, "6/5 8/5", "", "8/5 6/5"},
		{"one die of two", Backgammon, startSpec, startSpec, Dice{3, 2}, "13/10", RuleBothDice, ""},
		{"distance is no die", Backgammon, startSpec, startSpec, Dice{6, 5}, "13/3", RuleDice, ""},
		{"too many moves", Backgammon, startSpec, startSpec, Dice{6, 5}, "13/7 13/8 8/3", RuleDice, ""},
		{"same die twice", Backgammon, startSpec, startSpec, Dice{6, 5}, "13/7(2)", RuleDice, ""},
		{"no checker", Backgammon, startSpec, startSpec, Dice{6, 5}, "23/17 13/8", RuleNoChecker, ""},
		{"no checker on the bar", Backgammon, startSpec, startSpec, Dice{6, 5}, "bar/19 13/8", RuleNoChecker, ""},
		{"blocked destination", Backgammon, startSpec, startSpec, Dice{6, 5}, "24/18 24/19", RuleBlocked, ""},
		{"blocked on the way", Backgammon, "24:2 13:5 8:3 6:5", "8:2 7:2 6:4 13:5 24:2", Dice{6, 5}, "24/13", RuleBlocked, ""},
		{"hit mark on an empty point", Backgammon, startSpec, startSpec, Dice{6, 5}, "24/18* 13/8", RuleHitMark, ""},
		{"missing hit mark is normalised", Backgammon, startSpec, "7:1 24:2 13:4 8:3 6:5", Dice{6, 5}, "24/18 13/8", "", "24/18* 13/8"},
		{"bar first", Backgammon, "bar:2 13:5 8:3 6:5", startSpec, Dice{6, 5}, "bar/20 13/7", RuleBarFirst, ""},
		{"bar entered, then moved", Backgammon, "bar:1 23:1 13:5 8:3 6:5", startSpec, Dice{6, 5}, "bar/20 13/7", "", "bar/20 13/7"},
		{"bear off from outside", Backgammon, startSpec, startSpec, Dice{6, 6}, "6/off(2) 13/7(2)", RuleBearOffNotHome, ""},
		{"bear off with a checker on the bar", Backgammon, "bar:1 6:2 5:2", startSpec, Dice{6, 5}, "6/off 5/off", RuleBarFirst, ""},
		{"bear off over a higher checker", Backgammon, "6:1 4:1", startSpec, Dice{5, 1}, "6/5 4/off", RuleBearOffHigher, ""},
		{"bear off with the higher die", Backgammon, "4:1 3:1", startSpec, Dice{6, 5}, "4/off 3/off", "", "4/off 3/off"},
		{"smaller die where only one can be played", Backgammon, "13:1", "23:2 6:13", Dice{6, 5}, "13/8", RuleLargerDie, ""},
		{"larger die where only one can be played", Backgammon, "13:1", "23:2 6:13", Dice{6, 5}, "13/7", "", "13/7"},
		{"empty play while moves exist", Backgammon, startSpec, startSpec, Dice{6, 5}, "-", RuleMustMove, ""},
		{"empty play when none exists", Backgammon, "bar:1 13:4 8:3 6:5", "1:2 2:2 3:2 4:2 5:2 6:2 13:3", Dice{6, 5}, "-", "", "-"},
		{"three of four", Backgammon, startSpec, startSpec, Dice{2, 2}, "13/11(3)", RuleMaxDice, ""},
		{"hit and run in backgammon", Backgammon, "10:1 6:14", "21:1 1:14", Dice{6, 3}, "10/4*/1", "", "10/4*/1"},
		{"hit and run in tavla", Tavla, "10:1 6:14", "21:1 1:14", Dice{6, 3}, "10/4*/1", RuleHitAndRun, ""},
		{"hit and stay in tavla", Tavla, "10:1 6:14", "21:1 1:14", Dice{6, 3}, "10/4* 6/3", "", "10/4* 6/3"},
		{"hit outside home then run, tavla", Tavla, "13:1 6:14", "16:1 1:14", Dice{4, 3}, "13/9*/6", "", "13/9*/6"},
		{"pinned checker moves", Plakoto, "24:13 20:p", "5:2", Dice{6, 5}, "20/14 24/19", RulePinned, ""},
		{"land where the opponent pins", Plakoto, "24:13 20:p 10:1", "5:2", Dice{5, 4}, "24/20 10/5", RuleBlocked, ""},
		{"pin a blot", Plakoto, "24:15", "4:1 19:14", Dice{3, 1}, "24/21* 24/23", "", "24/23 24/21*"},
		{"pin a blot, mark missing", Plakoto, "24:15", "4:1 19:14", Dice{3, 1}, "24/21 24/23", "", "24/23 24/21*"},
		{"bear off while pinned", Plakoto, "6:13 20:p", "5:2", Dice{6, 5}, "6/off 6/1", RuleBearOffNotHome, ""},
		{"second checker too early", Fevga, "24:15", "24:15", Dice{6, 5}, "24/18 24/19", RuleFirstChecker, ""},
		{"first checker runs", Fevga, "24:15", "24:15", Dice{6, 5}, "24/13", "", "24/13"},
		{"land on a single opposing checker", Fevga, "24:14 10:1", "24:14 17:1", Dice{6, 5}, "10/5 24/18", RuleBlocked, ""},
		{"fill the starting quarter", Fevga, "24:9 23:1 22:1 21:1 20:2 5:1", "24:15", Dice{1, 1}, "20/19 5/2", RuleStartQuarter, ""},
		{"prime trapping everything", Fevga, "24:9 8:1 7:1 5:1 4:1 3:1 2:1", "24:15", Dice{3, 2}, "24/21 8/6", RulePrimeTrap, ""},
		{"prime with a checker past it", Fevga, "24:9 8:1 7:1 5:1 4:1 3:1 2:1", "24:14 10:1", Dice{3, 2}, "24/21 8/6", "", "24/21 8/6"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mkpos(t, c.v, c.s0, c.s1)
			got, err := CanonicalPlay(c.v, p, 0, c.dice, c.play)
			if c.rule == "" {
				if err != nil {
					t.Fatalf("CanonicalPlay(%q): %v", c.play, err)
				}
				if got != c.canon {
					t.Fatalf("CanonicalPlay(%q) = %q, want %q", c.play, got, c.canon)
				}
				return
			}
			var e *IllegalMoveError
			if !errors.As(err, &e) {
				t.Fatalf("CanonicalPlay(%q) = %q, %v; want rule %s", c.play, got, err, c.rule)
			}
			if e.Rule != c.rule {
				t.Fatalf("CanonicalPlay(%q): rule %s (%v), want %s", c.play, e.Rule, err, c.rule)
			}
		})
	}
}

// TestFevgaUnavoidableEnd: in a position play cannot reach, where no play,
// not even the empty one, ends where fevga allows, the end-of-play rules
// give way and there are legal plays.
func TestFevgaUnavoidableEnd(t *testing.T) {
	// Seat 0 holds its whole starting quarter, and the opponent's home
	// board (seat 0's points 13-18) is full: with fives and sixes nothing
	// moves (and the first-checker rule holds the 24-point).
	p := mkpos(t, Fevga, "24:5 23:2 22:2 21:2 20:2 19:2", "1:3 2:3 3:3 4:2 5:2 6:2")
	g := newGen(Fevga, 0, Dice{6, 6}, 0, false)
	if g.validEnd(&p) {
		t.Fatal("the position is not one that fevga forbids to end in")
	}
	for _, d := range AllRolls() {
		ps := LegalPlays(Fevga, p, 0, d)
		if len(ps) == 0 {
			t.Fatalf("%s: no legal plays", d)
		}
		if ref := refPlays(Fevga, p, 0, d); len(ref) != len(ps) {
			t.Fatalf("%s: %d plays, reference %d", d, len(ps), len(ref))
		}
		if d[1] >= 5 && (len(ps) != 1 || ps[0].String() != EmptyPlay) {
			t.Fatalf("%s: plays %v, want only the empty play", d, ps)
		}
	}
}
