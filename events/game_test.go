package events

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
)

func TestFullGames(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct {
		name   string
		events []*Event
		rolls  int
	}{
		{"tavlarena", tavlarenaGame(t, f), 12},
		{"anchored", anchoredGame(t, f), 10},
		{"per-roll", perRollMatch(t, f), 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// Every event goes through the ledger's whole path.
			for _, ev := range tt.events {
				p, err := Parse(mustFormat(t, ev))
				if err != nil {
					t.Fatal(err)
				}
				if err := Verify(p, f.keyring); err != nil {
					t.Fatal(err)
				}
			}
			states := applyAll(t, f, tt.events)
			g := states[len(states)-1]
			if g.Status != StatusVerified || !g.Closed || g.Failure != nil {
				t.Fatalf("final status %s closed %v failure %v", g.Status, g.Closed, g.Failure)
			}
			if n := len(g.Rolls) + len(g.RollRecords); n != tt.rolls {
				t.Errorf("%d rolls, want %d", n, tt.rolls)
			}
			if len(g.Leaves) != len(tt.events) {
				t.Errorf("%d leaves, want %d", len(g.Leaves), len(tt.events))
			}
			for i, l := range g.Leaves {
				if l != uint64(i) {
					t.Errorf("leaf %d = %d", i, l)
				}
			}
			for i, s := range states {
				want := StatusOpen
				switch {
				case i == len(states)-1:
					want = StatusVerified
				case g.Scheme.PerGame() && i == len(states)-2:
					want = StatusEnded
				}
				if s.Status != want {
					t.Errorf("after event %d (%s): status %s, want %s", i, tt.events[i].Type, s.Status, want)
				}
			}
		})
	}
}

// TestTavlarenaWorkedExampleState checks the state of the worked-example
// game against DICE.md §2.
func TestTavlarenaWorkedExampleState(t *testing.T) {
	f := newFixture(t)
	states := applyAll(t, f, tavlarenaGame(t, f))
	g := states[len(states)-1]
	want := []dice.Roll{{N: 0, Dice: dice.Dice{3, 3}, Kind: dice.KindOpening}, {N: 1, Dice: dice.Dice{2, 2}, Kind: dice.KindOpening},
		{N: 2, Dice: dice.Dice{5, 1}, Kind: dice.KindOpening}, {N: 3, Dice: dice.Dice{3, 1}, Kind: dice.KindReroll}}
	if !reflect.DeepEqual(g.Rolls[:4], want) {
		t.Errorf("rolls %v, want %v", g.Rolls[:4], want)
	}
	if g.Starter() != 0 {
		t.Errorf("starter %d, want 0", g.Starter())
	}
	if g.Opening != dice.OpeningTurkishReroll {
		t.Errorf("opening %q", g.Opening)
	}
	if hexOf(g.Commitment[:]) != exCommitment || g.Seed == nil || *g.Seed != seq32(0) {
		t.Errorf("commitment %x seed %v", g.Commitment, g.Seed)
	}
	if g.End == nil || g.End.Result != Resigned || g.End.Winner != 1 || g.End.Points != 2 {
		t.Errorf("end %+v", g.End)
	}
	if string(g.Settings) != `{"doublingCube":false,"matchLength":5,"opening":"turkish-reroll","rulesVersion":"tavla-1","variant":"portes"}` {
		t.Errorf("settings %s", g.Settings)
	}
	if !g.CommittedAt.Equal(f.start) {
		t.Errorf("committedAt %v, want %v", g.CommittedAt, f.start)
	}
}

// rejectCase is one event refused by Apply.
type rejectCase struct {
	name  string
	g     *Game
	ev    *Event
	env   func(*Env)
	code  Code
	field string
}

