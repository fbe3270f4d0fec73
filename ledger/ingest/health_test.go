package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// TestBacklogReady: past the stream's backlog bound, a publisher gets
// sdk.ErrBacklog at once (not a growing latency), Ready says the stream is
// full, and once the ledger drains the backlog, publishing works again and
// Ready is nil.
func TestBacklogReady(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	const bound = 20
	stream := testStream(StreamConfig{MaxMsgs: bound})
	js, err := jetstream.New(connect(t, s))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureStream(ctx, js, wire.Subjects{}, stream); err != nil {
		t.Fatal(err)
	}
	admitOnly(t, connect(t, s))
	c := newClient(t, clientConn(t, s, "e1"), sdk.Config{Emitter: "e1", MaxBatchEvents: 1})
	var refused error
	for i := range bound + 1 {
		id, data := makeEvent("e1", "g", i)
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := c.Publish(pctx, sdk.Event{ID: id, Data: data})
		cancel()
		if i < bound && err != nil {
			t.Fatalf("event %d, within the bound: %v", i, err)
		}
		if i == bound {
			refused = err
		}
	}
	var pe *sdk.PublishError
	if !errors.Is(refused, sdk.ErrBacklog) || !errors.As(refused, &pe) || !strings.Contains(refused.Error(), "maximum messages") {
		t.Fatalf("past the bound: %v, want sdk.ErrBacklog naming the limit", refused)
	}

	// Readiness sees the full stream; then the ingest drains it.
	sink := newFakeSink()
	sink.publishCheckpoint(1 << 40)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink, Stream: stream,
		InfoInterval: 20 * time.Millisecond, Now: clock})
	// Before the ingest runs, poll once by hand: the stream is full.
	st, err := js.Stream(ctx, "ZARLOG_EVENTS")
	if err != nil {
		t.Fatal(err)
	}
	si, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in.health.polled(&jetstream.ConsumerInfo{NumPending: bound}, si, nil)
	if err := in.Ready(ctx); err == nil || !strings.Contains(err.Error(), "publishers are refused") {
		t.Errorf("Ready with a full stream: %v", err)
	}
	runIngest(t, in)
	sink.waitLen(t, ctx, bound)
	deadline := time.Now().Add(10 * time.Second)
	for in.Ready(ctx) != nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := in.Ready(ctx); err != nil {
		t.Errorf("Ready after the backlog drained: %v", err)
	}
	id, data := makeEvent("e1", "g", bound)
	if _, err := c.Publish(ctx, sdk.Event{ID: id, Data: data}); err != nil {
		t.Errorf("publishing after the backlog drained: %v", err)
	}
}

// TestHealthStall: Health turns non-nil when messages wait and none is
// decided for StallAfter (a sink that blocks), with the reason, and nil
// again once the sink moves; a session that cannot start (no stream can be
// created) is reported after the grace.
func TestHealthStall(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	sink.publishCheckpoint(1 << 40)
	gate := make(chan struct{})
	blocking := sinkFunc(func(ctx context.Context, subs []ledger.Input) ([]ledger.Outcome, error) {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return sink.Append(ctx, subs)
	})
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	in := newIngester(t, connect(t, s), Config{Sink: blocking, Locator: sink, Checkpoints: sink,
		InfoInterval: 10 * time.Millisecond, StallAfter: 10 * time.Second, Now: clock})
	runIngest(t, in)
	c := newClient(t, clientConn(t, s, "e1"), sdk.Config{Emitter: "e1"})
	id, data := makeEvent("e1", "g", 0)
	if _, err := c.Publish(ctx, sdk.Event{ID: id, Data: data}); err != nil {
		t.Fatal(err)
	}
	// Wait until a poll has seen the waiting message.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		in.health.mu.Lock()
		w := in.health.waiting
		in.health.mu.Unlock()
		if w > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := in.Health(ctx); err != nil {
		t.Fatalf("healthy before StallAfter: %v", err)
	}
	advance(11 * time.Second)
	if err := in.Health(ctx); err == nil || !strings.Contains(err.Error(), "stalled") {
		t.Errorf("after StallAfter with a message waiting: %v, want stalled", err)
	}
	close(gate)
	sink.waitLen(t, ctx, 1)
	for time.Now().Before(deadline) && in.Health(ctx) != nil {
		time.Sleep(5 * time.Millisecond)
	}
	if err := in.Health(ctx); err != nil {
		t.Errorf("after the sink moved: %v", err)
	}

	// A session that cannot start: the stream's config is refused.
	bad := newIngester(t, connect(t, s), Config{Sink: sink, Stream: StreamConfig{Name: "BAD", MaxMsgSize: -5}, Now: clock})
	runIngest(t, bad)
	advance(10 * time.Second)
	time.Sleep(100 * time.Millisecond)
	if err := bad.Health(ctx); err == nil || !strings.Contains(err.Error(), "no consumer session") {
		t.Errorf("an ingest that cannot create its stream: %v", err)
	}
}

type sinkFunc func(ctx context.Context, subs []ledger.Input) ([]ledger.Outcome, error)

func (f sinkFunc) Append(ctx context.Context, subs []ledger.Input) ([]ledger.Outcome, error) {
	return f(ctx, subs)
}

