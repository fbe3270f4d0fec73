package rules

import (
	"errors"
	"fmt"
)

// Checkers per seat, points per side, and the two special places.
const (
	NumCheckers = 15
	Off         = 0  // the point number of borne-off checkers
	Bar         = 25 // the point number of the bar
)

// A Position is where the checkers of both seats stand. Each seat's checkers
// are counted in that seat's own numbering: points 1 to 24 in the order the
// seat moves (it bears off from points 1 to 6), 0 for checkers borne off and
// 25 for the bar. How one seat's numbering maps onto the other's depends on
// the variant (see Point). In plakoto a single checker can be pinned under
// opposing checkers.
//
// The zero Position is empty (not a legal game position); Start returns the
// starting position of a variant. Positions are values: copying one copies
// the board. Two positions are equal (==) exactly when they are the same.
type Position struct {
	n   [2][26]int8
	pin [2]uint32 // bit q: the seat's single checker on its point q is pinned
}

// Start returns the starting position of the variant v.
func Start(v Variant) Position {
	rs := v.rules()
	var p Position
	p.n[0], p.n[1] = rs.start, rs.start
	return p
}

// Checkers returns how many checkers the seat has on point q of its own
// numbering (0 borne off, 1..24 points, 25 the bar). Out-of-range arguments
// return 0.
func (p Position) Checkers(seat, q int) int {
	if seat < 0 || seat > 1 || q < 0 || q > 25 {
		return 0
	}
	return int(p.n[seat][q])
}

// Pinned reports whether the seat's checker on its point q is pinned
// (plakoto).
func (p Position) Pinned(seat, q int) bool {
	if seat < 0 || seat > 1 || q < 1 || q > 24 {
		return false
	}
	return p.pin[seat]&(1<<q) != 0
}

// PipCount returns the seat's pip count: the sum over its checkers of the
// distance still to travel (a checker on point q travels q pips, one on the
// bar 25).
func (p Position) PipCount(seat int) int {
	t := 0
	for q := 1; q <= 25; q++ {
		t += q * int(p.n[seat][q])
	}
	return t
}

// Point returns, for point q (1..24) in the numbering of one seat, the same
// point in the numbering of the other seat under variant v. In the games of
// contrary movement (backgammon, portes, tavla, plakoto) it is 25-q; in fevga,
// where both sides move the same way round, it is q±12.
func Point(v Variant, q int) int { return v.rules().opposite(q) }

const posDigits = "0123456789abcdef"

// String returns the position in its compact canonical text form: for seat
// 0 then seat 1, separated by "/", 25 symbols giving the seat's checkers on
// its points 1 to 24 and then on the bar, each a hexadecimal count (0-f) or
// "p" for a single pinned checker. Borne-off checkers are the rest of 15.
// The starting position of backgammon is
//
//	0000050300005000000000020/0000050300005000000000020
func (p Position) String() string { return string(p.AppendText(make([]byte, 0, 51))) }

// AppendText appends the position's text form (String) to b: the form
// without an allocation of its own, for callers that build a larger text.
func (p Position) AppendText(b []byte) []byte {
	for s := 0; s < 2; s++ {
		if s == 1 {
			b = append(b, '/')
		}
		for q := 1; q <= 25; q++ {
			switch {
			case q <= 24 && p.pin[s]&(1<<q) != 0:
				b = append(b, 'p')
			case p.n[s][q] >= 0 && p.n[s][q] < 16:
				b = append(b, posDigits[p.n[s][q]])
			default:
				b = append(b, '?') // not reachable for a checked position
			}
		}
	}
	return b
}

// ErrPosition is wrapped by the errors of ParsePosition and Check.
var ErrPosition = errors.New("invalid position")

