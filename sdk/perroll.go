package sdk

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// A PerRollSpec describes a new per-roll-v1 match.
type PerRollSpec struct {
	// MatchID is the match's UUID. Zero means a random version-4 UUID
	// drawn from the backend's Rand.
	MatchID dice.UUID
	// Settings is the settings object (docs/FORMATS.md §1.6). Nil means
	// "{}". A device's match must say "opponent": "computer".
	Settings []byte
}

// A PerRollMatch is one per-roll-v1 match (docs/SCHEMES.md §4): before each
// roll the backend draws a fresh seed and logs its commitment; a second
// number is then made (by the player's app in a live match, by the server in
// a correspondence match); the seed is revealed with the dice, and the
// player's app checks them at once (CheckRoll).
//
// Its life: NewPerRoll (the commit with the settings), then for every roll
// CommitRoll, ClientSecond or ServerSecond, RevealRoll (and Move), and End.
type PerRollMatch struct{ game }

// A RollCommitment is what a player's app receives before a per-roll-v1
// roll: the roll's id and the commitment to its seed.
type RollCommitment struct {
	MatchID    dice.UUID
	RollID     dice.UUID
	Commitment [32]byte // SHA-256(seed_r)
}

// A RevealedRoll is what a player's app receives after a per-roll-v1 roll:
// the seed, the second number and the dice.
type RevealedRoll struct {
	// Index is the roll's index in the match, from 0 (a move's n).
	Index      uint32
	RollID     dice.UUID
	Seed       [32]byte
	Second     [32]byte
	SecondFrom events.SecondFrom
	Dice       dice.Dice
	// Seat is the seat that plays the roll in a match whose moves are
	// logged (the rules engine follows the match), or -1: not known (moves
	// not logged), or nobody plays it (an opening roll).
	Seat int
}

// NewPerRoll opens a per-roll-v1 match: it logs the commit with the settings.
func (b *Backend) NewPerRoll(ctx context.Context, spec PerRollSpec) (*PerRollMatch, error) {
	settings := spec.Settings
	if settings == nil {
		settings = []byte("{}")
	}
	gs, err := b.checkSettings(settings)
	if err != nil {
		return nil, err
	}
	id := spec.MatchID
	if id == (dice.UUID{}) {
		if id, err = b.newUUID("the match id"); err != nil {
			return nil, err
		}
	}
	m := &PerRollMatch{*newGame(b, events.PerRoll, id.String(), gs)}
	if err := m.acquire(ctx); err != nil {
		return nil, err
	}
	defer m.release()
	if err := m.emit(ctx, events.PerRollCommit{Settings: settings}); err != nil {
		if len(m.evs) == 0 {
			return nil, err
		}
		return m, err // ErrNotAcknowledged: the match exists
	}
	return m, nil
}

func (m *PerRollMatch) matchID() dice.UUID {
	u, _ := dice.ParseUUID(m.id) // a per-roll-v1 game id is a UUID (events checks it)
	return u
}

// CommitRoll draws the next roll's seed and id and logs the commitment to
// the seed; send the returned RollCommitment to the player's app before the
// roll. The seed stays secret until RevealRoll (it is in the match's
// Snapshot). The match's first CommitRoll waits for the commit's receipt
// unless the backend skips it.
func (m *PerRollMatch) CommitRoll(ctx context.Context) (RollCommitment, error) {
	if err := m.acquire(ctx); err != nil {
		return RollCommitment{}, err
	}
	defer m.release()
	if m.st.Pending != nil {
		return RollCommitment{}, fmt.Errorf("sdk: match %s: %w: roll %s is pending", m.id, ErrNotNow, m.st.Pending.RollID)
	}
	if err := m.flush(ctx); err != nil {
		return RollCommitment{}, err
	}
	if err := m.needReceipt(ctx); err != nil {
		return RollCommitment{}, err
	}
	rollID, err := m.b.newUUID("the roll id")
	if err != nil {
		return RollCommitment{}, err
	}
	seed, err := m.b.draw32("the roll's seed")
	if err != nil {
		return RollCommitment{}, err
	}
	rc := events.NewRollCommit(rollID, seed)
	if _, err := m.record(rc); err != nil {
		return RollCommitment{}, err
	}
	m.seed = &seed
	out := RollCommitment{MatchID: m.matchID(), RollID: rollID, Commitment: rc.Commitment}
	return out, m.publishRecorded(ctx)
}

// ClientSecond logs the second number the player's app sent for the pending
// roll (a live match: "secondFrom": "client").
func (m *PerRollMatch) ClientSecond(ctx context.Context, second [32]byte) error {
	return m.second(ctx, events.FromClient, &second)
}

// ServerSecond draws the second number of the pending roll itself and logs
// it (a correspondence match: "secondFrom": "server"; the record cannot show
// that the server did not know or choose the roll, docs/SCHEMES.md §9).
func (m *PerRollMatch) ServerSecond(ctx context.Context) error {
	return m.second(ctx, events.FromServer, nil)
}

func (m *PerRollMatch) second(ctx context.Context, from events.SecondFrom, second *[32]byte) error {
	if err := m.acquire(ctx); err != nil {
		return err
	}
	defer m.release()
	p := m.st.Pending
	if p == nil || p.Stage != events.RollCommitted {
		return fmt.Errorf("sdk: match %s: %w: no committed roll waits for its second number", m.id, ErrNotNow)
	}
	if second == nil {
		s, err := m.b.draw32("the second number")
		if err != nil {
			return err
		}
		second = &s
	}
	return m.emit(ctx, events.RollSecond{RollID: p.RollID, Second: *second, SecondFrom: from})
}

// RevealRoll logs the pending roll's seed with the dice it gives, and
// returns what the player's app needs to check them (CheckRoll).
func (m *PerRollMatch) RevealRoll(ctx context.Context) (RevealedRoll, error) {
	if err := m.acquire(ctx); err != nil {
		return RevealedRoll{}, err
	}
	defer m.release()
	p := m.st.Pending
	if p == nil || p.Stage != events.RollSeconded {
		return RevealedRoll{}, fmt.Errorf("sdk: match %s: %w: no roll waits for its reveal (commit it and take its second number first)", m.id, ErrNotNow)
	}
	if m.seed == nil || sha256.Sum256(m.seed[:]) != p.Commitment {
		return RevealedRoll{}, fmt.Errorf("sdk: match %s: the pending roll's seed does not give its commitment", m.id) // a broken snapshot
	}
	if err := m.flush(ctx); err != nil {
		return RevealedRoll{}, err
	}
	rr := events.NewRollReveal(m.matchID(), p.RollID, p.Second, *m.seed)
	pending := *p
	if _, err := m.record(rr); err != nil {
		return RevealedRoll{}, err
	}
	m.seed = nil
	out := RevealedRoll{Index: uint32(len(m.st.RollRecords) - 1), RollID: rr.RollID, Seed: rr.Seed,
		Second: pending.Second, SecondFrom: pending.SecondFrom, Dice: rr.Dice, Seat: -1}
	if m.st.MovesLogged {
		if s, err := movecheck.ParseState(m.st.Position); err == nil && s.Phase == movecheck.PhasePlay {
			out.Seat = s.Seat
		}
	}
	return out, m.publishRecorded(ctx)
}
