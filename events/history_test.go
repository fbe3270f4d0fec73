package events

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"testing"
)

// truncated returns g with its history cut to h.
func truncated(g *Game, h History) *Game {
	t := *g
	cut := func(n, max int) int { return min(n, max) }
	t.Leaves = t.Leaves[:cut(h.Leaves, len(t.Leaves)):cut(h.Leaves, len(t.Leaves))]
	t.Rolls = t.Rolls[:cut(h.Rolls, len(t.Rolls)):cut(h.Rolls, len(t.Rolls))]
	t.Moves = t.Moves[:cut(h.Moves, len(t.Moves)):cut(h.Moves, len(t.Moves))]
	t.RollRecords = t.RollRecords[:cut(h.Records, len(t.RollRecords)):cut(h.Records, len(t.RollRecords))]
	for _, s := range []*[]uint64{&t.Leaves} {
		if len(*s) == 0 {
			*s = nil
		}
	}
	if len(t.Rolls) == 0 {
		t.Rolls = nil
	}
	if len(t.Moves) == 0 {
		t.Moves = nil
	}
	if len(t.RollRecords) == 0 {
		t.RollRecords = nil
	}
	return &t
}

// TestHistorySplit: every state, split into its head and its history
// written in one, two or three chunks, reads back as the same state; so
// does a whole state (MarshalBinary's) followed by the chunks written after
// it, the way a store that kept whole states goes on.
func TestHistorySplit(t *testing.T) {
	f := newFixture(t)
	states := allStates(t, f)
	for i, g := range states {
		head, err := g.AppendHead(nil)
		if err != nil {
			t.Fatalf("state %d: AppendHead: %v", i, err)
		}
		full := g.History()
		half := History{full.Leaves / 2, full.Rolls / 2, full.Moves / 2, full.Records / 2}
		third := History{full.Leaves / 3, full.Rolls / 3, full.Moves / 3, full.Records / 3}
		for _, cuts := range [][]History{nil, {half}, {third, half}} {
			var chunks [][]byte
			from := History{}
			for _, c := range append(cuts, full) {
				b, err := truncated(g, c).AppendHistory(nil, from)
				if err != nil {
					t.Fatalf("state %d: AppendHistory from %+v: %v", i, from, err)
				}
				chunks = append(chunks, b)
				from = c
			}
			var d Game
			if err := d.UnmarshalSplit(head, chunks); err != nil {
				t.Fatalf("state %d, cuts %v: %v", i, cuts, err)
			}
			if !reflect.DeepEqual(&d, g) {
				t.Fatalf("state %d, cuts %v: decoded\n%+v\nwant\n%+v", i, cuts, &d, g)
			}
		}
		whole := mustMarshal(t, truncated(g, half))
		rest, err := g.AppendHistory(nil, half)
		if err != nil {
			t.Fatal(err)
		}
		var d Game
		if err := d.UnmarshalSplit(whole, [][]byte{rest}); err != nil || !reflect.DeepEqual(&d, g) {
			t.Fatalf("state %d: a whole state and the rest: %v\n%+v\nwant\n%+v", i, err, &d, g)
		}
	}
}

