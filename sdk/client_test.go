package sdk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// startServer starts a nats-server with JetStream on a random port.
func startServer(t *testing.T) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

func dial(t *testing.T, s *server.Server, emitter string) *nats.Conn {
	t.Helper()
	nc, err := sdk.Dial(s.ClientURL(), emitter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// createStream creates a stream capturing every emitter's events.
func createStream(t *testing.T, nc *nats.Conn, maxMsgSize int32) jetstream.Stream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: "EVENTS", Subjects: []string{wire.Subjects{}.EventsWildcard()}, MaxMsgSize: maxMsgSize,
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func newClient(t *testing.T, nc *nats.Conn, cfg sdk.Config) *sdk.Client {
	t.Helper()
	if cfg.RetryMin == 0 {
		cfg.RetryMin, cfg.RetryMax = time.Millisecond, 20*time.Millisecond
	}
	c, err := sdk.New(nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func event(i int) sdk.Event {
	id := fmt.Sprintf("g%d:%d", i%7, i/7)
	return sdk.Event{ID: id, Data: fmt.Appendf(nil, `{"id":%q,"n":%d}`, id, i), OrderKey: fmt.Sprintf("g%d", i%7)}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestConfigAndEventChecks(t *testing.T) {
	s := startServer(t)
	nc := dial(t, s, "e1")
	for _, cfg := range []sdk.Config{{}, {Emitter: "E1"}, {Emitter: "e1", Subjects: wire.Subjects{Root: "a.*"}},
		{Emitter: "e1", MaxBatchEvents: wire.MaxBatchEvents + 1}, {Emitter: "e1", MaxBatchBytes: 100}} {
		if _, err := sdk.New(nc, cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	c := newClient(t, nc, sdk.Config{Emitter: "e1"})
	ctx := testContext(t)
	for _, ev := range []sdk.Event{
		{ID: "", Data: []byte("{}")},
		{ID: "a/b", Data: []byte("{}")},
		{ID: "a", Data: nil},
		{ID: "a", Data: []byte("{\n}")},
		{ID: "a", Data: bytes.Repeat([]byte("x"), wire.MaxEventSize+1)},
	} {
		if _, err := c.PublishAsync(ctx, ev); !errors.Is(err, sdk.ErrInvalidEvent) {
			t.Errorf("PublishAsync(%q, %d bytes) = %v, want ErrInvalidEvent", ev.ID, len(ev.Data), err)
		}
	}
	if _, err := c.Receipt(ctx, "a/b"); !errors.Is(err, sdk.ErrInvalidEvent) {
		t.Errorf("Receipt of a bad id: %v", err)
	}
}

// TestPublishPacking publishes faster than a window of one message drains,
// so events are packed; the stream then holds exactly the events, in
// publication order, each message with the right Nats-Msg-Id.
func TestPublishPacking(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t)
	nc := dial(t, s, "e1")
	st := createStream(t, nc, 0)
	c := newClient(t, nc, sdk.Config{Emitter: "e1", Window: 1, MaxBatchEvents: 16, MaxBatchBytes: wire.MaxEventSize})
	const n = 500
	var pending []*sdk.Pending
	var want [][]byte
	for i := range n {
		ev := event(i)
		ev.OrderKey = "" // order keys would hold back each game's next event
		p, err := c.PublishAsync(ctx, ev)
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, p)
		want = append(want, ev.Data)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	packed := false
	for i, p := range pending {
		ack, err := p.Result()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		packed = packed || ack.Events > 1
		if ack.Stream != "EVENTS" || ack.Duplicate {
			t.Errorf("event %d: ack %+v", i, ack)
		}
	}
	if !packed {
		t.Errorf("no message carried more than one event")
	}

	var got [][]byte
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != "zarlog.events.e1" {
			t.Errorf("message %d on %s", seq, m.Subject)
		}
		if cnt := m.Header.Get(wire.HeaderEvents); cnt != "" {
			parts, err := wire.SplitBatch(cnt, m.Data)
			if err != nil {
				t.Fatal(err)
			}
			if id := m.Header.Get(wire.HeaderMsgID); id != "" {
				t.Errorf("message %d: Nats-Msg-Id %q, want none", seq, id)
			}
			got = append(got, parts...)
		} else {
			if id := m.Header.Get(wire.HeaderMsgID); id != "" {
				t.Errorf("message %d: Nats-Msg-Id %q, want none", seq, id)
			}
			got = append(got, m.Data)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("stream holds %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("event %d in the stream is %s, want %s", i, got[i], want[i])
		}
	}
}

// TestOrderKey: while the stream is missing, events retry; an event with
// the same order key as an unacknowledged one waits, and ends up after it
// in the stream; a failed predecessor fails its successors.
func TestOrderKey(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t)
	nc := dial(t, s, "e1")
	c := newClient(t, nc, sdk.Config{Emitter: "e1", AckTimeout: 200 * time.Millisecond})

	first, err := c.PublishAsync(ctx, sdk.Event{ID: "g:0", Data: []byte(`{"id":"g:0"}`), OrderKey: "g"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.PublishAsync(ctx, sdk.Event{ID: "g:1", Data: []byte(`{"id":"g:1"}`), OrderKey: "g"})
	if err != nil {
		t.Fatal(err)
	}
	// A doomed chain on another key.
	dctx, cancel := context.WithCancel(ctx)
	doomed, err := c.PublishAsync(dctx, sdk.Event{ID: "h:0", Data: []byte(`{"id":"h:0"}`), OrderKey: "h"})
	if err != nil {
		t.Fatal(err)
	}
	orphan, err := c.PublishAsync(ctx, sdk.Event{ID: "h:1", Data: []byte(`{"id":"h:1"}`), OrderKey: "h"})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := doomed.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("event whose ctx ended: %v", err)
	}
	if _, err := orphan.Wait(ctx); !errors.Is(err, sdk.ErrPredecessor) {
		t.Errorf("successor of a failed event: %v, want ErrPredecessor", err)
	}
	select {
	case <-second.Done():
		t.Fatal("the second event of g settled before the first was acknowledged")
	default:
	}

	createStream(t, nc, 0)
	a1, err := first.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := second.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a1.Seq >= a2.Seq {
		t.Errorf("g:0 at stream seq %d, g:1 at %d", a1.Seq, a2.Seq)
	}
}

// TestPermanentError: a message the stream refuses for good fails at once
// with a *PublishError.
func TestPermanentError(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t)
	nc := dial(t, s, "e1")
	createStream(t, nc, 64)
	c := newClient(t, nc, sdk.Config{Emitter: "e1"})
	_, err := c.Publish(ctx, sdk.Event{ID: "big", Data: bytes.Repeat([]byte("x"), 100)})
	var pe *sdk.PublishError
	if !errors.As(err, &pe) {
		t.Fatalf("oversize event: %v, want a PublishError", err)
	}
	if _, err := c.Publish(ctx, sdk.Event{ID: "small", Data: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
}

// TestClose: events not acknowledged when the Client closes fail with
// ErrClosed, and nothing is accepted afterwards.
func TestClose(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t)
	nc := dial(t, s, "e1")
	c, err := sdk.New(nc, sdk.Config{Emitter: "e1", RetryMin: time.Millisecond, RetryMax: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var pending []*sdk.Pending
	for i := range 20 { // no stream: they retry
		p, err := c.PublishAsync(ctx, event(i))
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, p)
	}
	c.Close()
	for i, p := range pending {
		if _, err := p.Wait(ctx); !errors.Is(err, sdk.ErrClosed) {
			t.Errorf("event %d: %v, want ErrClosed", i, err)
		}
	}
	if _, err := c.PublishAsync(ctx, event(99)); !errors.Is(err, sdk.ErrClosed) {
		t.Errorf("PublishAsync after Close: %v", err)
	}
	if err := c.Flush(ctx); err != nil {
		t.Errorf("Flush after Close: %v", err)
	}
}

// TestMaxQueued: PublishAsync blocks when MaxQueued events are unsettled.
func TestMaxQueued(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t)
	nc := dial(t, s, "e1")
	c := newClient(t, nc, sdk.Config{Emitter: "e1", MaxQueued: 3})
	for i := range 3 { // no stream: they stay unsettled
		if _, err := c.PublishAsync(ctx, event(i)); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.PublishAsync(short, event(3)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("fourth PublishAsync: %v, want it to block until its ctx ends", err)
	}
}

// TestImports keeps the SDK small: backends link it, so it must not pull in
// the ledger, Pebble or the NATS server.
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/zarlog/zarlog/sdk").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list printed no dependencies")
	}
	for _, d := range deps {
		for _, bad := range []string{"github.com/zarlog/zarlog/ledger", "github.com/cockroachdb/pebble", "github.com/nats-io/nats-server"} {
			if strings.HasPrefix(d, bad) {
				t.Errorf("sdk depends on %s", d)
			}
		}
	}
}
