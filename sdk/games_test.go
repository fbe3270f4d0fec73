package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/verifier"
	"github.com/zarlog/zarlog/verifier/cli"
)

func seats(label string) [2]dice.UUID {
	return [2]dice.UUID{testonly.LabelUUID(label + "/seat0"), testonly.LabelUUID(label + "/seat1")}
}

// TestTavlarenaGames plays whole tavlarena-v1 games through the embedded
// server and the ingest into the ledger, and verifies their proof
// bundles: move-logged games of several variants (moves chosen by
// rules.Choose, the backgammon one with the cube), and an unlogged one.
func TestTavlarenaGames(t *testing.T) {
	for _, tc := range []struct {
		name, settings string
		maxRolls       int
	}{
		{"backgammon-logged", `{"moves":"logged","variant":"backgammon","matchLength":7}`, 0},
		{"tavla-turkish-logged", `{"moves":"logged","opening":"turkish-reroll","variant":"tavla"}`, 0},
		{"plakoto-logged", `{"moves":"logged","variant":"plakoto"}`, 0},
		{"unlogged-turkish", `{"opening":"turkish-reroll","rulesVersion":"tavla-1"}`, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			s := newStack(t, stackOpts{})
			g, err := s.backend.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats(tc.name), Settings: []byte(tc.settings)})
			if err != nil {
				t.Fatal(err)
			}
			c0, c1 := testonly.Label32(tc.name+"/c0"), testonly.Label32(tc.name+"/c1")
			if err := g.Contribute(ctx, 1, c1); err != nil {
				t.Fatal(err)
			}
			if err := g.Contribute(ctx, 0, c0); err != nil {
				t.Fatal(err)
			}
			if err := g.Contribute(ctx, 0, c0); !errors.Is(err, sdk.ErrNotNow) {
				t.Errorf("a second contribution of seat 0: %v, want ErrNotNow", err)
			}
			r, err := g.CommitReceipt(ctx)
			if err != nil {
				t.Fatal(err)
			}
			key, err := verifier.ParseLogKey(s.ledger.VerifierKey())
			if err != nil {
				t.Fatal(err)
			}
			leaves, err := g.Leaves(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sdk.CheckReceipt(r, leaves[0], key); err != nil || !r.SignatureChecked {
				t.Errorf("commit receipt: %v (signature checked by the client: %t)", err, r.SignatureChecked)
			}
			if _, err := sdk.CheckReceipt(r, leaves[1], key); !errors.Is(err, sdk.ErrBadReceipt) {
				t.Errorf("the commit's receipt checked against the next event: %v, want ErrBadReceipt", err)
			}
			rolls := play(t, ctx, g, tc.name, tc.maxRolls)
			lg := s.waitClosed(ctx, g.ID())
			if lg.Status != events.StatusVerified {
				t.Fatalf("the ledger's game is %s: %s", lg.Status, lg.Failure)
			}
			if lg.Contributions != [2][32]byte{c0, c1} {
				t.Errorf("logged contributions %x, want the seats'", lg.Contributions)
			}
			checkRolls(t, rolls, lg)
			t.Logf("%d rolls, %d moves, %d events, end %+v", len(rolls), len(lg.Moves), len(lg.Leaves), *lg.End)
			rep := s.verifyBundle(ctx, g.ID())
			if c, _ := rep.Check(verifier.CheckMoves); lg.MovesLogged != (c.Status == verifier.Pass) {
				t.Errorf("moves check %s for a game whose moves are logged: %t", c.Status, lg.MovesLogged)
			}
			if len(s.ledger.Rejected()) != 0 {
				t.Errorf("rejections: %v", s.ledger.Rejected())
			}
			ev, err := g.Evidence(ctx)
			if err != nil {
				t.Fatal(err)
			}
			exp, err := verifier.ParseExpected(g.SealCode())
			if err != nil {
				t.Fatal(err)
			}
			if r := verifier.Verify(ev, verifier.Options{Expected: exp}); r.Exit() != 0 {
				t.Errorf("evidence file: %s", r.Text(verifier.English))
			}
		})
	}
}

