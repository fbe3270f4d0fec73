package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// newClient returns an SDK client for emitter on its own connection.
func newClient(t testing.TB, nc *nats.Conn, cfg sdk.Config) *sdk.Client {
	t.Helper()
	if cfg.RetryMin == 0 {
		cfg.RetryMin = 1e6 // 1 ms
		cfg.RetryMax = 50e6
	}
	c, err := sdk.New(nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func clientConn(t testing.TB, s *Server, emitter string) *nats.Conn {
	t.Helper()
	nc, err := s.Connect(nats.CustomInboxPrefix("_INBOX." + emitter))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// publishGames publishes games×perGame events of emitter asynchronously,
// each game's in order (OrderKey), and waits for every ack. It returns the
// ids in publication order and the highest stream sequence acknowledged.
func publishGames(t testing.TB, ctx context.Context, c *sdk.Client, emitter, prefix string, games, perGame int) ([]string, uint64) {
	t.Helper()
	var ids []string
	var pending []*sdk.Pending
	for s := 0; s < perGame; s++ {
		for g := 0; g < games; g++ {
			game := fmt.Sprintf("%s%d", prefix, g)
			id, data := makeEvent(emitter, game, s)
			p, err := c.PublishAsync(ctx, sdk.Event{ID: id, Data: data, OrderKey: game})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
			pending = append(pending, p)
		}
	}
	var maxSeq uint64
	for i, p := range pending {
		ack, err := p.Wait(ctx)
		if err != nil {
			t.Fatalf("event %s: %v", ids[i], err)
		}
		maxSeq = max(maxSeq, ack.Seq)
	}
	return ids, maxSeq
}

// ackWatcher records the highest stream sequence the ingest has
// acknowledged (with syncAck, so the server has processed it).
type ackWatcher struct {
	mu      sync.Mutex
	seq     uint64
	changed chan struct{}
}

func watchAcks(in *Ingester) *ackWatcher {
	w := &ackWatcher{changed: make(chan struct{})}
	in.syncAck = true
	in.afterAck = func(seq uint64) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.seq = max(w.seq, seq)
		close(w.changed)
		w.changed = make(chan struct{})
	}
	return w
}

func (w *ackWatcher) wait(t testing.TB, ctx context.Context, seq uint64) {
	t.Helper()
	for {
		w.mu.Lock()
		got, ch := w.seq, w.changed
		w.mu.Unlock()
		if got >= seq {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("waiting for the ack of stream seq %d (have %d): %v", seq, got, ctx.Err())
		}
	}
}

func TestEndToEnd(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	reg := prometheus.NewRegistry()
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink, Registerer: reg})
	acks := watchAcks(in)
	runIngest(t, in)

	c := newClient(t, clientConn(t, s, "e1"), sdk.Config{Emitter: "e1"})
	ids, last := publishGames(t, ctx, c, "e1", "g", 20, 50)
	sink.waitLen(t, ctx, len(ids))
	sink.checkExactlyOnce(t, ids)
	if n := sink.restarts(); n != 0 {
		t.Errorf("submissions went back in stream order %d times", n)
	}
	acks.wait(t, ctx, last)
	if st := streamState(t, connect(t, s), "ZARLOG_EVENTS"); st.Msgs != 0 {
		t.Errorf("stream still holds %d messages after every one was acknowledged", st.Msgs)
	}
	if got := testutil.ToFloat64(in.m.outcomes.WithLabelValues("appended")); got != float64(len(ids)) {
		t.Errorf("appended metric = %v, want %d", got, len(ids))
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n == 0 {
		t.Errorf("registry gathers %d metrics, %v", n, err)
	}

	// Receipts: pending until a checkpoint covers the event, then ok,
	// with its inclusion proof (the fake's tree is a real one).
	id := ids[len(ids)-1]
	_, data := makeEvent("e1", fmt.Sprintf("g%d", 19), 49)
	if got, _ := makeEvent("e1", "g19", 49); got != id {
		t.Fatalf("the last event is %s, not %s", id, got)
	}
	want, err := sink.Locate(ctx, "e1", id)
	if err != nil {
		t.Fatal(err)
	}
	sink.publishCheckpoint(want.Index) // does not cover it yet
	done := make(chan error, 1)
	var got sdk.Receipt
	go func() {
		var err error
		got, err = c.Receipt(ctx, sdk.Event{ID: id, Data: data})
		done <- err
	}()
	sink.publishCheckpoint(want.Index + 1)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got.Index != want.Index || got.EventID != id || !bytes.Contains(got.Checkpoint, fmt.Appendf(nil, "\n%d\n", want.Index+1)) || !bytes.Equal(got.Extra, data) {
		t.Errorf("receipt %+v, want index %d under a checkpoint of size %d", got, want.Index, want.Index+1)
	}
	if got.SignatureChecked || len(got.Proof) == 0 {
		t.Errorf("a receipt checked without a log key: SignatureChecked %t, %d proof hashes", got.SignatureChecked, len(got.Proof))
	}
}

// TestReceiptWaitsForDecision asks for a receipt before the event is
// published; the request is answered once the ingest has decided it.
func TestReceiptWaitsForDecision(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	sink.publishCheckpoint(1 << 40)
	runIngest(t, newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink}))
	c := newClient(t, clientConn(t, s, "e1"), sdk.Config{Emitter: "e1"})

	id, data := makeEvent("e1", "late", 0)
	done := make(chan error, 1)
	go func() {
		r, err := c.Receipt(ctx, sdk.Event{ID: id, Data: data})
		if err == nil && r.Index != 0 {
			err = fmt.Errorf("index %d, want 0", r.Index)
		}
		done <- err
	}()
	if _, err := c.Publish(ctx, sdk.Event{ID: id, Data: data}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// A receipt for an event nobody publishes stays pending until ctx ends.
	short, cancel := context.WithTimeout(ctx, 200e6)
	defer cancel()
	if _, err := c.Receipt(short, sdk.Event{ID: "never:0", Data: []byte("{}")}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("receipt of an unknown event: %v, want deadline exceeded", err)
	}
}

