package ledger

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/internal/workload"
	"github.com/zarlog/zarlog/merkle"
)

// The test log and its emitters. Every key is derived from a fixed seed, so
// the generated events are the same on every run.
const (
	testOrigin = "zarlog.test/log"
	emitterA   = "tavla-east"
	emitterB   = "nard-west"
)

// testStart is the fake clock's start and the time in every event header.
var testStart = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

type testKeys struct {
	signer   note.Signer
	verifier note.Verifier
	vkey     string
	emitters map[string]note.Signer
	keyring  *events.Keyring
	other    note.Signer // a key of emitterA that the keyring does not hold
}

func newTestKeys(t testing.TB) *testKeys {
	t.Helper()
	skey, vkey, err := merkle.GenerateKey(rand.NewChaCha8([32]byte{1}), testOrigin)
	if err != nil {
		t.Fatal(err)
	}
	k := &testKeys{vkey: vkey, emitters: map[string]note.Signer{}}
	if k.signer, err = merkle.NewSigner(skey); err != nil {
		t.Fatal(err)
	}
	if k.verifier, err = merkle.NewVerifier(vkey); err != nil {
		t.Fatal(err)
	}
	var vkeys []string
	for i, name := range []string{emitterA, emitterB} {
		s, v := emitterKey(t, name, byte(0x10+i))
		k.emitters[name] = s
		vkeys = append(vkeys, v)
	}
	k.other, _ = emitterKey(t, emitterA, 0x7f)
	if k.keyring, err = events.NewKeyring(vkeys...); err != nil {
		t.Fatal(err)
	}
	return k
}

