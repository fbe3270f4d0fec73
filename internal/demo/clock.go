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

// A replayClock replays a moment of the past: it shows start, held there,
// until Start, and then runs at the real rate; WaitUntil skips ahead to the
// time waited for instead of sleeping, and Resume skips ahead to the real
// time. It never goes back. The demo runs the ledger and the bot on it to
// replay a recorded drand round: the anchored games are sealed before the
// round's time and their players' tokens logged, then the clock resumes the
// real time, at which the round has long passed and its recorded beacon
// exists, so that the games are played, and their events dated, when they
// are.
//
// It is held while the demo sets up (the log, NATS, the witnesses, and a
// build of litewitness, which took over a minute on a fresh, loaded
// machine), so that the minute before the round is the sealing's alone:
// running from the start, it passed the round before the first seal.
type replayClock struct {
	real func() time.Time
	mu   sync.Mutex
	held bool          // showing at, until Start
	at   time.Time     // what a held clock shows
	off  time.Duration // added to the real time once started
}

func newReplayClock(real func() time.Time, start time.Time) *replayClock {
	return &replayClock{real: real, held: true, at: start}
}

func (c *replayClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now()
}

func (c *replayClock) now() time.Time {
	if c.held {
		return c.at
	}
	return c.real().Add(c.off)
}

func (c *replayClock) WaitUntil(ctx context.Context, t time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.now(); t.After(now) {
		if c.held {
			c.at = t
		} else {
			c.off += t.Sub(now)
		}
	}
	return nil
}

// Start lets a held clock run at the real rate from what it shows; it
// does nothing to a clock that runs.
func (c *replayClock) Start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.start()
}

func (c *replayClock) start() {
	if c.held {
		c.off, c.held = c.at.Sub(c.real()), false
	}
}

// Resume moves the clock to the real time, unless it is already later,
// and lets it run (a held clock too).
func (c *replayClock) Resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.start()
	c.off = max(c.off, 0)
}
