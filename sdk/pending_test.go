package sdk

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestPendingDone: a Pending's channel closes when its result is set,
// whether Done was asked before (a channel made for it) or after (one
// closed already), and Wait and Result give the result either way, also
// with callers racing the result (go test -race).
func TestPendingDone(t *testing.T) {
	ack := Ack{Stream: "S", Seq: 7, Events: 2}
	fail := errors.New("refused")

	var before Pending
	done := before.Done()
	select {
	case <-done:
		t.Fatal("Done is closed before the result is set")
	default:
	}
	if before.Done() != done {
		t.Fatal("two calls of Done before the result gave two channels")
	}
	before.settle(ack, nil)
	<-done
	if got, err := before.Result(); got != ack || err != nil {
		t.Fatalf("Result() = %v, %v; want %v, nil", got, err, ack)
	}

	var after Pending
	after.settle(Ack{}, fail)
	<-after.Done()
	if _, err := after.Wait(context.Background()); err != fail {
		t.Fatalf("Wait after the result: %v, want %v", err, fail)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var never Pending
	if _, err := never.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with an ended ctx: %v, want context.Canceled", err)
	}

	for range 100 {
		var p Pending
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if got, err := p.Wait(context.Background()); got != ack || err != nil {
					t.Errorf("Wait racing the result: %v, %v", got, err)
				}
			})
		}
		p.settle(ack, nil)
		wg.Wait()
	}
}

// TestPublishSettleAllocs: publishing an event with following on, its
// acknowledgement alone in a message, its result read after it, and the
// logged verdict of the oldest of the ten held cost three allocations: the event's entry, Pending and
// held record together, and the message's record with its list of held
// events (the Pending's channel is made only for a caller that waits
// before the result; 6 allocations before).
func TestPublishSettleAllocs(t *testing.T) {
	c := bareClient(Config{Emitter: "e1"})
	ctx := context.Background()
	evs := make([]Event, 200)
	for i := range evs {
		g := fmt.Sprintf("game-%d", i%7)
		evs[i] = Event{ID: fmt.Sprintf("%s:%d", g, i), Data: []byte(`{"n":1}`), OrderKey: g}
	}
	i := 0
	var items []*entry
	publish := func() {
		i++
		p, err := c.PublishAsync(ctx, evs[i])
		if err != nil {
			t.Fatal(err)
		}
		e := <-c.queue
		c.took(e)
		items = c.take(items[:0], e)
		m := c.newSentMsg(uint64(i), e.ev.Data, len(items))
		c.acknowledged(items, Ack{Stream: "S", Seq: uint64(i), Events: 1}, m)
		<-p.Done()
		if _, err := p.Result(); err != nil {
			t.Fatal(err)
		}
	}
	for range 10 {
		publish() // held while the ledger has not answered
	}
	allocs := testing.AllocsPerRun(100, func() {
		publish()
		f := c.follow
		f.mu.Lock()
		c.dropLocked(f.order[0])
		f.mu.Unlock()
	})
	if allocs > 3 {
		t.Errorf("publishing, acknowledging and forgetting an event: %.1f allocations, want at most 3", allocs)
	}
}
