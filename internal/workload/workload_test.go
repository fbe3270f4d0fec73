package workload

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// TestStream checks that every event of a stream of each mix parses,
// verifies and follows its game's history, that the stream is
// deterministic, and that its games finish verified: in the production
// configuration (the rules engine checks every roll, move and end; real
// quicknet beacons, checked with BLS, under a ledger clock before the
// chain's genesis) and the structural one (fake beacons, moves checked
// structurally, the real clock).
func TestStream(t *testing.T) {
	for _, name := range MixNames() {
		for _, production := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/production=%v", name, production), func(t *testing.T) {
				testStream(t, name, production)
			})
		}
	}
}

func testStream(t *testing.T, name string, production bool) {
	{
		{
			mix, err := ParseMix(name)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Seed: 7, Mix: mix, Concurrent: 8, Rolls: 12, Moves: production, RealBeacons: production}
			if production {
				cfg.Rolls = 60 // so that some games are over on the board
			}
			g, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := g.Take(2000)
			if err != nil {
				t.Fatal(err)
			}
			g2, _ := New(cfg)
			again, err := g2.Take(len(evs))
			if err != nil {
				t.Fatal(err)
			}
			games := map[string]*events.Game{}
			ids := map[string]bool{}
			verified, moves, finished, beacons := 0, 0, 0, 0
			env := events.Env{Beacons: Beacons}
			if production {
				env = events.Env{Beacons: events.BeaconsOf(Chains), Moves: movecheck.Checker{}}
			}
			for i, e := range evs {
				if !bytes.Equal(e.Data, again[i].Data) {
					t.Fatalf("event %d differs between two generators of the same config", i)
				}
				ev, err := events.Parse(e.Data)
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				if err := events.Verify(ev, g.Keyring()); err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				if ev.ID != e.ID || ev.Emitter != e.Emitter || ev.Game != e.Game || (ev.Sig != nil) != e.Signed {
					t.Fatalf("event %d: %+v does not describe %s", i, e, e.Data)
				}
				if ids[ev.ID] {
					t.Fatalf("event %d: id %s twice", i, ev.ID)
				}
				ids[ev.ID] = true
				env.Emitter, env.Index, env.Now = e.Emitter, uint64(i), time.Now()
				if production {
					env.Now = QuicknetStart.Add(time.Hour)
				}
				ng, err := events.Apply(games[ev.Game], ev, env)
				if err != nil {
					t.Fatalf("event %d (%s %s seq %d): %v", i, ev.Scheme, ev.Type, ev.Seq, err)
				}
				games[ev.Game] = ng
				switch ev.Type {
				case events.TypeMove:
					moves++
				case events.TypeBeacon:
					beacons++
				case events.TypeEnd:
					if ev.Body.(events.End).Result == events.Finished {
						finished++
					}
				}
				if ng.MovesLogged != production {
					t.Fatalf("event %d: moves logged %v", i, ng.MovesLogged)
				}
				if ng.Closed {
					if ng.Status != events.StatusVerified {
						t.Fatalf("game %s closed %s", ev.Game, ng.Status)
					}
					verified++
				}
			}
			if verified == 0 {
				t.Fatalf("no game finished in %d events", len(evs))
			}
			if moves == 0 || (mix.Anchored > 0) != (beacons > 0) {
				t.Fatalf("%d moves, %d beacons", moves, beacons)
			}
			if production && mix.Tavlarena+mix.Anchored > 0 && finished == 0 {
				t.Errorf("no game ended finished on the board")
			}
			n, mean, signed := Stats(evs)
			t.Logf("%s: %d events, %.0f bytes on average, %.1f%% signed, %d games closed, %d finished, %d moves, %d beacons", name, n, mean, 100*signed, verified, finished, moves, beacons)
		}
	}
}

