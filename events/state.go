package events

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/zarlog/zarlog/events/dice"
)

// The binary encoding of a Game (the ledger's projection). It is canonical:
// UnmarshalBinary accepts only what MarshalBinary writes (minimal varints,
// known enumerations, no trailing bytes), so UnmarshalBinary(b) succeeding
// means MarshalBinary returns exactly b. Layout, version 2 (version 1 had no move flags):
//
//	u8 version=1, str id, u8 scheme, str emitter, u8 status, bool closed,
//	uvarint #leaves, uvarint leaf..., time committedAt, bytes settings,
//	u8 opening, then by scheme:
//	  tavlarena: [32] commitment, [16] seat0, [16] seat1, u8 contributed bits,
//	             [32] contribution0, [32] contribution1
//	  anchored:  str matchId, uvarint gameNo, [32] fingerprint, time sealedAt,
//	             [32] chain, uvarint round, u8 contributed bits, str token0,
//	             str token1, opt beacon{[32] chain, [32] randomness, uvarint round, bytes signature}
//	  per-roll:  uvarint #records, record..., opt record (pending)
//	per-game: uvarint #rolls, roll{uvarint n, u8 die, u8 die, u8 kind}...
//	uvarint #moves, move{uvarint n, str play, u8 seat}..., bytes position,
//	u8 move flags (bit 0 MovesLogged, bit 1 MoveOwed; MoveOwed needs MovesLogged),
//	opt end{uvarint points, u8 result, u8 winner(0,1,2=none)},
//	opt [32] seed, opt failure{uvarint seq, u8 check, uvarint n, [16] rollId,
//	[32] committed, [32] recomputed, u8 u8 logged, u8 u8 rolled}
//
// where str and bytes are uvarint-length-prefixed, time is a zigzag varint of
// Unix seconds and a uvarint of nanoseconds, opt is a u8 0 or 1 then the
// value, and record is [16] rollId, [32] commitment, [32] second,
// u8 secondFrom(0 none, 1 client, 2 server), [32] seed, u8 die, u8 die,
// u8 stage.
const stateVersion = 2

// MaxStateSize bounds the encoded state UnmarshalBinary accepts.
const MaxStateSize = 1 << 24

var (
	schemeCodes  = []Scheme{"", Tavlarena, Anchored, PerRoll}
	statusCodes  = []Status{StatusOpen, StatusEnded, StatusVerified, StatusFailed}
	openingCodes = []dice.Opening{"", dice.OpeningWestern, dice.OpeningTurkishReroll}
	kindCodes    = []dice.Kind{"", dice.KindOpening, dice.KindReroll, dice.KindTurn}
	fromCodes    = []SecondFrom{"", FromClient, FromServer}
	resultCodes  = []Result{"", Finished, Resigned, Abandoned}
	checkCodes   = []FailCheck{"", FailCommitment, FailFingerprint, FailRoll}
)

func codeOf[T comparable](table []T, v T) (byte, bool) {
	for i, x := range table {
		if x == v {
			return byte(i), true
		}
	}
	return 0, false
}

// ErrBadState is wrapped by every error of UnmarshalBinary and MarshalBinary.
var ErrBadState = errors.New("bad game state")

type stateWriter struct {
	b   []byte
	err error
}

func (w *stateWriter) u8(v byte)        { w.b = append(w.b, v) }
func (w *stateWriter) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *stateWriter) fixed(v []byte)   { w.b = append(w.b, v...) }
func (w *stateWriter) bytes(v []byte)   { w.uvarint(uint64(len(v))); w.fixed(v) }
func (w *stateWriter) str(v string)     { w.uvarint(uint64(len(v))); w.b = append(w.b, v...) }
func (w *stateWriter) bool(v bool) {
	if v {
		w.u8(1)
	} else {
		w.u8(0)
	}
}

// Times in a state are between years 0000 and 9999.
const (
	minUnix = -62167219200 // 0000-01-01T00:00:00Z
	maxUnix = 253402300799 // 9999-12-31T23:59:59Z
)