// TestReceiptHeldWithoutLookup: receipt requests held for events the
// ingest has not decided yet (each naming its message's stream sequence,
// as the SDK asks after the publish ack) are answered from the batch that
// decides them, not by looking each event up in the ledger again once the
// cursor has moved: the batch hands the outcomes to the waiting requests
// before it moves the cursor. So are the events of a batched receipt
// request (wire.ReceiptBatchVersion).
func TestReceiptHeldWithoutLookup(t *testing.T) {
	for _, batched := range []bool{false, true} {
		t.Run(fmt.Sprintf("batched=%v", batched), func(t *testing.T) { testReceiptHeldWithoutLookup(t, batched) })
	}
}

func testReceiptHeldWithoutLookup(t *testing.T, batched bool) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	sink.publishCheckpoint(1 << 40)
	gate := make(chan struct{})
	sink.gate, sink.entered = gate, make(chan struct{}, 1)
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink})
	runIngest(t, in)
	nc := clientConn(t, s, "e1")
	c := newClient(t, nc, sdk.Config{Emitter: "e1"})

	const n = 8
	errs := make(chan error, n)
	var qs []wire.StatusQuery
	for g := range n {
		id, data := makeEvent("e1", fmt.Sprintf("held%d", g), 0)
		ev := sdk.Event{ID: id, Data: data, OrderKey: fmt.Sprintf("held%d", g)}
		ack, err := c.Publish(ctx, ev)
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, wire.StatusQuery{ID: id, Seq: ack.Seq})
		if batched {
			continue
		}
		go func() {
			req, err := wire.MarshalReceiptRequest(wire.ReceiptRequest{ID: id, Seq: ack.Seq, WaitMillis: 60000, V: wire.ReceiptStateVersion})
			if err != nil {
				errs <- err
				return
			}
			m, err := nc.RequestWithContext(ctx, wire.Subjects{}.Receipts("e1"), req)
			if err != nil {
				errs <- err
				return
			}
			if p, err := wire.ParseReceiptReply(m.Data); err != nil || p.Status != wire.StatusOK {
				errs <- fmt.Errorf("reply %s: %v", m.Data, err)
				return
			}
			errs <- nil
		}()
	}
	held := n // requests, or the batch's units (one an event)
	if batched {
		go func() {
			// Answered once the first of its events are decided: those ok,
			// the others (decided in a later batch of the ingest) pending.
			p, err := tryReceipts(ctx, nc, "e1", wire.ReceiptsRequest{WaitMillis: 60000, Events: qs})
			if err == nil && p.Events[0].Status != wire.StatusOK {
				err = fmt.Errorf("the first event: %+v", p.Events[0])
			}
			for i := range n {
				if err == nil && p.Events[i].Status != wire.StatusOK && p.Events[i].Status != wire.StatusPending {
					err = fmt.Errorf("event %d: %+v", i, p.Events[i])
				}
				errs <- err
			}
		}()
	}
	for {
		in.held.mu.Lock()
		h := in.held.sum
		in.held.mu.Unlock()
		in.waiters.mu.Lock()
		w := len(in.waiters.m)
		in.waiters.mu.Unlock()
		if h == held && w == n {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d receipt requests held, waiting for %d events; want %d, %d", h, w, held, n)
		case <-time.After(10 * time.Millisecond):
		}
	}
	sink.mu.Lock()
	before := sink.locates
	sink.mu.Unlock()
	close(gate)
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if got := sink.locates - before; got != 0 {
		t.Errorf("%d held receipt requests answered with %d lookups in the ledger, want none", n, got)
	}
}

