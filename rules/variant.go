package rules

import (
	"fmt"
)

// A Variant names the game played on the board. Its value is the string a
// settings object carries in its "variant" member.
type Variant string

// The variants. See docs/RULES.md for their rules and the sources.
const (
	// Backgammon is the Western game: hitting, the doubling cube, gammons
	// (2) and backgammons (3).
	Backgammon Variant = "backgammon"
	// Portes is the Greek game of the tavli trio: the moves of backgammon,
	// no doubling cube, and a backgammon counts as a gammon (2).
	Portes Variant = "portes"
	// Tavla is the traditional Turkish game: the moves of backgammon except
	// that a checker that hits in its own home board stops there for the
	// rest of the turn (no "hit and run" in the home board); no doubling
	// cube; mars (a gammon) counts 2 and there is no backgammon.
	Tavla Variant = "tavla"
	// Plakoto (Turkish mahbusa) has every checker start on the mover's
	// 24-point; a checker landing on a single opposing checker pins it
	// instead of hitting it.
	Plakoto Variant = "plakoto"
	// Fevga (Turkish moultezim) has both sides start in opposite corners and
	// race in the same direction; a single checker holds a point and there
	// is no hitting.
	Fevga Variant = "fevga"
)

// AllVariants returns every variant, in a fixed order.
func AllVariants() []Variant { return []Variant{Backgammon, Portes, Tavla, Plakoto, Fevga} }

// ParseVariant returns the variant named s. Names are exact (lower case).
func ParseVariant(s string) (Variant, error) {
	switch v := Variant(s); v {
	case Backgammon, Portes, Tavla, Plakoto, Fevga:
		return v, nil
	}
	return "", fmt.Errorf("rules: unknown variant %q: want one of backgammon, portes, tavla, plakoto, fevga", s)
}

// Valid reports whether v is one of the variants.
func (v Variant) Valid() bool {
	_, err := ParseVariant(string(v))
	return err == nil
}

// Cube reports whether the variant is played with a doubling cube.
// Only backgammon is; whether a particular match uses it is a setting.
func (v Variant) Cube() bool { return v == Backgammon }

// MaxMultiplier returns the largest result multiplier of the variant: 3
// (backgammon) for Western backgammon, 2 (gammon, mars, double game) for the
// others.
func (v Variant) MaxMultiplier() int {
	if v == Backgammon {
		return 3
	}
	return 2
}

// An Opening is the opening style of a match: how the first roll of a game
// that is played is found. The values are those of the settings' "opening"
// member (and of package events/dice).
type Opening string

// Opening styles.
const (
	// OpeningWestern: each seat rolls one die (ties are rolled again); the
	// higher die starts and plays the two opening dice.
	OpeningWestern Opening = "western"
	// OpeningTurkishReroll: as western, but the starter then rolls both
	// dice again and plays that roll.
	OpeningTurkishReroll Opening = "turkish-reroll"
)

// ParseOpening returns the opening style named s.
func ParseOpening(s string) (Opening, error) {
	switch o := Opening(s); o {
	case OpeningWestern, OpeningTurkishReroll:
		return o, nil
	}
	return "", fmt.Errorf("rules: unknown opening %q: want \"western\" or \"turkish-reroll\"", s)
}

// style is how checkers interact.
type style uint8

const (
	hitting style = iota // a blot is hit and goes to the bar
	pinning              // a blot is pinned where it stands (plakoto)
	running              // a single checker holds a point (fevga)
)

// A ruleset is a variant's rules as data.
type ruleset struct {
	style     style
	start     [26]int8 // starting layout, in the owner's own numbering
	hitAndRun bool     // whether a checker that hit in its home board may move on
	fevga     bool     // fevga's opening and blocking rules
}

var (
	westernStart = func() (s [26]int8) { s[24], s[13], s[8], s[6] = 2, 5, 3, 5; return }()
	stackedStart = func() (s [26]int8) { s[24] = 15; return }()

	rsBackgammon = &ruleset{style: hitting, start: westernStart, hitAndRun: true}
	rsTavla      = &ruleset{style: hitting, start: westernStart}
	rsPlakoto    = &ruleset{style: pinning, start: stackedStart, hitAndRun: true}
	rsFevga      = &ruleset{style: running, start: stackedStart, hitAndRun: true, fevga: true}
)

// rules returns the ruleset of v; it panics on an unknown variant, which
// callers rule out with ParseVariant.
func (v Variant) rules() *ruleset {
	switch v {
	case Backgammon, Portes:
		return rsBackgammon
	case Tavla:
		return rsTavla
	case Plakoto:
		return rsPlakoto
	case Fevga:
		return rsFevga
	}
	panic(fmt.Sprintf("rules: unknown variant %q", string(v)))
}

// opposite returns, for a point q (1..24) in one seat's numbering, the same
// point in the other seat's numbering. Both mappings are involutions.
func (rs *ruleset) opposite(q int) int {
	if rs.style == running {
		if q > 12 {
			return q - 12
		}
		return q + 12
	}
	return 25 - q
}
