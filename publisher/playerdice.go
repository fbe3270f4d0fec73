package publisher

// This file counts one game's dice by seat, the raw material of a player's
// "are the dice against me?" page: each seat's opening dice, the rolls it
// played, and, where the game's moves are logged, how often the roll it
// needed came up. The last is what players complain about ("I never get
// the six I need"), and the rules engine can answer it: before each turn,
// it tries all 36 rolls on the position and counts how many would hit a
// blot, enter a checker from the bar, or bear one off.

import (
	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/verifier"
)

// A Need is something a turn's roll can do for the seat on turn.
type Need int

// The needs counted, in the order the pages list them.
const (
	// NeedHit: a legal play hits a blot (in plakoto: pins one). Fevga has
	// no hitting.
	NeedHit Need = iota
	// NeedEnter: the seat has a checker on the bar and a legal play enters
	// one.
	NeedEnter
	// NeedBearOff: a legal play bears a checker off.
	NeedBearOff
	numNeeds
)

// Needs lists the needs counted.
func Needs() []Need { return []Need{NeedHit, NeedEnter, NeedBearOff} }

func (n Need) String() string {
	switch n {
	case NeedHit:
		return "hit"
	case NeedEnter:
		return "enter"
	case NeedBearOff:
		return "bear-off"
	}
	return "need?"
}

// A NeedCount counts the turns on which some, but not all, of the 36 rolls
// could do what a Need names: a chance, not a certainty or an
// impossibility.
type NeedCount struct {
	Turns int // such turns
	Came  int // of them, the turns whose roll could
	// Expected is the number of Turns fair dice give on average: the sum of
	// each turn's share of the 36 rolls that could. Variance is the sum of
	// p(1-p) over the turns (the Poisson binomial's).
	Expected, Variance float64
}

func (c *NeedCount) add(o NeedCount) {
	c.Turns += o.Turns
	c.Came += o.Came
	c.Expected += o.Expected
	c.Variance += o.Variance
}

// SeatDice are the dice one seat threw, in one game or summed over games.
type SeatDice struct {
	// Opening counts its opening dice (one die per seat per opening roll,
	// ties included): Opening[f-1] is face f.
	Opening [6]uint64
	// Played counts the rolls it played: the re-roll and its turns.
	Played events.RollCounts
	// Needs counts its chances, when the moves are logged.
	Needs [numNeeds]NeedCount
}

func (s *SeatDice) add(o SeatDice) {
	for i := range s.Opening {
		s.Opening[i] += o.Opening[i]
	}
	for a := range 6 {
		for b := range 6 {
			s.Played.Pairs[a][b] += o.Played.Pairs[a][b]
		}
	}
	for i := range s.Needs {
		s.Needs[i].add(o.Needs[i])
	}
}

// GameDice are one game's dice by seat.
type GameDice struct {
	Seats [2]SeatDice
	// NeedsCounted reports whether the game's moves were replayed to count
	// the needs: its moves are logged and every one replayed.
	NeedsCounted bool
}

// DiceOf counts a per-game scheme's dice by seat; a per-roll-v1 match
// (whose rolls name no seat until played) gives zero counts.
func DiceOf(sum GameSummary, ev *verifier.Evidence) GameDice {
	var rolls []dice.Roll
	switch {
	case ev.Tavlarena != nil:
		rolls = ev.Tavlarena.Rolls
	case ev.Anchored != nil:
		rolls = ev.Anchored.Rolls
	default:
		return GameDice{}
	}
	var out GameDice
	for i, seat := range Rollers(ev.Opening, rolls) {
		d := rolls[i].Dice
		if seat < 0 {
			out.Seats[0].Opening[d[0]-1]++
			out.Seats[1].Opening[d[1]-1]++
			continue
		}
		out.Seats[seat].Played.Pairs[d[0]-1][d[1]-1]++
	}
	if sum.MovesLogged {
		if needs, ok := countNeeds(rules.Variant(sum.Variant), rules.Opening(ev.Opening), rolls, sum.Moves); ok {
			out.NeedsCounted = true
			for s := range 2 {
				out.Seats[s].Needs = needs[s]
			}
		}
	}
	return out
}

// countNeeds replays a game's rolls and moves through the rules engine and
// counts each seat's chances. It reports false when the replay fails (the
// verifier's moves check says why).
func countNeeds(v rules.Variant, o rules.Opening, rolls []dice.Roll, moves []events.Move) (out [2][numNeeds]NeedCount, ok bool) {
	g, err := rules.NewGame(v, o)
	if err != nil {
		return out, false
	}
	byN := make(map[uint32]events.Move, len(moves))
	for _, m := range moves {
		byN[m.N] = m
	}
	for _, r := range rolls {
		before := g.Position()
		d := rules.Dice{int(r.Dice[0]), int(r.Dice[1])}
		kind, err := g.Roll(int(r.N), d)
		if err != nil {
			return out, false
		}
		_, _, seat, pending := g.Pending()
		if !pending {
			continue
		}
		if kind != rules.RollOpening {
			could, of36 := chances(v, before, seat, d)
			for need := range numNeeds {
				if of36[need] == 0 || of36[need] == 36 {
					continue
				}
				p := float64(of36[need]) / 36
				c := &out[seat][need]
				c.Turns++
				c.Expected += p
				c.Variance += p * (1 - p)
				if could[need] {
					c.Came++
				}
			}
		}
		m, found := byN[r.N]
		if !found || m.Seat != seat {
			return out, false
		}
		if err := g.Move(int(r.N), seat, m.Play); err != nil {
			return out, false
		}
	}
	return out, true
}

// chances reports, for each need, whether roll d can do it for seat in p,
// and in how many of the 36 rolls something can: each of the 21 distinct
// rolls is tried once, through the rules engine's legal plays.
func chances(v rules.Variant, p rules.Position, seat int, d rules.Dice) (could [numNeeds]bool, of36 [numNeeds]int) {
	onBar := p.Checkers(seat, rules.Bar) > 0
	for a := 1; a <= 6; a++ {
		for b := a; b <= 6; b++ {
			ways := 2
			if a == b {
				ways = 1
			}
			this := (d[0] == a && d[1] == b) || (d[0] == b && d[1] == a)
			for need, yes := range does(v, p, seat, rules.Dice{a, b}) {
				if !yes || (Need(need) == NeedEnter && !onBar) {
					continue
				}
				of36[need] += ways
				if this {
					could[need] = true
				}
			}
		}
	}
	return could, of36
}

// does reports, for each need, whether some legal play of d in p does it.
func does(v rules.Variant, p rules.Position, seat int, d rules.Dice) (out [numNeeds]bool) {
	for _, pl := range rules.LegalPlays(v, p, seat, d) {
		for _, m := range pl {
			out[NeedHit] = out[NeedHit] || m.Hits != 0
			out[NeedEnter] = out[NeedEnter] || m.From == rules.Bar
			out[NeedBearOff] = out[NeedBearOff] || m.To == rules.Off
		}
	}
	return out
}
