package sdk_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/sdk"
)

// TestNATSRestartMidGame stops the NATS server (and the ingest) in the
// middle of a game; the next roll's publication retries until the server is
// back on the same port and store, and the game finishes intact: every event
// in the ledger exactly once, the bundle valid.
func TestNATSRestartMidGame(t *testing.T) {
	ctx := testCtx(t)
	s := newStack(t, stackOpts{ackTimeout: 200 * time.Millisecond})
	g, err := s.backend.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("restart"),
		Settings: []byte(`{"moves":"logged","opening":"turkish-reroll","variant":"portes"}`)})
	if err != nil {
		t.Fatal(err)
	}
	g.Contribute(ctx, 0, testonly.Label32("r0"))
	if err := g.Contribute(ctx, 1, testonly.Label32("r1")); err != nil {
		t.Fatal(err)
	}
	restarted := make(chan error, 1)
	stopped := false
	rolls := playWith(t, ctx, g, "restart", 0, func(n uint32) {
		if n != 10 || stopped {
			return
		}
		stopped = true
		for len(s.retries) > 0 {
			<-s.retries
		}
		s.stopNATS()
		go func() {
			// Restart once the SDK has retried at least once.
			select {
			case <-s.retries:
			case <-ctx.Done():
				restarted <- ctx.Err()
				return
			}
			restarted <- s.start()
		}()
	})
	if !stopped {
		t.Fatal("the game ended before the restart")
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	lg := s.waitClosed(ctx, g.ID())
	if lg.Status != events.StatusVerified {
		t.Fatalf("ledger: %s %s", lg.Status, lg.Failure)
	}
	checkRolls(t, rolls, lg)
	leaves, _ := g.Leaves(ctx)
	if n := s.ledger.Len(); n != len(leaves) {
		t.Errorf("the ledger has %d leaves, the game %d events", n, len(leaves))
	}
	if r := s.ledger.Rejected(); len(r) != 0 {
		t.Errorf("rejections: %v", r)
	}
	s.verifyBundle(ctx, g.ID())
}

