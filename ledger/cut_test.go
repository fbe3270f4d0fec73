package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// TestCutStates: a ledger whose game cache holds cut states (events.Game.Cut:
// every state it keeps, cut to the last few events) accepts, refuses and
// stores exactly what one whose cache holds full states does, and so does
// one that also evicts most states and restarts every few appends. The
// stream interleaves whole games of every scheme and four variants, checked
// by the rules engine, and between their events: resends of earlier events
// (duplicates, found by their leaves, which a cut state leaves out), other
// bytes under an earlier event's id (duplicate-id), moves of older rolls
// and of rolls not logged yet (the rolls a cut state leaves out), roll-commits
// that repeat an earlier roll id (duplicate-roll-id), and each per-game game
// ends with its reveal (every roll rechecked). Every outcome is the same, and
// so is every key and value of the three stores, then after a Rebuild of the
// cut ledger (whose replay reads cut states too). Game hands out the same
// full states from the three all along. Without the variants, the
// cut ledger reads no state back (a reveal rechecks the dice that a cut
// state keeps of the rolls it leaves out). A fourth ledger, whose cache
// hashes every game id to one key (gameCache.testHash: each put drops
// the other game's state, and a get of it compares its id), gives the
// same outcomes and store too, reading states back instead.
func TestCutStates(t *testing.T) {
	for _, variants := range []bool{true, false} {
		t.Run(fmt.Sprintf("variants=%v", variants), func(t *testing.T) { testCutStates(t, variants) })
	}
}