// TestOverload: publishers far above the ledger's rate (a sink that takes
// 1,000 events a second, publishers as fast as they can: many times that)
// reach the stream's backlog bound and get sdk.ErrBacklog, the explicit
// error, within seconds instead of a growing wait; the process's Go heap
// (server, ingest and publishers together) stays under 256 MiB; and every
// event that was acknowledged reaches the sink.
func TestOverload(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	sink.publishCheckpoint(1 << 40)
	const rate = 1000 // events per second
	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	slow := sinkFunc(func(ctx context.Context, subs []ledger.Input) ([]ledger.Outcome, error) {
		for range subs {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return sink.Append(ctx, subs)
	})
	const bound = 2000
	in := newIngester(t, connect(t, s), Config{Sink: slow, Stream: StreamConfig{MaxMsgs: bound}, BacklogMessagesPerEmitter: bound, MaxBatch: 100})
	stop := runIngest(t, in)
	c := newClient(t, clientConn(t, s, "e1"), sdk.Config{Emitter: "e1", MaxBatchEvents: 1, Window: 64})

	var (
		mu       sync.Mutex
		acked    []string
		backlogs int
	)
	deadline := time.Now().Add(20 * time.Second)
	var peak uint64
	for g := 0; backlogs == 0 && time.Now().Before(deadline); g++ {
		var ps []*sdk.Pending
		var ids []string
		for i := range 500 {
			id, data := makeEvent("e1", fmt.Sprintf("g%d-%d", g, i), 0)
			p, err := c.PublishAsync(ctx, sdk.Event{ID: id, Data: data})
			if err != nil {
				t.Fatal(err)
			}
			ps, ids = append(ps, p), append(ids, id)
		}
		for i, p := range ps {
			_, err := p.Wait(ctx)
			mu.Lock()
			switch {
			case err == nil:
				acked = append(acked, ids[i])
			case errors.Is(err, sdk.ErrBacklog):
				backlogs++
			default:
				t.Fatalf("publishing under overload: %v", err)
			}
			mu.Unlock()
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	if backlogs == 0 {
		t.Fatalf("no sdk.ErrBacklog in 20 s of overload (%d events acknowledged)", len(acked))
	}
	t.Logf("%d events acknowledged, then %d refused with ErrBacklog; peak Go heap in use %.1f MiB", len(acked), backlogs, float64(peak)/(1<<20))
	if peak > 256<<20 {
		t.Errorf("peak Go heap in use %d MiB, above 256 MiB", peak>>20)
	}
	tick.Reset(time.Microsecond) // let the sink catch up
	sink.waitLen(t, ctx, len(acked))
	stop()
	sink.checkExactlyOnce(t, acked)
}

// TestRejectionLog: every rejection is one log line with the emitter, the
// id, the code and the reason, at most rejectLogBurst at once and
// rejectLogRate a second after that; the next line says how many were held
// back.
func TestRejectionLog(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	var (
		mu  sync.Mutex
		buf bytes.Buffer
		now = time.Now()
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	logger := slog.New(slog.NewTextHandler(lockedBuf{&mu, &buf}, nil))
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink, Now: clock, Logger: logger})
	runIngest(t, in)
	c := newClient(t, clientConn(t, s, "e1"), sdk.Config{Emitter: "e1"})
	const n = rejectLogBurst + 50
	for i := range n {
		id := fmt.Sprintf("bad:%d", i)
		if _, err := c.PublishAsync(ctx, sdk.Event{ID: id, Data: fmt.Appendf(nil, `{"bad":true,"emitter":"e1","game":"bad","id":%q,"seq":%d}`, id, i)}); err != nil {
			t.Fatal(err)
		}
	}
	sink.waitUntil(t, ctx, func() bool { return len(sink.rejected) == n }, "the rejections")
	count := func() int { mu.Lock(); defer mu.Unlock(); return strings.Count(buf.String(), `msg="event rejected"`) }
	// (The lines follow the sink's decisions: wait until they are out.)
	for end := time.Now().Add(2 * time.Second); count() < rejectLogBurst && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if got := count(); got != rejectLogBurst {
		t.Errorf("%d rejections, %d log lines; want the burst of %d", n, got, rejectLogBurst)
	}
	mu.Lock()
	text := buf.String()
	first := text[strings.Index(text, `msg="event rejected"`):]
	first = first[:strings.Index(first, "\n")]
	now = now.Add(time.Second)
	mu.Unlock()
	for _, want := range []string{"emitter=e1", "id=bad:", "code=bad-event", "reason="} {
		if !strings.Contains(first, want) {
			t.Errorf("the line %q lacks %s", first, want)
		}
	}
	id := "bad:last"
	c.Publish(ctx, sdk.Event{ID: id, Data: fmt.Appendf(nil, `{"bad":true,"emitter":"e1","game":"bad2","id":%q,"seq":0}`, id)})
	sink.waitUntil(t, ctx, func() bool { return len(sink.rejected) == n+1 }, "the last rejection")
	for end := time.Now().Add(2 * time.Second); count() < rejectLogBurst+1 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(buf.String(), "rejections_not_logged_before=50") {
		t.Errorf("the line after the burst does not count the 50 held back:\n%s", buf.String()[strings.LastIndex(strings.TrimSuffix(buf.String(), "\n"), "\n")+1:])
	}
}

type lockedBuf struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
