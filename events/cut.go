package events

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/zarlog/zarlog/events/dice"
)

// Cut states: a store that keeps many games in play in memory (the ledger's
// game cache) keeps each one's history only in part, since the checks of a
// game's next event read little of it: the number of its events, rolls,
// moves and revealed rolls, its last roll and move, and the roll's
// Sequence (per-game schemes), and at a reveal the dice of every roll,
// which it keeps a byte each. What they read otherwise (an older roll at a
// move, a roll id that may repeat one at a roll-commit) the state does not
// hold, and Apply says so (ErrCut) rather
// than decide: the store reads the full state back and applies the event
// to it. So a store of cut states accepts, refuses and stores exactly what
// a store of full states does.

// ErrCut is the error Apply, Next and NextInto return (wrapped) when the
// event's checks need a part of the history that a cut state (Game.Cut)
// leaves out. The event is neither accepted nor refused: apply it to the
// full state (Game.Uncut).
var ErrCut = errors.New("the game's state leaves out the part of its history the event needs")

// How much of each part of its history Cut keeps: the last leaves (a
// resend of a recent event finds its leaf), the last rolls (a move plays
// the last roll, or the one before), the last move (the next must follow
// it) and the last revealed rolls (per-roll-v1).
const (
	cutKeepLeaves  = 4
	cutKeepRolls   = 2
	cutKeepMoves   = 1
	cutKeepRecords = 2
)

// A cutPart is what a cut state keeps of the history it leaves out. It is
// shared by the states made from one cut state and never changes.
type cutPart struct {
	n     History       // how many leaves, rolls, moves and records the slices leave out at their front
	first uint64        // the log index of the game's first leaf, if n.Leaves > 0 (FirstLeaf)
	seq   dice.Sequence // per-game schemes: dice.Resume of the rolls left out
	ids   []uint64      // per-roll-v1: idKey of each record left out
	// dice: per-game schemes, the dice of each roll left out (roll i is
	// the game's roll i: Cut leaves out only rolls numbered so), a byte
	// each (packDice), for the reveal's check of every roll (Recheck).
	dice []byte
}

// sizeCutPart is a cutPart's memory besides its ids and dice
// (TestSizeConstants).
const sizeCutPart = 136

// packDice packs dice of faces 0 to 15 into a byte; ok is false for
// others (never a checked roll's).
func packDice(d dice.Dice) (b byte, ok bool) {
	if d[0] < 0 || d[0] > 15 || d[1] < 0 || d[1] > 15 {
		return 0, false
	}
	return byte(d[0]<<4 | d[1]), true
}

func unpackDice(b byte) dice.Dice { return dice.Dice{int(b >> 4), int(b & 15)} }

// idKey is what a cut state keeps of a roll id it leaves out: 8 bytes
// from all 16 (ids that share their first or last half, such as
// counters or time-ordered UUIDs, still differ). It is a fixed function
// that anyone can invert: a backend can choose a roll id whose key is one
// of its match's left-out roll ids. That costs a read, never an outcome:
// a key only says that a roll-commit's id may repeat a left-out one (equal
// ids have equal keys, so a repeat is never missed), and rollCommit then
// decides nothing on the cut state (ErrCut), so the full state decides
// (docs/SECURITY.md §1; TestCutKeyCollision).
func idKey(id dice.UUID) uint64 {
	return binary.BigEndian.Uint64(id[:8])*0x9e3779b97f4a7c15 ^ binary.BigEndian.Uint64(id[8:])
}

// IsCut reports whether g is a cut state (Cut), whose history slices leave
// out their front.
func (g *Game) IsCut() bool { return g.cut != nil }

// Held returns what g's history slices hold: History for a full state,
// less what a cut state leaves out.
func (g *Game) Held() History {
	return History{len(g.Leaves), len(g.Rolls), len(g.Moves), len(g.RollRecords)}
}

// Leaf returns the log index of g's event seq, and false if g does not
// have it or is a cut state that leaves it out.
func (g *Game) Leaf(seq uint64) (uint64, bool) {
	var base uint64
	if g.cut != nil {
		base = uint64(g.cut.n.Leaves)
	}
	if seq < base || seq-base >= uint64(len(g.Leaves)) {
		return 0, false
	}
	return g.Leaves[seq-base], true
}

