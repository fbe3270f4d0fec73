package events

import "testing"

func TestCanonicalID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		game string
		seq  uint64
		ok   bool
	}{
		{"g:0", "g", 0, true},
		{"a-1.b_c:12", "a-1.b_c", 12, true},
		{"g:18446744073709551615", "g", 1<<64 - 1, true},
		{"g:18446744073709551616", "", 0, false}, // over uint64
		{"g:00", "", 0, false},
		{"g:01", "", 0, false},
		{"g:", "", 0, false},
		{":5", "", 0, false},
		{"g:+1", "", 0, false},
		{"g:1a", "", 0, false},
		{"a:b:5", "", 0, false}, // a game id has no ':'
		{"-g:5", "", 0, false},
		{"g5", "", 0, false},
	} {
		game, seq, ok := ParseCanonicalID(tc.id)
		if game != tc.game || seq != tc.seq || ok != tc.ok {
			t.Errorf("ParseCanonicalID(%q) = %q, %d, %v; want %q, %d, %v", tc.id, game, seq, ok, tc.game, tc.seq, tc.ok)
		}
		if ok && CanonicalID(game, seq) != tc.id {
			t.Errorf("CanonicalID(%q, %d) = %q", game, seq, CanonicalID(game, seq))
		}
	}
	for _, tc := range []struct {
		ev   Event
		want bool
	}{
		{Event{ID: "g:3", Game: "g", Seq: 3}, true},
		{Event{ID: "g:3", Game: "g", Seq: 4}, false},
		{Event{ID: "g:03", Game: "g", Seq: 3}, false},
		{Event{ID: "gg:3", Game: "g", Seq: 3}, false},
		{Event{ID: "g.3", Game: "g", Seq: 3}, false},
		{Event{ID: "g", Game: "g", Seq: 3}, false},
		{Event{ID: "g:", Game: "g", Seq: 0}, false},
	} {
		if got := tc.ev.HasCanonicalID(); got != tc.want {
			t.Errorf("%+v.HasCanonicalID() = %v", tc.ev, got)
		}
	}
}

// FuzzCanonicalID: ParseCanonicalID accepts exactly the ids CanonicalID
// makes of a valid game id, and HasCanonicalID agrees with CanonicalID.
func FuzzCanonicalID(f *testing.F) {
	for _, s := range []string{"g:0", "g:01", "a:b:5", "g:18446744073709551616", "x-y:77"} {
		f.Add(s, "g", uint64(0))
	}
	f.Fuzz(func(t *testing.T, id, g string, seq uint64) {
		if game, n, ok := ParseCanonicalID(id); ok {
			if CanonicalID(game, n) != id || !ValidGameID(game) {
				t.Fatalf("ParseCanonicalID(%q) = %q, %d", id, game, n)
			}
		} else if ValidGameID(g) && id == CanonicalID(g, seq) {
			t.Fatalf("ParseCanonicalID(%q) refused CanonicalID(%q, %d)", id, g, seq)
		}
		if ValidGameID(g) {
			if game, n, ok := ParseCanonicalID(CanonicalID(g, seq)); !ok || game != g || n != seq {
				t.Fatalf("CanonicalID(%q, %d) parses as %q, %d, %v", g, seq, game, n, ok)
			}
		}
		ev := Event{ID: id, Game: g, Seq: seq}
		if ev.HasCanonicalID() != (id == CanonicalID(g, seq)) {
			t.Fatalf("%+v.HasCanonicalID() = %v", ev, ev.HasCanonicalID())
		}
	})
}
