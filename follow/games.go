package follow

// This file is the projection of the zarlog events among the verified
// leaves: each leaf is parsed and applied to its game with events.Apply as
// an auditor replays a log (no clock checks, beacons against the pinned
// drand chains, moves checked structurally), and the games, the finished
// games and the roll statistics are kept in the store.
//
// What the projection keeps is the ledger's (ledger/sequencer.go): the
// events.Game of each game, and events.Tally.Count decides what is counted
// and which event finishes a game, for both. The replay itself stays apart
// from the ledger's, because the two do different things with a leaf: the
// ledger judges an input before it is a leaf (its append time, the
// emitter's key, the clock checks), rejects what the state machine refuses
// and signs what it accepts; the follower replays leaves a log has already
// signed, without their append times (SkipClockChecks), and records a leaf
// it cannot use instead of refusing it, since the log broke its rules by
// holding it. Their records differ for the same reason: each store keeps the
// bytes it was written with (the "f" record's status byte is 1 verified,
// 2 failed here; 2 and 3 in the ledger, which counts open and ended too).

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/drand"
)

// MaxUnusable is how many unusable leaves (not events, or refused by the
// state machine) the projection records one by one; beyond it they are only
// counted.
const MaxUnusable = 1000

// projectChunk is how many leaves one projection batch applies.
const projectChunk = 8192

// Stats are the projection's counters over the projected leaves: the
// events.Tally of the events applied to their games, counted as the
// ledger's statistics count them, and the leaves it could not use.
type Stats struct {
	Leaves    uint64 // leaves projected
	NonEvents uint64 // leaves that do not parse as zarlog events
	Refused   uint64 // events the state machine refuses (a log that accepted them broke its rules)
	events.Tally
}

// statsVersion is the first byte of marshaled Stats.
const statsVersion = 1

// fields visits the counters in the record's order.
func (s *Stats) fields(visit func(*uint64)) {
	for _, p := range []*uint64{&s.Leaves, &s.Events, &s.NonEvents, &s.Refused, &s.Games, &s.Finished, &s.Failed} {
		visit(p)
	}
	s.Opening.Fields(visit)
	s.Play.Fields(visit)
}

// MarshalBinary encodes s: the byte 1, then every counter as a uvarint in a
// fixed order (events.MarshalCounters).
func (s *Stats) MarshalBinary() ([]byte, error) {
	return events.MarshalCounters(statsVersion, s.fields), nil
}

// UnmarshalBinary decodes what MarshalBinary returns and only that: a
// non-minimal varint, a missing counter or trailing bytes are errors
// wrapping ErrCorrupt, and s is then unchanged.
func (s *Stats) UnmarshalBinary(b []byte) error {
	var t Stats
	if err := events.UnmarshalCounters(b, statsVersion, t.fields); err != nil {
		return fmt.Errorf("stats: %w: %w", ErrCorrupt, err)
	}
	*s = t
	return nil
}

// An UnusableKind says why the projection could not use a leaf.
type UnusableKind byte

// Kinds of unusable leaves.
const (
	NotAnEvent UnusableKind = 'n' // the leaf does not parse as a zarlog event
	Refused    UnusableKind = 'r' // the state machine refuses the event
)

// An Unusable is a leaf the projection could not apply.
type Unusable struct {
	Index  uint64
	Kind   UnusableKind
	Reason string
}

var statusCodes = []events.Status{events.StatusVerified, events.StatusFailed}

func marshalFinished(st events.Status, game string) []byte {
	c := byte(0)
	for i, s := range statusCodes {
		if s == st {
			c = byte(i + 1)
		}
	}
	return append([]byte{c}, game...)
}

// parseFinished decodes an "f" record.
func parseFinished(key, val []byte) (events.FinishedGame, error) {
	if len(key) != 9 || len(val) < 2 || val[0] == 0 || int(val[0]) > len(statusCodes) || !events.ValidGameID(string(val[1:])) {
		return events.FinishedGame{}, fmt.Errorf("finished-game record of %d bytes: %w", len(val), ErrCorrupt)
	}
	return events.FinishedGame{Index: binary.BigEndian.Uint64(key[1:]), Game: string(val[1:]), Status: statusCodes[val[0]-1]}, nil
}

// parseUnusable decodes an "x" record.
func parseUnusable(key, val []byte) (Unusable, error) {
	if len(key) != 9 || len(val) < 1 || (UnusableKind(val[0]) != NotAnEvent && UnusableKind(val[0]) != Refused) {
		return Unusable{}, fmt.Errorf("unusable-leaf record of %d bytes: %w", len(val), ErrCorrupt)
	}
	return Unusable{Index: binary.BigEndian.Uint64(key[1:]), Kind: UnusableKind(val[0]), Reason: string(val[1:])}, nil
}

func gameKey(id string) []byte { return append([]byte{keyGame}, id...) }

