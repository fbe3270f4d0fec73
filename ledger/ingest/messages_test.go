package ingest

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zarlog/zarlog/wire"
)

// askMessages sends a message status request on emitter's receipts subject
// from nc and returns the parsed reply.
func askMessages(t *testing.T, ctx context.Context, nc *nats.Conn, emitter string, qs ...wire.MessageQuery) wire.MessageStatusReply {
	t.Helper()
	req, err := wire.MarshalMessageStatusRequest(wire.MessageStatusRequest{V: wire.MessageStatusVersion, Messages: qs})
	if err != nil {
		t.Fatal(err)
	}
	var m *nats.Msg
	for {
		// Asked until the ingest's subscription is up.
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		m, err = nc.RequestWithContext(rctx, wire.Subjects{}.Receipts(emitter), req)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	p, err := wire.ParseMessageStatusReply(m.Data)
	if err != nil {
		t.Fatalf("%s: %v", m.Data, err)
	}
	if p.Status != wire.StatusOK || len(p.Messages) != len(qs) {
		t.Fatalf("message status reply %+v", p)
	}
	return p
}

// TestMessageStatus: the ingest answers a message status request from its
// records of the messages it decided: a message whose events were all
// appended is "appended" with the largest index of its events, and
// "logged" once the latest checkpoint covers it; one with a refused event is
// "mixed"; another payload at the same sequence, another emitter's
// question, a sequence not decided and a record from before the session
// are "unknown", with the stream's state (the SDK then asks about the
// events by id, wire.StatusRequest, which is still served).
func TestMessageStatus(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink})
	acks := watchAcks(in)
	stop := runIngest(t, in)

	nc := clientConn(t, s, "e1")
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	publish := func(evs ...[]byte) (uint64, wire.Hash) {
		t.Helper()
		batch, err := wire.AppendBatch(nil, evs)
		if err != nil {
			t.Fatal(err)
		}
		m := nats.NewMsg(wire.Subjects{}.Events("e1"))
		m.Data = batch
		m.Header.Set(wire.HeaderEvents, wire.FormatCount(len(evs)))
		ack, err := js.PublishMsg(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		return ack.Sequence, sha256.Sum256(batch)
	}
	var evs [][]byte
	for i := range 4 {
		_, b := makeEvent("e1", "h", i)
		evs = append(evs, b)
	}
	seqA, sumA := publish(evs[0], evs[1], evs[2]) // leaves 0, 1, 2
	bad := []byte(`{"bad":true,"emitter":"e1","game":"x","id":"x:0","seq":0}`)
	seqB, sumB := publish(evs[3], bad) // leaf 3 and a refusal
	seqC, sumC := publish(evs[1], evs[3])
	acks.wait(t, ctx, seqC)

	sink.publishCheckpoint(2)
	p := askMessages(t, ctx, nc, "e1",
		wire.MessageQuery{Seq: seqA, SHA256: sumA},
		wire.MessageQuery{Seq: seqB, SHA256: sumB},
		wire.MessageQuery{Seq: seqC, SHA256: sumC},
		wire.MessageQuery{Seq: seqA, SHA256: sumB},
		wire.MessageQuery{Seq: seqC + 1, SHA256: sumA},
	)
	st, ok := p.State()
	if !ok || st.Decided != seqC+1 || st.Last != seqC {
		t.Errorf("stream state %+v, %v; want decided %d, last %d", st, ok, seqC+1, seqC)
	}
	want := []struct {
		status string
		index  uint64
		events int
	}{
		{wire.MessageAppended, 2, 3},
		{wire.MessageMixed, 0, 0},
		{wire.MessageAppended, 3, 2}, // duplicates of leaves 1 and 3
		{wire.MessageUnknown, 0, 0},  // another payload at seqA
		{wire.MessageUnknown, 0, 0},  // not decided yet
	}
	for i, w := range want {
		got := p.Messages[i]
		if got.Status != w.status || got.Events != w.events || (got.Index == nil) != (w.events == 0) || got.Index != nil && *got.Index != w.index {
			t.Errorf("message %d: %+v, want %+v", i, got, w)
		}
	}

	sink.publishCheckpoint(3)
	p = askMessages(t, ctx, nc, "e1", wire.MessageQuery{Seq: seqA, SHA256: sumA}, wire.MessageQuery{Seq: seqC, SHA256: sumC})
	if p.Messages[0].Status != wire.MessageLogged || p.Messages[1].Status != wire.MessageAppended || p.Checkpoint == "" {
		t.Errorf("with a checkpoint of 3 leaves: %+v", p)
	}

	// Another emitter asking about e1's message learns nothing.
	p = askMessages(t, ctx, clientConn(t, s, "e2"), "e2", wire.MessageQuery{Seq: seqA, SHA256: sumA})
	if p.Messages[0].Status != wire.MessageUnknown {
		t.Errorf("e2 asking about e1's message: %+v", p.Messages[0])
	}

	// A new session keeps no record from before it: unknown, decided past.
	stop()
	in2 := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink})
	runIngest(t, in2)
	for {
		p = askMessages(t, ctx, nc, "e1", wire.MessageQuery{Seq: seqA, SHA256: sumA})
		if st, ok := p.State(); ok && st.Lost(seqA) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the new session's state: %+v", p)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p.Messages[0].Status != wire.MessageUnknown {
		t.Errorf("a record from before the session: %+v", p.Messages[0])
	}
}
