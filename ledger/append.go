package ledger

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// An Input is one event offered to the ledger.
type Input struct {
	// Emitter is the emitter the transport authenticated (the NATS
	// subject's emitter token). The event's emitter member must equal it.
	Emitter string
	// MsgID is the transport's message id (JetStream Nats-Msg-Id), or ""
	// if there is none. When given it must equal the event's id.
	MsgID string
	// Data is the event's leaf bytes. Append copies it: the caller may
	// reuse it once Append returns (even with an error).
	Data []byte
	// Refuse, if not nil, is the transport's own refusal of Data (a
	// multi-event message whose framing is broken, say): the input is not
	// checked but recorded in the rejected store with this code, field and
	// message, and comes back Rejected.
	Refuse *events.RejectError
}

// A Result says what became of an input.
type Result uint8

// Results.
const (
	// Appended: the event is now leaf Outcome.Index of the log.
	Appended Result = 1 + iota
	// Duplicate: the same bytes under the same id are already leaf
	// Outcome.Index (a retry, a redelivery); nothing was written.
	Duplicate
	// Rejected: the input was refused for Outcome.Reject and kept in the
	// rejected store as record Outcome.Seq.
	Rejected
)

func (r Result) String() string {
	switch r {
	case Appended:
		return "appended"
	case Duplicate:
		return "duplicate"
	case Rejected:
		return "rejected"
	}
	return fmt.Sprintf("Result(%d)", r)
}

// An Outcome is what became of one input. Every outcome Append returns is
// durable: an appended event's leaf and a rejection's record are in a batch
// Pebble has synced.
type Outcome struct {
	Result Result
	ID     string              // the event's id, if the input parsed (always for Appended and Duplicate)
	Index  uint64              // Appended, Duplicate: the event's leaf index
	Reject *events.RejectError // Rejected: the code, the member and the reason
	Seq    uint64              // Rejected: the record's number in the rejected store
}

// Append offers inputs to the log and returns what became of each, in the
// same order, once every outcome is durable. Inputs are checked in this
// order (FORMATS.md §1.5): Parse, Verify (emitter key and signature), the
// message id, the event id (dedup), then the game's history (events.Apply).
//
// Inputs of one call are sequenced in order, so several events of one game
// may be passed together. Calls from concurrent goroutines are grouped into
// one Pebble batch with one fsync; the order between concurrent calls is the
// order in which they reach the sequencer.
//
// An error means the outcomes are unknown: ErrClosed before anything was
// sent; ErrStopped (a write failed) or ctx's error after the inputs may
// have been sequenced. Sending the same inputs again is then safe: an event
// already appended comes back as a Duplicate with its index.
func (l *Ledger) Append(ctx context.Context, inputs []Input) ([]Outcome, error) {
	if err := l.begin(); err != nil {
		return nil, err
	}
	defer l.appends.Done()
	if err := l.Err(); err != nil {
		return nil, err
	}
	if len(inputs) == 0 {
		return nil, nil
	}
	return l.submit(ctx, l.checkAll(inputs))
}

// submit hands checked inputs to the sequencer, in calls of at most
// MaxBatchEvents inputs and MaxBatchBytes bytes, and waits for their
// outcomes. The caller has called begin.
func (l *Ledger) submit(ctx context.Context, items []item) ([]Outcome, error) {
	var reqs []*request
	for start := 0; start < len(items); {
		end, size := start, 0
		for end < len(items) && end-start < l.cfg.MaxBatchEvents && (end == start || size+len(items[end].in.Data) <= l.cfg.MaxBatchBytes) {
			size += len(items[end].in.Data)
			end++
		}
		r := &request{items: items[start:end], done: make(chan struct{})}
		select {
		case l.reqs <- r:
		case <-ctx.Done():
			return nil, fmt.Errorf("appending %d inputs: %w", len(items), ctx.Err())
		}
		reqs = append(reqs, r)
		start = end
	}
	out := make([]Outcome, 0, len(items))
	for _, r := range reqs {
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("appending %d inputs: %w", len(items), ctx.Err())
		}
		if r.err != nil {
			return nil, r.err
		}
		out = append(out, r.out...)
	}
	return out, nil
}