func TestApplyRejects(t *testing.T) {
	f := newFixture(t)
	T := tavlarenaGame(t, f)
	A := anchoredGame(t, f)
	P := perRollMatch(t, f)
	ts, as, ps := applyAll(t, f, T), applyAll(t, f, A), applyAll(t, f, P)
	// mk builds a signed event of the test emitter.
	mk := func(scheme Scheme, game string, seq uint64, body Body) *Event {
		t.Helper()
		ev, err := NewSigned(Header{Scheme: scheme, Game: game, Seq: seq, Emitter: emitter, Time: f.start}, body, f.signer)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	tk := func(seq uint64, body Body) *Event { return mk(Tavlarena, exGame, seq, body) }
	ak := func(seq uint64, body Body) *Event { return mk(Anchored, "nard-7.game-3", seq, body) }
	pk := func(seq uint64, body Body) *Event { return mk(PerRoll, exGame, seq, body) }
	fromOther := func(ev *Event) *Event { e := *ev; e.Emitter = "other"; return &e }
	anchoredCommit := func(sealedAt time.Time, chain string, round uint64) *Event {
		c, err := NewAnchoredCommit("m", 0, AnchorRef{Chain: h32(t, chain), Round: round}, sealedAt, []byte(`{}`), seq32(1))
		if err != nil {
			t.Fatal(err)
		}
		return ak(0, c)
	}
	roundTime := f.chain.RoundTime(beaconRound)
	beacon := A[3].Body.(Beacon)
	withBeacon := func(mod func(*Beacon)) *Event { b := beacon; mod(&b); return ak(3, b) }
	idx := func(evs []*Event, typ Type, nth int) int {
		for i, ev := range evs {
			if ev.Type == typ {
				if nth == 0 {
					return i
				}
				nth--
			}
		}
		t.Fatalf("no %s #%d", typ, nth)
		return -1
	}
	tEnd, pSecond := idx(T, TypeEnd, 0), idx(P, TypeRollSecond, 0)
	rollID0 := P[1].Body.(RollCommit).RollID
	otherRoll := uuid(t, "30000000-0000-4000-8000-0000000000ff")
	refuse := moveFunc(func(in MoveInput) ([]byte, error) { return nil, errors.New("no checker may land on 5") })

	cases := []rejectCase{
		{"wrong emitter", ts[0], T[1], func(e *Env) { e.Emitter = "other" }, CodeWrongEmitter, "emitter"},
		{"no authenticated emitter", ts[0], T[1], func(e *Env) { e.Emitter = "" }, CodeWrongEmitter, "emitter"},
		{"contribution before commit", nil, T[1], nil, CodeUnknownGame, "game"},
		{"second commit", ts[0], T[0], nil, CodeGameExists, "game"},
		{"second commit of another emitter", ts[3], fromOther(T[0]), func(e *Env) { e.Emitter = "other" }, CodeGameExists, "game"},
		{"commit with seq 1", nil, mk(Tavlarena, exGame, 1, T[0].Body), nil, CodeOutOfOrder, "seq"},
		{"another emitter's game", ts[0], fromOther(T[1]), func(e *Env) { e.Emitter = "other" }, CodeForeignGame, "emitter"},
		{"other scheme", ts[0], mk(Anchored, exGame, 1, TokenContribution{Seat: 0, Token: "t"}), nil, CodeWrongScheme, "scheme"},
		{"after the reveal", ts[len(ts)-1], tk(uint64(len(T)), Roll{N: 12, Dice: dice.Dice{1, 2}, Kind: dice.KindTurn}), nil, CodeGameClosed, "type"},
		{"after the per-roll end", ps[len(ps)-1], pk(uint64(len(P)), RollCommit{RollID: otherRoll}), nil, CodeGameClosed, "type"},
		{"seq gap", ts[0], T[2], nil, CodeOutOfOrder, "seq"},
		{"seq repeat", ts[2], tk(2, Contribution{Seat: 1}), nil, CodeOutOfOrder, "seq"},
		{"seat contributes twice", ts[1], tk(2, Contribution{Seat: 0}), nil, CodeNotAllowedNow, "body.seat"},
		{"token twice", as[1], ak(2, TokenContribution{Seat: 1, Token: "again"}), nil, CodeNotAllowedNow, "body.seat"},
		{"roll before contributions", ts[1], tk(2, Roll{N: 0, Dice: dice.Dice{3, 3}, Kind: dice.KindOpening}), nil, CodeNotAllowedNow, "type"},
		{"roll before beacon", as[2], ak(3, Roll{N: 0, Dice: dice.Dice{3, 1}, Kind: dice.KindOpening}), nil, CodeNotAllowedNow, "type"},
		{"beacon twice", as[3], ak(4, beacon), nil, CodeNotAllowedNow, "type"},
		{"reveal before end", ts[6], tk(7, Reveal{Seed: seq32(0)}), nil, CodeNotAllowedNow, "type"},
		{"roll after end", ts[tEnd], tk(uint64(tEnd+1), Roll{N: 12, Dice: dice.Dice{1, 2}, Kind: dice.KindTurn}), nil, CodeNotAllowedNow, "type"},
		{"end after end", ts[tEnd], tk(uint64(tEnd+1), End{Result: Finished, Winner: 0, Points: 1}), nil, CodeNotAllowedNow, "type"},
		{"move before its roll", ts[2], tk(3, Move{N: 0, Play: "x"}), nil, CodeNotAllowedNow, "body.n"},
		{"per-roll move before reveal", ps[2], pk(3, Move{N: 0, Play: "x"}), nil, CodeNotAllowedNow, "body.n"},
		{"roll-second without roll-commit", ps[0], pk(1, RollSecond{RollID: rollID0, SecondFrom: FromClient}), nil, CodeNotAllowedNow, "type"},
		{"roll-reveal without roll-commit", ps[0], pk(1, RollReveal{RollID: rollID0, Dice: dice.Dice{1, 1}}), nil, CodeNotAllowedNow, "type"},
		{"roll-reveal before roll-second", ps[1], pk(2, RollReveal{RollID: rollID0, Dice: dice.Dice{1, 1}}), nil, CodeNotAllowedNow, "type"},
		{"second roll-second", ps[pSecond], pk(uint64(pSecond+1), RollSecond{RollID: rollID0, SecondFrom: FromServer}), nil, CodeNotAllowedNow, "type"},
		{"roll-commit while pending", ps[1], pk(2, RollCommit{RollID: otherRoll}), nil, CodeNotAllowedNow, "type"},
		{"end while pending", ps[pSecond], pk(uint64(pSecond+1), End{Result: Abandoned, Winner: NoWinner}), nil, CodeNotAllowedNow, "type"},
		{"roll n skips", ts[2], tk(3, Roll{N: 1, Dice: dice.Dice{3, 3}, Kind: dice.KindOpening}), nil, CodeBadSequence, "body"},
		{"turn before opening", ts[2], tk(3, Roll{N: 0, Dice: dice.Dice{3, 1}, Kind: dice.KindTurn}), nil, CodeBadSequence, "body"},
		{"tie not rolled again", ts[3], tk(4, Roll{N: 1, Dice: dice.Dice{2, 2}, Kind: dice.KindTurn}), nil, CodeBadSequence, "body"},
		{"no turkish re-roll", ts[5], tk(6, Roll{N: 3, Dice: dice.Dice{3, 1}, Kind: dice.KindTurn}), nil, CodeBadSequence, "body"},
		{"re-roll under western", as[4], ak(5, Roll{N: 1, Dice: dice.Dice{3, 1}, Kind: dice.KindReroll}), nil, CodeBadSequence, "body"},
		{"no pinned chains", nil, A[0], func(e *Env) { e.Beacons = nil }, CodeUnknownChain, "body.anchor.chain"},
		{"unknown chain", nil, anchoredCommit(f.start.Add(-time.Second), strings.Repeat("ab", 32), beaconRound), nil, CodeUnknownChain, "body.anchor.chain"},
		{"round at sealedAt", nil, anchoredCommit(roundTime, quicknetHash, beaconRound), nil, CodeRoundAlreadyExisted, "body.anchor.round"},
		{"round before sealedAt", nil, anchoredCommit(roundTime.Add(time.Hour), quicknetHash, beaconRound), func(e *Env) { e.Now = roundTime.Add(2 * time.Hour) }, CodeRoundAlreadyExisted, "body.anchor.round"},
		{"round existed at append", nil, A[0], func(e *Env) { e.Now = roundTime }, CodeRoundAlreadyExisted, "body.anchor.round"},
		{"round within the skew margin", nil, A[0], func(e *Env) { e.ClockSkew = time.Minute }, CodeRoundAlreadyExisted, "body.anchor.round"},
		{"token after the round existed", as[0], A[1], func(e *Env) { e.Now = roundTime }, CodeRoundAlreadyExisted, "body.token"},
		{"token within the skew margin", as[1], A[2], func(e *Env) { e.ClockSkew = time.Minute }, CodeRoundAlreadyExisted, "body.token"},
		{"sealed in the future", nil, anchoredCommit(f.start.Add(2*time.Second), quicknetHash, beaconRound), nil, CodeSealedInFuture, "body.sealedAt"},
		{"sealed beyond the skew", nil, anchoredCommit(f.start.Add(2*time.Second), quicknetHash, beaconRound), func(e *Env) { e.ClockSkew = time.Second }, CodeSealedInFuture, "body.sealedAt"},
		{"beacon of another round", as[2], withBeacon(func(b *Beacon) { b.Round++ }), nil, CodeBadBeacon, "body.round"},
		{"beacon of another chain", as[2], withBeacon(func(b *Beacon) { b.Chain[0] ^= 1 }), nil, CodeBadBeacon, "body.chain"},
		{"beacon with a flipped bit", as[2], withBeacon(func(b *Beacon) { b.Signature = bytes.Clone(b.Signature); b.Signature[5] ^= 4 }), nil, CodeBadBeacon, "body.signature"},
		{"beacon randomness", as[2], withBeacon(func(b *Beacon) { b.Randomness[31] ^= 1 }), nil, CodeBadBeacon, "body.randomness"},
		{"beacon chain unpinned since", as[2], A[3], func(e *Env) { e.Beacons = nil }, CodeUnknownChain, "body.chain"},
		{"rollId reused", ps[4], pk(5, RollCommit{RollID: rollID0}), nil, CodeDuplicateRollID, "body.rollId"},
		{"roll-second of another roll", ps[1], pk(2, RollSecond{RollID: otherRoll, SecondFrom: FromClient}), nil, CodeWrongRoll, "body.rollId"},
		{"roll-reveal of another roll", ps[2], pk(3, RollReveal{RollID: otherRoll, Dice: dice.Dice{1, 1}}), nil, CodeWrongRoll, "body.rollId"},
		{"move of an opening tie", ts[6], tk(7, Move{N: 0, Play: "x"}), nil, CodeIllegalMove, "body.n"},
		{"move of the opening under turkish-reroll", ts[6], tk(7, Move{N: 2, Play: "x"}), nil, CodeIllegalMove, "body.n"},
		{"roll played twice", ts[8], tk(9, Move{N: 3, Play: "x"}), nil, CodeIllegalMove, "body.n"},
		{"per-roll roll played twice", ps[4], pk(5, Move{N: 0, Play: "x"}), nil, CodeIllegalMove, "body.n"},
		{"move checker refuses", ts[6], tk(7, Move{N: 3, Play: "x"}), func(e *Env) { e.Moves = refuse }, CodeIllegalMove, "body.play"},
	}
	reached := map[Code]bool{}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			env := f.env(tt.ev, 99)
			if tt.env != nil {
				tt.env(&env)
			}
			var before []byte
			if tt.g != nil {
				before = mustMarshal(t, tt.g)
			}
			g, err := Apply(tt.g, tt.ev, env)
			var re *RejectError
			if !errors.As(err, &re) {
				t.Fatalf("Apply = %v, %v; want a *RejectError", g, err)
			}
			if g != nil {
				t.Error("Apply returned a state with its error")
			}
			if re.Code != tt.code || re.Field != tt.field {
				t.Errorf("Apply: %v; want code %s field %q", err, tt.code, tt.field)
			}
			if tt.g != nil && !bytes.Equal(mustMarshal(t, tt.g), before) {
				t.Error("Apply modified the state it was given")
			}
			reached[re.Code] = true
		})
	}
	// The cases that pass with a slightly different environment, to show
	// the boundaries above are the right ones.
	for _, tt := range []rejectCase{
		{"skew just short of the round", nil, A[0], func(e *Env) { e.ClockSkew = time.Minute - time.Millisecond }, "", ""},
		{"sealed in the future within the skew", nil, anchoredCommit(f.start.Add(2*time.Second), quicknetHash, beaconRound), func(e *Env) { e.ClockSkew = 2 * time.Second }, "", ""},
		{"auditor replay", nil, A[0], func(e *Env) { e.Now = roundTime.Add(time.Hour); e.SkipClockChecks = true }, "", ""},
	} {
		env := f.env(tt.ev, 0)
		tt.env(&env)
		if _, err := Apply(tt.g, tt.ev, env); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	for _, c := range Codes() {
		switch c {
		case CodeTooLarge, CodeMalformed, CodeNotCanonical, CodeUnknownEmitter, CodeBadSignature, CodeMsgIDMismatch, CodeReservedID, CodeDuplicateID:
			continue // Parse's, Verify's and the ledger's
		case CodeMoveOwed, CodeWrongResult:
			continue // games whose moves are logged: TestFlowRejects
		}
		if !reached[c] {
			t.Errorf("no test case reaches %s", c)
		}
	}
}

