package rules

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// A Move is one checker's part of a play, in the mover's own numbering: the
// checker goes from point From (Bar for the bar) to point To (Off when it is
// borne off). Via holds the points strictly between From and To where the
// notation shows the checker landing, and Hits the points (among Via and To)
// marked "*": where it hit (in plakoto: pinned) an opposing checker. Both
// are bit sets: bit q stands for point q.
type Move struct {
	From, To int
	Via      uint32
	Hits     uint32
}

// A Play is the checker moves of one turn, one Move per checker. The empty
// play (no checker can move) is written "-".
type Play []Move

// EmptyPlay is the text of the empty play.
const EmptyPlay = "-"

// maxNotation bounds the length of a play's text.
const maxNotation = 128

// A NotationError says why a play's text is not valid notation.
type NotationError struct {
	Text   string // the text (truncated to 128 bytes)
	Reason string
}

func (e *NotationError) Error() string {
	return fmt.Sprintf("rules: play %q: %s", e.Text, e.Reason)
}

// ParsePlay parses a play written in standard notation from the mover's
// point of view: moves separated by single spaces, each
// "from/[point/...]to" with from a point 1-24 or "bar", to a point 1-24 or
// "off", the intermediate points a checker landed on, "*" after a point where
// it hit, and "(n)" (n from 2 to 4) after a move that n checkers made; "-" is
// the empty play. For example "24/18 13/11", "bar/22*", "6/off",
// "24/18*/13", "13/11(2)".
//
// ParsePlay accepts moves in any order, repeated moves, chains ("13/8 8/3")
// and intermediate points shown without a hit ("24/18/13"); FormatPlay
// sorts and groups, and CanonicalPlay gives the one canonical text of a legal
// play. It never panics.
func ParsePlay(s string) (Play, error) {
	short := s
	if len(short) > maxNotation {
		short = short[:maxNotation]
	}
	bad := func(format string, args ...any) (Play, error) {
		return nil, &NotationError{Text: short, Reason: fmt.Sprintf(format, args...)}
	}
	if len(s) > maxNotation {
		return bad("longer than %d bytes", maxNotation)
	}
	if s == EmptyPlay {
		return Play{}, nil
	}
	if s == "" {
		return bad("empty; the empty play is written %q", EmptyPlay)
	}
	p := make(Play, 0, 4) // a play has at most four checker moves
	steps := 0
	for part := range strings.SplitSeq(s, " ") {
		if part == "" {
			return bad("moves must be separated by exactly one space")
		}
		count := 1
		if i := strings.IndexByte(part, '('); i >= 0 {
			if len(part) != i+3 || part[i+2] != ')' || part[i+1] < '2' || part[i+1] > '4' {
				return bad("move %q: a repetition is written (2), (3) or (4) at the end", part)
			}
			count = int(part[i+1] - '0')
			part = part[:i]
		}
		if strings.IndexByte(part, '/') < 0 {
			return bad("move %q: want from/to", part)
		}
		var m Move
		prev := 0
		for j, rest := 0, part; ; j++ {
			f, after, more := strings.Cut(rest, "/")
			rest = after
			hit := strings.HasSuffix(f, "*")
			if hit {
				f = f[:len(f)-1]
			}
			q, ok := parsePoint(f)
			first, last := j == 0, !more
			switch {
			case !ok:
				return bad("move %q: %q is not a point (1-24, bar or off)", part, f)
			case q == Bar && !first:
				return bad("move %q: only the first point may be the bar", part)
			case q == Off && !last:
				return bad("move %q: only the last point may be off", part)
			case first && hit:
				return bad("move %q: the starting point cannot be marked *", part)
			case q == Off && hit:
				return bad("move %q: off cannot be marked *", part)
			case !first && q >= prev:
				return bad("move %q: points must decrease along the move", part)
			}
			switch {
			case first:
				m.From = q
			case last:
				m.To = q
			default:
				m.Via |= 1 << q
			}
			if hit {
				m.Hits |= 1 << q
			}
			prev = q
			if last {
				break
			}
		}
		if m.From-m.To > 24 {
			return bad("move %q: a checker moves at most 24 pips in a turn", part)
		}
		steps += count * (bits.OnesCount32(m.Via) + 1)
		if steps > 4 {
			return bad("more than four checker moves")
		}
		for range count {
			p = append(p, m)
		}
	}
	return p, nil
}

// parsePoint parses "bar", "off" or a point 1-24 without leading zeros.
func parsePoint(f string) (int, bool) {
	switch f {
	case "bar":
		return Bar, true
	case "off":
		return Off, true
	}
	if len(f) == 0 || len(f) > 2 || f[0] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(f)
	if err != nil || n < 1 || n > 24 {
		return 0, false
	}
	return n, true
}

// compareMoves orders moves for formatting: from the highest starting point
// down, then the highest destination, then the larger Via and Hits sets.
func compareMoves(a, b Move) int {
	if c := cmp.Compare(b.From, a.From); c != 0 {
		return c
	}
	if c := cmp.Compare(b.To, a.To); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Via, a.Via); c != 0 {
		return c
	}
	return cmp.Compare(b.Hits, a.Hits)
}

