package sdk

import (
	"fmt"
	"testing"
)

// BenchmarkHoldDrop is the follower's bookkeeping of one event at a human
// pace: 50,000 games, each with its next event held while the 4,000
// accepted before it (two seconds of one emitter's 2,000 events a second)
// still wait for their checkpoint; an op holds one event (hold) and drops
// the oldest (dropLocked, as a logged verdict does).
func BenchmarkHoldDrop(b *testing.B) {
	const games, window = 50000, 4000
	c := &Client{follow: newFollower(false)}
	n := b.N + window
	evs := make([]Event, n)
	for i := range evs {
		g := fmt.Sprintf("0123456789abcdef0123456789abcdef0123456789abcdef%06d", i%games)
		evs[i] = Event{ID: fmt.Sprintf("%s:%d", g, i/games), Data: []byte("{}"), OrderKey: g}
	}
	hs := make([]*held, n)
	for i := range window {
		hs[i] = c.hold(evs[i], nil)
	}
	f := c.follow
	b.ResetTimer()
	for i := range b.N {
		hs[window+i] = c.hold(evs[window+i], nil)
		f.mu.Lock()
		c.dropLocked(hs[i])
		f.mu.Unlock()
		hs[i] = nil
	}
}
