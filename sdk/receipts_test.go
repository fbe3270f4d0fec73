package sdk_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// batchLedger is a fake ledger answering batched receipt requests
// (wire.ReceiptBatchVersion) on one emitter's receipts subject from a tree
// of leaves and a checkpoint signed with a real key: answer returns the
// answer about one event in the n-th request (nil: ok, with its proof),
// mutate may change the reply before it is sent.
type batchLedger struct {
	t      *testing.T
	tree   testonly.MemTree
	index  map[string]uint64
	note   []byte
	key    note.Verifier
	hold   time.Duration
	answer func(e wire.StatusQuery, n int) *wire.EventReceipt
	mutate func(p *wire.ReceiptsReply, n int)

	mu       sync.Mutex
	requests []wire.ReceiptsRequest
}

func newBatchLedger(t *testing.T, nc *nats.Conn, emitter string, leaves map[string][]byte) *batchLedger {
	t.Helper()
	const origin = "example.com/batched"
	skey, vkey, err := merkle.GenerateKey(mrand.NewChaCha8(testonly.Label32("batched receipts")), origin)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := merkle.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	l := &batchLedger{t: t, index: map[string]uint64{}}
	if l.key, err = merkle.NewVerifier(vkey); err != nil {
		t.Fatal(err)
	}
	for id, b := range leaves {
		l.index[id] = l.tree.Add(b)
	}
	placeholder, err := l.tree.Checkpoint(origin, l.tree.Size())
	if err != nil {
		t.Fatal(err)
	}
	var root merkle.Hash
	if _, err := base64.StdEncoding.Decode(root[:], bytes.Split(placeholder, []byte("\n"))[2]); err != nil {
		t.Fatal(err)
	}
	if l.note, err = merkle.Sign(merkle.Checkpoint{Origin: origin, Size: l.tree.Size(), Hash: root}, signer); err != nil {
		t.Fatal(err)
	}
	sub, err := nc.Subscribe(wire.Subjects{}.Receipts(emitter), l.serve)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	return l
}

func (l *batchLedger) serve(m *nats.Msg) {
	q, err := wire.ParseReceiptsRequest(m.Data)
	if err != nil {
		l.t.Errorf("not a batched request: %s: %v", m.Data, err)
		return
	}
	l.mu.Lock()
	l.requests = append(l.requests, q)
	n := len(l.requests)
	l.mu.Unlock()
	go func() {
		time.Sleep(l.hold)
		p := wire.ReceiptsReply{Status: wire.StatusOK, V: wire.ReceiptBatchVersion}
		for _, e := range q.Events {
			var r wire.EventReceipt
			if a := l.answer(e, n); a != nil {
				r = *a
			} else {
				i := l.index[e.ID]
				proof, err := l.tree.InclusionProof(i, l.tree.Size())
				if err != nil {
					l.t.Error(err)
				}
				r = wire.EventReceipt{Status: wire.StatusOK, Index: &i}
				for _, h := range proof {
					r.Proof = append(r.Proof, wire.Hash(h))
				}
				p.Checkpoint = string(l.note)
			}
			r.ID = e.ID
			if r.Status == wire.EventUnknown {
				d, last := uint64(10), uint64(9)
				p.Decided, p.Last = &d, &last
			}
			p.Events = append(p.Events, r)
		}
		if l.mutate != nil {
			l.mutate(&p, n)
		}
		b, err := json.Marshal(p) // not wire.MarshalReceiptsReply: a mutated reply may not be valid
		if err != nil {
			l.t.Error(err)
		}
		m.Respond(b)
	}()
}

func (l *batchLedger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.requests)
}

