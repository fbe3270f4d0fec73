package demo

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	mrand "math/rand/v2"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
	"github.com/zarlog/zarlog/sdk"
)

// A plan is one kind of game the bot plays.
type plan struct {
	scheme  events.Scheme
	variant string // "" when the moves are not logged
	opening string // "western" or "turkish-reroll"
	// resignAfter is the roll after which the seat on turn resigns; 0 plays
	// the game to its end on the board (moves logged only).
	resignAfter int
}

// plans are the games the bot plays, in turn: game i is plans[i mod
// len(plans)]. The first six cover the three schemes, both openings, the
// five variants, games played to the end and resigned ones; moves are
// logged (and checked by the ledger's rules engine) in all but the last.
var plans = []plan{
	{events.Tavlarena, "tavla", "turkish-reroll", 0},
	{events.Anchored, "portes", "western", 0},
	{events.PerRoll, "backgammon", "western", 0},
	{events.Tavlarena, "plakoto", "western", 30},
	{events.Anchored, "fevga", "turkish-reroll", 0},
	{events.PerRoll, "tavla", "turkish-reroll", 24},
	{events.Tavlarena, "backgammon", "turkish-reroll", 0},
	{events.Anchored, "plakoto", "turkish-reroll", 36},
	{events.PerRoll, "portes", "western", 0},
	{events.Tavlarena, "", "western", 40},
}

// A player is one of the demo's regulars: its seat id (logged by
// tavlarena-v1) and the name the platform shows (settings.seatNames).
type player struct {
	name string
	id   dice.UUID
}

// players are the demo's regulars, so that their player pages
// (/players/demo-bot/{id}) gather many games. Their ids are fixed: the same names
// have the same pages in every demo run.
var players = func() []player {
	names := []string{"Ayşe", "Mehmet", "Zeynep", "Emre", "Layla", "Omar", "Eleni", "Nikos"}
	out := make([]player, len(names))
	for i, n := range names {
		h := sha256.Sum256([]byte("zarlog demo player " + n))
		u := dice.UUID(h[:16])
		u[6] = u[6]&0x0f | 0x40
		u[8] = u[8]&0x3f | 0x80
		out[i] = player{name: n, id: u}
	}
	return out
}()

// seatsOf returns the two players of game no: every pair of regulars in
// turn.
func seatsOf(no int) [2]player {
	n := len(players)
	a := no % n
	b := (a + 1 + (no/n)%(n-1)) % n
	return [2]player{players[a], players[b]}
}

// settings returns the plan's settings object, canonical JSON.
func (p plan) settings(no int) []byte {
	seats := seatsOf(no)
	m := map[string]any{"opening": p.opening, "matchLength": 1, "rulesVersion": "zarlog-demo-1",
		"table": fmt.Sprintf("demo table %d", no), "seatNames": []any{seats[0].name, seats[1].name}}
	if p.variant != "" {
		m["variant"] = p.variant
		m["moves"] = "logged"
		if p.variant == "backgammon" {
			m["doublingCube"] = false
		}
	}
	b, err := cjson.Marshal(m)
	if err != nil {
		panic(err) // a fixed map of strings and ints
	}
	return b
}

// describe names the plan for the report.
func (p plan) describe() string {
	s := string(p.scheme) + " "
	if p.variant != "" {
		s += p.variant
	} else {
		s += "moves not logged"
	}
	return s + ", " + p.opening
}

// A played game, as the bot saw it.
type played struct {
	no      int // 1-based
	plan    plan
	id      string
	seal    string // the seal code the players were shown (per-roll-v1: of the first roll)
	rolls   int
	doubles int // rolls of a double, opening ties included
	end     events.End
}

// maxRolls bounds a game whose rules engine never ends it (a bug).
const maxRolls = 2000

// A bot plays games through one SDK backend.
type bot struct {
	b       *sdk.Backend
	beacons sdk.BeaconSource
	clock   clock
}

func random32() [32]byte {
	var b [32]byte
	rand.Read(b[:])
	return b
}

func strategy() *mrand.Rand {
	s := random32()
	return mrand.New(mrand.NewChaCha8(s))
}