// FirstLeaf returns the log index of g's first event (its commit), cut
// state or not, and false if g has no event. A store can key a game's
// records by it: it is unique, it grows with the log, and a replay of the
// log gives the same.
func (g *Game) FirstLeaf() (uint64, bool) {
	if g.cut != nil && g.cut.n.Leaves > 0 {
		return g.cut.first, true
	}
	if len(g.Leaves) == 0 {
		return 0, false
	}
	return g.Leaves[0], true
}

// base returns how many of each part g's slices leave out (zero if g is
// full).
func (g *Game) base() History {
	if g.cut == nil {
		return History{}
	}
	return g.cut.n
}

// nRolls, nRecords and nMoves count the game's rolls, revealed roll
// records and moves, those a cut state leaves out included.
func (g *Game) nRolls() int   { return g.base().Rolls + len(g.Rolls) }
func (g *Game) nRecords() int { return g.base().Records + len(g.RollRecords) }
func (g *Game) nMoves() int   { return g.base().Moves + len(g.Moves) }

// Cut returns g's state with only the last few of its leaves, rolls, moves
// and revealed roll records held (a cut state: IsCut), in slices of its
// own; g itself does not change. A cut state stands for the full one in
// Apply, Next and NextInto, which return an error wrapping ErrCut for an
// event whose checks need what it leaves out, and in History,
// AppendHistory, AppendHead, AppendLive, SameHead, SizeAfter, MemSize,
// Recheck and Tally.Count. Size and MarshalBinary refuse one, and the rest
// of the package wants full states: a store must never hand a cut state
// out. Cut of a cut state cuts it further.
func (g *Game) Cut() *Game {
	b := g.base()
	kl, kr, km, kc := min(cutKeepLeaves, len(g.Leaves)), min(cutKeepRolls, len(g.Rolls)), min(cutKeepMoves, len(g.Moves)), min(cutKeepRecords, len(g.RollRecords))
	var packed []byte
	if cut := len(g.Rolls) - kr; cut > 0 {
		packed = make([]byte, 0, b.Rolls+cut)
		if g.cut != nil {
			packed = append(packed, g.cut.dice...)
		}
		for i, r := range g.Rolls[:cut] {
			p, ok := packDice(r.Dice)
			if !ok || r.N != uint32(b.Rolls+i) {
				// Not a roll a Sequence accepted: keep the rolls whole.
				kr, packed = len(g.Rolls), g.cut.diceOrNil()
				break
			}
			packed = append(packed, p)
		}
	} else if g.cut != nil {
		packed = g.cut.dice
	}
	c := &cutPart{n: History{
		Leaves:  b.Leaves + len(g.Leaves) - kl,
		Rolls:   b.Rolls + len(g.Rolls) - kr,
		Moves:   b.Moves + len(g.Moves) - km,
		Records: b.Records + len(g.RollRecords) - kc,
	}}
	if c.n.Leaves > 0 {
		c.first, _ = g.FirstLeaf()
	}
	if g.Scheme.PerGame() {
		c.seq = g.sequenceOf(g.Rolls[:len(g.Rolls)-kr])
	}
	c.dice = packed
	if cut := len(g.RollRecords) - kc; b.Records+cut > 0 {
		c.ids = make([]uint64, 0, b.Records+cut)
		if g.cut != nil {
			c.ids = append(c.ids, g.cut.ids...)
		}
		for i := range g.RollRecords[:cut] {
			c.ids = append(c.ids, idKey(g.RollRecords[i].RollID))
		}
	}
	ng := new(Game)
	*ng = *g
	ng.cut = c
	ng.Leaves = slices.Clone(g.Leaves[len(g.Leaves)-kl:])
	ng.Rolls = slices.Clone(g.Rolls[len(g.Rolls)-kr:])
	ng.Moves = slices.Clone(g.Moves[len(g.Moves)-km:])
	ng.RollRecords = slices.Clone(g.RollRecords[len(g.RollRecords)-kc:])
	return ng
}

