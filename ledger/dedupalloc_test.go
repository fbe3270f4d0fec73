package ledger

import (
	"testing"

	"github.com/zarlog/zarlog/events"
)

// TestDedupRecentAllocs looks an id up among the prepared groups' ids
// (sequencer.recent) the way every event whose id is not canonical is
// looked up: it is found, with its record, and the lookup allocates
// nothing (the key is built in the sequencer's scratch, not concatenated:
// a concatenation longer than 32 bytes is allocated, as ids usually are).
func TestDedupRecentAllocs(t *testing.T) {
	s := &sequencer{l: &Ledger{}, recent: map[string]taggedID{
		scopedID("e1", "order-7-0123456789abcdef0123456789abcdef"): {rec: dedupRecord{Index: 7}, group: 1},
	}}
	ev := &events.Event{Emitter: "e1", ID: "order-7-0123456789abcdef0123456789abcdef", Game: "g", Seq: 3}
	if ev.HasCanonicalID() {
		t.Fatal("the test's id is canonical")
	}
	it := &item{ev: ev}
	rec, ok, err := s.dedup(it, nil)
	if err != nil || !ok || rec.Index != 7 {
		t.Fatalf("dedup: %+v, %v, %v; want index 7", rec, ok, err)
	}
	// The same id of another emitter is not among them; the index (here
	// the item's hint: looked up, not found) has the last word.
	other := &item{ev: &events.Event{Emitter: "e2", ID: "order-7-0123456789abcdef0123456789abcdef", Game: "g", Seq: 3}, hint: dedupHint{ok: true}}
	if _, ok, err := s.dedup(other, nil); ok || err != nil {
		t.Fatalf("another emitter's id: %v, %v; want not found", ok, err)
	}
	if n := testing.AllocsPerRun(100, func() { s.dedup(it, nil) }); n != 0 {
		t.Errorf("dedup of a recent id: %v allocations, want 0", n)
	}
}
