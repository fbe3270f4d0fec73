package sdk

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkPublishSettle is the SDK's own bookkeeping of one published
// event at a human pace, without NATS: 50,000 games, each event of its own
// order key, following on, the 4,000 accepted before it still held
// (waiting for their checkpoint, as at 2,000 events a second an emitter).
// An op is PublishAsync, the sender's taking of the event (one event a
// message), its acknowledgement with the message's record (newSentMsg,
// acknowledged), the Pending's result, and the logged verdict of the
// oldest held event (dropLocked). "late" asks for the Pending's Done after
// the acknowledgement (the bench's acker, mostly: a message's events are
// acknowledged together); "waiting" before it (a caller blocked in Wait).
func BenchmarkPublishSettle(b *testing.B) {
	for _, waiting := range []bool{false, true} {
		name := "late"
		if waiting {
			name = "waiting"
		}
		b.Run(name, func(b *testing.B) {
			const games, window = 50000, 4000
			ctx := context.Background()
			c := bareClient(Config{Emitter: "e1"})
			n := b.N + window
			evs := make([]Event, n)
			for i := range evs {
				g := fmt.Sprintf("01234567-89ab-cdef-0123-456789ab%04x", i%games)
				evs[i] = Event{ID: fmt.Sprintf("%s:%d", g, i/games), Data: fmt.Appendf(nil, `{"id":"%s:%d","pad":"%0200d"}`, g, i/games, 0), OrderKey: g}
			}
			f := c.follow
			var items []*entry
			publish := func(i int) {
				p, err := c.PublishAsync(ctx, evs[i])
				if err != nil {
					b.Fatal(err)
				}
				var done <-chan struct{}
				if waiting {
					done = p.Done()
				}
				e := <-c.queue
				c.took(e)
				items = c.take(items[:0], e)
				seq := uint64(i + 1)
				m := c.newSentMsg(seq, e.ev.Data, len(items))
				c.acknowledged(items, Ack{Stream: "events", Seq: seq, Events: len(items)}, m)
				if !waiting {
					done = p.Done()
				}
				<-done
				if _, err := p.Result(); err != nil {
					b.Fatal(err)
				}
			}
			for i := range window {
				publish(i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				publish(window + i)
				f.mu.Lock()
				h := f.order[0]
				f.stats.Logged++
				c.dropLocked(h)
				f.mu.Unlock()
			}
		})
	}
}

// bareClient returns a Client with cfg and no connection, sender or
// follower loop: a test or benchmark plays the sender (take the queue,
// acknowledged) and the ledger's verdicts (dropLocked) itself.
func bareClient(cfg Config) *Client {
	cfg = cfg.withDefaults()
	return &Client{
		cfg:    cfg,
		admit:  make(chan struct{}, cfg.MaxQueued),
		queue:  make(chan *entry, cfg.MaxQueued),
		closed: make(chan struct{}),
		tails:  map[string]*entry{},
		linger: lingerer{bound: cfg.Linger},
		nap:    napper{kick: make(chan struct{}, 1)},
		follow: newFollower(cfg.FollowInterval < 0),
	}
}