// TestResume saves a game's snapshot at several points and resumes it on a
// new backend (a new connection and Client, as after the backend's restart):
// with a contribution withheld, in the middle of the rolls with the last
// event's ack lost, and a per-roll-v1 match with a roll pending. The games
// finish and verify; nothing is logged twice.
func TestResume(t *testing.T) {
	ctx := testCtx(t)
	s := newStack(t, stackOpts{})
	newBackend := func() *sdk.Backend {
		nc, err := sdk.Dial(s.srv.ClientURL(), emitter)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		c, err := sdk.New(nc, sdk.Config{Emitter: emitter})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		b, err := sdk.NewBackend(c, sdk.GameConfig{Signer: s.signer, Now: s.clock.Now, Rand: newRand("resumed")})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	g, err := s.backend.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("resume"), Settings: []byte(`{"moves":"logged","variant":"backgammon"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Contribute(ctx, 0, testonly.Label32("res0")); err != nil {
		t.Fatal(err)
	}
	snap, err := g.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(g.String(), g.ID()) || bytes.Contains([]byte(g.String()+g.GoString()), []byte("res0")) {
		t.Errorf("String %q", g.String())
	}

	b2 := newBackend()
	if _, err := b2.ResumePerRoll(snap); !errors.Is(err, sdk.ErrSnapshot) {
		t.Errorf("resuming a tavlarena-v1 game as per-roll-v1: %v", err)
	}
	g2, err := b2.ResumeTavlarena(snap)
	if err != nil {
		t.Fatal(err)
	}
	if err := g2.Contribute(ctx, 1, testonly.Label32("res1")); err != nil {
		t.Fatal(err)
	}
	playWith(t, ctx, g2, "resume", 0, func(n uint32) {
		if n != 6 {
			return
		}
		// Lose the last event's ack: resume from a snapshot that says it
		// was not acknowledged, on yet another backend.
		snap, err := g2.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := sdk.ParseSnapshot(snap)
		if err != nil {
			t.Fatal(err)
		}
		// The commit's receipt (the first roll waited for it) is in the
		// snapshot with its proof, checked again on resume: a changed proof
		// is refused, and a receipt of an older SDK, without one, is
		// dropped and asked for again.
		if ps.Receipt == nil || ps.Receipt.Proof == nil {
			t.Fatalf("the snapshot's receipt: %+v", ps.Receipt)
		}
		for _, tc := range []struct {
			name   string
			mutate func(r *sdk.SnapshotReceipt)
			ok     bool
		}{
			{"changed proof", func(r *sdk.SnapshotReceipt) {
				if r.Proof = slices.Clone(r.Proof); len(r.Proof) == 0 { // a tree of one leaf when it was made
					r.Proof = append(r.Proof, merkle.Hash{1})
				} else {
					r.Proof[0][0] ^= 1
				}
			}, false},
			{"another index", func(r *sdk.SnapshotReceipt) { r.Index++ }, false},
			{"no proof (an older SDK's)", func(r *sdk.SnapshotReceipt) { r.Proof = nil }, true},
		} {
			c := *ps
			r := *ps.Receipt
			tc.mutate(&r)
			c.Receipt = &r
			b, err := sdk.FormatSnapshot(&c)
			if err != nil {
				t.Fatal(err)
			}
			g4, err := newBackend().ResumeTavlarena(b)
			if !tc.ok {
				if !errors.Is(err, sdk.ErrSnapshot) || !errors.Is(err, sdk.ErrBadReceipt) {
					t.Errorf("%s: %v, want ErrSnapshot and ErrBadReceipt", tc.name, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			rc, err := g4.CommitReceipt(ctx)
			if err != nil || rc.Index != ps.Receipt.Index {
				t.Errorf("%s: the receipt asked again: %+v, %v", tc.name, rc, err)
			}
		}
		ps.Acked--
		snap, err = sdk.FormatSnapshot(ps)
		if err != nil {
			t.Fatal(err)
		}
		g3, err := newBackend().ResumeTavlarena(snap)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := g3.Unacknowledged(ctx); n != 1 {
			t.Fatalf("%d unacknowledged after resuming", n)
		}
		if err := g3.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		*g2 = *g3 // play on with the resumed game
	})
	lg := s.waitClosed(ctx, g.ID())
	if lg.Status != events.StatusVerified {
		t.Fatalf("ledger: %s %s", lg.Status, lg.Failure)
	}
	if lg.Contributions[0] != testonly.Label32("res0") {
		t.Error("the withheld contribution was lost in the resume")
	}
	s.verifyBundle(ctx, g.ID())

	// A per-roll-v1 match resumed with a roll committed and not revealed.
	m, err := s.backend.NewPerRoll(ctx, sdk.PerRollSpec{})
	if err != nil {
		t.Fatal(err)
	}
	before, err := m.CommitRoll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap, err = m.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := newBackend().ResumePerRoll(snap)
	if err != nil {
		t.Fatal(err)
	}
	var second [32]byte
	second[0] = 7
	if err := m2.ClientSecond(ctx, second); err != nil {
		t.Fatal(err)
	}
	got, err := m2.RevealRoll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := sdk.CheckRoll(before, &second, got); err != nil {
		t.Fatalf("a roll revealed after a resume: %v", err)
	}
	if err := m2.End(ctx, events.End{Result: events.Abandoned, Winner: events.NoWinner}); err != nil {
		t.Fatal(err)
	}
	s.verifyBundle(ctx, m.ID())

	leaves := 0
	for _, id := range []string{g.ID(), m.ID()} {
		leaves += len(s.ledger.Game(id).Leaves)
	}
	if s.ledger.Len() != leaves {
		t.Errorf("the ledger has %d leaves, the games %d events", s.ledger.Len(), leaves)
	}
	if r := s.ledger.Rejected(); len(r) != 0 {
		t.Errorf("rejections: %v", r)
	}
}

// TestResumeRefusesBadSnapshots: a snapshot whose secret does not fit its
// commitments, whose events were tampered with, or that belongs to another
// emitter or kind of backend is refused.
func TestResumeRefusesBadSnapshots(t *testing.T) {
	ctx := testCtx(t)
	signer, _, _ := testonly.Key("device")
	dev, err := sdk.NewDevice(sdk.GameConfig{Signer: signer, Rand: newRand("bad")})
	if err != nil {
		t.Fatal(err)
	}
	g, err := dev.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("bad"), Settings: []byte(`{"opponent":"computer"}`)})
	if err != nil {
		t.Fatal(err)
	}
	g.Contribute(ctx, 1, testonly.Label32("b1"))
	snap, _ := g.Snapshot(ctx)
	if _, err := sdk.ParseSnapshot(snap); err != nil {
		t.Fatal(err)
	}
	other, _, _ := testonly.Key("other")
	devOther, _ := sdk.NewDevice(sdk.GameConfig{Signer: other})
	s := newStack(t, stackOpts{})

	for _, tc := range []struct {
		name   string
		b      *sdk.Backend
		mutate func(*sdk.Snapshot)
	}{
		{"wrong-seed", dev, func(p *sdk.Snapshot) { p.Seed[0] ^= 1 }},
		{"no-seed", dev, func(p *sdk.Snapshot) { p.Seed = nil }},
		{"held-both", dev, func(p *sdk.Snapshot) { h := *p.Held[1]; p.Held[0] = &h }},
		{"tampered-event", dev, func(p *sdk.Snapshot) {
			p.Events[0] = bytes.Replace(p.Events[0], []byte(`"opponent":"computer"`), []byte(`"opponent":"computer","x":1`), 1)
		}},
		{"other-emitter", devOther, func(*sdk.Snapshot) {}},
		{"backend-resumes-device-game", s.backend, func(*sdk.Snapshot) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := sdk.ParseSnapshot(snap)
			tc.mutate(c)
			b, err := sdk.FormatSnapshot(c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tc.b.ResumeTavlarena(b); !errors.Is(err, sdk.ErrSnapshot) {
				t.Errorf("resumed: %v", err)
			}
		})
	}
	if _, err := dev.ResumeTavlarena(snap); err != nil {
		t.Errorf("the untouched snapshot: %v", err)
	}
}

// TestParseSnapshot: the snapshot encoding is strict and canonical.
func TestParseSnapshot(t *testing.T) {
	h := "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s="
	for _, ok := range []string{
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"receipt":{"checkpoint":"c","index":1}}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"receipt":{"checkpoint":"c","index":1,"proof":[]}}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"receipt":{"checkpoint":"c","index":1,"proof":["` + h + `","` + h + `"]}}`,
	} {
		s, err := sdk.ParseSnapshot([]byte(ok))
		if err != nil {
			t.Fatalf("%s: %v", ok, err)
		}
		if back, err := sdk.FormatSnapshot(s); err != nil || string(back) != ok {
			t.Errorf("FormatSnapshot(ParseSnapshot(%s)) = %s, %v", ok, back, err)
		}
	}
	seed := strings.Repeat("ab", 32)
	for _, bad := range []string{
		``,
		`[]`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1"}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v2","local":false}`,
		`{"acked":2,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false}`,
		`{"acked":-1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false}`,
		`{"acked":0,"events":[],"format":"zarlog-sdk-game-v1","local":false}`,
		`{"acked":0,"events":[""],"format":"zarlog-sdk-game-v1","local":false}`,
		`{"acked":0,"events":[1],"format":"zarlog-sdk-game-v1","local":false}`,
		`{"acked":0,"events":["{}"],"format":"zarlog-sdk-game-v1","local":true}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"x":1}`,
		`{"events":["{}"],"acked":1,"format":"zarlog-sdk-game-v1","local":false}`,
		`{"acked":1, "events":["{}"],"format":"zarlog-sdk-game-v1","local":false}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","held":[null,null],"local":false}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","held":["` + seed + `"],"local":false}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"seed":"` + strings.ToUpper(seed) + `"}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"seed":"` + seed[2:] + `"}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"receipt":{"index":1}}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"receipt":{"checkpoint":"","index":1}}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":true,"receipt":{"checkpoint":"c","index":1}}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"receipt":{"checkpoint":"c","index":1,"proof":"` + h + `"}}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"receipt":{"checkpoint":"c","index":1,"proof":[null]}}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"receipt":{"checkpoint":"c","index":1,"proof":["` + seed + `"]}}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"receipt":{"checkpoint":"c","index":1,"proof":["` + h[:43] + `t"]}}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"receipt":{"checkpoint":"c","index":1,"proof":["` + h[:43] + `"]}}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"receipt":{"checkpoint":"c","index":1,"proof":[],"x":1}}`,
		`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"receipt":{"checkpoint":"c","index":1,"x":[]}}`,
	} {
		if _, err := sdk.ParseSnapshot([]byte(bad)); !errors.Is(err, sdk.ErrSnapshot) {
			t.Errorf("ParseSnapshot(%s) = %v, want ErrSnapshot", bad, err)
		}
	}
}