type moveFunc func(MoveInput) ([]byte, error)

func (f moveFunc) CheckMove(in MoveInput) ([]byte, error) { return f(in) }

func mustMarshal(t testing.TB, g *Game) []byte {
	t.Helper()
	b, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestApplyFaults covers errors that are not rejections: they blame the
// caller, not the event.
func TestApplyFaults(t *testing.T) {
	f := newFixture(t)
	T := tavlarenaGame(t, f)
	A := anchoredGame(t, f)
	ts := applyAll(t, f, T)
	other := *ts[1]
	other.ID = "00000000-0000-4000-8000-000000000000"
	huge := moveFunc(func(MoveInput) ([]byte, error) { return make([]byte, MaxPosition+1), nil })
	for _, tt := range []struct {
		name string
		g    *Game
		ev   *Event
		env  func(*Env)
	}{
		{"nil event", nil, nil, nil},
		{"state of another game", &other, T[2], nil},
		{"anchored commit without a clock", nil, A[0], func(e *Env) { e.Now = time.Time{} }},
		{"move checker position too large", ts[6], T[7], func(e *Env) { e.Moves = huge }},
		{"hand-built body mismatch", ts[1], &Event{Type: TypeRoll, Scheme: Tavlarena, Game: exGame, Seq: 2, Emitter: emitter, Body: Reveal{}}, nil},
	} {
		env := Env{Emitter: emitter, Now: f.start, Beacons: BeaconsOf(f.chains)}
		if tt.env != nil {
			tt.env(&env)
		}
		_, err := Apply(tt.g, tt.ev, env)
		if err == nil {
			t.Errorf("%s: Apply succeeded", tt.name)
		} else if code, ok := CodeOf(err); ok {
			t.Errorf("%s: Apply = %v, a rejection (%s), want a fault", tt.name, err, code)
		}
	}
}

func TestMoveChecker(t *testing.T) {
	f := newFixture(t)
	var inputs []MoveInput
	checker := moveFunc(func(in MoveInput) ([]byte, error) {
		inputs = append(inputs, in)
		if strings.Contains(in.Move.Play, "illegal") {
			return nil, fmt.Errorf("play %q: no such move", in.Move.Play)
		}
		return append(bytes.Clone(in.Position), fmt.Sprintf("[%d:%s]", in.Roll.N, in.Move.Play)...), nil
	})
	for _, evs := range [][]*Event{tavlarenaGame(t, f), perRollMatch(t, f)} {
		inputs = nil
		var g *Game
		for i, ev := range evs {
			env := f.env(ev, uint64(i))
			env.Moves = checker
			var err error
			if g, err = Apply(g, ev, env); err != nil {
				t.Fatal(err)
			}
		}
		if len(inputs) != len(g.Moves) || len(inputs) == 0 {
			t.Fatalf("checker called %d times for %d moves", len(inputs), len(g.Moves))
		}
		var want string
		for i, in := range inputs {
			m := g.Moves[i]
			if in.Move != m || string(in.Position) != want || in.Scheme != g.Scheme || !bytes.Equal(in.Settings, g.Settings) {
				t.Errorf("move %d: input %+v", i, in)
			}
			if g.Scheme.PerGame() {
				if in.Roll != g.Rolls[m.N] || in.Starter != 0 {
					t.Errorf("move %d: roll %+v starter %d, want %+v and 0", i, in.Roll, in.Starter, g.Rolls[m.N])
				}
			} else if in.Roll.N != m.N || in.Roll.Dice != g.RollRecords[m.N].Dice || in.Starter != -1 {
				t.Errorf("move %d: roll %+v starter %d", i, in.Roll, in.Starter)
			}
			want += fmt.Sprintf("[%d:%s]", m.N, m.Play)
		}
		if string(g.Position) != want {
			t.Errorf("position %q, want %q", g.Position, want)
		}
	}
}

// corrupt returns a copy of evs with the body of event i replaced.
func corrupt(t testing.TB, f *fixture, evs []*Event, i int, body Body) []*Event {
	out := append([]*Event(nil), evs...)
	e := *evs[i]
	e.Body = body
	if e.Type.Binding() {
		e.Sig = nil
		if err := Sign(&e, f.signer); err != nil {
			t.Fatal(err)
		}
	}
	out[i] = &e
	return out
}

func TestRevealMismatch(t *testing.T) {
	f := newFixture(t)
	T, A, P := tavlarenaGame(t, f), anchoredGame(t, f), perRollMatch(t, f)
	rollAt := func(evs []*Event, n uint32) int {
		for i, ev := range evs {
			if r, ok := ev.Body.(Roll); ok && r.N == n {
				return i
			}
		}
		t.Fatalf("no roll %d", n)
		return -1
	}
	flip := func(d dice.Dice) dice.Dice { return dice.Dice{d[0]%6 + 1, d[1]} }
	t5, a7 := rollAt(T, 5), rollAt(A, 7)
	tr5, ar7 := T[t5].Body.(Roll), A[a7].Body.(Roll)
	// Roll 2 of the match logged with other dice; then roll 3's seed does
	// not match its commitment.
	pRev := []int{}
	for i, ev := range P {
		if ev.Type == TypeRollReveal {
			pRev = append(pRev, i)
		}
	}
	pr2, pr3 := P[pRev[2]].Body.(RollReveal), P[pRev[3]].Body.(RollReveal)
	badP := corrupt(t, f, P, pRev[2], RollReveal{Dice: flip(pr2.Dice), RollID: pr2.RollID, Seed: pr2.Seed})
	badP = corrupt(t, f, badP, pRev[3], RollReveal{Dice: pr3.Dice, RollID: pr3.RollID, Seed: seq32(0xee)})

	for _, tt := range []struct {
		name string
		evs  []*Event
		want Failure
	}{
		{"tavlarena wrong seed", corrupt(t, f, T, len(T)-1, Reveal{Seed: seq32(1)}), Failure{Check: FailCommitment}},
		{"tavlarena wrong roll", corrupt(t, f, T, t5, Roll{N: 5, Dice: flip(tr5.Dice), Kind: dice.KindTurn}),
			Failure{Check: FailRoll, N: 5, Logged: flip(tr5.Dice), Rolled: tr5.Dice}},
		{"anchored wrong seed", corrupt(t, f, A, len(A)-1, Reveal{Seed: seq32(1)}), Failure{Check: FailFingerprint}},
		{"anchored wrong roll", corrupt(t, f, A, a7, Roll{N: 7, Dice: flip(ar7.Dice), Kind: ar7.Kind}),
			Failure{Check: FailRoll, N: 7, Logged: flip(ar7.Dice), Rolled: ar7.Dice}},
		{"per-roll wrong dice, then wrong seed", badP,
			Failure{Check: FailRoll, N: 2, RollID: pr2.RollID, Logged: flip(pr2.Dice), Rolled: pr2.Dice}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			states := applyAll(t, f, tt.evs) // nothing is refused
			g := states[len(states)-1]
			if g.Status != StatusFailed || g.Failure == nil || !g.Closed {
				t.Fatalf("status %s failure %v closed %v", g.Status, g.Failure, g.Closed)
			}
			got := *g.Failure
			if tt.want.Check != FailRoll {
				// The recomputed value is the scheme's hash of the wrong seed.
				if got.Committed == got.Recomputed || got.Committed == ([32]byte{}) {
					t.Errorf("failure %+v", got)
				}
				tt.want.Committed, tt.want.Recomputed = got.Committed, got.Recomputed
			}
			reveal := len(tt.evs) - 1
			if !g.Scheme.PerGame() {
				reveal = pRev[2]
			}
			tt.want.Seq = uint64(reveal)
			if got != tt.want {
				t.Errorf("failure %+v, want %+v", got, tt.want)
			}
			if s := got.String(); s == "" || (got.Check == FailRoll && !strings.Contains(s, got.Logged.String())) {
				t.Errorf("failure string %q", s)
			}
		})
	}
	// The committed values are the ones the commit named.
	states := applyAll(t, f, corrupt(t, f, T, len(T)-1, Reveal{Seed: seq32(1)}))
	if g := states[len(states)-1]; hexOf(g.Failure.Committed[:]) != exCommitment {
		t.Errorf("committed %x, want %s", g.Failure.Committed, exCommitment)
	}
}