func (w *stateWriter) time(t time.Time) {
	if (t.Unix() < minUnix || t.Unix() > maxUnix) && w.err == nil {
		w.err = fmt.Errorf("%w: time %s is outside years 0000..9999", ErrBadState, t)
	}
	w.b = binary.AppendVarint(w.b, t.Unix())
	w.uvarint(uint64(t.Nanosecond()))
}
func (w *stateWriter) code(field string, c byte, ok bool) {
	if !ok && w.err == nil {
		w.err = fmt.Errorf("%w: %s is not a known value", ErrBadState, field)
	}
	w.u8(c)
}
func (w *stateWriter) dice(field string, d dice.Dice) {
	if !d.Valid() && w.err == nil {
		w.err = fmt.Errorf("%w: %s %v are not dice", ErrBadState, field, d)
	}
	w.u8(byte(d[0]))
	w.u8(byte(d[1]))
}
func (w *stateWriter) seatBits(c [2]bool) {
	var v byte
	if c[0] {
		v |= 1
	}
	if c[1] {
		v |= 2
	}
	w.u8(v)
}

func (w *stateWriter) record(r *RollRecord) {
	w.fixed(r.RollID[:])
	w.fixed(r.Commitment[:])
	w.fixed(r.Second[:])
	c, ok := codeOf(fromCodes, r.SecondFrom)
	w.code("secondFrom", c, ok)
	w.fixed(r.Seed[:])
	if r.Stage == RollRevealed {
		w.dice("roll record dice", r.Dice)
	} else {
		if r.Dice != (dice.Dice{}) && w.err == nil {
			w.err = fmt.Errorf("%w: unrevealed roll has dice", ErrBadState)
		}
		w.u8(0)
		w.u8(0)
	}
	if (r.Stage < RollCommitted || r.Stage > RollRevealed) && w.err == nil {
		w.err = fmt.Errorf("%w: roll stage %d", ErrBadState, r.Stage)
	}
	w.u8(byte(r.Stage))
}

// MarshalBinary encodes the game state.
func (g *Game) MarshalBinary() ([]byte, error) {
	return g.AppendBinary(make([]byte, 0, g.sizeHint()))
}

// sizeHint is about the size of g's encoding, rounded up.
func (g *Game) sizeHint() int {
	n := 320 + len(g.ID) + len(g.Emitter) + len(g.Settings) + len(g.MatchID) + len(g.Tokens[0]) + len(g.Tokens[1]) +
		len(g.Position) + 5*len(g.Leaves) + 6*len(g.Rolls) + 150*len(g.RollRecords) + 150
	for _, m := range g.Moves {
		n += len(m.Play) + 8
	}
	if g.Beacon != nil {
		n += 80 + len(g.Beacon.Signature)
	}
	return n
}

// AppendBinary appends the encoding of the game state (MarshalBinary's) to
// b and returns the extended slice.
func (g *Game) AppendBinary(b []byte) ([]byte, error) {
	if g.cut != nil {
		return nil, fmt.Errorf("%w: game %q is a cut state, which leaves out part of its history", ErrBadState, g.ID)
	}
	w := &stateWriter{b: b}
	w.u8(stateVersion)
	w.str(g.ID)
	c, ok := codeOf(schemeCodes, g.Scheme)
	w.code("scheme", c, ok && c != 0)
	w.str(g.Emitter)
	c, ok = codeOf(statusCodes, g.Status)
	w.code("status", c, ok)
	w.bool(g.Closed)
	w.uvarint(uint64(len(g.Leaves)))
	for _, l := range g.Leaves {
		w.uvarint(l)
	}
	w.time(g.CommittedAt)
	w.bytes(g.Settings)
	c, ok = codeOf(openingCodes, g.Opening)
	w.code("opening", c, ok)
	w.setup(g)
	switch g.Scheme {
	case PerRoll:
		w.uvarint(uint64(len(g.RollRecords)))
		for i := range g.RollRecords {
			w.record(&g.RollRecords[i])
		}
		w.bool(g.Pending != nil)
		if g.Pending != nil {
			w.record(g.Pending)
		}
	}
	if g.Scheme.PerGame() {
		w.uvarint(uint64(len(g.Rolls)))
		for _, r := range g.Rolls {
			w.uvarint(uint64(r.N))
			w.dice("roll", r.Dice)
			c, ok := codeOf(kindCodes, r.Kind)
			w.code("roll kind", c, ok && c != 0)
		}
	}
	w.uvarint(uint64(len(g.Moves)))
	for _, m := range g.Moves {
		w.uvarint(uint64(m.N))
		w.str(m.Play)
		w.code("move seat", byte(m.Seat), m.Seat == 0 || m.Seat == 1)
	}
	w.bytes(g.Position)
	var flags byte
	if g.MovesLogged {
		flags |= 1
	}
	if g.MoveOwed {
		flags |= 2
	}
	w.code("move flags", flags, flags != 2)
	w.outcome(g)
	if w.err != nil {
		return nil, w.err
	}
	return w.b, nil
}