// TestReceiptsUnavailable: an ingest without Locator answers "unavailable",
// which the SDK retries until its ctx ends; a bad request is answered
// "bad-request".
func TestReceiptsUnavailable(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	runIngest(t, newIngester(t, connect(t, s), Config{Sink: newFakeSink()}))
	nc := clientConn(t, s, "e1")
	for _, tc := range []struct {
		req, status, code string
	}{
		{`{"id":"g:0"}`, wire.StatusError, "unavailable"},
		{`{"id":"g/0"}`, wire.StatusError, "bad-request"},
		{`not json`, wire.StatusError, "bad-request"},
	} {
		m, err := nc.RequestWithContext(ctx, wire.Subjects{}.Receipts("e1"), []byte(tc.req))
		for errors.Is(err, nats.ErrNoResponders) { // Run has not subscribed yet
			m, err = nc.RequestWithContext(ctx, wire.Subjects{}.Receipts("e1"), []byte(tc.req))
		}
		if err != nil {
			t.Fatal(err)
		}
		rep, err := wire.ParseReceiptReply(m.Data)
		if err != nil || rep.Status != tc.status || rep.Code != tc.code {
			t.Errorf("request %s: reply %+v, %v; want %s/%s", tc.req, rep, err, tc.status, tc.code)
		}
	}
}

