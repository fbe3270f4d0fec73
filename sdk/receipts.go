package sdk

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zarlog/zarlog/wire"
)

// Batched receipt requests (wire.ReceiptBatchVersion, docs/NATS.md §5
// "Batched receipts"): the Client's ReceiptOf calls do not each send a
// request; they queue what they ask (an event id and its copy's stream
// sequence), and one request at a time carries everything queued, up to
// wire.MaxReceiptBatch events. The ledger holds it until one of its events
// is answerable, and answers with one checkpoint note and each answerable
// event's index and inclusion proof; an event it answers "pending" is
// asked again in the next request, with the events queued meanwhile, until
// its own wait (receiptWait) ends. What each ReceiptOf call does with its
// answer is unchanged: the receipt is checked exactly as one asked for
// alone (Client.check: its leaf, its inclusion proof, the log's signature
// on the checkpoint), and a refusal, a lost event, a "busy" are handled as
// before. At a human pace this makes an emitter's receipts of one
// checkpoint interval one request and one reply instead of one each
// (docs/BENCHMARKS.md, issue 31).

// A receiptBatcher queues the Client's receipt asks and sends them.
type receiptBatcher struct {
	mu      sync.Mutex
	queue   []*receiptAsk
	sending bool // a goroutine is sending the queue (sendReceipts)
}

// A receiptAsk is one ReceiptOf request waiting in a batch.
type receiptAsk struct {
	q        wire.StatusQuery
	deadline time.Time      // when its wait ends: then "pending" is its answer
	done     chan askAnswer // capacity 1
	gone     atomic.Bool    // the asker stopped waiting: dropped
}

type askAnswer struct {
	rep wire.ReceiptReply
	err error
}

// askBatched asks for the receipt of the event id, whose latest copy's
// message is at seq (0: unknown), in a batched request, waiting at most
// wait for an answer other than pending (and receiptSlack more for the
// reply). Its reply is the answer about this event as a wire.ReceiptReply
// of version wire.ReceiptBatchVersion (a ledger that predates it: that
// ledger's reply, of its version).
func (c *Client) askBatched(ctx context.Context, id string, seq uint64, wait time.Duration) (wire.ReceiptReply, error) {
	a := &receiptAsk{q: wire.StatusQuery{ID: id, Seq: seq}, deadline: time.Now().Add(wait), done: make(chan askAnswer, 1)}
	b := &c.batcher
	b.mu.Lock()
	b.queue = append(b.queue, a)
	start := !b.sending
	b.sending = true
	b.mu.Unlock()
	if start {
		go c.sendReceipts()
	}
	t := time.NewTimer(wait + receiptSlack)
	defer t.Stop()
	select {
	case r := <-a.done:
		return r.rep, r.err
	case <-ctx.Done():
		a.gone.Store(true)
		return wire.ReceiptReply{}, ctx.Err()
	case <-t.C:
		a.gone.Store(true)
		return wire.ReceiptReply{}, fmt.Errorf("no batched receipt reply in %v: %w", wait+receiptSlack, context.DeadlineExceeded)
	}
}

