package sdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// takeoverLedger is a fake ledger that answers receipt and status requests
// as docs/FAULTS.md §4's run 7 saw them. First the old primary: it has
// appended the game's first event (P) and says so ("appended", no
// checkpoint yet), and has not read the second (E). Then, after takeOver,
// the new primary: the old primary's leaves are gone (it was fenced before
// its checkpoint reached the bucket), P's message is gone from the stream
// (the old primary acknowledged it), its tree holds other emitters' leaves
// at P's old index, and it reads the stream from E's message on, deciding
// each event as a ledger does: E without P is refused out-of-order, a copy
// of P is appended, a copy of E after it too.
type takeoverLedger struct {
	t      *testing.T
	stream jetstream.Stream

	mu       sync.Mutex
	newer    bool   // the new primary answers
	next     uint64 // the new primary's cursor: every message below it decided
	told     bool   // the old primary said P was appended
	tree     testonly.MemTree
	outcome  map[string]string // id -> "appended" or "out-of-order"
	index    map[string]uint64
	prevOf   map[string]string // id -> the id before it in its game
	ackP     uint64
	decidedE []string // E's decisions, in order
	// refuseFirst: the first copy of these ids is refused out-of-order
	// whatever came before it.
	refuseFirst map[string]bool
	// zombie: a primary fenced by a takeover that has not noticed yet
	// answers: P logged (at 0), every other event refused out-of-order.
	zombie bool
}

func (l *takeoverLedger) takeOver(first uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for range 5 {
		l.tree.Add(fmt.Appendf(nil, `{"id":"other:%d"}`, l.tree.Size()))
	}
	l.newer, l.next = true, first
}

// read decides the stream's messages from the cursor to its end (the new
// primary's ingest).
func (l *takeoverLedger) read(ctx context.Context) (last uint64) {
	info, err := l.stream.Info(ctx)
	if err != nil {
		l.t.Error(err)
		return 0
	}
	last = info.State.LastSeq
	for ; l.next <= last; l.next++ {
		m, err := l.stream.GetMsg(ctx, l.next)
		if err != nil {
			l.t.Error(err)
			return last
		}
		parts := [][]byte{m.Data}
		if c := m.Header.Get(wire.HeaderEvents); c != "" {
			if parts, err = wire.SplitBatch(c, m.Data); err != nil {
				l.t.Error(err)
				return last
			}
		}
		for _, p := range parts {
			var ev struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(p, &ev); err != nil {
				l.t.Error(err)
				continue
			}
			if _, ok := l.index[ev.ID]; ok {
				continue // a duplicate
			}
			if prev := l.prevOf[ev.ID]; prev != "" && l.outcome[prev] != "appended" || l.refuseFirst[ev.ID] {
				delete(l.refuseFirst, ev.ID)
				l.outcome[ev.ID] = "out-of-order"
			} else {
				l.outcome[ev.ID] = "appended"
				l.index[ev.ID] = l.tree.Add(p)
			}
			if l.prevOf[ev.ID] != "" {
				l.decidedE = append(l.decidedE, l.outcome[ev.ID])
			}
		}
	}
	return last
}

// status answers one event asked about with the copy at seq: its status,
// and its index if it has one.
func (l *takeoverLedger) status(id string, seq uint64) (string, uint64) {
	if l.zombie {
		if l.prevOf[id] == "" {
			return wire.EventLogged, 0
		}
		return wire.EventRejected, 0
	}
	if !l.newer {
		if seq == l.ackP && l.prevOf[id] == "" {
			l.told = true
			return wire.EventAppended, 0
		}
		return wire.EventUnknown, 0
	}
	if seq >= l.next {
		return wire.EventUnknown, 0
	}
	switch l.outcome[id] {
	case "appended":
		return wire.EventLogged, l.index[id]
	case "out-of-order":
		return wire.EventRejected, 0
	}
	return wire.EventUnknown, 0
}

