package verifier

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/internal/testonly"
)

// TestMoveVectors runs the bundles of testdata/moves: a valid game passes
// the moves check (skipped where the moves are not logged), and each
// mutation fails it at the event the manifest names, with the code and the
// rule, in the report and in the JSON.
func TestMoveVectors(t *testing.T) {
	vs, err := testonly.LoadMoves()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			r := verifyVector(t, v)
			c, ok := r.Check(CheckMoves)
			if !ok {
				t.Fatal("no moves check")
			}
			want := Pass
			switch {
			case v.Exit == 1:
				want = Fail
			case strings.Contains(v.Name, "not-logged"):
				want = Skipped
			}
			if c.Status != want {
				t.Fatalf("moves %s, want %s: %s", c.Status, want, c.Detail)
			}
			if want != Fail {
				if c.Move != nil {
					t.Errorf("a %s check names an event: %+v", c.Status, c.Move)
				}
				return
			}
			seen[v.MoveCode+"/"+v.MoveRule] = true
			if c.Move == nil || c.Move.Code != v.MoveCode || c.Move.Rule != v.MoveRule {
				t.Fatalf("move %+v, want code %s rule %q", c.Move, v.MoveCode, v.MoveRule)
			}
			// The detail names the entry and, for a rule, the rule, in
			// every language; the JSON carries the same reference.
			for _, l := range Langs() {
				d := c.Detail.In(l)
				if !strings.Contains(d, "log.entries[") || v.MoveRule != "" && v.MoveCode == "illegal-move" && !strings.Contains(d, v.MoveRule) {
					t.Errorf("%s: detail %q", l, d)
				}
			}
			var j JSONReport
			if err := json.Unmarshal(r.JSON(Turkish), &j); err != nil {
				t.Fatal(err)
			}
			for _, jc := range j.Checks {
				if jc.Name == CheckMoves && !reflect.DeepEqual(jc.Move, c.Move) {
					t.Errorf("JSON move %+v, want %+v", jc.Move, c.Move)
				}
			}
			if c.Move.Code != "wrong-result" && (c.Move.N == nil || c.Move.Seat == nil) {
				t.Errorf("the move reference names no roll or seat: %+v", c.Move)
			}
		})
	}
	for _, k := range []string{"illegal-move/blocked", "illegal-move/not-on-turn", "move-owed/", "wrong-result/wrong-winner"} {
		if !seen[k] {
			t.Errorf("no vector fails the moves check with %s", k)
		}
	}
}

// TestMovesStatements: a valid move-logged game proves its moves; the
// cube and a resignation are named as not proved; an unlogged game says
// its moves were not checked.
func TestMovesStatements(t *testing.T) {
	has := func(ms []Message, id msgID) bool {
		for _, m := range ms {
			if m.id == id {
				return true
			}
		}
		return false
	}
	for _, tt := range []struct {
		vector      string
		proves, not []msgID
	}{
		{"moves-backgammon-tavlarena-western", []msgID{mStMoves}, []msgID{mStMovesCube}},
		{"moves-tavla-anchored-turkish-reroll", []msgID{mStMoves}, nil},
		{"moves-backgammon-resigned-60-rolls", []msgID{mStMoves}, []msgID{mStMovesEnd}},
		{"moves-not-logged", nil, []msgID{mStMovesNotLogged}},
		{"bundle-tavlarena-10-rolls", nil, []msgID{mStMovesNotLogged}},
	} {
		r := verifyVector(t, vectorNamed(t, tt.vector))
		for _, id := range tt.proves {
			if !has(r.Proves(), id) {
				t.Errorf("%s: does not prove %q", tt.vector, msg(id, "x").In(English))
			}
		}
		for _, id := range tt.not {
			if !has(r.DoesNotProve(), id) {
				t.Errorf("%s: does not say it does not prove %q", tt.vector, msg(id, "x").In(English))
			}
		}
		if tt.vector == "moves-tavla-anchored-turkish-reroll" && (has(r.DoesNotProve(), mStMovesCube) || has(r.DoesNotProve(), mStMovesEnd)) {
			t.Errorf("%s: a game without the cube, finished on the board, names the cube or the end", tt.vector)
		}
	}
	// A plain evidence file skips the check.
	b, err := os.ReadFile(vectorNamed(t, "tavlarena-worked-example").Path)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := Verify(b, Options{}).Check(CheckMoves); c.Status != Skipped {
		t.Errorf("plain evidence file: moves %s", c.Status)
	}
}
