package sdk

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/drand"
)

// A BeaconSource supplies drand beacons for anchored-v1 games.
//
// Beacon returns the beacon of round on the chain with hash chain. It
// returns an error wrapping ErrBeaconNotYet if the round is not published
// yet (the caller asks again later), one wrapping ErrBadBeacon if what it
// got does not verify, and other errors when it cannot answer. A beacon it
// returns should be verified (the implementations here verify every beacon
// against the pinned chain), but callers verify it again before use:
// AnchoredGame.RecordBeacon does. Implementations must be safe for
// concurrent use.
type BeaconSource interface {
	Beacon(ctx context.Context, chain [32]byte, round uint64) (events.Beacon, error)
}

// Beacon errors.
var (
	// ErrBeaconNotYet: the round is not published yet.
	ErrBeaconNotYet = errors.New("drand round not published yet")
	// ErrBadBeacon: a beacon that does not verify against the pinned
	// chain (wrong signature, randomness, round or chain).
	ErrBadBeacon = errors.New("beacon does not verify")
	// ErrNoBeacon: the source does not have the round, and never will
	// (a recorded set without it).
	ErrNoBeacon = errors.New("beacon not available from this source")
)

// verifyBeacon checks b against the pinned chain named chain, as the beacon
// of round.
func verifyBeacon(b events.Beacon, chain [32]byte, round uint64) error {
	if b.Chain != chain || b.Round != round {
		return fmt.Errorf("%w: it is round %d of chain %x, want round %d of chain %x", ErrBadBeacon, b.Round, b.Chain[:4], round, chain[:4])
	}
	c, ok := drand.ChainByHash(chain)
	if !ok {
		return fmt.Errorf("%w: %w: %x", ErrBadBeacon, drand.ErrUnknownChain, chain)
	}
	if err := c.VerifyBeacon(round, b.Signature, b.Randomness); err != nil {
		return fmt.Errorf("%w: round %d: %w", ErrBadBeacon, round, err)
	}
	return nil
}

// RecordedBeacons is a BeaconSource holding a fixed set of beacons, each
// verified when it was added: for tests, demos and offline machines.
type RecordedBeacons struct {
	m map[beaconKey]events.Beacon
}

type beaconKey struct {
	chain [32]byte
	round uint64
}

// NewRecordedBeacons returns a source of the given beacons, after verifying
// each against the pinned chain it names. It refuses a beacon that does not
// verify (ErrBadBeacon).
func NewRecordedBeacons(bs ...events.Beacon) (*RecordedBeacons, error) {
	r := &RecordedBeacons{m: make(map[beaconKey]events.Beacon, len(bs))}
	for _, b := range bs {
		if err := verifyBeacon(b, b.Chain, b.Round); err != nil {
			return nil, fmt.Errorf("sdk: recorded beacon: %w", err)
		}
		b.Signature = bytes.Clone(b.Signature)
		r.m[beaconKey{b.Chain, b.Round}] = b
	}
	return r, nil
}

// Beacon returns the recorded beacon, or an error wrapping ErrNoBeacon.
func (r *RecordedBeacons) Beacon(ctx context.Context, chain [32]byte, round uint64) (events.Beacon, error) {
	b, ok := r.m[beaconKey{chain, round}]
	if !ok {
		return events.Beacon{}, fmt.Errorf("sdk: round %d of chain %x: %w", round, chain[:4], ErrNoBeacon)
	}
	b.Signature = bytes.Clone(b.Signature)
	return b, nil
}

// quicknetRecorded are four real quicknet beacons (docs/SCHEMES.md §6,
// shared/spec/DRAND.md): rounds 8, 10, 123 and 657413.
var quicknetRecorded = []struct {
	round uint64
	sig   string
}{
	{8, "a0c06b9964123d2e6036aa004c140fc301f4edd3ea6b8396a15dfd7dfd70cc0dce0b4a97245995767ab72cf59de58c47"},
	{10, "ac415e508c484053efed1c6c330e3ae0bf20185b66ed088864dac1ff7d6f927610824986390d3239dac4dd73e6f865f5"},
	{123, "b75c69d0b72a5d906e854e808ba7e2accb1542ac355ae486d591aa9d43765482e26cd02df835d3546d23c4b13e0dfc92"},
	{657413, "b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b"},
}