// TestDuplicates: a message resent with the same Nats-Msg-Id within the
// duplicate window is dropped by JetStream; the same event arriving again in
// another message (a multi-event message, or without the header) is
// answered as a duplicate by the sink; the log holds it once.
func TestDuplicates(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	in := newIngester(t, connect(t, s), Config{Sink: sink})
	acks := watchAcks(in)
	runIngest(t, in)
	js, err := jetstream.New(clientConn(t, s, "e1"))
	if err != nil {
		t.Fatal(err)
	}
	subj := wire.Subjects{}.Events("e1")
	idA, a := makeEvent("e1", "g", 0)
	idB, b := makeEvent("e1", "g", 1)

	pub := func(data []byte, hdr map[string]string) *jetstream.PubAck {
		t.Helper()
		m := nats.NewMsg(subj)
		m.Data = data
		for k, v := range hdr {
			m.Header.Set(k, v)
		}
		ack, err := js.PublishMsg(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		return ack
	}
	first := pub(a, map[string]string{wire.HeaderMsgID: idA})
	again := pub(a, map[string]string{wire.HeaderMsgID: idA})
	if first.Duplicate || !again.Duplicate || again.Sequence != first.Sequence {
		t.Errorf("resend within the window: acks %+v then %+v, want the second a duplicate of the first", first, again)
	}
	batch, err := wire.AppendBatch(nil, [][]byte{a, b})
	if err != nil {
		t.Fatal(err)
	}
	pub(batch, map[string]string{wire.HeaderMsgID: "batch/1", wire.HeaderEvents: "2"})
	last := pub(b, nil) // no Nats-Msg-Id: JetStream cannot deduplicate it
	acks.wait(t, ctx, last.Sequence)

	sink.checkExactlyOnce(t, []string{idA, idB})
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.outcome[ledger.Appended] != 2 || sink.outcome[ledger.Duplicate] != 2 || sink.outcome[ledger.Rejected] != 0 {
		t.Errorf("outcomes %v, want 2 appended and 2 duplicates", sink.outcome)
	}
}

// TestRejected: a rejected event is terminated on the stream with its
// reason, announced on the rejected subject, recorded by the sink, and
// reported by a receipt request; in a multi-event message the other events
// are appended and the message is acknowledged.
func TestRejected(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	sink.publishCheckpoint(1 << 40)
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink})
	acks := watchAcks(in)

	// Watch termination advisories and rejection announcements.
	nc := connect(t, s)
	terms := make(chan string, 10)
	if _, err := nc.Subscribe("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.ZARLOG_EVENTS.zarlog-ledger", func(m *nats.Msg) {
		terms <- string(m.Data)
	}); err != nil {
		t.Fatal(err)
	}
	cnc := clientConn(t, s, "e1")
	c := newClient(t, cnc, sdk.Config{Emitter: "e1", MaxBatchEvents: 1})
	rejections := make(chan wire.Rejection, 10)
	if _, err := c.Rejections(func(r wire.Rejection) { rejections <- r }); err != nil {
		t.Fatal(err)
	}
	if err := cnc.Flush(); err != nil { // the subscription is in place
		t.Fatal(err)
	}
	runIngest(t, in)

	// A single bad event.
	badID := "g:0"
	bad := []byte(`{"bad":true,"emitter":"e1","game":"g","id":"g:0","seq":0}`)
	if _, err := c.Publish(ctx, sdk.Event{ID: badID, Data: bad}); err != nil {
		t.Fatal(err)
	}
	r := <-rejections
	if r.Code != "bad-event" || r.ID != badID || r.MsgID != "" || r.Part != 0 || r.Seq == 0 {
		t.Errorf("announced %+v", r)
	}
	if adv := <-terms; !strings.Contains(adv, "bad-event") {
		t.Errorf("termination advisory %s does not carry the reason", adv)
	}
	if _, err := c.Receipt(ctx, sdk.Event{ID: badID, Data: bad}); !isRejected(err, "bad-event") {
		t.Errorf("receipt of a rejected event: %v", err)
	}

	// A multi-event message with one bad event and a malformed one.
	js, err := jetstream.New(clientConn(t, s, "e1"))
	if err != nil {
		t.Fatal(err)
	}
	okID, good := makeEvent("e1", "h", 0)
	other := []byte(`{"emitter":"e2","game":"x","id":"x:0","seq":0}`)
	batch, err := wire.AppendBatch(nil, [][]byte{good, []byte("{not json"), other})
	if err != nil {
		t.Fatal(err)
	}
	m := nats.NewMsg(wire.Subjects{}.Events("e1"))
	m.Data = batch
	m.Header.Set(wire.HeaderEvents, "3")
	ack, err := js.PublishMsg(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for range 2 {
		r := <-rejections
		if r.Seq != ack.Sequence || r.MsgID != "" {
			t.Errorf("announced %+v for message %d", r, ack.Sequence)
		}
		got[r.Part] = r.Code
	}
	if got[1] != "malformed" || got[2] != "emitter-mismatch" {
		t.Errorf("rejections by part: %v", got)
	}
	acks.wait(t, ctx, ack.Sequence) // acknowledged, not terminated

	// Broken framing: the whole payload is refused by the ingest.
	m = nats.NewMsg(wire.Subjects{}.Events("e1"))
	m.Data = []byte("a\nb")
	m.Header.Set(wire.HeaderEvents, "3")
	if _, err := js.PublishMsg(ctx, m); err != nil {
		t.Fatal(err)
	}
	if r := <-rejections; r.Code != string(CodeBadBatch) || !strings.Contains(r.Reason, "header says 3 events, payload has 2") {
		t.Errorf("announced %+v", r)
	}

	sink.checkExactlyOnce(t, []string{okID})
	sink.mu.Lock()
	defer sink.mu.Unlock()
	var codes []string
	for _, r := range sink.rejected {
		codes = append(codes, r.Code)
	}
	if strings.Join(codes, ",") != "bad-event,malformed,emitter-mismatch,bad-batch" {
		t.Errorf("rejected store holds %v", codes)
	}
}

func isRejected(err error, code string) bool {
	var r *sdk.RejectedError
	return errors.As(err, &r) && r.Code == code
}

