package sdk_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/sdk"
)

// TestQuicknetBeacons: the four recorded beacons are the real ones of
// docs/SCHEMES.md §6 and verify; other rounds are not there.
func TestQuicknetBeacons(t *testing.T) {
	ctx := context.Background()
	src := sdk.QuicknetBeacons()
	chain := drand.Quicknet()
	rounds := sdk.QuicknetRounds()
	if len(rounds) != 4 {
		t.Fatalf("%d recorded rounds", len(rounds))
	}
	for _, r := range rounds {
		b, err := src.Beacon(ctx, chain.Hash(), r)
		if err != nil {
			t.Fatal(err)
		}
		if err := chain.VerifyBeacon(r, b.Signature, b.Randomness); err != nil {
			t.Errorf("round %d: %v", r, err)
		}
	}
	if _, err := src.Beacon(ctx, chain.Hash(), 9); !errors.Is(err, sdk.ErrNoBeacon) {
		t.Errorf("round 9: %v", err)
	}
	b, _ := src.Beacon(ctx, chain.Hash(), 8)
	b.Signature[0] ^= 1
	if _, err := sdk.NewRecordedBeacons(b); !errors.Is(err, sdk.ErrBadBeacon) {
		t.Errorf("a tampered recorded beacon: %v", err)
	}
}

