package events

import (
	"fmt"
	"slices"

	"github.com/zarlog/zarlog/events/dice"
)

// A game's state in two parts, for a store that rewrites the state of every
// game an append touches: the head, small and rewritten each time, and the
// history, the parts that only grow (its leaves, rolls, moves and revealed
// roll records), written once each, in chunks. The head is the encoding of
// MarshalBinary with the history left out; a chunk is, version 1:
//
//	u8 version=1, uvarint #leaves, uvarint first leaf, uvarint leaf−previous...,
//	uvarint #rolls, roll..., uvarint #moves, move..., uvarint #records, record...
//
// with roll, move and record as in MarshalBinary. UnmarshalSplit reads a
// head and its chunks back; a head that holds history itself (a state
// MarshalBinary wrote whole) is read as it is, with the chunks after it.
const historyVersion = 1

// A History counts the parts of a game's state that only grow.
type History struct{ Leaves, Rolls, Moves, Records int }

// History returns what g's history holds.
func (g *Game) History() History {
	return History{len(g.Leaves), len(g.Rolls), len(g.Moves), len(g.RollRecords)}
}

// AppendHead appends the encoding of g's state without its history
// (MarshalBinary's encoding of g with no leaves, rolls, moves and revealed
// roll records).
func (g *Game) AppendHead(b []byte) ([]byte, error) {
	h := *g
	h.Leaves, h.Rolls, h.Moves, h.RollRecords = nil, nil, nil, nil
	return h.AppendBinary(b)
}

// AppendHistory appends the chunk of g's history past from: the leaves,
// rolls, moves and revealed roll records after the first from.Leaves,
// from.Rolls, from.Moves and from.Records.
func (g *Game) AppendHistory(b []byte, from History) ([]byte, error) {
	to := g.History()
	if from.Leaves > to.Leaves || from.Rolls > to.Rolls || from.Moves > to.Moves || from.Records > to.Records ||
		from.Leaves < 0 || from.Rolls < 0 || from.Moves < 0 || from.Records < 0 {
		return nil, fmt.Errorf("%w: history from %+v, but the game holds %+v", ErrBadState, from, to)
	}
	w := &stateWriter{b: b}
	w.u8(historyVersion)
	leaves := g.Leaves[from.Leaves:]
	w.uvarint(uint64(len(leaves)))
	for i, l := range leaves {
		switch {
		case i == 0:
			w.uvarint(l)
		case l <= leaves[i-1]:
			return nil, fmt.Errorf("%w: leaf %d after leaf %d", ErrBadState, l, leaves[i-1])
		default:
			w.uvarint(l - leaves[i-1])
		}
	}
	w.uvarint(uint64(to.Rolls - from.Rolls))
	for _, r := range g.Rolls[from.Rolls:] {
		w.uvarint(uint64(r.N))
		w.dice("roll", r.Dice)
		c, ok := codeOf(kindCodes, r.Kind)
		w.code("roll kind", c, ok && c != 0)
	}
	w.uvarint(uint64(to.Moves - from.Moves))
	for _, m := range g.Moves[from.Moves:] {
		w.uvarint(uint64(m.N))
		w.str(m.Play)
		w.code("move seat", byte(m.Seat), m.Seat == 0 || m.Seat == 1)
	}
	w.uvarint(uint64(to.Records - from.Records))
	for i := range g.RollRecords[from.Records:] {
		r := &g.RollRecords[from.Records+i]
		if r.Stage != RollRevealed && w.err == nil {
			w.err = fmt.Errorf("%w: roll record %d is not revealed", ErrBadState, from.Records+i)
		}
		w.record(r)
	}
	if w.err != nil {
		return nil, w.err
	}
	return w.b, nil
}

// UnmarshalSplit decodes a state from its head and the chunks of its
// history, in the order they were written. It decodes into a temporary and
// assigns g only on success.
func (g *Game) UnmarshalSplit(head []byte, chunks [][]byte) error {
	var s Game
	if err := s.UnmarshalBinary(head); err != nil {
		return err
	}
	size := len(head)
	for i, c := range chunks {
		if size += len(c); size > MaxStateSize {
			return fmt.Errorf("%w: more than %d bytes with its history", ErrBadState, MaxStateSize)
		}
		if err := s.addHistory(c); err != nil {
			return fmt.Errorf("history chunk %d: %w", i, err)
		}
	}
	*g = s
	return nil
}

