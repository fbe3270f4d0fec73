package ingest

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/sdk"
)

// crashAfter returns an afterSubmit hook that, after n successful Submits,
// cancels the Ingester's run (through cancel) and leaves the batch
// unacknowledged, as a crash between the ledger's commit and the acks would.
func crashAfter(n int, cancel context.CancelFunc) func() error {
	var mu sync.Mutex
	return func() error {
		mu.Lock()
		defer mu.Unlock()
		if n--; n > 0 {
			return nil
		}
		cancel()
		return context.Canceled
	}
}

// TestIngestRestart: an ingest that dies after the sink committed a batch
// but before it acknowledged it (with more messages fetched and never
// submitted) is replaced by another; the log ends with every event exactly
// once and every game in order. With reset (servers ≥ 2.14) the new ingest
// starts again from the ack floor; without it, the unacknowledged messages
// are still pending on the consumer and the new ingest reads them from the
// stream when later ones arrive first.
func TestIngestRestart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noReset bool
	}{{"reset", false}, {"gap-fill", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			s := startServer(t, ServerConfig{})
			sink := newFakeSink()
			cfg := Config{Sink: sink, MaxBatch: 50, Prefetch: 100, Consumer: ConsumerConfig{AckWait: time.Minute}}
			ensureStream(t, connect(t, s), cfg.Stream)
			admitOnly(t, connect(t, s))
			c := newClient(t, clientConn(t, s, "e1"), sdk.Config{Emitter: "e1", MaxBatchEvents: 1})
			ids, _ := publishGames(t, ctx, c, "e1", "g", 20, 30) // a backlog of 600 messages

			a := newIngester(t, connect(t, s), cfg)
			actx, cancel := context.WithCancel(ctx)
			a.afterSubmit = crashAfter(3, cancel)
			if err := a.Run(actx); !errors.Is(err, context.Canceled) {
				t.Fatalf("first ingest: %v", err)
			}
			sink.mu.Lock()
			committed, unacked := len(sink.log), sink.sizes[len(sink.sizes)-1]
			sink.mu.Unlock()

			more, last := publishGames(t, ctx, c, "e1", "h", 10, 10) // arrive after the crash
			ids = append(ids, more...)
			// nats.go drops a message that finds its subscription's
			// channel full (a slow consumer: the pull iterator's buffer
			// holds Prefetch messages, and the server's status messages
			// share it); the ingest then reads it from the stream as a
			// gap. Count the drops on the new ingest's connection.
			bc := connect(t, s)
			var dropped atomic.Int64
			bc.SetErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
				if errors.Is(err, nats.ErrSlowConsumer) {
					dropped.Add(1)
				}
			})
			b := newIngester(t, bc, cfg)
			b.noReset = tc.noReset
			acks := watchAcks(b)
			runIngest(t, b)
			sink.waitLen(t, ctx, len(ids))
			acks.wait(t, ctx, last)
			sink.checkExactlyOnce(t, ids)

			sink.mu.Lock()
			dups := sink.outcome[ledger.Duplicate]
			sink.mu.Unlock()
			if dups < unacked || dups > committed {
				t.Errorf("%d duplicates: want at least the unacknowledged batch (%d), at most what was committed (%d)", dups, unacked, committed)
			}
			if n := sink.restarts(); n != 1 {
				t.Errorf("submissions went back in stream order %d times, want once (the restart)", n)
			}
			gaps := testutil.ToFloat64(b.m.gapFilled)
			if tc.noReset && gaps == 0 {
				t.Errorf("no message was read from the stream to fill a gap")
			}
			switch {
			case !tc.noReset && gaps != 0 && dropped.Load() == 0:
				t.Errorf("%v messages read to fill gaps after a reset", gaps)
			case !tc.noReset && gaps != 0:
				t.Logf("%v messages read to fill gaps after nats.go dropped messages (slow consumer, %d times): how the ingest recovers them", gaps, dropped.Load())
			}
		})
	}
}

// TestSubmitErrors: failed Submits (before and after committing) are
// retried with the same batch; nothing is lost or doubled.
func TestSubmitErrors(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	sink.failBefore, sink.failAfter = 2, 2
	in := newIngester(t, connect(t, s), Config{Sink: sink})
	acks := watchAcks(in)
	ensureStream(t, connect(t, s), StreamConfig{})
	admitOnly(t, connect(t, s))
	c := newClient(t, clientConn(t, s, "e1"), sdk.Config{Emitter: "e1"})
	ids, last := publishGames(t, ctx, c, "e1", "g", 5, 40)
	runIngest(t, in)
	acks.wait(t, ctx, last)
	sink.checkExactlyOnce(t, ids)
	if got := testutil.ToFloat64(in.m.submitErrors); got != 4 {
		t.Errorf("%v submit errors counted, want 4", got)
	}
	if st := streamState(t, connect(t, s), "ZARLOG_EVENTS"); st.Msgs != 0 {
		t.Errorf("stream holds %d messages", st.Msgs)
	}
}

