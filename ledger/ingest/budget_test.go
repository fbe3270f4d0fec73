package ingest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// heldBy returns how many receipt requests of emitter the ingest holds.
func (in *Ingester) heldBy(emitter string) int {
	in.held.mu.Lock()
	defer in.held.mu.Unlock()
	return in.held.by[emitter]
}

// holdReceipts sends n receipt requests of emitter for ids that never
// come, each asking to be held 30 s, and waits until the ingest holds them
// all. It returns the subscription their replies (if any) come on.
func holdReceipts(t *testing.T, ctx context.Context, in *Ingester, nc *nats.Conn, emitter string, n int) *nats.Subscription {
	t.Helper()
	inbox := wire.InboxPrefix(emitter) + ".held"
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	before := in.heldBy(emitter)
	for i := range n {
		req, _ := wire.MarshalReceiptRequest(wire.ReceiptRequest{ID: fmt.Sprintf("never-%d", i), WaitMillis: 30_000})
		if err := nc.PublishRequest(wire.Subjects{}.Receipts(emitter), inbox, req); err != nil {
			t.Fatal(err)
		}
	}
	for in.heldBy(emitter) < before+n {
		if ctx.Err() != nil {
			t.Fatalf("the ingest holds %d of %s's requests, want %d", in.heldBy(emitter), emitter, before+n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return sub
}

// askOnce sends one receipt request of emitter and returns the reply.
func askOnce(t *testing.T, ctx context.Context, nc *nats.Conn, emitter, id string) wire.ReceiptReply {
	t.Helper()
	req, _ := wire.MarshalReceiptRequest(wire.ReceiptRequest{ID: id, WaitMillis: 100})
	m, err := nc.RequestWithContext(ctx, wire.Subjects{}.Receipts(emitter), req)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := wire.ParseReceiptReply(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestReceiptBudget: mallory holds as many receipt requests as its budget
// allows (ids that never come); its next one is answered "busy" at once,
// naming mallory and the limit, and counted; alice's receipts are answered
// as if mallory were not there. Once every emitter together holds the
// service's limit, a third emitter is answered busy naming that limit.
func TestReceiptBudget(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	sink.publishCheckpoint(1 << 40)
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink,
		MaxReceiptRequestsPerEmitter: 8, MaxReceiptRequests: 12})
	runIngest(t, in)

	mallory := clientConn(t, s, "mallory")
	// Wait for the ingest's subscription.
	probe, _ := wire.MarshalReceiptRequest(wire.ReceiptRequest{ID: "probe", WaitMillis: 1})
	for {
		if _, err := mallory.RequestWithContext(ctx, wire.Subjects{}.Receipts("mallory"), probe); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
		time.Sleep(10 * time.Millisecond)
	}
	held := holdReceipts(t, ctx, in, mallory, "mallory", 8)
	rep := askOnce(t, ctx, mallory, "mallory", "one-more")
	if rep.Status != wire.StatusError || rep.Code != "busy" ||
		!strings.Contains(rep.Reason, "emitter mallory has 8 receipt requests held") || !strings.Contains(rep.Reason, LimitReceiptRequests) {
		t.Errorf("mallory's request over its budget: %+v", rep)
	}
	if got := testutil.ToFloat64(in.m.limitRefusals.WithLabelValues("mallory", LimitReceiptRequests)); got != 1 {
		t.Errorf("refusals counted for mallory: %v", got)
	}

	// alice publishes and gets her receipts meanwhile.
	alice := newClient(t, clientConn(t, s, "alice"), sdk.Config{Emitter: "alice"})
	for i := range 3 {
		id, data := makeEvent("alice", "a", i)
		if _, err := alice.Publish(ctx, sdk.Event{ID: id, Data: data}); err != nil {
			t.Fatal(err)
		}
		if _, err := alice.Receipt(ctx, sdk.Event{ID: id, Data: data}); err != nil {
			t.Fatalf("alice's receipt %d while mallory is at its budget: %v", i, err)
		}
	}
	if got := testutil.ToFloat64(in.m.limitRefusals.WithLabelValues("alice", LimitReceiptRequests)); got != 0 {
		t.Errorf("refusals counted for alice: %v", got)
	}

	// carol and dave fill the service's limit (12: mallory 8, carol 4).
	carol := clientConn(t, s, "carol")
	holdReceipts(t, ctx, in, carol, "carol", 4)
	rep = askOnce(t, ctx, clientConn(t, s, "dave"), "dave", "x")
	if rep.Code != "busy" || !strings.Contains(rep.Reason, "12 receipt requests are held for all emitters") {
		t.Errorf("dave's request with the service at its limit: %+v", rep)
	}
	// No held request of mallory's was answered busy: they are held.
	if m, err := held.NextMsg(10 * time.Millisecond); err == nil {
		t.Errorf("a held request was answered: %s", m.Data)
	}
}

// TestReceiptBudgetBatched: a batched receipt request holds one unit of the
// limits for each event it names (at most the emitter's limit, so one batch
// alone is always served): bob, holding 5 requests of his limit of 8, is
// answered busy for a batch of 4 events, naming the limit, and held for a
// batch of 3; erin's lone batch of 20 events is held, counting 8.
func TestReceiptBudgetBatched(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink,
		MaxReceiptRequestsPerEmitter: 8, MaxReceiptRequests: 100})
	runIngest(t, in)
	bob := clientConn(t, s, "bob")
	probe, _ := wire.MarshalReceiptRequest(wire.ReceiptRequest{ID: "probe", WaitMillis: 1})
	for { // wait for the ingest's subscription
		if _, err := bob.RequestWithContext(ctx, wire.Subjects{}.Receipts("bob"), probe); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal(ctx.Err())
		}
		time.Sleep(10 * time.Millisecond)
	}
	holdReceipts(t, ctx, in, bob, "bob", 5)
	batch := func(n int, prefix string) wire.ReceiptsRequest {
		q := wire.ReceiptsRequest{WaitMillis: 30_000}
		for i := range n {
			q.Events = append(q.Events, wire.StatusQuery{ID: fmt.Sprintf("%s-%d", prefix, i), Seq: 1 << 40})
		}
		return q
	}
	p := askReceipts(t, ctx, bob, "bob", batch(4, "four"))
	if p.Status != wire.StatusError || p.Code != "busy" || !strings.Contains(p.Reason, "emitter bob has 8 receipt requests held") {
		t.Errorf("bob's batch of 4 over his limit: %+v", p)
	}
	send := func(nc *nats.Conn, emitter string, q wire.ReceiptsRequest) {
		t.Helper()
		q.V = wire.ReceiptBatchVersion
		req, err := wire.MarshalReceiptsRequest(q)
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.PublishRequest(wire.Subjects{}.Receipts(emitter), wire.InboxPrefix(emitter)+".batch", req); err != nil {
			t.Fatal(err)
		}
	}
	send(bob, "bob", batch(3, "three"))
	erin := clientConn(t, s, "erin")
	send(erin, "erin", batch(20, "twenty"))
	for in.heldBy("bob") != 8 || in.heldBy("erin") != 8 {
		if ctx.Err() != nil {
			t.Fatalf("held: bob %d, erin %d; want 8 and 8", in.heldBy("bob"), in.heldBy("erin"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
