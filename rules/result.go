package rules

import (
	"fmt"
)

// A Result is how a game ended.
type Result struct {
	// Winner is the seat that won, or -1 for a draw (plakoto, when both
	// mother checkers are pinned).
	Winner int
	// Multiplier is 1 for a single game, 2 for a double game (gammon,
	// Turkish mars, Greek diplo), 3 for a triple game (backgammon; only in
	// Western backgammon), 0 for a draw. The points scored are Multiplier
	// times the doubling cube's value.
	Multiplier int
}

// Draw reports whether the result is a draw.
func (r Result) Draw() bool { return r.Winner < 0 }

// Points returns the points the winner scores with the cube at value cube
// (1 when no cube is used).
func (r Result) Points(cube int) int { return r.Multiplier * cube }

func (r Result) String() string {
	switch {
	case r.Draw():
		return "draw"
	case r.Multiplier == 1:
		return fmt.Sprintf("seat %d wins a single game", r.Winner)
	case r.Multiplier == 2:
		return fmt.Sprintf("seat %d wins a double game", r.Winner)
	}
	return fmt.Sprintf("seat %d wins a triple game", r.Winner)
}

// Outcome reports whether the game of variant v is over in position p, and
// how it ended:
//
//   - a seat that has borne off all 15 checkers wins; double (gammon, mars)
//     if the loser has borne off none; in Western backgammon triple
//     (backgammon) if, besides, the loser has a checker on the bar or in the
//     winner's home board;
//   - plakoto: a seat whose mother checker (its last checker on its
//     starting point, its 24-point) is pinned loses a double game, unless
//     the opponent still has checkers on its own starting point; if both
//     mothers are pinned the game is a draw.
func Outcome(v Variant, p Position) (Result, bool) {
	rs := v.rules()
	for s := 0; s < 2; s++ {
		if p.n[s][Off] != NumCheckers {
			continue
		}
		l := 1 - s
		r := Result{Winner: s, Multiplier: 1}
		if p.n[l][Off] == 0 {
			r.Multiplier = 2
			if v == Backgammon {
				back := p.n[l][Bar] > 0
				for q := 19; q <= 24; q++ {
					back = back || p.n[l][q] > 0
				}
				if back {
					r.Multiplier = 3
				}
			}
		}
		return r, true
	}
	if rs.style == pinning {
		m0, m1 := p.pin[0]&(1<<24) != 0, p.pin[1]&(1<<24) != 0
		switch {
		case m0 && m1:
			return Result{Winner: -1}, true
		case m0 && p.n[1][24] == 0:
			return Result{Winner: 1, Multiplier: 2}, true
		case m1 && p.n[0][24] == 0:
			return Result{Winner: 0, Multiplier: 2}, true
		}
	}
	return Result{}, false
}

// A Match keeps the score of a match played to a number of points.
// The zero Match is a money session: games are scored but it never ends.
type Match struct {
	// Length is the number of points that wins the match; 0 for none.
	Length int
	// Crawford says whether the Crawford rule applies: in the first game
	// after a player comes within one point of winning, no one may double.
	// It matters only when the doubling cube is used.
	Crawford bool
	// Score is each seat's points so far.
	Score [2]int

	crawfordGame bool // the next game is the Crawford game
	crawfordDone bool
}

// NewMatch returns a match to length points (0: unlimited).
func NewMatch(length int, crawford bool) *Match {
	return &Match{Length: length, Crawford: crawford}
}

// Add scores a finished game: r.Points(cube) to the winner (nothing for a
// draw). It fails once the match is over, or for a cube that is not a
// power of two from 1 to 2^15.
func (m *Match) Add(r Result, cube int) error {
	if w, over := m.Winner(); over {
		return fmt.Errorf("rules: match to %d is over (seat %d won %d-%d)", m.Length, w, m.Score[w], m.Score[1-w])
	}
	if cube < 1 || cube > 1<<15 || cube&(cube-1) != 0 {
		return fmt.Errorf("rules: cube value %d: want a power of two from 1 to 32768", cube)
	}
	if r.Winner != -1 && r.Winner != 0 && r.Winner != 1 {
		return fmt.Errorf("rules: result winner %d: want 0, 1 or -1", r.Winner)
	}
	if m.crawfordGame {
		m.crawfordGame, m.crawfordDone = false, true
	}
	if !r.Draw() {
		m.Score[r.Winner] += r.Points(cube)
	}
	if _, over := m.Winner(); !over && m.Crawford && !m.crawfordDone && m.Length > 0 &&
		(m.Score[0] == m.Length-1 || m.Score[1] == m.Length-1) {
		m.crawfordGame = true
	}
	return nil
}

// Winner reports whether the match is over and who won it.
func (m *Match) Winner() (int, bool) {
	if m.Length <= 0 {
		return 0, false
	}
	for s := 0; s < 2; s++ {
		if m.Score[s] >= m.Length {
			return s, true
		}
	}
	return 0, false
}

// CrawfordGame reports whether the next game is the Crawford game (no
// doubling allowed).
func (m *Match) CrawfordGame() bool { return m.crawfordGame }
