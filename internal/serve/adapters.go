package serve

// The adapters between the ledger and the packages that read from it or
// write to it: the ingest's Sink, Locator (and CheckpointWaiter: the ledger
// itself), the ledger's Witness hook, and the publisher's LogReader,
// BundleSource, GameSource and StatsSource.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/publisher"
	"github.com/zarlog/zarlog/witness"
)

// A Sink is the ledger as the ingest's ingest.Sink: one Append per Submit.
type Sink struct{ L *ledger.Ledger }

// Submit implements ingest.Sink.
func (s Sink) Submit(ctx context.Context, subs []ingest.Submission) ([]ingest.Outcome, error) {
	in := make([]ledger.Input, len(subs))
	for i, x := range subs {
		in[i] = ledger.Input{Emitter: x.Emitter, MsgID: x.MsgID, Data: x.Event}
		if x.Refused != nil {
			in[i].Refuse = &events.RejectError{Code: events.Code(x.Refused.Code), Msg: x.Refused.Reason}
		}
	}
	outs, err := s.L.Append(ctx, in)
	if err != nil {
		return nil, err
	}
	if len(outs) != len(subs) {
		return nil, fmt.Errorf("serve: the ledger returned %d outcomes for %d inputs", len(outs), len(subs))
	}
	res := make([]ingest.Outcome, len(outs))
	for i, o := range outs {
		switch o.Result {
		case ledger.Appended:
			res[i] = ingest.Outcome{Kind: ingest.Appended, Index: o.Index, EventID: o.ID}
		case ledger.Duplicate:
			res[i] = ingest.Outcome{Kind: ingest.Duplicate, Index: o.Index, EventID: o.ID}
		case ledger.Rejected:
			// An input that did not parse is known to the receipt waiters by
			// the id its rejection record has (its message id, or an "id"
			// member the ledger could read), as to RejectedByID.
			id := o.ID
			if id == "" {
				if id = subs[i].MsgID; id == "" {
					if rs, err := s.L.Rejected(ctx, o.Seq, 1); err == nil && len(rs) == 1 && rs[0].Seq == o.Seq {
						id = rs[0].ID
					}
				}
			}
			res[i] = ingest.Outcome{Kind: ingest.Rejected, EventID: id, Refusal: refusal(o.Reject)}
		default:
			return nil, fmt.Errorf("serve: the ledger returned result %v for input %d", o.Result, i)
		}
	}
	return res, nil
}

// refusal is the ingest's form of a rejection: the code, and the message
// with the member it concerns.
func refusal(r *events.RejectError) ingest.Refusal {
	if r == nil {
		return ingest.Refusal{Code: string(ledger.CodeInternal), Reason: "rejected without a reason"}
	}
	return ingest.Refusal{Code: string(r.Code), Reason: r.Error()}
}

// A Locator is the ledger as the ingest's ingest.Locator: the log first,
// then the rejected store.
type Locator struct{ L *ledger.Ledger }

// Locate implements ingest.Locator.
func (l Locator) Locate(ctx context.Context, id string) (ingest.Outcome, error) {
	idx, _, err := l.L.Lookup(ctx, id)
	if err == nil {
		return ingest.Outcome{Kind: ingest.Appended, Index: idx, EventID: id}, nil
	}
	if !errors.Is(err, ledger.ErrNotFound) {
		return ingest.Outcome{}, err
	}
	r, err := l.L.RejectedByID(ctx, id)
	if errors.Is(err, ledger.ErrNotFound) {
		return ingest.Outcome{}, fmt.Errorf("event %q: %w", id, ingest.ErrNotFound)
	}
	if err != nil {
		return ingest.Outcome{}, err
	}
	return ingest.Outcome{Kind: ingest.Rejected, EventID: id,
		Refusal: refusal(&events.RejectError{Code: r.Code, Field: r.Field, Msg: r.Reason})}, nil
}

// A Witnesses is the ledger's Witness hook over a witness.Group: it asks
// the witnesses of a C2SP tlog-policy to cosign each checkpoint. When the
// policy's quorum is not met it still returns the cosignatures it gathered
// (and logs why), so that the ledger publishes them.
type Witnesses struct {
	group *witness.Group
	log   *slog.Logger

	mu     sync.Mutex
	prover ledger.ConsistencyProver
}

// NewWitnesses returns the hook for the witnesses of policy that have a
// URL, or nil if there are none.
func NewWitnesses(policy *merkle.Policy, hc *http.Client, log *slog.Logger) (*Witnesses, error) {
	w := &Witnesses{log: log}
	g, err := witness.NewGroup(policy, w.proof, hc)
	if err != nil {
		return nil, err
	}
	if len(g.Clients()) == 0 {
		return nil, nil
	}
	w.group = g
	return w, nil
}