// QuicknetRounds lists the rounds of the real quicknet beacons that
// QuicknetBeacons holds.
func QuicknetRounds() []uint64 {
	out := make([]uint64, len(quicknetRecorded))
	for i, b := range quicknetRecorded {
		out[i] = b.round
	}
	return out
}

// QuicknetBeacons returns a source of four real quicknet beacons (rounds 8,
// 10, 123 and 657413, docs/SCHEMES.md §6), verified. A game anchored to one
// of them must have been sealed before its time: tests with an injected
// clock.
func QuicknetBeacons() *RecordedBeacons {
	chain := drand.Quicknet()
	bs := make([]events.Beacon, len(quicknetRecorded))
	for i, q := range quicknetRecorded {
		sig, err := hex.DecodeString(q.sig)
		if err != nil {
			panic("sdk: recorded beacon: " + err.Error()) // a constant above
		}
		bs[i] = events.Beacon{Chain: chain.Hash(), Round: q.round, Signature: sig, Randomness: drand.Randomness(sig)}
	}
	r, err := NewRecordedBeacons(bs...)
	if err != nil {
		panic(err.Error()) // the constants above are real beacons (tested)
	}
	return r
}

// RelayAPI selects a drand HTTP relay API version.
type RelayAPI int

const (
	// RelayV1 is the v1 API every relay serves:
	// GET /{chainhash}/public/{round} →
	// {"round": r, "randomness": hex, "signature": hex, …}.
	RelayV1 RelayAPI = 1
	// RelayV2 is the v2 API: GET /v2/chains/{chainhash}/rounds/{round} →
	// {"round": r, "signature": hex}; the randomness is derived,
	// SHA-256(signature).
	RelayV2 RelayAPI = 2
)

// maxRelayBody bounds a relay's answer; a beacon is a few hundred bytes.
const maxRelayBody = 64 << 10

// RelayConfig configures a Relay. Every field's zero value is documented.
type RelayConfig struct {
	// URLs are the relays' base URLs (such as "https://relay.example"),
	// tried in order until one serves a beacon that verifies. Required.
	URLs []string
	// API is the relay API. Zero means RelayV1.
	API RelayAPI
	// HTTP is the client the requests go through. Nil means a client with
	// a 10 s timeout (not http.DefaultClient).
	HTTP *http.Client
}

// A Relay is a BeaconSource that fetches beacons from drand HTTP relays and
// verifies each against the pinned chain before returning it: a relay is
// not trusted, and one that serves a bad beacon is skipped for the next.
// It is safe for concurrent use.
type Relay struct {
	urls []*url.URL
	api  RelayAPI
	hc   *http.Client
}

// NewRelay returns a Relay.
func NewRelay(cfg RelayConfig) (*Relay, error) {
	if len(cfg.URLs) == 0 {
		return nil, errors.New("sdk: RelayConfig.URLs is empty")
	}
	r := &Relay{api: cfg.API, hc: cfg.HTTP}
	if r.api == 0 {
		r.api = RelayV1
	}
	if r.api != RelayV1 && r.api != RelayV2 {
		return nil, fmt.Errorf("sdk: relay API %d (want 1 or 2)", cfg.API)
	}
	if r.hc == nil {
		r.hc = &http.Client{Timeout: 10 * time.Second}
	}
	for _, s := range cfg.URLs {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("sdk: relay URL %q is not an http(s) URL", s)
		}
		r.urls = append(r.urls, u)
	}
	return r, nil
}

