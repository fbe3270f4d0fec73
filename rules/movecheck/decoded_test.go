package movecheck

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/rules"
)

// TestDecodedOnlyItsOwnText: the Checker takes a state back from
// MoveInput.Decoded only beside the very text it was returned with (not a
// copy of it, not another position): a stale decoded form, such as one a
// state keeps beside a position read back from storage, is never used.
func TestDecodedOnlyItsOwnText(t *testing.T) {
	s1 := newState(rules.Portes, rules.OpeningWestern)
	s1.Phase, s1.Seat, s1.N, s1.Dice = PhasePlay, 0, 3, rules.Dice{3, 1}
	s2 := s1
	s2.Phase, s2.Seat, s2.N, s2.Dice = PhaseTurn, 1, 0, rules.Dice{}
	t1, d1 := encode(s1)
	t2, _ := encode(s2)
	if string(t1) != s1.String() || cap(t1) != len(t1) {
		t.Fatalf("text %q (cap %d), want %q", t1, cap(t1), s1.String())
	}
	// A marked decoded form: if state used it, the seat would say so.
	d1.(*decoded).s.Seat = 1
	for _, c := range []struct {
		name string
		pos  []byte
		want State
	}{
		{"its own text", t1, State{}}, // the marked form itself
		{"a copy of its text", bytes.Clone(t1), s1},
		{"another position", t2, s2},
		{"a prefix of its text", t1[: len(t1)-1 : len(t1)-1], State{}},
	} {
		got, logged, err := state(events.MoveInput{Position: c.pos, Decoded: d1})
		switch c.name {
		case "its own text":
			if err != nil || !logged || got.Seat != 1 {
				t.Errorf("%s: %+v, %v, %v: the decoded form not used", c.name, got, logged, err)
			}
		case "a prefix of its text":
			if err == nil {
				t.Errorf("%s: %+v, want ParseState's error", c.name, got)
			}
		default:
			if err != nil || !logged || got != c.want {
				t.Errorf("%s: %+v, %v, %v; want %+v", c.name, got, logged, err, c.want)
			}
		}
	}
	// A decoded form of another type (another checker's) is not used.
	if got, _, err := state(events.MoveInput{Position: t2, Decoded: s1}); err != nil || got != s2 {
		t.Errorf("foreign decoded form: %+v, %v", got, err)
	}
}

// TestDecodedSize: the Checker's decoded form of a position (one allocation
// holding the State and its text) is within events.MaxDecodedSize, the
// memory the ledger's game cache counts for it beside the state's Size.
func TestDecodedSize(t *testing.T) {
	if n := unsafe.Sizeof(decoded{}); n > events.MaxDecodedSize {
		t.Fatalf("a decoded position holds %d bytes, events.MaxDecodedSize is %d", n, events.MaxDecodedSize)
	}
}
