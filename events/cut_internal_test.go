package events

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/zarlog/zarlog/events/dice"
)

// TestCut: every state of the fixtures' games (every scheme, failed reveals,
// moves owed), cut, and cut again after each later event applied to it,
// stands for its full state: History, NextSeq, the head, the live part and
// every chunk of history it holds are the full state's, Uncut gives the full
// state back, and each later event (and each of the game's events applied
// out of turn) is accepted or refused with the same outcome as on the full
// state, or, only when its checks need the history the cut state leaves out
// (a move of an older roll, a repeated roll id), is neither (ErrCut); the
// game's own next event never is, its reveal (every roll rechecked, a
// failed one too) included. A cut state holds less memory once its game is
// longer than a few dozen events. Uncut refuses a full state that
// disagrees with the cut one.
func TestCut(t *testing.T) {
	f := newFixture(t)
	games := [][]*Event{tavlarenaGame(t, f), anchoredGame(t, f), perRollMatch(t, f)}
	T := tavlarenaGame(t, f)
	games = append(games, corrupt(t, f, T, len(T)-1, Reveal{Seed: seq32(9)}))
	for k, ev := range T { // a turn's dice that the seed does not give: the reveal's roll check fails
		if r, ok := ev.Body.(Roll); ok && r.Kind == dice.KindTurn {
			r.Dice[0] = r.Dice[0]%6 + 1
			games = append(games, corrupt(t, f, T, k, r))
			break
		}
	}
	cuts, needs, failed := 0, 0, map[FailCheck]bool{}
	for _, evs := range games {
		var full []*Game // full[i]: after evs[:i+1]
		var g *Game
		for i, ev := range evs {
			var err error
			if g, err = Apply(g, ev, f.env(ev, uint64(100+3*i))); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
			full = append(full, g)
		}
		if l := full[len(full)-1]; l.Failure != nil {
			failed[l.Failure.Check] = true
		}
		for k := range full {
			c := full[k].Cut()
			for j := k; j < len(full); j++ {
				cuts++
				same(t, full[j], c)
				if j+1 == len(evs) {
					break
				}
				// Every event of the game, and the next one changed to
				// name each roll (a move) or each roll id logged (a
				// roll-commit), applied to the cut state and to the full
				// one.
				cands := slices.Clone(evs)
				next := evs[j+1]
				for n := range full[j].History().Rolls + 1 {
					if m, ok := next.Body.(Move); ok {
						v := *next
						m.N = uint32(n)
						v.Body = m
						cands = append(cands, &v)
					}
				}
				for _, r := range full[j].RollRecords {
					if rc, ok := next.Body.(RollCommit); ok {
						v := *next
						rc.RollID = r.RollID
						v.Body = rc
						cands = append(cands, &v)
					}
				}
				for e, ev := range cands {
					env := f.env(ev, uint64(100+3*(j+1)))
					want, werr := Apply(full[j], ev, env)
					got, gerr := Apply(c, ev, env)
					if errors.Is(gerr, ErrCut) {
						needs++
						if e == j+1 {
							t.Fatalf("event %d after %d: the cut state of %d needs its history: %v", e, j, k, gerr)
						}
						continue
					}
					if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
						t.Fatalf("event %d after %d, cut at %d: %v, full: %v", e, j, k, gerr, werr)
					}
					if werr == nil {
						same(t, want, got)
					}
				}
				var err error
				if c, err = Next(c, evs[j+1], f.env(evs[j+1], uint64(100+3*(j+1)))); err != nil {
					t.Fatal(err)
				}
				if j%3 == 0 {
					c = c.Cut()
				}
			}
		}
	}
	if cuts < 100 || needs == 0 || !failed[FailRoll] || !failed[FailCommitment] {
		t.Fatalf("%d cut states, %d events needed the history, failed reveals %v", cuts, needs, failed)
	}
}

