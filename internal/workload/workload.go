// Package workload generates deterministic streams of realistic zarlog
// events for benchmarks (package internal/bench, `zarlog bench`, the ledger's
// benchmarks): many games of the three dice schemes in play at once, their
// events interleaved at random (seeded) as a busy platform's would be, each
// game's events in order.
//
// A game of a per-game scheme (tavlarena-v1, anchored-v1) is its commit, the
// two contributions (anchored-v1: tokens, then the beacon), Rolls rolls each
// followed by its move, the end and the reveal: with the default 60 rolls,
// 125 events of which 3 are signed (commit, end, reveal). A per-roll-v1
// match is its commit, then per roll its roll-commit, second number,
// roll-reveal and move, and the end: with the default 30 rolls, 122 events of
// which 62 are signed. The events are about 300 bytes on average.
//
// The emitters' keys are derived from fixed seeds. How the games are made
// depends on the checks the ledger is to make (Config.Moves,
// Config.RealBeacons):
//
//   - production (both set, what `zarlog serve` checks): every game's
//     settings declare its moves logged, and each roll that is played gets a
//     legal move chosen by the rules engine (rules.Choose), in one of the five
//     variants, so that the ledger's rules engine checks every roll, move and
//     end; a game over on the board ends "finished" with its result, one still
//     going at the roll limit is resigned. Anchored-v1 games carry real
//     BLS-signed beacons, Config.BeaconGamesPerRound games to a round (see
//     "Rounds" below), so that the ledger checks each round's beacon with a
//     BLS pairing check; their commits are sealed before the chains'
//     genesis, so the ledger's clock must show a time before QuicknetStart
//     plus a day (QuicknetStart is such a clock's start);
//   - structural (neither set, the benchmarks' configuration until issue
//     31): the moves are plausible notation not played by the rules engine,
//     and the settings do not declare them logged, so the ledger checks them
//     structurally (events.Env.Moves nil); anchored-v1 games are anchored to
//     rounds of a fake drand chain (Beacons) whose rounds all lie in the year
//     2100, so the ledger's clock checks pass with the real clock, and a
//     beacon "verifies" with one SHA-256.
//
// # Rounds
//
// On a platform, every anchored-v1 game sealed within the same three
// seconds names the same next quicknet round, and a ledger that remembers
// the beacons it verified (ledger.Config.BeaconCache) checks that round's
// BLS signature once for all of them. Reusing a few recorded beacons across
// every game would make that check free; drawing a round per game would
// make it dearer than any platform pays. The stream models the rounds from a
// stated assumption: a platform with 50,000 games in play (issue 31's), a
// game of about 125 events at one event every 5–10 s (10–21 minutes),
// starts 40–80 games a second, 120–240 per three-second round, of which
// 48–96 are anchored-v1 at the mixed mix's 40 %. The stream anchors
// DefaultBeaconGamesPerRound = 8 consecutive anchored-v1 games to each
// round: 6 to 12 times as many distinct rounds, each a BLS pairing check, as
// that platform's ledger makes. The first rounds are the four recorded
// quicknet rounds (QuicknetRecorded, the beacons the SDK and the demo
// hold), so that the benchmark can build and verify those games' bundles
// with zarlog-verify, which pins quicknet only; the rest are rounds of
// BenchChain, a drand chain of the quicknet scheme with a key of its own,
// whose beacons the workload signs (circl's BLS, before the clock starts)
// and the ledger checks exactly as quicknet's.
//
// It is benchmark support, not part of zarlog's contract.
package workload

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/cloudflare/circl/sign/bls"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/rules"
)

// A Mix is the relative weight of each scheme among new games.
type Mix struct {
	Tavlarena, Anchored, PerRoll int
}

// MixNames returns the names ParseMix accepts; "mixed" is the default.
func MixNames() []string {
	return []string{"mixed", "per-game", "tavlarena", "anchored", "per-roll"}
}

