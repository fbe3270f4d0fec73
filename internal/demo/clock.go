package demo

import (
	"context"
	"sync"
	"time"
)

// A clock is the demo's clock: the ledger's and the bot's (event times,
// anchored-v1 sealing times and anchor rounds). WaitUntil returns once the
// clock shows t or later.
type clock interface {
	Now() time.Time
	WaitUntil(ctx context.Context, t time.Time) error
}

// A realClock is the machine's clock: WaitUntil sleeps (live drand rounds).
type realClock struct{ now func() time.Time }

func (c realClock) Now() time.Time { return c.now() }

func (c realClock) WaitUntil(ctx context.Context, t time.Time) error {
	for {
		d := t.Sub(c.now())
		if d <= 0 {
			return nil
		}
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
}

// A replayClock replays a moment of the past: it shows start when it is
// made and then runs at the real rate, WaitUntil skips ahead to the time
// waited for instead of sleeping, and Resume skips ahead to the real time.
// It never goes back. The demo runs the ledger and the bot on it to replay
// a recorded drand round: the anchored games are sealed before the round's
// time and their players' tokens logged, then the clock resumes the real
// time, at which the round has long passed and its recorded beacon exists,
// so that the games are played, and their events dated, when they are.
type replayClock struct {
	real func() time.Time
	mu   sync.Mutex
	off  time.Duration // added to the real time
}

func newReplayClock(real func() time.Time, start time.Time) *replayClock {
	return &replayClock{real: real, off: start.Sub(real())}
}

func (c *replayClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.real().Add(c.off)
}

func (c *replayClock) WaitUntil(ctx context.Context, t time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.real().Add(c.off); t.After(now) {
		c.off += t.Sub(now)
	}
	return nil
}

// Resume moves the clock to the real time, unless it is already later.
func (c *replayClock) Resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off = max(c.off, 0)
}