// relayServer serves the recorded quicknet beacons as a drand relay would
// (v1 and v2 paths), passing each answer through tamper.
func relayServer(t *testing.T, tamper func(round uint64, sig, rnd string) (string, string, uint64)) *httptest.Server {
	t.Helper()
	src := sdk.QuicknetBeacons()
	chain := drand.Quicknet()
	ch := chain.Hash()
	h := hex.EncodeToString(ch[:])
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var round uint64
		var v2 bool
		switch {
		case strings.HasPrefix(r.URL.Path, "/"+h+"/public/"):
			fmt.Sscan(strings.TrimPrefix(r.URL.Path, "/"+h+"/public/"), &round)
		case strings.HasPrefix(r.URL.Path, "/v2/chains/"+h+"/rounds/"):
			fmt.Sscan(strings.TrimPrefix(r.URL.Path, "/v2/chains/"+h+"/rounds/"), &round)
			v2 = true
		default:
			http.NotFound(w, r)
			return
		}
		b, err := src.Beacon(r.Context(), chain.Hash(), round)
		if err != nil {
			if v2 {
				w.WriteHeader(http.StatusTooEarly)
				return
			}
			http.NotFound(w, r)
			return
		}
		sig, rnd, rr := hex.EncodeToString(b.Signature), hex.EncodeToString(b.Randomness[:]), round
		if tamper != nil {
			sig, rnd, rr = tamper(round, sig, rnd)
		}
		w.Header().Set("Content-Type", "application/json")
		if v2 {
			fmt.Fprintf(w, `{"round":%d,"signature":%q}`, rr, sig)
			return
		}
		fmt.Fprintf(w, `{"round":%d,"randomness":%q,"signature":%q,"previous_signature":""}`, rr, rnd, sig)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRelay: beacons fetched over HTTP (v1 and v2) verify; a relay serving a
// tampered beacon is refused with ErrBadBeacon and the next relay is used;
// an unpublished round is ErrBeaconNotYet.
func TestRelay(t *testing.T) {
	ctx := context.Background()
	chain := drand.Quicknet().Hash()
	honest := relayServer(t, nil)
	flip := func(s string) string {
		b, _ := hex.DecodeString(s)
		b[len(b)-1] ^= 1
		return hex.EncodeToString(b)
	}
	bad := map[string]*httptest.Server{
		"flipped-signature": relayServer(t, func(r uint64, sig, rnd string) (string, string, uint64) { return flip(sig), rnd, r }),
		"other-round": relayServer(t, func(r uint64, sig, rnd string) (string, string, uint64) {
			o, _ := sdk.QuicknetBeacons().Beacon(ctx, chain, 10)
			return hex.EncodeToString(o.Signature), hex.EncodeToString(o.Randomness[:]), r
		}),
		"round-mislabelled": relayServer(t, func(r uint64, sig, rnd string) (string, string, uint64) { return sig, rnd, r + 1 }),
		"wrong-randomness":  relayServer(t, func(r uint64, sig, rnd string) (string, string, uint64) { return sig, flip(rnd), r }),
		"not-hex":           relayServer(t, func(r uint64, sig, rnd string) (string, string, uint64) { return "zz" + sig, rnd, r }),
	}
	for _, api := range []sdk.RelayAPI{sdk.RelayV1, sdk.RelayV2} {
		relay, err := sdk.NewRelay(sdk.RelayConfig{URLs: []string{honest.URL}, API: api, HTTP: honest.Client()})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range sdk.QuicknetRounds() {
			b, err := relay.Beacon(ctx, chain, r)
			if err != nil {
				t.Fatalf("v%d round %d: %v", api, r, err)
			}
			if b.Round != r || b.Chain != chain || b.Randomness != drand.Randomness(b.Signature) {
				t.Errorf("v%d round %d: %+v", api, r, b)
			}
		}
		if _, err := relay.Beacon(ctx, chain, 11); !errors.Is(err, sdk.ErrBeaconNotYet) {
			t.Errorf("v%d unpublished round: %v, want ErrBeaconNotYet", api, err)
		}
		for name, srv := range bad {
			if name == "wrong-randomness" && api == sdk.RelayV2 {
				continue // v2 answers carry no randomness
			}
			relay, _ := sdk.NewRelay(sdk.RelayConfig{URLs: []string{srv.URL}, API: api, HTTP: srv.Client()})
			if _, err := relay.Beacon(ctx, chain, 123); !errors.Is(err, sdk.ErrBadBeacon) {
				t.Errorf("v%d %s: %v, want ErrBadBeacon", api, name, err)
			}
			// With an honest relay after it, the honest beacon is used.
			both, _ := sdk.NewRelay(sdk.RelayConfig{URLs: []string{srv.URL, honest.URL}, API: api})
			if b, err := both.Beacon(ctx, chain, 123); err != nil || verify(b) != nil {
				t.Errorf("v%d %s then honest: %v", api, name, err)
			}
		}
	}
	for _, urls := range [][]string{nil, {"ftp://x"}, {"not a url"}} {
		if _, err := sdk.NewRelay(sdk.RelayConfig{URLs: urls}); err == nil {
			t.Errorf("NewRelay(%q) succeeded", urls)
		}
	}
}

func verify(b events.Beacon) error {
	return drand.Quicknet().VerifyBeacon(b.Round, b.Signature, b.Randomness)
}

// TestAnchoredGameRefusesTamperedBeacon: a game asking a tampered relay
// does not log its beacon.
func TestAnchoredGameRefusesTamperedBeacon(t *testing.T) {
	ctx := testCtx(t)
	s := newStack(t, stackOpts{start: anchoredStart()})
	g, err := s.backend.NewAnchored(ctx, sdk.AnchoredSpec{MatchID: "m", Settings: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	g.Token(ctx, 0, "a")
	if err := g.Token(ctx, 1, "b"); err != nil {
		t.Fatal(err)
	}
	s.clock.Set(g.AnchorTime())
	srv := relayServer(t, func(r uint64, sig, rnd string) (string, string, uint64) {
		return strings.Replace(sig, sig[10:12], "00", 1), rnd, r
	})
	relay, _ := sdk.NewRelay(sdk.RelayConfig{URLs: []string{srv.URL}, API: sdk.RelayV2})
	if err := g.RecordBeacon(ctx, relay); !errors.Is(err, sdk.ErrBadBeacon) {
		t.Fatalf("RecordBeacon from a tampered relay: %v, want ErrBadBeacon", err)
	}
	if _, err := g.Roll(ctx); !errors.Is(err, sdk.ErrNotNow) {
		t.Errorf("a roll without the beacon: %v", err)
	}
	leaves, _ := g.Leaves(ctx)
	if len(leaves) != 3 {
		t.Errorf("%d events, want the commit and the tokens", len(leaves))
	}
}