// TestContributionsWithheld: the first contribution is not published
// alone; both appear together, once the second has arrived.
func TestContributionsWithheld(t *testing.T) {
	ctx := testCtx(t)
	s := newStack(t, stackOpts{})
	g, err := s.backend.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("w"), Settings: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Contribute(ctx, 1, testonly.Label32("w1")); err != nil {
		t.Fatal(err)
	}
	// The commit was acknowledged before Contribute returned; the stream has
	// nothing else.
	if n := s.streamMessages(ctx); n != 1 {
		t.Fatalf("after the first contribution the stream has had %d messages, want only the commit's", n)
	}
	if w, err := g.Withheld(ctx); err != nil || w != [2]bool{false, true} {
		t.Fatalf("Withheld = %v, %v", w, err)
	}
	if _, err := g.Roll(ctx); !errors.Is(err, sdk.ErrNotNow) {
		t.Fatalf("a roll before both contributions: %v", err)
	}
	snap, err := g.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := sdk.ParseSnapshot(snap)
	if err != nil || ps.Held[1] == nil || *ps.Held[1] != testonly.Label32("w1") || ps.Held[0] != nil {
		t.Fatalf("the snapshot does not hold the withheld contribution: %v", err)
	}
	if err := g.Contribute(ctx, 0, testonly.Label32("w0")); err != nil {
		t.Fatal(err)
	}
	lg, err := s.ledger.WaitGame(ctx, g.ID(), func(g *events.Game) bool { return g.Contributed[0] && g.Contributed[1] })
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.Leaves) != 3 || lg.Contributions != [2][32]byte{testonly.Label32("w0"), testonly.Label32("w1")} {
		t.Errorf("ledger game: %d events, contributions %x", len(lg.Leaves), lg.Contributions)
	}
	if w, _ := g.Withheld(ctx); w != [2]bool{} {
		t.Errorf("still withheld: %v", w)
	}
}

// anchoredStart returns a time at which round BeaconRound-DefaultAnchorRounds
// is the latest, so that a new game names BeaconRound (a real beacon).
func anchoredStart() time.Time {
	return drand.Quicknet().RoundTime(testonly.BeaconRound - sdk.DefaultAnchorRounds).Add(time.Second)
}

