package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/drand"
)

// TestBeaconCache: anchored-v1 games anchored to the same quicknet round
// cost one BLS pairing check between them (zarlog_ledger_beacon_checks_total
// counts how each beacon was checked); a forged signature for that round,
// offered after the real one is cached, is checked in full and refused,
// every time; with the cache off every beacon is checked in full.
func TestBeaconCache(t *testing.T) {
	const (
		round  = 657413
		sigHex = "b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b"
	)
	sig, _ := hex.DecodeString(sigHex)
	forged := append([]byte(nil), sig...)
	forged[7] ^= 1
	chain := drand.Quicknet().Hash()
	roundTime := drand.Quicknet().RoundTime(round)
	for _, cacheOn := range []bool{true, false} {
		t.Run(fmt.Sprintf("cache=%v", cacheOn), func(t *testing.T) {
			e := newTestEnv(t)
			e.cfg.Beacons = nil // the pinned chains
			reg := prometheus.NewRegistry()
			e.cfg.Metrics = reg
			if !cacheOn {
				e.cfg.BeaconCache = -1
			}
			e.clock.t = roundTime.Add(-time.Minute) // commits before the round exists
			l := e.open()
			game := func(name string) (setup [][]byte, beacon func(sig []byte) []byte) {
				c, err := events.NewAnchoredCommit("m-"+name, 1, events.AnchorRef{Chain: chain, Round: round}, roundTime.Add(-2*time.Minute), []byte(`{"opening":"western"}`), seed32(name))
				if err != nil {
					t.Fatal(err)
				}
				h := func(seq uint64) events.Header {
					return events.Header{Scheme: events.Anchored, Game: name, Seq: seq, Emitter: emitterA}
				}
				setup = [][]byte{
					mkEvent(t, e.k, h(0), c, nil),
					mkEvent(t, e.k, h(1), events.TokenContribution{Seat: 0, Token: "a"}, nil),
					mkEvent(t, e.k, h(2), events.TokenContribution{Seat: 1, Token: "b"}, nil),
				}
				return setup, func(s []byte) []byte {
					return mkEvent(t, e.k, h(3), events.Beacon{Chain: chain, Randomness: sha256.Sum256(s), Round: round, Signature: s}, nil)
				}
			}
			var beacons []func([]byte) []byte
			for i := range 3 {
				setup, b := game(fmt.Sprintf("g%d", i))
				appendAll(t, l, setup, 3)
				beacons = append(beacons, b)
			}
			accept := func(ev []byte) {
				t.Helper()
				if out := mustAppend(t, l, inputs(t, ev))[0]; out.Result != Appended {
					t.Fatalf("a real beacon: %+v %v", out, out.Reject)
				}
			}
			refuse := func(ev []byte) {
				t.Helper()
				if out := mustAppend(t, l, inputs(t, ev))[0]; out.Result != Rejected || out.Reject.Code != events.CodeBadBeacon {
					t.Fatalf("a forged beacon: %+v %v", out, out.Reject)
				}
			}
			accept(beacons[0](sig))    // checked
			accept(beacons[1](sig))    // cached
			refuse(beacons[2](forged)) // checked, refused
			refuse(beacons[2](forged)) // checked again, refused again
			accept(beacons[2](sig))    // cached
			got := map[string]float64{}
			families, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range families {
				if f.GetName() == "zarlog_ledger_beacon_checks_total" {
					for _, m := range f.GetMetric() {
						got[m.GetLabel()[0].GetValue()] = value(m)
					}
				}
			}
			want := map[string]float64{"cached": 2, "pairing": 3}
			if !cacheOn {
				want = map[string]float64{} // no cache, no counter
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("beacon checks %v, want %v", got, want)
			}
			for i := range 3 {
				g, err := l.Game(context.Background(), fmt.Sprintf("g%d", i))
				if err != nil || g.Beacon == nil || g.Beacon.Randomness != sha256.Sum256(sig) {
					t.Errorf("game %d: %+v, %v", i, g, err)
				}
			}
		})
	}
}