// ParseMix returns a named mix: "mixed" (40 % tavlarena-v1, 40 %
// anchored-v1, 20 % per-roll-v1 games; about 12 % of the events are
// signed), "per-game" (tavlarena-v1 and anchored-v1 only; 2.4 % signed), or a
// single scheme's name without "-v1".
func ParseMix(name string) (Mix, error) {
	switch name {
	case "mixed":
		return Mix{Tavlarena: 40, Anchored: 40, PerRoll: 20}, nil
	case "per-game":
		return Mix{Tavlarena: 50, Anchored: 50}, nil
	case "tavlarena":
		return Mix{Tavlarena: 1}, nil
	case "anchored":
		return Mix{Anchored: 1}, nil
	case "per-roll":
		return Mix{PerRoll: 1}, nil
	}
	return Mix{}, fmt.Errorf("workload: unknown mix %q (want one of %s)", name, strings.Join(MixNames(), ", "))
}

// A Config describes a stream. Every field's zero value is documented.
type Config struct {
	// Seed makes the stream: the same Config gives the same events.
	Seed uint64
	// Prefix is part of every game id's derivation, so that streams with
	// different prefixes never share a game or event id. Zero means "".
	Prefix string
	// Mix weighs the schemes of new games. Zero means "mixed".
	Mix Mix
	// Concurrent is the number of games in play at once, whose events are
	// interleaved. Zero means 256.
	Concurrent int
	// Rolls is the number of rolls of a per-game game (each followed by a
	// move); zero means DefaultRolls. A per-roll-v1 match has half as many.
	Rolls int
	// Emitters is the number of emitters the games are spread over (ids
	// "emitter-0", "emitter-1", …). Zero means 4.
	Emitters int
	// Start is the emitters' clock at the first event. Zero means
	// 2026-11-30T10:00:00Z, or QuicknetStart with RealBeacons.
	Start time.Time
	// Moves makes every game's moves legal plays chosen by the rules
	// engine, in one of the five variants, with settings that declare them
	// logged: the ledger's rules engine (rules/movecheck) checks each one.
	// False means plausible notation, checked structurally only.
	Moves bool
	// RealBeacons anchors anchored-v1 games to BLS-signed beacons (the
	// package's "Rounds"): the recorded quicknet rounds of
	// QuicknetRecorded, then rounds of BenchChain, which the ledger must
	// resolve (Chains) and checks with a BLS pairing check; the ledger's
	// clock must then show a time between QuicknetStart and QuicknetStart
	// plus a day when the commits and tokens are appended. False means
	// FakeChain (Beacons).
	RealBeacons bool
	// BeaconGamesPerRound is, with RealBeacons, how many consecutive
	// anchored-v1 games are anchored to each round (the package's
	// "Rounds"). Zero means DefaultBeaconGamesPerRound.
	BeaconGamesPerRound int
}

// DefaultRolls is Config.Rolls's default.
const DefaultRolls = 60

// DefaultBeaconGamesPerRound is Config.BeaconGamesPerRound's default: a
// conservative share of a round among the anchored-v1 games of a platform
// with 50,000 games in play (the package's "Rounds").
const DefaultBeaconGamesPerRound = 8

func (c *Config) defaults() {
	if c.Mix == (Mix{}) {
		c.Mix, _ = ParseMix("mixed")
	}
	if c.Concurrent <= 0 {
		c.Concurrent = 256
	}
	if c.Rolls <= 0 {
		c.Rolls = DefaultRolls
	}
	if c.Emitters <= 0 {
		c.Emitters = 4
	}
	if c.BeaconGamesPerRound <= 0 {
		c.BeaconGamesPerRound = DefaultBeaconGamesPerRound
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
		if c.RealBeacons {
			c.Start = QuicknetStart
		}
	}
}

// An Event is one event of the stream.
type Event struct {
	Emitter string      // the emitter that publishes it (the NATS subject's)
	ID      string      // the event id (the Nats-Msg-Id)
	Game    string      // the game id; every event of a game has the same emitter
	Data    []byte      // the canonical leaf bytes
	Signed  bool        // a binding event, carrying an Ed25519 signature
	Type    events.Type // the event's type
}

// A Generator produces a stream. It is not safe for concurrent use.
type Generator struct {
	cfg      Config
	rng      *rand.Rand
	signers  []note.Signer
	vkeys    []string
	keyring  *events.Keyring
	active   [][]Event
	games    int
	clock    time.Time
	total    int
	weights  [3]int
	schemeOf [3]events.Scheme
	anchored int               // anchored-v1 games made so far
	benchSig map[uint64][]byte // BenchChain's signatures made so far, by round
}