func (l *takeoverLedger) serve(ctx context.Context, m *nats.Msg) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var decided, last uint64
	if l.newer && !l.zombie {
		last = l.read(ctx)
		decided = l.next
	} else if l.zombie {
		info, err := l.stream.Info(ctx)
		if err != nil {
			l.t.Error(err)
			return
		}
		last = info.State.LastSeq
		decided = last + 1
	} else {
		info, err := l.stream.Info(ctx)
		if err != nil {
			l.t.Error(err)
			return
		}
		last = info.State.LastSeq
		decided = l.ackP + 1 // the old primary read P, not E
	}
	var cp string
	if size := l.tree.Size(); l.newer && size > 0 {
		b, err := l.tree.Checkpoint("test.example/log", size)
		if err != nil {
			l.t.Error(err)
			return
		}
		cp = string(b)
	}
	var b []byte
	var err error
	if q, perr := wire.ParseMessageStatusRequest(m.Data); perr == nil {
		// A ledger that keeps no record of the messages it decided (the
		// new primary never decided them; the old one's records are not
		// kept here): every message is unknown, and the Client asks about
		// their events by id once the state says the ledger is past them.
		p := wire.MessageStatusReply{Status: wire.StatusOK, V: wire.MessageStatusVersion, Decided: &decided, Last: &last, Checkpoint: cp}
		for _, mq := range q.Messages {
			p.Messages = append(p.Messages, wire.MessageStatus{Seq: mq.Seq, Status: wire.MessageUnknown})
		}
		b, err = wire.MarshalMessageStatusReply(p)
	} else if q, perr := wire.ParseStatusRequest(m.Data); perr == nil {
		p := wire.StatusReply{Status: wire.StatusOK, V: wire.ReceiptStateVersion, Decided: &decided, Last: &last, Checkpoint: cp}
		for _, e := range q.Events {
			st, idx := l.status(e.ID, e.Seq)
			es := wire.EventStatus{ID: e.ID, Status: st}
			switch st {
			case wire.EventLogged, wire.EventAppended:
				es.Index = &idx
			case wire.EventRejected:
				es.Code, es.Reason = "out-of-order", "its game has no event before it"
			}
			p.Events = append(p.Events, es)
		}
		b, err = wire.MarshalStatusReply(p)
	} else if q, perr := wire.ParseReceiptsRequest(m.Data); perr == nil {
		// A batched receipt request: each event as a receipt request of
		// version 3 below, answered at once.
		p := wire.ReceiptsReply{Status: wire.StatusOK, V: wire.ReceiptBatchVersion}
		for _, e := range q.Events {
			r := wire.EventReceipt{ID: e.ID, Status: wire.StatusPending}
			st, idx := l.status(e.ID, e.Seq)
			switch {
			case e.Seq == 0 || st == wire.EventUnknown:
				r.Status = wire.EventUnknown
				p.Decided, p.Last = &decided, &last
			case st == wire.EventAppended:
				r.Index = &idx
			case st == wire.EventRejected:
				r.Status, r.Code, r.Reason = wire.StatusRejected, "out-of-order", "its game has no event before it"
			case st == wire.EventLogged:
				proof, perr := l.tree.InclusionProof(idx, l.tree.Size())
				if perr != nil {
					l.t.Error(perr)
					return
				}
				r.Status, r.Index, p.Checkpoint = wire.StatusOK, &idx, cp
				for _, h := range proof {
					r.Proof = append(r.Proof, wire.Hash(h))
				}
			}
			p.Events = append(p.Events, r)
		}
		b, err = wire.MarshalReceiptsReply(p)
	} else {
		q, qerr := wire.ParseReceiptRequest(m.Data)
		if qerr != nil {
			l.t.Errorf("a request neither status nor receipt: %s", m.Data)
			return
		}
		p := wire.ReceiptReply{ID: q.ID, Status: wire.StatusPending, V: q.V}
		st, idx := l.status(q.ID, q.Seq)
		switch {
		case q.Seq == 0 || st == wire.EventUnknown:
			p.Decided, p.Last = &decided, &last
		case st == wire.EventAppended:
			p.Index = &idx
		case st == wire.EventRejected:
			p.Status, p.Code, p.Reason = wire.StatusRejected, "out-of-order", "its game has no event before it"
		case st == wire.EventLogged:
			size := l.tree.Size()
			proof, perr := l.tree.InclusionProof(idx, size)
			if perr != nil {
				l.t.Error(perr)
				return
			}
			p.Status, p.Index, p.Checkpoint = wire.StatusOK, &idx, cp
			for _, h := range proof {
				p.Proof = append(p.Proof, wire.Hash(h))
			}
		}
		b, err = wire.MarshalReceiptReply(p)
	}
	if err != nil {
		l.t.Error(err)
		return
	}
	m.Respond(b)
}

