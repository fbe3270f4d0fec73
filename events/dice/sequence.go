package dice

import (
	"fmt"

	"github.com/zarlog/zarlog/events/cjson"
)

// A Kind says what a roll of a per-game scheme was used for.
type Kind string

// Roll kinds.
const (
	KindOpening Kind = "opening" // one die per seat; a tie is rolled again
	KindReroll  Kind = "reroll"  // the Turkish-style re-roll the starter plays
	KindTurn    Kind = "turn"    // every other roll
)

// An Opening is the opening style of a match's settings.
type Opening string

// Opening styles.
const (
	// OpeningWestern: the starter plays the two opening dice.
	OpeningWestern Opening = "western"
	// OpeningTurkishReroll: the starter rolls again and plays that roll.
	OpeningTurkishReroll Opening = "turkish-reroll"
)

// OpeningOf returns the opening style named by a settings object (JSON):
// its "opening" member, western when absent. Unknown styles are an error.
func OpeningOf(settings []byte) (Opening, error) {
	v, err := cjson.Decode(settings)
	if err != nil {
		return "", fmt.Errorf("settings: %w", err)
	}
	obj, ok := v.(cjson.Object)
	if !ok {
		return "", fmt.Errorf("settings: %w: not a JSON object", ErrBadInput)
	}
	o, ok := obj.Get("opening")
	if !ok {
		return OpeningWestern, nil
	}
	switch o {
	case string(OpeningWestern):
		return OpeningWestern, nil
	case string(OpeningTurkishReroll):
		return OpeningTurkishReroll, nil
	}
	return "", fmt.Errorf("settings: opening %v: want \"western\" or \"turkish-reroll\": %w", o, ErrBadInput)
}

// A Roll is one roll of a per-game scheme as it was played.
type Roll struct {
	N    uint32
	Dice Dice
	Kind Kind
}

// A SequenceError says which roll broke the roll-sequence rules and how.
type SequenceError struct {
	N      uint32 // the roll number (its index in the game's rolls)
	Reason string
}

func (e *SequenceError) Error() string { return fmt.Sprintf("roll %d: %s", e.N, e.Reason) }

// A Sequence checks, roll by roll, the sequence rules of the per-game
// schemes: n contiguous from 0; opening rolls until the dice differ (a tie is
// rolled again); then, under turkish-reroll, exactly one reroll; then turns.
// The zero Sequence is not usable; call NewSequence.
type Sequence struct {
	opening Opening
	next    uint32
	want    Kind
	starter int // -1 until the opening is decided
}

// NewSequence returns a Sequence for a game with the given opening style.
func NewSequence(o Opening) *Sequence {
	return &Sequence{opening: o, want: KindOpening, starter: -1}
}

// Next checks that r may follow the rolls already accepted and accepts it.
// It returns a *SequenceError if not; the Sequence is then unchanged.
func (s *Sequence) Next(r Roll) error {
	if r.N != s.next {
		return &SequenceError{N: r.N, Reason: fmt.Sprintf("roll number %d out of order, want %d", r.N, s.next)}
	}
	if !r.Dice.Valid() {
		return &SequenceError{N: r.N, Reason: fmt.Sprintf("dice %v are not two faces from 1 to 6", r.Dice)}
	}
	if r.Kind != s.want {
		why := fmt.Sprintf("kind %q, want %q", r.Kind, s.want)
		switch {
		case s.want == KindOpening:
			why += " (the opening tie must be rolled again)"
		case s.want == KindReroll:
			why += " (turkish-reroll: the starter must roll again)"
		case r.Kind == KindReroll:
			why += " (exactly one re-roll, and only under turkish-reroll)"
		}
		return &SequenceError{N: r.N, Reason: why}
	}
	switch r.Kind {
	case KindOpening:
		if !r.Dice.IsDouble() {
			if r.Dice[0] > r.Dice[1] {
				s.starter = 0
			} else {
				s.starter = 1
			}
			s.want = KindTurn
			if s.opening == OpeningTurkishReroll {
				s.want = KindReroll
			}
		}
	case KindReroll:
		s.want = KindTurn
	}
	s.next++
	return nil
}

// Starter returns the seat that won the opening, or -1 if no opening roll
// has decided it yet.
func (s *Sequence) Starter() int { return s.starter }

// Rolls returns the number of rolls accepted so far.
func (s *Sequence) Rolls() uint32 { return s.next }

// WantKind returns the kind the next roll must have.
func (s *Sequence) WantKind() Kind { return s.want }

// CheckSequence checks a whole list of rolls: rolls[i].N == i and the rules
// of Sequence. It returns the first *SequenceError.
func CheckSequence(o Opening, rolls []Roll) error {
	s := NewSequence(o)
	for _, r := range rolls {
		if err := s.Next(r); err != nil {
			return err
		}
	}
	return nil
}

// Resume returns the Sequence after rolls, which a Sequence of opening o
// accepted in full (the rolls of a game's state). It replays the opening
// rolls only: once they are past, every roll is a turn and only the count
// changes, so it costs constant time for a game in play. It does not check
// the rolls again; for a list a Sequence would refuse, the result is
// meaningless. It returns the Sequence itself, not a pointer, so that a
// caller that only asks it something (the ledger, at every roll and move)
// keeps it on its stack.
func Resume(o Opening, rolls []Roll) Sequence {
	s := Sequence{opening: o, want: KindOpening, starter: -1}
	for _, r := range rolls {
		if s.want == KindTurn {
			break
		}
		_ = s.Next(r)
	}
	s.next = uint32(len(rolls))
	return s
}

// Then returns the Sequence after rolls, which follow the rolls s accepted
// (s from Resume or Then): Resume(o, a).Then(b) is Resume(o, a+b). It lets a
// caller that keeps only the last rolls of a game (the ledger's cache of
// games in play) resume their Sequence from one it kept for the rest.
func (s Sequence) Then(rolls []Roll) Sequence {
	base := s.next
	for _, r := range rolls {
		if s.want == KindTurn {
			break
		}
		_ = s.Next(r)
	}
	s.next = base + uint32(len(rolls))
	return s
}