// TestBeaconsChecked: in the production configuration an anchored-v1
// game's beacon is checked for real: a flipped bit of its signature is
// refused (bad-beacon), so each game's BLS check runs.
func TestBeaconsChecked(t *testing.T) {
	g, err := New(Config{Seed: 3, Mix: Mix{Anchored: 1}, Concurrent: 1, Rolls: 4, Moves: true, RealBeacons: true})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := g.Take(4)
	if err != nil {
		t.Fatal(err)
	}
	env := events.Env{Emitter: evs[0].Emitter, Now: QuicknetStart.Add(time.Hour), Beacons: events.BeaconsOf(drand.ChainByHash), Moves: movecheck.Checker{}}
	var game *events.Game
	for i, e := range evs[:3] {
		ev, err := events.Parse(e.Data)
		if err != nil {
			t.Fatal(err)
		}
		env.Index = uint64(i)
		if game, err = events.Apply(game, ev, env); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := events.Parse(evs[3].Data)
	if err != nil || ev.Type != events.TypeBeacon {
		t.Fatalf("event 3: %v %v", ev, err)
	}
	b := ev.Body.(events.Beacon)
	b.Signature = bytes.Clone(b.Signature)
	b.Signature[10] ^= 1
	b.Randomness = sha256.Sum256(b.Signature)
	ev.Body = b
	var re *events.RejectError
	if _, err := events.Apply(game, ev, env); !errors.As(err, &re) || re.Code != events.CodeBadBeacon {
		t.Errorf("a beacon with a flipped bit: %v, want %s", err, events.CodeBadBeacon)
	}
}

// BenchmarkGenerate is the generator's cost per event, in each
// configuration: what a benchmark spends before its clock starts.
func BenchmarkGenerate(b *testing.B) {
	for _, production := range []bool{true, false} {
		b.Run(fmt.Sprintf("production=%v", production), func(b *testing.B) {
			g, err := New(Config{Seed: 1, Moves: production, RealBeacons: production})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := g.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRounds: with real beacons, BeaconGamesPerRound consecutive
// anchored-v1 games share a round: the four recorded quicknet rounds first,
// then BenchChain's rounds 1, 2, …; every beacon verifies under its chain
// (the ledger's pairing check), and BenchChain's differ from quicknet's
// (another key, another hash).
func TestRounds(t *testing.T) {
	const k = 3
	g, err := New(Config{Seed: 5, Mix: Mix{Anchored: 1}, Concurrent: 2, Rolls: 2, Moves: true, RealBeacons: true, BeaconGamesPerRound: k})
	if err != nil {
		t.Fatal(err)
	}
	if g.BeaconGamesPerRound() != k {
		t.Errorf("BeaconGamesPerRound %d", g.BeaconGamesPerRound())
	}
	if BenchChain().Hash() == drand.Quicknet().Hash() || bytes.Equal(BenchChain().Params().PublicKey, drand.Quicknet().Params().PublicKey) {
		t.Fatal("BenchChain is quicknet")
	}
	if c, ok := Chains(drand.Quicknet().Hash()); !ok || c != drand.Quicknet() {
		t.Error("Chains does not resolve quicknet")
	}
	if _, ok := Chains(FakeChainHash); ok {
		t.Error("Chains resolves the fake chain")
	}
	rounds, _ := QuicknetRecorded()
	type anchor struct {
		chain [32]byte
		round uint64
	}
	var want []anchor
	for _, r := range rounds {
		want = append(want, anchor{drand.Quicknet().Hash(), r})
	}
	for r := uint64(1); r <= 3; r++ {
		want = append(want, anchor{BenchChain().Hash(), r})
	}
	var got []anchor
	for len(got) < k*len(want) {
		evs, err := g.Game()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Type != events.TypeBeacon {
				continue
			}
			ev, err := events.Parse(e.Data)
			if err != nil {
				t.Fatal(err)
			}
			b := ev.Body.(events.Beacon)
			c, ok := Chains(b.Chain)
			if !ok {
				t.Fatalf("game %d: unknown chain %x", len(got), b.Chain)
			}
			if err := c.VerifyBeacon(b.Round, b.Signature, b.Randomness); err != nil {
				t.Fatalf("game %d: %v", len(got), err)
			}
			got = append(got, anchor{b.Chain, b.Round})
		}
	}
	for i, a := range got {
		if a != want[i/k] {
			t.Errorf("anchored game %d: chain %x round %d, want chain %x round %d", i, a.chain[:4], a.round, want[i/k].chain[:4], want[i/k].round)
		}
	}
}

// TestGameStream: games made as their events are asked for (Stream),
// stepped one event at a time in an interleaved order, are valid games
// (every event parses, verifies and follows its game's history under the
// production checks, and every game closes verified), are the same games
// whatever order they are stepped in, and have the shape of Game's games
// (their mean length within a fifth of theirs).
func TestGameStream(t *testing.T) {
	cfg := Config{Seed: 11, Moves: true, RealBeacons: true, BeaconGamesPerRound: 3}
	const n = 40
	streams := func() []*GameStream {
		g, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]*GameStream, n)
		for i := range out {
			if out[i], err = g.Stream(); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	// Interleaved: one event of each game in turn, the games in a
	// rotating order.
	interleaved := map[string][][]byte{}
	games := map[string]*events.Game{}
	env := events.Env{Beacons: events.BeaconsOf(Chains), Moves: movecheck.Checker{}, Now: QuicknetStart.Add(time.Hour)}
	g0, _ := New(cfg)
	open := streams()
	total := 0
	for round := 0; len(open) > 0; round++ {
		var still []*GameStream
		for j := range open {
			s := open[(j+round)%len(open)]
			e, ok, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				continue
			}
			still = append(still, s)
			ev, err := events.Parse(e.Data)
			if err != nil {
				t.Fatalf("%s: %v", e.ID, err)
			}
			if err := events.Verify(ev, g0.Keyring()); err != nil {
				t.Fatalf("%s: %v", e.ID, err)
			}
			if ev.ID != e.ID || ev.Game != e.Game || (ev.Sig != nil) != e.Signed || ev.Type != e.Type {
				t.Fatalf("%+v does not describe %s", e, e.Data)
			}
			env.Emitter, env.Index = e.Emitter, uint64(total)
			if games[ev.Game], err = events.Apply(games[ev.Game], ev, env); err != nil {
				t.Fatalf("%s (%s %s seq %d): %v", e.ID, ev.Scheme, ev.Type, ev.Seq, err)
			}
			interleaved[e.Game] = append(interleaved[e.Game], e.Data)
			total++
		}
		open = still
	}
	if len(games) != n {
		t.Fatalf("%d games, want %d", len(games), n)
	}
	for id, gm := range games {
		if !gm.Closed || gm.Status != events.StatusVerified {
			t.Errorf("game %s: closed %v, %s", id, gm.Closed, gm.Status)
		}
	}
	// The same games, each drained whole, last first.
	again := streams()
	for i := len(again) - 1; i >= 0; i-- {
		var got [][]byte
		for {
			e, ok, err := again[i].Next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			got = append(got, e.Data)
			if want := interleaved[e.Game]; len(got) > len(want) || !bytes.Equal(got[len(got)-1], want[len(got)-1]) {
				t.Fatalf("game %s event %d differs with the order the games are stepped in", e.Game, len(got)-1)
			}
		}
	}
	// The shape: Game's games of the same configuration.
	whole := 0
	for range n {
		evs, err := g0.Game()
		if err != nil {
			t.Fatal(err)
		}
		whole += len(evs)
	}
	if r := float64(total) / float64(whole); r < 0.8 || r > 1.25 {
		t.Errorf("%d events in %d streamed games, %d in as many whole ones", total, n, whole)
	}
	t.Logf("%d games: %d events streamed, %d whole", n, total, whole)
}