// New returns a generator of the stream cfg describes.
func New(cfg Config) (*Generator, error) {
	cfg.defaults()
	if cfg.Mix.Tavlarena < 0 || cfg.Mix.Anchored < 0 || cfg.Mix.PerRoll < 0 {
		return nil, fmt.Errorf("workload: negative weight in mix %+v", cfg.Mix)
	}
	g := &Generator{
		cfg:      cfg,
		rng:      rand.New(rand.NewPCG(cfg.Seed, 0x5eed)),
		clock:    cfg.Start,
		weights:  [3]int{cfg.Mix.Tavlarena, cfg.Mix.Anchored, cfg.Mix.PerRoll},
		schemeOf: [3]events.Scheme{events.Tavlarena, events.Anchored, events.PerRoll},
	}
	for i := range cfg.Emitters {
		s, v, err := Key(fmt.Sprintf("emitter-%d", i))
		if err != nil {
			return nil, err
		}
		g.signers = append(g.signers, s)
		g.vkeys = append(g.vkeys, v)
	}
	var err error
	if g.keyring, err = events.NewKeyring(g.vkeys...); err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	return g, nil
}

// Key returns a deterministic Ed25519 key named name (an emitter id or a
// log origin) as a signed-note signer and its verifier key.
func Key(name string) (note.Signer, string, error) {
	seed := sha256.Sum256([]byte("zarlog-workload/key/" + name))
	priv := ed25519.NewKeyFromSeed(seed[:])
	vkey, err := note.NewEd25519VerifierKey(name, priv.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, "", fmt.Errorf("workload: key %q: %w", name, err)
	}
	hash := strings.Split(vkey, "+")[1]
	skey := "PRIVATE+KEY+" + name + "+" + hash + "+" + base64.StdEncoding.EncodeToString(append([]byte{1}, seed[:]...))
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, "", fmt.Errorf("workload: key %q: %w", name, err)
	}
	return s, vkey, nil
}

// BeaconGamesPerRound returns how many anchored-v1 games share a round
// with RealBeacons (Config.BeaconGamesPerRound), or 0 without.
func (g *Generator) BeaconGamesPerRound() int {
	if !g.cfg.RealBeacons {
		return 0
	}
	return g.cfg.BeaconGamesPerRound
}

// Keyring returns the emitters' keys, for the ledger's Config.Emitters.
func (g *Generator) Keyring() *events.Keyring { return g.keyring }

// VerifierKeys returns the emitters' verifier keys (signed-note form).
func (g *Generator) VerifierKeys() []string { return append([]string(nil), g.vkeys...) }

// Emitters returns the emitter ids, in order.
func (g *Generator) Emitters() []string {
	out := make([]string, len(g.signers))
	for i, s := range g.signers {
		out[i] = s.Name()
	}
	return out
}

// Next returns the next event of the stream.
func (g *Generator) Next() (Event, error) {
	for len(g.active) < g.cfg.Concurrent {
		evs, err := g.newGame()
		if err != nil {
			return Event{}, err
		}
		g.active = append(g.active, evs)
	}
	i := g.rng.IntN(len(g.active))
	ev := g.active[i][0]
	g.active[i] = g.active[i][1:]
	if len(g.active[i]) == 0 {
		g.active[i] = g.active[len(g.active)-1]
		g.active = g.active[:len(g.active)-1]
	}
	g.total++
	return ev, nil
}

// Game returns the events of a new game, whole and in order, instead of
// interleaving them into the stream (a human-pace benchmark sends each
// game's events itself); the game is one the stream would not give.
func (g *Generator) Game() ([]Event, error) { return g.newGame() }

// A GameStream is one game's events, made as they are asked for
// (Generator.Stream): a benchmark that keeps tens of thousands of games in
// play holds each one's state (about a kilobyte: its dice, its board),
// not its events still to come.
type GameStream struct {
	b    *game
	next int // of b.out, the next to return
	done bool
}

// Stream returns a new game whose events are made as Next asks for them,
// with randomness of its own (drawn from the generator's), so that the
// games of a Generator may be stepped in any order, each from one
// goroutine at a time, and still be the same games. Its events have the
// shapes and distribution of Game's, but it is not the game Game would
// have returned.
func (g *Generator) Stream() (*GameStream, error) { return g.StreamOf(-1) }

