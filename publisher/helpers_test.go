package publisher

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/merkle"
)

const (
	testOrigin  = "log.zarlog.example"
	testEmitter = "tavla-east"
	// A real drand quicknet beacon (docs/SCHEMES.md §6).
	beaconRound = 657413
	beaconSig   = "b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b"
	quicknet    = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"
)

// label32 returns 32 deterministic bytes for a label.
func label32(label string) [32]byte { return sha256.Sum256([]byte("publisher-test/" + label)) }

func labelUUID(label string) dice.UUID {
	b := label32("uuid/" + label)
	var u dice.UUID
	copy(u[:], b[:16])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

// testKey returns a deterministic Ed25519 signed-note key pair named name.
func testKey(t testing.TB, name string) (note.Signer, string) {
	t.Helper()
	seed := label32("key/" + name)
	priv := ed25519.NewKeyFromSeed(seed[:])
	vkey, err := note.NewEd25519VerifierKey(name, priv.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	hash := strings.Split(vkey, "+")[1]
	s, err := note.NewSigner(fmt.Sprintf("PRIVATE+KEY+%s+%s+%s", name, hash, base64.StdEncoding.EncodeToString(append([]byte{1}, seed[:]...))))
	if err != nil {
		t.Fatal(err)
	}
	return s, vkey
}

// gameBuilder makes the events of one game, seq by seq.
type gameBuilder struct {
	t      testing.TB
	signer note.Signer
	scheme events.Scheme
	game   string
	start  time.Time
	events [][]byte
}

func (b *gameBuilder) add(body events.Body) {
	b.t.Helper()
	seq := uint64(len(b.events))
	h := events.Header{Scheme: b.scheme, Game: b.game, Seq: seq, Emitter: testEmitter, Time: b.start.Add(time.Duration(seq) * time.Second)}
	ev, err := events.NewSigned(h, body, b.signer)
	if err != nil {
		b.t.Fatalf("%s seq %d: %v", b.game, seq, err)
	}
	leaf, err := events.Format(ev)
	if err != nil {
		b.t.Fatal(err)
	}
	b.events = append(b.events, leaf)
}

// playGame logs nrolls rolls of a per-game scheme, each played roll
// followed by its move, then the end and the reveal.
func (b *gameBuilder) playGame(roller dice.Roller, opening dice.Opening, nrolls int, seed [32]byte) {
	s := dice.NewSequence(opening)
	for n := range uint32(nrolls) {
		r := dice.Roll{N: n, Dice: roller.Roll(n), Kind: s.WantKind()}
		if err := s.Next(r); err != nil {
			b.t.Fatal(err)
		}
		b.add(events.Roll{N: r.N, Dice: r.Dice, Kind: r.Kind})
		tie := r.Kind == dice.KindOpening && r.Dice.IsDouble()
		if !tie && !(r.Kind == dice.KindOpening && opening == dice.OpeningTurkishReroll) {
			b.add(events.Move{N: n, Play: "24/18 13/11", Seat: int(n) % 2})
		}
	}
	b.add(events.End{Points: 1, Result: events.Finished, Winner: 0})
	b.add(events.Reveal{Seed: seed})
}

// tavlarenaGame returns the leaves of a finished tavlarena-v1 game.
func tavlarenaGame(t testing.TB, signer note.Signer, label string, nrolls int) [][]byte {
	id := labelUUID(label + "/game")
	b := &gameBuilder{t: t, signer: signer, scheme: events.Tavlarena, game: id.String(), start: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	seed, c0, c1 := label32(label+"/seed"), label32(label+"/c0"), label32(label+"/c1")
	c, err := events.NewTavlarenaCommit(id, [2]dice.UUID{labelUUID(label + "/seat0"), labelUUID(label + "/seat1")},
		[]byte(`{"rulesVersion":"tavla-1","variant":"portes","matchLength":5,"opening":"turkish-reroll"}`), seed)
	if err != nil {
		t.Fatal(err)
	}
	b.add(c)
	b.add(events.Contribution{Contribution: c0, Seat: 0})
	b.add(events.Contribution{Contribution: c1, Seat: 1})
	b.playGame(dice.NewTavlarena(seed, id, [2][32]byte{c0, c1}), dice.OpeningTurkishReroll, nrolls, seed)
	return b.events
}

// anchoredGame returns the leaves of a finished anchored-v1 game anchored
// to a real quicknet beacon.
func anchoredGame(t testing.TB, signer note.Signer, label string, nrolls int) [][]byte {
	var chain [32]byte
	hex.Decode(chain[:], []byte(quicknet))
	sig, _ := hex.DecodeString(beaconSig)
	rnd := sha256.Sum256(sig)
	roundTime := time.Unix(1692803367+3*(beaconRound-1), 0)
	b := &gameBuilder{t: t, signer: signer, scheme: events.Anchored, game: "nard." + label, start: roundTime.Add(-time.Minute)}
	seed := label32(label + "/seed")
	anchor := events.AnchorRef{Chain: chain, Round: beaconRound}
	c, err := events.NewAnchoredCommit("match-"+label, 3, anchor, b.start, []byte(`{"opening":"western","variant":"plakoto"}`), seed)
	if err != nil {
		t.Fatal(err)
	}
	b.add(c)
	tokens := [2]string{"gül " + label, "zar 🎲"}
	b.add(events.TokenContribution{Seat: 1, Token: tokens[1]})
	b.add(events.TokenContribution{Seat: 0, Token: tokens[0]})
	b.add(events.Beacon{Chain: chain, Randomness: rnd, Round: beaconRound, Signature: sig})
	binding := dice.AnchoredBinding("match-"+label, 3, tokens, dice.Anchor{Chain: chain, Round: beaconRound, Randomness: rnd})
	b.playGame(dice.NewAnchored(seed, binding), dice.OpeningWestern, nrolls, seed)
	return b.events
}

// perRollMatch returns the leaves of a finished per-roll-v1 match.
func perRollMatch(t testing.TB, signer note.Signer, label string, nrolls int) [][]byte {
	id := labelUUID(label + "/match")
	b := &gameBuilder{t: t, signer: signer, scheme: events.PerRoll, game: id.String(), start: time.Date(2026, 11, 30, 11, 0, 0, 0, time.UTC)}
	b.add(events.PerRollCommit{Settings: []byte(`{"variant":"portes","matchLength":3}`)})
	for i := range nrolls {
		rollID := labelUUID(fmt.Sprintf("%s/roll/%d", label, i))
		seed, second := label32(fmt.Sprintf("%s/seed/%d", label, i)), label32(fmt.Sprintf("%s/second/%d", label, i))
		b.add(events.NewRollCommit(rollID, seed))
		from := events.FromClient
		if i%3 == 2 {
			from = events.FromServer
		}
		b.add(events.RollSecond{RollID: rollID, Second: second, SecondFrom: from})
		b.add(events.NewRollReveal(id, rollID, second, seed))
		b.add(events.Move{N: uint32(i), Play: "24/20", Seat: i % 2})
	}
	b.add(events.End{Points: 3, Result: events.Finished, Winner: 1})
	return b.events
}

// memLog is an in-memory log: a tile store as the ledger keeps one (one
// growing tile per level and index) and the log's key.
type memLog struct {
	tiles    map[[2]int64][]byte
	builder  *merkle.Builder
	signer   note.Signer
	vkey     string
	keepData bool // keep entry bundles (a size benchmark does not need them)
}

func newMemLog(t testing.TB) *memLog {
	t.Helper()
	s, vkey := testKey(t, testOrigin)
	b, err := merkle.NewBuilder(context.Background(), nil, merkle.State{})
	if err != nil {
		t.Fatal(err)
	}
	return &memLog{tiles: map[[2]int64][]byte{}, builder: b, signer: s, vkey: vkey, keepData: true}
}

func (m *memLog) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		d, ok := m.tiles[[2]int64{int64(t.Level), int64(t.Index)}]
		if !ok {
			return nil, fmt.Errorf("%s: %w", t.Path(), merkle.ErrNotFound)
		}
		out[i] = d
	}
	return out, nil
}

// append appends leaves and returns the index of the first.
func (m *memLog) append(t testing.TB, leaves ...[]byte) uint64 {
	t.Helper()
	first := m.builder.Size()
	tds, err := m.builder.Append(leaves)
	if err != nil {
		t.Fatal(err)
	}
	for _, td := range tds {
		if td.Tile.Level == merkle.EntriesLevel && !m.keepData {
			continue
		}
		m.tiles[[2]int64{int64(td.Tile.Level), int64(td.Tile.Index)}] = td.Data
	}
	return first
}

// checkpoint signs the current tree.
func (m *memLog) checkpoint(t testing.TB) []byte {
	t.Helper()
	n, err := merkle.Sign(merkle.Checkpoint{Origin: testOrigin, Size: m.builder.Size(), Hash: m.builder.Root()}, m.signer)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// interleave appends several games' events to the log in turns, each game
// keeping its own order, with filler leaves of other games between them,
// and returns every game's leaves with their indices.
func (m *memLog) interleave(t testing.TB, filler func(i int) []byte, every int, games ...[][]byte) [][]IndexedLeaf {
	t.Helper()
	out := make([][]IndexedLeaf, len(games))
	next := make([]int, len(games))
	nf := 0
	for left := true; left; {
		left = false
		for g, evs := range games {
			if next[g] == len(evs) {
				continue
			}
			left = true
			for range every - 1 {
				m.append(t, filler(nf))
				nf++
			}
			idx := m.append(t, evs[next[g]])
			out[g] = append(out[g], IndexedLeaf{Index: idx, Leaf: evs[next[g]]})
			next[g]++
		}
	}
	return out
}