// snapshotCorpus returns real snapshots: a tavlarena-v1 game with a
// contribution withheld and one with rolls, an anchored-v1 game with its
// beacon, a per-roll-v1 match with a roll pending.
func snapshotCorpus(t testing.TB) [][]byte {
	ctx := context.Background()
	signer, _, err := testonly.Key("device")
	if err != nil {
		t.Fatal(err)
	}
	start := anchoredStart()
	clk := testlog.NewClock(start)
	dev, err := sdk.NewDevice(sdk.GameConfig{Signer: signer, Rand: newRand("corpus"), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	snap := func(b []byte, err error) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	g, err := dev.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("c"), Settings: []byte(`{"opponent":"computer"}`)})
	if err != nil {
		t.Fatal(err)
	}
	g.Contribute(ctx, 0, testonly.Label32("c0"))
	snap(g.Snapshot(ctx))
	g.Contribute(ctx, 1, testonly.Label32("c1"))
	for range 3 {
		if _, err := g.Roll(ctx); err != nil {
			t.Fatal(err)
		}
	}
	snap(g.Snapshot(ctx))
	a, err := dev.NewAnchored(ctx, sdk.AnchoredSpec{MatchID: "m", Settings: []byte(`{"opponent":"computer"}`)})
	if err != nil {
		t.Fatal(err)
	}
	a.Token(ctx, 0, "x")
	a.Token(ctx, 1, "y")
	clk.Set(a.AnchorTime())
	if err := a.RecordBeacon(ctx, sdk.QuicknetBeacons()); err != nil {
		t.Fatal(err)
	}
	a.Roll(ctx)
	snap(a.Snapshot(ctx))
	m, err := dev.NewPerRoll(ctx, sdk.PerRollSpec{Settings: []byte(`{"opponent":"computer"}`)})
	if err != nil {
		t.Fatal(err)
	}
	m.CommitRoll(ctx)
	snap(m.Snapshot(ctx))
	if len(out) == 0 {
		t.Fatal("no snapshot")
	}
	return out
}

