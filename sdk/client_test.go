package sdk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os/exec"
	"slices"
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
func startServer(t testing.TB) *server.Server {
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

func dial(t testing.TB, s *server.Server, emitter string) *nats.Conn {
	t.Helper()
	nc, err := sdk.Dial(s.ClientURL(), emitter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// createStream creates a stream capturing every emitter's events.
func createStream(t testing.TB, nc *nats.Conn, maxMsgSize int32) jetstream.Stream {
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
	if _, err := c.Receipt(ctx, sdk.Event{ID: "a/b", Data: []byte("{}")}); !errors.Is(err, sdk.ErrInvalidEvent) {
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
	for _, m := range streamMessages(t, ctx, st) {
		got = append(got, m...)
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

// TestPublishLinger: with a Linger, a message waits for more events while
// it is not full and the emitter's recent rate predicts another event
// within the Linger: six events of six games, published one after another
// with the window free, go in one message (the linger, an hour here, so
// any rate predicts one, ends when the sixth fills it). With the default
// Linger (20 ms: it waits only at 200 events a second or more) and with
// none (negative), six events published one after the other's ack each go
// alone: six events can never make the rate it takes, however fast the
// machine. The decision itself is TestLingerDecision's.
func TestPublishLinger(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t)
	nc := dial(t, s, "e1")
	st := createStream(t, nc, 0)
	for _, linger := range []time.Duration{time.Hour, 0, -1} {
		c := newClient(t, nc, sdk.Config{Emitter: "e1", MaxBatchEvents: 6, Linger: linger})
		var pending []*sdk.Pending
		for i := range 6 {
			p, err := c.PublishAsync(ctx, event(i)) // each of its own game
			if err != nil {
				t.Fatal(err)
			}
			if linger <= 0 {
				if _, err := p.Wait(ctx); err != nil {
					t.Fatal(err)
				}
			}
			pending = append(pending, p)
		}
		for i, p := range pending {
			if _, err := p.Wait(ctx); err != nil {
				t.Fatalf("linger %v, event %d: %v", linger, i, err)
			}
		}
		c.Close()
	}
	var got []int
	for _, m := range streamMessages(t, ctx, st) {
		got = append(got, len(m))
	}
	// With the hour: one message; with the default and without: one each.
	if want := []int{6, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}; !slices.Equal(got, want) {
		t.Errorf("messages of %v events, want %v", got, want)
	}
}

// TestCloseWhileNapping: a Client closed while its sender sleeps on a
// lingering message (the linger an hour, the message not full) closes: the
// sender does not go on napping, and every event is settled (acknowledged
// if its message went before the close took it, or failed).
func TestCloseWhileNapping(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t)
	nc := dial(t, s, "e1")
	createStream(t, nc, 0)
	c := newClient(t, nc, sdk.Config{Emitter: "e1", MaxBatchEvents: 6, Linger: time.Hour})
	var pending []*sdk.Pending
	for i := range 2 {
		p, err := c.PublishAsync(ctx, event(i))
		if err != nil {
			t.Fatal(err)
		}
		pending = append(pending, p)
	}
	for !c.Napping() {
		select {
		case <-ctx.Done():
			t.Fatal("the sender never napped on the lingering message")
		case <-time.After(time.Millisecond):
		}
	}
	closed := make(chan struct{})
	go func() {
		c.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatal("Close did not return: the sender went on napping")
	}
	for i, p := range pending {
		select {
		case <-p.Done():
		case <-ctx.Done():
			t.Fatalf("event %d never settled", i)
		}
	}
	// The close ended one nap, and the sender napped no more (it did,
	// over and over, until the linger's rate decayed).
	if n := c.ClosedWakes(); n != 1 {
		t.Errorf("the close ended %d naps, want 1", n)
	}
}

// TestPublishPartialFlights: a message that is not full waits while
// PartialFlights messages await their ack, packing the events that queue
// meanwhile (group commit); a full one goes as the Window allows. A
// responder in place of the stream holds each message's ack until the test
// sends it, so what waits is seen without timing anything.
func TestPublishPartialFlights(t *testing.T) {
	for _, tc := range []struct {
		name    string
		partial int
		max     int
		// steps: publish k events (each of its own game: PublishAsync
		// queues them before it returns), or ack the oldest
		// unacknowledged message (k == 0); want is the events of each
		// message the responder got, in order, after every step.
		steps []int
		want  [][]int
	}{
		// Group commit: a lone event goes at once; those published
		// while it flies go together once it is acknowledged.
		{"one", 1, 256, []int{1, 5, 0, 0}, [][]int{{1}, {1}, {1, 5}, {1, 5}}},
		{"two", 2, 256, []int{1, 1, 4, 0, 0, 0}, [][]int{{1}, {1, 1}, {1, 1}, {1, 1, 4}, {1, 1, 4}, {1, 1, 4}}},
		// A full message does not wait; what is left over does.
		{"full", 1, 3, []int{1, 4, 0, 0, 0}, [][]int{{1}, {1, 3}, {1, 3}, {1, 3, 1}, {1, 3, 1}}},
		// The default: the window, every message at once.
		{"default", 0, 256, []int{1, 1, 1, 1, 0, 0, 0, 0}, [][]int{{1}, {1, 1}, {1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			s := startServer(t)
			nc := dial(t, s, "e1")
			// The responder: it records each message's event count and
			// acknowledges when told, as JetStream would.
			rc := dial(t, s, "responder")
			msgs := make(chan *nats.Msg, 64)
			sub, err := rc.ChanSubscribe(wire.Subjects{}.Events("e1"), msgs)
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Unsubscribe()
			if err := rc.Flush(); err != nil {
				t.Fatal(err)
			}
			c := newClient(t, nc, sdk.Config{Emitter: "e1", PartialFlights: tc.partial, MaxBatchEvents: tc.max, FollowInterval: -1, AckTimeout: time.Minute})
			var got []int
			var unacked []*nats.Msg
			var pending []*sdk.Pending
			next := 0
			// receive takes the messages the responder must have got by now
			// (want says how many), and checks that no other came.
			receive := func(step int) {
				t.Helper()
				want := tc.want[step]
				for len(got) < len(want) {
					select {
					case m := <-msgs:
						n := 1
						if h := m.Header.Get(wire.HeaderEvents); h != "" {
							fmt.Sscan(h, &n)
						}
						got = append(got, n)
						unacked = append(unacked, m)
					case <-ctx.Done():
						t.Fatalf("step %d: messages of %v events, want %v", step, got, want)
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("step %d: messages of %v events, want %v", step, got, want)
				}
				// What waits for an ack must not go before it: a message
				// that comes within a grace period fails the test (a
				// correct Client sends none however long it is).
				if step+1 < len(tc.steps) && tc.steps[step+1] == 0 {
					select {
					case m := <-msgs:
						t.Fatalf("step %d: after messages of %v events, one of %q went before the next ack", step, got, m.Header.Get(wire.HeaderEvents))
					case <-time.After(50 * time.Millisecond):
					}
				}
			}
			for i, k := range tc.steps {
				if k == 0 {
					m := unacked[0]
					unacked = unacked[1:]
					if err := m.Respond(fmt.Appendf(nil, `{"stream":"EVENTS","seq":%d}`, len(got)-len(unacked))); err != nil {
						t.Fatal(err)
					}
				}
				for range k {
					ev := event(next * 7) // each of its own game
					ev.OrderKey = fmt.Sprintf("game%d", next)
					next++
					p, err := c.PublishAsync(ctx, ev)
					if err != nil {
						t.Fatal(err)
					}
					pending = append(pending, p)
				}
				receive(i)
			}
			for _, m := range unacked {
				m.Respond([]byte(`{"stream":"EVENTS","seq":99}`))
			}
			for i, p := range pending {
				if _, err := p.Wait(ctx); err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
			}
		})
	}
}

// streamMessages returns the events of every message in st, in stream
// order, one slice per message; it checks that no message has a
// Nats-Msg-Id and that each came on emitter e1's subject.
func streamMessages(t *testing.T, ctx context.Context, st jetstream.Stream) [][][]byte {
	t.Helper()
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var msgs [][][]byte
	for seq := uint64(1); seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		if m.Subject != "zarlog.events.e1" {
			t.Errorf("message %d on %s", seq, m.Subject)
		}
		if id := m.Header.Get(wire.HeaderMsgID); id != "" {
			t.Errorf("message %d: Nats-Msg-Id %q, want none", seq, id)
		}
		parts := [][]byte{m.Data}
		if cnt := m.Header.Get(wire.HeaderEvents); cnt != "" {
			if parts, err = wire.SplitBatch(cnt, m.Data); err != nil {
				t.Fatal(err)
			}
		}
		msgs = append(msgs, parts)
	}
	return msgs
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

// TestOrderKeyRuns: the events parked behind an unacknowledged one go, once
// it is acknowledged, as runs in one message each, in order, as many as a
// message takes (MaxBatchEvents, MaxBatchBytes); a run is never split
// across messages, and a run member whose ctx ended before it was sent
// fails, and the members after it fail with ErrPredecessor.
func TestOrderKeyRuns(t *testing.T) {
	ev := func(key string, seq, pad int) sdk.Event {
		id := fmt.Sprintf("%s:%d", key, seq)
		return sdk.Event{ID: id, Data: fmt.Appendf(nil, `{"id":%q,"pad":"%s"}`, id, strings.Repeat("x", pad)), OrderKey: key}
	}
	for _, tc := range []struct {
		name      string
		cfg       sdk.Config
		n, pad    int
		wantSizes []int // the events of each message, in stream order
	}{
		{"one run", sdk.Config{}, 10, 0, []int{1, 9}},
		{"runs of MaxBatchEvents", sdk.Config{MaxBatchEvents: 4}, 10, 0, []int{1, 4, 4, 1}},
		{"runs of MaxBatchBytes", sdk.Config{MaxBatchBytes: wire.MaxEventSize}, 7, wire.MaxEventSize / 3, []int{1, 2, 2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			s := startServer(t)
			nc := dial(t, s, "e1")
			cfg := tc.cfg
			cfg.Emitter, cfg.AckTimeout = "e1", 200*time.Millisecond
			c := newClient(t, nc, cfg)
			var pending []*sdk.Pending
			var want [][]byte
			for i := range tc.n { // no stream yet: the first retries, the others park
				e := ev("g", i, tc.pad)
				p, err := c.PublishAsync(ctx, e)
				if err != nil {
					t.Fatal(err)
				}
				pending, want = append(pending, p), append(want, e.Data)
			}
			st := createStream(t, nc, 0)
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			var got [][]byte
			var sizes []int
			for _, m := range streamMessages(t, ctx, st) {
				got, sizes = append(got, m...), append(sizes, len(m))
			}
			if fmt.Sprint(sizes) != fmt.Sprint(tc.wantSizes) {
				t.Errorf("messages of %v events, want %v", sizes, tc.wantSizes)
			}
			if len(got) != len(want) {
				t.Fatalf("stream holds %d events, want %d", len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("event %d in the stream is %s, want %s", i, got[i], want[i])
				}
				ack, err := pending[i].Result()
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				if i > 0 {
					prev, _ := pending[i-1].Result()
					if ack.Seq < prev.Seq {
						t.Errorf("event %d at stream seq %d, before event %d at %d", i, ack.Seq, i-1, prev.Seq)
					}
				}
			}
		})
	}

	t.Run("a member's ctx ends", func(t *testing.T) {
		ctx := testContext(t)
		s := startServer(t)
		nc := dial(t, s, "e1")
		c := newClient(t, nc, sdk.Config{Emitter: "e1", AckTimeout: 200 * time.Millisecond})
		dctx, cancel := context.WithCancel(ctx)
		var pending []*sdk.Pending
		for i := range 6 {
			pctx := ctx
			if i == 2 {
				pctx = dctx
			}
			p, err := c.PublishAsync(pctx, ev("g", i, 0))
			if err != nil {
				t.Fatal(err)
			}
			pending = append(pending, p)
		}
		cancel() // g:2 is parked: it fails when its run is taken
		st := createStream(t, nc, 0)
		for i, p := range pending {
			_, err := p.Wait(ctx)
			switch {
			case i < 2 && err != nil:
				t.Errorf("g:%d: %v", i, err)
			case i == 2 && !errors.Is(err, context.Canceled):
				t.Errorf("g:2, whose ctx ended: %v, want context.Canceled", err)
			case i > 2 && !errors.Is(err, sdk.ErrPredecessor):
				t.Errorf("g:%d, after g:2: %v, want ErrPredecessor", i, err)
			}
		}
		var got []string
		for _, m := range streamMessages(t, ctx, st) {
			for _, e := range m {
				got = append(got, string(e))
			}
		}
		if want := []string{string(ev("g", 0, 0).Data), string(ev("g", 1, 0).Data)}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("stream holds %q, want %q", got, want)
		}
	})
}

// TestOrderKeyMix publishes the events of several keys, with and without
// a stream at first (so that the first events retry and the rest park),
// with random packing limits: every key's events are in the stream in
// publication order, no message exceeds the limits, and every ack counts
// its message's events.
func TestOrderKeyMix(t *testing.T) {
	r := mrand.New(mrand.NewPCG(1, 2))
	for round := range 6 {
		ctx := testContext(t)
		s := startServer(t)
		nc := dial(t, s, "e1")
		cfg := sdk.Config{Emitter: "e1", Window: 1 + r.IntN(3), MaxBatchEvents: 2 + r.IntN(7), AckTimeout: 200 * time.Millisecond}
		c := newClient(t, nc, cfg)
		var st jetstream.Stream
		late := round%2 == 0
		if !late {
			st = createStream(t, nc, 0)
		}
		keys := 1 + r.IntN(5)
		seqs := make([]int, keys)
		var pending []*sdk.Pending
		for range 200 {
			k := r.IntN(keys)
			id := fmt.Sprintf("k%d:%d", k, seqs[k])
			seqs[k]++
			p, err := c.PublishAsync(ctx, sdk.Event{ID: id, Data: fmt.Appendf(nil, `{"id":%q}`, id), OrderKey: fmt.Sprintf("k%d", k)})
			if err != nil {
				t.Fatal(err)
			}
			pending = append(pending, p)
		}
		if late {
			st = createStream(t, nc, 0)
		}
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		next := make([]int, keys)
		msgs := streamMessages(t, ctx, st)
		for i, m := range msgs {
			if len(m) > cfg.MaxBatchEvents {
				t.Errorf("round %d: message %d holds %d events, more than %d", round, i+1, len(m), cfg.MaxBatchEvents)
			}
			for _, e := range m {
				var k, seq int
				if _, err := fmt.Sscanf(string(e), `{"id":"k%d:%d"}`, &k, &seq); err != nil {
					t.Fatalf("round %d: event %s: %v", round, e, err)
				}
				if seq != next[k] {
					t.Errorf("round %d: k%d:%d in the stream where k%d:%d was due", round, k, seq, k, next[k])
				}
				next[k] = seq + 1
			}
		}
		for i, p := range pending {
			ack, err := p.Result()
			if err != nil {
				t.Fatalf("round %d: event %d: %v", round, i, err)
			}
			if ack.Seq < 1 || ack.Seq > uint64(len(msgs)) || ack.Events != len(msgs[ack.Seq-1]) {
				t.Errorf("round %d: event %d: ack %+v, but the stream has %d messages", round, i, ack, len(msgs))
			}
		}
		if fmt.Sprint(next) != fmt.Sprint(seqs) {
			t.Errorf("round %d: the stream ends each key at %v, want %v", round, next, seqs)
		}
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
