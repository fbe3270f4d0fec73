package events

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/zarlog/zarlog/events/dice"
)

// split returns g's head and live part.
func split(t testing.TB, g *Game) (head, live []byte) {
	t.Helper()
	head, err := g.AppendHead(nil)
	if err != nil {
		t.Fatalf("AppendHead(%s): %v", g.ID, err)
	}
	if live, err = g.AppendLive(nil); err != nil {
		t.Fatalf("AppendLive(%s): %v", g.ID, err)
	}
	return head, live
}

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
		head, live := split(t, g)
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
			if err := d.UnmarshalSplit(head, live, chunks); err != nil {
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
		if err := d.UnmarshalSplit(whole, nil, [][]byte{rest}); err != nil || !reflect.DeepEqual(&d, g) {
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
		b, _ := split(t, g)
		return b
	}
	live := func(g *Game) []byte {
		_, b := split(t, g)
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
	pending := *per
	pending.Pending = &RollRecord{Stage: RollSeconded, SecondFrom: FromServer, Second: seq32(3)}
	pl := live(&pending)
	owed := *tav
	owed.MovesLogged, owed.MoveOwed = true, true
	unlogged := *tav
	unlogged.MovesLogged, unlogged.MoveOwed = false, false
	sec := seq32(3)
	revealed := slices.Clone(pl)
	revealed[bytes.Index(pl, sec[:])-2] = byte(RollRevealed)
	whole := mustMarshal(t, tav)
	tl, th := live(tav), head(tav)
	for name, c := range map[string]struct {
		head, live []byte
		chunks     [][]byte
	}{
		"version":                  {th, tl, [][]byte{append([]byte{9}, tc[1:]...)}},
		"trailing":                 {th, tl, [][]byte{append(append([]byte{}, tc...), 0)}},
		"truncated":                {th, tl, [][]byte{tc[:len(tc)-1]}},
		"twice":                    {th, tl, [][]byte{tc, tc}},
		"rolls in per-roll":        {head(per), live(per), [][]byte{tc}},
		"records in a game":        {th, tl, [][]byte{pc}},
		"head version":             {append([]byte{9}, th[1:]...), tl, nil},
		"head trailing":            {append(append([]byte{}, th...), 0), tl, nil},
		"head truncated":           {th[:len(th)-1], tl, nil},
		"no live part":             {th, nil, nil},
		"live version":             {th, append([]byte{9}, tl[1:]...), nil},
		"live trailing":            {th, append(append([]byte{}, tl...), 0), nil},
		"live truncated":           {th, tl[:len(tl)-1], nil},
		"live part of a whole one": {whole, tl, nil},
		"pending in a game":        {th, pl, nil},
		"pending stage revealed":   {head(per), revealed, nil},
		"a move owed, none logged": {head(&unlogged), live(&owed), nil},
	} {
		var g Game
		if err := g.UnmarshalSplit(c.head, c.live, c.chunks); !errors.Is(err, ErrBadState) {
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
		head, live := split(t, g)
		var d Game
		if err := d.UnmarshalSplit(head, live, [][]byte{b}); err != nil {
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
		head, live := split(t, g)
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
		if err := d.UnmarshalSplit(head, live, chunks); err != nil {
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
		head, live := split(f, g)
		c, err := g.AppendHistory(nil, History{})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(head, live, c)
		f.Add(mustMarshal(f, truncated(g, History{})), []byte(nil), c)
	}
	f.Fuzz(func(t *testing.T, head, live, c []byte) {
		id, emitter, leaves, herr := PeekHead(head)
		n, _, cerr := HistoryLeaf(c, -1)
		if len(live) == 0 {
			live = nil
		}
		var d Game
		if d.UnmarshalSplit(head, live, [][]byte{c}) != nil {
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

// TestSplitAsFormat6: every state, stored as store format 6 stored it (its
// head of version 2: the whole state without its history) and as format 7
// does (its head and its live part), decodes to the same state, with its
// history after either. Every pair of states of one game has the same head
// bytes exactly when SameHead says so.
func TestSplitAsFormat6(t *testing.T) {
	fx := newFixture(t)
	states := allStates(t, fx)
	for i, g := range states {
		old := mustMarshal(t, truncated(g, History{}))
		c, err := g.AppendHistory(nil, History{})
		if err != nil {
			t.Fatal(err)
		}
		head, live := split(t, g)
		var a, b Game
		if err := a.UnmarshalSplit(old, nil, [][]byte{c}); err != nil {
			t.Fatalf("state %d, format 6: %v", i, err)
		}
		if err := b.UnmarshalSplit(head, live, [][]byte{c}); err != nil {
			t.Fatalf("state %d, format 7: %v", i, err)
		}
		if !reflect.DeepEqual(&a, &b) || !reflect.DeepEqual(&b, g) {
			t.Fatalf("state %d: format 6 decodes\n%+v\nformat 7\n%+v\nwant\n%+v", i, &a, &b, g)
		}
	}
	same, differ := 0, 0
	for _, g := range states {
		for _, h := range states {
			if g.ID != h.ID {
				continue
			}
			hg, _ := split(t, g)
			hh, _ := split(t, h)
			if eq := bytes.Equal(hg, hh); SameHead(g, h) != eq {
				t.Fatalf("%s: SameHead = %v, the heads are equal: %v\n%+v\n%+v", g.ID, !eq, eq, g, h)
			} else if eq {
				same++
			} else {
				differ++
			}
		}
	}
	if same == 0 || differ == 0 {
		t.Fatalf("%d pairs with the same head, %d with different ones", same, differ)
	}
}

// TestSameHead changes each field of a state in turn: SameHead reports a
// change exactly when AppendHead's bytes change, so a field added to Game
// cannot be left out of one and not the other.
func TestSameHead(t *testing.T) {
	fx := newFixture(t)
	var base []*Game
	for _, g := range allStates(t, fx) {
		if g.End != nil && (g.Scheme != Anchored || g.Beacon != nil) {
			base = append(base, g) // every scheme, its fields set
		}
	}
	if len(base) < 3 {
		t.Fatalf("%d states", len(base))
	}
	typ := reflect.TypeFor[Game]()
	changed := map[string]bool{}
	for _, g := range base {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Name == "decoded" || f.Name == "cut" {
				continue // the checker's cache (Game.decoded) and a cut state's part (Game.cut): not stored
			}
			h := *g
			v := reflect.ValueOf(&h).Elem().Field(i)
			if !changeField(v) {
				t.Fatalf("field %s of type %s: no change made", f.Name, f.Type)
			}
			a, _ := split(t, g)
			b, err := h.AppendHead(nil)
			if err != nil {
				continue // not a state AppendHead writes
			}
			// SameHead may say a head changed when it did not (a field
			// of another scheme's, which the head does not hold): the
			// head is written again. Never the other way.
			if SameHead(g, &h) && !bytes.Equal(a, b) {
				t.Errorf("%s, %s changed: SameHead is true, but the heads differ", g.Scheme, f.Name)
			}
			changed[f.Name] = changed[f.Name] || !bytes.Equal(a, b)
			if !SameHead(&h, &h) {
				t.Errorf("SameHead of a state and itself is false")
			}
		}
	}
	// The head holds every field but the history's and the live part's.
	live := map[string]bool{"Status": true, "Closed": true, "Position": true, "MoveOwed": true, "Pending": true,
		"End": true, "Seed": true, "Failure": true, "Leaves": true, "Rolls": true, "Moves": true, "RollRecords": true}
	for i := range typ.NumField() {
		if name := typ.Field(i).Name; name != "decoded" && name != "cut" && changed[name] == live[name] {
			t.Errorf("field %s: in the head %v, in the live part or the history %v", name, changed[name], live[name])
		}
	}
}

// changeField sets v (a field of a Game) to another value of its type that
// keeps the state encodable where it can; it reports whether it changed v.
func changeField(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		switch v.Type() {
		case reflect.TypeFor[Scheme]():
			if v.String() == string(Anchored) {
				v.SetString(string(Tavlarena))
			} else {
				v.SetString(string(Anchored))
			}
		case reflect.TypeFor[Status]():
			v.SetString(string(StatusFailed))
		case reflect.TypeFor[dice.Opening]():
			if v.String() == string(dice.OpeningWestern) {
				v.SetString(string(dice.OpeningTurkishReroll))
			} else {
				v.SetString(string(dice.OpeningWestern))
			}
		default:
			v.SetString(v.String() + "x")
		}
		return true
	case reflect.Bool:
		v.SetBool(!v.Bool())
		return true
	case reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
		return true
	case reflect.Array:
		return changeField(v.Index(0))
	case reflect.Uint8:
		v.SetUint(v.Uint() ^ 1)
		return true
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes(append(slices.Clone(v.Bytes()), 'x'))
			return true
		}
		n := reflect.Append(v.Slice3(0, v.Len(), v.Len()), reflect.New(v.Type().Elem()).Elem())
		v.Set(n)
		return true
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
			return true
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(v.Elem())
		if changeField(c.Elem()) {
			v.Set(c)
			return true
		}
		return false
	case reflect.Struct:
		if t, ok := v.Interface().(time.Time); ok {
			v.Set(reflect.ValueOf(t.Add(time.Second)))
			return true
		}
		for i := range v.NumField() {
			if changeField(v.Field(i)) {
				return true
			}
		}
	}
	return false
}

// FuzzSplit decodes arbitrary bytes as a head and a live part: never a
// panic, and what decodes is what AppendHead and AppendLive write.
func FuzzSplit(f *testing.F) {
	fx := newFixture(f)
	for _, g := range allStates(f, fx) {
		head, live := split(f, g)
		f.Add(head, live)
	}
	f.Fuzz(func(t *testing.T, head, live []byte) {
		var d Game
		if err := d.UnmarshalSplit(head, live, nil); err != nil {
			return
		}
		h, l := split(t, &d)
		if head[0] == stateVersion {
			if live != nil || !bytes.Equal(mustMarshal(t, &d), head) {
				t.Fatalf("a head of version 2 decoded, with live part %x", live)
			}
			return
		}
		if !bytes.Equal(h, head) || !bytes.Equal(l, live) {
			t.Fatalf("re-encoding differs:\n got %x %x\nwant %x %x", h, l, head, live)
		}
	})
}