// TestHistoryRejects: chunks that are not the history of their head.
func TestHistoryRejects(t *testing.T) {
	f := newFixture(t)
	states := allStates(t, f)
	var tav, per *Game
	for _, g := range states {
		if g.Scheme == Tavlarena && len(g.Rolls) > 2 && len(g.Leaves) > 3 {
			tav = g
		}
		if g.Scheme == PerRoll && len(g.RollRecords) > 1 {
			per = g
		}
	}
	if tav == nil || per == nil {
		t.Fatal("no tavlarena game with rolls, or per-roll match with records")
	}
	head := func(g *Game) []byte {
		b, err := g.AppendHead(nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	chunk := func(g *Game, from History) []byte {
		b, err := g.AppendHistory(nil, from)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tc := chunk(tav, History{})
	pc := chunk(per, History{})
	for name, c := range map[string]struct {
		head   []byte
		chunks [][]byte
	}{
		"version":           {head(tav), [][]byte{append([]byte{9}, tc[1:]...)}},
		"trailing":          {head(tav), [][]byte{append(append([]byte{}, tc...), 0)}},
		"truncated":         {head(tav), [][]byte{tc[:len(tc)-1]}},
		"twice":             {head(tav), [][]byte{tc, tc}},
		"rolls in per-roll": {head(per), [][]byte{tc}},
		"records in a game": {head(tav), [][]byte{pc}},
	} {
		var g Game
		if err := g.UnmarshalSplit(c.head, c.chunks); !errors.Is(err, ErrBadState) {
			t.Errorf("%s: UnmarshalSplit = %v, want ErrBadState", name, err)
		}
	}
	if _, err := tav.AppendHistory(nil, History{Leaves: len(tav.Leaves) + 1}); !errors.Is(err, ErrBadState) {
		t.Errorf("AppendHistory past the end: %v", err)
	}
	g := *tav
	g.Leaves = append([]uint64{}, g.Leaves...)
	g.Leaves[1] = g.Leaves[0]
	if _, err := g.AppendHistory(nil, History{}); !errors.Is(err, ErrBadState) {
		t.Errorf("AppendHistory of leaves out of order: %v", err)
	}
}

// FuzzHistory decodes arbitrary bytes as a chunk after a real head: never a
// panic, and a chunk that decodes is the history AppendHistory writes.
func FuzzHistory(f *testing.F) {
	fx := newFixture(f)
	states := allStates(f, fx)
	for _, g := range states {
		b, err := g.AppendHistory(nil, History{})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(len(f.Name())), b)
	}
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		g := states[int(which)%len(states)]
		head, err := g.AppendHead(nil)
		if err != nil {
			t.Fatal(err)
		}
		var d Game
		if err := d.UnmarshalSplit(head, [][]byte{b}); err != nil {
			return
		}
		out, err := d.AppendHistory(nil, History{})
		if err != nil {
			t.Fatalf("AppendHistory of a decoded state: %v", err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("re-encoding differs:\n got %x\nwant %x", out, b)
		}
	})
}

// TestPeek: PeekHead and HistoryLeaf read what UnmarshalSplit decodes, from
// heads AppendHead writes, whole states, and a history written in chunks.
func TestPeek(t *testing.T) {
	fx := newFixture(t)
	for _, g := range allStates(t, fx) {
		head, err := g.AppendHead(nil)
		if err != nil {
			t.Fatal(err)
		}
		id, emitter, leaves, err := PeekHead(head)
		if err != nil || id != g.ID || emitter != g.Emitter || leaves != nil {
			t.Fatalf("PeekHead(head of %s) = %q, %q, %v, %v", g.ID, id, emitter, leaves, err)
		}
		whole, err := g.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if id, emitter, leaves, err = PeekHead(whole); err != nil || id != g.ID || emitter != g.Emitter || !slices.Equal(leaves, g.Leaves) {
			t.Fatalf("PeekHead(state of %s) = %q, %q, %v, %v; want leaves %v", g.ID, id, emitter, leaves, err, g.Leaves)
		}
		// The history in chunks of one and two leaves (and the rest).
		var chunks [][]byte
		from := History{}
		for k := 0; from.Leaves < len(g.Leaves); k++ {
			part := *g
			part.Leaves = g.Leaves[:min(len(g.Leaves), from.Leaves+1+k%2)]
			part.Rolls, part.Moves, part.RollRecords = nil, nil, nil
			if len(part.Leaves) == len(g.Leaves) {
				part = *g
			}
			c, err := part.AppendHistory(nil, from)
			if err != nil {
				t.Fatal(err)
			}
			chunks = append(chunks, c)
			from = History{Leaves: len(part.Leaves), Rolls: len(part.Rolls), Moves: len(part.Moves), Records: len(part.RollRecords)}
		}
		var d Game
		if err := d.UnmarshalSplit(head, chunks); err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, c := range chunks {
			n, _, err := HistoryLeaf(c, -1)
			if err != nil {
				t.Fatal(err)
			}
			for i := range n + 1 {
				m, index, err := HistoryLeaf(c, i)
				if err != nil || m != n {
					t.Fatalf("HistoryLeaf(chunk, %d) = %d, %d, %v; want %d leaves", i, m, index, err, n)
				}
				if i < n {
					got = append(got, index)
				}
			}
		}
		var all []uint64
		for _, c := range chunks {
			if all, err = HistoryLeaves(c, all); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(all, g.Leaves) {
			t.Fatalf("%s: HistoryLeaves read leaves %v, the state holds %v", g.ID, all, g.Leaves)
		}
		if !slices.Equal(got, d.Leaves) || !slices.Equal(got, g.Leaves) {
			t.Fatalf("%s: HistoryLeaf read leaves %v, UnmarshalSplit %v, the state holds %v", g.ID, got, d.Leaves, g.Leaves)
		}
	}
	for _, b := range [][]byte{nil, {9}, {historyVersion}, {historyVersion, 3, 1}, {historyVersion, 2, 5, 0}} {
		if _, _, err := HistoryLeaf(b, 1); !errors.Is(err, ErrBadState) {
			t.Errorf("HistoryLeaf(%x, 1) = %v, want ErrBadState", b, err)
		}
		if _, err := HistoryLeaves(b, nil); !errors.Is(err, ErrBadState) {
			t.Errorf("HistoryLeaves(%x) = %v, want ErrBadState", b, err)
		}
	}
	for _, b := range [][]byte{nil, {stateVersion + 1}, {stateVersion, 5, 'a'}} {
		if _, _, _, err := PeekHead(b); !errors.Is(err, ErrBadState) {
			t.Errorf("PeekHead(%x) = %v, want ErrBadState", b, err)
		}
	}
}

// FuzzPeek: PeekHead and HistoryLeaf never panic, and on bytes that
// UnmarshalSplit decodes as a head and one chunk they read what it decodes.
func FuzzPeek(f *testing.F) {
	fx := newFixture(f)
	states := allStates(f, fx)
	for _, g := range states {
		head, err := g.AppendHead(nil)
		if err != nil {
			f.Fatal(err)
		}
		c, err := g.AppendHistory(nil, History{})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(head, c)
	}
	f.Fuzz(func(t *testing.T, head, c []byte) {
		id, emitter, leaves, herr := PeekHead(head)
		n, _, cerr := HistoryLeaf(c, -1)
		var d Game
		if d.UnmarshalSplit(head, [][]byte{c}) != nil {
			for i := range min(n, 64) {
				HistoryLeaf(c, i)
			}
			return
		}
		if herr != nil || cerr != nil || id != d.ID || emitter != d.Emitter || len(leaves)+n != len(d.Leaves) || !slices.Equal(leaves, d.Leaves[:len(leaves)]) {
			t.Fatalf("PeekHead = %q, %q, %v, %v; HistoryLeaf: %d leaves, %v; decoded %q, %q, %v", id, emitter, leaves, herr, n, cerr, d.ID, d.Emitter, d.Leaves)
		}
		for i := range n {
			if _, index, err := HistoryLeaf(c, i); err != nil || index != d.Leaves[len(leaves)+i] {
				t.Fatalf("HistoryLeaf(c, %d) = %d, %v; want %d", i, index, err, d.Leaves[len(leaves)+i])
			}
		}
		if all, err := HistoryLeaves(c, nil); err != nil || !slices.Equal(all, d.Leaves[len(leaves):]) {
			t.Fatalf("HistoryLeaves(c) = %v, %v; want %v", all, err, d.Leaves[len(leaves):])
		}
	})
}
