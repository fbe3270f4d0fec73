package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/wire"
)

// Batched receipts (wire.ReceiptBatchVersion, docs/NATS.md §5): an emitter
// asks for the receipts of every event it waits on in one request, and the
// ingest answers them in one reply, with one checkpoint note. Each event is
// answered as a receipt request of wire.ReceiptStateVersion would be, but
// the request is held only until one of its events is answerable (logged
// under the latest signed checkpoint, rejected, or without a record the
// ingest will not wait for: a query without a sequence, or a message the
// stream lost), or until its wait ends; the events not answerable then are
// answered "pending", and the emitter asks again for them together with
// the events it came to wait on meanwhile. At a human pace an emitter's
// receipts of one checkpoint interval thus cost one request, one reply and
// one checkpoint note between them instead of one each
// (docs/BENCHMARKS.md, issue 31).

// receipts answers a batched receipt request that arrived at arrived.
func (in *Ingester) receipts(ctx context.Context, emitter string, q wire.ReceiptsRequest, arrived time.Time) wire.ReceiptsReply {
	if in.cfg.Locator == nil || in.cfg.Checkpoints == nil {
		return receiptsError("unavailable", "this ledger serves no receipts")
	}
	wctx, cancel := context.WithTimeout(ctx, min(time.Duration(q.WaitMillis)*time.Millisecond, in.cfg.ReceiptMaxWait))
	defer cancel()

	// Register before looking up, so a decision made in between is seen:
	// one channel for the whole request, large enough for one outcome of
	// each of its events.
	ch := make(chan ledger.Outcome, len(q.Events))
	for _, e := range q.Events {
		key := waiterKey{emitter, e.ID}
		in.waiters.addChan(key, ch)
		defer in.waiters.remove(key, ch)
	}
	n := len(q.Events)
	outs, errs := make([]ledger.Outcome, n), make([]error, n)
	d, moved := in.decidedNow()
	in.locateAll(ctx, emitter, q.Events, d, outs, errs, nil)
	var (
		cp   []byte
		size uint64
	)
	for {
		// Outcomes announced since: a batch that decides an event announces
		// it before it moves the cursor, so take it rather than look the
		// event up again.
		in.takeOutcomes(ch, q.Events, outs, errs)
		var err error
		if cp, size, err = in.latestCheckpoint(ctx); err != nil {
			return receiptsError("unavailable", err.Error())
		}
		answerable, waitIndex, waitMove := false, uint64(math.MaxUint64), false
		for i, e := range q.Events {
			switch {
			case errors.Is(errs[i], ledger.ErrNotFound):
				if e.Seq == 0 || e.Seq < d {
					answerable = true // unknown: no message named, or decided past it
				} else if st, ok := in.polledState(arrived); ok && st.Lost(e.Seq) {
					answerable = true // the stream ends below it, read to its end
				} else {
					waitMove = true
				}
			case errs[i] != nil:
				return receiptsError("unavailable", truncate(fmt.Sprintf("looking up event %s: %s", e.ID, errs[i]), wire.MaxReasonLength))
			case outs[i].Result == ledger.Appended || outs[i].Result == ledger.Duplicate:
				if outs[i].Index < size {
					answerable = true
				} else {
					waitIndex = min(waitIndex, outs[i].Index)
				}
			default:
				answerable = true // rejected, or an outcome answered as an error
			}
		}
		if answerable || wctx.Err() != nil {
			break
		}
		// Wait for an outcome, the cursor to move (for the events whose
		// message is not decided yet) or a checkpoint covering the first
		// durable event, whichever comes first.
		var next <-chan struct{}
		if waitMove {
			next = moved
		}
		covered := make(chan struct{})
		cctx, ccancel := context.WithCancel(wctx)
		if waitIndex != math.MaxUint64 {
			go func() {
				if _, err := in.cfg.Checkpoints.WaitCovering(cctx, waitIndex); err == nil {
					close(covered)
				}
			}()
		}
		select {
		case o := <-ch:
			in.takeOutcome(o, q.Events, outs, errs)
		case <-next:
			// The outcomes of a batch that decided some are announced
			// before the cursor moves: take them rather than look the
			// events up in the ledger again.
			in.takeOutcomes(ch, q.Events, outs, errs)
			var changed []int
			d, moved = in.decidedNow()
			for i := range errs {
				if errors.Is(errs[i], ledger.ErrNotFound) {
					changed = append(changed, i)
				}
			}
			in.locateAll(ctx, emitter, q.Events, d, outs, errs, changed)
		case <-covered:
		case <-wctx.Done():
		}
		ccancel()
	}

	// The events without a record are answered with the stream's state,
	// read before they are looked up once more (a record made meanwhile is
	// the answer), as a receipt request's pending reply (Ingester.pending).
	timedOut := wctx.Err() != nil
	var unknown []int
	for i, e := range q.Events {
		if errors.Is(errs[i], ledger.ErrNotFound) && (timedOut || e.Seq == 0 || e.Seq < d) {
			unknown = append(unknown, i)
		} else if errors.Is(errs[i], ledger.ErrNotFound) {
			if st, ok := in.polledState(arrived); ok && st.Lost(e.Seq) {
				unknown = append(unknown, i)
			}
		}
	}
	p := wire.ReceiptsReply{Status: wire.StatusOK, V: wire.ReceiptBatchVersion, Events: make([]wire.EventReceipt, n)}
	isUnknown := make([]bool, n)
	if len(unknown) > 0 {
		if st, ok := in.streamState(ctx, arrived); ok {
			p.Decided, p.Last = &st.Decided, &st.Last
			in.locateAll(ctx, emitter, q.Events, st.Decided, outs, errs, unknown)
		}
		for _, i := range unknown {
			isUnknown[i] = errors.Is(errs[i], ledger.ErrNotFound)
		}
	}
	anyUnknown := false
	for i, e := range q.Events {
		r := &p.Events[i]
		r.ID = e.ID
		out, err := outs[i], errs[i]
		switch {
		case isUnknown[i]:
			r.Status, anyUnknown = wire.EventUnknown, true
		case errors.Is(err, ledger.ErrNotFound):
			r.Status = wire.StatusPending
		case err != nil:
			return receiptsError("unavailable", truncate(fmt.Sprintf("looking up event %s: %s", e.ID, err), wire.MaxReasonLength))
		case out.Result == ledger.Rejected:
			code, reason := refusal(out)
			if wire.CheckCode(code) != nil {
				code = "rejected"
			}
			r.Status, r.Code, r.Reason = wire.StatusRejected, code, truncate(reason, wire.MaxStatusReason)
		case out.Result == ledger.Appended || out.Result == ledger.Duplicate:
			index := out.Index
			r.Index, r.Status = &index, wire.StatusPending
			if index >= size {
				break
			}
			proof, err := in.cfg.Checkpoints.InclusionProof(ctx, index, size)
			if err != nil {
				return receiptsError("unavailable", truncate(fmt.Sprintf("the inclusion proof of leaf %d: %s", index, err), wire.MaxReasonLength))
			}
			r.Status, p.Checkpoint = wire.StatusOK, string(cp)
			if len(proof) > 0 {
				r.Proof = make([]wire.Hash, len(proof))
				for k, h := range proof {
					r.Proof[k] = wire.Hash(h)
				}
			}
		default:
			return receiptsError("unavailable", fmt.Sprintf("the ledger returned outcome %v for event %s", out.Result, e.ID))
		}
	}
	if !anyUnknown {
		p.Decided, p.Last = nil, nil
	}
	return p
}