// tavlarena plays a tavlarena-v1 game: the commit, both players'
// contributions, the game.
func (bt *bot) tavlarena(ctx context.Context, no int, p plan) (*played, error) {
	seats := seatsOf(no)
	g, err := bt.b.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: [2]dice.UUID{seats[0].id, seats[1].id}, Settings: p.settings(no)})
	if err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	out := &played{no: no, plan: p, id: g.ID(), seal: g.SealCode()}
	for _, seat := range []int{1, 0} {
		if err := g.Contribute(ctx, seat, random32()); err != nil {
			return out, fmt.Errorf("contribution of seat %d: %w", seat, err)
		}
	}
	return out, bt.play(ctx, g, out)
}

// seal starts an anchored-v1 game anchored to round: the commit (sealed
// now, naming a round that does not exist yet), both players' tokens, and
// the tokens' receipts, so that the tokens are provably logged before the
// round exists.
func (bt *bot) seal(ctx context.Context, no int, p plan, round uint64) (*sdk.AnchoredGame, error) {
	now := bt.clock.Now()
	at := quicknet.RoundAt(now)
	if round <= at {
		return nil, fmt.Errorf("anchor round %d exists at %s (round %d)", round, now.UTC().Format(timeLayout), at)
	}
	g, err := bt.b.NewAnchored(ctx, sdk.AnchoredSpec{MatchID: fmt.Sprintf("demo match %d", no), GameNo: 1,
		Settings: p.settings(no), Rounds: round - at})
	if err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	if g.Anchor().Round != round {
		return nil, fmt.Errorf("anchored to round %d, want %d", g.Anchor().Round, round)
	}
	r := random32()
	for seat, tok := range []string{fmt.Sprintf("seat 0 of table %d: %x", no, r[:4]), fmt.Sprintf("🎲 %x", r[4:8])} {
		if err := g.Token(ctx, seat, tok); err != nil {
			return nil, fmt.Errorf("token of seat %d: %w", seat, err)
		}
	}
	for seq := uint64(1); seq <= 2; seq++ {
		if _, err := g.Receipt(ctx, seq); err != nil {
			return nil, fmt.Errorf("receipt of token %d: %w", seq, err)
		}
	}
	return g, nil
}

// anchored plays a sealed anchored-v1 game: it waits for the anchor round
// (the replay clock skips to it), logs its beacon and plays the game.
func (bt *bot) anchored(ctx context.Context, no int, p plan, g *sdk.AnchoredGame) (*played, error) {
	out := &played{no: no, plan: p, id: g.ID(), seal: g.SealCode()}
	if err := bt.clock.WaitUntil(ctx, g.AnchorTime()); err != nil {
		return out, err
	}
	for {
		err := g.RecordBeacon(ctx, bt.beacons)
		if err == nil {
			break
		}
		if !errors.Is(err, sdk.ErrBeaconNotYet) {
			return out, fmt.Errorf("beacon of round %d: %w", g.Anchor().Round, err)
		}
		// A relay may publish the round a moment after its time.
		if err := bt.clock.WaitUntil(ctx, bt.clock.Now().Add(quicknet.Period()/3)); err != nil {
			return out, err
		}
	}
	return out, bt.play(ctx, g, out)
}

// play plays a per-game scheme's game from its first roll to its reveal.
func (bt *bot) play(ctx context.Context, g sdk.PerGame, out *played) error {
	rng := strategy()
	st, err := g.State(ctx)
	if err != nil {
		return err
	}
	next := -1
	for n := 0; ; n++ {
		if st.MovesLogged {
			end, over, err := g.BoardEnd(ctx)
			if err != nil {
				return err
			}
			if over {
				out.end = end
				break
			}
		}
		if out.plan.resignAfter > 0 && n >= out.plan.resignAfter && next >= 0 {
			// The seat about to roll resigns.
			out.end = events.End{Result: events.Resigned, Winner: 1 - next, Points: 1}
			break
		}
		if n >= maxRolls {
			return fmt.Errorf("no end after %d rolls", n)
		}
		r, err := g.Roll(ctx)
		if err != nil {
			return fmt.Errorf("roll %d: %w", n, err)
		}
		out.rolls++
		if r.Dice[0] == r.Dice[1] {
			out.doubles++
		}
		next = r.Next
		if r.Seat < 0 {
			continue
		}
		play := "-"
		if st.MovesLogged {
			if st, err = g.State(ctx); err != nil {
				return err
			}
			if play, err = choose(st, r.Seat, rng); err != nil {
				return fmt.Errorf("roll %d: %w", n, err)
			}
		}
		if _, err := g.Move(ctx, r.Seat, play); err != nil {
			return fmt.Errorf("move of roll %d: %w", r.N, err)
		}
	}
	if err := g.End(ctx, out.end); err != nil {
		return fmt.Errorf("end: %w", err)
	}
	if err := g.Reveal(ctx); err != nil {
		return fmt.Errorf("reveal: %w", err)
	}
	return nil
}

