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
//
// While Config.Hold is closed (a node without a fresh lease on the log),
// every request is answered with status "error", code "unavailable": also
// one held from before, whose answer would come from this ledger's state.

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
		if err := in.hold(); err != nil {
			// Not the log's primary now: say so rather than answer from
			// this ledger's state (Config.Hold).
			if _, serr := wire.ParseStatusRequest(m.Data); serr == nil {
				in.sendStatus(m, in.heldStatus(err))
				return
			}
			if _, serr := wire.ParseMessageStatusRequest(m.Data); serr == nil {
				in.sendMessageStatus(m, in.heldMessageStatus(err))
				return
			}
			if _, serr := wire.ParseReceiptsRequest(m.Data); serr == nil || isBatchRequest(m.Data) {
				in.sendReceipts(m, in.heldReceipts(err))
				return
			}
			q, _ := wire.ParseReceiptRequest(m.Data)
			in.sendReply(m, in.heldReply(q.ID, q.V, err))
			return
		}
		if limit := in.held.take(emitter, 1); limit != "" {
			reason := in.busy(emitter, limit)
			if _, err := wire.ParseStatusRequest(m.Data); err == nil {
				in.replyStatus(m, wire.StatusReply{Status: wire.StatusError, Code: "busy", Reason: truncate(reason, wire.MaxReasonLength), V: wire.ReceiptStateVersion})
				return
			}
			if _, err := wire.ParseMessageStatusRequest(m.Data); err == nil {
				in.replyMessageStatus(m, wire.MessageStatusReply{Status: wire.StatusError, Code: "busy", Reason: truncate(reason, wire.MaxReasonLength), V: wire.MessageStatusVersion})
				return
			}
			if _, err := wire.ParseReceiptsRequest(m.Data); err == nil || isBatchRequest(m.Data) {
				in.replyReceipts(m, receiptsError("busy", reason))
				return
			}
			in.reply(m, wire.ReceiptReply{Status: wire.StatusError, Code: "busy", Reason: truncate(reason, wire.MaxReasonLength)})
			return
		}
		in.m.receiptsHeld.WithLabelValues(emitter).Inc()
		arrived := time.Now()
		go func() {
			defer func() {
				in.held.release(emitter, 1)
				in.m.receiptsHeld.WithLabelValues(emitter).Dec()
			}()
			if bq, berr := wire.ParseReceiptsRequest(m.Data); berr == nil {
				// A batched request holds one request's share of the
				// limits for each event it names, as many requests of one
				// event each would (at most the emitter's limit, so that
				// one batch alone is always served).
				if more := min(len(bq.Events), in.cfg.MaxReceiptRequestsPerEmitter) - 1; more > 0 {
					if limit := in.held.take(emitter, more); limit != "" {
						in.replyReceipts(m, receiptsError("busy", in.busy(emitter, limit)))
						return
					}
					defer in.held.release(emitter, more)
				}
				in.replyReceipts(m, in.receipts(ctx, emitter, bq, arrived))
				return
			}
			q, err := wire.ParseReceiptRequest(m.Data)
			if err != nil {
				if mq, merr := wire.ParseMessageStatusRequest(m.Data); merr == nil {
					in.replyMessageStatus(m, in.messageStatus(ctx, emitter, mq, arrived))
					return
				}
				if sq, serr := wire.ParseStatusRequest(m.Data); serr == nil {
					in.replyStatus(m, in.status(ctx, emitter, sq, arrived))
					return
				}
				if isBatchRequest(m.Data) {
					_, berr := wire.ParseReceiptsRequest(m.Data)
					in.replyReceipts(m, receiptsError("bad-request", berr.Error()))
					return
				}
				in.reply(m, wire.ReceiptReply{Status: wire.StatusError, Code: "bad-request", Reason: truncate(err.Error(), wire.MaxReasonLength)})
				return
			}
			p := in.receiptOf(ctx, emitter, q, arrived)
			p.V = q.V
			in.reply(m, p)
		}()
	})
	if err != nil {
		return nil, fmt.Errorf("subscribing to receipt requests on %s: %w", in.cfg.Subjects.ReceiptsWildcard(), err)
	}
	return sub, nil
}

