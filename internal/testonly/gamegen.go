// This file (formerly package gamegen) plays deterministic games whose moves are logged, for the
// tests, benchmarks and test vectors of the rules engine's adapter (package
// rules/movecheck) and the verifier (testdata/moves). The dice are the real
// dice of each scheme (seeds, contributions and ids derived from a label),
// and every move is chosen by rules.Choose with a seeded random source, so
// the same Config always gives the same events.
//
// It is test support, not part of zarlog's contract: Play checks every
// event it makes through events.Apply with movecheck.Checker, so a game it
// returns is one the ledger accepts.
package testonly

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// A real drand quicknet beacon (docs/SCHEMES.md §6): anchored-v1 games are
// anchored to it.
const (
	BeaconRound = 657413
	beaconSig   = "b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b"
	quicknet    = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"
)

// BeaconTime is the time of BeaconRound.
var BeaconTime = time.Unix(1692803367+3*(BeaconRound-1), 0).UTC()

// A Config says which game to play.
type Config struct {
	Scheme  events.Scheme
	Variant rules.Variant
	Opening rules.Opening // "" means western
	// Label derives every seed, id, contribution and the strategy's
	// randomness.
	Label string
	// Emitter is the emitter id; "" means "tavla-east".
	Emitter string
	// Start is the time of the commit; the events follow one second apart.
	// Zero means 2026-11-30T10:00:00Z (anchored-v1: one minute before
	// BeaconTime).
	Start time.Time
	// MaxRolls stops the game (the match, under per-roll-v1) after this
	// many rolls, the seat on turn resigning if the game is not over; 0
	// means no limit.
	MaxRolls int
	// Games is the number of games of a per-roll-v1 match (0 means 1);
	// the per-game schemes play one.
	Games int
	// Settings are extra settings members (canonical JSON object text
	// without braces, such as `"matchLength":5`); "moves", "opening" and
	// "variant" are set by Play.
	Settings string
	// Unlogged leaves "moves" out of the settings: the moves are still
	// made and logged, but not declared.
	Unlogged bool
	// Seats are a tavlarena-v1 game's seat ids; zero means ids derived
	// from Label.
	Seats [2]dice.UUID
}

// A Played game: the bodies of its events in seq order, and how each game
// on the board ended (the last entry is the one the end names; a game
// stopped by MaxRolls has none).
type Played struct {
	Config  Config
	Bodies  []events.Body
	Results []rules.Result
	Rolls   int // rolls logged
	Moves   int // move events
}

func (c Config) emitter() string {
	if c.Emitter == "" {
		return "tavla-east"
	}
	return c.Emitter
}

func (c Config) start() time.Time {
	switch {
	case !c.Start.IsZero():
		return c.Start
	case c.Scheme == events.Anchored:
		return BeaconTime.Add(-time.Minute)
	}
	return time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
}

// Label32 returns 32 bytes derived from a label.
func Label32(label string) [32]byte { return sha256.Sum256([]byte("zarlog-gamegen/" + label)) }