// setup writes the fields of g's scheme that its commit and its set-up
// events (contributions, tokens, the beacon) set.
func (w *stateWriter) setup(g *Game) {
	switch g.Scheme {
	case Tavlarena:
		w.fixed(g.Commitment[:])
		w.fixed(g.Seats[0][:])
		w.fixed(g.Seats[1][:])
		w.seatBits(g.Contributed)
		w.fixed(g.Contributions[0][:])
		w.fixed(g.Contributions[1][:])
	case Anchored:
		w.str(g.MatchID)
		w.uvarint(uint64(g.GameNo))
		w.fixed(g.Fingerprint[:])
		w.time(g.SealedAt)
		w.fixed(g.Anchor.Chain[:])
		w.uvarint(g.Anchor.Round)
		w.seatBits(g.Contributed)
		w.str(g.Tokens[0])
		w.str(g.Tokens[1])
		w.bool(g.Beacon != nil)
		if b := g.Beacon; b != nil {
			w.fixed(b.Chain[:])
			w.fixed(b.Randomness[:])
			w.uvarint(b.Round)
			w.bytes(b.Signature)
		}
	}
}

// outcome writes g's end, seed and failure.
func (w *stateWriter) outcome(g *Game) {
	w.bool(g.End != nil)
	if e := g.End; e != nil {
		w.uvarint(uint64(e.Points))
		c, ok := codeOf(resultCodes, e.Result)
		w.code("result", c, ok && c != 0)
		switch e.Winner {
		case 0, 1:
			w.u8(byte(e.Winner))
		case NoWinner:
			w.u8(2)
		default:
			w.code("winner", 0, false)
		}
	}
	w.bool(g.Seed != nil)
	if g.Seed != nil {
		w.fixed(g.Seed[:])
	}
	w.bool(g.Failure != nil)
	if f := g.Failure; f != nil {
		w.uvarint(f.Seq)
		c, ok := codeOf(checkCodes, f.Check)
		w.code("failure check", c, ok && c != 0)
		w.uvarint(uint64(f.N))
		w.fixed(f.RollID[:])
		w.fixed(f.Committed[:])
		w.fixed(f.Recomputed[:])
		w.u8(byte(f.Logged[0]))
		w.u8(byte(f.Logged[1]))
		w.u8(byte(f.Rolled[0]))
		w.u8(byte(f.Rolled[1]))
		if f.Check == FailRoll && (!f.Logged.Valid() || !f.Rolled.Valid()) || f.Check != FailRoll && (f.Logged != dice.Dice{} || f.Rolled != dice.Dice{}) {
			w.code("failure dice", 0, false)
		}
	}
}

type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", ErrBadState, fmt.Sprintf(format, args...))
	}
}

