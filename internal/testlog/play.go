package testlog

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
	"github.com/zarlog/zarlog/sdk"
)

// A Clock is a settable clock for the backend (sdk.GameConfig.Now).
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock set to t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set sets the clock.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// AnchoredStart is a time at which a new anchored-v1 game names the round
// of the real quicknet beacon the SDK's recorded source holds
// (testonly.BeaconRound): the backend's clock, and the ledger's (`zarlog
// serve --clock-start`), start there.
func AnchoredStart() time.Time {
	return drand.Quicknet().RoundTime(testonly.BeaconRound - sdk.DefaultAnchorRounds).Add(time.Second)
}

// After, if not nil, is called after every event a Play function logs with
// the game, the event's seq and its bytes (its JetStream ack received).
type After func(game string, seq uint64, leaf []byte)

// Tavlarena plays a tavlarena-v1 game with the given settings (JSON object
// text) and returns its id. Without logged moves it resigns after maxRolls
// rolls.
func Tavlarena(ctx context.Context, b *sdk.Backend, label, settings string, maxRolls int, after After) (string, error) {
	return TavlarenaSeats(ctx, b, label, [2]dice.UUID{testonly.LabelUUID(label + "/seat0"), testonly.LabelUUID(label + "/seat1")}, settings, maxRolls, after)
}

// TavlarenaSeats is Tavlarena with the players' seat ids given.
func TavlarenaSeats(ctx context.Context, b *sdk.Backend, label string, seats [2]dice.UUID, settings string, maxRolls int, after After) (string, error) {
	g, err := b.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats, Settings: []byte(settings)})
	if err != nil {
		return "", fmt.Errorf("%s: commit: %w", label, err)
	}
	note(ctx, after, g, 0)
	if err := g.Contribute(ctx, 1, testonly.Label32(label+"/c1")); err != nil {
		return g.ID(), fmt.Errorf("%s: contribution: %w", label, err)
	}
	if err := g.Contribute(ctx, 0, testonly.Label32(label+"/c0")); err != nil {
		return g.ID(), fmt.Errorf("%s: contribution: %w", label, err)
	}
	note(ctx, after, g, 1)
	note(ctx, after, g, 2)
	return g.ID(), play(ctx, g, label, maxRolls, 3, after)
}

// Anchored plays an anchored-v1 game anchored to the real quicknet round
// testonly.BeaconRound: clock, the backend's, must be at AnchoredStart and
// the ledger's clock before the round's time. The tokens' receipts are
// taken before the clock moves to the round's time and the beacon is
// recorded.
func Anchored(ctx context.Context, b *sdk.Backend, clock *Clock, label, settings string, maxRolls int, after After) (string, error) {
	g, err := b.NewAnchored(ctx, sdk.AnchoredSpec{MatchID: "match " + label, GameNo: 1, Settings: []byte(settings)})
	if err != nil {
		return "", fmt.Errorf("%s: commit: %w", label, err)
	}
	if g.Anchor().Round != testonly.BeaconRound {
		return g.ID(), fmt.Errorf("%s: anchor round %d, want %d (set the clock to AnchoredStart)", label, g.Anchor().Round, testonly.BeaconRound)
	}
	note(ctx, after, g, 0)
	for seat, tok := range []string{"gül " + label, "zar 🎲"} {
		if err := g.Token(ctx, seat, tok); err != nil {
			return g.ID(), fmt.Errorf("%s: token: %w", label, err)
		}
		note(ctx, after, g, uint64(seat+1))
	}
	for seq := uint64(1); seq <= 2; seq++ {
		if _, err := g.Receipt(ctx, seq); err != nil {
			return g.ID(), fmt.Errorf("%s: receipt of token %d: %w", label, seq, err)
		}
	}
	clock.Set(g.AnchorTime())
	if err := g.RecordBeacon(ctx, sdk.QuicknetBeacons()); err != nil {
		return g.ID(), fmt.Errorf("%s: beacon: %w", label, err)
	}
	note(ctx, after, g, 3)
	return g.ID(), play(ctx, g, label, maxRolls, 4, after)
}

