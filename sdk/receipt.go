package sdk

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/wire"
)

// A Receipt is the ledger's promise about an event: it is durable in the log
// at Index, and Checkpoint, a signed checkpoint of a tree of more than Index
// leaves, commits to it. This is the acknowledgement a backend can rely on
// (docs/NATS.md). Checkpoint is the signed note verbatim; verify it with the
// log's verifier key before showing it as proof.
type Receipt struct {
	EventID    string
	Index      uint64
	Checkpoint []byte
}

// A RejectedError says the ledger refused the event, and why.
type RejectedError struct {
	EventID string
	Code    string // machine-readable, e.g. "bad-signature"
	Reason  string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("event %s rejected by the ledger: %s: %s", e.EventID, e.Code, e.Reason)
}

// ErrReceipt wraps a receipt request the ledger refused to serve (a bad
// request); temporary refusals ("busy", "unavailable") are retried.
var ErrReceipt = errors.New("receipt request refused")

// receiptWait is how long one request asks the ledger to hold it.
const receiptWait = 20 * time.Second

// Receipt waits until the event with id is durable and covered by a signed
// checkpoint, and returns its receipt. It asks again as long as the answer
// is "pending" or the ledger does not answer, until ctx ends. It fails with
// a *RejectedError if the ledger rejected the event.
func (c *Client) Receipt(ctx context.Context, id string) (Receipt, error) {
	return c.ReceiptOf(ctx, id, Ack{})
}

// ReceiptOf is Receipt for the copy of the event that ack acknowledged:
// the ledger answers from its decision of that message (ack.Seq), never
// from an earlier copy of the same id, so an event refused once and sent
// again after its game allowed it gets its new answer, not the old
// refusal. A zero Ack is Receipt.
func (c *Client) ReceiptOf(ctx context.Context, id string, ack Ack) (Receipt, error) {
	if err := wire.CheckEventID(id); err != nil {
		return Receipt{}, fmt.Errorf("sdk: %w: %w", ErrInvalidEvent, err)
	}
	backoff := c.cfg.RetryMin
	for {
		wait := receiptWait
		if d, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(d))
		}
		if wait <= 0 {
			<-ctx.Done() // the deadline has passed; ctx ends at once
			return Receipt{}, ctx.Err()
		}
		req, err := wire.MarshalReceiptRequest(wire.ReceiptRequest{ID: id, WaitMillis: wait.Milliseconds(), Seq: ack.Seq})
		if err != nil {
			return Receipt{}, fmt.Errorf("sdk: %w", err)
		}
		start := time.Now()
		rctx, cancel := context.WithTimeout(ctx, wait+5*time.Second)
		// A reconnect while the request is held means the server that held
		// it may be gone: ask again at once rather than after the wait.
		reconn := c.reconnects()
		go func() {
			select {
			case <-reconn:
				cancel()
			case <-rctx.Done():
			}
		}()
		msg, err := c.nc.RequestWithContext(rctx, c.cfg.Subjects.Receipts(c.cfg.Emitter), req)
		reconnected := rctx.Err() != nil && ctx.Err() == nil && isClosed(reconn)
		cancel()
		if reconnected {
			backoff = c.cfg.RetryMin
			continue
		}
		var rep wire.ReceiptReply
		if err == nil {
			rep, err = wire.ParseReceiptReply(msg.Data)
		}
		switch {
		case ctx.Err() != nil:
			return Receipt{}, ctx.Err()
		case errors.Is(err, nats.ErrConnectionClosed):
			return Receipt{}, fmt.Errorf("sdk: receipt for %s: %w", id, err)
		case err != nil:
			// No ledger listening, a timeout, or a garbled reply: ask again.
		case rep.Status == wire.StatusOK:
			return Receipt{EventID: id, Index: *rep.Index, Checkpoint: []byte(rep.Checkpoint)}, nil
		case rep.Status == wire.StatusRejected:
			return Receipt{}, &RejectedError{EventID: id, Code: rep.Code, Reason: rep.Reason}
		case rep.Status == wire.StatusError && rep.Code == "bad-request":
			return Receipt{}, fmt.Errorf("sdk: receipt for %s: %w: %s", id, ErrReceipt, rep.Reason)
		case rep.Status == wire.StatusPending && time.Since(start) >= wait/2:
			backoff = c.cfg.RetryMin // the ledger held the request: ask again at once
			continue
		}
		if c.cfg.OnRetry != nil {
			if err == nil {
				err = fmt.Errorf("status %q, code %q: %s", rep.Status, rep.Code, rep.Reason)
			}
			c.cfg.OnRetry(fmt.Errorf("receipt for %s: %w", id, err))
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Receipt{}, ctx.Err()
		}
		backoff = min(2*backoff, c.cfg.RetryMax)
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Rejections calls handle with every rejection the ledger announces for
// this emitter's events, until the subscription is drained or unsubscribed.
// Announcements are best effort (not stored); a Receipt request reports a
// rejection durably.
func (c *Client) Rejections(handle func(wire.Rejection)) (*nats.Subscription, error) {
	sub, err := c.nc.Subscribe(c.cfg.Subjects.Rejected(c.cfg.Emitter), func(m *nats.Msg) {
		if r, err := wire.ParseRejection(m.Data); err == nil {
			handle(r)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("sdk: subscribing to rejections: %w", err)
	}
	return sub, nil
}

// CheckReceipt checks a receipt as a player's app does before it trusts
// that an event was logged: the checkpoint must be a checkpoint note signed
// by logKey (the log's verifier key; its origin is the key's name), of a tree
// with more than r.Index leaves. It returns the checkpoint. That the leaf at
// r.Index is the event is shown by its inclusion proof in that tree, which
// the log's tiles serve (merkle.InclusionProof, merkle.CheckInclusion).
func CheckReceipt(r Receipt, logKey note.Verifier) (merkle.Checkpoint, error) {
	c, err := merkle.Open(r.Checkpoint, logKey)
	if err != nil {
		return merkle.Checkpoint{}, fmt.Errorf("sdk: receipt of %s: %w", r.EventID, err)
	}
	if c.Size <= r.Index {
		return merkle.Checkpoint{}, fmt.Errorf("sdk: receipt of %s: checkpoint of size %d does not cover index %d", r.EventID, c.Size, r.Index)
	}
	return c, nil
}