// FormatPlay writes p in notation: moves sorted from the highest starting
// point down (then by destination, then by the points shown on the way and
// the hits), identical moves grouped as "(n)", "-" for the empty play. It
// does not reorganise the moves themselves (chains stay chains); for a legal
// play, CanonicalPlay returns the canonical text. For every play p that
// ParsePlay returns, ParsePlay(FormatPlay(p)) describes the same moves.
func FormatPlay(p Play) string {
	var buf [maxNotation]byte
	return string(AppendPlay(buf[:0], p))
}

// AppendPlay appends FormatPlay(p) to b: a caller that compares a play's
// text with a string, as the append path's move check does, need not
// allocate one (string(AppendPlay(buf[:0], p)) == s allocates nothing).
func AppendPlay(b []byte, p Play) []byte {
	if len(p) == 0 {
		return append(b, EmptyPlay...)
	}
	ms := sortedMoves(p, new([4]Move))
	for i := 0; i < len(ms); {
		j := i + 1
		for j < len(ms) && ms[j] == ms[i] {
			j++
		}
		if i > 0 {
			b = append(b, ' ')
		}
		b = appendMove(b, ms[i])
		if j-i > 1 {
			b = append(b, '(')
			b = strconv.AppendInt(b, int64(j-i), 10)
			b = append(b, ')')
		}
		i = j
	}
	return b
}

// sortedMoves returns p's moves sorted for formatting (compareMoves), in
// buf if they fit (a play has at most four), else in a new slice.
func sortedMoves(p Play, buf *[4]Move) []Move {
	var ms []Move
	if len(p) <= len(buf) {
		ms = buf[:len(p)]
		copy(ms, p)
	} else {
		ms = slices.Clone(p)
	}
	slices.SortFunc(ms, compareMoves)
	return ms
}

// String returns FormatPlay(p).
func (p Play) String() string { return FormatPlay(p) }

func appendMove(b []byte, m Move) []byte {
	b = appendPoint(b, m.From)
	for q := 24; q >= 1; q-- {
		if m.Via&(1<<q) != 0 && q < m.From && q > m.To {
			b = append(b, '/')
			b = appendPoint(b, q)
			if m.Hits&(1<<q) != 0 {
				b = append(b, '*')
			}
		}
	}
	b = append(b, '/')
	b = appendPoint(b, m.To)
	if m.To >= 1 && m.To <= 24 && m.Hits&(1<<m.To) != 0 {
		b = append(b, '*')
	}
	return b
}

func appendPoint(b []byte, q int) []byte {
	switch q {
	case Bar:
		return append(b, "bar"...)
	case Off:
		return append(b, "off"...)
	}
	return strconv.AppendInt(b, int64(q), 10)
}

// A step is one die's worth of one checker's move, in the mover's
// numbering; to is Off (0) for a checker borne off.
type step struct {
	from, to int8
	die      int8
}

// notate turns the steps of a legal play into its canonical notation. hits
// is the set of points where the play hit (or newly pinned) an opposing
// checker; it is computed from the positions before and after the play, so
// that every sequence of steps that leads to the same position is written
// the same way.
//
// The steps are sorted from the highest starting point down and chained
// greedily into one move per checker (a step that starts where an earlier
// move ends continues it). Each hit is credited to the first move, in that
// order, that ends on the hit point, or else to the first that lands on it
// on the way; intermediate points are shown only where a hit is credited.
func notate(steps []step, hits uint32) Play {
	var sbuf [4]step
	ss := append(sbuf[:0], steps...)
	slices.SortFunc(ss, func(a, b step) int {
		if c := cmp.Compare(b.from, a.from); c != 0 {
			return c
		}
		return cmp.Compare(b.to, a.to)
	})
	type path struct {
		from, to int
		lands    uint32 // every point landed on strictly before to
	}
	var pbuf [4]path
	ps := pbuf[:0]
	for _, s := range ss {
		joined := false
		for i := range ps {
			if ps[i].to == int(s.from) {
				ps[i].lands |= 1 << s.from
				ps[i].to = int(s.to)
				joined = true
				break
			}
		}
		if !joined {
			ps = append(ps, path{from: int(s.from), to: int(s.to)})
		}
	}
	slices.SortStableFunc(ps, func(a, b path) int {
		if c := cmp.Compare(b.from, a.from); c != 0 {
			return c
		}
		return cmp.Compare(b.to, a.to)
	})
	play := make(Play, len(ps))
	for i, p := range ps {
		play[i] = Move{From: p.from, To: p.to}
	}
	for q := 24; q >= 1; q-- {
		bit := uint32(1) << q
		if hits&bit == 0 {
			continue
		}
		done := false
		for i := range ps {
			if ps[i].to == q {
				play[i].Hits |= bit
				done = true
				break
			}
		}
		if done {
			continue
		}
		for i := range ps {
			if ps[i].lands&bit != 0 {
				play[i].Hits |= bit
				play[i].Via |= bit
				break
			}
		}
	}
	slices.SortFunc(play, compareMoves)
	return play
}
