package events

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
)

// Values of the worked examples of DICE.md §2 and §4.
const (
	exGame       = "00112233-4455-6677-8899-aabbccddeeff"
	exSeat0      = "10000000-0000-4000-8000-000000000000"
	exSeat1      = "20000000-0000-4000-8000-000000000000"
	exSettings   = `{"rulesVersion":"tavla-1","variant":"portes","matchLength":5,"opening":"turkish-reroll","doublingCube":false}`
	exCommitment = "2b2432fd9fb286c84f19b35297ab6ff81a51fbd05295b96a66ff46e7c27bc0cf"
	exRollID     = "30000000-0000-4000-8000-000000000001"
	exRollCommit = "4d8d274ff7e176af977a95a0055c8c5f3478d38640343a060cee893e56f39957"
)

// drand quicknet (DRAND.md) and one of its real beacons.
const (
	quicknetHash    = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"
	quicknetGenesis = 1692803367
	quicknetPeriod  = 3
	beaconRound     = 657413
	beaconSig       = "b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b"
	beaconRand      = "fc1873a13f3545aeade8401532ef5519920652eee6b0d2b19ca12643b87b3587"
)

const emitter = "tavla-east"

func seq32(start byte) (b [32]byte) {
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

func h32(t testing.TB, s string) (b [32]byte) {
	t.Helper()
	if n, err := hex.Decode(b[:], []byte(s)); err != nil || n != 32 {
		t.Fatalf("bad hex32 %q: %v", s, err)
	}
	return b
}

func hexBytes(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func uuid(t testing.TB, s string) dice.UUID {
	t.Helper()
	u, err := dice.ParseUUID(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// testKey returns a deterministic emitter key pair as C2SP signed-note keys.
func testKey(t testing.TB, name string, seed byte) (note.Signer, string) {
	t.Helper()
	ks := seq32(seed)
	priv := ed25519.NewKeyFromSeed(ks[:])
	vkey, err := note.NewEd25519VerifierKey(name, priv.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	hash := strings.Split(vkey, "+")[1]
	skey := fmt.Sprintf("PRIVATE+KEY+%s+%s+%s", name, hash, base64.StdEncoding.EncodeToString(append([]byte{1}, priv.Seed()...)))
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return s, vkey
}

// fakeChain is a BeaconVerifier for quicknet that knows one real beacon.
type fakeChain struct {
	genesis time.Time
	period  time.Duration
	sigs    map[uint64][]byte
}

func newFakeChain(t testing.TB) *fakeChain {
	sig := hexBytes(t, beaconSig)
	if sha256.Sum256(sig) != h32(t, beaconRand) {
		t.Fatal("test beacon: randomness is not SHA-256 of the signature")
	}
	return &fakeChain{genesis: time.Unix(quicknetGenesis, 0), period: quicknetPeriod * time.Second, sigs: map[uint64][]byte{beaconRound: sig}}
}

var errBadBeaconSig = errors.New("beacon signature does not verify")

func (c *fakeChain) Verify(round uint64, sig []byte) ([32]byte, error) {
	if want, ok := c.sigs[round]; !ok || string(want) != string(sig) {
		return [32]byte{}, errBadBeaconSig
	}
	return sha256.Sum256(sig), nil
}

func (c *fakeChain) RoundTime(round uint64) time.Time {
	return c.genesis.Add(time.Duration(round-1) * c.period)
}

func (c *fakeChain) ExistedAt(round uint64, t time.Time) bool { return !t.Before(c.RoundTime(round)) }

// fixture holds the keys and clocks of the test games.
type fixture struct {
	signer  note.Signer
	keyring *Keyring
	chain   *fakeChain
	start   time.Time // the time of every game's commit
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	s, vkey := testKey(t, emitter, 0x11)
	_, other := testKey(t, "other", 0x22)
	kr, err := NewKeyring(vkey, other)
	if err != nil {
		t.Fatal(err)
	}
	chain := newFakeChain(t)
	// One minute before the beacon round: every game's commit is appended
	// then, so the anchored game's round did not exist yet.
	return &fixture{signer: s, keyring: kr, chain: chain, start: chain.RoundTime(beaconRound).Add(-time.Minute)}
}

func (f *fixture) chains(h [32]byte) (*fakeChain, bool) {
	if hex.EncodeToString(h[:]) == quicknetHash {
		return f.chain, true
	}
	return nil, false
}

// env returns the environment the ledger would give event ev appended at
// log index i: one second per event after the fixture's start.
func (f *fixture) env(ev *Event, i uint64) Env {
	return Env{
		Emitter: ev.Emitter,
		Now:     f.start.Add(time.Duration(ev.Seq) * time.Second),
		Index:   i,
		Beacons: BeaconsOf(f.chains),
	}
}

// builder builds the events of one game, seq by seq.
type builder struct {
	t       testing.TB
	f       *fixture
	scheme  Scheme
	game    string
	emitter string
	seq     uint64
	events  []*Event
}

func (f *fixture) builder(t testing.TB, scheme Scheme, game string) *builder {
	return &builder{t: t, f: f, scheme: scheme, game: game, emitter: emitter}
}

func (b *builder) header() Header {
	return Header{Scheme: b.scheme, Game: b.game, Seq: b.seq, Emitter: b.emitter,
		Time: b.f.start.Add(time.Duration(b.seq)*time.Second + 123*time.Millisecond + 456*time.Microsecond)}
}

func (b *builder) add(body Body) *Event {
	b.t.Helper()
	ev, err := NewSigned(b.header(), body, b.f.signer)
	if err != nil {
		b.t.Fatalf("seq %d: %v", b.seq, err)
	}
	b.seq++
	b.events = append(b.events, ev)
	return ev
}

// tavlarenaGame is a full tavlarena-v1 game built on DICE.md's worked
// example: the opening rolls 3-3, 2-2 and 5-1, the turkish re-roll 3-1, then
// turns, a resignation and the reveal.
func tavlarenaGame(t testing.TB, f *fixture) []*Event {
	b := f.builder(t, Tavlarena, exGame)
	seed := seq32(0x00)
	c, err := NewTavlarenaCommit(uuid(t, exGame), [2]dice.UUID{uuid(t, exSeat0), uuid(t, exSeat1)}, []byte(exSettings), seed)
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(c.Commitment[:]) != exCommitment {
		t.Fatalf("commitment %x, want %s", c.Commitment, exCommitment)
	}
	b.add(c)
	b.add(Contribution{Contribution: seq32(0x20), Seat: 0})
	b.add(Contribution{Contribution: seq32(0x40), Seat: 1})
	for _, r := range []Roll{
		{N: 0, Dice: dice.Dice{3, 3}, Kind: dice.KindOpening},
		{N: 1, Dice: dice.Dice{2, 2}, Kind: dice.KindOpening},
		{N: 2, Dice: dice.Dice{5, 1}, Kind: dice.KindOpening},
		{N: 3, Dice: dice.Dice{3, 1}, Kind: dice.KindReroll},
	} {
		b.add(r)
	}
	b.add(Move{N: 3, Play: "8/5 6/5", Seat: 0})
	roller := dice.NewTavlarena(seed, uuid(t, exGame), [2][32]byte{seq32(0x20), seq32(0x40)})
	for n := uint32(4); n < 12; n++ {
		b.add(Roll{N: n, Dice: roller.Roll(n), Kind: dice.KindTurn})
		b.add(Move{N: n, Play: fmt.Sprintf("play %d", n), Seat: int(n+1) % 2})
	}
	b.add(End{Points: 2, Result: Resigned, Winner: 1})
	b.add(Reveal{Seed: seed})
	return b.events
}

// anchoredGame is a full anchored-v1 game anchored to a real quicknet
// beacon, western opening.
func anchoredGame(t testing.TB, f *fixture) []*Event {
	b := f.builder(t, Anchored, "nard-7.game-3")
	seed := seq32(0x90)
	anchor := AnchorRef{Chain: h32(t, quicknetHash), Round: beaconRound}
	c, err := NewAnchoredCommit("nard-7", 3, anchor, f.start.Add(-time.Second), []byte(`{"opening":"western","variant":"plakoto"}`), seed)
	if err != nil {
		t.Fatal(err)
	}
	b.add(c)
	tokens := [2]string{"gül", "zar at 🎲"}
	b.add(TokenContribution{Seat: 1, Token: tokens[1]})
	b.add(TokenContribution{Seat: 0, Token: tokens[0]})
	b.add(Beacon{Chain: anchor.Chain, Randomness: h32(t, beaconRand), Round: beaconRound, Signature: hexBytes(t, beaconSig)})
	roller := dice.NewAnchored(seed, dice.AnchoredBinding("nard-7", 3, tokens, dice.Anchor{Chain: anchor.Chain, Round: anchor.Round, Randomness: h32(t, beaconRand)}))
	seq := dice.NewSequence(dice.OpeningWestern)
	for n := uint32(0); n < 10; n++ {
		r := dice.Roll{N: n, Dice: roller.Roll(n), Kind: seq.WantKind()}
		if err := seq.Next(r); err != nil {
			t.Fatal(err)
		}
		b.add(Roll{N: r.N, Dice: r.Dice, Kind: r.Kind})
		if r.Kind != dice.KindOpening || !r.Dice.IsDouble() {
			b.add(Move{N: n, Play: "13/7", Seat: int(n) % 2})
		}
	}
	b.add(End{Points: 1, Result: Finished, Winner: 0})
	b.add(Reveal{Seed: seed})
	return b.events
}

// perRollMatch is a per-roll-v1 match whose first roll is DICE.md §4's
// worked example (4-3).
func perRollMatch(t testing.TB, f *fixture) []*Event {
	b := f.builder(t, PerRoll, exGame)
	b.add(PerRollCommit{Settings: []byte(`{"variant":"portes","matchLength":3}`)})
	match := uuid(t, exGame)
	for i := range 4 {
		rollID := uuid(t, fmt.Sprintf("30000000-0000-4000-8000-%012d", i+1))
		seed, second := seq32(0x60+byte(i)), seq32(0x80+byte(i))
		rc := NewRollCommit(rollID, seed)
		if i == 0 {
			if hex.EncodeToString(rc.Commitment[:]) != exRollCommit {
				t.Fatalf("roll commitment %x, want %s", rc.Commitment, exRollCommit)
			}
		}
		b.add(rc)
		from := FromClient
		if i == 3 {
			from = FromServer
		}
		b.add(RollSecond{RollID: rollID, Second: second, SecondFrom: from})
		rr := NewRollReveal(match, rollID, second, seed)
		if i == 0 && rr.Dice != (dice.Dice{4, 3}) {
			t.Fatalf("worked example roll %v, want 4-3", rr.Dice)
		}
		b.add(rr)
		b.add(Move{N: uint32(i), Play: "24/20", Seat: i % 2})
	}
	b.add(End{Points: 3, Result: Finished, Winner: 1})
	return b.events
}

// applyAll applies events in order from the empty game and returns every
// intermediate state.
func applyAll(t testing.TB, f *fixture, evs []*Event) []*Game {
	t.Helper()
	var g *Game
	states := make([]*Game, 0, len(evs))
	for i, ev := range evs {
		ng, err := Apply(g, ev, f.env(ev, uint64(i)))
		if err != nil {
			t.Fatalf("event %d (%s): %v", i, ev.Type, err)
		}
		g = ng
		states = append(states, g)
	}
	return states
}

func mustFormat(t testing.TB, ev *Event) []byte {
	t.Helper()
	b, err := Format(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mutate decodes a canonical event, sets the member at a dotted path (or
// deletes it when v is deleteMember) and returns the canonical re-encoding.
func mutate(t testing.TB, b []byte, path string, v any) []byte {
	t.Helper()
	tree, err := cjson.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	tree = setPath(t, tree, strings.Split(path, "."), v)
	out, err := cjson.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type deleteMarker struct{}

var deleteMember = deleteMarker{}

func setPath(t testing.TB, node any, path []string, v any) any {
	o, ok := node.(cjson.Object)
	if !ok {
		t.Fatalf("path %v: not an object", path)
	}
	o = append(cjson.Object(nil), o...)
	for i, m := range o {
		if m.Key != path[0] {
			continue
		}
		if len(path) > 1 {
			o[i].Value = setPath(t, m.Value, path[1:], v)
			return o
		}
		if v == deleteMember {
			return append(o[:i], o[i+1:]...)
		}
		o[i].Value = v
		return o
	}
	if len(path) > 1 {
		t.Fatalf("path %v: no member", path)
	}
	return append(o, cjson.Member{Key: path[0], Value: v})
}