// sendReceipts sends the queued asks, one batched request at a time, until
// the queue is empty.
func (c *Client) sendReceipts() {
	b := &c.batcher
	backoff := c.cfg.RetryMin
	for {
		b.mu.Lock()
		var batch []*receiptAsk
		rest := b.queue[:0]
		for _, a := range b.queue {
			switch {
			case a.gone.Load():
			case len(batch) < wire.MaxReceiptBatch:
				batch = append(batch, a)
			default:
				rest = append(rest, a)
			}
		}
		clear(b.queue[len(rest):])
		b.queue = rest
		if len(batch) == 0 {
			b.sending = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		start := time.Now()
		again, wait := c.sendBatch(batch)
		if len(again) > 0 {
			b.mu.Lock()
			b.queue = append(b.queue, again...)
			b.mu.Unlock()
		}
		if len(again) == len(batch) && time.Since(start) < wait/2 {
			// Nothing answered, and not held: a ledger should hold the
			// request until an event is answerable. Pause before asking
			// again, as a call does after a pending reply it was not held
			// for.
			time.Sleep(backoff)
			backoff = min(2*backoff, c.cfg.RetryMax)
		} else {
			backoff = c.cfg.RetryMin
		}
	}
}

// sendBatch sends one batched request for batch and answers its asks; it
// returns those answered "pending" whose wait has not ended, to be asked
// again, and the wait it asked the ledger for.
func (c *Client) sendBatch(batch []*receiptAsk) (again []*receiptAsk, wait time.Duration) {
	now := time.Now()
	q := wire.ReceiptsRequest{V: wire.ReceiptBatchVersion, Events: make([]wire.StatusQuery, len(batch))}
	wait = time.Duration(1<<63 - 1)
	for i, a := range batch {
		q.Events[i] = a.q
		wait = min(wait, a.deadline.Sub(now))
	}
	wait = max(wait, 0)
	q.WaitMillis = wait.Milliseconds()
	answerAll := func(rep wire.ReceiptReply, err error) ([]*receiptAsk, time.Duration) {
		for _, a := range batch {
			rep.ID = a.q.ID
			a.done <- askAnswer{rep, err}
		}
		return nil, wait
	}
	req, err := wire.MarshalReceiptsRequest(q)
	if err != nil {
		return answerAll(wire.ReceiptReply{}, fmt.Errorf("sdk: %w", err))
	}
	rctx, cancel := context.WithTimeout(context.Background(), wait+receiptSlack)
	defer cancel()
	// A reconnect while the request is held means the server that held it
	// may be gone: ask again at once rather than after the wait.
	reconn := c.reconnects()
	go func() {
		select {
		case <-reconn:
			cancel()
		case <-rctx.Done():
		}
	}()
	msg, err := c.nc.RequestWithContext(rctx, c.cfg.Subjects.Receipts(c.cfg.Emitter), req)
	if err != nil {
		if isClosed(reconn) {
			return batch, 0
		}
		return answerAll(wire.ReceiptReply{}, err)
	}
	p, err := wire.ParseReceiptsReply(msg.Data)
	if err != nil {
		if old, oerr := wire.ParseReceiptReply(msg.Data); oerr == nil {
			// A ledger that predates batched receipts (its refusal of the
			// request, "bad-request"), or refuses it for now.
			return answerAll(old, nil)
		}
		return answerAll(wire.ReceiptReply{}, err)
	}
	if p.Status == wire.StatusError {
		return answerAll(wire.ReceiptReply{Status: wire.StatusError, Code: p.Code, Reason: p.Reason, V: wire.ReceiptBatchVersion}, nil)
	}
	if len(p.Events) != len(batch) {
		return answerAll(wire.ReceiptReply{}, fmt.Errorf("%w: a batched receipt reply of %d events to a request of %d", wire.ErrMessage, len(p.Events), len(batch)))
	}
	for i, a := range batch {
		if p.Events[i].ID != a.q.ID {
			return answerAll(wire.ReceiptReply{}, fmt.Errorf("%w: a batched receipt reply's event %d is %s, not %s", wire.ErrMessage, i, p.Events[i].ID, a.q.ID))
		}
	}
	now = time.Now()
	for i, a := range batch {
		e := p.Events[i]
		rep := wire.ReceiptReply{ID: e.ID, Index: e.Index, V: wire.ReceiptBatchVersion}
		switch e.Status {
		case wire.StatusOK:
			rep.Status, rep.Checkpoint, rep.Proof = wire.StatusOK, p.Checkpoint, e.Proof
		case wire.StatusRejected:
			rep.Status, rep.Code, rep.Reason = wire.StatusRejected, e.Code, e.Reason
		case wire.EventUnknown:
			// No record, and the ledger will not wait for one: its state
			// says whether the stream lost the event (ReceiptOf).
			rep.Status, rep.Decided, rep.Last = wire.StatusPending, p.Decided, p.Last
		default:
			if now.Before(a.deadline) && !a.gone.Load() {
				again = append(again, a)
				continue
			}
			rep.Status = wire.StatusPending
		}
		a.done <- askAnswer{rep, nil}
	}
	return again, wait
}
