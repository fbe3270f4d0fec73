package events

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/zarlog/zarlog/events/dice"
)

// A game's state in three parts, for a store that rewrites the state of
// every game an append touches:
//
//   - the head (AppendHead): what the game's commit and its set-up events
//     (contributions, tokens, the beacon) set, written when the game begins
//     and again only when one of them changes it (SameHead);
//   - the live part (AppendLive): what a roll, a move, an end or a reveal
//     changes, small and rewritten at each event;
//   - the history: the parts that only grow (its leaves, rolls, moves and
//     revealed roll records), written once each, in chunks.
//
// The head, version 3:
//
//	u8 version=3, str id, u8 scheme, str emitter, time committedAt,
//	bytes settings, u8 opening, then by scheme (tavlarena, anchored) as in
//	MarshalBinary (per-roll: nothing), bool movesLogged
//
// The live part, version 1:
//
//	u8 version=1, u8 status, bool closed, bytes position, bool moveOwed
//	(needs movesLogged), per-roll only: opt pending{[16] rollId,
//	[32] commitment, u8 stage (1 committed, 2 seconded), if seconded:
//	u8 secondFrom, [32] second}, then end, seed and failure as in
//	MarshalBinary
//
// A chunk of history, version 1:
//
//	u8 version=1, uvarint #leaves, uvarint first leaf, uvarint leaf−previous...,
//	uvarint #rolls, roll..., uvarint #moves, move..., uvarint #records, record...
//
// with the rest as in MarshalBinary. UnmarshalSplit reads the three back.
// A head of version 2 (store format 6 and before: MarshalBinary's encoding
// with the history left out, or the whole state) has no live part and is
// read as it is, with the chunks after it.
const historyVersion = 1

// Versions of the head and of the live part.
const (
	headVersion = 3
	liveVersion = 1
)

// A History counts the parts of a game's state that only grow.
type History struct{ Leaves, Rolls, Moves, Records int }

// History returns what g's history holds (a cut state's, what it leaves
// out included).
func (g *Game) History() History {
	b := g.base()
	return History{b.Leaves + len(g.Leaves), b.Rolls + len(g.Rolls), b.Moves + len(g.Moves), b.Records + len(g.RollRecords)}
}

// AppendHead appends the encoding of g's head: the parts of its state that
// its commit and its set-up events set (version 3 above).
func (g *Game) AppendHead(b []byte) ([]byte, error) {
	w := &stateWriter{b: b}
	w.u8(headVersion)
	w.str(g.ID)
	c, ok := codeOf(schemeCodes, g.Scheme)
	w.code("scheme", c, ok && c != 0)
	w.str(g.Emitter)
	w.time(g.CommittedAt)
	w.bytes(g.Settings)
	c, ok = codeOf(openingCodes, g.Opening)
	w.code("opening", c, ok)
	w.setup(g)
	w.bool(g.MovesLogged)
	if w.err != nil {
		return nil, w.err
	}
	return w.b, nil
}

// AppendLive appends the encoding of g's live part: the parts of its state
// that are neither in its head nor in its history (version 1 above).
func (g *Game) AppendLive(b []byte) ([]byte, error) {
	w := &stateWriter{b: b}
	w.u8(liveVersion)
	c, ok := codeOf(statusCodes, g.Status)
	w.code("status", c, ok)
	w.bool(g.Closed)
	w.bytes(g.Position)
	if g.MoveOwed && !g.MovesLogged && w.err == nil {
		w.err = fmt.Errorf("%w: a move owed in a game whose moves are not logged", ErrBadState)
	}
	w.bool(g.MoveOwed)
	if g.Scheme == PerRoll {
		w.bool(g.Pending != nil)
		if p := g.Pending; p != nil {
			if (p.Seed != [32]byte{} || p.Dice != dice.Dice{} || p.Stage == RollCommitted && (p.Second != [32]byte{} || p.SecondFrom != "")) && w.err == nil {
				w.err = fmt.Errorf("%w: the pending roll holds what its stage %d does not", ErrBadState, p.Stage)
			}
			w.fixed(p.RollID[:])
			w.fixed(p.Commitment[:])
			w.code("pending stage", byte(p.Stage), p.Stage == RollCommitted || p.Stage == RollSeconded)
			if p.Stage == RollSeconded {
				c, ok := codeOf(fromCodes, p.SecondFrom)
				w.code("secondFrom", c, ok)
				w.fixed(p.Second[:])
			}
		}
	}
	w.outcome(g)
	if w.err != nil {
		return nil, w.err
	}
	return w.b, nil
}

// SameHead reports whether AppendHead writes the same bytes for a and b.
// A store that rewrites a game's live part at each event rewrites its head
// only when it changes (TestSameHead holds it to AppendHead).
func SameHead(a, b *Game) bool {
	if a == b {
		return true
	}
	if a.ID != b.ID || a.Scheme != b.Scheme || a.Emitter != b.Emitter || !a.CommittedAt.Equal(b.CommittedAt) ||
		!bytes.Equal(a.Settings, b.Settings) || a.Opening != b.Opening || a.MovesLogged != b.MovesLogged ||
		a.Commitment != b.Commitment || a.Seats != b.Seats || a.Contributed != b.Contributed || a.Contributions != b.Contributions ||
		a.MatchID != b.MatchID || a.GameNo != b.GameNo || a.Fingerprint != b.Fingerprint || !a.SealedAt.Equal(b.SealedAt) ||
		a.Anchor != b.Anchor || a.Tokens != b.Tokens || (a.Beacon == nil) != (b.Beacon == nil) {
		return false
	}
	if x, y := a.Beacon, b.Beacon; x != nil && x != y {
		return x.Chain == y.Chain && x.Randomness == y.Randomness && x.Round == y.Round && bytes.Equal(x.Signature, y.Signature)
	}
	return true
}

