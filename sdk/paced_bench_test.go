package sdk_test

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/zarlog/zarlog/sdk"
)

// BenchmarkPublishPaced publishes b.N events at a steady 2,000 events a
// second (one emitter's share of 50,000 games at a human pace), each of
// its own order key (a game with one event in flight), through a Client
// with the default linger and following off, to a JetStream stream of an
// in-process nats-server; it waits for every acknowledgement. cpu-µs/event
// is the process's CPU time (every goroutine's: the SDK, nats.go and the
// server) over the events, the figure the linger's scheduling moves; the
// wall time is the pace's. Run it with -benchtime 8000x (4 s) or more.
func BenchmarkPublishPaced(b *testing.B) {
	const rate = 2000
	ctx := context.Background()
	s := startServer(b)
	nc := dial(b, s, "e1")
	createStream(b, nc, 0)
	c, err := sdk.New(nc, sdk.Config{Emitter: "e1", FollowInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	evs := make([]sdk.Event, b.N)
	for i := range evs {
		id := fmt.Sprintf("game-%06d:%d", i%50000, i/50000)
		evs[i] = sdk.Event{ID: id, Data: fmt.Appendf(nil, `{"id":%q,"n":%d,"pad":"%0200d"}`, id, i, 0), OrderKey: fmt.Sprintf("game-%06d", i%50000)}
	}
	pending := make([]*sdk.Pending, 0, b.N)
	gap := time.Second / rate
	b.ResetTimer()
	cpu0 := rusageCPU(b)
	start := time.Now()
	for i, ev := range evs {
		if d := time.Until(start.Add(time.Duration(i) * gap)); d > 0 {
			time.Sleep(d)
		}
		p, err := c.PublishAsync(ctx, ev)
		if err != nil {
			b.Fatal(err)
		}
		pending = append(pending, p)
	}
	var msgs = map[uint64]bool{}
	for _, p := range pending {
		ack, err := p.Wait(ctx)
		if err != nil {
			b.Fatal(err)
		}
		msgs[ack.Seq] = true
	}
	cpu := rusageCPU(b) - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/event")
	b.ReportMetric(float64(b.N)/float64(len(msgs)), "events/msg")
}

func rusageCPU(b testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPublishAck is the per-event publish path at one event a
// message: one Client (MaxBatchEvents 1, no linger), following on (its
// rounds a minute apart: the 4,000 events accepted before each one stay
// held, the oldest forgotten as a logged verdict would), 50,000 order keys,
// each event published, then waited for (its JetStream ack) before the
// next, through an in-process nats-server. allocs/op counts the process's
// allocations (the SDK, nats.go and the server); cpu-µs/event is the
// process's CPU over the events.
func BenchmarkPublishAck(b *testing.B) {
	const games, window = 50000, 4000
	ctx := context.Background()
	s := startServer(b)
	nc := dial(b, s, "e1")
	createStream(b, nc, 0)
	c, err := sdk.New(nc, sdk.Config{Emitter: "e1", MaxBatchEvents: 1, Linger: -1, FollowInterval: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	n := b.N + window
	evs := make([]sdk.Event, n)
	for i := range evs {
		g := fmt.Sprintf("01234567-89ab-cdef-0123-456789ab%04x", i%games)
		id := fmt.Sprintf("%s:%d", g, i/games)
		evs[i] = sdk.Event{ID: id, Data: fmt.Appendf(nil, `{"id":%q,"pad":"%0200d"}`, id, 0), OrderKey: g}
	}
	publish := func(ev sdk.Event) {
		p, err := c.PublishAsync(ctx, ev)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for _, ev := range evs[:window] {
		publish(ev)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := rusageCPU(b)
	for _, ev := range evs[window:] {
		publish(ev)
		if !c.DropOldestHeld() {
			b.Fatal("no event held")
		}
	}
	cpu := rusageCPU(b) - cpu0
	b.StopTimer()
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/event")
}
