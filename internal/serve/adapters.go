package serve

// The adapters between the ledger and the packages that read from it or
// write to it: the ingest's Sink, Locator (and CheckpointWaiter: the ledger
// itself), the ledger's Witness hook, and the publisher's Source (the
// ledger is a publisher.LogStore).

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
			res[i] = ingest.Outcome{Kind: ingest.Rejected, EventID: o.RecordID, Refusal: refusal(o.Reject)}
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
// then the asking emitter's part of the rejected store.
type Locator struct{ L *ledger.Ledger }

// Locate implements ingest.Locator.
func (l Locator) Locate(ctx context.Context, emitter, id string) (ingest.Outcome, error) {
	idx, _, err := l.L.Lookup(ctx, id)
	if err == nil {
		return ingest.Outcome{Kind: ingest.Appended, Index: idx, EventID: id}, nil
	}
	if !errors.Is(err, ledger.ErrNotFound) {
		return ingest.Outcome{}, err
	}
	r, err := l.L.RejectedByID(ctx, emitter, id)
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

// NewSource returns the ledger as the publisher reads it (the read API's
// LogReader, the pages' GameSource and StatsSource, the Bundler's
// BundleSource): its durable tiles and, for the pages, the proof bundles in
// bundles (nil: none).
func NewSource(l *ledger.Ledger, bundles *publisher.Store) publisher.Source {
	return publisher.Source{Store: l, Tiles: l.TileReader(), Bundles: bundles}
}

// NewBundleSource returns the ledger as the Bundler's
// publisher.BundleSource: NewSource without a bundle store.
func NewBundleSource(l *ledger.Ledger) publisher.Source { return NewSource(l, nil) }
