package events

// This file is what the projections of the log count. The ledger's
// statistics (package ledger) and a watcher's projection (follow)
// each keep a Tally of the events they apply, so that both count the same
// way; /stats (package publisher) draws its RollCounts.

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zarlog/zarlog/events/dice"
)

// A RollCounts counts rolls by their ordered pair of dice: Pairs[a-1][b-1]
// is the number of rolls whose first die was a and second die b.
type RollCounts struct {
	Pairs [6][6]uint64
}

// Add counts one roll. Dice that are not two faces from 1 to 6 are not
// counted.
func (c *RollCounts) Add(d dice.Dice) {
	if d.Valid() {
		c.Pairs[d[0]-1][d[1]-1]++
	}
}

// Total returns the number of rolls.
func (c RollCounts) Total() uint64 {
	var n uint64
	for _, row := range c.Pairs {
		for _, x := range row {
			n += x
		}
	}
	return n
}

// Faces returns how often each face (1 to 6, at index face−1) came up,
// counting both dice of every roll.
func (c RollCounts) Faces() [6]uint64 {
	var f [6]uint64
	for a, row := range c.Pairs {
		for b, x := range row {
			f[a] += x
			f[b] += x
		}
	}
	return f
}

// Doubles returns the number of rolls whose two dice were equal.
func (c RollCounts) Doubles() uint64 {
	var n uint64
	for i := range 6 {
		n += c.Pairs[i][i]
	}
	return n
}

// Plus returns the rolls of c and d together.
func (c RollCounts) Plus(d RollCounts) RollCounts {
	for a := range 6 {
		for b := range 6 {
			c.Pairs[a][b] += d.Pairs[a][b]
		}
	}
	return c
}

// Fields calls visit with a pointer to each of the 36 counts in their
// canonical order, Pairs[0][0], Pairs[0][1], …, Pairs[5][5]: the order in
// which a record of counters (MarshalCounters) stores them.
func (c *RollCounts) Fields(visit func(*uint64)) {
	for a := range c.Pairs {
		for b := range c.Pairs[a] {
			visit(&c.Pairs[a][b])
		}
	}
}

// A FinishedGame is an entry of a finished-games index: a game whose final
// event (the reveal; per-roll-v1: the end) is leaf Index of the log.
type FinishedGame struct {
	Index  uint64
	Game   string
	Status Status // verified or failed
}

// A Tally counts the events that a projection of the log applies to their
// games.
type Tally struct {
	Events   uint64 // events applied
	Games    uint64 // games (per-roll-v1: matches): commits
	Finished uint64 // games whose final event is applied
	Failed   uint64 // finished games whose status is failed
	// Opening counts the opening rolls of the per-game schemes (kind
	// "opening", ties included: die 1 is seat 0's, die 2 seat 1's); Play
	// every other roll: re-rolls, turns, and the revealed rolls of
	// per-roll-v1 matches. A roll counts when it is logged, whatever a later
	// reveal shows.
	Opening, Play RollCounts
}

// Count counts ev, an event its game's state machine accepted; before and
// after are the game's states around it (before is nil for a commit). Each
// roll adds its dice to Opening (kind opening) or Play, and each
// per-roll-v1 roll-reveal adds its dice to Play.
//
// An event finishes its game when after is closed and before was not. Then
// Count returns the game's entry of the finished-games index (Index is the
// leaf of ev, the last of after.Leaves) and true.
func (t *Tally) Count(ev *Event, before, after *Game) (FinishedGame, bool) {
	t.Events++
	switch b := ev.Body.(type) {
	case Roll:
		if b.Kind == dice.KindOpening {
			t.Opening.Add(b.Dice)
		} else {
			t.Play.Add(b.Dice)
		}
	case RollReveal:
		t.Play.Add(b.Dice)
	}
	if before == nil {
		t.Games++
	}
	if !after.Closed || (before != nil && before.Closed) {
		return FinishedGame{}, false
	}
	t.Finished++
	if after.Status == StatusFailed {
		t.Failed++
	}
	return FinishedGame{Index: after.Leaves[len(after.Leaves)-1], Game: after.ID, Status: after.Status}, true
}

// Verified returns the number of finished games whose status is verified.
func (t Tally) Verified() uint64 { return t.Finished - t.Failed }

// ErrBadCounters marks a record of counters that UnmarshalCounters refuses.
var ErrBadCounters = errors.New("bad record of counters")

// MarshalCounters encodes a record of counters: the byte version, then
// each counter that fields visits, in that order, as a uvarint. The ledger
// and the watchers store their statistics so.
func MarshalCounters(version byte, fields func(visit func(*uint64))) []byte {
	b := []byte{version}
	fields(func(v *uint64) { b = binary.AppendUvarint(b, *v) })
	return b
}

// UnmarshalCounters decodes a record that MarshalCounters wrote with the
// same version and fields into the counters fields visits, and accepts
// nothing else: another version, a non-minimal uvarint, a missing counter
// or trailing bytes are errors wrapping ErrBadCounters. It writes each
// counter as it reads it, so callers decode into a temporary.
func UnmarshalCounters(b []byte, version byte, fields func(visit func(*uint64))) error {
	if len(b) == 0 || b[0] != version {
		return fmt.Errorf("counters of %d bytes have no version %d header: %w", len(b), version, ErrBadCounters)
	}
	rest := b[1:]
	var err error
	fields(func(v *uint64) {
		if err != nil {
			return
		}
		x, n := binary.Uvarint(rest)
		var min [binary.MaxVarintLen64]byte
		if n <= 0 || n != len(binary.AppendUvarint(min[:0], x)) {
			err = fmt.Errorf("bad uvarint at byte %d: %w", len(b)-len(rest), ErrBadCounters)
			return
		}
		*v, rest = x, rest[n:]
	})
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%d trailing bytes: %w", len(rest), ErrBadCounters)
	}
	return nil
}
