package ingest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// TestGoneBelowFirst is docs/FAULTS.md §4's run 5 on one server: messages
// that leave the stream without reaching this ingest (a fenced old primary
// sharing the consumer acknowledged them; here they are deleted while the
// ingest holds the message before them) are passed by its cursor on a quiet
// stream, with no later message to carry it: the cursor reaches the
// stream's first sequence, a receipt request for a lost event is answered
// at once with a state that says it is lost, and the SDK publishes the
// event again and gets its receipt. Without it the cursor stayed below
// them, every request was "not read yet", and nothing was sent again.
func TestGoneBelowFirst(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	sink.publishCheckpoint(1 << 20) // a checkpoint covers whatever is appended
	gate := make(chan struct{})
	sink.gate, sink.entered = gate, make(chan struct{}, 1)
	// The ingest pulls one message at a time: it holds the first few while
	// the others wait in the stream.
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink, MaxBatch: 1, Prefetch: 1,
		InfoInterval: 20 * time.Millisecond})
	runIngest(t, in)

	var mu sync.Mutex
	var resent []string
	c := newClient(t, clientConn(t, s, "e1"), sdk.Config{Emitter: "e1", MaxBatchEvents: 1,
		OnResend: func(id string) { mu.Lock(); resent = append(resent, id); mu.Unlock() }})
	const n = 20
	var evs []sdk.Event
	var acks []sdk.Ack
	bySeq := map[uint64]int{}
	byID := map[string]int{}
	for i := range n {
		id, data := makeEvent("e1", fmt.Sprintf("quiet%d", i), 0) // a game each: the resent land after the others
		ev := sdk.Event{ID: id, Data: data}
		ack, err := c.Publish(ctx, ev)
		if err != nil {
			t.Fatal(err)
		}
		evs, acks = append(evs, ev), append(acks, ack)
		bySeq[ack.Seq], byID[id] = i, i
	}
	<-sink.entered // the ingest holds the first message

	// Another puller of the shared consumer (an old primary, fenced, that
	// decided them into a ledger moved aside) takes the rest and
	// acknowledges them: they leave the stream without reaching this
	// ingest.
	js, err := jetstream.New(connect(t, s))
	if err != nil {
		t.Fatal(err)
	}
	cons, err := js.Consumer(ctx, "ZARLOG_EVENTS", "zarlog-ledger")
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(n, jetstream.FetchMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	gone := map[int]bool{}
	for m := range batch.Messages() {
		meta, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
		gone[bySeq[meta.Sequence.Stream]] = true
	}
	if len(gone) < n/2 {
		t.Fatalf("the other puller took %d messages of %d; the ingest pulled more than expected", len(gone), n)
	}
	close(gate)
	sink.waitLen(t, ctx, n-len(gone))
	last := 0
	for i := range n {
		if gone[i] {
			last = i
		}
	}

	// The cursor reaches the stream's first sequence with no message to
	// carry it there.
	first := acks[n-1].Seq + 1
	deadline := time.Now().Add(20 * time.Second)
	for in.decided.Load() < first {
		if time.Now().After(deadline) {
			t.Fatalf("the cursor is at %d, the stream's first sequence %d: the gone messages are not passed", in.decided.Load(), first)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := testutil.ToFloat64(in.m.gone); got < 1 || got > float64(len(gone)) {
		t.Errorf("zarlog_ingest_gone_total %v, want 1 to %d", got, len(gone))
	}

	// A receipt request for a gone event says at once that it is lost.
	nc := clientConn(t, s, "e1")
	req, _ := wire.MarshalReceiptRequest(wire.ReceiptRequest{ID: evs[last].ID, Seq: acks[last].Seq, V: wire.ReceiptStateVersion, WaitMillis: 60000})
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	m, err := nc.RequestWithContext(rctx, wire.Subjects{}.Receipts("e1"), req)
	cancel()
	if err != nil {
		t.Fatalf("a request about a gone event is held: %v", err)
	}
	rep, err := wire.ParseReceiptReply(m.Data)
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := rep.State(); rep.Status != wire.StatusPending || !ok || !st.Lost(acks[last].Seq) {
		t.Errorf("reply about a gone event: %s, want pending with a state that says it is lost", m.Data)
	}

	// The SDK publishes each gone event again, once, and gets its receipt.
	var ids []string
	for i := range n {
		ids = append(ids, evs[i].ID)
		if !gone[i] {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		r, err := c.ReceiptOf(rctx, evs[i], acks[i])
		cancel()
		if err != nil {
			t.Fatalf("receipt of gone event %s: %v", evs[i].ID, err)
		}
		if string(r.Extra) != string(evs[i].Data) {
			t.Errorf("receipt of %s holds other bytes", evs[i].ID)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(resent) != len(gone) {
		t.Errorf("published again: %q, want each of the %d gone events once", resent, len(gone))
	}
	for _, id := range resent {
		if !gone[byID[id]] {
			t.Errorf("%s published again, but it reached the ingest", id)
		}
	}
	sink.checkExactlyOnce(t, ids)
}

// TestAtEnds: what the session does with the stream's ends as the poller
// read them. A first sequence above the cursor moves the cursor there (and
// counts the messages passed); a last sequence below the cursor read
// before it is a rewind, warned and counted once per last sequence; a
// last sequence below the session's cursor but not below the cursor read
// before the poll is the stream's end as it was then (messages came
// since), not a rewind.
func TestAtEnds(t *testing.T) {
	m, err := newMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	in := &Ingester{log: testLogger(t), m: m, moved: make(chan struct{})}
	st := &sessionState{next: 10}
	in.atEnds(st, streamEnds{first: 15, last: 20, decided: 10})
	if st.next != 15 || in.decided.Load() != 15 || testutil.ToFloat64(in.m.gone) != 5 {
		t.Errorf("after first 15: cursor %d, decided %d, gone %v; want 15, 15, 5", st.next, in.decided.Load(), testutil.ToFloat64(in.m.gone))
	}
	in.atEnds(st, streamEnds{first: 1, last: 12, decided: 10})
	if st.next != 15 || testutil.ToFloat64(in.m.rewinds) != 0 {
		t.Errorf("a stale read of the stream's end: cursor %d, rewinds %v; want 15, 0", st.next, testutil.ToFloat64(in.m.rewinds))
	}
	for range 2 {
		in.atEnds(st, streamEnds{first: 3, last: 7, decided: 15})
	}
	if st.next != 15 || in.decided.Load() != 15 || testutil.ToFloat64(in.m.rewinds) != 1 {
		t.Errorf("a rewind: cursor %d, decided %d, rewinds %v; want 15, 15, 1", st.next, in.decided.Load(), testutil.ToFloat64(in.m.rewinds))
	}
	in.atEnds(st, streamEnds{first: 3, last: 9, decided: 15})
	if testutil.ToFloat64(in.m.rewinds) != 2 {
		t.Errorf("a second rewind: %v, want 2", testutil.ToFloat64(in.m.rewinds))
	}
}