// FuzzSnapshot: ParseSnapshot never panics, and what it accepts
// FormatSnapshot writes back byte for byte; resuming any input never
// panics either. Inputs whose first event is anchored-v1 are only parsed:
// replaying them verifies a BLS signature, which takes the fuzzer's
// instrumented build most of a second (TestSnapshotCorpusResumes resumes
// the anchored snapshot).
func FuzzSnapshot(f *testing.F) {
	corpus := snapshotCorpus(f)
	for _, b := range corpus {
		f.Add(b)
	}
	f.Add([]byte(`{"acked":1,"events":["{}"],"format":"zarlog-sdk-game-v1","local":false,"receipt":{"checkpoint":"c","index":1,"proof":["q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s="]}}`))
	signer, _, err := testonly.Key("device")
	if err != nil {
		f.Fatal(err)
	}
	dev, err := sdk.NewDevice(sdk.GameConfig{Signer: signer})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := sdk.ParseSnapshot(b)
		if err == nil {
			out, err := sdk.FormatSnapshot(s)
			if err != nil {
				t.Fatalf("FormatSnapshot of a parsed snapshot: %v", err)
			}
			if !bytes.Equal(out, b) {
				t.Fatalf("round trip:\n%s\n%s", b, out)
			}
		}
		if bytes.Contains(b, []byte(events.Anchored)) {
			return
		}
		dev.ResumeTavlarena(b)
		dev.ResumeAnchored(b)
		dev.ResumePerRoll(b)
	})
}

