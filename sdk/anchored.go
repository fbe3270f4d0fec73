package sdk

import (
	"context"
	"fmt"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/events/drand"
)

// DefaultAnchorRounds is how many rounds after the current one an
// anchored-v1 game's anchor round is, unless AnchoredSpec.Rounds says
// otherwise: 20 quicknet rounds, one minute for the players' tokens.
const DefaultAnchorRounds = 20

// An AnchoredSpec describes a new anchored-v1 game.
type AnchoredSpec struct {
	// GameID is the game id in the log ([A-Za-z0-9][A-Za-z0-9._-]{0,127}).
	// Zero means a random version-4 UUID drawn from the backend's Rand.
	GameID string
	// MatchID (1..256 bytes of UTF-8) and GameNo name the game in its match;
	// both go into every roll. MatchID is required.
	MatchID string
	GameNo  uint32
	// Settings is the settings object (docs/FORMATS.md §1.6). A device's
	// game must say "opponent": "computer".
	Settings []byte
	// Rounds is how many drand rounds after the current one the anchor
	// round is: the game names round RoundAt(now)+Rounds, which does not
	// exist yet. Both players' tokens must be logged before it exists
	// (the ledger refuses later ones). Zero means DefaultAnchorRounds.
	Rounds uint64
}

// An AnchoredGame is one anchored-v1 game (docs/SCHEMES.md §3): the backend
// draws the seed and logs its fingerprint with a drand round that does not
// exist yet; the players add tokens of their choosing while it does not; the
// round's beacon, once published, goes into every roll with the seed and the
// tokens; the seed is revealed at the end.
//
// Its life: NewAnchored (the commit), Token for each seat, RecordBeacon once
// the round exists, then Roll and Move, End, Reveal.
type AnchoredGame struct{ game }

// NewAnchored starts an anchored-v1 game: it draws the seed, names the
// quicknet round RoundAt(now)+Rounds, seals the game now (sealedAt) and logs
// the commit.
func (b *Backend) NewAnchored(ctx context.Context, spec AnchoredSpec) (*AnchoredGame, error) {
	gs, err := b.checkSettings(spec.Settings)
	if err != nil {
		return nil, err
	}
	id := spec.GameID
	if id == "" {
		u, err := b.newUUID("the game id")
		if err != nil {
			return nil, err
		}
		id = u.String()
	}
	rounds := spec.Rounds
	if rounds == 0 {
		rounds = DefaultAnchorRounds
	}
	seed, err := b.draw32("the seed")
	if err != nil {
		return nil, err
	}
	chain := drand.Quicknet()
	now := b.now()
	anchor := events.AnchorRef{Chain: chain.Hash(), Round: chain.RoundAt(now) + rounds}
	commit, err := events.NewAnchoredCommit(spec.MatchID, spec.GameNo, anchor, now, spec.Settings, seed)
	if err != nil {
		return nil, fmt.Errorf("sdk: game %s: %w: %w", id, ErrRefused, err)
	}
	g := &AnchoredGame{*newGame(b, events.Anchored, id, gs)}
	g.seed = &seed
	if err := g.acquire(ctx); err != nil {
		return nil, err
	}
	defer g.release()
	if err := g.emit(ctx, commit); err != nil {
		if len(g.evs) == 0 {
			return nil, err
		}
		return g, err // ErrNotAcknowledged: the game exists
	}
	return g, nil
}

func (g *AnchoredGame) commit() events.AnchoredCommit { return g.first.(events.AnchoredCommit) }

// Fingerprint returns SHA-256 of the seed, which players see before they
// choose their tokens (as a seal code: dice.SealCode).
func (g *AnchoredGame) Fingerprint() [32]byte { return g.commit().Fingerprint }

// SealCode returns the fingerprint's seal code.
func (g *AnchoredGame) SealCode() string { return dice.SealCode(g.Fingerprint()) }

