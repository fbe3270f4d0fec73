package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/drand"
)

// recordedRound is a real quicknet round, and recordedBeacon returns its
// signature and a forgery of it (one bit flipped).
const recordedRound = 657413

func recordedBeacon() (sig, forged []byte) {
	sig, _ = hex.DecodeString("b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b")
	forged = append([]byte(nil), sig...)
	forged[7] ^= 1
	return sig, forged
}

// TestBeaconCache: anchored-v1 games anchored to the same quicknet round
// cost one BLS pairing check between them (zarlog_ledger_beacon_checks_total
// counts how each beacon was checked); a forged signature for that round,
// offered after the real one is cached, is checked in full and refused,
// every time; with the cache off every beacon is checked in full.
func TestBeaconCache(t *testing.T) {
	const round = recordedRound
	sig, forged := recordedBeacon()
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

// stackVerifier is a pinned chain's verifier that counts its signature
// checks and those made from the sequencer's goroutine (a frame of
// ledger.(*sequencer) on the stack).
type stackVerifier struct {
	events.BeaconVerifier
	mu           sync.Mutex
	calls, inSeq int
}

func (v *stackVerifier) Verify(round uint64, sig []byte) ([32]byte, error) {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(1, pcs)])
	seq := false
	for {
		f, more := frames.Next()
		seq = seq || strings.Contains(f.Function, "ledger.(*sequencer)")
		if !more {
			break
		}
	}
	v.mu.Lock()
	v.calls++
	if seq {
		v.inSeq++
	}
	v.mu.Unlock()
	return v.BeaconVerifier.Verify(round, sig)
}

// TestBeaconCheckedBeforeSequencer: a beacon's BLS check (a pairing check,
// about a millisecond) runs with the checks that need no sequencing, in
// parallel, never in the sequencer, which every event of the log waits for;
// the sequencer still decides, in order, what the game allows, with the
// same outcomes: a real beacon appended, a forged one refused for its
// signature, one naming another round refused for its round, a second
// beacon refused as not allowed now.
func TestBeaconCheckedBeforeSequencer(t *testing.T) {
	const round = recordedRound
	sig, forged := recordedBeacon()
	q := drand.Quicknet()
	chain, roundTime := q.Hash(), q.RoundTime(round)
	v := &stackVerifier{BeaconVerifier: q}
	e := newTestEnv(t)
	e.cfg.Beacons = func(h [32]byte) (events.BeaconVerifier, bool) { return v, h == chain }
	e.cfg.BeaconCache = -1
	e.clock.t = roundTime.Add(-time.Minute)
	l := e.open()
	h := func(game string, seq uint64) events.Header {
		return events.Header{Scheme: events.Anchored, Game: game, Seq: seq, Emitter: emitterA}
	}
	beacon := func(game string, seq, r uint64, s []byte) []byte {
		return mkEvent(t, e.k, h(game, seq), events.Beacon{Chain: chain, Randomness: sha256.Sum256(s), Round: r, Signature: s}, nil)
	}
	var evs [][]byte
	for _, g := range []string{"a", "b", "c"} {
		c, err := events.NewAnchoredCommit("m-"+g, 1, events.AnchorRef{Chain: chain, Round: round}, roundTime.Add(-2*time.Minute), []byte(`{"opening":"western"}`), seed32(g))
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, mkEvent(t, e.k, h(g, 0), c, nil),
			mkEvent(t, e.k, h(g, 1), events.TokenContribution{Seat: 0, Token: "a"}, nil),
			mkEvent(t, e.k, h(g, 2), events.TokenContribution{Seat: 1, Token: "b"}, nil))
	}
	appendAll(t, l, evs, 9)
	// One Append, so the four beacons are checked together, then
	// sequenced in order.
	outs := mustAppend(t, l, inputs(t,
		beacon("a", 3, round, sig),      // appended
		beacon("b", 3, round, forged),   // refused: its signature
		beacon("c", 3, round+1, forged), // refused: its round is not the commit's
		beacon("a", 4, round, sig),      // refused: a's beacon is logged
	))
	want := []struct {
		result Result
		code   events.Code
		field  string
	}{{Appended, "", ""}, {Rejected, events.CodeBadBeacon, "body.signature"}, {Rejected, events.CodeBadBeacon, "body.round"}, {Rejected, events.CodeNotAllowedNow, "type"}}
	for i, w := range want {
		o := outs[i]
		if o.Result != w.result || (w.code != "" && (o.Reject == nil || o.Reject.Code != w.code || o.Reject.Field != w.field)) {
			t.Errorf("beacon %d: %v %+v, want %v %s %s", i, o.Result, o.Reject, w.result, w.code, w.field)
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.calls != 4 || v.inSeq != 0 {
		t.Errorf("%d signature checks, %d of them in the sequencer; want 4 (one a beacon event), none there", v.calls, v.inSeq)
	}
}