// same fails t unless the cut state c stands for the full state g.
func same(t *testing.T, g, c *Game) {
	t.Helper()
	if g.History() != c.History() || g.NextSeq() != c.NextSeq() {
		t.Fatalf("history %+v, cut %+v", g.History(), c.History())
	}
	gh, gl := split(t, g)
	ch, cl := split(t, c)
	if !bytes.Equal(gh, ch) || !bytes.Equal(gl, cl) || !SameHead(g, c) {
		t.Fatalf("game %s: the cut state's head or live part differs", g.ID)
	}
	b := c.base()
	for _, from := range []History{b, c.History()} {
		x, err := g.AppendHistory(nil, from)
		if err != nil {
			t.Fatal(err)
		}
		y, err := c.AppendHistory(nil, from)
		if err != nil || !bytes.Equal(x, y) {
			t.Fatalf("history from %+v: %v", from, err)
		}
	}
	if b.Leaves > 0 {
		if _, err := c.AppendHistory(nil, History{}); err == nil {
			t.Fatal("the history a cut state leaves out was encoded")
		}
		if _, ok := c.Leaf(0); ok {
			t.Fatal("Leaf found a leaf a cut state leaves out")
		}
	}
	if f, ok := c.FirstLeaf(); !ok || f != g.Leaves[0] {
		t.Fatalf("the cut state's first leaf is %d (%v), the full state's %d", f, ok, g.Leaves[0])
	}
	for s := range g.NextSeq() {
		l, ok := c.Leaf(s)
		if ok && l != g.Leaves[s] {
			t.Fatalf("leaf %d: %d, full %d", s, l, g.Leaves[s])
		}
	}
	u, err := c.Uncut(g)
	if err != nil {
		t.Fatal(err)
	}
	if !equalStates(u, g) || u.IsCut() {
		t.Fatalf("Uncut gives\n%+v\nwant\n%+v", u, g)
	}
	if g.Held().Leaves > 24 && c.MemSize() >= g.MemSize() {
		t.Fatalf("a cut state of %d events holds %d bytes, the full one %d", g.NextSeq(), c.MemSize(), g.MemSize())
	}
	if b.Leaves > 0 && b.Leaves < len(g.Leaves) {
		bad := *g
		bad.Leaves = slices.Clone(g.Leaves)
		bad.Leaves[b.Leaves]++
		if _, err := c.Uncut(&bad); !errors.Is(err, ErrBadState) {
			t.Fatalf("Uncut of another history: %v", err)
		}
	}
	if b.Leaves > 0 {
		bad := *g
		bad.Leaves = slices.Clone(g.Leaves)
		bad.Leaves[0] ^= 1 << 40
		if _, err := c.Uncut(&bad); !errors.Is(err, ErrBadState) {
			t.Fatalf("Uncut of a history with another first leaf: %v", err)
		}
	}
}

// equalStates compares two states' encodings.
func equalStates(a, b *Game) bool {
	x, err := a.MarshalBinary()
	y, err2 := b.MarshalBinary()
	return err == nil && err2 == nil && bytes.Equal(x, y)
}

// TestCutKeyCollision: a cut state keeps the roll ids it leaves out as
// keys (idKey), a fixed function that anyone can invert, so a backend can
// choose a roll id whose key is a left-out roll's. Such a roll-commit on the
// cut state is neither accepted nor refused (ErrCut): on the full state
// (Uncut) it is accepted, as the full state alone accepts it. The left-out
// id itself is ErrCut too, and refused duplicate-roll-id on the full state;
// the match's own next roll id is decided on the cut state as on the full.
// A collision costs a read of the full state, never an outcome.
func TestCutKeyCollision(t *testing.T) {
	f := newFixture(t)
	evs := perRollMatch(t, f)
	var g *Game
	at := -1
	for i, ev := range evs {
		if _, ok := ev.Body.(RollCommit); ok && g != nil && len(g.RollRecords) >= 3 {
			at = i
			break
		}
		var err error
		if g, err = Apply(g, ev, f.env(ev, uint64(100+3*i))); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	if at < 0 {
		t.Fatal("the match has no roll-commit after three revealed rolls")
	}
	c := g.Cut()
	if c.base().Records == 0 {
		t.Fatal("the cut state leaves out no roll record")
	}
	first := g.RollRecords[0].RollID
	hi := binary.BigEndian.Uint64(first[:8])
	var collides dice.UUID
	binary.BigEndian.PutUint64(collides[:8], hi+1)
	binary.BigEndian.PutUint64(collides[8:], idKey(first)^(hi+1)*0x9e3779b97f4a7c15)
	if collides == first || idKey(collides) != idKey(first) {
		t.Fatalf("%s is no collision of %s: keys %x, %x", collides, first, idKey(collides), idKey(first))
	}
	own := evs[at].Body.(RollCommit).RollID
	for _, tc := range []struct {
		name string
		id   dice.UUID
		cut  bool // the cut state needs the full one
		code Code // the full state's refusal, if any
	}{
		{"left-out id", first, true, CodeDuplicateRollID},
		{"colliding id", collides, true, ""},
		{"own id", own, false, ""},
	} {
		v := *evs[at]
		rc := v.Body.(RollCommit)
		rc.RollID = tc.id
		v.Body = rc
		env := f.env(&v, uint64(100+3*at))
		want, werr := Apply(g, &v, env)
		var re *RejectError
		if tc.code == "" && werr != nil || tc.code != "" && (!errors.As(werr, &re) || re.Code != tc.code) {
			t.Fatalf("%s on the full state: %v, want %q", tc.name, werr, tc.code)
		}
		got, gerr := Apply(c, &v, env)
		if errors.Is(gerr, ErrCut) != tc.cut {
			t.Fatalf("%s on the cut state: %v", tc.name, gerr)
		}
		if tc.cut {
			u, err := c.Uncut(g)
			if err != nil {
				t.Fatal(err)
			}
			got, gerr = Apply(u, &v, env)
		}
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("%s: %v, the full state: %v", tc.name, gerr, werr)
		}
		if werr == nil {
			if tc.cut {
				if !equalStates(want, got) {
					t.Fatalf("%s: another state than the full state's", tc.name)
				}
			} else {
				same(t, want, got)
			}
		}
	}
}
