package events

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/zarlog/zarlog/events/dice"
)

// allStates returns every intermediate state of the full games, and of
// variants that fail, with a move checker's position.
func allStates(t testing.TB, f *fixture) []*Game {
	var out []*Game
	for _, evs := range [][]*Event{tavlarenaGame(t, f), anchoredGame(t, f), perRollMatch(t, f)} {
		out = append(out, applyAll(t, f, evs)...)
	}
	T := tavlarenaGame(t, f)
	out = append(out, applyAll(t, f, corrupt(t, f, T, len(T)-1, Reveal{Seed: seq32(9)}))...)
	P := perRollMatch(t, f)
	rr := P[3].Body.(RollReveal)
	out = append(out, applyAll(t, f, corrupt(t, f, P, 3, RollReveal{Dice: dice.Dice{rr.Dice[0]%6 + 1, rr.Dice[1]}, RollID: rr.RollID, Seed: rr.Seed}))...)
	for _, s := range []Scheme{Tavlarena, Anchored, PerRoll} { // with moves owed
		out = append(out, applyFlow(t, f, loggedGames(t, f)[s], &toyFlow{overAt: 1 << 31})...)
	}
	g := *out[len(out)-1]
	g.Position = []byte("position")
	g.CommittedAt = time.Date(2026, 1, 2, 3, 4, 5, 999_999_999, time.UTC)
	return append(out, &g)
}

func TestStateRoundTrip(t *testing.T) {
	f := newFixture(t)
	states := allStates(t, f)
	if len(states) < 50 {
		t.Fatalf("only %d states", len(states))
	}
	for i, g := range states {
		b := mustMarshal(t, g)
		var d Game
		if err := d.UnmarshalBinary(b); err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		if !reflect.DeepEqual(&d, g) {
			t.Fatalf("state %d: decoded\n%+v\nwant\n%+v", i, &d, g)
		}
		if b2 := mustMarshal(t, &d); !bytes.Equal(b2, b) {
			t.Fatalf("state %d: re-encoding differs", i)
		}
	}
}

func TestStateRejects(t *testing.T) {
	f := newFixture(t)
	states := allStates(t, f)
	b := mustMarshal(t, states[len(states)-1])
	bad := map[string][]byte{
		"empty":       nil,
		"version 1":   append([]byte{1}, b[1:]...),
		"version 3":   append([]byte{3}, b[1:]...),
		"trailing":    append(bytes.Clone(b), 0),
		"long varint": append([]byte{stateVersion, 0x80 | b[1], 0x00}, b[2:]...), // id length as a two-byte varint
	}
	// The move flags byte follows the position: make it 2 (owed without
	// logged) and 4 (an unknown bit).
	g := *states[len(states)-1]
	g.Position = []byte("position")
	pb := mustMarshal(t, &g)
	at := bytes.Index(pb, []byte("\x08position")) + len("\x08position")
	for _, flags := range []byte{2, 4} {
		x := bytes.Clone(pb)
		x[at] = flags
		bad["move flags "+string(rune('0'+flags))] = x
	}
	for i := range b {
		bad["truncated"+string(rune('0'+i%10))] = b[:i] // every prefix
		var g Game
		if err := g.UnmarshalBinary(b[:i]); err == nil {
			t.Fatalf("UnmarshalBinary accepted a %d-byte prefix of %d", i, len(b))
		}
	}
	for name, in := range bad {
		g := Game{ID: "unchanged"}
		err := g.UnmarshalBinary(in)
		if !errors.Is(err, ErrBadState) {
			t.Errorf("%s: UnmarshalBinary = %v, want ErrBadState", name, err)
		}
		if g.ID != "unchanged" {
			t.Errorf("%s: a failed UnmarshalBinary changed the game", name)
		}
	}
	// MarshalBinary refuses states Apply never makes.
	for name, mod := range map[string]func(*Game){
		"scheme":  func(g *Game) { g.Scheme = "x" },
		"status":  func(g *Game) { g.Status = "closed" },
		"dice":    func(g *Game) { g.Rolls = []dice.Roll{{Dice: dice.Dice{0, 7}, Kind: dice.KindTurn}} },
		"seat":    func(g *Game) { g.Moves = []Move{{Seat: 2}} },
		"winner":  func(g *Game) { g.End = &End{Result: Finished, Winner: 5} },
		"year -1": func(g *Game) { g.CommittedAt = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) },
		"owed":    func(g *Game) { g.MovesLogged, g.MoveOwed = false, true },
	} {
		g := *states[5]
		mod(&g)
		if _, err := g.MarshalBinary(); !errors.Is(err, ErrBadState) {
			t.Errorf("%s: MarshalBinary = %v, want ErrBadState", name, err)
		}
	}
}

// FuzzState decodes arbitrary bytes as a game state: never a panic; a
// decoded state re-encodes to the same bytes; and applying any of the test
// events to it does not panic.
func FuzzState(f *testing.F) {
	fx := newFixture(f)
	for _, g := range allStates(f, fx) {
		f.Add(mustMarshal(f, g))
	}
	evs := allEvents(f, fx)
	f.Fuzz(func(t *testing.T, b []byte) {
		var g Game
		if err := g.UnmarshalBinary(b); err != nil {
			return
		}
		out, err := g.MarshalBinary()
		if err != nil {
			t.Fatalf("MarshalBinary of a decoded state: %v", err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("re-encoding differs:\n got %x\nwant %x", out, b)
		}
		for _, ev := range evs {
			env := fx.env(ev, 0)
			env.Moves = moveFunc(func(in MoveInput) ([]byte, error) { return in.Position, nil })
			e := *ev
			e.Game, e.Emitter, e.Seq = g.ID, g.Emitter, g.NextSeq()
			env.Emitter = e.Emitter
			_, _ = Apply(&g, &e, env)
			_ = g.Starter()
			if g.Scheme.PerGame() {
				_ = g.Recheck([32]byte{})
			}
		}
	})
}