// Uncut returns the full state that the cut state g stands for, with the
// history g leaves out taken from full: a full state of the same game (as
// a store read it back) that holds at least that much history. Where
// full's history and g's slices overlap they must agree, and what g keeps
// of the part it leaves out (its roll Sequence, its roll ids) must be what
// full's gives, or it returns an error wrapping ErrBadState. The new
// state's slices are its own. A full g is returned as it is.
func (g *Game) Uncut(full *Game) (*Game, error) {
	if g.cut == nil {
		return g, nil
	}
	b := g.cut.n
	if full == nil || full.cut != nil || full.ID != g.ID || full.Scheme != g.Scheme {
		return nil, fmt.Errorf("%w: game %q's cut state needs a full state of the same game", ErrBadState, g.ID)
	}
	fh := full.History()
	if fh.Leaves < b.Leaves || fh.Rolls < b.Rolls || fh.Moves < b.Moves || fh.Records < b.Records {
		return nil, fmt.Errorf("%w: game %q's cut state leaves out %+v of its history, the full state holds %+v", ErrBadState, g.ID, b, fh)
	}
	if !overlaps(full.Leaves, b.Leaves, g.Leaves) || !overlaps(full.Rolls, b.Rolls, g.Rolls) ||
		!overlaps(full.Moves, b.Moves, g.Moves) || !overlaps(full.RollRecords, b.Records, g.RollRecords) {
		return nil, fmt.Errorf("%w: game %q's cut state and its full state hold different histories", ErrBadState, g.ID)
	}
	if b.Leaves > 0 && full.Leaves[0] != g.cut.first {
		return nil, fmt.Errorf("%w: game %q's cut state kept another first leaf than its full state's", ErrBadState, g.ID)
	}
	if g.Scheme.PerGame() && full.sequenceOf(full.Rolls[:b.Rolls]) != g.cut.seq {
		return nil, fmt.Errorf("%w: game %q's cut state kept another roll sequence than its rolls give", ErrBadState, g.ID)
	}
	if len(g.cut.dice) != b.Rolls {
		return nil, fmt.Errorf("%w: game %q's cut state keeps the dice of %d of the %d rolls it leaves out", ErrBadState, g.ID, len(g.cut.dice), b.Rolls)
	}
	for i, p := range g.cut.dice {
		if r := full.Rolls[i]; r.N != uint32(i) || unpackDice(p) != r.Dice {
			return nil, fmt.Errorf("%w: game %q's cut state kept other dice for roll %d", ErrBadState, g.ID, i)
		}
	}
	if len(g.cut.ids) != 0 || b.Records != 0 {
		if len(g.cut.ids) != b.Records {
			return nil, fmt.Errorf("%w: game %q's cut state keeps %d roll ids of %d records", ErrBadState, g.ID, len(g.cut.ids), b.Records)
		}
		for i, id := range g.cut.ids {
			if idKey(full.RollRecords[i].RollID) != id {
				return nil, fmt.Errorf("%w: game %q's cut state kept another roll id for roll %d", ErrBadState, g.ID, i)
			}
		}
	}
	ng := new(Game)
	*ng = *g
	ng.cut = nil
	ng.Leaves = slices.Concat(full.Leaves[:b.Leaves], g.Leaves)
	ng.Rolls = slices.Concat(full.Rolls[:b.Rolls], g.Rolls)
	ng.Moves = slices.Concat(full.Moves[:b.Moves], g.Moves)
	ng.RollRecords = slices.Concat(full.RollRecords[:b.Records], g.RollRecords)
	return ng, nil
}

// overlaps reports whether full, from index base on, agrees with tail where
// both hold elements.
func overlaps[E comparable](full []E, base int, tail []E) bool {
	n := min(len(full)-base, len(tail))
	return slices.Equal(full[base:base+n], tail[:n])
}

// MemSize returns the memory g holds, cut or not, for a store that bounds
// the states it keeps in bytes: Size's count of what g holds (for a full
// state, Size), its pointer to a cut part and the cut part (its dropped
// roll ids 8 bytes each). Its decoded position is apart (DecodedSize).
func (g *Game) MemSize() int {
	if g == nil {
		return 0
	}
	n := g.fixedSize() + 8 + sizeLeaf*len(g.Leaves) + sizeRoll*len(g.Rolls) + sizeRollRecord*len(g.RollRecords)
	for _, m := range g.Moves {
		n += sizeMove + len(m.Play)
	}
	if g.cut != nil {
		n += sizeCutPart + 8*len(g.cut.ids) + len(g.cut.dice)
	}
	return n
}

// sequenceOf returns the dice.Sequence after the game's rolls up to and
// including rolls, a prefix of g.Rolls (those a cut state leaves out
// before them).
func (g *Game) sequenceOf(rolls []dice.Roll) dice.Sequence {
	if g.cut != nil && g.cut.n.Rolls > 0 {
		return g.cut.seq.Then(rolls)
	}
	return dice.Resume(g.Opening, rolls)
}

// diceOrNil returns c's dice, or nil for a nil c.
func (c *cutPart) diceOrNil() []byte {
	if c == nil {
		return nil
	}
	return c.dice
}