// TestSnapshotCorpusResumes: every snapshot of the corpus resumes.
func TestSnapshotCorpusResumes(t *testing.T) {
	signer, _, _ := testonly.Key("device")
	dev, _ := sdk.NewDevice(sdk.GameConfig{Signer: signer})
	for i, b := range snapshotCorpus(t) {
		ps, err := sdk.ParseSnapshot(b)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := events.Parse(ps.Events[0])
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Scheme {
		case events.Tavlarena:
			_, err = dev.ResumeTavlarena(b)
		case events.Anchored:
			_, err = dev.ResumeAnchored(b)
		case events.PerRoll:
			_, err = dev.ResumePerRoll(b)
		}
		if err != nil {
			t.Errorf("snapshot %d (%s): %v", i, ev.Scheme, err)
		}
	}
}

// TestNotAcknowledged: a roll made while NATS is down, whose ctx ends
// before any ack, returns its dice with ErrNotAcknowledged; the game holds
// the event, the next call (or Flush) publishes it once NATS is back, and
// the game goes on.
func TestNotAcknowledged(t *testing.T) {
	ctx := testCtx(t)
	s := newStack(t, stackOpts{ackTimeout: 100 * time.Millisecond, skipReceipt: true})
	g, err := s.backend.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("na"), Settings: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	g.Contribute(ctx, 0, testonly.Label32("na0"))
	if err := g.Contribute(ctx, 1, testonly.Label32("na1")); err != nil {
		t.Fatal(err)
	}
	s.stopNATS()
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	r, err := g.Roll(short)
	cancel()
	if !errors.Is(err, sdk.ErrNotAcknowledged) {
		t.Fatalf("a roll while NATS is down: %v, want ErrNotAcknowledged", err)
	}
	if !r.Dice.Valid() || r.Kind != "opening" {
		t.Errorf("the roll returned with ErrNotAcknowledged: %+v", r)
	}
	if n, _ := g.Unacknowledged(ctx); n != 1 {
		t.Fatalf("%d unacknowledged", n)
	}
	s.startNATS()
	r2, err := g.Roll(ctx) // publishes roll 0 first
	if err != nil {
		t.Fatal(err)
	}
	if r2.N != 1 {
		t.Errorf("the next roll is %d", r2.N)
	}
	if n, _ := g.Unacknowledged(ctx); n != 0 {
		t.Errorf("%d unacknowledged", n)
	}
	lg, err := s.ledger.WaitGame(ctx, g.ID(), func(g *events.Game) bool { return len(g.Rolls) == 2 })
	if err != nil {
		t.Fatal(err)
	}
	if lg.Rolls[0].Dice != r.Dice {
		t.Errorf("logged roll 0 %v, returned %v", lg.Rolls[0].Dice, r.Dice)
	}
}

// TestReceiptAcrossRestart: a receipt request that the ledger is holding
// when the server stops is asked again as soon as the client reconnects,
// so the receipt comes back once the event is logged after the restart,
// not after the lost request's wait (20 s plus 5) runs out. The receipt's
// deadline is set below that wait, so a request that were not asked again
// would fail the test.
func TestReceiptAcrossRestart(t *testing.T) {
	ctx := testCtx(t)
	s := newStack(t, stackOpts{ackTimeout: 200 * time.Millisecond, skipReceipt: true})
	g, err := s.backend.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("receipt"), Settings: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Ask for the first contribution's receipt before it exists: the
	// ledger holds the request. Its bytes are known in advance (the
	// clock stands still), and checked against the game's below.
	ev, err := events.New(events.Header{Scheme: events.Tavlarena, Game: g.ID(), Seq: 1, Emitter: emitter, Time: s.clock.Now()},
		events.Contribution{Contribution: testonly.Label32("x0"), Seat: 0})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := events.Format(ev)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	rctx, cancel := context.WithTimeout(ctx, 12*time.Second)
	defer cancel()
	go func() {
		_, err := s.client.Receipt(rctx, sdk.Event{ID: ev.ID, Data: leaf})
		got <- err
	}()
	time.Sleep(200 * time.Millisecond) // the request reaches the ledger
	s.stopNATS()
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	g.Contribute(ctx, 0, testonly.Label32("x0"))
	if err := g.Contribute(ctx, 1, testonly.Label32("x1")); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the receipt held across the restart: %v", err)
	}
	if leaves, err := g.Leaves(ctx); err != nil || string(leaves[1]) != string(leaf) {
		t.Fatalf("the contribution logged is not the one predicted: %v", err)
	}
}
