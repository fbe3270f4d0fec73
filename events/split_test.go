package events_test

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/workload"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// TestSplitWorkload plays the benchmark's workload (every scheme, moves
// checked by the rules engine, so heads hold positions) and checks at
// every event that the state, stored as store format 7 stores it (its head
// when SameHead says it changed, its live part, the history since the last
// event), decodes to exactly the state, and to what store format 6's head
// (the state without its history, version 2) decodes to with the same
// history. It logs the bytes an event writes in each format.
func TestSplitWorkload(t *testing.T) {
	gen, err := workload.New(workload.Config{Seed: 11, Rolls: 8, Moves: true})
	if err != nil {
		t.Fatal(err)
	}
	var evs, heads, oldBytes, newBytes int
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for game := range 120 {
		stream, err := gen.Game()
		if err != nil {
			t.Fatal(err)
		}
		var g *events.Game
		var head []byte
		var chunks [][]byte
		for i, e := range stream {
			ev, err := events.Parse(e.Data)
			if err != nil {
				t.Fatal(err)
			}
			env := events.Env{Emitter: ev.Emitter, Now: now, SkipClockChecks: true, Index: uint64(1000*game + i),
				Beacons: workload.Beacons, Moves: movecheck.Checker{}}
			ng, err := events.Apply(g, ev, env)
			if err != nil {
				t.Fatalf("game %d, event %d (%s): %v", game, i, ev.Type, err)
			}
			var from events.History
			if g != nil {
				from = g.History()
			}
			c, err := ng.AppendHistory(nil, from)
			if err != nil {
				t.Fatal(err)
			}
			chunks = append(chunks, c)
			if g == nil || !events.SameHead(g, ng) {
				if head, err = ng.AppendHead(nil); err != nil {
					t.Fatal(err)
				}
				heads++
				newBytes += len(head)
			} else if h, _ := ng.AppendHead(nil); !bytes.Equal(h, head) {
				t.Fatalf("game %d, event %d (%s): SameHead, but the head changed", game, i, ev.Type)
			}
			live, err := ng.AppendLive(nil)
			if err != nil {
				t.Fatal(err)
			}
			newBytes += len(live)
			old := *ng
			old.Leaves, old.Rolls, old.Moves, old.RollRecords = nil, nil, nil, nil
			oldHead, err := old.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			oldBytes += len(oldHead)
			var a, b events.Game
			if err := a.UnmarshalSplit(oldHead, nil, chunks); err != nil {
				t.Fatalf("game %d, event %d, format 6: %v", game, i, err)
			}
			if err := b.UnmarshalSplit(head, live, chunks); err != nil {
				t.Fatalf("game %d, event %d, format 7: %v", game, i, err)
			}
			if !reflect.DeepEqual(&a, &b) {
				t.Fatalf("game %d, event %d (%s): format 6 decodes\n%+v\nformat 7\n%+v", game, i, ev.Type, &a, &b)
			}
			// Apply keeps a nil slice nil; a decoded state may hold
			// an empty one where the game has none: compare encodings.
			wa, _ := a.MarshalBinary()
			wn, _ := ng.MarshalBinary()
			if !bytes.Equal(wa, wn) {
				t.Fatalf("game %d, event %d (%s): decoded\n%+v\nwant\n%+v", game, i, ev.Type, &a, ng)
			}
			g = ng
			evs++
		}
	}
	if heads >= evs/3 {
		t.Errorf("%d heads written for %d events", heads, evs)
	}
	t.Logf("%d events: a head every %.1f events; format 6 wrote %.1f bytes of head an event, format 7 %.1f (values only)",
		evs, float64(evs)/float64(heads), float64(oldBytes)/float64(evs), float64(newBytes)/float64(evs))
}
