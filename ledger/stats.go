package ledger

import (
	"fmt"

	"github.com/zarlog/zarlog/events"
)

// Stats is the statistics projection: counts over every event in the log,
// updated in the same batch as the events and recomputed by Rebuild. The
// events.Tally is the count the watchers' projections keep too (every leaf
// of the ledger is an event, so Events is also the log's size); Types is the
// ledger's own.
type Stats struct {
	events.Tally
	Types [numTypes]uint64 // events by type, in the order of eventTypes
}

// eventTypes fixes the order of Stats.Types.
var eventTypes = [...]events.Type{
	events.TypeCommit, events.TypeContribution, events.TypeBeacon, events.TypeRoll, events.TypeMove,
	events.TypeEnd, events.TypeReveal, events.TypeRollCommit, events.TypeRollSecond, events.TypeRollReveal,
}

const numTypes = len(eventTypes)

// Type returns the number of logged events of type t.
func (s *Stats) Type(t events.Type) uint64 {
	for i, x := range eventTypes {
		if x == t {
			return s.Types[i]
		}
	}
	return 0
}

// observe counts an appended event; before and after are its game's states
// around it (before is nil for a commit). It returns the game's entry of the
// finished-games index if the event finished it (events.Tally.Count).
func (s *Stats) observe(ev *events.Event, before, after *events.Game) (events.FinishedGame, bool) {
	for i, t := range eventTypes {
		if t == ev.Type {
			s.Types[i]++
		}
	}
	return s.Count(ev, before, after)
}

// statsVersion is the first byte of a marshaled Stats.
const statsVersion = 1

// The stored record predates events.Tally and keeps its layout: after the
// events, the types and the games, the verified games (not the finished)
// and the failed, then for Opening and for Play the number of rolls, the
// doubles and the six faces ahead of the 36 pairs. Those totals are derived
// from the tally: MarshalBinary writes them from it, and UnmarshalBinary
// reads them into a statsTotals and checks them against it, so that the
// record stays canonical.
type statsTotals struct {
	verified uint64
	rolls    [2]struct {
		n, doubles uint64
		faces      [6]uint64
	}
}

func (s *Stats) totals() statsTotals {
	var t statsTotals
	t.verified = s.Verified()
	for i, c := range []*events.RollCounts{&s.Opening, &s.Play} {
		t.rolls[i].n, t.rolls[i].doubles, t.rolls[i].faces = c.Total(), c.Doubles(), c.Faces()
	}
	return t
}

// fields visits the record's counters in their order, the totals in t.
func (s *Stats) fields(t *statsTotals, visit func(*uint64)) {
	visit(&s.Events)
	for i := range s.Types {
		visit(&s.Types[i])
	}
	visit(&s.Games)
	visit(&t.verified)
	visit(&s.Failed)
	for i, c := range []*events.RollCounts{&s.Opening, &s.Play} {
		r := &t.rolls[i]
		visit(&r.n)
		visit(&r.doubles)
		for j := range r.faces {
			visit(&r.faces[j])
		}
		c.Fields(visit)
	}
}

// MarshalBinary encodes s: the byte 1 (the version), then every counter as a
// uvarint in a fixed order (events.MarshalCounters).
func (s *Stats) MarshalBinary() ([]byte, error) {
	t := s.totals()
	return events.MarshalCounters(statsVersion, func(visit func(*uint64)) { s.fields(&t, visit) }), nil
}

// UnmarshalBinary decodes what MarshalBinary returns, and only that:
// non-minimal varints, trailing bytes and totals that do not match the
// counts are errors wrapping ErrCorrupt.
func (s *Stats) UnmarshalBinary(b []byte) error {
	var u Stats
	var t statsTotals
	if err := events.UnmarshalCounters(b, statsVersion, func(visit func(*uint64)) { u.fields(&t, visit) }); err != nil {
		return fmt.Errorf("stats: %w: %w", ErrCorrupt, err)
	}
	u.Finished = t.verified + u.Failed
	if u.Finished < u.Failed || u.totals() != t {
		return fmt.Errorf("stats: the totals do not match the counts: %w", ErrCorrupt)
	}
	*s = u
	return nil
}