func testCutStates(t *testing.T, variants bool) {
	ctx := context.Background()
	newEnv := func(cacheBytes int64) *testEnv {
		e := newTestEnv(t)
		e.cfg.Moves = movecheck.Checker{}
		e.cfg.GameCacheBytes = cacheBytes
		e.cfg.Beacons = nil                                    // the pinned chains: the anchored game's quicknet round
		e.clock.t = testonly.BeaconTime.Add(-30 * time.Second) // its commit and tokens are appended before the round exists
		return e
	}
	whole, cut, evicting, colliding := newEnv(0), newEnv(0), newEnv(6000), newEnv(0)
	open := func(e *testEnv, cutAt int) *Ledger {
		l := e.open()
		l.seq.games.cutAt = cutAt // the sequencer is waiting for requests
		return l
	}

	configs := []testonly.Config{
		{Scheme: events.Tavlarena, Variant: rules.Backgammon, Label: "cut-bg", Emitter: emitterA},
		{Scheme: events.Tavlarena, Variant: rules.Tavla, Opening: rules.OpeningTurkishReroll, Label: "cut-tavla", Emitter: emitterB},
		{Scheme: events.Anchored, Variant: rules.Backgammon, Label: "cut-anchored", Emitter: emitterA},
		{Scheme: events.PerRoll, Variant: rules.Plakoto, Label: "cut-plakoto", Emitter: emitterA, Games: 2},
		{Scheme: events.Tavlarena, Variant: rules.Fevga, Label: "cut-fevga", Emitter: emitterB},
		{Scheme: events.PerRoll, Variant: rules.Backgammon, Label: "cut-perroll", Emitter: emitterB},
	}
	rng := rand.New(rand.NewPCG(31, 8))
	// Each game's inputs in order: its events, and after some of them
	// the variants above.
	var games [][][]byte
	for _, c := range configs {
		if c.Scheme != events.Anchored {
			c.Start = testStart
		}
		p, err := testonly.Play(c)
		if err != nil {
			t.Fatal(err)
		}
		signer := whole.k.emitters[c.Emitter]
		evs, err := testonly.Events(c, p.Bodies, signer)
		if err != nil {
			t.Fatal(err)
		}
		format := func(h events.Header, b events.Body) []byte {
			t.Helper()
			var ev *events.Event
			var err error
			if b.Type().Binding() {
				ev, err = events.NewSigned(h, b, signer)
			} else {
				ev, err = events.New(h, b)
			}
			if err != nil {
				t.Fatalf("%s: %v", c.Label, err)
			}
			leaf, err := events.Format(ev)
			if err != nil {
				t.Fatal(err)
			}
			return leaf
		}
		var in [][]byte
		var rollIDs [][16]byte
		rolls := 0
		for i, ev := range evs {
			h := c.Header(uint64(i))
			if variants && i > 20 && rng.IntN(3) == 0 {
				j := rng.IntN(i)
				in = append(in, format(c.Header(uint64(j)), evs[j].Body)) // a resend
				hj := c.Header(uint64(j))
				hj.Time = hj.Time.Add(time.Millisecond)
				in = append(in, format(hj, evs[j].Body)) // other bytes, the same id
			}
			switch b := ev.Body.(type) {
			case events.Move:
				if variants && i > 20 {
					for _, n := range []uint32{0, uint32(rng.IntN(rolls)), uint32(rolls - 1), uint32(rolls), uint32(rolls + 1)} {
						if n == b.N {
							continue
						}
						m := b
						m.N = n
						in = append(in, format(h, m))
					}
				}
			case events.Roll:
				rolls++
			case events.RollCommit:
				if variants && len(rollIDs) > 0 {
					for _, j := range []int{0, rng.IntN(len(rollIDs)), len(rollIDs) - 1} {
						rc := b
						rc.RollID = rollIDs[j]
						in = append(in, format(h, rc))
					}
				}
				rollIDs = append(rollIDs, b.RollID)
			case events.RollReveal:
				rolls++
			}
			leaf, err := events.Format(ev)
			if err != nil {
				t.Fatal(err)
			}
			in = append(in, leaf)
		}
		games = append(games, in)
	}
	// Interleave the games, a few inputs of each in turn.
	var order [][]byte
	for len(games) > 0 {
		i := rng.IntN(len(games))
		n := min(1+rng.IntN(4), len(games[i]))
		order = append(order, games[i][:n]...)
		if games[i] = games[i][n:]; len(games[i]) == 0 {
			games = slices.Delete(games, i, i+1)
		}
	}

	a, b, c, d := open(whole, -1), open(cut, 0), open(evicting, 0), open(colliding, 0)
	d.seq.games.testHash = func(string) uint64 { return 7 } // the sequencer is waiting for requests
	const restartEvery = 5
	counts := map[Result]int{}
	for i, call := 0, 0; i < len(order); call++ {
		n := min(1+rng.IntN(8), len(order)-i)
		in := inputs(t, order[i:i+n]...)
		want := mustAppend(t, a, in)
		for _, l := range []*Ledger{b, c, d} {
			for j, o := range mustAppend(t, l, in) {
				if w := outcomeText(want[j]); outcomeText(o) != w {
					t.Fatalf("input %d: the full states' ledger: %s; a cut states' ledger: %s", i+j, w, outcomeText(o))
				}
			}
		}
		for j, o := range want {
			counts[o.Result]++
			if !variants && o.Result != Appended {
				t.Fatalf("input %d: %s", i+j, outcomeText(o))
			}
		}
		i += n
		if call%restartEvery == 0 {
			// The ledger's API hands out full states, whatever its cache holds.
			for _, cfg := range configs {
				w, err := a.Game(ctx, cfg.GameID())
				if errors.Is(err, ErrNotFound) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range []*Ledger{b, c, d} {
					g, err := l.Game(ctx, cfg.GameID())
					if err != nil || g.IsCut() || !bytes.Equal(mustMarshalGame(t, g), mustMarshalGame(t, w)) {
						t.Fatalf("%s: Game gives another state (%v)", cfg.Label, err)
					}
				}
			}
		}
		if call%restartEvery == restartEvery-1 {
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			c = open(evicting, 0)
		}
	}
	if variants && (counts[Appended] < 500 || counts[Duplicate] < 20 || counts[Rejected] < 100) {
		t.Fatalf("outcomes %v: want many of each", counts)
	}
	cutHeld := 0
	for _, e := range b.seq.games.items {
		if e.g.IsCut() {
			cutHeld++
		}
	}
	if variants && b.seq.loads == 0 || !variants && b.seq.loads != 0 || a.seq.loads != 0 || d.seq.loads <= b.seq.loads {
		t.Fatalf("the cut ledger read %d states back, the full one %d, the colliding one %d, for %d events appended", b.seq.loads, a.seq.loads, d.seq.loads, counts[Appended])
	}
	t.Logf("%v; the cut ledger read %d states back, the evicting one %d (since its last restart), the colliding one %d; %d cut states cached", counts, b.seq.loads, c.seq.loads, d.seq.loads, cutHeld)
	for _, l := range []*Ledger{a, b, c, d} {
		mustSign(t, l)
	}
	da := dumpStore(t, a)
	diffDumps(t, da, dumpStore(t, b))
	diffDumps(t, da, dumpStore(t, c))
	diffDumps(t, da, dumpStore(t, d))
	if err := b.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	diffDumps(t, dumpProjections(t, a), dumpProjections(t, b))
}