// AppendHistory appends the chunk of g's history past from: the leaves,
// rolls, moves and revealed roll records after the first from.Leaves,
// from.Rolls, from.Moves and from.Records. A cut state (Cut) must hold
// them.
func (g *Game) AppendHistory(b []byte, from History) ([]byte, error) {
	to, base := g.History(), g.base()
	if from.Leaves > to.Leaves || from.Rolls > to.Rolls || from.Moves > to.Moves || from.Records > to.Records ||
		from.Leaves < base.Leaves || from.Rolls < base.Rolls || from.Moves < base.Moves || from.Records < base.Records {
		return nil, fmt.Errorf("%w: history from %+v, but the game holds %+v (from %+v)", ErrBadState, from, to, base)
	}
	w := &stateWriter{b: b}
	w.u8(historyVersion)
	leaves := g.Leaves[from.Leaves-base.Leaves:]
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
	for _, r := range g.Rolls[from.Rolls-base.Rolls:] {
		w.uvarint(uint64(r.N))
		w.dice("roll", r.Dice)
		c, ok := codeOf(kindCodes, r.Kind)
		w.code("roll kind", c, ok && c != 0)
	}
	w.uvarint(uint64(to.Moves - from.Moves))
	for _, m := range g.Moves[from.Moves-base.Moves:] {
		w.uvarint(uint64(m.N))
		w.str(m.Play)
		w.code("move seat", byte(m.Seat), m.Seat == 0 || m.Seat == 1)
	}
	w.uvarint(uint64(to.Records - from.Records))
	for i := range g.RollRecords[from.Records-base.Records:] {
		r := &g.RollRecords[from.Records-base.Records+i]
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

// UnmarshalSplit decodes a state from its head, its live part and the
// chunks of its history, in the order they were written. A head of version
// 2 (store format 6 and before) has no live part: live must be nil. It
// decodes into a temporary and assigns g only on success.
func (g *Game) UnmarshalSplit(head, live []byte, chunks [][]byte) error {
	var s Game
	if len(head) > 0 && head[0] == stateVersion {
		if live != nil {
			return fmt.Errorf("%w: a live part after a head of version %d", ErrBadState, stateVersion)
		}
		if err := s.UnmarshalBinary(head); err != nil {
			return err
		}
	} else if err := s.unmarshalHead(head, live); err != nil {
		return err
	}
	size := len(head) + len(live)
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

// unmarshalHead decodes a head of version 3 and its live part into s.
func (s *Game) unmarshalHead(head, live []byte) error {
	if len(head)+len(live) > MaxStateSize {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrBadState, len(head)+len(live), MaxStateSize)
	}
	r := &stateReader{b: head}
	if v := r.u8(); r.err == nil && v != headVersion {
		r.fail("head version %d, want %d or %d", v, headVersion, stateVersion)
	}
	s.ID = r.str()
	s.Scheme = decodeCode(r, schemeCodes, "scheme", false)
	s.Emitter = r.str()
	s.CommittedAt = r.time()
	s.Settings = r.bytes()
	s.Opening = decodeCode(r, openingCodes, "opening", true)
	r.setup(s)
	s.MovesLogged = r.bool()
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes in the head", len(r.b))
	}
	if r.err != nil {
		return r.err
	}
	if live == nil {
		return fmt.Errorf("%w: a head of version %d without its live part", ErrBadState, headVersion)
	}
	r = &stateReader{b: live}
	if v := r.u8(); r.err == nil && v != liveVersion {
		r.fail("live part version %d, want %d", v, liveVersion)
	}
	s.Status = decodeCode(r, statusCodes, "status", true)
	s.Closed = r.bool()
	s.Position = r.bytes()
	s.MoveOwed = r.bool()
	if r.err == nil && s.MoveOwed && !s.MovesLogged {
		r.fail("a move owed in a game whose moves are not logged")
	}
	if s.Scheme == PerRoll && r.bool() {
		var p RollRecord
		r.fixed(p.RollID[:])
		r.fixed(p.Commitment[:])
		p.Stage = RollStage(r.u8())
		switch {
		case r.err != nil:
		case p.Stage == RollSeconded:
			p.SecondFrom = decodeCode(r, fromCodes, "secondFrom", true)
			r.fixed(p.Second[:])
		case p.Stage != RollCommitted:
			r.fail("pending stage %d", p.Stage)
		}
		s.Pending = &p
	}
	r.outcome(s)
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes in the live part", len(r.b))
	}
	return r.err
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

// PeekHead decodes the start of a stored state's head (AppendHead's, or a
// head of version 2: store format 6's, or a state MarshalBinary wrote
// whole): the game's id, its committing emitter, and the leaves the head
// holds itself (none in a head of version 3 or one format 6 wrote; the
// chunks' leaves come after them). It decodes nothing past them, so a
// status lookup learns whose game it is without decoding the state; what
// it returns is what UnmarshalSplit would decode there, but the rest of
// the head is not checked.
func PeekHead(head []byte) (id, emitter string, leaves []uint64, err error) {
	if len(head) > MaxStateSize {
		return "", "", nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrBadState, len(head), MaxStateSize)
	}
	r := &stateReader{b: head}
	v := r.u8()
	if r.err == nil && v != headVersion && v != stateVersion {
		r.fail("head version %d, want %d or %d", v, headVersion, stateVersion)
	}
	id = r.str()
	decodeCode(r, schemeCodes, "scheme", false)
	emitter = r.str()
	if v == stateVersion {
		decodeCode(r, statusCodes, "status", true)
		r.bool()
		if n := r.count(1); n > 0 {
			leaves = make([]uint64, n)
			for i := range leaves {
				leaves[i] = r.uvarint()
			}
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
