package events

import (
	"bytes"
	"errors"
	"testing"

	"github.com/zarlog/zarlog/events/dice"
)

// TestRollCounts counts a different number of each of the 36 rolls and
// checks the totals against sums made here from the definition.
func TestRollCounts(t *testing.T) {
	var c RollCounts
	var total, doubles uint64
	var faces [6]uint64
	for a := 1; a <= 6; a++ {
		for b := 1; b <= 6; b++ {
			n := uint64(6*(a-1) + b)
			for range n {
				c.Add(dice.Dice{a, b})
			}
			total += n
			faces[a-1] += n
			faces[b-1] += n
			if a == b {
				doubles += n
			}
		}
	}
	for _, bad := range []dice.Dice{{0, 1}, {1, 7}, {-1, 3}, {}} {
		c.Add(bad)
	}
	if c.Total() != total || c.Doubles() != doubles || c.Faces() != faces {
		t.Errorf("total %d doubles %d faces %v, want %d %d %v", c.Total(), c.Doubles(), c.Faces(), total, doubles, faces)
	}
	if s := c.Plus(c); s.Total() != 2*total || s.Pairs[5][4] != 2*c.Pairs[5][4] {
		t.Errorf("c plus c: total %d, want %d", s.Total(), 2*total)
	}
	var order []uint64
	c.Fields(func(v *uint64) { order = append(order, *v) })
	for i, v := range order {
		if v != uint64(i+1) {
			t.Fatalf("Fields visits %v, want the pairs row by row", order)
		}
	}
	if len(order) != 36 {
		t.Fatalf("Fields visits %d counts", len(order))
	}
}

// TestTallyCount counts the games of every scheme, one of them failed, and
// checks the tally against counts made here from the event bodies.
func TestTallyCount(t *testing.T) {
	f := newFixture(t)
	T := tavlarenaGame(t, f)
	games := [][]*Event{T, anchoredGame(t, f), perRollMatch(t, f), corrupt(t, f, T, len(T)-1, Reveal{Seed: seq32(1)})}
	var got, want Tally
	var opening, play RollCounts
	for gi, evs := range games {
		states := applyAll(t, f, evs)
		for i, ev := range evs {
			var before *Game
			if i > 0 {
				before = states[i-1]
			}
			fin, ok := got.Count(ev, before, states[i])
			last := i == len(evs)-1
			if ok != last {
				t.Fatalf("game %d event %d (%s): finished %v", gi, i, ev.Type, ok)
			}
			if ok && (fin.Index != uint64(i) || fin.Game != ev.Game || fin.Status != states[i].Status) {
				t.Errorf("game %d: finished %+v, want leaf %d status %s", gi, fin, i, states[i].Status)
			}
			switch b := ev.Body.(type) {
			case Roll:
				if b.Kind == dice.KindOpening {
					opening.Pairs[b.Dice[0]-1][b.Dice[1]-1]++
				} else {
					play.Pairs[b.Dice[0]-1][b.Dice[1]-1]++
				}
			case RollReveal:
				play.Pairs[b.Dice[0]-1][b.Dice[1]-1]++
			}
		}
		want.Events += uint64(len(evs))
	}
	want.Games, want.Finished, want.Failed = 4, 4, 1
	want.Opening, want.Play = opening, play
	if got != want {
		t.Errorf("tally %+v\nwant %+v", got, want)
	}
	if got.Opening.Total() == 0 || got.Play.Total() == 0 || got.Verified() != 3 {
		t.Errorf("opening %d, play %d rolls, %d verified", got.Opening.Total(), got.Play.Total(), got.Verified())
	}
	// An event after the final one (none is accepted, but a replay of a
	// closed game's state) does not finish the game again.
	st := applyAll(t, f, T)
	if _, ok := got.Count(T[len(T)-1], st[len(st)-1], st[len(st)-1]); ok {
		t.Error("a closed game finished again")
	}
}

// counterFields is a record of a few counters and two RollCounts.
type counterFields struct {
	a, b, c uint64
	x, y    RollCounts
}

func (r *counterFields) fields(visit func(*uint64)) {
	visit(&r.a)
	visit(&r.b)
	r.x.Fields(visit)
	visit(&r.c)
	r.y.Fields(visit)
}

func TestCounters(t *testing.T) {
	r := counterFields{a: 1, b: 1 << 40, c: 127}
	r.x.Pairs[0][0], r.y.Pairs[5][5] = 128, 300
	b := MarshalCounters(7, r.fields)
	if len(b) != 1+1+6+(2+35)+1+(2+35) || b[0] != 7 {
		t.Fatalf("encoding of %d bytes: %x", len(b), b)
	}
	var got counterFields
	if err := UnmarshalCounters(b, 7, got.fields); err != nil || got != r {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	for _, bad := range [][]byte{
		nil,
		{8},
		b[:len(b)-1],
		append(bytes.Clone(b), 0),
		append([]byte{7, 0x81, 0x00}, b[2:]...), // 1 as a two-byte uvarint
	} {
		var got counterFields
		if err := UnmarshalCounters(bad, 7, got.fields); !errors.Is(err, ErrBadCounters) {
			t.Errorf("%x: %v, want ErrBadCounters", bad, err)
		}
	}
}

// FuzzCounters: UnmarshalCounters never panics, and what it accepts is the
// canonical encoding.
func FuzzCounters(f *testing.F) {
	var r counterFields
	f.Add(MarshalCounters(1, r.fields))
	r.a, r.x.Pairs[2][4], r.c = 1<<63, 9, 300
	f.Add(MarshalCounters(1, r.fields))
	f.Add([]byte{1, 0x80, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		var r counterFields
		if err := UnmarshalCounters(b, 1, r.fields); err != nil {
			return
		}
		if again := MarshalCounters(1, r.fields); !bytes.Equal(again, b) {
			t.Fatalf("round trip: %x became %x", b, again)
		}
	})
}
