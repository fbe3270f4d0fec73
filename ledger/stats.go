package ledger

import (
	"encoding/binary"
	"fmt"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
)

// Stats is the statistics projection: counts over every event in the log,
// updated in the same batch as the events and recomputed by Rebuild. It
// holds no derived totals: Rolls returns them.
type Stats struct {
	Events uint64            // leaves in the log
	Types  [numTypes]uint64  // events by type, in the order of eventTypes
	Games  uint64            // commits
	Closed [numClosed]uint64 // games whose last event is logged, by final status: verified, failed
	// Opening counts the opening rolls of the per-game schemes (kind
	// "opening"); Play every other logged roll: re-rolls, turns and the
	// revealed rolls of per-roll-v1 matches. A roll counts when it is logged,
	// whatever a later reveal shows.
	Opening, Play RollStats
}

// RollStats counts dice.
type RollStats struct {
	Rolls   uint64
	Doubles uint64
	Faces   [6]uint64    // Faces[f-1]: dice showing f (two per roll)
	Matrix  [6][6]uint64 // Matrix[a-1][b-1]: rolls with first die a and second die b
}

// eventTypes fixes the order of Stats.Types.
var eventTypes = [...]events.Type{
	events.TypeCommit, events.TypeContribution, events.TypeBeacon, events.TypeRoll, events.TypeMove,
	events.TypeEnd, events.TypeReveal, events.TypeRollCommit, events.TypeRollSecond, events.TypeRollReveal,
}

const (
	numTypes  = len(eventTypes)
	numClosed = 2
)

// Type returns the number of logged events of type t.
func (s *Stats) Type(t events.Type) uint64 {
	for i, x := range eventTypes {
		if x == t {
			return s.Types[i]
		}
	}
	return 0
}

// Verified and Failed return the number of closed games with that status.
func (s *Stats) Verified() uint64 { return s.Closed[0] }

// Failed returns the number of closed games whose status is failed.
func (s *Stats) Failed() uint64 { return s.Closed[1] }

// Rolls returns the opening and play rolls together.
func (s *Stats) Rolls() RollStats {
	r := s.Opening
	r.add(&s.Play)
	return r
}

func (r *RollStats) add(o *RollStats) {
	r.Rolls += o.Rolls
	r.Doubles += o.Doubles
	for i := range r.Faces {
		r.Faces[i] += o.Faces[i]
	}
	for i := range r.Matrix {
		for j := range r.Matrix[i] {
			r.Matrix[i][j] += o.Matrix[i][j]
		}
	}
}

func (r *RollStats) count(d dice.Dice) {
	r.Rolls++
	if d.IsDouble() {
		r.Doubles++
	}
	r.Faces[d[0]-1]++
	r.Faces[d[1]-1]++
	r.Matrix[d[0]-1][d[1]-1]++
}

// observe counts an appended event; before and after are its game's states
// around it (before is nil for a commit).
func (s *Stats) observe(ev *events.Event, before, after *events.Game) {
	s.Events++
	for i, t := range eventTypes {
		if t == ev.Type {
			s.Types[i]++
		}
	}
	switch b := ev.Body.(type) {
	case events.Roll:
		if b.Kind == dice.KindOpening {
			s.Opening.count(b.Dice)
		} else {
			s.Play.count(b.Dice)
		}
	case events.RollReveal:
		s.Play.count(b.Dice)
	}
	if before == nil {
		s.Games++
	}
	if after.Closed && (before == nil || !before.Closed) {
		if after.Status == events.StatusFailed {
			s.Closed[1]++
		} else {
			s.Closed[0]++
		}
	}
}

// statsVersion is the first byte of a marshaled Stats.
const statsVersion = 1

// statsFields is the number of counters in a marshaled Stats.
const statsFields = 1 + numTypes + 1 + numClosed + 2*(2+6+36)

func (s *Stats) fields(f func(*uint64)) {
	f(&s.Events)
	for i := range s.Types {
		f(&s.Types[i])
	}
	f(&s.Games)
	for i := range s.Closed {
		f(&s.Closed[i])
	}
	for _, r := range []*RollStats{&s.Opening, &s.Play} {
		f(&r.Rolls)
		f(&r.Doubles)
		for i := range r.Faces {
			f(&r.Faces[i])
		}
		for i := range r.Matrix {
			for j := range r.Matrix[i] {
				f(&r.Matrix[i][j])
			}
		}
	}
}

// MarshalBinary encodes s: the byte 1 (the version), then every counter as a
// uvarint in a fixed order.
func (s *Stats) MarshalBinary() ([]byte, error) {
	b := make([]byte, 1, 1+statsFields*2)
	b[0] = statsVersion
	s.fields(func(v *uint64) { b = binary.AppendUvarint(b, *v) })
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary returns, and only that:
// non-minimal varints and trailing bytes are errors wrapping ErrCorrupt.
func (s *Stats) UnmarshalBinary(b []byte) error {
	if len(b) == 0 || b[0] != statsVersion {
		return fmt.Errorf("stats of %d bytes have no version %d header: %w", len(b), statsVersion, ErrCorrupt)
	}
	var t Stats
	rest := b[1:]
	var err error
	t.fields(func(v *uint64) {
		if err != nil {
			return
		}
		*v, rest, err = uvarint(rest)
	})
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	if len(rest) != 0 {
		return fmt.Errorf("stats: %d trailing bytes: %w", len(rest), ErrCorrupt)
	}
	*s = t
	return nil
}

// uvarint reads a minimal uvarint.
func uvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, fmt.Errorf("bad uvarint: %w", ErrCorrupt)
	}
	if n != uvarintLen(v) {
		return 0, nil, fmt.Errorf("non-minimal uvarint: %w", ErrCorrupt)
	}
	return v, b[n:], nil
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}