// StreamOf is Stream with the game's emitter chosen: emitter is an index of
// Emitters, or -1 for one drawn as Stream draws it.
func (g *Generator) StreamOf(emitter int) (*GameStream, error) {
	if emitter >= len(g.signers) {
		return nil, fmt.Errorf("workload: emitter %d of %d", emitter, len(g.signers))
	}
	rng := rand.New(rand.NewPCG(g.rng.Uint64(), g.rng.Uint64()))
	b, err := g.startGame(rng, emitter)
	if err != nil {
		return nil, err
	}
	return &GameStream{b: b}, nil
}

// Next returns the game's next event, or false after its last one.
func (s *GameStream) Next() (Event, bool, error) {
	for s.next == len(s.b.out) {
		if s.done {
			return Event{}, false, nil
		}
		// What was returned is not held: the builder appends to a fresh
		// slice (at most a step's few events).
		s.b.out, s.next = s.b.out[:0:0], 0
		done, err := s.b.step()
		if err != nil {
			return Event{}, false, err
		}
		s.done = done
	}
	e := s.b.out[s.next]
	s.b.out[s.next] = Event{}
	s.next++
	return e, true, nil
}

// Take returns the next n events of the stream.
func (g *Generator) Take(n int) ([]Event, error) {
	out := make([]Event, n)
	for i := range out {
		var err error
		if out[i], err = g.Next(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Stats summarizes a slice of events: how many, their mean size and the
// share that is signed.
func Stats(evs []Event) (n int, meanBytes, signedShare float64) {
	var bytes, signed int
	for _, e := range evs {
		bytes += len(e.Data)
		if e.Signed {
			signed++
		}
	}
	if len(evs) == 0 {
		return 0, 0, 0
	}
	return len(evs), float64(bytes) / float64(len(evs)), float64(signed) / float64(len(evs))
}

// uuid derives a version-4 UUID from the stream and a label.
func (g *Generator) uuid(label string) dice.UUID {
	b := g.bytes32("uuid/" + label)
	var u dice.UUID
	copy(u[:], b[:16])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

func (g *Generator) bytes32(label string) [32]byte {
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], g.cfg.Seed)
	return sha256.Sum256([]byte("zarlog-workload/" + string(s[:]) + "/" + g.cfg.Prefix + "/" + label))
}

// A game builds the events of one game.
type game struct {
	g      *Generator
	scheme events.Scheme
	id     string
	signer note.Signer
	out    []Event // made (by Stream: not yet returned)
	seq    int     // the events made so far
	start  time.Time
	// The variant and opening on the board (the settings'), and whether
	// the moves are logged (Config.Moves).
	variant rules.Variant
	opening rules.Opening
	// rng is the game's randomness: the generator's (Game), or its own
	// (Stream).
	rng *rand.Rand
	// step adds the game's next few events (a roll and its move; a
	// per-roll-v1 roll's four; the end) and reports whether it has ended.
	step func() (done bool, err error)
}

func (b *game) add(body events.Body) error {
	h := events.Header{Scheme: b.scheme, Game: b.id, Seq: uint64(b.seq), Emitter: b.signer.Name(),
		Time: b.start.Add(time.Duration(b.seq) * 1500 * time.Millisecond)}
	ev, err := events.NewSigned(h, body, b.signer)
	if err != nil {
		return fmt.Errorf("workload: game %s event %d (%s): %w", b.id, b.seq, body.Type(), err)
	}
	data, err := events.Format(ev)
	if err != nil {
		return fmt.Errorf("workload: game %s event %d (%s): %w", b.id, b.seq, body.Type(), err)
	}
	b.out = append(b.out, Event{Emitter: ev.Emitter, ID: ev.ID, Game: ev.Game, Data: data, Signed: ev.Sig != nil, Type: ev.Type})
	b.seq++
	return nil
}

func (g *Generator) newGame() ([]Event, error) {
	b, err := g.startGame(g.rng, -1)
	if err != nil {
		return nil, err
	}
	for {
		done, err := b.step()
		if err != nil {
			return nil, err
		}
		if done {
			return b.out, nil
		}
	}
}

// startGame starts the generator's next game, with randomness rng, of the
// emitter of that index (-1: one drawn): its first events (the commit, the
// contributions or tokens and the beacon) made, the rest left to its step.
func (g *Generator) startGame(rng *rand.Rand, emitter int) (*game, error) {
	n := g.games
	g.games++
	label := fmt.Sprintf("game/%d", n)
	pick := rng.IntN(g.weights[0] + g.weights[1] + g.weights[2])
	k := 0
	for pick >= g.weights[k] {
		pick -= g.weights[k]
		k++
	}
	b := &game{g: g, rng: rng, scheme: g.schemeOf[k], signer: g.signers[rng.IntN(len(g.signers))], start: g.clock}
	if emitter >= 0 {
		b.signer = g.signers[emitter]
	}
	g.clock = g.clock.Add(10 * time.Millisecond)
	turkish := rng.IntN(2) == 0
	b.variant, b.opening = rules.Portes, rules.OpeningWestern
	if turkish {
		b.variant, b.opening = rules.Tavla, rules.OpeningTurkishReroll
	}
	if g.cfg.Moves {
		// The five variants, tavla with its Turkish opening.
		b.variant = rules.AllVariants()[rng.IntN(len(rules.AllVariants()))]
		b.opening = rules.OpeningWestern
		if b.variant == rules.Tavla {
			b.opening = rules.OpeningTurkishReroll
		}
	}
	var err error
	switch b.scheme {
	case events.Tavlarena:
		err = b.tavlarena(label)
	case events.Anchored:
		err = b.anchored(label, g.anchored)
		g.anchored++
	default:
		err = b.perRoll(label)
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// settings returns the game's settings object: its variant and opening, and
// with Config.Moves, "moves": "logged". A per-roll-v1 match is portes with
// the western opening unless its moves are logged.
func (b *game) settings() []byte {
	moves := ""
	if b.g.cfg.Moves {
		moves = `"moves":"logged",`
	}
	return []byte(fmt.Sprintf(`{"matchLength":5,%s"opening":%q,"variant":%q}`, moves, b.opening, b.variant))
}

// plays are move notations of typical length.
var plays = [...]string{"24/18 13/11", "8/5 6/5", "13/9 13/10", "24/20 20/16 16/12 12/8", "bar/22 6/4", "6/off 5/off", "13/7 8/7", "24/21 13/8"}

// A board follows a game's play with the rules engine (Config.Moves): each
// played roll's move is chosen by rules.Choose. Without Config.Moves it
// makes plausible notation (plays) for every roll but an opening double or
// a Turkish opening roll, as the structural check expects.
type board struct {
	b     *game
	rg    *rules.Game // nil until the first roll of a game on the board
	base  int         // the match index of rg's roll 0 (per-roll-v1)
	turns int         // moves logged
}

// roll follows roll n (the match index under per-roll-v1) with dice d and
// kind (per-game schemes; "" under per-roll-v1) and logs its move, if it is
// played.
func (bd *board) roll(n uint32, d dice.Dice, kind dice.Kind, seat int) error {
	b := bd.b
	g := b.g
	if !g.cfg.Moves {
		if kind == dice.KindOpening && (d.IsDouble() || b.opening == rules.OpeningTurkishReroll) {
			return nil
		}
		bd.turns++
		return b.add(events.Move{N: n, Play: plays[b.rng.IntN(len(plays))], Seat: seat})
	}
	if bd.rg == nil || bd.rg.Over() {
		rg, err := rules.NewGame(b.variant, b.opening)
		if err != nil {
			return fmt.Errorf("workload: game %s: %w", b.id, err)
		}
		bd.rg, bd.base = rg, int(n)
	}
	if _, err := bd.rg.Roll(int(n)-bd.base, rules.Dice(d)); err != nil {
		return fmt.Errorf("workload: game %s: %w", b.id, err)
	}
	_, _, seat, pending := bd.rg.Pending()
	if !pending {
		return nil
	}
	play, _ := bd.rg.ChoosePlay(b.rng)
	text := rules.FormatPlay(play)
	if err := bd.rg.Move(int(n)-bd.base, seat, text); err != nil {
		return fmt.Errorf("workload: game %s: the rules engine refuses its own play: %w", b.id, err)
	}
	bd.turns++
	return b.add(events.Move{N: n, Play: text, Seat: seat})
}

// over reports whether the game on the board is over (Config.Moves).
func (bd *board) over() bool { return bd.rg != nil && bd.rg.Over() }

// end returns the game's end: with Config.Moves, "finished" with the
// result if the game is over on the board, else the seat to roll or play
// resigns; without, a finished game worth points, as the structural check
// allows.
func (bd *board) end(points uint32) events.End {
	g := bd.b.g
	if !g.cfg.Moves {
		return events.End{Points: points, Result: events.Finished, Winner: bd.b.rng.IntN(2)}
	}
	if r, over := bd.rg.Result(); over {
		if r.Draw() {
			return events.End{Result: events.Finished, Winner: events.NoWinner}
		}
		return events.End{Points: uint32(r.Multiplier), Result: events.Finished, Winner: r.Winner}
	}
	loser := 1
	if bd.rg != nil && bd.rg.Turn() >= 0 {
		loser = bd.rg.Turn()
	}
	return events.End{Points: 1, Result: events.Resigned, Winner: 1 - loser}
}

// perGameRolls sets the game's step to add the rolls of a per-game scheme,
// each played roll followed by its move, a roll a step, then the end and
// the reveal: Config.Rolls moves, or fewer if the game is over on the board
// first (Config.Moves).
func (b *game) perGameRolls(roller dice.Roller, seed [32]byte) error {
	g := b.g
	opening := dice.Opening(b.opening)
	seq := dice.NewSequence(opening)
	bd := &board{b: b}
	n := uint32(0)
	b.step = func() (bool, error) {
		if bd.turns >= g.cfg.Rolls || bd.over() {
			if err := b.add(bd.end(1)); err != nil {
				return false, err
			}
			return true, b.add(events.Reveal{Seed: seed})
		}
		r := dice.Roll{N: n, Dice: roller.Roll(n), Kind: seq.WantKind()}
		if err := seq.Next(r); err != nil {
			return false, fmt.Errorf("workload: game %s: %w", b.id, err)
		}
		if err := b.add(events.Roll{N: r.N, Dice: r.Dice, Kind: r.Kind}); err != nil {
			return false, err
		}
		if err := bd.roll(n, r.Dice, r.Kind, seq.Starter()^(bd.turns%2)); err != nil {
			return false, err
		}
		n++
		return false, nil
	}
	return nil
}

func (b *game) tavlarena(label string) error {
	g := b.g
	id := g.uuid(label)
	b.id = id.String()
	seed := g.bytes32(label + "/seed")
	c, err := events.NewTavlarenaCommit(id, [2]dice.UUID{g.uuid(label + "/seat0"), g.uuid(label + "/seat1")}, b.settings(), seed)
	if err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	if err := b.add(c); err != nil {
		return err
	}
	contrib := [2][32]byte{g.bytes32(label + "/c0"), g.bytes32(label + "/c1")}
	if err := b.add(events.Contribution{Contribution: contrib[1], Seat: 1}); err != nil {
		return err
	}
	if err := b.add(events.Contribution{Contribution: contrib[0], Seat: 0}); err != nil {
		return err
	}
	return b.perGameRolls(dice.NewTavlarena(seed, id, contrib), seed)
}

// anchored makes the n-th anchored-v1 game of the stream.
func (b *game) anchored(label string, n int) error {
	g := b.g
	u := g.uuid(label)
	match := "match-" + u.String()
	b.id = match + ".g1"
	seed := g.bytes32(label + "/seed")
	var chain [32]byte
	var round uint64
	var sig []byte
	sealed := b.start.Add(-time.Minute)
	if g.cfg.RealBeacons {
		chain, round, sig = g.realBeacon(n / g.cfg.BeaconGamesPerRound)
		// Sealed before the chains' genesis, so before every round they
		// are anchored to, and before the ledger's clock (QuicknetStart
		// on).
		sealed = g.cfg.Start.Add(-time.Minute)
	} else {
		round = 1 + uint64(binary.BigEndian.Uint32(u[:4]))%1_000_000
		chain, sig = FakeChainHash, FakeChain{}.Sign(round)
	}
	c, err := events.NewAnchoredCommit(match, 1, events.AnchorRef{Chain: chain, Round: round}, sealed, b.settings(), seed)
	if err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	if err := b.add(c); err != nil {
		return err
	}
	tokens := [2]string{"tok0-" + u.String()[:8], "tok1-" + u.String()[9:13]}
	if err := b.add(events.TokenContribution{Seat: 0, Token: tokens[0]}); err != nil {
		return err
	}
	if err := b.add(events.TokenContribution{Seat: 1, Token: tokens[1]}); err != nil {
		return err
	}
	rnd := sha256.Sum256(sig)
	if err := b.add(events.Beacon{Chain: chain, Randomness: rnd, Round: round, Signature: sig}); err != nil {
		return err
	}
	binding := dice.AnchoredBinding(match, 1, tokens, dice.Anchor{Chain: chain, Round: round, Randomness: rnd})
	return b.perGameRolls(dice.NewAnchored(seed, binding), seed)
}

func (b *game) perRoll(label string) error {
	g := b.g
	match := g.uuid(label)
	b.id = match.String()
	if !g.cfg.Moves {
		b.variant, b.opening = rules.Portes, rules.OpeningWestern
	}
	if err := b.add(events.PerRollCommit{Settings: b.settings()}); err != nil {
		return err
	}
	bd := &board{b: b}
	i := 0
	b.step = func() (bool, error) {
		if i >= g.cfg.Rolls/2 || bd.over() { // the match is its first game
			return true, b.add(bd.end(2))
		}
		rollID := g.uuid(fmt.Sprintf("%s/roll/%d", label, i))
		seed, second := g.bytes32(fmt.Sprintf("%s/s/%d", label, i)), g.bytes32(fmt.Sprintf("%s/x/%d", label, i))
		from := events.FromClient
		if i%3 == 2 {
			from = events.FromServer
		}
		reveal := events.NewRollReveal(match, rollID, second, seed)
		for _, body := range []events.Body{events.NewRollCommit(rollID, seed), events.RollSecond{RollID: rollID, Second: second, SecondFrom: from}, reveal} {
			if err := b.add(body); err != nil {
				return false, err
			}
		}
		if err := bd.roll(uint32(i), reveal.Dice, "", i%2); err != nil {
			return false, err
		}
		i++
		return false, nil
	}
	return nil
}

// realBeacon returns the beacon of the stream's k-th round (the package's
// "Rounds"): the recorded quicknet rounds first, then BenchChain's rounds
// from 1 on, each signed once.
func (g *Generator) realBeacon(k int) (chain [32]byte, round uint64, sig []byte) {
	if k < len(quicknetRecorded) {
		q := quicknetRecorded[k]
		return drand.Quicknet().Hash(), q.round, q.sig
	}
	round = uint64(k-len(quicknetRecorded)) + 1
	if g.benchSig == nil {
		g.benchSig = map[uint64][]byte{}
	}
	if sig = g.benchSig[round]; sig == nil {
		sig = benchChain().sign(round)
		g.benchSig[round] = sig
	}
	return benchChain().chain.Hash(), round, sig
}

// A benchChainKey is BenchChain and its private key.
type benchChainKey struct {
	chain *drand.Chain
	key   *bls.PrivateKey[bls.KeyG2SigG1]
}

// sign returns the chain's beacon signature of round.
func (b benchChainKey) sign(round uint64) []byte {
	m := drand.Message(round)
	return bls.Sign(b.key, m[:])
}

// benchChain derives BenchChain's key from a fixed seed, once.
var benchChain = sync.OnceValue(func() benchChainKey {
	ikm := sha256.Sum256([]byte("zarlog-workload/bench-drand-chain"))
	key, err := bls.KeyGen[bls.KeyG2SigG1](ikm[:], nil, []byte("zarlog bench"))
	if err != nil {
		panic("workload: bench chain key: " + err.Error()) // fixed input
	}
	pub, err := key.PublicKey().MarshalBinary()
	if err != nil {
		panic("workload: bench chain key: " + err.Error())
	}
	q := drand.QuicknetParams()
	c, err := drand.NewChain(drand.Params{BeaconID: "zarlog-bench", Scheme: drand.SchemeG1RFC9380, Period: q.Period, Genesis: q.Genesis,
		PublicKey: pub, GenesisSeed: sha256.Sum256([]byte("zarlog-workload/bench-drand-chain/seed"))})
	if err != nil {
		panic("workload: bench chain: " + err.Error())
	}
	return benchChainKey{chain: c, key: key}
})

// BenchChain returns the benchmark's own drand chain (the package's
// "Rounds"): the quicknet scheme (bls-unchained-g1-rfc9380), period and
// genesis, with a key of its own whose private half the workload holds.
// A ledger that accepts a stream with RealBeacons resolves its hash
// (Chains).
func BenchChain() *drand.Chain { return benchChain().chain }

// Chains resolves the chains of a stream with RealBeacons: quicknet and
// BenchChain, for the ledger's Config.Beacons.
func Chains(h [32]byte) (*drand.Chain, bool) {
	if h == BenchChain().Hash() {
		return BenchChain(), true
	}
	return drand.ChainByHash(h)
}

// QuicknetStart is the ledger's clock at the start of a stream with
// RealBeacons: a day before the drand quicknet chain's genesis, so that
// every recorded round (QuicknetRecorded) is still to come for a day.
var QuicknetStart = drand.Quicknet().Genesis().Add(-24 * time.Hour)

// quicknetRecorded are four real quicknet beacons (docs/SCHEMES.md §6,
// shared/spec/DRAND.md): rounds 8, 10, 123 and 657413, the ones the SDK
// (sdk.QuicknetBeacons) and the demo hold; package internal/bench's tests
// check that the two agree.
var quicknetRecorded = func() []struct {
	round uint64
	sig   []byte
} {
	out := []struct {
		round uint64
		sig   []byte
	}{}
	for _, q := range []struct {
		round uint64
		sig   string
	}{
		{8, "a0c06b9964123d2e6036aa004c140fc301f4edd3ea6b8396a15dfd7dfd70cc0dce0b4a97245995767ab72cf59de58c47"},
		{10, "ac415e508c484053efed1c6c330e3ae0bf20185b66ed088864dac1ff7d6f927610824986390d3239dac4dd73e6f865f5"},
		{123, "b75c69d0b72a5d906e854e808ba7e2accb1542ac355ae486d591aa9d43765482e26cd02df835d3546d23c4b13e0dfc92"},
		{657413, "b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b"},
	} {
		sig, err := hex.DecodeString(q.sig)
		if err != nil {
			panic("workload: recorded beacon: " + err.Error()) // a constant above
		}
		out = append(out, struct {
			round uint64
			sig   []byte
		}{q.round, sig})
	}
	return out
}()

// QuicknetRecorded returns the recorded quicknet beacons of a stream with
// RealBeacons (its first rounds, the package's "Rounds"): round and
// signature.
func QuicknetRecorded() (rounds []uint64, sigs [][]byte) {
	for _, q := range quicknetRecorded {
		rounds = append(rounds, q.round)
		sigs = append(sigs, bytes.Clone(q.sig))
	}
	return rounds, sigs
}

// FakeChainHash is the chain hash of FakeChain.
var FakeChainHash = sha256.Sum256([]byte("zarlog workload fake drand chain"))

// FakeGenesis is the time of FakeChain's round 1.
var FakeGenesis = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// errFakeBeacon is FakeChain's refusal.
var errFakeBeacon = errors.New("workload: fake beacon signature does not verify")

// A FakeChain is a drand chain for benchmarks: a round every 3 seconds from
// FakeGenesis on (so every anchor lies in the future), whose "signature"
// of a round is a hash of the round. It is an events.BeaconVerifier.
type FakeChain struct{}

// Sign returns the fake signature of a round: the beacon a test or a
// workload puts in its anchored-v1 games.
func (FakeChain) Sign(round uint64) []byte {
	h := sha256.Sum256(binary.BigEndian.AppendUint64([]byte("zarlog workload beacon"), round))
	return append(h[:], h[:16]...)
}

// Verify checks a fake signature and returns its randomness.
func (c FakeChain) Verify(round uint64, sig []byte) ([32]byte, error) {
	if !bytes.Equal(sig, c.Sign(round)) {
		return [32]byte{}, errFakeBeacon
	}
	return sha256.Sum256(sig), nil
}

// RoundTime returns the time of a round.
func (FakeChain) RoundTime(round uint64) time.Time {
	return FakeGenesis.Add(time.Duration(round-1) * 3 * time.Second)
}

// ExistedAt reports whether round had been emitted at t.
func (c FakeChain) ExistedAt(round uint64, t time.Time) bool { return !t.Before(c.RoundTime(round)) }

// Beacons resolves FakeChainHash to FakeChain, for the ledger's
// Config.Beacons.
func Beacons(h [32]byte) (events.BeaconVerifier, bool) {
	if h == FakeChainHash {
		return FakeChain{}, true
	}
	return nil, false
}