func outcomeText(o Outcome) string {
	s := fmt.Sprintf("%v %s index %d", o.Result, o.ID, o.Index)
	if o.Reject != nil {
		s += fmt.Sprintf(" %s %s %q seq %d record %q", o.Reject.Code, o.Reject.Field, o.Reject.Msg, o.Seq, o.RecordID)
	}
	return s
}

// dumpStore returns every key and value of l's store.
func dumpStore(t testing.TB, l *Ledger) map[string][]byte {
	t.Helper()
	v, err := l.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer v.release()
	it, err := v.snap.NewIter(&pebble.IterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	out := map[string][]byte{}
	for ok := it.First(); ok; ok = it.Next() {
		out[string(it.Key())] = bytes.Clone(it.Value())
	}
	return out
}

// TestCutReadInFlight: an event that needs the full state of its game
// (events.ErrCut) while the game's previous group is still in flight (not
// committed: the committer is held) is decided on the state that group
// left, with the history the cut state leaves out read back from the store.
// The store lacks the in-flight group's event, but the cut state holds it:
// the part a cut state leaves out is always committed (the sequencer.next
// comment says why). A per-roll-v1 match whose cached states are all cut
// has three rolls revealed, the first left out; its move is appended with
// the committer held, and then, while that group waits, two roll-commits:
// one that repeats the first roll's id (refused, duplicate-roll-id) and one
// with an id whose key (idKey) is the first roll's, another id (accepted).
// Both read the game back while the move's group is uncommitted. The
// outcomes and the stores are those of a ledger that keeps full states.
func TestCutReadInFlight(t *testing.T) {
	newEnv := func() *testEnv {
		e := newTestEnv(t)
		e.cfg.Moves = movecheck.Checker{}
		e.cfg.GameCacheBytes = 0
		return e
	}
	cutEnv, wholeEnv := newEnv(), newEnv()
	cut, whole := cutEnv.open(), wholeEnv.open()
	cut.seq.games.cutAt = 0 // every cached state is cut; the sequencer waits for requests
	whole.seq.games.cutAt = -1

	c := testonly.Config{Scheme: events.PerRoll, Variant: rules.Backgammon, Label: "cut-in-flight", Emitter: emitterA, Start: testStart}
	p, err := testonly.Play(c)
	if err != nil {
		t.Fatal(err)
	}
	signer := cutEnv.k.emitters[c.Emitter]
	evs, err := testonly.Events(c, p.Bodies, signer)
	if err != nil {
		t.Fatal(err)
	}
	// The fourth roll-commit: three rolls are revealed before it, and a
	// cut state keeps the last two (the first is left out). The event
	// before it is the third roll's move.
	var first dice.UUID
	at, n := -1, 0
	for i, ev := range evs {
		if rc, ok := ev.Body.(events.RollCommit); ok {
			if n == 0 {
				first = rc.RollID
			}
			if n++; n == 4 {
				at = i
				break
			}
		}
	}
	if at < 0 || evs[at-1].Type != events.TypeMove {
		t.Fatalf("the match has no fourth roll-commit after a move (%d roll-commits)", n)
	}
	leaves := make([][]byte, len(evs))
	for i, ev := range evs {
		if leaves[i], err = events.Format(ev); err != nil {
			t.Fatal(err)
		}
	}
	rollCommit := func(id dice.UUID) []byte {
		b := evs[at].Body.(events.RollCommit)
		b.RollID = id
		ev, err := events.NewSigned(c.Header(uint64(at)), b, signer)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := events.Format(ev)
		if err != nil {
			t.Fatal(err)
		}
		return leaf
	}
	collides := collidingRollID(first)
	if collides == first {
		t.Fatal("the colliding roll id is the id itself")
	}
	calls := [][]Input{
		inputs(t, leaves[:at-1]...),
		inputs(t, leaves[at-1]), // the move: its group stays in flight
		inputs(t, rollCommit(first), rollCommit(collides)),
	}

	type batchSeen struct {
		group, committed, loads uint64
	}
	seen := make(chan batchSeen, 8)
	cut.seq.onBatch = func(*pebble.Batch) { // set before the first request, as cutAt
		seen <- batchSeen{cut.seq.group, cut.committed.Load(), cut.seq.loads}
	}
	want := make([][]Outcome, len(calls))
	for i, in := range calls {
		want[i] = mustAppend(t, whole, in)
	}
	mustAppend(t, cut, calls[0])
	<-seen
	ctx := context.Background()
	type result struct {
		out []Outcome
		err error
	}
	var results []chan result
	var prepared []batchSeen
	cut.commitMu.Lock() // holds the committer
	for _, in := range calls[1:] {
		r := make(chan result, 1)
		go func() {
			out, err := cut.Append(ctx, in)
			r <- result{out, err}
		}()
		results = append(results, r)
		prepared = append(prepared, <-seen) // the move's group, then the roll-commits'
	}
	cut.commitMu.Unlock()
	for i, r := range results {
		res := <-r
		if res.err != nil {
			t.Fatal(res.err)
		}
		for j, o := range res.out {
			if w := outcomeText(want[i+1][j]); outcomeText(o) != w {
				t.Fatalf("call %d, input %d: the full states' ledger: %s; the cut states' ledger: %s", i+1, j, w, outcomeText(o))
			}
		}
	}
	move, commits := prepared[0], prepared[1]
	if commits.committed >= move.group || commits.loads-move.loads != 2 || whole.seq.loads != 0 {
		t.Fatalf("the roll-commits' group was prepared with group %d committed (the move's is %d), reading %d states back (want 2; the full ledger read %d)",
			commits.committed, move.group, commits.loads-move.loads, whole.seq.loads)
	}
	if o := want[2]; o[0].Result != Rejected || o[0].Reject.Code != events.CodeDuplicateRollID || o[1].Result != Appended {
		t.Fatalf("the roll-commits: %s; %s", outcomeText(o[0]), outcomeText(o[1]))
	}
	mustSign(t, cut)
	mustSign(t, whole)
	diffDumps(t, dumpStore(t, whole), dumpStore(t, cut))
}

// collidingRollID returns a roll id other than id that a cut state keeps
// under the same key (events' idKey: the first half times a constant, xor
// the second half).
func collidingRollID(id dice.UUID) dice.UUID {
	const k = 0x9e3779b97f4a7c15
	hi, lo := binary.BigEndian.Uint64(id[:8]), binary.BigEndian.Uint64(id[8:])
	key := hi*k ^ lo
	var out dice.UUID
	binary.BigEndian.PutUint64(out[:8], hi+1)
	binary.BigEndian.PutUint64(out[8:], key^(hi+1)*k)
	return out
}