func (r *stateReader) u8() byte {
	if r.err != nil || len(r.b) < 1 {
		r.fail("truncated")
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *stateReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || n != len(binary.AppendUvarint(nil, v)) {
		r.fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *stateReader) uvarintMax(max uint64, what string) uint64 {
	v := r.uvarint()
	if v > max {
		r.fail("%s %d is more than %d", what, v, max)
		return 0
	}
	return v
}

func (r *stateReader) fixed(dst []byte) {
	if r.err != nil || len(r.b) < len(dst) {
		r.fail("truncated")
		return
	}
	copy(dst, r.b)
	r.b = r.b[len(dst):]
}

func (r *stateReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail("truncated")
		return nil
	}
	if n == 0 {
		return nil
	}
	v := make([]byte, n)
	copy(v, r.b)
	r.b = r.b[n:]
	return v
}

func (r *stateReader) str() string { return string(r.bytes()) }

func (r *stateReader) bool() bool {
	switch r.u8() {
	case 0:
		return false
	case 1:
		return true
	}
	r.fail("bad boolean")
	return false
}

func (r *stateReader) time() time.Time {
	if r.err != nil {
		return time.Time{}
	}
	s, n := binary.Varint(r.b)
	if n <= 0 || n != len(binary.AppendVarint(nil, s)) {
		r.fail("bad varint")
		return time.Time{}
	}
	r.b = r.b[n:]
	if s < minUnix || s > maxUnix {
		r.fail("time %d is outside years 0000..9999", s)
		return time.Time{}
	}
	ns := r.uvarintMax(999_999_999, "nanoseconds")
	return time.Unix(s, int64(ns)).UTC()
}

func decodeCode[T any](r *stateReader, table []T, what string, allowZero bool) T {
	c := r.u8()
	if int(c) >= len(table) || c == 0 && !allowZero {
		r.fail("%s code %d", what, c)
		var zero T
		return zero
	}
	return table[c]
}

func (r *stateReader) dice(what string) dice.Dice {
	d := dice.Dice{int(r.u8()), int(r.u8())}
	if r.err == nil && !d.Valid() {
		r.fail("%s %v are not dice", what, d)
	}
	return d
}

func (r *stateReader) seatBits() [2]bool {
	v := r.u8()
	if v > 3 {
		r.fail("seat bits %d", v)
	}
	return [2]bool{v&1 != 0, v&2 != 0}
}

func (r *stateReader) count(minSize int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)/minSize) {
		r.fail("count %d is more than the remaining bytes allow", n)
		return 0
	}
	return int(n)
}

func (r *stateReader) record() RollRecord {
	var rec RollRecord
	r.fixed(rec.RollID[:])
	r.fixed(rec.Commitment[:])
	r.fixed(rec.Second[:])
	rec.SecondFrom = decodeCode(r, fromCodes, "secondFrom", true)
	r.fixed(rec.Seed[:])
	d := dice.Dice{int(r.u8()), int(r.u8())}
	rec.Stage = RollStage(r.u8())
	switch {
	case r.err != nil:
	case rec.Stage < RollCommitted || rec.Stage > RollRevealed:
		r.fail("roll stage %d", rec.Stage)
	case rec.Stage == RollRevealed && !d.Valid(), rec.Stage != RollRevealed && d != dice.Dice{}:
		r.fail("roll record dice %v at stage %d", d, rec.Stage)
	}
	rec.Dice = d
	return rec
}