// busy counts and logs a receipt request of emitter over limit, and
// returns the reason of its "busy" reply.
func (in *Ingester) busy(emitter, limit string) string {
	reason := fmt.Sprintf("emitter %s has %d receipt requests held, its limit (%s %d); ask again once they are answered",
		emitter, in.cfg.MaxReceiptRequestsPerEmitter, LimitReceiptRequests, in.cfg.MaxReceiptRequestsPerEmitter)
	if limit == LimitReceiptRequestsTotal {
		reason = fmt.Sprintf("%d receipt requests are held for all emitters, the service's limit (%s %d); ask again once they are answered",
			in.cfg.MaxReceiptRequests, LimitReceiptRequestsTotal, in.cfg.MaxReceiptRequests)
	}
	in.m.limitRefusals.WithLabelValues(emitter, limit).Inc()
	in.busyLog.log(in.log, "receipt request over a limit, answered busy", "emitter", emitter, "limit", limit, "reason", reason)
	return reason
}

// heldReason is the reason of the replies of a held ingest.
func heldReason(err error) string {
	return truncate("this node does not serve the log now (ask again: another node may hold it): "+err.Error(), wire.MaxReasonLength)
}

// heldReply is the answer of a held ingest (Config.Hold says err) to a
// receipt request, counted.
func (in *Ingester) heldReply(id string, v int, err error) wire.ReceiptReply {
	in.m.heldBack.WithLabelValues("receipt").Inc()
	return wire.ReceiptReply{ID: id, Status: wire.StatusError, Code: "unavailable", Reason: heldReason(err), V: v}
}

// heldStatus is the answer of a held ingest to a status request, counted.
func (in *Ingester) heldStatus(err error) wire.StatusReply {
	in.m.heldBack.WithLabelValues("status").Inc()
	return wire.StatusReply{Status: wire.StatusError, Code: "unavailable", Reason: heldReason(err), V: wire.ReceiptStateVersion}
}

// reply sends a receipt reply, or, if Hold has closed since the request
// came, the reply that says so instead.
func (in *Ingester) reply(m *nats.Msg, p wire.ReceiptReply) {
	if err := in.hold(); err != nil {
		p = in.heldReply(p.ID, p.V, err)
	}
	in.sendReply(m, p)
}

func (in *Ingester) sendReply(m *nats.Msg, p wire.ReceiptReply) {
	in.m.receipts.WithLabelValues(p.Status).Inc()
	b, err := wire.MarshalReceiptReply(p)
	in.respond(m, "receipt", b, err, "id", p.ID)
}

// replyStatus sends a status reply, or, if Hold has closed since the
// request came, the reply that says so instead.
func (in *Ingester) replyStatus(m *nats.Msg, p wire.StatusReply) {
	if err := in.hold(); err != nil {
		p = in.heldStatus(err)
	}
	in.sendStatus(m, p)
}

func (in *Ingester) sendStatus(m *nats.Msg, p wire.StatusReply) {
	in.m.receipts.WithLabelValues("status-" + p.Status).Inc()
	b, err := wire.MarshalStatusReply(p)
	in.respond(m, "status", b, err)
}

// heldMessageStatus is the answer of a held ingest to a message status
// request, counted.
func (in *Ingester) heldMessageStatus(err error) wire.MessageStatusReply {
	in.m.heldBack.WithLabelValues("status").Inc()
	return wire.MessageStatusReply{Status: wire.StatusError, Code: "unavailable", Reason: heldReason(err), V: wire.MessageStatusVersion}
}

// replyMessageStatus sends a message status reply, or, if Hold has closed
// since the request came, the reply that says so instead.
func (in *Ingester) replyMessageStatus(m *nats.Msg, p wire.MessageStatusReply) {
	if err := in.hold(); err != nil {
		p = in.heldMessageStatus(err)
	}
	in.sendMessageStatus(m, p)
}