// Game returns the state of a game after its projected events, or an error
// wrapping ErrNotFound if no projected leaf is an event of it.
func (s *Store) Game(ctx context.Context, id string) (*events.Game, error) {
	b, err := s.get(gameKey(id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("game %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("follow: reading game %q: %w", id, err)
	}
	g := new(events.Game)
	if err := g.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("follow: game %q: %w: %w", id, ErrCorrupt, err)
	}
	return g, nil
}

// Finished returns up to limit finished games whose final event's leaf index
// is at least from, in log order.
func (s *Store) Finished(ctx context.Context, from uint64, limit int) ([]events.FinishedGame, error) {
	var out []events.FinishedGame
	err := s.scan(ctx, keyFinished, from, limit, func(k, v []byte) error {
		f, err := parseFinished(k, v)
		out = append(out, f)
		return err
	})
	return out, err
}

// Unusable returns up to limit recorded unusable leaves from index from, in
// log order (only the first MaxUnusable are recorded; Stats counts all).
func (s *Store) Unusable(ctx context.Context, from uint64, limit int) ([]Unusable, error) {
	var out []Unusable
	err := s.scan(ctx, keyUnusable, from, limit, func(k, v []byte) error {
		u, err := parseUnusable(k, v)
		out = append(out, u)
		return err
	})
	return out, err
}

func (s *Store) scan(ctx context.Context, prefix byte, from uint64, limit int, f func(k, v []byte) error) error {
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: u64Key(prefix, from), UpperBound: []byte{prefix + 1}})
	if err != nil {
		return err
	}
	defer it.Close()
	for ok, n := it.First(), 0; ok && n < limit; ok, n = it.Next(), n+1 {
		if err := f(it.Key(), it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

// project applies the accepted leaves not projected yet, in durable batches
// of projectChunk leaves, each with the cursor.
func (s *Store) project(ctx context.Context) error {
	beacons := events.BeaconsOf(drand.ChainByHash)
	for {
		v := s.view()
		if v.projected >= v.cp.Size {
			return nil
		}
		end := min(v.cp.Size, v.projected+projectChunk)
		leaves, err := s.Leaves(ctx, v.projected, end)
		if err != nil {
			return fmt.Errorf("follow: projecting leaves [%d, %d): %w", v.projected, end, err)
		}
		b := s.db.NewBatch()
		games := map[string]*events.Game{}
		stats := v.stats
		unusable := func(i uint64, k UnusableKind, reason string) error {
			n := stats.NonEvents + stats.Refused
			if k == NotAnEvent {
				stats.NonEvents++
			} else {
				stats.Refused++
			}
			if n >= MaxUnusable {
				return nil
			}
			if len(reason) > 1024 {
				reason = reason[:1024]
			}
			return b.Set(u64Key(keyUnusable, i), append([]byte{byte(k)}, reason...), nil)
		}
		for j, leaf := range leaves {
			i := v.projected + uint64(j)
			ev, err := events.Parse(leaf)
			if err != nil {
				if err := unusable(i, NotAnEvent, err.Error()); err != nil {
					b.Close()
					return err
				}
				continue
			}
			g, ok := games[ev.Game]
			if !ok {
				g, err = s.Game(ctx, ev.Game)
				if errors.Is(err, ErrNotFound) {
					g, err = nil, nil
				}
				if err != nil {
					b.Close()
					return err
				}
			}
			ng, err := events.Apply(g, ev, events.Env{Emitter: ev.Emitter, Index: i, SkipClockChecks: true, Beacons: beacons})
			if err != nil {
				if err := unusable(i, Refused, fmt.Sprintf("game %q seq %d (%s): %s", ev.Game, ev.Seq, ev.Type, err)); err != nil {
					b.Close()
					return err
				}
				continue
			}
			games[ev.Game] = ng
			if f, ok := stats.Count(ev, g, ng); ok {
				if err := b.Set(u64Key(keyFinished, f.Index), marshalFinished(f.Status, f.Game), nil); err != nil {
					b.Close()
					return err
				}
			}
		}
		stats.Leaves = end
		for id, g := range games {
			gb, err := g.MarshalBinary()
			if err == nil {
				err = b.Set(gameKey(id), gb, nil)
			}
			if err != nil {
				b.Close()
				return fmt.Errorf("follow: storing game %q: %w", id, err)
			}
		}
		sb, _ := stats.MarshalBinary()
		if err := b.Set(keyStats, sb, nil); err != nil {
			b.Close()
			return err
		}
		if err := b.Set(keyProjected, binary.BigEndian.AppendUint64(nil, end), nil); err != nil {
			b.Close()
			return err
		}
		err = b.Commit(pebble.Sync)
		b.Close()
		if err != nil {
			return fmt.Errorf("follow: storing the projection of leaves [%d, %d): %w", v.projected, end, err)
		}
		s.update(func(v *view) { v.projected, v.stats = end, stats })
	}
}