// A request is a caller's inputs (or a Rebuild) for the sequencer.
type request struct {
	items []item
	out   []Outcome
	err   error
	done  chan struct{}

	rebuild context.Context // not nil for a Rebuild request
}

func (r *request) finish(err error) {
	r.err = err
	close(r.done)
}

// An item is an input after the checks that need no sequencing: Parse,
// Verify, and a first look at the dedup index (the hint).
type item struct {
	in   Input
	id   string        // the event's id, if it parsed
	ev   *events.Event // nil if rej is set
	hash merkle.Hash
	rej  *events.RejectError
	hint dedupHint
}

// A dedupHint is what the dedup index said about an event id before the
// event reached the sequencer: the lookup runs in the caller's goroutine, in
// parallel. It reflects every group committed up to group gen; the
// sequencer checks the groups after that itself (see sequencer.dedup).
type dedupHint struct {
	ok    bool   // the lookup was made and did not fail
	epoch uint64 // Ledger.epoch when it was made
	gen   uint64 // Ledger.committed when it was made
	found bool
	rec   dedupRecord
}

// checkAll copies the inputs' bytes (a call abandoned through its context
// may still be sequenced after Append returned) and runs check on every
// input, in parallel for large calls.
func (l *Ledger) checkAll(inputs []Input) []item {
	total := 0
	for i := range inputs {
		total += len(inputs[i].Data)
	}
	buf := make([]byte, 0, total)
	copied := make([]Input, len(inputs))
	for i, in := range inputs {
		start := len(buf)
		buf = append(buf, in.Data...)
		in.Data = buf[start:len(buf):len(buf)]
		copied[i] = in
	}
	inputs = copied
	items := make([]item, len(inputs))
	const perWorker = 32
	workers := min(runtime.GOMAXPROCS(0), (len(inputs)+perWorker-1)/perWorker)
	if workers <= 1 {
		for i := range inputs {
			items[i] = l.check(inputs[i])
		}
		return items
	}
	var wg sync.WaitGroup
	chunk := (len(inputs) + workers - 1) / workers
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, len(inputs))
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				items[i] = l.check(inputs[i])
			}
		})
	}
	wg.Wait()
	return items
}

// check runs the checks that need no sequencing, in the caller's goroutine:
// Parse, Verify, the message id, and a first dedup lookup (the hint).
func (l *Ledger) check(in Input) item {
	it := item{in: in}
	if in.Refuse != nil {
		it.rej = in.Refuse
		return it
	}
	ev, err := events.Parse(in.Data)
	if err != nil {
		it.rej = asReject(err)
		return it
	}
	it.id = ev.ID
	if l.cfg.Emitters == nil || !l.cfg.Emitters.Has(ev.Emitter) {
		it.rej = &events.RejectError{Code: events.CodeUnknownEmitter, Field: "emitter", Msg: fmt.Sprintf("no key is configured for emitter %q", ev.Emitter)}
		return it
	}
	it.id = ev.ID
	if err := events.Verify(ev, l.cfg.Emitters); err != nil {
		it.rej = asReject(err)
		return it
	}
	if in.MsgID != "" && in.MsgID != ev.ID {
		it.rej = &events.RejectError{Code: events.CodeMalformed, Field: "id", Msg: fmt.Sprintf("%q, but the transport's message id is %q", ev.ID, in.MsgID)}
		return it
	}
	it.ev, it.hash = ev, merkle.LeafHash(in.Data)
	// Read the epoch and the committed group count before the lookup: the
	// lookup sees at least every group committed by then.
	h := dedupHint{epoch: l.epoch.Load(), gen: l.committed.Load()}
	if h.rec, h.found, err = lookupID(l.db, ev.ID); err == nil {
		h.ok = true
		it.hint = h
	}
	return it
}

func asReject(err error) *events.RejectError {
	var re *events.RejectError
	if errors.As(err, &re) {
		return re
	}
	return &events.RejectError{Code: CodeInternal, Msg: err.Error(), Err: err}
}