// Anchor returns the drand round the game is anchored to.
func (g *AnchoredGame) Anchor() events.AnchorRef { return g.commit().Anchor }

// AnchorTime returns the time the anchor round is published: tokens must be
// logged before it, the beacon can be recorded from it on.
func (g *AnchoredGame) AnchorTime() time.Time { return drand.Quicknet().RoundTime(g.Anchor().Round) }

// Token logs seat's token (1 to 256 bytes of UTF-8), which must come
// before the anchor round exists (by the backend's clock; the ledger checks
// its own). Tokens are public at once: the round they precede makes them
// harmless.
func (g *AnchoredGame) Token(ctx context.Context, seat int, token string) error {
	if err := g.acquire(ctx); err != nil {
		return err
	}
	defer g.release()
	return g.emit(ctx, events.TokenContribution{Seat: seat, Token: token})
}

// RecordBeacon fetches the anchor round's beacon from src, verifies it
// against the pinned quicknet chain (whatever src did) and logs it; the rolls
// can then be computed. Both tokens must be logged first. Before the round's
// time (by the backend's clock) it returns an error wrapping ErrBeaconNotYet
// without asking src: call it again at AnchorTime.
func (g *AnchoredGame) RecordBeacon(ctx context.Context, src BeaconSource) error {
	if err := g.acquire(ctx); err != nil {
		return err
	}
	defer g.release()
	if !g.st.Contributed[0] || !g.st.Contributed[1] {
		return fmt.Errorf("sdk: game %s: %w: the beacon comes after both tokens (seat 0: %t, seat 1: %t)",
			g.id, ErrNotNow, g.st.Contributed[0], g.st.Contributed[1])
	}
	if g.st.Beacon != nil {
		return fmt.Errorf("sdk: game %s: %w: the beacon is logged already", g.id, ErrNotNow)
	}
	a := g.Anchor()
	chain, ok := drand.ChainByHash(a.Chain)
	if !ok {
		return fmt.Errorf("sdk: game %s: %w: chain %x", g.id, drand.ErrUnknownChain, a.Chain)
	}
	if now := g.b.now(); !chain.ExistedAt(a.Round, now) {
		return fmt.Errorf("sdk: game %s: round %d is due at %s, it is %s: %w",
			g.id, a.Round, chain.RoundTime(a.Round).Format(time.RFC3339), now.UTC().Format(time.RFC3339), ErrBeaconNotYet)
	}
	if err := g.flush(ctx); err != nil {
		return err
	}
	bc, err := src.Beacon(ctx, a.Chain, a.Round)
	if err != nil {
		return fmt.Errorf("sdk: game %s: beacon of round %d: %w", g.id, a.Round, err)
	}
	if err := verifyBeacon(bc, a.Chain, a.Round); err != nil {
		return fmt.Errorf("sdk: game %s: %w", g.id, err)
	}
	err = g.emit(ctx, bc)
	if g.st.Beacon != nil {
		g.setAnchoredRoller()
	}
	return err
}

// setAnchoredRoller makes the roller once the tokens and the beacon are
// logged.
func (g *AnchoredGame) setAnchoredRoller() {
	st := g.st
	binding := dice.AnchoredBinding(st.MatchID, st.GameNo, st.Tokens,
		dice.Anchor{Chain: st.Beacon.Chain, Round: st.Beacon.Round, Randomness: st.Beacon.Randomness})
	g.roller = dice.NewAnchored(*g.seed, binding)
}

// Roll logs the game's next roll: the dice the seed, the tokens and the
// beacon give, with its kind, the seat that plays it and the seat that rolls
// next (see TavlarenaGame.Roll).
func (g *AnchoredGame) Roll(ctx context.Context) (Rolled, error) { return g.roll(ctx) }

// Reveal logs the seed, after End: the game's last event.
func (g *AnchoredGame) Reveal(ctx context.Context) error { return g.reveal(ctx) }
