package rules_test

import (
	"errors"
	"fmt"

	"github.com/zarlog/zarlog/rules"
)

// A ledger or a verifier follows a game event by event: rolls in order, and
// the move event of each roll that is played.
func ExampleGame() {
	g, err := rules.NewGame(rules.Portes, rules.OpeningTurkishReroll)
	if err != nil {
		panic(err)
	}
	for n, d := range []rules.Dice{{3, 3}, {2, 2}, {5, 1}, {3, 1}} {
		kind, err := g.Roll(n, d)
		if err != nil {
			panic(err)
		}
		fmt.Println(n, d, kind)
	}
	_, d, seat, _ := g.Pending()
	fmt.Println("seat", seat, "plays", d)

	// A move event must carry a legal play in canonical form.
	err = g.Move(3, 0, "13/10")
	var ie *rules.IllegalMoveError
	if errors.As(err, &ie) {
		fmt.Println("refused:", ie.Rule)
	}
	if err := g.Move(3, 0, "8/5 6/5"); err != nil {
		panic(err)
	}
	fmt.Println("seat", g.Turn(), "to roll")
	// Output:
	// 0 3-3 opening
	// 1 2-2 opening
	// 2 5-1 opening
	// 3 3-1 reroll
	// seat 0 plays 3-1
	// refused: must-use-both-dice
	// seat 1 to roll
}

func ExampleCanonicalPlay() {
	p := rules.Start(rules.Backgammon)
	for _, c := range []struct {
		d rules.Dice
		s string
	}{
		{rules.Dice{6, 5}, "13/8 8/2"},
		{rules.Dice{6, 5}, "24/18/13"},
		{rules.Dice{3, 1}, "6/5 8/5"},
		{rules.Dice{1, 1}, "6/5 6/5 8/7 8/7"},
		{rules.Dice{6, 5}, "13/11 13/11"},
	} {
		canonical, err := rules.CanonicalPlay(rules.Backgammon, p, 0, c.d, c.s)
		if err != nil {
			fmt.Printf("%s %q: %v\n", c.d, c.s, err)
			continue
		}
		fmt.Printf("%s %q: %q\n", c.d, c.s, canonical)
	}
	// Output:
	// 6-5 "13/8 8/2": "13/2"
	// 6-5 "24/18/13": "24/13"
	// 3-1 "6/5 8/5": "8/5 6/5"
	// 1-1 "6/5 6/5 8/7 8/7": "8/7(2) 6/5(2)"
	// 6-5 "13/11 13/11": rules: seat 0 dice 6-5 play "13/11(2)": dice: the play cannot be made with 6-5
}

func ExampleLegalPlays() {
	for _, p := range rules.LegalPlays(rules.Fevga, rules.Start(rules.Fevga), 0, rules.Dice{5, 5}) {
		fmt.Println(p)
	}
	// Output:
	// 24/19 24/9
	// 24/4
}