// choose picks seat's play with rules.Choose in the position the game's
// state holds (the rules engine's, as the ledger keeps it).
func choose(st *events.Game, seat int, rng *mrand.Rand) (string, error) {
	ms, err := movecheck.ParseState(st.Position)
	if err != nil {
		return "", err
	}
	if ms.Phase != movecheck.PhasePlay || ms.Seat != seat {
		return "", fmt.Errorf("the rules engine waits for %s, not for seat %d's play", ms, seat)
	}
	return rules.FormatPlay(rules.Choose(ms.Variant, ms.Position, seat, ms.Dice, rng)), nil
}

// perRoll plays a per-roll-v1 match of one game: before every roll a fresh
// commitment, then the second number (alternately the player's app's and
// the server's), the reveal, which the player's app checks at once
// (sdk.CheckRoll), and the move.
func (bt *bot) perRoll(ctx context.Context, no int, p plan) (*played, error) {
	m, err := bt.b.NewPerRoll(ctx, sdk.PerRollSpec{Settings: p.settings(no)})
	if err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	out := &played{no: no, plan: p, id: m.ID()}
	rng := strategy()
	for i := 0; ; i++ {
		st, err := m.State(ctx)
		if err != nil {
			return out, err
		}
		end, over, err := m.BoardEnd(ctx)
		if err != nil {
			return out, err
		}
		if over {
			out.end = end
			break
		}
		if p.resignAfter > 0 && i >= p.resignAfter {
			ms, err := movecheck.ParseState(st.Position)
			if err == nil && ms.Seat >= 0 {
				out.end = events.End{Result: events.Resigned, Winner: 1 - ms.Seat, Points: 1}
				break
			}
		}
		if i >= maxRolls {
			return out, fmt.Errorf("no end after %d rolls", i)
		}
		before, err := m.CommitRoll(ctx)
		if err != nil {
			return out, fmt.Errorf("roll %d: commit: %w", i, err)
		}
		if i == 0 {
			out.seal = dice.SealCode(before.Commitment)
		}
		var sent *[32]byte
		if i%2 == 0 {
			s := random32()
			sent = &s
			err = m.ClientSecond(ctx, s)
		} else {
			err = m.ServerSecond(ctx)
		}
		if err != nil {
			return out, fmt.Errorf("roll %d: second: %w", i, err)
		}
		got, err := m.RevealRoll(ctx)
		if err != nil {
			return out, fmt.Errorf("roll %d: reveal: %w", i, err)
		}
		if err := sdk.CheckRoll(before, sent, got); err != nil {
			return out, fmt.Errorf("roll %d: the player's check: %w", i, err)
		}
		out.rolls++
		if got.Dice[0] == got.Dice[1] {
			out.doubles++
		}
		if got.Seat < 0 {
			continue
		}
		if st, err = m.State(ctx); err != nil {
			return out, err
		}
		play, err := choose(st, got.Seat, rng)
		if err != nil {
			return out, fmt.Errorf("roll %d: %w", i, err)
		}
		if _, err := m.Move(ctx, got.Seat, play); err != nil {
			return out, fmt.Errorf("move of roll %d: %w", i, err)
		}
	}
	if err := m.End(ctx, out.end); err != nil {
		return out, fmt.Errorf("end: %w", err)
	}
	return out, nil
}