func (in *Ingester) sendMessageStatus(m *nats.Msg, p wire.MessageStatusReply) {
	in.m.receipts.WithLabelValues("messages-" + p.Status).Inc()
	b, err := wire.MarshalMessageStatusReply(p)
	in.respond(m, "message status", b, err)
}

// respond sends b, a reply of kind what encoded with err, logging a
// failure to encode or to send with attrs.
func (in *Ingester) respond(m *nats.Msg, what string, b []byte, err error, attrs ...any) {
	if err != nil {
		in.log.Error("encoding a "+what+" reply", append(attrs, "err", err)...)
		return
	}
	if err := m.Respond(b); err != nil {
		in.log.Warn("sending a "+what+" reply", append(attrs, "err", err)...)
	}
}

// receiptOf answers a parsed receipt request that arrived at arrived, but
// for its version.
func (in *Ingester) receiptOf(ctx context.Context, emitter string, q wire.ReceiptRequest, arrived time.Time) wire.ReceiptReply {
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
	for {
		d, moved := in.decidedNow()
		out, err = in.locate(ctx, emitter, q.ID, q.Seq, d)
		if !errors.Is(err, ledger.ErrNotFound) {
			break
		}
		var next <-chan struct{}
		if q.V >= wire.ReceiptStateVersion && q.Seq == 0 {
			// No message named: answer at once with the stream's state,
			// whose last sequence bounds every copy acknowledged before
			// the request; the emitter asks again with it as seq.
			return in.pending(ctx, emitter, q, arrived)
		}
		if q.V >= wire.ReceiptStateVersion {
			if st, ok := in.polledState(arrived); q.Seq < d || ok && st.Lost(q.Seq) {
				// Decided past its message, or the stream ends below it
				// and is read to its end, and no record of it: the
				// stream lost it. Say so at once: the emitter publishes
				// it again.
				return in.pending(ctx, emitter, q, arrived)
			}
			next = moved // wake when the ingest reaches its message, or the stream's state is read
		}
		select {
		case out = <-ch:
			err = nil
		case <-next:
			// A batch that decides the event announces its outcome
			// before it moves the cursor (process): take it rather than
			// look the event up in the ledger again.
			select {
			case out = <-ch:
				err = nil
			default:
				continue
			}
		case <-wctx.Done():
			if q.V >= wire.ReceiptStateVersion {
				return in.pending(ctx, emitter, q, arrived)
			}
			return wire.ReceiptReply{ID: q.ID, Status: wire.StatusPending}
		}
		break
	}
	return in.answer(ctx, emitter, q, out, err, wctx)
}

// locate looks emitter's event id up, unless seq, the stream sequence of
// the message that carried the copy asked about, is not decided yet (at or
// above the cursor d): what the ledger holds for the id (an earlier
// refusal, say) is then not the answer, and it returns ErrNotFound.
func (in *Ingester) locate(ctx context.Context, emitter, id string, seq, d uint64) (ledger.Outcome, error) {
	if seq > 0 && seq >= d {
		return ledger.Outcome{}, ledger.ErrNotFound
	}
	return in.cfg.Locator.Locate(ctx, emitter, id)
}

// pending answers a request of version wire.ReceiptStateVersion that found
// no record: it reads the stream's state, then looks the event up once
// more (a record made meanwhile is the answer), and answers pending with
// the state, which the emitter's rule needs to have been read before the
// lookup.
func (in *Ingester) pending(ctx context.Context, emitter string, q wire.ReceiptRequest, arrived time.Time) wire.ReceiptReply {
	st, ok := in.streamState(ctx, arrived)
	if !ok {
		return wire.ReceiptReply{ID: q.ID, Status: wire.StatusPending}
	}
	out, err := in.locate(ctx, emitter, q.ID, q.Seq, st.Decided)
	if errors.Is(err, ledger.ErrNotFound) {
		return wire.ReceiptReply{ID: q.ID, Status: wire.StatusPending, Decided: &st.Decided, Last: &st.Last}
	}
	done, cancel := context.WithCancel(ctx)
	cancel() // answer now: a checkpoint covering it, or pending with its index
	return in.answer(ctx, emitter, q, out, err, done)
}

