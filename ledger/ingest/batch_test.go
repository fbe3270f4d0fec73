package ingest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/wire"
)

// askReceipts sends a batched receipt request on emitter's receipts subject
// from nc and returns the parsed reply.
func askReceipts(t *testing.T, ctx context.Context, nc *nats.Conn, emitter string, q wire.ReceiptsRequest) wire.ReceiptsReply {
	t.Helper()
	p, err := tryReceipts(ctx, nc, emitter, q)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tryReceipts is askReceipts, returning its error (for a goroutine).
func tryReceipts(ctx context.Context, nc *nats.Conn, emitter string, q wire.ReceiptsRequest) (wire.ReceiptsReply, error) {
	q.V = wire.ReceiptBatchVersion
	req, err := wire.MarshalReceiptsRequest(q)
	if err != nil {
		return wire.ReceiptsReply{}, err
	}
	m, err := nc.RequestWithContext(ctx, wire.Subjects{}.Receipts(emitter), req)
	if err != nil {
		return wire.ReceiptsReply{}, err
	}
	p, err := wire.ParseReceiptsReply(m.Data)
	if err != nil {
		return wire.ReceiptsReply{}, fmt.Errorf("%s: %w", m.Data, err)
	}
	if p.Status == wire.StatusOK && len(p.Events) != len(q.Events) {
		return wire.ReceiptsReply{}, fmt.Errorf("%d events answered, %d asked: %s", len(p.Events), len(q.Events), m.Data)
	}
	return p, nil
}

// TestReceiptsBatch: a batched receipt request (wire.ReceiptBatchVersion)
// is answered with one checkpoint and, for each event, what a receipt
// request of version 3 would say: ok with the inclusion proof in that
// checkpoint's tree, pending with the index of an event no checkpoint
// covers yet, rejected with the refusal, unknown with the stream's state
// for an event without a record; it is held until one of its events is
// answerable (a checkpoint covering it, its message decided), and answered
// pending/unknown when its wait ends.
func TestReceiptsBatch(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink})
	acks := watchAcks(in)
	runIngest(t, in)

	nc := clientConn(t, s, "e1")
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	publish := func(evs ...[]byte) uint64 {
		t.Helper()
		m := nats.NewMsg(wire.Subjects{}.Events("e1"))
		m.Data = evs[0]
		if len(evs) > 1 {
			batch, err := wire.AppendBatch(nil, evs)
			if err != nil {
				t.Fatal(err)
			}
			m.Data = batch
			m.Header.Set(wire.HeaderEvents, wire.FormatCount(len(evs)))
		}
		ack, err := js.PublishMsg(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		return ack.Sequence
	}
	var evs [][]byte
	for i := range 5 {
		_, b := makeEvent("e1", "b", i)
		evs = append(evs, b)
	}
	bad := []byte(`{"bad":true,"emitter":"e1","game":"b","id":"b:bad","seq":9}`)
	seq := publish(evs[0], evs[1], evs[2], bad, evs[3], evs[4]) // leaves 0…4
	acks.wait(t, ctx, seq)
	decided := func(seq uint64) { // the cursor moves after the ack
		t.Helper()
		for in.decided.Load() <= seq {
			if ctx.Err() != nil {
				t.Fatal(ctx.Err())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	decided(seq)
	sink.publishCheckpoint(3)

	// Mixed: logged, durable but not covered, rejected, unknown, and a
	// message not decided yet: answered at once (the logged one and the
	// rejection are answerable).
	p := askReceipts(t, ctx, nc, "e1", wire.ReceiptsRequest{WaitMillis: 60000, Events: []wire.StatusQuery{
		{ID: "b:1", Seq: seq}, {ID: "b:4"}, {ID: "b:bad", Seq: seq}, {ID: "nope:0"}, {ID: "later:0", Seq: seq + 1},
	}})
	cp, err := sink.WaitCovering(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != wire.StatusOK || p.Checkpoint != string(cp) {
		t.Fatalf("reply %+v, want the checkpoint of 3 leaves", p)
	}
	want, _ := sink.tree.InclusionProof(1, 3)
	if e := p.Events[0]; e.Status != wire.StatusOK || *e.Index != 1 || len(e.Proof) != len(want) {
		t.Errorf("logged event: %+v", e)
	} else {
		for i := range want {
			if merkle.Hash(e.Proof[i]) != want[i] {
				t.Errorf("proof hash %d differs", i)
			}
		}
	}
	if e := p.Events[1]; e.Status != wire.StatusPending || e.Index == nil || *e.Index != 4 || e.Proof != nil {
		t.Errorf("durable event without a checkpoint: %+v", e)
	}
	if e := p.Events[2]; e.Status != wire.StatusRejected || e.Code != "bad-event" || e.Reason == "" {
		t.Errorf("rejected event: %+v", e)
	}
	if e := p.Events[3]; e.Status != wire.EventUnknown {
		t.Errorf("event without a record: %+v", e)
	}
	if e := p.Events[4]; e.Status != wire.StatusPending || e.Index != nil {
		t.Errorf("event of a message not decided yet: %+v", e)
	}
	if st, ok := p.State(); !ok || st.Decided != seq+1 || st.Last != seq {
		t.Errorf("stream state %+v, %v; want decided %d, last %d", st, ok, seq+1, seq)
	}

	// Held until a checkpoint covers one of its events.
	got := make(chan wire.ReceiptsReply, 1)
	ask := func(q wire.ReceiptsRequest) {
		p, err := tryReceipts(ctx, nc, "e1", q)
		if err != nil {
			t.Error(err)
		}
		got <- p
	}
	go ask(wire.ReceiptsRequest{WaitMillis: 60000, Events: []wire.StatusQuery{{ID: "b:4", Seq: seq}, {ID: "b:3", Seq: seq}}})
	select {
	case p := <-got:
		t.Fatalf("answered before a checkpoint covered its events: %+v", p)
	case <-time.After(300 * time.Millisecond):
	}
	sink.publishCheckpoint(4)
	p = <-got
	if p.Events[1].Status != wire.StatusOK || *p.Events[1].Index != 3 || p.Events[0].Status != wire.StatusPending || *p.Events[0].Index != 4 {
		t.Errorf("after a checkpoint of 4 leaves: %+v", p)
	}
	if c, err := merkle.ParseSignedCheckpoint([]byte(p.Checkpoint)); err != nil || c.Size != 4 {
		t.Errorf("checkpoint %q: %v", p.Checkpoint, err)
	}

	// Held until its message is decided, then until a checkpoint covers it.
	go ask(wire.ReceiptsRequest{WaitMillis: 60000, Events: []wire.StatusQuery{{ID: "late:0", Seq: seq + 1}, {ID: "b:4", Seq: seq}}})
	time.Sleep(200 * time.Millisecond)
	_, late := makeEvent("e1", "late", 0)
	if s2 := publish(late); s2 != seq+1 {
		t.Fatalf("published at %d, want %d", s2, seq+1)
	}
	select {
	case p := <-got:
		t.Fatalf("answered before a checkpoint covered its events: %+v", p)
	case <-time.After(300 * time.Millisecond):
	}
	sink.publishCheckpoint(6)
	p = <-got
	if p.Events[0].Status != wire.StatusOK || *p.Events[0].Index != 5 || p.Events[1].Status != wire.StatusOK || *p.Events[1].Index != 4 || p.Decided != nil {
		t.Errorf("after the message and a checkpoint of 6 leaves: %+v", p)
	}

	// A message decided without the event: unknown at once, lost by the
	// state.
	p = askReceipts(t, ctx, nc, "e1", wire.ReceiptsRequest{WaitMillis: 60000, Events: []wire.StatusQuery{{ID: "never:0", Seq: seq}}})
	if st, ok := p.State(); p.Events[0].Status != wire.EventUnknown || !ok || !st.Lost(seq) {
		t.Errorf("a message decided without it: %+v", p)
	}
	// A wait that ends: pending with the index of a durable event.
	_, late = makeEvent("e1", "late", 1)
	s3 := publish(late)
	acks.wait(t, ctx, s3)
	decided(s3)
	p = askReceipts(t, ctx, nc, "e1", wire.ReceiptsRequest{WaitMillis: 200, Events: []wire.StatusQuery{{ID: "late:1", Seq: s3}}})
	if e := p.Events[0]; e.Status != wire.StatusPending || e.Index == nil || *e.Index != 6 || p.Checkpoint != "" {
		t.Errorf("a wait that ended: %+v", p)
	}

	// A bad batched request is refused with a batched reply.
	m, err := nc.RequestWithContext(ctx, wire.Subjects{}.Receipts("e1"), []byte(`{"events":[],"v":5}`))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := wire.ParseReceiptsReply(m.Data); err != nil || p.Status != wire.StatusError || p.Code != "bad-request" {
		t.Errorf("bad batched request: %s, %v", m.Data, err)
	}
	// The older requests are still answered.
	m, err = nc.RequestWithContext(ctx, wire.Subjects{}.Receipts("e1"), []byte(`{"id":"b:1","v":3}`))
	if err != nil {
		t.Fatal(err)
	}
	if r, err := wire.ParseReceiptReply(m.Data); err != nil || r.Status != wire.StatusOK || len(r.Proof) == 0 {
		t.Errorf("receipt request of version 3: %s, %v", m.Data, err)
	}
}

// TestSessionKeep: a session keeps a batch's slices for the next one
// cleared, so that no message or payload of a decided batch stays
// reachable through them, and drops slices that grew past maxKept.
func TestSessionKeep(t *testing.T) {
	st := &sessionState{}
	subs := []submission{{Input: ledger.Input{Emitter: "e", Data: []byte("payload")}, seq: 3}}
	items := []item{{seq: 3, emitter: "e", n: 1}}
	st.inputs = append(st.inputs, subs[0].Input)
	st.keep(subs, items)
	if len(st.subs) != 0 || len(st.items) != 0 || len(st.inputs) != 0 || cap(st.subs) == 0 || cap(st.items) == 0 {
		t.Fatalf("kept %d/%d submissions, %d/%d items, %d inputs", len(st.subs), cap(st.subs), len(st.items), cap(st.items), len(st.inputs))
	}
	if s := st.subs[:1][0]; s.Data != nil || s.Emitter != "" || st.items[:1][0] != (item{}) || st.inputs[:1][0].Data != nil {
		t.Fatal("a kept slice still refers to the batch's messages")
	}
	st.keep(make([]submission, 0, maxKept+1), items)
	if st.subs != nil || st.items != nil || st.inputs != nil {
		t.Fatal("kept slices past maxKept")
	}
}