// UnmarshalBinary decodes a game state written by MarshalBinary. It decodes
// into a temporary and assigns g only on success.
func (g *Game) UnmarshalBinary(b []byte) error {
	if len(b) > MaxStateSize {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrBadState, len(b), MaxStateSize)
	}
	r := &stateReader{b: b}
	var s Game
	if v := r.u8(); r.err == nil && v != stateVersion {
		r.fail("version %d, want %d", v, stateVersion)
	}
	s.ID = r.str()
	s.Scheme = decodeCode(r, schemeCodes, "scheme", false)
	s.Emitter = r.str()
	s.Status = decodeCode(r, statusCodes, "status", true)
	s.Closed = r.bool()
	if n := r.count(1); n > 0 {
		s.Leaves = make([]uint64, n)
		for i := range s.Leaves {
			s.Leaves[i] = r.uvarint()
		}
	}
	s.CommittedAt = r.time()
	s.Settings = r.bytes()
	s.Opening = decodeCode(r, openingCodes, "opening", true)
	r.setup(&s)
	switch s.Scheme {
	case PerRoll:
		if n := r.count(1 + 16 + 32 + 32 + 1 + 32 + 3); n > 0 {
			s.RollRecords = make([]RollRecord, n)
			for i := range s.RollRecords {
				s.RollRecords[i] = r.record()
				if r.err == nil && s.RollRecords[i].Stage != RollRevealed {
					r.fail("roll record %d is not revealed", i)
				}
			}
		}
		if r.bool() {
			p := r.record()
			if r.err == nil && p.Stage == RollRevealed {
				r.fail("the pending roll is revealed")
			}
			s.Pending = &p
		}
	}
	if s.Scheme.PerGame() {
		if n := r.count(4); n > 0 {
			s.Rolls = make([]dice.Roll, n)
			for i := range s.Rolls {
				s.Rolls[i].N = uint32(r.uvarintMax(maxU32, "roll n"))
				s.Rolls[i].Dice = r.dice("roll")
				s.Rolls[i].Kind = decodeCode(r, kindCodes, "roll kind", false)
			}
		}
	}
	if n := r.count(3); n > 0 {
		s.Moves = make([]Move, n)
		for i := range s.Moves {
			s.Moves[i].N = uint32(r.uvarintMax(maxU32, "move n"))
			s.Moves[i].Play = r.str()
			s.Moves[i].Seat = int(r.u8())
			if r.err == nil && s.Moves[i].Seat > 1 {
				r.fail("move seat %d", s.Moves[i].Seat)
			}
		}
	}
	s.Position = r.bytes()
	switch flags := r.u8(); {
	case flags > 3 || flags == 2:
		r.fail("move flags %#x", flags)
	default:
		s.MovesLogged, s.MoveOwed = flags&1 != 0, flags&2 != 0
	}
	r.outcome(&s)
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d trailing bytes", len(r.b))
	}
	if r.err != nil {
		return r.err
	}
	*g = s
	return nil
}

// setup reads what stateWriter.setup writes into s, whose scheme is set.
func (r *stateReader) setup(s *Game) {
	switch s.Scheme {
	case Tavlarena:
		r.fixed(s.Commitment[:])
		r.fixed(s.Seats[0][:])
		r.fixed(s.Seats[1][:])
		s.Contributed = r.seatBits()
		r.fixed(s.Contributions[0][:])
		r.fixed(s.Contributions[1][:])
	case Anchored:
		s.MatchID = r.str()
		s.GameNo = uint32(r.uvarintMax(maxU32, "gameNo"))
		r.fixed(s.Fingerprint[:])
		s.SealedAt = r.time()
		r.fixed(s.Anchor.Chain[:])
		s.Anchor.Round = r.uvarint()
		s.Contributed = r.seatBits()
		s.Tokens[0] = r.str()
		s.Tokens[1] = r.str()
		if r.bool() {
			var bc Beacon
			r.fixed(bc.Chain[:])
			r.fixed(bc.Randomness[:])
			bc.Round = r.uvarint()
			bc.Signature = r.bytes()
			s.Beacon = &bc
		}
	}
}

// outcome reads what stateWriter.outcome writes into s.
func (r *stateReader) outcome(s *Game) {
	if r.bool() {
		var e End
		e.Points = uint32(r.uvarintMax(maxU32, "points"))
		e.Result = decodeCode(r, resultCodes, "result", false)
		switch w := r.u8(); w {
		case 0, 1:
			e.Winner = int(w)
		case 2:
			e.Winner = NoWinner
		default:
			r.fail("winner code %d", w)
		}
		s.End = &e
	}
	if r.bool() {
		var seed [32]byte
		r.fixed(seed[:])
		s.Seed = &seed
	}
	if r.bool() {
		var f Failure
		f.Seq = r.uvarint()
		f.Check = decodeCode(r, checkCodes, "failure check", false)
		f.N = uint32(r.uvarintMax(maxU32, "failure n"))
		r.fixed(f.RollID[:])
		r.fixed(f.Committed[:])
		r.fixed(f.Recomputed[:])
		f.Logged = dice.Dice{int(r.u8()), int(r.u8())}
		f.Rolled = dice.Dice{int(r.u8()), int(r.u8())}
		if r.err == nil && (f.Check == FailRoll && (!f.Logged.Valid() || !f.Rolled.Valid()) || f.Check != FailRoll && (f.Logged != dice.Dice{} || f.Rolled != dice.Dice{})) {
			r.fail("failure dice")
		}
		s.Failure = &f
	}
}