// answer answers a request whose event the ledger has decided (out), or
// whose lookup failed (err), waiting for a covering checkpoint until wctx
// ends.
func (in *Ingester) answer(ctx context.Context, emitter string, q wire.ReceiptRequest, out ledger.Outcome, err error, wctx context.Context) wire.ReceiptReply {
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

// take takes n units for emitter, or none and returns the limit it would
// pass.
func (b *budget) take(emitter string, n int) (limit string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.by[emitter]+n > b.max:
		return LimitReceiptRequests
	case b.sum+n > b.total:
		return LimitReceiptRequestsTotal
	}
	b.by[emitter] += n
	b.sum += n
	return ""
}

func (b *budget) release(emitter string, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.by[emitter] -= n; b.by[emitter] <= 0 {
		delete(b.by, emitter)
	}
	b.sum -= n
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
	w.addChan(id, ch)
	return ch
}

// addChan adds ch as a waiter for id: a batched request adds one channel
// for each of its events.
func (w *waiters) addChan(id waiterKey, ch chan ledger.Outcome) {
	w.mu.Lock()
	w.m[id] = append(w.m[id], ch)
	w.mu.Unlock()
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

// setDecided stores the session's cursor and wakes the requests waiting
// for it to move.
func (in *Ingester) setDecided(next uint64) {
	in.decided.Store(next)
	in.wakeWaiters()
}

// wakeWaiters wakes the requests waiting for the cursor to move, to look
// at a new stream state.
func (in *Ingester) wakeWaiters() {
	in.movedMu.Lock()
	close(in.moved)
	in.moved = make(chan struct{})
	in.movedMu.Unlock()
}

// decidedNow returns the cursor and a channel closed when it next moves.
func (in *Ingester) decidedNow() (uint64, <-chan struct{}) {
	in.movedMu.Lock()
	defer in.movedMu.Unlock()
	return in.decided.Load(), in.moved
}

// A lastSeq caches the stream's last sequence and when it was asked for.
type lastSeq struct {
	mu  sync.Mutex
	seq uint64
	at  time.Time // when the request that read seq was sent
}

func (l *lastSeq) set(seq uint64, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if at.After(l.at) {
		l.seq, l.at = seq, at
	}
}

// polledState returns the StreamState with the stream's last sequence as
// the poller last read it, if it read it after since, without reading it.
func (in *Ingester) polledState(since time.Time) (wire.StreamState, bool) {
	d := in.decided.Load()
	in.last.mu.Lock()
	defer in.last.mu.Unlock()
	if !in.last.at.After(since) {
		return wire.StreamState{}, false
	}
	return wire.StreamState{Decided: d, Last: in.last.seq}, true
}

// streamState returns the wire.StreamState for a request that arrived at
// since: the cursor, read first, and the stream's last sequence read no
// earlier than since (the poller's, or read now; one read at a time, so
// that a burst of requests costs one). False if the stream cannot be read.
func (in *Ingester) streamState(ctx context.Context, since time.Time) (wire.StreamState, bool) {
	d := in.decided.Load()
	in.last.mu.Lock()
	defer in.last.mu.Unlock()
	if in.last.at.Before(since) {
		at := time.Now()
		ictx, cancel := context.WithTimeout(ctx, streamInfoTimeout)
		s, err := in.js.Stream(ictx, in.cfg.Stream.Name)
		cancel()
		if err != nil {
			return wire.StreamState{}, false
		}
		in.last.seq, in.last.at = s.CachedInfo().State.LastSeq, at
	}
	return wire.StreamState{Decided: d, Last: in.last.seq}, true
}

// streamInfoTimeout bounds the read of the stream's state for a reply.
const streamInfoTimeout = 2 * time.Second

// status answers a status request that arrived at arrived: the stream's
// state and the latest signed checkpoint, read first, then each event's
// record.
func (in *Ingester) status(ctx context.Context, emitter string, q wire.StatusRequest, arrived time.Time) wire.StatusReply {
	fail := func(code, reason string) wire.StatusReply {
		return wire.StatusReply{Status: wire.StatusError, Code: code, Reason: truncate(reason, wire.MaxReasonLength), V: wire.ReceiptStateVersion}
	}
	if in.cfg.Locator == nil || in.cfg.Checkpoints == nil {
		return fail("unavailable", "this ledger serves no receipts")
	}
	p := wire.StatusReply{Status: wire.StatusOK, V: wire.ReceiptStateVersion, Events: make([]wire.EventStatus, len(q.Events))}
	st, ok := in.streamState(ctx, arrived)
	d := in.decided.Load()
	if ok {
		p.Decided, p.Last, d = &st.Decided, &st.Last, st.Decided
	}
	cp, size, err := in.latestCheckpoint(ctx)
	if err != nil {
		return fail("unavailable", err.Error())
	}
	p.Checkpoint = string(cp)
	outs, errs := make([]ledger.Outcome, len(q.Events)), make([]error, len(q.Events))
	in.locateAll(ctx, emitter, q.Events, d, outs, errs, nil)
	for i, e := range q.Events {
		s := &p.Events[i]
		s.ID = e.ID
		out, err := outs[i], errs[i]
		switch {
		case errors.Is(err, ledger.ErrNotFound):
			s.Status = wire.EventUnknown
		case err != nil:
			return fail("unavailable", fmt.Sprintf("looking up event %s: %s", e.ID, err.Error()))
		case out.Result == ledger.Rejected:
			code, reason := refusal(out)
			if wire.CheckCode(code) != nil {
				code = "rejected"
			}
			s.Status, s.Code, s.Reason = wire.EventRejected, code, truncate(reason, wire.MaxStatusReason)
		case out.Result == ledger.Appended || out.Result == ledger.Duplicate:
			index := out.Index
			s.Index = &index
			s.Status = wire.EventAppended
			if index < size {
				s.Status = wire.EventLogged
			}
		default:
			return fail("unavailable", fmt.Sprintf("the ledger returned outcome %v for event %s", out.Result, e.ID))
		}
	}
	return p
}

// latestCheckpoint returns the latest signed checkpoint note, without
// waiting, and the size of its tree: nil and 0 if the ledger has signed
// none yet, an error if the note does not parse. The status, message
// status and batched receipt replies read it before they look their events
// up.
func (in *Ingester) latestCheckpoint(ctx context.Context) ([]byte, uint64, error) {
	done, cancel := context.WithCancel(ctx)
	cancel() // the latest checkpoint, without waiting
	cp, err := in.cfg.Checkpoints.WaitCovering(done, 0)
	if err != nil {
		return nil, 0, nil
	}
	c, err := merkle.ParseSignedCheckpoint(cp)
	if err != nil {
		return nil, 0, fmt.Errorf("the latest checkpoint: %w", err)
	}
	return cp, c.Size, nil
}

// locateAll looks up emitter's events qs whose index i is in only (every
// one if only is nil) into outs[i] and errs[i]: those the ledger has
// decided (their copy's message is below its cursor d, or no copy is
// named) together when the Locator can (EachLocator); the others are
// ledger.ErrNotFound yet.
func (in *Ingester) locateAll(ctx context.Context, emitter string, qs []wire.StatusQuery, d uint64, outs []ledger.Outcome, errs []error, only []int) {
	if only == nil {
		only = make([]int, len(qs))
		for i := range only {
			only[i] = i
		}
	}
	var ask []int
	for _, i := range only {
		if e := qs[i]; e.Seq > 0 && e.Seq >= d {
			outs[i], errs[i] = ledger.Outcome{}, ledger.ErrNotFound
		} else {
			ask = append(ask, i)
		}
	}
	if el, ok := in.cfg.Locator.(EachLocator); ok && len(ask) > 0 {
		ids := make([]string, len(ask))
		for k, i := range ask {
			ids[k] = qs[i].ID
		}
		o, e := el.LocateEach(ctx, emitter, ids)
		for k, i := range ask {
			outs[i], errs[i] = o[k], e[k]
		}
	} else {
		for _, i := range ask {
			outs[i], errs[i] = in.cfg.Locator.Locate(ctx, emitter, qs[i].ID)
		}
	}
}