// TestReceiptReplySubject: a receipt request is answered only on the
// requesting emitter's own inbox. One whose reply subject is another
// emitter's events subject (or another emitter's inbox) is dropped and
// counted, even on a server that would let the ledger publish there.
func TestReceiptReplySubject(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{}) // no permissions: only the ingest's check stands
	sink := newFakeSink()
	sink.publishCheckpoint(1 << 40)
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink})
	runIngest(t, in)

	req, _ := wire.MarshalReceiptRequest(wire.ReceiptRequest{ID: "g:0"})
	// A request from the emitter's own inbox is answered (asked until the
	// ingest's subscription is up).
	cnc := clientConn(t, s, "e1")
	for {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := cnc.RequestWithContext(rctx, wire.Subjects{}.Receipts("e1"), req)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("a request from e1's own inbox: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}

	nc := connect(t, s)
	landed := make(chan *nats.Msg, 10)
	for _, subj := range []string{wire.Subjects{}.Events("e2"), "_INBOX.e2.x"} {
		if _, err := nc.ChanSubscribe(subj, landed); err != nil {
			t.Fatal(err)
		}
	}
	nc.Flush()
	for _, reply := range []string{wire.Subjects{}.Events("e2"), "_INBOX.e2.x", "_INBOX.e1"} {
		if err := nc.PublishRequest(wire.Subjects{}.Receipts("e1"), reply, req); err != nil {
			t.Fatal(err)
		}
	}
	// (nc's inbox is _INBOX.<nuid>, not e1's.)
	if own, err := nc.Request(wire.Subjects{}.Receipts("e1"), req, 300*time.Millisecond); err == nil {
		t.Errorf("answered on an inbox that is not e1's: %s", own.Data)
	}
	select {
	case m := <-landed:
		t.Errorf("the ingest published a reply on %s: %s", m.Subject, m.Data)
	case <-time.After(300 * time.Millisecond):
	}
	if got := testutil.ToFloat64(in.m.receipts.WithLabelValues("refused")); got != 4 {
		t.Errorf("refused requests counted: %v, want 4", got)
	}
}

// TestReceiptProof: a request of version wire.ReceiptProofVersion gets the
// event's inclusion proof in the checkpoint's tree, one without "v" gets the
// version-1 reply (no proof), the SDK checks the proof against the bytes it
// published and refuses a proof of another leaf (ErrBadReceipt), and a proof
// the ledger cannot make is "unavailable".
func TestReceiptProof(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink})
	runIngest(t, in)
	c := newClient(t, clientConn(t, s, "e1"), sdk.Config{Emitter: "e1"})
	var evs []sdk.Event
	for i := range 5 {
		id, data := makeEvent("e1", "proof", i)
		evs = append(evs, sdk.Event{ID: id, Data: data})
		if _, err := c.Publish(ctx, evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	sink.waitLen(t, ctx, 5)
	// The cursor moves past a batch after the sink has it (its acks
	// first): the pending replies below report it at 6.
	for in.decided.Load() < 6 {
		if ctx.Err() != nil {
			t.Fatalf("the cursor is at %d, want 6: %v", in.decided.Load(), ctx.Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
	sink.publishCheckpoint(5)

	nc := clientConn(t, s, "e1")
	ask := func(req string) wire.ReceiptReply {
		t.Helper()
		m, err := nc.RequestWithContext(ctx, wire.Subjects{}.Receipts("e1"), []byte(req))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := wire.ParseReceiptReply(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	v1 := ask(`{"id":"proof:2"}`)
	if v1.Status != wire.StatusOK || v1.V != 0 || v1.Proof != nil || *v1.Index != 2 {
		t.Errorf("version 1 reply: %+v", v1)
	}
	v2 := ask(`{"id":"proof:2","v":2}`)
	want, _ := sink.tree.InclusionProof(2, 5)
	if v2.Status != wire.StatusOK || v2.V != 2 || len(v2.Proof) != len(want) || v2.Checkpoint != v1.Checkpoint {
		t.Fatalf("version 2 reply: %+v", v2)
	}
	for i := range want {
		if merkle.Hash(v2.Proof[i]) != want[i] {
			t.Errorf("proof hash %d differs", i)
		}
	}
	if rep := ask(`{"id":"nope:0","v":2}`); rep.Status != wire.StatusPending || rep.V != 2 {
		t.Errorf("version 2 pending: %+v", rep)
	}
	if rep := ask(`{"id":"proof:0","v":4}`); rep.Status != wire.StatusError || rep.Code != "bad-request" {
		t.Errorf("version 4: %+v", rep)
	}
	// Version 3: the proof as version 2's; for an event without a record,
	// pending at once with the stream's state: all 5 messages decided.
	if v3 := ask(`{"id":"proof:2","v":3}`); v3.Status != wire.StatusOK || v3.V != 3 || len(v3.Proof) != len(want) || v3.Decided != nil {
		t.Errorf("version 3 reply: %+v", v3)
	}
	v3 := ask(`{"id":"nope:0","v":3,"wait_ms":60000}`)
	st, ok := v3.State()
	if v3.Status != wire.StatusPending || v3.V != 3 || !ok || st.Decided != 6 || st.Last != 5 || !st.Lost(5) {
		t.Errorf("version 3 pending: %+v (%+v)", v3, st)
	}
	// Asked with the sequence of a message decided without it: lost.
	if st, ok := ask(`{"id":"nope:0","seq":3,"v":3,"wait_ms":60000}`).State(); !ok || !st.Lost(3) {
		t.Errorf("version 3 pending for a passed message: %+v, %v", st, ok)
	}
	// A status request: logged, unknown, and the state.
	m, err := nc.RequestWithContext(ctx, wire.Subjects{}.Receipts("e1"), []byte(`{"events":[{"id":"proof:1"},{"id":"nope:0","seq":2},{"id":"proof:4","seq":5}],"v":3}`))
	if err != nil {
		t.Fatal(err)
	}
	sr, err := wire.ParseStatusReply(m.Data)
	if err != nil {
		t.Fatalf("status reply %s: %v", m.Data, err)
	}
	if st, ok := sr.State(); !ok || st.Decided != 6 || sr.Checkpoint != v1.Checkpoint || len(sr.Events) != 3 ||
		sr.Events[0].Status != wire.EventLogged || *sr.Events[0].Index != 1 || sr.Events[1].Status != wire.EventUnknown ||
		sr.Events[2].Status != wire.EventLogged || *sr.Events[2].Index != 4 {
		t.Errorf("status reply: %s", m.Data)
	}

	for i, ev := range evs {
		r, err := c.Receipt(ctx, ev)
		if err != nil {
			t.Fatalf("receipt of %s: %v", ev.ID, err)
		}
		if r.Index != uint64(i) || string(r.Extra) != string(ev.Data) || r.SignatureChecked {
			t.Errorf("receipt of %s: index %d, signature checked %t", ev.ID, r.Index, r.SignatureChecked)
		}
	}
	// Another event's bytes under a logged id: the receipt is the logged
	// event's, and it does not prove these bytes.
	_, other := makeEvent("e1", "other", 0)
	if _, err := c.Receipt(ctx, sdk.Event{ID: evs[1].ID, Data: other}); !errors.Is(err, sdk.ErrBadReceipt) {
		t.Errorf("a receipt checked against other bytes: %v, want ErrBadReceipt", err)
	}

	sink.mu.Lock()
	sink.lie = true
	sink.mu.Unlock()
	if _, err := c.Receipt(ctx, evs[3]); !errors.Is(err, sdk.ErrBadReceipt) {
		t.Errorf("a proof of another leaf: %v, want ErrBadReceipt", err)
	}
	sink.mu.Lock()
	sink.lie, sink.proofErr = false, errors.New("no tiles today")
	sink.mu.Unlock()
	if rep := ask(`{"id":"proof:3","v":2}`); rep.Status != wire.StatusError || rep.Code != "unavailable" || !strings.Contains(rep.Reason, "no tiles today") {
		t.Errorf("a proof the ledger cannot make: %+v", rep)
	}
}

// TestLinger: with Linger, a batch of fewer than LingerEvents events waits
// for more messages: six events published one after another, each
// acknowledged before the next, reach the sink in one Append (the
// linger, an hour here, ends as soon as the sixth arrives).
func TestLinger(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink, Linger: time.Hour, LingerEvents: 6})
	runIngest(t, in)
	c := newClient(t, clientConn(t, s, "e1"), sdk.Config{Emitter: "e1"})
	var ids []string
	for g := range 6 {
		id, data := makeEvent("e1", fmt.Sprintf("linger%d", g), 0)
		p, err := c.PublishAsync(ctx, sdk.Event{ID: id, Data: data, OrderKey: fmt.Sprintf("linger%d", g)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	sink.waitLen(t, ctx, len(ids))
	sink.checkExactlyOnce(t, ids)
	sink.mu.Lock()
	calls := sink.calls
	sink.mu.Unlock()
	if calls != 1 {
		t.Errorf("%d Appends for six events published one by one, want 1 (they linger until the sixth)", calls)
	}
}