// startTakeover starts a nats-server with a stream and a takeoverLedger
// answering emitter e1's receipt subject.
func startTakeover(t *testing.T, ctx context.Context) (*server.Server, *nats.Conn, *takeoverLedger) {
	srv := startServer(t)
	nc := dial(t, srv, "e1")
	stream := createStream(t, nc, 0)
	l := &takeoverLedger{t: t, stream: stream, outcome: map[string]string{}, index: map[string]uint64{},
		prevOf: map[string]string{"g1:1": "g1:0"}}
	lnc := dial(t, srv, "ledger")
	sub, err := lnc.Subscribe(wire.Subjects{}.Receipts("e1"), func(m *nats.Msg) { l.serve(ctx, m) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Unsubscribe() })
	return srv, nc, l
}

// takeoverEvents are the game's two events, P and E.
func takeoverEvents() (p, e sdk.Event) {
	return sdk.Event{ID: "g1:0", Data: []byte(`{"id":"g1:0"}`), OrderKey: "g1"},
		sdk.Event{ID: "g1:1", Data: []byte(`{"id":"g1:1"}`), OrderKey: "g1"}
}

// TestTakeoverOrderRefusal is docs/FAULTS.md §4's run 7: a game's event P
// was appended by a primary that was fenced before its checkpoint reached
// the bucket, and said so ("appended"); the new primary never had P, and
// refuses the game's next event E out-of-order. The Client holds E while P
// is held unlogged (a ledger's "appended" is not "logged", and a larger
// checkpoint of the new primary's tree does not make it so), finds P lost,
// publishes P and then E again, and ReceiptOf(E) returns E's receipt, not
// the refusal; nothing is refused for good. Before, the Client counted P
// logged once a checkpoint covered its old index, retried E once, and
// returned E's refusal and forgot it.
func TestTakeoverOrderRefusal(t *testing.T) {
	ctx := testContext(t)
	srv, nc, l := startTakeover(t, ctx)

	var mu sync.Mutex
	var resent []string
	var refused []*sdk.RejectedError
	c := newClient(t, nc, sdk.Config{Emitter: "e1", FollowInterval: 20 * time.Millisecond, FollowAfter: 50 * time.Millisecond,
		MaxBatchEvents: 1,
		OnResend:       func(id string) { mu.Lock(); resent = append(resent, id); mu.Unlock() },
		OnRejected:     func(r *sdk.RejectedError) { mu.Lock(); refused = append(refused, r); mu.Unlock() }, OrderSettle: 300 * time.Millisecond})
	_ = srv
	p, e := takeoverEvents()
	ackP, err := c.Publish(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.ackP = ackP.Seq
	l.mu.Unlock()
	ackE, err := c.Publish(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	// The old primary tells the follower that P is appended.
	for {
		l.mu.Lock()
		told := l.told
		l.mu.Unlock()
		if told {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the follower never asked about P")
		}
		time.Sleep(5 * time.Millisecond)
	}
	l.takeOver(ackE.Seq) // P's message is gone; the new primary reads from E's

	r, err := c.ReceiptOf(ctx, e, ackE)
	if err != nil {
		t.Fatalf("receipt of E, refused while its predecessor was lost by a takeover: %v", err)
	}
	if err := c.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Index != l.index[e.ID] || l.index[p.ID] != 5 || r.Index != 6 {
		t.Errorf("E's receipt at %d; the new primary holds P at %d and E at %d, want 5 and 6", r.Index, l.index[p.ID], l.index[e.ID])
	}
	mu.Lock()
	defer mu.Unlock()
	if len(refused) != 0 {
		t.Errorf("refused for good: %v", refused)
	}
	if !slices.Contains(resent, p.ID) || !slices.Contains(resent, e.ID) {
		t.Errorf("published again %v, want P and E", resent)
	}
	if !slices.Equal(l.decidedE, []string{"out-of-order", "appended"}) {
		t.Errorf("the new primary decided E's copies %v, want refused once, then appended", l.decidedE)
	}
	if st := c.FollowStats(); st.Rejected != 0 || st.Held != 0 || st.Logged != 2 {
		t.Errorf("follow stats %+v", st)
	}
	t.Logf("published again %v; the new primary decided E %v", resent, l.decidedE)
}

// TestTakeoverOrderRefusalNotHeld is TestTakeoverOrderRefusal for a Client
// that does not follow its events (and so holds none), asked for the
// game's receipts in order, as a backend that holds each event until its
// receipt does: Receipt(P) finds P lost and publishes it again; E's copy
// was refused before that, and Receipt(E) publishes one copy of E after
// the refusal, whose answer (appended after P) is the receipt. Before, it
// returned the refusal.
func TestTakeoverOrderRefusalNotHeld(t *testing.T) {
	ctx := testContext(t)
	_, nc, l := startTakeover(t, ctx)
	var mu sync.Mutex
	var resent []string
	c := newClient(t, nc, sdk.Config{Emitter: "e1", FollowInterval: -1, MaxBatchEvents: 1, OrderSettle: 300 * time.Millisecond,
		OnResend: func(id string) { mu.Lock(); resent = append(resent, id); mu.Unlock() }})
	p, e := takeoverEvents()
	ackP, err := c.Publish(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.ackP = ackP.Seq
	l.mu.Unlock()
	ackE, err := c.Publish(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	l.takeOver(ackE.Seq)
	// E's message is decided (refused) before P's copy is published.
	if _, err := c.ReceiptOf(ctx, p, ackP); err != nil {
		t.Fatalf("receipt of P: %v", err)
	}
	r, err := c.ReceiptOf(ctx, e, ackE)
	if err != nil {
		t.Fatalf("receipt of E, refused before its lost predecessor was published again: %v", err)
	}
	l.mu.Lock()
	if l.index[p.ID] != 5 || r.Index != 6 {
		t.Errorf("P at %d, E's receipt at %d, want 5 and 6", l.index[p.ID], r.Index)
	}
	if !slices.Equal(l.decidedE, []string{"out-of-order", "appended"}) {
		t.Errorf("the new primary decided E's copies %v, want refused once, then appended", l.decidedE)
	}
	// An event whose predecessor was never published: one copy, refused
	// the same, and Receipt returns the refusal.
	x := sdk.Event{ID: "g2:1", Data: []byte(`{"id":"g2:1"}`), OrderKey: "g2"}
	l.prevOf[x.ID] = "g2:0"
	l.mu.Unlock()
	ackX, err := c.Publish(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ReceiptOf(ctx, x, ackX)
	var rej *sdk.RejectedError
	if !errors.As(err, &rej) || rej.Code != "out-of-order" {
		t.Errorf("receipt of an event out of order: %v, want its refusal", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(resent, []string{p.ID, e.ID, x.ID}) {
		t.Errorf("published again %v, want P, E and the refused event, once each", resent)
	}
}

// TestNodeTakeoverOrderRefusal is TestTakeoverOrderRefusalNotHeld for the
// Node SDK's receipt(), asked in the game's order in a new process
// (tools/resend.mjs): P is published again because the stream lost it, E
// once after its order refusal, and both receipts come.
func TestNodeTakeoverOrderRefusal(t *testing.T) {
	node := nodeSDK(t)
	ctx := testContext(t)
	srv, nc, l := startTakeover(t, ctx)
	c := newClient(t, nc, sdk.Config{Emitter: "e1", FollowInterval: -1, MaxBatchEvents: 1})
	p, e := takeoverEvents()
	ackP, err := c.Publish(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.ackP = ackP.Seq
	l.mu.Unlock()
	ackE, err := c.Publish(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	l.takeOver(ackE.Seq)
	evs := []nodeEvent{{ID: p.ID, Data: p.Data, OrderKey: p.OrderKey, Seq: ackP.Seq}, {ID: e.ID, Data: e.Data, OrderKey: e.OrderKey, Seq: ackE.Seq}}
	raw, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "receipts.json")
	if err := os.WriteFile(in, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	// No log key: the fake's checkpoints carry a placeholder signature;
	// the receipts' inclusion proofs are checked.
	cmd := exec.Command(node, filepath.Join("js", "tools", "resend.mjs"), "--nats", srv.ClientURL(), "--emitter", "e1", "receipts", in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node tools/resend.mjs receipts: %v\n%s", err, stderr.String())
	}
	var out struct {
		Receipts []struct {
			ID    string `json:"id"`
			Index uint64 `json:"index"`
		} `json:"receipts"`
		Resent []string `json:"resent"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("node printed %s: %v", b, err)
	}
	if len(out.Receipts) != 2 || out.Receipts[0].Index != 5 || out.Receipts[1].Index != 6 {
		t.Errorf("node's receipts %+v, want P at 5 and E at 6", out.Receipts)
	}
	if !slices.Equal(out.Resent, []string{p.ID, e.ID}) {
		t.Errorf("node published again %v, want P then E, once each", out.Resent)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Equal(l.decidedE, []string{"out-of-order", "appended"}) {
		t.Errorf("the new primary decided E's copies %v, want refused once, then appended", l.decidedE)
	}
}

// TestReusedSequenceRefusal: a copy that the stream acknowledged at a
// sequence it had given before (here the stream was deleted and created
// again; a truncated block file does the same) is answered from the
// ledger's record of an earlier copy when the ledger's cursor is past it:
// E's first copy was refused out-of-order, its predecessor P is logged,
// and the Client sends E once more, which lands at a sequence given
// before and gets the old refusal again. The Client does not take it as
// final (the copy's sequence is not above the highest it had seen when it
// published it): it sends E again until a copy lands at a fresh sequence,
// which the ledger decides, and E is logged. Before, the old refusal was
// final (OnRejected) and E was forgotten.
func TestReusedSequenceRefusal(t *testing.T) {
	ctx := testContext(t)
	_, nc, l := startTakeover(t, ctx)
	l.mu.Lock()
	l.newer, l.next, l.refuseFirst = true, 1, map[string]bool{"g1:1": true}
	l.mu.Unlock()
	var mu sync.Mutex
	var resent []string
	var refused []*sdk.RejectedError
	c := newClient(t, nc, sdk.Config{Emitter: "e1", FollowInterval: 20 * time.Millisecond, FollowAfter: 300 * time.Millisecond,
		MaxBatchEvents: 1,
		OnResend:       func(id string) { mu.Lock(); resent = append(resent, id); mu.Unlock() },
		OnRejected:     func(r *sdk.RejectedError) { mu.Lock(); refused = append(refused, r); mu.Unlock() }, OrderSettle: 300 * time.Millisecond})
	p, e := takeoverEvents()
	if _, err := c.Publish(ctx, p); err != nil {
		t.Fatal(err)
	}
	ackE, err := c.Publish(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	// The ledger decides both (P appended, E refused), then the stream
	// is deleted and created again: its next message gets sequence 1.
	l.mu.Lock()
	l.read(ctx)
	cursor := l.next
	l.mu.Unlock()
	if cursor != ackE.Seq+1 {
		t.Fatalf("the ledger's cursor is %d, want %d", cursor, ackE.Seq+1)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(ctx, "EVENTS"); err != nil {
		t.Fatal(err)
	}
	createStream(t, nc, 0)
	if err := c.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(refused) != 0 {
		t.Errorf("refused for good: %v", refused)
	}
	if l.outcome[e.ID] != "appended" || !slices.Equal(l.decidedE, []string{"out-of-order", "appended"}) {
		t.Errorf("the ledger decided E %v, want refused, then appended", l.decidedE)
	}
	if len(resent) < 2 || slices.ContainsFunc(resent, func(id string) bool { return id != e.ID }) {
		t.Errorf("published again %v, want E at least twice (once after its refusal, again after the stale answer), nothing else", resent)
	}
	t.Logf("published again %v; the ledger's cursor was %d", resent, cursor)
}

// TestZombieOrderRefusal: a primary fenced by a takeover that has not yet
// noticed (cut off past its lease, then back) answers from its own state:
// it knows the game's first event P (logged) but not what the new primary
// logged since, and refuses E out-of-order, its first copy and the copy
// the Client sends after the refusal. It stops, and the new primary, which
// never saw those copies (the fenced one took them from the shared
// consumer), has no record of E with its cursor past the copy: the Client
// finds E lost, sends it again, and it is logged. The refusal was not
// taken as final while it had not stood for Config.OrderSettle
// (docs/FAULTS.md §4, run 11: before, the second refusal was final and
// the backend was told so, while a later copy was logged).
func TestZombieOrderRefusal(t *testing.T) {
	ctx := testContext(t)
	_, nc, l := startTakeover(t, ctx)
	p, e := takeoverEvents()
	l.mu.Lock()
	l.newer, l.zombie = true, true
	l.outcome[p.ID], l.index[p.ID] = "appended", l.tree.Add(p.Data)
	l.mu.Unlock()
	var mu sync.Mutex
	var resent []string
	var refused []*sdk.RejectedError
	c := newClient(t, nc, sdk.Config{Emitter: "e1", FollowInterval: 20 * time.Millisecond, FollowAfter: 50 * time.Millisecond,
		MaxBatchEvents: 1, OrderSettle: time.Second,
		OnResend:   func(id string) { mu.Lock(); resent = append(resent, id); mu.Unlock() },
		OnRejected: func(r *sdk.RejectedError) { mu.Lock(); refused = append(refused, r); mu.Unlock() }})
	if _, err := c.Publish(ctx, p); err != nil {
		t.Fatal(err)
	}
	ackE, err := c.Publish(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		r   sdk.Receipt
		err error
	}
	got := make(chan result, 1)
	go func() {
		r, err := c.ReceiptOf(ctx, e, ackE)
		got <- result{r, err}
	}()
	// The zombie refuses E's first copy and the copy sent after it.
	for {
		mu.Lock()
		n := len(resent)
		mu.Unlock()
		if n >= 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("E was not sent again after its refusal")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // the copy refused too, for a while
	info, err := l.stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	l.zombie, l.next = false, info.State.LastSeq+1 // the zombie took every copy so far
	l.mu.Unlock()
	res := <-got
	if res.err != nil {
		t.Fatalf("receipt of E, refused by a fenced primary: %v", res.err)
	}
	if err := c.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(refused) != 0 {
		t.Errorf("refused for good: %v", refused)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.outcome[e.ID] != "appended" || res.r.Index != l.index[e.ID] {
		t.Errorf("E %s at %d, its receipt at %d", l.outcome[e.ID], l.index[e.ID], res.r.Index)
	}
	t.Logf("published again %v", resent)
}
