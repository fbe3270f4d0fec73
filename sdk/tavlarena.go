package sdk

import (
	"context"
	"fmt"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
)

// A TavlarenaSpec describes a new tavlarena-v1 game.
type TavlarenaSpec struct {
	// GameID is the game's UUID. Zero means a random version-4 UUID drawn
	// from the backend's Rand.
	GameID dice.UUID
	// Seats are the two players' UUIDs in seat order. Required; they must
	// differ.
	Seats [2]dice.UUID
	// Settings is the settings object (any JSON object text; docs/FORMATS.md
	// §1.6): the rules version and every rule and match setting, hashed
	// into the commitment. A device's game must say "opponent": "computer".
	Settings []byte
}

// A TavlarenaGame is one tavlarena-v1 game (docs/SCHEMES.md §2): the backend
// draws the seed and logs the commitment, both players contribute 32 random
// bytes (withheld until both have arrived), every roll comes from the seed
// and both contributions, and the seed is revealed at the end.
//
// Its life: NewTavlarena (the commit), Contribute for each seat, then Roll and
// Move as the game goes, End, Reveal. Every call publishes its events and
// waits for JetStream's ack; the first Roll also waits for the commit's
// receipt (CommitReceipt). Snapshot saves the game for Resume.
type TavlarenaGame struct{ game }

// NewTavlarena starts a tavlarena-v1 game: it draws the seed and logs the
// commit. The seed stays secret until Reveal (it is in the game's Snapshot).
func (b *Backend) NewTavlarena(ctx context.Context, spec TavlarenaSpec) (*TavlarenaGame, error) {
	gs, err := b.checkSettings(spec.Settings)
	if err != nil {
		return nil, err
	}
	id := spec.GameID
	if id == (dice.UUID{}) {
		if id, err = b.newUUID("the game id"); err != nil {
			return nil, err
		}
	}
	seed, err := b.draw32("the seed")
	if err != nil {
		return nil, err
	}
	commit, err := events.NewTavlarenaCommit(id, spec.Seats, spec.Settings, seed)
	if err != nil {
		return nil, fmt.Errorf("sdk: game %s: %w: %w", id, ErrRefused, err)
	}
	g := &TavlarenaGame{*newGame(b, events.Tavlarena, id.String(), gs)}
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

// Commitment returns the game's commitment, which players see before they
// contribute (as a seal code: dice.SealCode).
func (g *TavlarenaGame) Commitment() [32]byte {
	return g.first.(events.TavlarenaCommit).Commitment
}

// SealCode returns the commitment's seal code, such as "5CJ3-5ZCZ".
func (g *TavlarenaGame) SealCode() string { return dice.SealCode(g.Commitment()) }

// Contribute takes seat's 32-byte contribution. The first contribution to
// arrive is withheld — kept in the game (and its Snapshot), published to
// nobody — until the other seat's has arrived too; then both are logged
// together, seat 0's first. A seat contributes once (ErrNotNow otherwise).
func (g *TavlarenaGame) Contribute(ctx context.Context, seat int, contribution [32]byte) error {
	if err := g.acquire(ctx); err != nil {
		return err
	}
	defer g.release()
	if seat != 0 && seat != 1 {
		return fmt.Errorf("sdk: game %s: %w: seat %d", g.id, ErrNotNow, seat)
	}
	if g.st.Contributed[seat] || g.held[seat] != nil {
		return fmt.Errorf("sdk: game %s: %w: seat %d has contributed already", g.id, ErrNotNow, seat)
	}
	other := g.held[1-seat]
	if other == nil {
		if err := g.flush(ctx); err != nil {
			return err
		}
		c := contribution
		g.held[seat] = &c
		return nil
	}
	var both [2][32]byte
	both[seat], both[1-seat] = contribution, *other
	err := g.emit(ctx, events.Contribution{Contribution: both[0], Seat: 0}, events.Contribution{Contribution: both[1], Seat: 1})
	if g.st.Contributed[0] && g.st.Contributed[1] { // recorded, even if not acknowledged yet
		g.held = [2]*[32]byte{}
		g.roller = dice.NewTavlarena(*g.seed, g.gameID(), both)
	}
	return err
}

// Withheld reports which seats' contributions have arrived and are withheld.
func (g *TavlarenaGame) Withheld(ctx context.Context) ([2]bool, error) {
	if err := g.acquire(ctx); err != nil {
		return [2]bool{}, err
	}
	defer g.release()
	return [2]bool{g.held[0] != nil, g.held[1] != nil}, nil
}

func (g *TavlarenaGame) gameID() dice.UUID {
	u, _ := dice.ParseUUID(g.id) // a tavlarena-v1 game id is a UUID (events checks it)
	return u
}

// Roll logs the game's next roll and returns it: the dice the seed and both
// contributions give for roll n, its kind under the sequence rules (opening
// ties are rolled again; under "opening": "turkish-reroll" the starter rolls
// again), the seat that plays it and the seat that rolls next. The caller just
// asks for the next roll. The first roll waits for the commit's receipt
// unless the backend skips it. In a game whose moves are logged, the played
// roll's Move must come before the next Roll.
func (g *TavlarenaGame) Roll(ctx context.Context) (Rolled, error) { return g.roll(ctx) }

// Reveal logs the seed, after End: the game's last event. Anyone can then
// recompute the commitment and every roll.
func (g *TavlarenaGame) Reveal(ctx context.Context) error { return g.reveal(ctx) }
