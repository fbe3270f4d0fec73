package publisher

// This file derives what the landing page, the seal search and the player
// pages show of a finished game from its proof bundle, the pages' single
// source of truth: the scheme and variant, when it began, its seats, how it
// ended, its seal codes, and who rolled each roll.

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/verifier"
)

// A GameSummary is a finished game as the lists of the pages show it.
type GameSummary struct {
	Game     string
	Scheme   string
	Variant  string       // settings.variant; "" when absent
	Opening  dice.Opening // per-game schemes
	Opponent string       // verifier.OpponentHuman or OpponentComputer
	// Emitter is the platform (emitter id) that logged the game: the
	// emitter of its commit, and of every other event of it (the ledger
	// refuses another's: foreign-game).
	Emitter string
	// Started is the time of the game's first event, its commit, and
	// Ended the time of its end event (zero without one): the times the
	// platform wrote into the events, on its own clock (docs/PAGES.md
	// §2: the log records them, it does not set them).
	Started, Ended time.Time
	// Seats are the seat ids of a tavlarena-v1 game (the only scheme that
	// logs them); zero otherwise.
	Seats    [2]dice.UUID
	HasSeats bool
	// Names are the seats' labels from the settings member "seatNames"
	// (docs/FORMATS.md §1.6), "" when the platform gave none.
	Names [2]string
	// End is how the game ended (nil if the bundle has no end event).
	End *events.End
	// Seals are the seal codes of the game's commitment (the fingerprint
	// for anchored-v1); under per-roll-v1, one per roll.
	Seals []dice.Seal
	Rolls int
	// Moves are the game's move events, in log order (not kept in the
	// store's rows).
	Moves []events.Move `json:"-"`
	// MovesLogged is the settings' "moves": "logged".
	MovesLogged bool
}

// A GameRow is what the bundle store keeps of a game for the lists and the
// player pages, so that they read no bundle: its summary and its dice by
// seat.
type GameRow struct {
	GameSummary
	Index uint64 // the leaf index of the game's final event
	Dice  GameDice
}

// Summarize reads a proof bundle into its summary and its parsed evidence.
func Summarize(game string, bundle []byte) (GameSummary, *verifier.Evidence, error) {
	ev, err := verifier.Parse(bundle)
	if err != nil {
		return GameSummary{}, nil, fmt.Errorf("game %q: the bundle does not parse: %w", game, err)
	}
	s, err := summarize(game, ev)
	return s, ev, err
}

// summarize reads a parsed proof bundle into its summary.
func summarize(game string, ev *verifier.Evidence) (GameSummary, error) {
	s := GameSummary{Game: game, Scheme: ev.Scheme, Opening: ev.Opening, Opponent: ev.Opponent}
	if set, err := events.ParseSettings(ev.Settings); err == nil && ev.Settings != nil {
		s.Variant, s.MovesLogged = set.Variant, set.MovesLogged
	}
	s.Names = seatNames(ev.Settings)
	switch {
	case ev.Tavlarena != nil:
		s.Seats, s.HasSeats = ev.Tavlarena.Seats, true
		s.Seals = []dice.Seal{dice.SealOf(ev.Tavlarena.Commitment)}
		s.Rolls = len(ev.Tavlarena.Rolls)
	case ev.Anchored != nil:
		s.Seals = []dice.Seal{dice.SealOf(ev.Anchored.Fingerprint)}
		s.Rolls = len(ev.Anchored.Rolls)
	case ev.PerRoll != nil:
		for _, r := range ev.PerRoll.Rolls {
			s.Seals = append(s.Seals, dice.SealOf(r.Commitment))
		}
		s.Rolls = len(ev.PerRoll.Rolls)
	}
	if ev.Log != nil {
		for i, e := range ev.Log.Entries {
			x, err := events.Parse(e.Leaf)
			if err != nil {
				return GameSummary{}, fmt.Errorf("game %q: event %d does not parse: %w", game, i, err)
			}
			switch b := x.Body.(type) {
			case events.TavlarenaCommit, events.AnchoredCommit, events.PerRollCommit:
				if s.Started.IsZero() {
					s.Started, s.Emitter = x.Time, x.Emitter
				}
			case events.End:
				s.End, s.Ended = &b, x.Time
			case events.Move:
				s.Moves = append(s.Moves, b)
			}
		}
	}
	return s, nil
}

// MaxSeatName is the longest seat label the pages show, in characters.
const MaxSeatName = 40

// seatNames reads the settings member "seatNames": an array of two
// strings, each 1 to MaxSeatName characters, shown in place of "player 1"
// and "player 2". Anything else there is ignored: the member is the
// platform's, and the ledger does not check it.
func seatNames(settings []byte) [2]string {
	var out [2]string
	if settings == nil {
		return out
	}
	v, err := cjson.Decode(settings)
	if err != nil {
		return out
	}
	o, ok := v.(cjson.Object)
	if !ok {
		return out
	}
	n, ok := o.Get("seatNames")
	if !ok {
		return out
	}
	a, ok := n.([]any)
	if !ok || len(a) != 2 {
		return out
	}
	var names [2]string
	for i, x := range a {
		s, ok := x.(string)
		if !ok || s == "" || utf8.RuneCountInString(s) > MaxSeatName || !printable(s) {
			return out
		}
		names[i] = s
	}
	return names
}

// printable reports whether s has no control or bidirectional-formatting
// characters, which could reorder the text around a name.
func printable(s string) bool {
	for _, r := range s {
		switch {
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
			return false
		case r >= 0x200e && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x061c:
			return false
		}
	}
	return true
}

// Rollers returns the seat that plays each roll of a per-game scheme's
// rolls: -1 for an opening roll (die 1 is seat 0's, die 2 seat 1's), the
// starter for the re-roll (turkish-reroll), and the seats in turn after
// it. It stops at the first roll out of sequence (the verifier says why):
// the result is then shorter than rolls.
func Rollers(o dice.Opening, rolls []dice.Roll) []int {
	s := dice.NewSequence(o)
	out := make([]int, 0, len(rolls))
	turns := 0
	for _, x := range rolls {
		starter := s.Starter()
		seat := -1
		switch {
		case x.Kind == dice.KindOpening:
		case x.Kind == dice.KindReroll && starter >= 0:
			seat = starter
		case x.Kind == dice.KindTurn && starter >= 0:
			seat = (starter + 1 + turns) % 2
			turns++
		}
		if s.Next(x) != nil {
			break
		}
		out = append(out, seat)
	}
	return out
}