// PerRoll plays a per-roll-v1 match of rolls rolls (the second number
// alternately from the client and the server), every roll checked with
// sdk.CheckRoll, a move "-" for each played roll, and a resignation.
func PerRoll(ctx context.Context, b *sdk.Backend, label, settings string, rolls int, after After) (string, error) {
	m, err := b.NewPerRoll(ctx, sdk.PerRollSpec{Settings: []byte(settings)})
	if err != nil {
		return "", fmt.Errorf("%s: commit: %w", label, err)
	}
	seq := uint64(0)
	note(ctx, after, m, seq)
	for i := range rolls {
		before, err := m.CommitRoll(ctx)
		if err != nil {
			return m.ID(), fmt.Errorf("%s: roll %d: commit: %w", label, i, err)
		}
		seq++
		note(ctx, after, m, seq)
		var sent *[32]byte
		if i%2 == 1 {
			err = m.ServerSecond(ctx)
		} else {
			s := testonly.Label32(fmt.Sprintf("%s/second/%d", label, i))
			sent = &s
			err = m.ClientSecond(ctx, s)
		}
		if err != nil {
			return m.ID(), fmt.Errorf("%s: roll %d: second: %w", label, i, err)
		}
		seq++
		note(ctx, after, m, seq)
		got, err := m.RevealRoll(ctx)
		if err != nil {
			return m.ID(), fmt.Errorf("%s: roll %d: reveal: %w", label, i, err)
		}
		seq++
		note(ctx, after, m, seq)
		if err := sdk.CheckRoll(before, sent, got); err != nil {
			return m.ID(), fmt.Errorf("%s: roll %d: the player's check: %w", label, i, err)
		}
		if got.Seat >= 0 {
			if _, err := m.Move(ctx, got.Seat, "-"); err != nil {
				return m.ID(), fmt.Errorf("%s: roll %d: move: %w", label, i, err)
			}
			seq++
			note(ctx, after, m, seq)
		}
	}
	if err := m.End(ctx, events.End{Result: events.Resigned, Winner: 0, Points: 1}); err != nil {
		return m.ID(), fmt.Errorf("%s: end: %w", label, err)
	}
	note(ctx, after, m, seq+1)
	return m.ID(), nil
}

// play plays a per-game scheme's game from its first roll to its reveal;
// seq is the seq of the next event.
func play(ctx context.Context, g perGame, label string, maxRolls int, seq uint64, after After) error {
	strategy := rand.New(rand.NewChaCha8(testonly.Label32("strategy/" + label)))
	st, err := g.State(ctx)
	if err != nil {
		return err
	}
	for n := 0; ; n++ {
		if st.MovesLogged {
			end, over, err := g.BoardEnd(ctx)
			if err != nil {
				return err
			}
			if over {
				if err := g.End(ctx, end); err != nil {
					return fmt.Errorf("%s: end: %w", label, err)
				}
				break
			}
		} else if n >= maxRolls {
			if err := g.End(ctx, events.End{Result: events.Resigned, Winner: 1, Points: 1}); err != nil {
				return fmt.Errorf("%s: end: %w", label, err)
			}
			break
		}
		r, err := g.Roll(ctx)
		if err != nil {
			return fmt.Errorf("%s: roll %d: %w", label, n, err)
		}
		note(ctx, after, g, seq)
		seq++
		if r.Seat < 0 {
			continue
		}
		p := "-"
		if st.MovesLogged {
			if st, err = g.State(ctx); err != nil {
				return err
			}
			ms, err := movecheck.ParseState(st.Position)
			if err != nil {
				return err
			}
			if ms.Phase != movecheck.PhasePlay || ms.Seat != r.Seat {
				return errors.New(label + ": the SDK and the rules engine disagree on who plays")
			}
			p = rules.FormatPlay(rules.Choose(ms.Variant, ms.Position, r.Seat, ms.Dice, strategy))
		}
		if _, err := g.Move(ctx, r.Seat, p); err != nil {
			return fmt.Errorf("%s: move of roll %d: %w", label, r.N, err)
		}
		note(ctx, after, g, seq)
		seq++
	}
	note(ctx, after, g, seq) // the end
	if err := g.Reveal(ctx); err != nil {
		return fmt.Errorf("%s: reveal: %w", label, err)
	}
	note(ctx, after, g, seq+1)
	return nil
}

// A perGame is a game of a per-game scheme, with its events' bytes.
type perGame interface {
	sdk.PerGame
	Leaves(ctx context.Context) ([][]byte, error)
}

// A leafer is a game of the SDK: its id and its events' bytes.
type leafer interface {
	ID() string
	Leaves(ctx context.Context) ([][]byte, error)
}

func note(ctx context.Context, after After, g leafer, seq uint64) {
	if after == nil {
		return
	}
	var leaf []byte
	if leaves, err := g.Leaves(ctx); err == nil && seq < uint64(len(leaves)) {
		leaf = leaves[seq]
	}
	after(g.ID(), seq, leaf)
}

// Leaves records the events that Play functions log (its After), so that
// a test can ask for their receipts, which prove the events' bytes.
type Leaves struct {
	mu sync.Mutex
	m  map[string][][]byte
}

// After records the event seq of game (an After).
func (l *Leaves) After(game string, seq uint64, leaf []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string][][]byte{}
	}
	evs := l.m[game]
	for uint64(len(evs)) <= seq {
		evs = append(evs, nil)
	}
	evs[seq] = leaf
	l.m[game] = evs
}

// Event returns the event seq of game as the SDK published it (Data is nil
// if it was not recorded).
func (l *Leaves) Event(game string, seq uint64) sdk.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev := sdk.Event{ID: fmt.Sprintf("%s:%d", game, seq)}
	if evs := l.m[game]; seq < uint64(len(evs)) {
		ev.Data = evs[seq]
	}
	return ev
}