// addHistory appends one chunk of history to s.
func (s *Game) addHistory(b []byte) error {
	r := &stateReader{b: b}
	if v := r.u8(); r.err == nil && v != historyVersion {
		r.fail("history version %d, want %d", v, historyVersion)
	}
	n := r.count(1)
	s.Leaves = slices.Grow(s.Leaves, n)
	for i := range n {
		l := r.uvarint()
		switch {
		case r.err != nil:
		case i > 0 && (l == 0 || l > ^uint64(0)-s.Leaves[len(s.Leaves)-1]):
			r.fail("leaf %d: step %d from the one before", i, l)
		case i > 0:
			l += s.Leaves[len(s.Leaves)-1]
		case len(s.Leaves) > 0 && l <= s.Leaves[len(s.Leaves)-1]:
			r.fail("leaf %d after leaf %d", l, s.Leaves[len(s.Leaves)-1])
		}
		s.Leaves = append(s.Leaves, l)
	}
	if n := r.count(4); n > 0 {
		if r.err == nil && !s.Scheme.PerGame() {
			r.fail("%s has no rolls of a game", s.Scheme)
		}
		for range n {
			var roll dice.Roll
			roll.N = uint32(r.uvarintMax(maxU32, "roll n"))
			roll.Dice = r.dice("roll")
			roll.Kind = decodeCode(r, kindCodes, "roll kind", false)
			s.Rolls = append(s.Rolls, roll)
		}
	}
	for range r.count(3) {
		var m Move
		m.N = uint32(r.uvarintMax(maxU32, "move n"))
		m.Play = r.str()
		m.Seat = int(r.u8())
		if r.err == nil && m.Seat > 1 {
			r.fail("move seat %d", m.Seat)
		}
		s.Moves = append(s.Moves, m)
	}
	if n := r.count(16 + 32 + 32 + 1 + 32 + 3); n > 0 { // a record's bytes
		if r.err == nil && s.Scheme != PerRoll {
			r.fail("%s has no roll records", s.Scheme)
		}
		for range n {
			rec := r.record()
			if r.err == nil && rec.Stage != RollRevealed {
				r.fail("roll record %d is not revealed", len(s.RollRecords))
			}
			s.RollRecords = append(s.RollRecords, rec)
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes", len(r.b))
	}
	return r.err
}

// PeekHead decodes the start of a stored state's head (AppendHead, or a
// state MarshalBinary wrote whole): the game's id, its committing emitter,
// and the leaves the head holds itself (none in a head AppendHead wrote;
// the chunks' leaves come after them). It decodes nothing past the leaves,
// so a status lookup learns whose game it is without decoding the state;
// what it returns is what UnmarshalBinary would decode there, but the rest
// of the head is not checked.
func PeekHead(head []byte) (id, emitter string, leaves []uint64, err error) {
	if len(head) > MaxStateSize {
		return "", "", nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrBadState, len(head), MaxStateSize)
	}
	r := &stateReader{b: head}
	if v := r.u8(); r.err == nil && v != stateVersion {
		r.fail("version %d, want %d", v, stateVersion)
	}
	id = r.str()
	decodeCode(r, schemeCodes, "scheme", false)
	emitter = r.str()
	decodeCode(r, statusCodes, "status", true)
	r.bool()
	if n := r.count(1); n > 0 {
		leaves = make([]uint64, n)
		for i := range leaves {
			leaves[i] = r.uvarint()
		}
	}
	if r.err != nil {
		return "", "", nil, r.err
	}
	return id, emitter, leaves, nil
}

// HistoryLeaf reads one leaf of a history chunk (AppendHistory) without
// decoding the rest: n is how many leaves the chunk holds, and, if i < n,
// index is the log index of its leaf i (the game's leaf i past the leaves
// of the chunks before it). It decodes only the chunk's first i+1 leaves,
// with the checks UnmarshalSplit makes of them; the rest of the chunk is
// not checked.
func HistoryLeaf(c []byte, i int) (n int, index uint64, err error) {
	r := &stateReader{b: c}
	n = r.historyHeader()
	if r.err != nil {
		return 0, 0, r.err
	}
	if i < 0 || i >= n {
		return n, 0, nil
	}
	for j := 0; j <= i && r.err == nil; j++ {
		index = r.nextLeaf(j, index)
	}
	if r.err != nil {
		return 0, 0, r.err
	}
	return n, index, nil
}

// HistoryLeaves appends the log indexes of the leaves of history chunk c
// (AppendHistory) to dst, with the checks UnmarshalSplit makes of them; the
// rest of the chunk is not decoded. A batch of lookups in one game reads its
// leaves once with it.
func HistoryLeaves(c []byte, dst []uint64) ([]uint64, error) {
	r := &stateReader{b: c}
	n := r.historyHeader()
	var index uint64
	for j := 0; j < n && r.err == nil; j++ {
		index = r.nextLeaf(j, index)
		dst = append(dst, index)
	}
	if r.err != nil {
		return nil, r.err
	}
	return dst, nil
}

// historyHeader reads a history chunk's version and returns its count of
// leaves.
func (r *stateReader) historyHeader() int {
	if v := r.u8(); r.err == nil && v != historyVersion {
		r.fail("history version %d, want %d", v, historyVersion)
	}
	return r.count(1)
}

// nextLeaf reads the log index of a chunk's leaf j, prev being leaf j-1's:
// the first is written whole, each later one as a positive step from the
// one before.
func (r *stateReader) nextLeaf(j int, prev uint64) uint64 {
	l := r.uvarint()
	switch {
	case r.err != nil:
		return 0
	case j == 0:
		return l
	case l == 0 || l > ^uint64(0)-prev:
		r.fail("leaf %d: step %d from the one before", j, l)
		return 0
	}
	return prev + l
}
