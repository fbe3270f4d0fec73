package rules

import "testing"

func TestOutcome(t *testing.T) {
	for _, c := range []struct {
		name   string
		v      Variant
		s0, s1 string
		over   bool
		want   Result
	}{
		{"not over", Backgammon, startSpec, startSpec, false, Result{}},
		{"single", Backgammon, "", "6:3", true, Result{0, 1}},
		{"gammon", Backgammon, "", "6:15", true, Result{0, 2}},
		{"backgammon: in the winner's home", Backgammon, "", "6:14 20:1", true, Result{0, 3}},
		{"backgammon: on the bar", Backgammon, "", "6:14 bar:1", true, Result{0, 3}},
		{"seat 1 wins a backgammon", Backgammon, "19:15", "", true, Result{1, 3}},
		{"portes: no triple", Portes, "", "6:14 bar:1", true, Result{0, 2}},
		{"tavla: mars, no triple", Tavla, "", "6:14 20:1", true, Result{0, 2}},
		{"plakoto gammon", Plakoto, "", "20:15", true, Result{0, 2}},
		{"fevga single", Fevga, "", "3:4", true, Result{0, 1}},
		{"plakoto: mother pinned, opponent's start empty", Plakoto, "24:p 13:14", "1:1 5:14", true, Result{1, 2}},
		{"plakoto: mother pinned, opponent still at its start", Plakoto, "24:p 13:14", "1:1 24:3 5:11", false, Result{}},
		{"plakoto: both mothers pinned", Plakoto, "24:p 1:1 13:13", "24:p 1:1 5:13", true, Result{-1, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mkpos(t, c.v, c.s0, c.s1)
			r, over := Outcome(c.v, p)
			if over != c.over || r != c.want {
				t.Fatalf("Outcome = %v %v, want %v %v", r, over, c.want, c.over)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	m := NewMatch(5, true)
	steps := []struct {
		r        Result
		cube     int
		score    [2]int
		crawford bool
	}{
		{Result{0, 1}, 2, [2]int{2, 0}, false},
		{Result{1, 2}, 1, [2]int{2, 2}, false},
		{Result{-1, 0}, 1, [2]int{2, 2}, false},
		{Result{0, 2}, 1, [2]int{4, 2}, true}, // seat 0 one away: next is the Crawford game
		{Result{1, 1}, 1, [2]int{4, 3}, false},
		{Result{1, 1}, 1, [2]int{4, 4}, false}, // post-Crawford: no second Crawford game
		{Result{0, 3}, 1, [2]int{7, 4}, false},
	}
	for i, s := range steps {
		if err := m.Add(s.r, s.cube); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if m.Score != s.score || m.CrawfordGame() != s.crawford {
			t.Fatalf("step %d: score %v crawford %v, want %v %v", i, m.Score, m.CrawfordGame(), s.score, s.crawford)
		}
	}
	if w, over := m.Winner(); !over || w != 0 {
		t.Fatalf("Winner = %d %v", w, over)
	}
	if err := m.Add(Result{1, 1}, 1); err == nil {
		t.Fatal("Add after the end succeeded")
	}
	if err := NewMatch(3, false).Add(Result{0, 1}, 3); err == nil {
		t.Fatal("cube 3 accepted")
	}
	money := &Match{}
	for range 100 {
		if err := money.Add(Result{1, 3}, 64); err != nil {
			t.Fatal(err)
		}
	}
	if _, over := money.Winner(); over {
		t.Fatal("a money session ended")
	}
}
