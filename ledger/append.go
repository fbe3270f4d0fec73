package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

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
	// reuse it once Append returns (even with an error), unless Owned.
	Data []byte
	// Owned hands Data over to the ledger, which then keeps it without
	// copying: the caller must never modify it again, not even after
	// Append returns. The ingest sets it for the payloads of NATS
	// messages, which it never reuses.
	Owned bool
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
	Seq    uint64              // Rejected and stored: the record's number in the rejected store
	// RecordID is the id a rejection is known by (Rejection.ID: the event's
	// id, else the message id, else a readable "id" member), stored or not.
	RecordID string
	// OverQuota reports a rejection that was not stored because its
	// emitter's quota in the rejected store is full; it is counted in
	// RejectedSummary.Emitters instead (Seq is then meaningless).
	OverQuota bool
}

// Append offers inputs to the log and returns what became of each, in the
// same order, once every outcome is durable. Inputs are checked in this
// order (FORMATS.md §1.5): Parse, Verify (emitter key and signature), the
// message id, the event id (dedup), then the game's history (events.Apply).
//
// Inputs of one call are sequenced in order, so several events of one game
// may be passed together. Calls from concurrent goroutines are grouped into
// one Pebble batch with one fsync; the order between concurrent calls is the
// order in which they reach the sequencer. A large call uses every core: its
// inputs are checked by GOMAXPROCS workers in chunks, and each chunk goes to
// the sequencer as soon as it is checked, so one call may be committed in
// several groups (all durable before Append returns).
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
	return l.pipeline(ctx, copyInputs(inputs))
}

// checkChunk is how many inputs a checking worker takes at a time, and
// the most a call sends to the sequencer in one request once it is checked.
// Small enough that the sequencer starts on a call's first inputs while the
// workers check the rest, large enough that the requests of a call are
// grouped into few commits.
const checkChunk = 512

// pipeline checks the inputs, in parallel when there are many of them, and
// hands them to the sequencer in order as they are checked, so that one
// caller with a large batch keeps every core busy: the workers check chunk
// k+1 while the sequencer prepares chunk k and the committer commits the
// group before it. It waits for every outcome.
func (l *Ledger) pipeline(ctx context.Context, inputs []Input) ([]Outcome, error) {
	items := make([]item, len(inputs))
	chunks := (len(inputs) + checkChunk - 1) / checkChunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	if workers <= 1 {
		l.checkAll(inputs, items)
		reqs, err := l.send(ctx, nil, items)
		if err != nil {
			return nil, err
		}
		return l.wait(ctx, reqs, len(items))
	}
	// Workers take chunks in order; chunk k's channel is closed once it is
	// checked. When the call is abandoned (ctx done), the workers finish
	// the chunk they hold and stop, and Append waits for them: they read
	// Pebble, which Close closes once every Append has returned.
	done := make([]chan struct{}, chunks)
	for k := range done {
		done[k] = make(chan struct{})
	}
	var next atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for range workers {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= chunks {
					return
				}
				select {
				case <-stop:
					return
				default:
				}
				lo, hi := k*checkChunk, min((k+1)*checkChunk, len(inputs))
				l.checkAll(inputs[lo:hi], items[lo:hi])
				close(done[k])
			}
		})
	}
	var reqs []*request
	for k := range chunks {
		select {
		case <-done[k]:
		case <-ctx.Done():
			return nil, fmt.Errorf("appending %d inputs: %w", len(inputs), ctx.Err())
		}
		lo, hi := k*checkChunk, min((k+1)*checkChunk, len(inputs))
		var err error
		if reqs, err = l.send(ctx, reqs, items[lo:hi]); err != nil {
			return nil, err
		}
	}
	return l.wait(ctx, reqs, len(items))
}

// submit hands checked inputs to the sequencer and waits for their
// outcomes. The caller has called begin.
func (l *Ledger) submit(ctx context.Context, items []item) ([]Outcome, error) {
	reqs, err := l.send(ctx, nil, items)
	if err != nil {
		return nil, err
	}
	return l.wait(ctx, reqs, len(items))
}

// send hands checked inputs to the sequencer, in requests of at most
// MaxBatchEvents inputs and MaxBatchBytes bytes, appended to reqs.
func (l *Ledger) send(ctx context.Context, reqs []*request, items []item) ([]*request, error) {
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
	return reqs, nil
}