// TestNATSRestart: the NATS server stops while a backend publishes and
// comes back on the same address and store; the SDK retries until every
// event is acknowledged, and the ingest (connected over TCP, as with an
// external NATS) resumes; every event is in the log exactly once.
func TestNATSRestart(t *testing.T) {
	ctx := testContext(t)
	dir := t.TempDir()
	s1 := startServer(t, ServerConfig{StoreDir: dir})
	port := s1.Addr().(*net.TCPAddr).Port
	url := s1.ClientURL()

	sink := newFakeSink()
	inc, err := Dial(DialConfig{URL: url, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(inc.Close)
	runIngest(t, newIngester(t, inc, Config{Sink: sink}))

	cnc, err := sdk.Dial(url, "e1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cnc.Close)
	var retries sync.Map
	c := newClient(t, cnc, sdk.Config{Emitter: "e1", AckTimeout: 500 * time.Millisecond,
		OnRetry: func(err error) { retries.Store(err.Error(), true) }})

	ids, _ := publishGames(t, ctx, c, "e1", "a", 10, 20)
	s1.Shutdown()

	// Publish while the server is down.
	var pending []*sdk.Pending
	for i := range 100 {
		id, data := makeEvent("e1", "b", i)
		p, err := c.PublishAsync(ctx, sdk.Event{ID: id, Data: data, OrderKey: "b"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		pending = append(pending, p)
	}
	startServer(t, ServerConfig{StoreDir: dir, Port: port})
	for _, p := range pending {
		if _, err := p.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	sink.waitLen(t, ctx, len(ids))
	sink.checkExactlyOnce(t, ids)
}

// TestBackpressure: while the sink is stuck, the ingest holds at most
// MaxAckPending messages, the backlog stays in the stream, and when the
// stream is full publishers are refused at once with sdk.ErrBacklog rather
// than anything being dropped or waiting unboundedly; when the sink
// recovers, everything arrives exactly once.
func TestBackpressure(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	gate := make(chan struct{})
	sink.gate, sink.entered = gate, make(chan struct{}, 1)
	const maxAckPending, limit = 40, 300
	in := newIngester(t, connect(t, s), Config{Sink: sink, MaxBatch: 10, Prefetch: 20,
		Consumer: ConsumerConfig{MaxAckPending: maxAckPending}, Stream: StreamConfig{MaxMsgs: limit}, BacklogMessagesPerEmitter: limit})
	runIngest(t, in)

	var mu sync.Mutex
	var retryErrs []string
	c := newClient(t, clientConn(t, s, "e1"), sdk.Config{Emitter: "e1", MaxBatchEvents: 1,
		OnRetry: func(err error) { mu.Lock(); retryErrs = append(retryErrs, err.Error()); mu.Unlock() }})
	ids, _ := publishGames(t, ctx, c, "e1", "g", 10, limit/10)
	<-sink.entered // the first Submit is stuck

	js, err := jetstream.New(connect(t, s))
	if err != nil {
		t.Fatal(err)
	}
	cons, err := js.Consumer(ctx, "ZARLOG_EVENTS", "zarlog-ledger")
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.NumAckPending > maxAckPending {
		t.Errorf("%d messages delivered and unacknowledged, above MaxAckPending %d", info.NumAckPending, maxAckPending)
	}
	if got := testutil.ToFloat64(in.m.inflight); got > maxAckPending {
		t.Errorf("ingest holds %v messages, above MaxAckPending %d", got, maxAckPending)
	}
	if st := streamState(t, connect(t, s), "ZARLOG_EVENTS"); st.Msgs != limit {
		t.Errorf("stream holds %d messages, want the whole backlog of %d", st.Msgs, limit)
	}

	// The stream is full: one more event is refused, at once, naming the
	// limit, until the sink recovers.
	id, data := makeEvent("e1", "late", 0)
	if _, err := c.Publish(ctx, sdk.Event{ID: id, Data: data}); !errors.Is(err, sdk.ErrBacklog) || !strings.Contains(err.Error(), "maximum messages") {
		t.Fatalf("publishing into a full stream: %v, want sdk.ErrBacklog", err)
	}
	mu.Lock()
	if len(retryErrs) > 0 {
		t.Errorf("the refusal was retried: %q", retryErrs)
	}
	mu.Unlock()

	close(gate)
	// The backlog drains; the publisher tries again, as ErrBacklog says.
	for {
		_, err := c.Publish(ctx, sdk.Event{ID: id, Data: data})
		if err == nil {
			break
		}
		if !errors.Is(err, sdk.ErrBacklog) {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	ids = append(ids, id)
	sink.waitLen(t, ctx, len(ids))
	sink.checkExactlyOnce(t, ids)
}
