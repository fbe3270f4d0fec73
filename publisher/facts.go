package publisher

// This file derives what the pages say about the opening of a game from
// the rules engine, so that a page never states a rule the engine does not
// follow: under the western opening the first move is the opening roll
// itself and never a double; under the Turkish rule the opening's winner
// rolls both dice again, and that roll can be anything, doubles included.

import (
	"fmt"

	"github.com/zarlog/zarlog/rules"
)

// OpeningFacts are the facts of an opening rule that the pages state.
type OpeningFacts struct {
	Opening rules.Opening
	// FirstMoves is how many of the 36 ordered rolls can be the first
	// roll played in a game.
	FirstMoves int
	// FirstDouble reports whether the first roll played can be a double.
	FirstDouble bool
	// TieAgain reports whether a tied opening roll is rolled again (and
	// not played).
	TieAgain bool
	// RollAgain reports whether the opening's winner rolls both dice again
	// for the first move.
	RollAgain bool
}

// OpeningFactsOf asks the rules engine: it plays every opening roll of
// variant v under opening o (and, where the winner rolls again, every
// second roll) and records which rolls can be the first one played.
func OpeningFactsOf(v rules.Variant, o rules.Opening) (OpeningFacts, error) {
	f := OpeningFacts{Opening: o, TieAgain: true}
	first := map[rules.Dice]bool{} // unordered: the larger die first
	for _, d := range ordered() {
		g, err := rules.NewGame(v, o)
		if err != nil {
			return f, err
		}
		if _, err := g.Roll(0, d); err != nil {
			return f, err
		}
		_, pd, _, pending := g.Pending()
		switch {
		case d[0] == d[1]:
			// A tie: nothing to play, and the next roll is an opening again.
			if pending {
				f.TieAgain = false
				continue
			}
			if k, err := g.Roll(1, rules.Dice{1, 2}); err != nil || k != rules.RollOpening {
				f.TieAgain = false
			}
		case pending:
			first[unordered(pd)] = true
		default:
			f.RollAgain = true
			for _, d2 := range ordered() {
				g2, _ := rules.NewGame(v, o)
				if _, err := g2.Roll(0, d); err != nil {
					return f, err
				}
				if _, err := g2.Roll(1, d2); err != nil {
					return f, err
				}
				if _, pd2, _, ok := g2.Pending(); ok {
					first[unordered(pd2)] = true
				}
			}
		}
	}
	for d := range first {
		if d[0] == d[1] {
			f.FirstDouble = true
			f.FirstMoves++
		} else {
			f.FirstMoves += 2 // 6-5 and 5-6
		}
	}
	return f, nil
}

// ordered returns the 36 ordered rolls.
func ordered() []rules.Dice {
	out := make([]rules.Dice, 0, 36)
	for a := 1; a <= 6; a++ {
		for b := 1; b <= 6; b++ {
			out = append(out, rules.Dice{a, b})
		}
	}
	return out
}

func unordered(d rules.Dice) rules.Dice {
	if d[0] < d[1] {
		return rules.Dice{d[1], d[0]}
	}
	return d
}

// allOpeningFacts returns the facts of each opening rule, checking that
// every variant agrees (the pages state them for all variants at once).
func allOpeningFacts() ([]OpeningFacts, error) {
	var out []OpeningFacts
	for _, o := range []rules.Opening{rules.OpeningWestern, rules.OpeningTurkishReroll} {
		var first OpeningFacts
		for i, v := range rules.AllVariants() {
			f, err := OpeningFactsOf(v, o)
			if err != nil {
				return nil, fmt.Errorf("the rules engine on the %s opening of %s: %w", o, v, err)
			}
			if i == 0 {
				first = f
			} else if f != first {
				return nil, fmt.Errorf("the %s opening differs between %s and %s: the pages would state a fact that is not true of both", o, rules.AllVariants()[0], v)
			}
		}
		out = append(out, first)
	}
	return out, nil
}