// TestAnchoredGame plays an anchored-v1 game anchored to a real quicknet
// round, with the tokens logged (receipts in hand) before the round exists
// and the beacon recorded after.
func TestAnchoredGame(t *testing.T) {
	ctx := testCtx(t)
	s := newStack(t, stackOpts{start: anchoredStart()})
	g, err := s.backend.NewAnchored(ctx, sdk.AnchoredSpec{MatchID: "match 7 — final", GameNo: 3,
		Settings: []byte(`{"moves":"logged","opening":"western","variant":"portes"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if g.Anchor().Round != testonly.BeaconRound {
		t.Fatalf("anchor round %d, want %d", g.Anchor().Round, testonly.BeaconRound)
	}
	src := sdk.QuicknetBeacons()
	if err := g.RecordBeacon(ctx, src); !errors.Is(err, sdk.ErrNotNow) {
		t.Errorf("beacon before the tokens: %v", err)
	}
	if err := g.Token(ctx, 0, "gül"); err != nil {
		t.Fatal(err)
	}
	if err := g.Token(ctx, 1, "zar 🎲"); err != nil {
		t.Fatal(err)
	}
	if err := g.RecordBeacon(ctx, src); !errors.Is(err, sdk.ErrBeaconNotYet) {
		t.Errorf("beacon before its round: %v, want ErrBeaconNotYet", err)
	}
	// The tokens must be in the log before the round exists.
	for seq := uint64(1); seq <= 2; seq++ {
		if _, err := g.Receipt(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	s.clock.Set(g.AnchorTime())
	if err := g.Token(ctx, 1, "late"); !errors.Is(err, sdk.ErrRefused) {
		t.Errorf("a token after the round: %v, want ErrRefused", err)
	}
	if err := g.RecordBeacon(ctx, src); err != nil {
		t.Fatal(err)
	}
	rolls := play(t, ctx, g, "anchored", 0)
	lg := s.waitClosed(ctx, g.ID())
	if lg.Status != events.StatusVerified {
		t.Fatalf("ledger: %s %s", lg.Status, lg.Failure)
	}
	checkRolls(t, rolls, lg)
	s.verifyBundle(ctx, g.ID())
}

// TestPerRollMatch plays a per-roll-v1 match of two move-logged games, the
// second numbers alternately from the "app" and the server, every roll
// checked by the player's check (CheckRoll) as it is revealed.
func TestPerRollMatch(t *testing.T) {
	ctx := testCtx(t)
	s := newStack(t, stackOpts{})
	m, err := s.backend.NewPerRoll(ctx, sdk.PerRollSpec{Settings: []byte(`{"moves":"logged","variant":"fevga","matchLength":3}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.RevealRoll(ctx); !errors.Is(err, sdk.ErrNotNow) {
		t.Errorf("reveal before a commitment: %v", err)
	}
	app := newRand("app")
	strategy := rand.New(rand.NewChaCha8(testonly.Label32("per-roll strategy")))
	games := 0
	for i := 0; games < 2; i++ {
		before, err := m.CommitRoll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var sent *[32]byte
		if i%3 == 2 {
			err = m.ServerSecond(ctx)
		} else {
			var second [32]byte
			app.Read(second[:])
			sent = &second
			err = m.ClientSecond(ctx, second)
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.RevealRoll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := sdk.CheckRoll(before, sent, got); err != nil {
			t.Fatalf("roll %d: the player's check: %v", i, err)
		}
		if got.Index != uint32(i) {
			t.Fatalf("roll %d has index %d", i, got.Index)
		}
		if got.Seat < 0 {
			continue
		}
		st, err := m.State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := movecheck.ParseState(st.Position)
		if err != nil {
			t.Fatal(err)
		}
		pl := rules.Choose(ms.Variant, ms.Position, got.Seat, ms.Dice, strategy)
		if _, err := m.Move(ctx, got.Seat, rules.FormatPlay(pl)); err != nil {
			t.Fatal(err)
		}
		st, _ = m.State(ctx)
		if ms, _ := movecheck.ParseState(st.Position); ms.Phase == movecheck.PhaseOver {
			games++
			if games == 2 {
				break
			}
		}
	}
	end, over, err := m.BoardEnd(ctx)
	if err != nil || !over {
		t.Fatalf("BoardEnd = %v, %t, %v", end, over, err)
	}
	if err := m.End(ctx, end); err != nil {
		t.Fatal(err)
	}
	lg := s.waitClosed(ctx, m.ID())
	if lg.Status != events.StatusVerified {
		t.Fatalf("ledger: %s %s", lg.Status, lg.Failure)
	}
	s.verifyBundle(ctx, m.ID())
}

// TestIllegalMoveRefusedAtSource: a move the rules engine refuses is not
// published; the error names the rule.
func TestIllegalMoveRefusedAtSource(t *testing.T) {
	ctx := testCtx(t)
	s := newStack(t, stackOpts{skipReceipt: true})
	g, err := s.backend.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("ill"), Settings: []byte(`{"moves":"logged","variant":"backgammon"}`)})
	if err != nil {
		t.Fatal(err)
	}
	g.Contribute(ctx, 0, testonly.Label32("a"))
	if err := g.Contribute(ctx, 1, testonly.Label32("b")); err != nil {
		t.Fatal(err)
	}
	var r sdk.Rolled
	for r.Seat < 0 || r.Kind == "" {
		if r, err = g.Roll(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := g.Roll(ctx); !errors.Is(err, sdk.ErrRefused) {
		t.Fatalf("a roll while a move is owed: %v, want ErrRefused", err)
	} else if c, _ := events.CodeOf(err); c != events.CodeMoveOwed {
		t.Errorf("code %s, want %s", c, events.CodeMoveOwed)
	}
	if _, err := g.Move(ctx, 1-r.Seat, "-"); !errors.Is(err, sdk.ErrNotNow) {
		t.Errorf("a move by the wrong seat: %v", err)
	}
	_, err = g.Move(ctx, r.Seat, "24/1")
	var ime *rules.IllegalMoveError
	if !errors.Is(err, sdk.ErrRefused) || !errors.As(err, &ime) {
		t.Fatalf("an illegal move: %v, want ErrRefused and a *rules.IllegalMoveError", err)
	}
	leaves, _ := g.Leaves(ctx)
	if n, _ := g.Unacknowledged(ctx); n != 0 {
		t.Errorf("%d unacknowledged", n)
	}
	// A legal play in a non-canonical spelling is logged canonically.
	st, _ := g.State(ctx)
	ms, _ := movecheck.ParseState(st.Position)
	plays := rules.LegalPlays(ms.Variant, ms.Position, r.Seat, ms.Dice)
	if len(plays) == 0 {
		t.Fatal("no legal play")
	}
	canon := rules.FormatPlay(plays[0])
	spelled := canon
	if len(plays[0]) > 1 { // reverse the parts
		spelled = ""
		for i := len(plays[0]) - 1; i >= 0; i-- {
			spelled += rules.FormatPlay(rules.Play{plays[0][i]}) + " "
		}
		spelled = spelled[:len(spelled)-1]
	}
	m, err := g.Move(ctx, r.Seat, spelled)
	if err != nil {
		t.Fatalf("move %q: %v", spelled, err)
	}
	if m.Play != canon {
		t.Errorf("logged %q for %q, want the canonical %q", m.Play, spelled, canon)
	}
	after, _ := g.Leaves(ctx)
	if len(after) != len(leaves)+1 {
		t.Errorf("%d events after one move, %d before", len(after), len(leaves))
	}
}

// TestDeviceGame: a game against the computer on the player's device, with
// no server: the same evidence file, which zarlog-verify accepts (exit 0)
// while saying that the device's holder could have looked at the dice.
func TestDeviceGame(t *testing.T) {
	ctx := testCtx(t)
	signer, _, err := testonly.Key("device")
	if err != nil {
		t.Fatal(err)
	}
	dev, err := sdk.NewDevice(sdk.GameConfig{Signer: signer, Rand: newRand("device")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dev.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("d"), Settings: []byte(`{"variant":"tavla"}`)}); err == nil {
		t.Fatal("a device game without \"opponent\": \"computer\" was made")
	}
	g, err := dev.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("d"),
		Settings: []byte(`{"moves":"logged","opponent":"computer","opening":"turkish-reroll","variant":"tavla"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.CommitReceipt(ctx); !errors.Is(err, sdk.ErrLocal) {
		t.Errorf("CommitReceipt on a device: %v", err)
	}
	for seat := range 2 {
		if err := g.Contribute(ctx, seat, testonly.Label32(fmt.Sprint("dev", seat))); err != nil {
			t.Fatal(err)
		}
	}
	play(t, ctx, g, "device", 0)
	evidence, err := g.Evidence(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, lang := range []string{"en", "tr"} {
		code, out := runVerify(t, evidence, "--lang", lang, "--expected-commitment", g.SealCode())
		if code != 0 {
			t.Fatalf("zarlog-verify exit %d:\n%s", code, out)
		}
		want := map[string]string{
			"en": "whoever held the device could have looked at the dice in advance",
			"tr": "cihaz",
		}[lang]
		if !strings.Contains(out, want) {
			t.Errorf("zarlog-verify --lang %s does not say %q:\n%s", lang, want, out)
		}
	}
	// The device game resumes from its snapshot like any other.
	snap, err := g.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dev.ResumeTavlarena(snap); err != nil {
		t.Fatal(err)
	}
}

// TestRollCheck: the player's check of per-roll-v1 rolls, on the worked
// example of docs/SCHEMES.md §4 and on every kind of tampering.
func TestRollCheck(t *testing.T) {
	var seed, second [32]byte
	for i := range 32 {
		seed[i], second[i] = byte(0x60+i), byte(0x80+i)
	}
	match, _ := dice.ParseUUID("00112233-4455-6677-8899-aabbccddeeff")
	roll, _ := dice.ParseUUID("30000000-0000-4000-8000-000000000001")
	before := sdk.RollCommitment{MatchID: match, RollID: roll, Commitment: dice.Fingerprint(seed)}
	if got := fmt.Sprintf("%x", before.Commitment); got != "4d8d274ff7e176af977a95a0055c8c5f3478d38640343a060cee893e56f39957" {
		t.Fatalf("commitment %s differs from docs/SCHEMES.md §4", got)
	}
	good := sdk.RevealedRoll{RollID: roll, Seed: seed, Second: second, SecondFrom: events.FromClient, Dice: dice.Dice{4, 3}}
	if err := sdk.CheckRoll(before, &second, good); err != nil {
		t.Fatalf("the worked example: %v", err)
	}
	server := good
	server.SecondFrom = events.FromServer
	if err := sdk.CheckRoll(before, nil, server); err != nil {
		t.Fatalf("a server second: %v", err)
	}
	other := second
	other[0] ^= 1
	for _, tc := range []struct {
		name   string
		sent   *[32]byte
		mutate func(*sdk.RevealedRoll)
		part   sdk.RollCheckPart
	}{
		{"other-roll", &second, func(r *sdk.RevealedRoll) { r.RollID[15] ^= 1 }, sdk.RollCheckID},
		{"other-second", &second, func(r *sdk.RevealedRoll) { r.Second = other }, sdk.RollCheckSecond},
		{"second-marked-server", &second, func(r *sdk.RevealedRoll) { r.SecondFrom = events.FromServer }, sdk.RollCheckSecond},
		{"other-seed", &second, func(r *sdk.RevealedRoll) { r.Seed[31] ^= 0x80 }, sdk.RollCheckCommitment},
		{"flipped-die", &second, func(r *sdk.RevealedRoll) { r.Dice[1] = 4 }, sdk.RollCheckDice},
		{"swapped-dice", &second, func(r *sdk.RevealedRoll) { r.Dice = dice.Dice{3, 4} }, sdk.RollCheckDice},
		{"server-second-changed", nil, func(r *sdk.RevealedRoll) { r.Second = other; r.SecondFrom = events.FromServer }, sdk.RollCheckDice},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := good
			tc.mutate(&r)
			err := sdk.CheckRoll(before, tc.sent, r)
			var ce *sdk.RollCheckError
			if !errors.As(err, &ce) || !errors.Is(err, sdk.ErrRollCheck) {
				t.Fatalf("CheckRoll = %v, want a *RollCheckError", err)
			}
			if ce.Part != tc.part {
				t.Errorf("part %s, want %s (%v)", ce.Part, tc.part, err)
			}
		})
	}
}

// TestSeatsAndNext checks Rolled.Seat and Rolled.Next against the rules
// engine's own game on every opening style, over many seeds.
func TestSeatsAndNext(t *testing.T) {
	ctx := testCtx(t)
	signer, _, _ := testonly.Key("device")
	for _, opening := range []string{"western", "turkish-reroll"} {
		for i := range 20 {
			dev, _ := sdk.NewDevice(sdk.GameConfig{Signer: signer, Rand: newRand(fmt.Sprint(opening, i))})
			g, err := dev.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("s"), Settings: []byte(`{"opening":"` + opening + `","opponent":"computer"}`)})
			if err != nil {
				t.Fatal(err)
			}
			g.Contribute(ctx, 0, testonly.Label32(fmt.Sprint(i, "a")))
			g.Contribute(ctx, 1, testonly.Label32(fmt.Sprint(i, "b")))
			rg, _ := rules.NewGame(rules.Portes, rules.Opening(opening))
			next := -1
			for n := range 8 {
				r, err := g.Roll(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if next >= 0 && rg.Turn() != next {
					t.Fatalf("%s #%d roll %d: Next said %d, the engine's turn is %d", opening, i, n, next, rg.Turn())
				}
				if _, err := rg.Roll(n, rules.Dice(r.Dice)); err != nil {
					t.Fatal(err)
				}
				_, _, seat, pending := rg.Pending()
				if !pending {
					seat = -1
				}
				if seat != r.Seat {
					t.Fatalf("%s #%d roll %d (%v %s): Seat %d, the engine says %d", opening, i, n, r.Dice, r.Kind, r.Seat, seat)
				}
				if pending {
					if err := rg.Apply(seat, rules.Dice(r.Dice), rules.LegalPlays(rules.Portes, rg.Position(), seat, rules.Dice(r.Dice))[0]); err != nil {
						t.Fatal(err)
					}
					if _, err := g.Move(ctx, seat, "-"); err != nil {
						t.Fatal(err)
					}
				}
				next = r.Next
			}
		}
	}
}

// runVerify runs zarlog-verify (its cli.Run, what the binary runs) on a file
// holding data, and returns its exit code and output.
func runVerify(t testing.TB, data []byte, args ...string) (int, string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "evidence.json")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	code := cli.Run(context.Background(), append(args, f), strings.NewReader(""), &out, &out)
	return code, out.String()
}

// TestConcurrentCalls: the two seats' contributions arrive on two
// goroutines at once (as from two players' connections) while others read
// the game; the game logs both, once (run with -race).
func TestConcurrentCalls(t *testing.T) {
	ctx := testCtx(t)
	signer, _, _ := testonly.Key("device")
	for i := range 20 {
		dev, _ := sdk.NewDevice(sdk.GameConfig{Signer: signer, Rand: newRand(fmt.Sprint("conc", i))})
		g, err := dev.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("c"), Settings: []byte(`{"opponent":"computer"}`)})
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 3)
		for seat := range 2 {
			go func() { errs <- g.Contribute(ctx, seat, testonly.Label32(fmt.Sprint(i, seat))) }()
		}
		go func() {
			_ = g.SealCode()
			_, err := g.Snapshot(ctx)
			errs <- err
		}()
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		st, _ := g.State(ctx)
		if !st.Contributed[0] || !st.Contributed[1] || len(st.Leaves) != 3 {
			t.Fatalf("after concurrent contributions: %d events, contributed %v", len(st.Leaves), st.Contributed)
		}
	}
}

// TestSeatNamesOptIn: the players' display names ("seatNames") go into the
// public log for ever, so a backend publishes them only when told to
// (GameConfig.PublishSeatNames): without it a new game whose settings name
// the players is refused with ErrSeatNames and nothing is logged; with it
// the game is logged with the names; a device game, which publishes
// nothing, may carry them.
func TestSeatNamesOptIn(t *testing.T) {
	ctx := testCtx(t)
	s := newStack(t, stackOpts{})
	named := []byte(`{"seatNames":["Ayşe","Mehmet"],"variant":"tavla"}`)
	before := s.ledger.Len()
	if _, err := s.backend.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("names-refused"), Settings: named}); !errors.Is(err, sdk.ErrSeatNames) {
		t.Fatalf("a tavlarena-v1 game with seatNames, not opted in: %v, want ErrSeatNames", err)
	}
	if _, err := s.backend.NewPerRoll(ctx, sdk.PerRollSpec{Settings: named}); !errors.Is(err, sdk.ErrSeatNames) {
		t.Errorf("a per-roll-v1 match with seatNames, not opted in: %v, want ErrSeatNames", err)
	}
	if _, err := s.backend.NewAnchored(ctx, sdk.AnchoredSpec{MatchID: "names", GameNo: 1, Settings: named}); !errors.Is(err, sdk.ErrSeatNames) {
		t.Errorf("an anchored-v1 game with seatNames, not opted in: %v, want ErrSeatNames", err)
	}
	if _, err := s.backend.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("no-names"), Settings: []byte(`{"variant":"tavla"}`)}); err != nil {
		t.Fatalf("a game without names: %v", err)
	}
	named2, err := sdk.NewBackend(s.client, sdk.GameConfig{Signer: s.signer, Now: s.clock.Now, PublishSeatNames: true})
	if err != nil {
		t.Fatal(err)
	}
	g, err := named2.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("names-published"), Settings: named})
	if err != nil {
		t.Fatalf("a game with seatNames, opted in: %v", err)
	}
	logged, err := s.ledger.WaitGame(ctx, g.ID(), func(*events.Game) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logged.Settings), `"seatNames":["Ayşe","Mehmet"]`) {
		t.Errorf("the logged settings %s lack the names", logged.Settings)
	}
	if n := s.ledger.Len() - before; n != 2 {
		t.Errorf("%d events logged, want the two commits of the games allowed", n)
	}
	dev, err := sdk.NewDevice(sdk.GameConfig{Signer: s.signer})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dev.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("device-names"),
		Settings: []byte(`{"opponent":"computer","seatNames":["Ayşe","the computer"]}`)}); err != nil {
		t.Errorf("a device game with seatNames: %v", err)
	}
}
