package ledger

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

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
	// Data is the event's leaf bytes. Append neither modifies nor keeps it
	// after it returns; the caller must not modify it during the call.
	Data []byte
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
	Index  uint64              // Appended, Duplicate: the event's leaf index
	Reject *events.RejectError // Rejected: the code, the member and the reason
	Seq    uint64              // Rejected: the record's number in the rejected store
}

// Append offers inputs to the log and returns what became of each, in the
// same order, once every outcome is durable. Inputs are checked in this
// order (FORMATS.md §1.5): Parse, the message id, Verify (emitter key and
// signature), the event id (dedup), then the game's history (events.Apply).
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
	items := l.checkAll(inputs)
	var reqs []*request
	for start := 0; start < len(items); {
		end, bytes := start, 0
		for end < len(items) && end-start < l.cfg.MaxBatchEvents && (end == start || bytes+len(items[end].in.Data) <= l.cfg.MaxBatchBytes) {
			bytes += len(items[end].in.Data)
			end++
		}
		r := &request{items: items[start:end], done: make(chan struct{})}
		select {
		case l.reqs <- r:
		case <-ctx.Done():
			return nil, fmt.Errorf("appending %d inputs: %w", len(inputs), ctx.Err())
		}
		reqs = append(reqs, r)
		start = end
	}
	out := make([]Outcome, 0, len(inputs))
	for _, r := range reqs {
		select {
		case <-r.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("appending %d inputs: %w", len(inputs), ctx.Err())
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

// An item is an input after the checks that need no state.
type item struct {
	in   Input
	ev   *events.Event // nil if rej is set
	hash merkle.Hash
	rej  *events.RejectError
}

// checkAll runs check on every input, in parallel for large calls.
func (l *Ledger) checkAll(inputs []Input) []item {
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

// check runs the checks that need no state: Parse, the message id, Verify.
func (l *Ledger) check(in Input) item {
	it := item{in: in}
	ev, err := events.Parse(in.Data)
	if err != nil {
		it.rej = asReject(err)
		return it
	}
	if l.cfg.Emitters == nil || !l.cfg.Emitters.Has(ev.Emitter) {
		it.rej = &events.RejectError{Code: events.CodeUnknownEmitter, Field: "emitter", Msg: fmt.Sprintf("no key is configured for emitter %q", ev.Emitter)}
		return it
	}
	if err := events.Verify(ev, l.cfg.Emitters); err != nil {
		it.rej = asReject(err)
		return it
	}
	if in.MsgID != "" && in.MsgID != ev.ID {
		it.rej = &events.RejectError{Code: events.CodeMalformed, Field: "id", Msg: fmt.Sprintf("%q, but the transport's message id is %q", ev.ID, in.MsgID)}
		return it
	}
	it.ev, it.hash = ev, merkle.LeafHash(in.Data)
	return it
}

func asReject(err error) *events.RejectError {
	var re *events.RejectError
	if errors.As(err, &re) {
		return re
	}
	return &events.RejectError{Code: CodeInternal, Msg: err.Error(), Err: err}
}

// sequence is the sequencer goroutine: it takes requests in order, groups
// those waiting, and commits each group.
func (l *Ledger) sequence() {
	defer close(l.seqDone)
	var held *request
	for {
		r := held
		held = nil
		if r == nil {
			var ok bool
			if r, ok = <-l.reqs; !ok {
				return
			}
		}
		if r.rebuild != nil {
			l.runRebuild(r)
			continue
		}
		group := []*request{r}
		n, bytes := len(r.items), r.bytes()
	collect:
		for n < l.cfg.MaxBatchEvents && bytes < l.cfg.MaxBatchBytes {
			select {
			case r2, ok := <-l.reqs:
				if !ok {
					break collect
				}
				if r2.rebuild != nil || n+len(r2.items) > l.cfg.MaxBatchEvents || bytes+r2.bytes() > l.cfg.MaxBatchBytes {
					held = r2
					break collect
				}
				group = append(group, r2)
				n += len(r2.items)
				bytes += r2.bytes()
			default:
				break collect
			}
		}
		l.seq.commitGroup(group)
	}
}

func (r *request) bytes() int {
	n := 0
	for _, it := range r.items {
		n += len(it.in.Data)
	}
	return n
}

// A sequencer is the ledger's single writer: the tree builder and the
// projections' working state. Only the sequencer goroutine uses it (and
// Open, before that goroutine starts).
type sequencer struct {
	l     *Ledger
	b     *merkle.Builder
	games *lru[*events.Game]
	stats Stats
	rej   rejWriter

	// The group being built.
	pend    map[string]*events.Game // games changed by the group
	pendIDs map[string]dedupRecord  // event ids appended by the group
	leaves  [][]byte
	fin     []finished
	counts  groupCounts
}

type finished struct {
	index  uint64
	status events.Status
	game   string
}

type groupCounts struct {
	appended, duplicates int
	rejected             []events.Code
}

func newSequencer(l *Ledger, b *merkle.Builder, stats Stats, rej RejectedSummary) *sequencer {
	return &sequencer{
		l:       l,
		b:       b,
		games:   newLRU[*events.Game](l.cfg.GameCache),
		stats:   stats,
		rej:     rejWriter{sum: rej, maxRecords: uint64(l.cfg.RejectedRecords), maxBytes: uint64(l.cfg.RejectedBytes)},
		pend:    map[string]*events.Game{},
		pendIDs: map[string]dedupRecord{},
	}
}

func (s *sequencer) reset() {
	clear(s.pend)
	clear(s.pendIDs)
	clear(s.leaves)
	s.leaves = s.leaves[:0]
	s.fin = s.fin[:0]
	s.counts = groupCounts{rejected: s.counts.rejected[:0]}
	s.rej.pending = nil
	s.rej.dirty = false
}

// commitGroup sequences a group of requests and commits it as one batch.
func (s *sequencer) commitGroup(group []*request) {
	l := s.l
	fail := func(err error) {
		for _, r := range group {
			r.finish(err)
		}
	}
	if err := l.Err(); err != nil {
		fail(err)
		return
	}
	start := time.Now()
	now := l.now().UTC().Round(0)
	env := events.Env{Now: now, ClockSkew: l.cfg.ClockSkew, Beacons: l.cfg.Beacons, Moves: l.cfg.Moves}
	batch := l.db.NewBatch()
	defer batch.Close()
	s.reset()
	first := s.b.Size()
	n := 0
	for _, r := range group {
		r.out = make([]Outcome, len(r.items))
		for i := range r.items {
			it := &r.items[i]
			var err error
			if it.rej != nil {
				r.out[i], err = s.reject(batch, now, it.in, it.rej)
			} else {
				env.Emitter = it.in.Emitter
				env.Index = first + uint64(len(s.leaves))
				r.out[i], err = s.accept(batch, it, &env)
			}
			if err != nil {
				l.stop(err)
				fail(l.Err())
				return
			}
		}
		n += len(r.items)
	}
	if err := s.write(batch, first, now); err != nil {
		l.stop(err)
		fail(l.Err())
		return
	}
	if !batch.Empty() {
		if err := l.commit(batch, fmt.Sprintf("committing a group of %d inputs (leaves %d to %d)", n, first, s.b.Size())); err != nil {
			fail(err)
			return
		}
	}
	for id, g := range s.pend {
		s.games.put(id, g)
	}
	if len(s.leaves) > 0 || s.rej.dirty {
		l.install(s.b.Size(), s.b.Root(), &s.stats, &s.rej.sum)
	}
	l.met.group(n, s.counts, time.Since(start))
	for _, r := range group {
		r.finish(nil)
	}
}

// reject records a refused input in the rejected store.
func (s *sequencer) reject(batch *pebble.Batch, now time.Time, in Input, rej *events.RejectError) (Outcome, error) {
	r := newRejection(now, in, rej)
	seq, err := s.rej.add(batch, &r)
	if err != nil {
		return Outcome{}, fmt.Errorf("storing a rejection: %w", err)
	}
	s.counts.rejected = append(s.counts.rejected, rej.Code)
	return Outcome{Result: Rejected, Reject: rej, Seq: seq}, nil
}

// accept checks an event's id and history and, if it may follow, adds it
// to the group. A non-nil error is a failure of the ledger (a read), not a
// rejection.
func (s *sequencer) accept(batch *pebble.Batch, it *item, env *events.Env) (Outcome, error) {
	ev := it.ev
	rec, ok := s.pendIDs[ev.ID]
	if !ok {
		var err error
		rec, ok, err = s.lookupID(ev.ID)
		if err != nil {
			return Outcome{}, err
		}
	}
	if ok {
		if rec.LeafHash == it.hash {
			s.counts.duplicates++
			return Outcome{Result: Duplicate, Index: rec.Index}, nil
		}
		return s.reject(batch, env.Now, it.in, &events.RejectError{Code: events.CodeDuplicateID, Field: "id",
			Msg: fmt.Sprintf("%q is leaf %d of the log, with other bytes (leaf hash %x, these hash to %x)", ev.ID, rec.Index, rec.LeafHash[:8], it.hash[:8])})
	}
	g, err := s.game(ev.Game)
	if err != nil {
		return Outcome{}, err
	}
	ng, err := events.Apply(g, ev, *env)
	if err != nil {
		var re *events.RejectError
		if !errors.As(err, &re) {
			s.l.log.Error("the state machine failed on an event; it is rejected as internal", "id", ev.ID, "game", ev.Game, "err", err)
			re = &events.RejectError{Code: CodeInternal, Msg: err.Error(), Err: err}
		}
		return s.reject(batch, env.Now, it.in, re)
	}
	s.add(ev, it.in.Data, it.hash, g, ng, env.Index)
	s.counts.appended++
	return Outcome{Result: Appended, Index: env.Index}, nil
}

// add adds an accepted event to the group's projections.
func (s *sequencer) add(ev *events.Event, data []byte, hash merkle.Hash, g, ng *events.Game, index uint64) {
	s.leaves = append(s.leaves, data)
	s.pendIDs[ev.ID] = dedupRecord{Index: index, LeafHash: hash}
	s.pend[ev.Game] = ng
	s.stats.observe(ev, g, ng)
	if ng.Closed && (g == nil || !g.Closed) {
		s.fin = append(s.fin, finished{index: index, status: ng.Status, game: ng.ID})
	}
}

// lookupID reads the dedup index.
func (s *sequencer) lookupID(id string) (dedupRecord, bool, error) {
	v, c, err := s.l.db.Get(strKey(prefixDedup, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return dedupRecord{}, false, nil
	}
	if err != nil {
		return dedupRecord{}, false, fmt.Errorf("reading the dedup index for %q: %w", id, err)
	}
	rec, err := parseDedup(v)
	c.Close()
	if err != nil {
		return dedupRecord{}, false, fmt.Errorf("dedup index for %q: %w", id, err)
	}
	return rec, true, nil
}

// game returns a game's current state, or nil if it has no events.
func (s *sequencer) game(id string) (*events.Game, error) {
	if g, ok := s.pend[id]; ok {
		return g, nil
	}
	if g, ok := s.games.get(id); ok {
		return g, nil
	}
	v, c, err := s.l.db.Get(strKey(prefixGame, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the state of game %q: %w", id, err)
	}
	g := new(events.Game)
	err = g.UnmarshalBinary(v)
	c.Close()
	if err != nil {
		return nil, fmt.Errorf("state of game %q: %w: %w", id, ErrCorrupt, err)
	}
	s.games.put(id, g)
	return g, nil
}

// write adds the group's leaves, tiles, tree state and projections to the
// batch.
func (s *sequencer) write(batch *pebble.Batch, first uint64, now time.Time) error {
	if len(s.leaves) > 0 {
		tiles, err := s.b.Append(s.leaves)
		if err != nil {
			return fmt.Errorf("appending %d leaves at %d to the tree: %w", len(s.leaves), first, err)
		}
		for _, td := range tiles {
			batch.Set(tileKey(td.Tile), td.Data, nil)
		}
		st, err := s.b.State().MarshalBinary()
		if err != nil {
			return err
		}
		batch.Set(keyState, st, nil)
		batch.Set(u64Key(prefixTime, first), marshalTime(now), nil)
		if err := s.writeProjections(batch); err != nil {
			return err
		}
	}
	if s.rej.dirty {
		if _, err := s.rej.evict(batch, func(k []byte) (int, error) { return getLen(s.l.db, k) }); err != nil {
			return err
		}
		batch.Set(keyRejMeta, s.rej.sum.marshal(), nil)
	}
	return nil
}

// writeProjections adds the group's projection records to the batch.
func (s *sequencer) writeProjections(batch *pebble.Batch) error {
	for id, rec := range s.pendIDs {
		batch.Set(strKey(prefixDedup, id), rec.marshal(), nil)
	}
	for id, g := range s.pend {
		enc, err := g.MarshalBinary()
		if err != nil {
			return fmt.Errorf("encoding the state of game %q: %w", id, err)
		}
		batch.Set(strKey(prefixGame, id), enc, nil)
	}
	for _, f := range s.fin {
		batch.Set(u64Key(prefixFinished, f.index), marshalFinished(f.status, f.game), nil)
	}
	if len(s.leaves) > 0 {
		st, _ := s.stats.MarshalBinary()
		batch.Set(keyStats, st, nil)
	}
	return nil
}
