package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/wire"
)

// The receipt protocol (docs/NATS.md): an emitter sends a
// wire.ReceiptRequest to wire.Subjects.Receipts(emitter) with a reply
// subject; the ingest answers with one wire.ReceiptReply. It looks the
// emitter's event up in the ledger (Locator); if the ledger has no record
// yet, it waits (up to the request's wait, capped by Config.ReceiptMaxWait)
// for the ingest to decide the event; then it waits for a signed checkpoint
// covering the event's index (CheckpointWaiter), and for a request of
// version wire.ReceiptProofVersion adds the event's inclusion proof in that
// checkpoint's tree: with the event's bytes, which the emitter holds, the
// reply is a C2SP tlog-proof of the event. Whatever is not there in time is
// answered "pending", and the emitter asks again.
//
// A request is served only if its reply subject is in the requesting
// emitter's own inbox ("_INBOX.<emitter>.", the prefix the SDK uses and the
// permissions of docs/NATS.md §7 let it read): the ledger publishes the
// reply with its own rights, so a request whose reply subject named another
// emitter's events subject, say, would otherwise make the ledger publish
// there for the requester. Such requests are dropped unanswered, counted
// (status "refused") and logged. Rejections are looked up in the emitter's
// own namespace: another emitter's junk under the same id never answers.

const receiptQueue = "zarlog-receipts"

func (in *Ingester) serveReceipts(ctx context.Context) (*nats.Subscription, error) {
	sub, err := in.nc.QueueSubscribe(in.cfg.Subjects.ReceiptsWildcard(), receiptQueue, func(m *nats.Msg) {
		if m.Reply == "" {
			return
		}
		emitter, err := in.cfg.Subjects.EmitterOf("receipts", m.Subject)
		if err == nil {
			err = wire.CheckEmitter(emitter)
		}
		if err == nil && !strings.HasPrefix(m.Reply, wire.InboxPrefix(emitter)+".") {
			err = fmt.Errorf("reply subject %q is not in emitter %s's inbox %s.>", truncate(m.Reply, 128), emitter, wire.InboxPrefix(emitter))
		}
		if err != nil {
			in.m.receipts.WithLabelValues("refused").Inc()
			in.refusedLog.log(in.log, "receipt request refused and not answered", "subject", truncate(m.Subject, 128), "err", err)
			return
		}
		if limit := in.held.take(emitter); limit != "" {
			reason := fmt.Sprintf("emitter %s has %d receipt requests held, its limit (%s %d); ask again once they are answered",
				emitter, in.cfg.MaxReceiptRequestsPerEmitter, LimitReceiptRequests, in.cfg.MaxReceiptRequestsPerEmitter)
			if limit == LimitReceiptRequestsTotal {
				reason = fmt.Sprintf("%d receipt requests are held for all emitters, the service's limit (%s %d); ask again once they are answered",
					in.cfg.MaxReceiptRequests, LimitReceiptRequestsTotal, in.cfg.MaxReceiptRequests)
			}
			in.m.limitRefusals.WithLabelValues(emitter, limit).Inc()
			in.busyLog.log(in.log, "receipt request over a limit, answered busy", "emitter", emitter, "limit", limit, "reason", reason)
			in.reply(m, wire.ReceiptReply{Status: wire.StatusError, Code: "busy", Reason: truncate(reason, wire.MaxReasonLength)})
			return
		}
		in.m.receiptsHeld.WithLabelValues(emitter).Inc()
		go func() {
			defer func() {
				in.held.release(emitter)
				in.m.receiptsHeld.WithLabelValues(emitter).Dec()
			}()
			in.reply(m, in.receipt(ctx, emitter, m.Data))
		}()
	})
	if err != nil {
		return nil, fmt.Errorf("subscribing to receipt requests on %s: %w", in.cfg.Subjects.ReceiptsWildcard(), err)
	}
	return sub, nil
}

func (in *Ingester) reply(m *nats.Msg, p wire.ReceiptReply) {
	in.m.receipts.WithLabelValues(p.Status).Inc()
	b, err := wire.MarshalReceiptReply(p)
	if err != nil {
		in.log.Error("encoding a receipt reply", "id", p.ID, "err", err)
		return
	}
	if err := m.Respond(b); err != nil {
		in.log.Warn("sending a receipt reply", "id", p.ID, "err", err)
	}
}

// receipt answers one receipt request.
func (in *Ingester) receipt(ctx context.Context, emitter string, data []byte) wire.ReceiptReply {
	q, err := wire.ParseReceiptRequest(data)
	if err != nil {
		return wire.ReceiptReply{Status: wire.StatusError, Code: "bad-request", Reason: truncate(err.Error(), wire.MaxReasonLength)}
	}
	p := in.receiptOf(ctx, emitter, q)
	p.V = q.V
	return p
}