// relayBeacon is what v1 and v2 relays answer (v2 has no randomness).
type relayBeacon struct {
	Round      *uint64 `json:"round"`
	Randomness *string `json:"randomness"`
	Signature  *string `json:"signature"`
}

// Beacon fetches round from the relays in turn and returns the first beacon
// that verifies. If none does, the error joins every relay's (one wraps
// ErrBeaconNotYet if a relay said the round is not there yet: 404 or 425).
func (r *Relay) Beacon(ctx context.Context, chain [32]byte, round uint64) (events.Beacon, error) {
	if _, ok := drand.ChainByHash(chain); !ok {
		return events.Beacon{}, fmt.Errorf("sdk: %w: %x", drand.ErrUnknownChain, chain)
	}
	var errs []error
	for _, u := range r.urls {
		b, err := r.fetch(ctx, u, chain, round)
		if err == nil {
			return b, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return events.Beacon{}, fmt.Errorf("sdk: drand round %d: %w", round, errors.Join(errs...))
}

func (r *Relay) fetch(ctx context.Context, base *url.URL, chain [32]byte, round uint64) (events.Beacon, error) {
	h, n := hex.EncodeToString(chain[:]), strconv.FormatUint(round, 10)
	var path string
	switch r.api {
	case RelayV2:
		path = "v2/chains/" + h + "/rounds/" + n
	default:
		path = h + "/public/" + n
	}
	u := base.JoinPath(path)
	where := u.Redacted()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return events.Beacon{}, fmt.Errorf("relay %s: %w", where, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.hc.Do(req)
	if err != nil {
		return events.Beacon{}, fmt.Errorf("relay %s: %w", where, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRelayBody+1))
	if err != nil {
		return events.Beacon{}, fmt.Errorf("relay %s: reading the answer: %w", where, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusTooEarly:
		return events.Beacon{}, fmt.Errorf("relay %s: HTTP %d: %w", where, resp.StatusCode, ErrBeaconNotYet)
	case resp.StatusCode != http.StatusOK:
		return events.Beacon{}, fmt.Errorf("relay %s: HTTP %d", where, resp.StatusCode)
	case len(body) > maxRelayBody:
		return events.Beacon{}, fmt.Errorf("relay %s: the answer exceeds %d bytes", where, maxRelayBody)
	}
	var rb relayBeacon
	if err := json.Unmarshal(body, &rb); err != nil {
		return events.Beacon{}, fmt.Errorf("relay %s: %w: the answer is not a beacon: %w", where, ErrBadBeacon, err)
	}
	if rb.Round == nil || rb.Signature == nil {
		return events.Beacon{}, fmt.Errorf("relay %s: %w: the answer lacks the round or the signature", where, ErrBadBeacon)
	}
	sig, err := hex.DecodeString(*rb.Signature)
	if err != nil || len(sig) == 0 || len(sig) > events.MaxBeaconSignature {
		return events.Beacon{}, fmt.Errorf("relay %s: %w: signature %q is not 1 to %d bytes of hex", where, ErrBadBeacon, truncateString(*rb.Signature, 40), events.MaxBeaconSignature)
	}
	b := events.Beacon{Chain: chain, Round: *rb.Round, Signature: sig, Randomness: drand.Randomness(sig)}
	if rb.Randomness != nil && r.api == RelayV1 {
		// v1 relays send the randomness: it must be SHA-256(signature).
		got, err := hex.DecodeString(*rb.Randomness)
		if err != nil || !bytes.Equal(got, b.Randomness[:]) {
			return events.Beacon{}, fmt.Errorf("relay %s: %w: round %d: randomness %q is not SHA-256 of the signature", where, ErrBadBeacon, *rb.Round, truncateString(*rb.Randomness, 64))
		}
	}
	if err := verifyBeacon(b, chain, round); err != nil {
		return events.Beacon{}, fmt.Errorf("relay %s: %w", where, err)
	}
	return b, nil
}

func truncateString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