// ParsePosition parses the text form of String and checks the position
// under variant v. It accepts exactly the strings String produces.
func ParsePosition(v Variant, s string) (Position, error) {
	var p Position
	if !v.Valid() {
		return p, fmt.Errorf("rules: position: unknown variant %q: %w", string(v), ErrPosition)
	}
	if len(s) != 51 || s[25] != '/' {
		return p, fmt.Errorf("rules: position %q: want 25 symbols, \"/\", 25 symbols: %w", s, ErrPosition)
	}
	for seat := 0; seat < 2; seat++ {
		total := 0
		for q := 1; q <= 25; q++ {
			c := s[seat*26+q-1]
			switch {
			case c >= '0' && c <= '9':
				p.n[seat][q] = int8(c - '0')
			case c >= 'a' && c <= 'f':
				p.n[seat][q] = int8(c - 'a' + 10)
			case c == 'p' && q <= 24:
				p.n[seat][q] = 1
				p.pin[seat] |= 1 << q
			default:
				return Position{}, fmt.Errorf("rules: position: seat %d point %d: bad symbol %q: %w", seat, q, c, ErrPosition)
			}
			total += int(p.n[seat][q])
		}
		if total > NumCheckers {
			return Position{}, fmt.Errorf("rules: position: seat %d has %d checkers on the board, more than %d: %w", seat, total, NumCheckers, ErrPosition)
		}
		p.n[seat][Off] = int8(NumCheckers - total)
	}
	if err := Check(v, p); err != nil {
		return Position{}, err
	}
	return p, nil
}

// Check reports whether p is a well-formed position of variant v: 15
// checkers a seat; no point held by both seats except a pinned checker under
// opposing checkers (plakoto only); a bar only in the hitting games; not both
// seats borne off. It does not decide whether p can arise in play.
func Check(v Variant, p Position) error {
	if !v.Valid() {
		return fmt.Errorf("rules: position: unknown variant %q: %w", string(v), ErrPosition)
	}
	rs := v.rules()
	for s := 0; s < 2; s++ {
		total := 0
		for q := 0; q <= 25; q++ {
			if p.n[s][q] < 0 || p.n[s][q] > NumCheckers {
				return fmt.Errorf("rules: position: seat %d point %d has %d checkers: %w", s, q, p.n[s][q], ErrPosition)
			}
			total += int(p.n[s][q])
		}
		if total != NumCheckers {
			return fmt.Errorf("rules: position: seat %d has %d checkers, want %d: %w", s, total, NumCheckers, ErrPosition)
		}
		if rs.style != hitting && p.n[s][Bar] != 0 {
			return fmt.Errorf("rules: position: seat %d has %d checkers on the bar, but %s has no bar: %w", s, p.n[s][Bar], v, ErrPosition)
		}
		if p.pin[s]&^pointMask != 0 || (rs.style != pinning && p.pin[s] != 0) {
			return fmt.Errorf("rules: position: seat %d has pinned checkers, but %s has no pinning: %w", s, v, ErrPosition)
		}
	}
	if p.n[0][Off] == NumCheckers && p.n[1][Off] == NumCheckers {
		return fmt.Errorf("rules: position: both seats have borne off every checker: %w", ErrPosition)
	}
	for q := 1; q <= 24; q++ {
		o := rs.opposite(q)
		a, b := p.n[0][q], p.n[1][o]
		pa, pb := p.pin[0]&(1<<q) != 0, p.pin[1]&(1<<o) != 0
		switch {
		case pa && pb:
			return fmt.Errorf("rules: position: seat 0 point %d: both seats pinned: %w", q, ErrPosition)
		case pa && (a != 1 || b == 0):
			return fmt.Errorf("rules: position: seat 0 point %d: a pinned checker must be alone under opposing checkers: %w", q, ErrPosition)
		case pb && (b != 1 || a == 0):
			return fmt.Errorf("rules: position: seat 1 point %d: a pinned checker must be alone under opposing checkers: %w", o, ErrPosition)
		case a > 0 && b > 0 && !pa && !pb:
			return fmt.Errorf("rules: position: seat 0 point %d and seat 1 point %d: both seats hold the same point: %w", q, o, ErrPosition)
		}
	}
	return nil
}

// pointMask has a bit for each board point 1..24.
const pointMask uint32 = (1<<25 - 1) &^ 1
