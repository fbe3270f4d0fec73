package ingest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// TestHold: while Config.Hold is closed (a node without a fresh lease),
// the ingest appends nothing, acknowledges nothing it appended after Hold
// closed, and answers receipt and status requests "unavailable", also a
// receipt request it held from before and whose answer came after; once
// Hold opens it ingests everything, exactly once, and answers again.
func TestHold(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	var held atomic.Bool
	held.Store(true)
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink, HoldPoll: 10 * time.Millisecond,
		Hold: func() error {
			if held.Load() {
				return errors.New("the test holds the lease back")
			}
			return nil
		}})
	ensureStream(t, connect(t, s), StreamConfig{}) // as the node that holds the lease made it
	runIngest(t, in)
	nc := clientConn(t, s, "e1")
	c := newClient(t, nc, sdk.Config{Emitter: "e1", FollowInterval: -1})
	heldBack := func(what string) float64 { return testutil.ToFloat64(in.m.heldBack.WithLabelValues(what)) }

	// request sends a raw request and returns the reply's data.
	request := func(req []byte) []byte {
		t.Helper()
		m, err := nc.RequestWithContext(ctx, wire.Subjects{}.Receipts("e1"), req)
		for errors.Is(err, nats.ErrNoResponders) { // Run has not subscribed yet
			time.Sleep(10 * time.Millisecond)
			m, err = nc.RequestWithContext(ctx, wire.Subjects{}.Receipts("e1"), req)
		}
		if err != nil {
			t.Fatal(err)
		}
		return m.Data
	}
	receiptReq := func(id string, wait time.Duration) []byte {
		b, err := wire.MarshalReceiptRequest(wire.ReceiptRequest{ID: id, V: wire.ReceiptProofVersion, WaitMillis: wait.Milliseconds()})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	statusReq := func(id string) []byte {
		b, err := wire.MarshalStatusRequest(wire.StatusRequest{V: wire.ReceiptStateVersion, Events: []wire.StatusQuery{{ID: id}}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	msgReq := func(seq uint64, data []byte) []byte {
		b, err := wire.MarshalMessageStatusRequest(wire.MessageStatusRequest{V: wire.MessageStatusVersion,
			Messages: []wire.MessageQuery{{Seq: seq, SHA256: sha256.Sum256(data)}}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	wantUnavailable := func(what string, data []byte) {
		t.Helper()
		if rep, err := wire.ParseMessageStatusReply(data); err == nil {
			if rep.Status != wire.StatusError || rep.Code != "unavailable" {
				t.Errorf("%s: message status reply %+v, want unavailable", what, rep)
			}
			return
		}
		if rep, err := wire.ParseStatusReply(data); err == nil {
			if rep.Status != wire.StatusError || rep.Code != "unavailable" {
				t.Errorf("%s: status reply %+v, want unavailable", what, rep)
			}
			return
		}
		rep, err := wire.ParseReceiptReply(data)
		if err != nil || rep.Status != wire.StatusError || rep.Code != "unavailable" {
			t.Errorf("%s: receipt reply %+v, %v, want unavailable", what, rep, err)
		}
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case <-ctx.Done():
				t.Fatalf("waiting for %s", what)
			case <-time.After(5 * time.Millisecond):
			}
		}
	}

	// Held from the start: the events are acknowledged by the stream
	// (the admission runs), none reaches the ledger, and requests about
	// them are answered unavailable.
	var ids []string
	var acks []sdk.Ack
	var datas [][]byte
	for g := range 5 {
		id, data := makeEvent("e1", fmt.Sprintf("h%d", g), 0)
		ack, err := c.Publish(ctx, sdk.Event{ID: id, Data: data})
		if err != nil {
			t.Fatal(err)
		}
		ids, acks, datas = append(ids, id), append(acks, ack), append(datas, data)
	}
	wantUnavailable("a receipt request while held", request(receiptReq(ids[0], 0)))
	wantUnavailable("a status request while held", request(statusReq(ids[0])))
	wantUnavailable("a message status request while held", request(msgReq(acks[0].Seq, datas[0])))
	if heldBack("receipt") < 1 || heldBack("status") < 1 {
		t.Errorf("held back: %v receipt and %v status requests counted", heldBack("receipt"), heldBack("status"))
	}
	sink.mu.Lock()
	n := len(sink.log)
	sink.mu.Unlock()
	if n != 0 {
		t.Fatalf("the ledger took %d events while the ingest was held", n)
	}

	// Open: everything is ingested, and answered.
	held.Store(false)
	sink.waitLen(t, ctx, len(ids))
	sink.publishCheckpoint(1)
	rep, err := wire.ParseReceiptReply(request(receiptReq(ids[0], time.Second)))
	if err != nil || rep.Status != wire.StatusOK {
		t.Fatalf("receipt once open: %+v, %v", rep, err)
	}
	if mrep, err := wire.ParseMessageStatusReply(request(msgReq(acks[0].Seq, datas[0]))); err != nil || mrep.Status != wire.StatusOK || mrep.Messages[0].Status != wire.MessageLogged {
		t.Fatalf("message status once open: %+v, %v", mrep, err)
	}

	// A receipt request held for a checkpoint when Hold closes: its
	// answer, which comes after, is replaced by unavailable.
	last := ids[len(ids)-1]
	replied := make(chan []byte, 1)
	go func() { replied <- request(receiptReq(last, 20*time.Second)) }()
	waitFor("the receipt request to be held", func() bool {
		in.held.mu.Lock()
		defer in.held.mu.Unlock()
		return in.held.sum == 1
	})
	held.Store(true)
	sink.publishCheckpoint(uint64(len(ids)))
	wantUnavailable("a receipt answered after Hold closed", <-replied)

	// A batch appended while Hold closes is not acknowledged: the
	// message stays in the stream, and is delivered again once open.
	held.Store(false)
	sink.mu.Lock()
	gate := make(chan struct{})
	sink.gate, sink.entered = gate, make(chan struct{}, 1)
	sink.mu.Unlock()
	id, data := makeEvent("e1", "late", 0)
	if _, err := c.Publish(ctx, sdk.Event{ID: id, Data: data}); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, id)
	select {
	case <-sink.entered:
	case <-ctx.Done():
		t.Fatal("the batch never reached Append")
	}
	batches := heldBack("batch")
	held.Store(true)
	close(gate)
	waitFor("the appended batch to be held back", func() bool { return heldBack("batch") > batches })
	if st := streamState(t, connect(t, s), "ZARLOG_EVENTS"); st.Msgs != 1 {
		t.Errorf("the stream holds %d messages after a batch held back unacknowledged, want 1", st.Msgs)
	}
	wantUnavailable("a status request while held again", request(statusReq(id)))
	// The ingest's records of the messages it decided are not answered
	// from either while held.
	wantUnavailable("a message status request while held again", request(msgReq(acks[0].Seq, datas[0])))

	held.Store(false)
	waitFor("the stream to be acknowledged", func() bool {
		return streamState(t, connect(t, s), "ZARLOG_EVENTS").Msgs == 0
	})
	sink.checkExactlyOnce(t, ids)
	sink.publishCheckpoint(uint64(len(ids)))
	if _, err := c.Receipt(ctx, sdk.Event{ID: id, Data: data}); err != nil {
		t.Fatalf("receipt after Hold opened again: %v", err)
	}
}
