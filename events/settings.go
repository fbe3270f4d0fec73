package events

import (
	"fmt"
	"strings"

	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
)

// Variants returns the names a settings object's "variant" member may take
// (docs/RULES.md §1), in a fixed order. They are the variants of the rules
// engine (package rules), whose tests check that the two lists agree.
func Variants() []string { return []string{"backgammon", "portes", "tavla", "plakoto", "fevga"} }

// MovesLogged is the value of the settings member "moves" that declares a
// game's moves logged.
const MovesLogged = "logged"

// GameSettings are the members of a commit's settings object that zarlog
// reads (FORMATS.md §1.2). Any other member is the platform's own and is
// only hashed and stored.
type GameSettings struct {
	// Opening is "opening": western (the default) or turkish-reroll. Under
	// per-roll-v1 it is the opening of every game of the match, read only
	// when the moves are logged.
	Opening dice.Opening
	// Opponent is "opponent": "human" (the default) or "computer" (the game
	// ran on the player's device; docs/SCHEMES.md §7).
	Opponent string
	// Variant is "variant", one of Variants, or "" when absent.
	Variant string
	// MovesLogged reports whether "moves" is "logged": every roll that is
	// played gets its move event before the next roll and before a
	// finished end, and the rules engine checks each one (FORMATS.md §1.4).
	// It requires Variant.
	MovesLogged bool
	// Cube reports whether the doubling cube is in use: in backgammon
	// unless "doublingCube" is false; never in the other variants, for
	// which a move-logged game may not set "doublingCube" to true.
	Cube bool
}

// ParseSettings reads a settings object (any JSON text; a commit carries it
// in canonical form) and checks the members zarlog reads:
//
//   - "opening", if present, is "western" or "turkish-reroll";
//   - "opponent", if present, is "human" or "computer";
//   - "variant", if present, is one of Variants;
//   - "moves", if present, is "logged", and then "variant" is present;
//   - "doublingCube", if present, is a boolean, and not true in a
//     move-logged game of a variant without the cube.
//
// Parse applies the same checks to every commit, so every committed game's
// evidence file parses. The error is a *RejectError (CodeMalformed) whose
// Field is the member's path in a commit, such as "body.settings.variant".
func ParseSettings(settings []byte) (GameSettings, error) {
	v, err := cjson.Decode(settings)
	if err != nil {
		return GameSettings{}, &RejectError{Code: CodeMalformed, Field: "body.settings", Msg: err.Error(), Err: err}
	}
	o, ok := v.(cjson.Object)
	if !ok {
		return GameSettings{}, reject(CodeMalformed, "body.settings", "is %s, want an object", cjson.Root(v).Kind())
	}
	s, member, why := settingsOf(o)
	if member != "" {
		return GameSettings{}, reject(CodeMalformed, "body.settings."+member, "%s", why)
	}
	return s, nil
}

// settingsOf reads the members of a settings object, or returns the first
// member that is wrong and why.
func settingsOf(o cjson.Object) (s GameSettings, member, why string) {
	s.Opening, s.Opponent = dice.OpeningWestern, "human"
	oneOf := func(key string, want ...string) (string, bool) {
		v, ok := o.Get(key)
		if !ok {
			return "", true
		}
		if str, isStr := v.(string); isStr {
			for _, w := range want {
				if str == w {
					return str, true
				}
			}
		}
		member = key
		why = fmt.Sprintf("is %s, want %s", cjson.Append(nil, v), quoteList(want))
		return "", false
	}
	if op, ok := oneOf("opening", string(dice.OpeningWestern), string(dice.OpeningTurkishReroll)); !ok {
		return
	} else if op != "" {
		s.Opening = dice.Opening(op)
	}
	if opp, ok := oneOf("opponent", "human", "computer"); !ok {
		return
	} else if opp != "" {
		s.Opponent = opp
	}
	var ok bool
	if s.Variant, ok = oneOf("variant", Variants()...); !ok {
		return
	}
	m, ok := oneOf("moves", MovesLogged)
	if !ok {
		return
	}
	s.MovesLogged = m == MovesLogged
	if s.MovesLogged && s.Variant == "" {
		return s, "variant", fmt.Sprintf("missing, but \"moves\" is %q: a game whose moves are logged must name its variant (%s)", MovesLogged, quoteList(Variants()))
	}
	s.Cube = s.Variant == "backgammon"
	if v, present := o.Get("doublingCube"); present {
		b, isBool := v.(bool)
		switch {
		case !isBool:
			return s, "doublingCube", fmt.Sprintf("is %s, want true or false", cjson.Append(nil, v))
		case b && s.MovesLogged && s.Variant != "backgammon":
			return s, "doublingCube", fmt.Sprintf("is true, but %s is played without the doubling cube (docs/RULES.md §1)", s.Variant)
		}
		s.Cube = s.Cube && b
	}
	return s, "", ""
}

func quoteList(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = fmt.Sprintf("%q", w)
	}
	if len(q) == 1 {
		return q[0]
	}
	return "one of " + strings.Join(q, ", ")
}