// TestBatchedReceipts: the Client's concurrent ReceiptOf calls share
// batched requests (fewer requests than calls); each gets its own answer
// from a mixed batch: a receipt checked against the log's key (its
// inclusion proof in the one checkpoint, SignatureChecked), a rejection, an
// event without a record and without an ack (unknown: asked again with the
// stream's last sequence), one pending until a later request (asked again
// in the next batch, not returned pending).
func TestBatchedReceipts(t *testing.T) {
	s := startServer(t)
	nc := dial(t, s, "e1")
	leaves := map[string][]byte{}
	var evs []sdk.Event
	for i := range 12 {
		id := fmt.Sprintf("g:%d", i)
		leaves[id] = fmt.Appendf(nil, `{"id":%q}`, id)
		evs = append(evs, sdk.Event{ID: id, Data: leaves[id]})
	}
	evs = append(evs, sdk.Event{ID: "g:bad", Data: []byte(`{"id":"g:bad"}`)})
	l := newBatchLedger(t, dial(t, s, "ledger"), "e1", leaves)
	l.hold = 50 * time.Millisecond
	var nopeSeq uint64
	l.answer = func(e wire.StatusQuery, n int) *wire.EventReceipt {
		switch {
		case e.ID == "g:bad":
			return &wire.EventReceipt{Status: wire.StatusRejected, Code: "bad-signature", Reason: "no"}
		case e.ID == "g:10" && e.Seq == 0:
			return &wire.EventReceipt{Status: wire.EventUnknown}
		case e.ID == "g:10":
			nopeSeq = e.Seq
		case e.ID == "g:11" && n < 3:
			i := l.index[e.ID]
			return &wire.EventReceipt{Status: wire.StatusPending, Index: &i}
		}
		return nil
	}
	c := newClient(t, nc, sdk.Config{Emitter: "e1", LogKey: l.key})
	ctx := testContext(t)
	type result struct {
		r   sdk.Receipt
		err error
	}
	results := make([]result, len(evs))
	var wg sync.WaitGroup
	for i, ev := range evs {
		wg.Go(func() {
			ack := sdk.Ack{Seq: uint64(i + 1)}
			if ev.ID == "g:10" {
				ack = sdk.Ack{} // published elsewhere
			}
			results[i].r, results[i].err = c.ReceiptOf(ctx, ev, ack)
		})
	}
	wg.Wait()
	for i, ev := range evs {
		r, err := results[i].r, results[i].err
		if ev.ID == "g:bad" {
			var rej *sdk.RejectedError
			if !errors.As(err, &rej) || rej.Code != "bad-signature" || rej.Reason != "no" {
				t.Errorf("g:bad: %v, want its rejection", err)
			}
			continue
		}
		if err != nil || !r.SignatureChecked || r.Index != l.index[ev.ID] || !bytes.Equal(r.Checkpoint, l.note) || !bytes.Equal(r.Extra, ev.Data) {
			t.Errorf("%s: %+v, %v", ev.ID, r, err)
			continue
		}
		if _, err := sdk.CheckReceipt(r, ev.Data, l.key); err != nil {
			t.Errorf("%s: %v", ev.ID, err)
		}
	}
	if nopeSeq != 9 {
		t.Errorf("the event without a record asked again with seq %d, want the stream's last, 9", nopeSeq)
	}
	if n := l.count(); n >= len(evs) || n < 3 {
		t.Errorf("%d batched requests for %d receipts, want fewer, and at least 3 (g:11 pending in the first two)", n, len(evs))
	}
	t.Logf("%d batched requests for %d receipts", l.count(), len(evs))
}

// TestBatchedReceiptsMutated: a batched reply whose proof or checkpoint is
// changed is refused as the Client refuses any receipt that does not prove
// its event (ErrBadReceipt); one that does not answer the request (another
// event's id, another count of events, a garbled member) is asked again,
// never returned.
func TestBatchedReceiptsMutated(t *testing.T) {
	s := startServer(t)
	leaves := map[string][]byte{}
	for i := range 4 {
		id := fmt.Sprintf("g:%d", i)
		leaves[id] = fmt.Appendf(nil, `{"id":%q}`, id)
	}
	ev := sdk.Event{ID: "g:1", Data: leaves["g:1"]}
	for _, tc := range []struct {
		name   string
		mutate func(p *wire.ReceiptsReply, n int)
		bad    bool // refused as ErrBadReceipt; else asked again until the reply is right
	}{
		{"proof hash flipped", func(p *wire.ReceiptsReply, n int) { p.Events[0].Proof[0][3] ^= 1 }, true},
		{"proof cut", func(p *wire.ReceiptsReply, n int) { p.Events[0].Proof = p.Events[0].Proof[1:] }, true},
		{"another index", func(p *wire.ReceiptsReply, n int) { i := *p.Events[0].Index + 1; p.Events[0].Index = &i }, true},
		{"signature flipped", func(p *wire.ReceiptsReply, n int) {
			// A bit of the signature's bytes, not of its base64: the
			// last character's low bits may be padding, which decoding
			// ignores (the same signature).
			lines := strings.Split(strings.TrimSuffix(p.Checkpoint, "\n"), "\n")
			last := lines[len(lines)-1]
			i := strings.LastIndexByte(last, ' ')
			sig, err := base64.StdEncoding.DecodeString(last[i+1:])
			if err != nil {
				panic(err)
			}
			sig[10] ^= 1
			lines[len(lines)-1] = last[:i+1] + base64.StdEncoding.EncodeToString(sig)
			p.Checkpoint = strings.Join(lines, "\n") + "\n"
		}, true},
		{"another event's id", func(p *wire.ReceiptsReply, n int) {
			if n < 3 {
				p.Events[0].ID = "g:2"
			}
		}, false},
		{"an event too many", func(p *wire.ReceiptsReply, n int) {
			if n < 3 {
				p.Events = append(p.Events, p.Events[0])
			}
		}, false},
		{"ok without its checkpoint", func(p *wire.ReceiptsReply, n int) {
			if n < 3 {
				p.Checkpoint = ""
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newBatchLedger(t, dial(t, s, "ledger"), "e1", leaves)
			l.answer = func(wire.StatusQuery, int) *wire.EventReceipt { return nil }
			l.mutate = tc.mutate
			var retries int
			var mu sync.Mutex
			c := newClient(t, dial(t, s, "e1"), sdk.Config{Emitter: "e1", LogKey: l.key, OnRetry: func(error) {
				mu.Lock()
				retries++
				mu.Unlock()
			}})
			ctx := testContext(t)
			r, err := c.ReceiptOf(ctx, ev, sdk.Ack{Seq: 1})
			if tc.bad {
				if !errors.Is(err, sdk.ErrBadReceipt) {
					t.Errorf("%+v, %v; want ErrBadReceipt", r, err)
				}
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil || !r.SignatureChecked || retries < 2 || l.count() < 3 {
				t.Errorf("%+v, %v after %d retries and %d requests; want the receipt once the reply is right", r, err, retries, l.count())
			}
		})
	}
}