func emitterKey(t testing.TB, name string, seed byte) (note.Signer, string) {
	t.Helper()
	var ks [32]byte
	for i := range ks {
		ks[i] = seed + byte(i)
	}
	priv := ed25519.NewKeyFromSeed(ks[:])
	vkey, err := note.NewEd25519VerifierKey(name, priv.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	skey := fmt.Sprintf("PRIVATE+KEY+%s+%s+%s", name, strings.Split(vkey, "+")[1], base64.StdEncoding.EncodeToString(append([]byte{1}, ks[:]...)))
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return s, vkey
}

// testBeacons resolves the chain of the anchored-v1 test games: a fake
// drand chain whose rounds are emitted from the year 2100 on, so every anchor
// is in the future (workload.FakeChain, which the benchmarks use too).
var testBeacons = workload.Beacons

// testUUID derives a version-4 UUID from a name.
func testUUID(name string) dice.UUID {
	h := sha256.Sum256([]byte(name))
	var u dice.UUID
	copy(u[:], h[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

func seed32(name string) [32]byte { return sha256.Sum256([]byte("seed " + name)) }

// A gameOpts varies a generated game.
type gameOpts struct {
	rolls   int    // rolls after the opening (per-game) or rolls (per-roll)
	badSeed bool   // reveal another seed than the committed one
	emitter string // "" means emitterA
	turkish bool   // per-game: turkish-reroll opening
}

// gameBuilder builds the events of one game.
type gameBuilder struct {
	t      testing.TB
	k      *testKeys
	scheme events.Scheme
	game   string
	em     string
	seq    uint64
	out    [][]byte
}

func (b *gameBuilder) add(body events.Body) {
	b.t.Helper()
	h := events.Header{Scheme: b.scheme, Game: b.game, Seq: b.seq, Emitter: b.em, Time: testStart.Add(time.Duration(b.seq) * time.Second)}
	ev, err := events.NewSigned(h, body, b.k.emitters[b.em])
	if err != nil {
		b.t.Fatalf("game %s seq %d: %v", b.game, b.seq, err)
	}
	leaf, err := events.Format(ev)
	if err != nil {
		b.t.Fatal(err)
	}
	b.out = append(b.out, leaf)
	b.seq++
}

func (k *testKeys) builder(t testing.TB, scheme events.Scheme, game string, o gameOpts) *gameBuilder {
	em := o.emitter
	if em == "" {
		em = emitterA
	}
	return &gameBuilder{t: t, k: k, scheme: scheme, game: game, em: em}
}

func (b *gameBuilder) settings(o gameOpts) []byte {
	if o.turkish {
		return []byte(`{"opening":"turkish-reroll","variant":"portes"}`)
	}
	return []byte(`{"opening":"western","variant":"portes"}`)
}

// playRolls adds the rolls of a per-game scheme and a move after each played
// roll.
func (b *gameBuilder) playRolls(roller dice.Roller, o gameOpts) {
	opening := dice.OpeningWestern
	if o.turkish {
		opening = dice.OpeningTurkishReroll
	}
	seq := dice.NewSequence(opening)
	turns := 0
	for n := uint32(0); turns < o.rolls; n++ {
		r := dice.Roll{N: n, Dice: roller.Roll(n), Kind: seq.WantKind()}
		if err := seq.Next(r); err != nil {
			b.t.Fatal(err)
		}
		b.add(events.Roll{N: r.N, Dice: r.Dice, Kind: r.Kind})
		if r.Kind == dice.KindOpening && (r.Dice.IsDouble() || opening == dice.OpeningTurkishReroll) {
			continue
		}
		b.add(events.Move{N: n, Play: fmt.Sprintf("play %d", n), Seat: int(n) % 2})
		turns++
	}
}

func (k *testKeys) tavlarenaGame(t testing.TB, name string, o gameOpts) [][]byte {
	t.Helper()
	id := testUUID(name)
	b := k.builder(t, events.Tavlarena, id.String(), o)
	seed := seed32(name)
	c, err := events.NewTavlarenaCommit(id, [2]dice.UUID{testUUID(name + "/0"), testUUID(name + "/1")}, b.settings(o), seed)
	if err != nil {
		t.Fatal(err)
	}
	b.add(c)
	contrib := [2][32]byte{seed32(name + "/c0"), seed32(name + "/c1")}
	b.add(events.Contribution{Contribution: contrib[1], Seat: 1})
	b.add(events.Contribution{Contribution: contrib[0], Seat: 0})
	b.playRolls(dice.NewTavlarena(seed, id, contrib), o)
	b.add(events.End{Points: 1, Result: events.Finished, Winner: 0})
	if o.badSeed {
		seed[0] ^= 1
	}
	b.add(events.Reveal{Seed: seed})
	return b.out
}

func (k *testKeys) anchoredGame(t testing.TB, name string, o gameOpts) [][]byte {
	t.Helper()
	u := testUUID(name)
	b := k.builder(t, events.Anchored, "anch-"+u.String(), o)
	seed := seed32(name)
	round := 1 + uint64(u[0])<<8 | uint64(u[1])
	anchor := events.AnchorRef{Chain: workload.FakeChainHash, Round: round}
	c, err := events.NewAnchoredCommit("match-"+name, 1, anchor, testStart.Add(-time.Hour), b.settings(o), seed)
	if err != nil {
		t.Fatal(err)
	}
	b.add(c)
	tokens := [2]string{"tok0 " + name, "tok1 " + name}
	b.add(events.TokenContribution{Seat: 0, Token: tokens[0]})
	b.add(events.TokenContribution{Seat: 1, Token: tokens[1]})
	sig := workload.FakeChain{}.Sign(round)
	rnd := sha256.Sum256(sig)
	b.add(events.Beacon{Chain: workload.FakeChainHash, Randomness: rnd, Round: round, Signature: sig})
	binding := dice.AnchoredBinding("match-"+name, 1, tokens, dice.Anchor{Chain: workload.FakeChainHash, Round: round, Randomness: rnd})
	b.playRolls(dice.NewAnchored(seed, binding), o)
	b.add(events.End{Points: 2, Result: events.Resigned, Winner: 1})
	if o.badSeed {
		seed[0] ^= 1
	}
	b.add(events.Reveal{Seed: seed})
	return b.out
}

func (k *testKeys) perRollMatch(t testing.TB, name string, o gameOpts) [][]byte {
	t.Helper()
	match := testUUID(name)
	b := k.builder(t, events.PerRoll, match.String(), o)
	b.add(events.PerRollCommit{Settings: []byte(`{"matchLength":3,"variant":"portes"}`)})
	for i := range o.rolls {
		rollID := testUUID(fmt.Sprintf("%s/roll%d", name, i))
		seed, second := seed32(fmt.Sprintf("%s/s%d", name, i)), seed32(fmt.Sprintf("%s/x%d", name, i))
		b.add(events.NewRollCommit(rollID, seed))
		b.add(events.RollSecond{RollID: rollID, Second: second, SecondFrom: events.FromClient})
		rr := events.NewRollReveal(match, rollID, second, seed)
		if o.badSeed && i == o.rolls-1 {
			rr.Seed[0] ^= 1
		}
		b.add(rr)
		b.add(events.Move{N: uint32(i), Play: "24/20", Seat: i % 2})
	}
	b.add(events.End{Points: 1, Result: events.Finished, Winner: 0})
	return b.out
}

// A streamGen produces a deterministic stream of valid events: several
// concurrent games of all three schemes, interleaved at random (seeded).
type streamGen struct {
	t          testing.TB
	k          *testKeys
	rng        *rand.Rand
	prefix     string
	active     [][][]byte
	games      int
	concurrent int
}

func newStreamGen(t testing.TB, k *testKeys, prefix string, seed uint64, concurrent int) *streamGen {
	return &streamGen{t: t, k: k, rng: rand.New(rand.NewPCG(seed, 0x5eed)), prefix: prefix, concurrent: concurrent}
}

func (g *streamGen) newGame() [][]byte {
	name := fmt.Sprintf("%s/game%d", g.prefix, g.games)
	g.games++
	o := gameOpts{rolls: 4 + g.rng.IntN(20), turkish: g.rng.IntN(2) == 0}
	if g.rng.IntN(3) == 0 {
		o.emitter = emitterB
	}
	switch g.rng.IntN(3) {
	case 0:
		return g.k.tavlarenaGame(g.t, name, o)
	case 1:
		return g.k.anchoredGame(g.t, name, o)
	default:
		o.rolls = 2 + o.rolls/2
		return g.k.perRollMatch(g.t, name, o)
	}
}

// next returns the next event of the stream.
func (g *streamGen) next() []byte {
	for len(g.active) < g.concurrent {
		g.active = append(g.active, g.newGame())
	}
	i := g.rng.IntN(len(g.active))
	ev := g.active[i][0]
	g.active[i] = g.active[i][1:]
	if len(g.active[i]) == 0 {
		g.active[i] = g.active[len(g.active)-1]
		g.active = g.active[:len(g.active)-1]
	}
	return ev
}

func (g *streamGen) take(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = g.next()
	}
	return out
}

// inputs wraps leaves as inputs from their emitters, with message ids.
func inputs(t testing.TB, leaves ...[]byte) []Input {
	t.Helper()
	out := make([]Input, len(leaves))
	for i, leaf := range leaves {
		ev, err := events.Parse(leaf)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = Input{Emitter: ev.Emitter, MsgID: ev.ID, Data: leaf}
	}
	return out
}