// receiptOf answers a parsed receipt request, but for its version.
func (in *Ingester) receiptOf(ctx context.Context, emitter string, q wire.ReceiptRequest) wire.ReceiptReply {
	if in.cfg.Locator == nil || in.cfg.Checkpoints == nil {
		return wire.ReceiptReply{ID: q.ID, Status: wire.StatusError, Code: "unavailable", Reason: "this ledger serves no receipts"}
	}
	wctx, cancel := context.WithTimeout(ctx, min(time.Duration(q.WaitMillis)*time.Millisecond, in.cfg.ReceiptMaxWait))
	defer cancel()

	// Register before looking up, so a decision made in between is seen.
	key := waiterKey{emitter, q.ID}
	ch := in.waiters.add(key)
	defer in.waiters.remove(key, ch)
	var out ledger.Outcome
	var err error
	if q.Seq > 0 && q.Seq >= in.decided.Load() {
		// The message that carried this copy is not decided yet: what the
		// ledger holds for the id (an earlier refusal, say) is not the
		// answer. Wait for the decision.
		err = ledger.ErrNotFound
	} else {
		out, err = in.cfg.Locator.Locate(ctx, emitter, q.ID)
	}
	if errors.Is(err, ledger.ErrNotFound) {
		select {
		case out = <-ch:
			err = nil
		case <-wctx.Done():
			return wire.ReceiptReply{ID: q.ID, Status: wire.StatusPending}
		}
	}
	if err != nil {
		return wire.ReceiptReply{ID: q.ID, Status: wire.StatusError, Code: "unavailable", Reason: truncate(err.Error(), wire.MaxReasonLength)}
	}
	switch out.Result {
	case ledger.Rejected:
		code, reason := refusal(out)
		if wire.CheckCode(code) != nil {
			code = "rejected"
		}
		return wire.ReceiptReply{ID: q.ID, Status: wire.StatusRejected, Code: code, Reason: truncate(reason, wire.MaxReasonLength)}
	case ledger.Appended, ledger.Duplicate:
		index := out.Index
		cp, err := in.cfg.Checkpoints.WaitCovering(wctx, index)
		if err != nil {
			return wire.ReceiptReply{ID: q.ID, Status: wire.StatusPending, Index: &index}
		}
		ok := wire.ReceiptReply{ID: q.ID, Status: wire.StatusOK, Index: &index, Checkpoint: string(cp)}
		if q.V < wire.ReceiptProofVersion {
			return ok
		}
		c, err := merkle.ParseSignedCheckpoint(cp)
		if err == nil {
			var proof []merkle.Hash
			if proof, err = in.cfg.Checkpoints.InclusionProof(ctx, index, c.Size); err == nil {
				for _, h := range proof {
					ok.Proof = append(ok.Proof, wire.Hash(h))
				}
				return ok
			}
		}
		return wire.ReceiptReply{ID: q.ID, Status: wire.StatusError, Code: "unavailable",
			Reason: truncate(fmt.Sprintf("the inclusion proof of leaf %d: ", index)+err.Error(), wire.MaxReasonLength)}
	}
	return wire.ReceiptReply{ID: q.ID, Status: wire.StatusError, Code: "unavailable", Reason: fmt.Sprintf("ledger returned outcome %v", out.Result)}
}

// The limits an emitter can meet, as named in refusals and in the limit
// label of zarlog_ingest_limit_refusals_total (and the flags of `zarlog
// serve` that set them).
const (
	LimitReceiptRequests      = "receipt-requests-per-emitter"
	LimitReceiptRequestsTotal = "receipt-requests"
)

// A budget counts what each emitter holds of one resource, against a limit
// per emitter and one for all of them together.
type budget struct {
	mu         sync.Mutex
	by         map[string]int
	sum        int
	max, total int
}

// take takes one unit for emitter, or returns the limit it is at.
func (b *budget) take(emitter string) (limit string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.by[emitter] >= b.max:
		return LimitReceiptRequests
	case b.sum >= b.total:
		return LimitReceiptRequestsTotal
	}
	b.by[emitter]++
	b.sum++
	return ""
}

func (b *budget) release(emitter string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by[emitter]--; b.by[emitter] <= 0 {
		delete(b.by, emitter)
	}
	b.sum--
}

// waiters are receipt requests waiting for the ingest to decide an event,
// by the emitter that asked and the id: an outcome wakes only the waiters of
// the emitter whose subject carried the event.
type waiters struct {
	mu sync.Mutex
	m  map[waiterKey][]chan ledger.Outcome
}

type waiterKey struct{ emitter, id string }

func (w *waiters) add(id waiterKey) chan ledger.Outcome {
	ch := make(chan ledger.Outcome, 1)
	w.mu.Lock()
	w.m[id] = append(w.m[id], ch)
	w.mu.Unlock()
	return ch
}

func (w *waiters) remove(id waiterKey, ch chan ledger.Outcome) {
	w.mu.Lock()
	defer w.mu.Unlock()
	list := w.m[id]
	for i, c := range list {
		if c == ch {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(w.m, id)
	} else {
		w.m[id] = list
	}
}

func (w *waiters) notify(emitter, id string, o ledger.Outcome) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range w.m[waiterKey{emitter, id}] {
		select {
		case ch <- o:
		default:
		}
	}
}

// A rateLog logs at most one line per interval (a minute) and counts the
// lines it held back, so that a flood of bad requests cannot flood the log.
type rateLog struct {
	mu      sync.Mutex
	last    time.Time
	skipped int
}

const rateLogEvery = time.Minute

func (r *rateLog) log(l *slog.Logger, msg string, args ...any) {
	r.mu.Lock()
	now := time.Now()
	if !r.last.IsZero() && now.Sub(r.last) < rateLogEvery {
		r.skipped++
		r.mu.Unlock()
		return
	}
	skipped := r.skipped
	r.last, r.skipped = now, 0
	r.mu.Unlock()
	if skipped > 0 {
		args = append(args, "similar_lines_skipped", skipped)
	}
	l.Warn(msg, args...)
}
