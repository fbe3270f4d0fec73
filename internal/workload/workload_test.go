package workload

import (
	"bytes"
	"testing"
	"time"

	"github.com/zarlog/zarlog/events"
)

// TestStream checks that every event of a stream of each mix parses,
// verifies and follows its game's history, that the stream is
// deterministic, and that its games finish verified.
func TestStream(t *testing.T) {
	for _, name := range MixNames() {
		t.Run(name, func(t *testing.T) {
			mix, err := ParseMix(name)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Seed: 7, Mix: mix, Concurrent: 8, Rolls: 12}
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
			verified := 0
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
				env := events.Env{Emitter: e.Emitter, Index: uint64(i), Now: time.Now(), Beacons: Beacons}
				ng, err := events.Apply(games[ev.Game], ev, env)
				if err != nil {
					t.Fatalf("event %d (%s %s seq %d): %v", i, ev.Scheme, ev.Type, ev.Seq, err)
				}
				games[ev.Game] = ng
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
			n, mean, signed := Stats(evs)
			t.Logf("%s: %d events, %.0f bytes on average, %.1f%% signed, %d games finished", name, n, mean, 100*signed, verified)
		})
	}
}
