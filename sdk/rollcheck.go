package sdk

import (
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
)

// ErrRollCheck is matched (errors.Is) by every *RollCheckError.
var ErrRollCheck = errors.New("per-roll check failed")

// A RollCheckPart names what CheckRoll found wrong.
type RollCheckPart string

// The parts of a per-roll-v1 roll CheckRoll checks, in order.
const (
	RollCheckID         RollCheckPart = "roll-id"    // the reveal names another roll than the commitment
	RollCheckSecond     RollCheckPart = "second"     // the second number is not the one the app sent
	RollCheckCommitment RollCheckPart = "commitment" // SHA-256(seed) is not the commitment received before the roll
	RollCheckDice       RollCheckPart = "dice"       // the dice are not the ones the seed and the second number give
)

// A RollCheckError says which part of a per-roll-v1 roll failed the
// player's check, with the values involved.
type RollCheckError struct {
	Part   RollCheckPart
	RollID dice.UUID // the roll the commitment named
	// Want and Got hold the values compared, as text (hex ids, hashes,
	// "a-b" dice): Want is what the app knew before the roll or recomputed,
	// Got what the server revealed.
	Want, Got string
}

func (e *RollCheckError) Error() string {
	switch e.Part {
	case RollCheckID:
		return fmt.Sprintf("roll %s: the reveal is of roll %s, not of the roll committed to", e.RollID, e.Got)
	case RollCheckSecond:
		return fmt.Sprintf("roll %s: the revealed second number %s is not the %s the app sent", e.RollID, e.Got, e.Want)
	case RollCheckCommitment:
		return fmt.Sprintf("roll %s: the revealed seed hashes to %s, not to the commitment %s received before the roll", e.RollID, e.Got, e.Want)
	case RollCheckDice:
		return fmt.Sprintf("roll %s: the revealed dice are %s, the seed and the second number give %s", e.RollID, e.Got, e.Want)
	}
	return fmt.Sprintf("roll %s: %s check failed", e.RollID, e.Part)
}

// Is reports whether target is ErrRollCheck.
func (e *RollCheckError) Is(target error) bool { return target == ErrRollCheck }

// CheckRoll is the check a player's app runs on a per-roll-v1 roll the moment
// it is revealed (docs/SCHEMES.md §4, seed 004): before is the commitment
// the app received before the roll, sent the second number the app itself
// sent for it (nil when the server made the second number), and got what
// the server revealed. It confirms, in this order, that the reveal is of the
// committed roll, that the second number is the app's (and is marked
// "client"), that SHA-256 of the seed is the commitment, and that the dice
// are the ones the seed gives with the match id, the roll id and the second
// number. It returns nil, or a *RollCheckError naming the first part that
// failed. It needs no network and no ledger: the app held the commitment
// before the roll, which is what the log alone cannot show.
func CheckRoll(before RollCommitment, sent *[32]byte, got RevealedRoll) error {
	fail := func(part RollCheckPart, want, have string) error {
		return &RollCheckError{Part: part, RollID: before.RollID, Want: want, Got: have}
	}
	if got.RollID != before.RollID {
		return fail(RollCheckID, before.RollID.String(), got.RollID.String())
	}
	if sent != nil {
		if got.Second != *sent {
			return fail(RollCheckSecond, fmt.Sprintf("%x", sent[:]), fmt.Sprintf("%x", got.Second[:]))
		}
		if got.SecondFrom != events.FromClient {
			return fail(RollCheckSecond, `"secondFrom": "client"`, fmt.Sprintf(`"secondFrom": %q`, got.SecondFrom))
		}
	}
	if h := sha256.Sum256(got.Seed[:]); h != before.Commitment {
		return fail(RollCheckCommitment, fmt.Sprintf("%x", before.Commitment[:]), fmt.Sprintf("%x", h[:]))
	}
	d := dice.NewPerRoll(got.Seed, before.MatchID, before.RollID, got.Second).Roll(0)
	if d != got.Dice {
		return fail(RollCheckDice, d.String(), got.Dice.String())
	}
	return nil
}