// takeOutcomes takes the outcomes waiting in ch (takeOutcome).
func (in *Ingester) takeOutcomes(ch chan ledger.Outcome, qs []wire.StatusQuery, outs []ledger.Outcome, errs []error) {
	for {
		select {
		case o := <-ch:
			in.takeOutcome(o, qs, outs, errs)
		default:
			return
		}
	}
}

// takeOutcome records an announced outcome as the answer for the events of
// its id that have none yet.
func (in *Ingester) takeOutcome(o ledger.Outcome, qs []wire.StatusQuery, outs []ledger.Outcome, errs []error) {
	id := eventID(o)
	for i, e := range qs {
		if e.ID == id && errors.Is(errs[i], ledger.ErrNotFound) {
			outs[i], errs[i] = o, nil
		}
	}
}

// receiptsError is a batched receipt reply of status error.
func receiptsError(code, reason string) wire.ReceiptsReply {
	return wire.ReceiptsReply{Status: wire.StatusError, Code: code, Reason: truncate(reason, wire.MaxReasonLength), V: wire.ReceiptBatchVersion}
}

// heldReceipts is the answer of a held ingest to a batched receipt
// request, counted.
func (in *Ingester) heldReceipts(err error) wire.ReceiptsReply {
	in.m.heldBack.WithLabelValues("receipt").Inc()
	return receiptsError("unavailable", heldReason(err))
}

// replyReceipts sends a batched receipt reply, or, if Hold has closed since
// the request came, the reply that says so instead.
func (in *Ingester) replyReceipts(m *nats.Msg, p wire.ReceiptsReply) {
	if err := in.hold(); err != nil {
		p = in.heldReceipts(err)
	}
	in.sendReceipts(m, p)
}

func (in *Ingester) sendReceipts(m *nats.Msg, p wire.ReceiptsReply) {
	in.m.receipts.WithLabelValues("batch-" + p.Status).Inc()
	b, err := wire.MarshalReceiptsReply(p)
	in.respond(m, "batched receipt", b, err)
}

// isBatchRequest reports whether b, a request no parser accepted, says it
// is of wire.ReceiptBatchVersion: it is then refused with a batched reply,
// which the SDK that sent it reads.
func isBatchRequest(b []byte) bool {
	var v struct {
		V int `json:"v"`
	}
	return json.Unmarshal(b, &v) == nil && v.V == wire.ReceiptBatchVersion
}