func (w *Witnesses) proof(ctx context.Context, oldSize, newSize uint64) ([]merkle.Hash, error) {
	w.mu.Lock()
	p := w.prover
	w.mu.Unlock()
	if p == nil {
		return nil, errors.New("serve: no consistency prover")
	}
	return p.ConsistencyProof(ctx, oldSize, newSize)
}

// Cosign implements ledger.Witness.
func (w *Witnesses) Cosign(ctx context.Context, signed []byte, proofs ledger.ConsistencyProver) ([]byte, error) {
	w.mu.Lock()
	w.prover = proofs
	w.mu.Unlock()
	note, err := w.group.Cosign(ctx, signed)
	if err != nil && errors.Is(err, merkle.ErrSignature) && note != nil {
		w.log.Warn("witnesses: the policy's quorum is not met; publishing the cosignatures gathered", "err", err)
		return note, nil
	}
	return note, err
}

// A LogReader is the ledger as the publisher's LogReader.
type LogReader struct {
	merkle.TileReader
	L *ledger.Ledger
}

// NewLogReader returns the publisher.LogReader of l.
func NewLogReader(l *ledger.Ledger) LogReader { return LogReader{TileReader: l.TileReader(), L: l} }

// Checkpoint implements publisher.LogReader.
func (r LogReader) Checkpoint(ctx context.Context) ([]byte, error) {
	note, _, _ := r.L.Latest()
	if note == nil {
		return nil, fmt.Errorf("no checkpoint signed yet: %w", merkle.ErrNotFound)
	}
	return note, nil
}

// A BundleSource is the ledger as the publisher's BundleSource.
type BundleSource struct {
	merkle.TileReader
	L *ledger.Ledger
}

// NewBundleSource returns the publisher.BundleSource of l.
func NewBundleSource(l *ledger.Ledger) BundleSource {
	return BundleSource{TileReader: l.TileReader(), L: l}
}

// Latest implements publisher.BundleSource.
func (s BundleSource) Latest() ([]byte, uint64, <-chan struct{}) {
	note, cp, next := s.L.Latest()
	return note, cp.Size, next
}

// Finished implements publisher.BundleSource.
func (s BundleSource) Finished(ctx context.Context, from uint64, limit int) ([]publisher.FinishedGame, error) {
	fs, err := s.L.Finished(ctx, from, limit)
	out := make([]publisher.FinishedGame, len(fs))
	for i, f := range fs {
		out[i] = publisher.FinishedGame{Index: f.Index, Game: f.Game}
	}
	return out, err
}

// GameLeaves implements publisher.BundleSource.
func (s BundleSource) GameLeaves(ctx context.Context, game string) ([]publisher.IndexedLeaf, error) {
	g, err := s.L.Game(ctx, game)
	if err != nil {
		return nil, err
	}
	leaves, err := s.L.LeavesAt(ctx, g.Leaves)
	if err != nil {
		return nil, err
	}
	out := make([]publisher.IndexedLeaf, len(leaves))
	for i, l := range leaves {
		out[i] = publisher.IndexedLeaf{Index: g.Leaves[i], Leaf: l}
	}
	return out, nil
}

// A Games is the publisher's GameSource: a finished game's bundle from the
// bundle store, else the game's events so far from the ledger.
type Games struct {
	L     *ledger.Ledger
	Store *publisher.Store
}

// Game implements publisher.GameSource.
func (g Games) Game(ctx context.Context, id string) (publisher.Game, error) {
	b, err := g.Store.Bundle(ctx, id)
	if err == nil {
		return publisher.Game{Status: publisher.GameFinished, Bundle: b}, nil
	}
	if !errors.Is(err, publisher.ErrNoBundle) {
		return publisher.Game{}, err
	}
	st, err := g.L.Game(ctx, id)
	if errors.Is(err, ledger.ErrNotFound) {
		return publisher.Game{}, fmt.Errorf("game %q: %w", id, publisher.ErrNoGame)
	}
	if err != nil {
		return publisher.Game{}, err
	}
	leaves, err := g.L.LeavesAt(ctx, st.Leaves)
	if err != nil {
		return publisher.Game{}, err
	}
	return publisher.Game{Status: publisher.GameInPlay, Events: leaves}, nil
}

// A Stats is the publisher's StatsSource over the ledger's statistics
// projection: the ledger counts each roll event in Opening (kind opening,
// ties included) or Play, and each per-roll-v1 roll-reveal in Play.
type Stats struct{ L *ledger.Ledger }

// Stats implements publisher.StatsSource.
func (s Stats) Stats(ctx context.Context) (publisher.Stats, error) {
	st, err := s.L.Stats()
	if err != nil {
		return publisher.Stats{}, err
	}
	return publisher.Stats{
		Opening: st.Opening,
		Play:    st.Play,
		Games:   st.Games,
		LogSize: st.Events,
	}, nil
}