// LabelUUID returns a version-4 UUID derived from a label.
func LabelUUID(label string) dice.UUID {
	b := Label32("uuid/" + label)
	var u dice.UUID
	copy(u[:], b[:16])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

// GameID returns the game id of the config's game.
func (c Config) GameID() string {
	if c.Scheme == events.Anchored {
		l := Label32("match/" + c.Label)
		return "match-" + hex.EncodeToString(l[:6]) + ".game-1"
	}
	return LabelUUID(c.Label + "/game").String()
}

// Header returns the header of event seq.
func (c Config) Header(seq uint64) events.Header {
	return events.Header{Scheme: c.Scheme, Game: c.GameID(), Seq: seq, Emitter: c.emitter(), Time: c.start().Add(time.Duration(seq) * time.Second)}
}

func (c Config) settings() []byte {
	s := "{"
	if c.Settings != "" {
		s += c.Settings + ","
	}
	if !c.Unlogged {
		s += `"moves":"logged",`
	}
	o := c.Opening
	if o == "" {
		o = rules.OpeningWestern
	}
	return []byte(s + fmt.Sprintf(`"opening":%q,"variant":%q}`, o, c.Variant))
}

// Env returns the environment in which an auditor replays event ev at log
// index i: no clock checks, beacons against the pinned drand chains.
func Env(ev *events.Event, i uint64, moves events.MoveChecker) events.Env {
	return events.Env{Emitter: ev.Emitter, Index: i, SkipClockChecks: true, Beacons: events.BeaconsOf(drand.ChainByHash), Moves: moves}
}

// player builds the game event by event, applying each through the state
// machine with the rules engine. It follows the flow of play itself too,
// with settings that log the moves, so that it can play a game whose
// settings do not.
type player struct {
	c      Config
	p      *Played
	g      *events.Game
	rng    *rand.Rand
	logged []byte // the settings with "moves": "logged"
	st     []byte // the rules engine's state
}

func (pl *player) add(b events.Body) error {
	fail := func(err error) error {
		return fmt.Errorf("gamegen: event %d (%s): %w", len(pl.p.Bodies), b.Type(), err)
	}
	ev, err := events.New(pl.c.Header(uint64(len(pl.p.Bodies))), b)
	if err != nil {
		return fail(err)
	}
	g, err := events.Apply(pl.g, ev, Env(ev, uint64(len(pl.p.Bodies)), movecheck.Checker{}))
	if err != nil {
		return fail(err)
	}
	in := events.MoveInput{Scheme: pl.c.Scheme, Settings: pl.logged, Position: pl.st}
	switch x := b.(type) {
	case events.Roll:
		in.Roll = dice.Roll{N: x.N, Dice: x.Dice, Kind: x.Kind}
		pl.st, _, err = movecheck.Checker{}.CheckRoll(in)
	case events.RollReveal:
		in.Roll = dice.Roll{N: uint32(len(g.RollRecords) - 1), Dice: x.Dice}
		pl.st, _, err = movecheck.Checker{}.CheckRoll(in)
	case events.Move:
		in.Move = x
		pl.st, err = movecheck.Checker{}.CheckMove(in)
	}
	if err != nil {
		return fail(err)
	}
	pl.g = g
	pl.p.Bodies = append(pl.p.Bodies, b)
	return nil
}

// state returns the rules engine's state of the game.
func (pl *player) state() (movecheck.State, error) {
	return movecheck.ParseState(pl.st)
}

// afterRoll logs the move of the roll just logged, if it is played.
func (pl *player) afterRoll(n uint32) error {
	pl.p.Rolls++
	s, err := pl.state()
	if err != nil {
		return err
	}
	if s.Phase != movecheck.PhasePlay {
		return nil
	}
	play := rules.Choose(s.Variant, s.Position, s.Seat, s.Dice, pl.rng)
	if err := pl.add(events.Move{N: n, Play: rules.FormatPlay(play), Seat: s.Seat}); err != nil {
		return err
	}
	pl.p.Moves++
	if s, err = pl.state(); err != nil {
		return err
	}
	if s.Phase == movecheck.PhaseOver {
		r, _ := rules.Outcome(s.Variant, s.Position)
		pl.p.Results = append(pl.p.Results, r)
	}
	return nil
}

// over reports whether the game (per-roll-v1: the match) is done.
func (pl *player) over() bool {
	games := 1
	if pl.c.Scheme == events.PerRoll && pl.c.Games > 1 {
		games = pl.c.Games
	}
	return len(pl.p.Results) >= games || pl.c.MaxRolls > 0 && pl.p.Rolls >= pl.c.MaxRolls
}

// end returns the end event: finished with the last result if the last
// game is over on the board, else the seat on turn resigns a single game.
func (pl *player) end() events.End {
	s, _ := pl.state()
	if s.Phase == movecheck.PhaseOver {
		r := pl.p.Results[len(pl.p.Results)-1]
		if r.Draw() {
			return events.End{Result: events.Finished, Winner: events.NoWinner}
		}
		return events.End{Result: events.Finished, Winner: r.Winner, Points: uint32(r.Multiplier)}
	}
	loser := s.Seat
	if loser < 0 {
		loser = 1 // before the opening has decided
	}
	return events.End{Result: events.Resigned, Winner: 1 - loser, Points: 1}
}

// Play plays the game the config describes and returns its events' bodies.
// Every event is applied through events.Apply with movecheck.Checker as it
// is made.
func Play(c Config) (*Played, error) {
	if !c.Variant.Valid() {
		return nil, fmt.Errorf("gamegen: variant %q", c.Variant)
	}
	seed := Label32(c.Label + "/strategy")
	logged := c
	logged.Unlogged = false
	pl := &player{c: c, p: &Played{Config: c}, rng: rand.New(rand.NewChaCha8(seed)), logged: logged.settings()}
	var err error
	switch c.Scheme {
	case events.Tavlarena:
		err = pl.tavlarena()
	case events.Anchored:
		err = pl.anchored()
	case events.PerRoll:
		err = pl.perRoll()
	default:
		err = fmt.Errorf("gamegen: scheme %q", c.Scheme)
	}
	if err != nil {
		return nil, err
	}
	return pl.p, nil
}

func (pl *player) tavlarena() error {
	c := pl.c
	id := LabelUUID(c.Label + "/game")
	seed, c0, c1 := Label32(c.Label+"/seed"), Label32(c.Label+"/c0"), Label32(c.Label+"/c1")
	seats := c.Seats
	if seats == ([2]dice.UUID{}) {
		seats = [2]dice.UUID{LabelUUID(c.Label + "/seat0"), LabelUUID(c.Label + "/seat1")}
	}
	commit, err := events.NewTavlarenaCommit(id, seats, c.settings(), seed)
	if err != nil {
		return err
	}
	for _, b := range []events.Body{commit, events.Contribution{Contribution: c0, Seat: 0}, events.Contribution{Contribution: c1, Seat: 1}} {
		if err := pl.add(b); err != nil {
			return err
		}
	}
	return pl.perGame(dice.NewTavlarena(seed, id, [2][32]byte{c0, c1}), seed)
}

func (pl *player) anchored() error {
	c := pl.c
	var chain [32]byte
	hex.Decode(chain[:], []byte(quicknet))
	sig, _ := hex.DecodeString(beaconSig)
	rnd := sha256.Sum256(sig)
	seed := Label32(c.Label + "/seed")
	anchor := events.AnchorRef{Chain: chain, Round: BeaconRound}
	matchID := "match-" + c.Label
	commit, err := events.NewAnchoredCommit(matchID, 1, anchor, c.start(), c.settings(), seed)
	if err != nil {
		return err
	}
	tokens := [2]string{"gül " + c.Label, "zar 🎲"}
	for _, b := range []events.Body{commit, events.TokenContribution{Seat: 0, Token: tokens[0]}, events.TokenContribution{Seat: 1, Token: tokens[1]},
		events.Beacon{Chain: chain, Randomness: rnd, Round: BeaconRound, Signature: sig}} {
		if err := pl.add(b); err != nil {
			return err
		}
	}
	binding := dice.AnchoredBinding(matchID, 1, tokens, dice.Anchor{Chain: chain, Round: BeaconRound, Randomness: rnd})
	return pl.perGame(dice.NewAnchored(seed, binding), seed)
}

// perGame logs the rolls and moves of a per-game scheme, then the end and
// the reveal.
func (pl *player) perGame(roller dice.Roller, seed [32]byte) error {
	o := dice.Opening(pl.c.Opening)
	if o == "" {
		o = dice.OpeningWestern
	}
	seq := dice.NewSequence(o)
	for n := uint32(0); !pl.over(); n++ {
		r := dice.Roll{N: n, Dice: roller.Roll(n), Kind: seq.WantKind()}
		if err := seq.Next(r); err != nil {
			return err
		}
		if err := pl.add(events.Roll{N: r.N, Dice: r.Dice, Kind: r.Kind}); err != nil {
			return err
		}
		if err := pl.afterRoll(n); err != nil {
			return err
		}
	}
	if err := pl.add(pl.end()); err != nil {
		return err
	}
	return pl.add(events.Reveal{Seed: seed})
}

func (pl *player) perRoll() error {
	c := pl.c
	match := LabelUUID(c.Label + "/game")
	if err := pl.add(events.PerRollCommit{Settings: c.settings()}); err != nil {
		return err
	}
	for i := uint32(0); !pl.over(); i++ {
		rollID := LabelUUID(fmt.Sprintf("%s/roll/%d", c.Label, i))
		seed, second := Label32(fmt.Sprintf("%s/seed/%d", c.Label, i)), Label32(fmt.Sprintf("%s/second/%d", c.Label, i))
		from := events.FromClient
		if i%3 == 2 {
			from = events.FromServer
		}
		for _, b := range []events.Body{events.NewRollCommit(rollID, seed), events.RollSecond{RollID: rollID, Second: second, SecondFrom: from},
			events.NewRollReveal(match, rollID, second, seed)} {
			if err := pl.add(b); err != nil {
				return err
			}
		}
		if err := pl.afterRoll(i); err != nil {
			return err
		}
	}
	return pl.add(pl.end())
}

// Events makes the events of bodies, seq by seq, for the config's game,
// the binding ones signed by s. The bodies need not be a valid game: the
// mutation vectors come from here.
func Events(c Config, bodies []events.Body, s events.Signer) ([]*events.Event, error) {
	out := make([]*events.Event, len(bodies))
	for i, b := range bodies {
		h := c.Header(uint64(i))
		var err error
		if b.Type().Binding() {
			out[i], err = events.NewSigned(h, b, s)
		} else {
			out[i], err = events.New(h, b)
		}
		if err != nil {
			return nil, fmt.Errorf("gamegen: event %d (%s): %w", i, b.Type(), err)
		}
	}
	return out, nil
}

// Key returns a deterministic Ed25519 key named name (an emitter id or a
// log origin) as a signed-note signer and its verifier key.
func Key(name string) (note.Signer, string, error) {
	seed := Label32("key/" + name)
	priv := ed25519.NewKeyFromSeed(seed[:])
	vkey, err := note.NewEd25519VerifierKey(name, priv.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, "", err
	}
	hash := strings.Split(vkey, "+")[1]
	s, err := note.NewSigner(fmt.Sprintf("PRIVATE+KEY+%s+%s+%s", name, hash, base64.StdEncoding.EncodeToString(append([]byte{1}, seed[:]...))))
	if err != nil {
		return nil, "", err
	}
	return s, vkey, nil
}