// wait waits for the outcomes of requests holding n inputs, in order.
func (l *Ledger) wait(ctx context.Context, reqs []*request, n int) ([]Outcome, error) {
	var out []Outcome
	if len(reqs) > 1 {
		out = make([]Outcome, 0, n)
	}
	for _, r := range reqs {
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("appending %d inputs: %w", n, ctx.Err())
		}
		if r.err != nil {
			return nil, r.err
		}
		if len(reqs) == 1 {
			return r.out, nil // the sequencer made it for this request, and is done with it
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
	imp     *ImportBatch    // not nil for an Import request
	impCtx  context.Context
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
	// beacon is the pre-check's answer for a beacon event's BLS
	// signature (checkBeacon), nil for other events.
	beacon *checkedBeacon
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

// copyInputs copies the inputs' bytes into one buffer, except those Owned:
// a call abandoned through its context may still be sequenced after Append
// returned, and the caller may reuse its slices by then. If every input is
// Owned (the ingest's), it returns inputs themselves: the checks copy each
// Input into its item, and Append waits for them before it returns.
func copyInputs(inputs []Input) []Input {
	total, owned := 0, true
	for i := range inputs {
		if !inputs[i].Owned {
			total += len(inputs[i].Data)
			owned = false
		}
	}
	if owned {
		return inputs
	}
	buf := make([]byte, 0, total)
	copied := make([]Input, len(inputs))
	for i, in := range inputs {
		if !in.Owned {
			start := len(buf)
			buf = append(buf, in.Data...)
			in.Data = buf[start:len(buf):len(buf)]
		}
		copied[i] = in
	}
	return copied
}

// checkAll runs the checks that need no sequencing on each input (Parse,
// Verify, the message id), in the caller's goroutine or a worker's, then
// looks up the ids of those that passed in the dedup index (their hints).
//
// The checks run in three passes over the inputs: parse, then the
// signatures, emitter by emitter, then the rest. Each input meets them in
// that order (FORMATS.md §1.5), so it gets the outcome it would alone.
// Verifications one after another, with one emitter's key, keep the key's
// and the base point's tables in the core's cache; interleaved with
// parsing, each one found them evicted.
func (l *Ledger) checkAll(inputs []Input, items []item) {
	var signed []int // the binding events: their signatures are checked
	for i := range inputs {
		items[i] = l.parse(inputs[i])
		if ev := items[i].ev; ev != nil {
			if ev.Type.Binding() {
				signed = append(signed, i)
			} else {
				l.verify(&items[i]) // no signature, and none may be there
			}
		}
	}
	if len(signed) > 1 {
		slices.SortStableFunc(signed, func(a, b int) int { return strings.Compare(items[a].ev.Emitter, items[b].ev.Emitter) })
	}
	for _, i := range signed {
		l.verify(&items[i])
	}
	for i := range items {
		l.finish(&items[i])
		l.checkBeacon(&items[i])
	}
	l.hint(items)
}

// checkBeacon runs a beacon event's BLS signature check (a pairing check,
// about a millisecond, unless the verified-beacon cache knows the
// signature) with the other checks that need no sequencing, and keeps its
// answer in the item, so that the sequencer, which must run one event at a
// time, reads the answer instead of checking again (sequencer.accept). The
// check depends only on the chain, the round and the signature, never on
// the game, so its answer is the same wherever it runs; whether the beacon
// may follow in its game (its chain and round are the commit's, none was
// logged before, the round is later than the sealing) is still decided by
// the sequencer, in order.
func (l *Ledger) checkBeacon(it *item) {
	if it.ev == nil || l.cfg.Beacons == nil {
		return
	}
	b, ok := it.ev.Body.(events.Beacon)
	if !ok {
		return
	}
	v, ok := l.cfg.Beacons(b.Chain)
	if !ok {
		return // refused by the sequencer: the chain is not pinned
	}
	r, err := v.Verify(b.Round, b.Signature)
	it.beacon = &checkedBeacon{BeaconVerifier: v, chain: b.Chain, round: b.Round, sig: b.Signature, r: r, err: err}
}

// A checkedBeacon is a pinned chain's verifier that answers the one
// signature the pre-check verified (Ledger.checkBeacon) from the answer it
// got, and asks the chain about any other.
type checkedBeacon struct {
	events.BeaconVerifier
	chain [32]byte
	round uint64
	sig   []byte
	r     [32]byte
	err   error
}

// Verify returns the pre-check's answer for its round and signature.
func (c *checkedBeacon) Verify(round uint64, sig []byte) ([32]byte, error) {
	if round == c.round && bytes.Equal(sig, c.sig) {
		return c.r, c.err
	}
	return c.BeaconVerifier.Verify(round, sig)
}

// beacons returns env's chain lookup with the pre-checked chain answered
// by c.
func (c *checkedBeacon) beacons(lookup func([32]byte) (events.BeaconVerifier, bool)) func([32]byte) (events.BeaconVerifier, bool) {
	return func(h [32]byte) (events.BeaconVerifier, bool) {
		if h == c.chain {
			return c, true
		}
		return lookup(h)
	}
}

// parse is the checks' first part: the transport's refusal, Parse, and
// whether the emitter has a key. It leaves it.ev set if they pass.
func (l *Ledger) parse(in Input) item {
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
	it.ev = ev
	return it
}

// verify is the checks' second part: the signature (events.VerifyWith).
func (l *Ledger) verify(it *item) {
	if it.ev == nil {
		return
	}
	if err := events.VerifyWith(it.ev, l.cfg.Emitters, l.sigs.verify); err != nil {
		it.ev, it.rej = nil, asReject(err)
	}
}

// finish is the checks' last part: the message id and the reserved ids; an
// item that passes gets its leaf hash.
func (l *Ledger) finish(it *item) {
	ev := it.ev
	if ev == nil {
		return
	}
	in := it.in
	if in.MsgID != "" && in.MsgID != ev.ID {
		it.ev, it.rej = nil, &events.RejectError{Code: events.CodeMsgIDMismatch, Field: "id", Msg: fmt.Sprintf("%q, but the transport's message id is %q", ev.ID, in.MsgID)}
		return
	}
	if game, seq, ok := takenCanonicalID(ev); ok && !l.allowReservedIDs {
		it.ev, it.rej = nil, &events.RejectError{Code: events.CodeReservedID, Field: "id",
			Msg: fmt.Sprintf("%q has the form of the id of event %d of game %q, and this is event %d of game %q", ev.ID, seq, game, ev.Seq, ev.Game)}
		return
	}
	it.hash = merkle.LeafHash(in.Data)
}

// takenCanonicalID returns the game and seq whose canonical id ev.ID is,
// if it is one and not ev's own: what the reserved-id rule refuses.
func takenCanonicalID(ev *events.Event) (game string, seq uint64, ok bool) {
	if ev.HasCanonicalID() {
		return "", 0, false
	}
	return events.ParseCanonicalID(ev.ID)
}

// indexed reports whether the dedup index holds, or may hold, ev's
// (emitter, id). An
// event with its canonical id (events.CanonicalID) is found through its
// game, and has no dedup record; the index is read for it only if the log
// holds an older event that took its id (legacyIDs).
func (l *Ledger) indexed(ev *events.Event) bool {
	return !ev.HasCanonicalID() || l.legacyIDs.Load()
}

// hint looks up the (emitter, id) of the checked items in the dedup index
// and sets their hints. It seeks one iterator through the ids in sorted order, which
// costs about half as much per id as a Get. On a read error it sets no
// hint: the sequencer then looks the ids up itself.
func (l *Ledger) hint(items []item) {
	type idKey struct {
		key []byte
		i   int
	}
	var keys []idKey
	size := 0
	for i := range items {
		if ev := items[i].ev; ev != nil && l.indexed(ev) {
			size += 2 + len(ev.Emitter) + len(ev.ID)
		}
	}
	if size == 0 {
		return
	}
	buf := make([]byte, 0, size)
	for i := range items {
		if ev := items[i].ev; ev != nil && l.indexed(ev) {
			start := len(buf)
			buf = appendDedupKey(buf, ev.Emitter, ev.ID)
			keys = append(keys, idKey{buf[start:len(buf):len(buf)], i})
		}
	}
	slices.SortFunc(keys, func(a, b idKey) int { return bytes.Compare(a.key, b.key) })
	// Read the epoch and the committed group count before the iterator is
	// made: it sees at least every group committed by then.
	h := dedupHint{ok: true, epoch: l.epoch.Load(), gen: l.committed.Load()}
	// Most ids are new: every seek misses. UseL6Filters makes the seeks
	// consult the bottom level's Bloom filters too, which Pebble skips
	// by default (they are large, and most reads find their key), so a
	// miss reads no data block there: in five `zarlog bench` profiles of
	// each, the hint fell from 0.73 to 0.54 s of CPU per 200k events
	// (13.4 % to 10.2 % of the samples; BENCHMARKS.md).
	it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixDedup}, UpperBound: prefixEnd(prefixDedup), UseL6Filters: true})
	if err != nil {
		return
	}
	defer it.Close()
	hints := make([]dedupHint, len(keys))
	for j, k := range keys {
		hints[j] = h
		if !it.SeekPrefixGE(k.key) || !bytes.Equal(it.Key(), k.key) {
			continue
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return
		}
		if hints[j].rec, err = parseDedup(v); err != nil {
			return // the sequencer's own lookup reports it
		}
		hints[j].found = true
	}
	if it.Error() != nil {
		return
	}
	for j, k := range keys {
		items[k.i].hint = hints[j]
	}
}

func asReject(err error) *events.RejectError {
	var re *events.RejectError
	if errors.As(err, &re) {
		return re
	}
	return &events.RejectError{Code: CodeInternal, Msg: err.Error(), Err: err}
}