// TestReplay checks that applying each event to a state restored from its
// encoding gives the same state as applying it incrementally, and that two
// runs give the same states.
func TestReplay(t *testing.T) {
	f := newFixture(t)
	for _, evs := range [][]*Event{tavlarenaGame(t, f), anchoredGame(t, f), perRollMatch(t, f)} {
		incr := applyAll(t, f, evs)
		again := applyAll(t, f, evs)
		var g *Game
		for i, ev := range evs {
			if i > 0 {
				var restored Game
				if err := restored.UnmarshalBinary(mustMarshal(t, g)); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(&restored, g) {
					t.Fatalf("event %d: restored state differs:\n%+v\n%+v", i, &restored, g)
				}
				g = &restored
			}
			ng, err := Apply(g, ev, f.env(ev, uint64(i)))
			if err != nil {
				t.Fatal(err)
			}
			g = ng
			if !reflect.DeepEqual(g, incr[i]) || !reflect.DeepEqual(again[i], incr[i]) {
				t.Fatalf("event %d: replayed state differs", i)
			}
		}
	}
}

// TestApplyDoesNotMutate applies two different successors to every state
// and checks that neither the state nor the first successor changes.
func TestApplyDoesNotMutate(t *testing.T) {
	f := newFixture(t)
	for _, evs := range [][]*Event{tavlarenaGame(t, f), anchoredGame(t, f), perRollMatch(t, f)} {
		states := applyAll(t, f, evs)
		for i := 0; i+1 < len(evs); i++ {
			before := mustMarshal(t, states[i])
			first, err := Apply(states[i], evs[i+1], f.env(evs[i+1], uint64(i+1)))
			if err != nil {
				t.Fatal(err)
			}
			firstBytes := mustMarshal(t, first)
			// A second successor: the same event with another log index.
			if _, err := Apply(states[i], evs[i+1], f.env(evs[i+1], 1000)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(mustMarshal(t, states[i]), before) {
				t.Fatalf("event %d: Apply modified its input", i+1)
			}
			if !bytes.Equal(mustMarshal(t, first), firstBytes) {
				t.Fatalf("event %d: a second Apply modified the first result", i+1)
			}
		}
	}
}

// TestRejectErrorChain checks the text of a rejection and that the
// underlying error stays reachable.
func TestRejectErrorChain(t *testing.T) {
	f := newFixture(t)
	T := tavlarenaGame(t, f)
	ts := applyAll(t, f, T)
	roll := mustFormat(t, T[3])

	_, err := Parse(bytes.Replace(roll, []byte(`"v":1`), []byte(`"v": 1`), 1))
	if !errors.Is(err, cjson.ErrNotCanonical) || !strings.Contains(err.Error(), "(not-canonical)") {
		t.Errorf("not canonical: %v", err)
	}
	bad, err := Parse(mutate(t, roll, "body.n", int64(9)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Apply(ts[2], bad, f.env(bad, 3))
	var se *dice.SequenceError
	if !errors.As(err, &se) || se.N != 9 {
		t.Errorf("bad sequence: %v does not wrap the dice.SequenceError of roll 9", err)
	}
	if s := err.Error(); !strings.Contains(s, "(bad-sequence)") || !strings.Contains(s, "body:") || !strings.Contains(s, "want 0") {
		t.Errorf("message %q does not name the code, the field and the numbers", s)
	}
	_, err = Apply(ts[2], T[4], f.env(T[4], 3))
	if s := err.Error(); !strings.Contains(s, "seq: 4, want 3") {
		t.Errorf("out of order message %q", s)
	}
}

// TestNext checks that Next gives the states Apply gives, event by event,
// also when a refused event is tried on a state first, and that no state it
// made changes afterwards (the later states use spare capacity beyond the
// earlier ones' lengths).
func TestNext(t *testing.T) {
	f := newFixture(t)
	for _, evs := range [][]*Event{tavlarenaGame(t, f), anchoredGame(t, f), perRollMatch(t, f)} {
		want := applyAll(t, f, evs)
		var got []*Game
		var g *Game
		refused := 0
		for i, ev := range evs {
			if i > 0 {
				// A move of a roll that was never made, in the event's
				// place, is refused after its leaf index was stored, and
				// must leave nothing that matters behind.
				bad := *ev
				bad.Type, bad.Body, bad.Sig = TypeMove, Move{N: 1 << 30, Play: "x"}, nil
				if _, err := Next(g, &bad, f.env(&bad, uint64(1000+i))); err == nil {
					t.Fatalf("event %d: Next accepted a move of roll 2^30", i)
				}
				refused++
			}
			ng, err := Next(g, ev, f.env(ev, uint64(i)))
			if err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
			if !reflect.DeepEqual(ng, want[i]) {
				t.Fatalf("event %d: Next gives\n%+v\nApply gives\n%+v", i, ng, want[i])
			}
			got = append(got, ng)
			g = ng
		}
		for i := range got {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("state %d changed after later events:\n%+v\nwant\n%+v", i, got[i], want[i])
			}
		}
		if refused == 0 {
			t.Fatal("no refused event was tried")
		}
	}
}
