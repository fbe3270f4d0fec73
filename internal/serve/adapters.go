package serve

// The adapters between the ledger and the packages that read from it or
// write to it: the ingest's Sink, Locator (and CheckpointWaiter: the ledger
// itself), and the publisher's Source (the ledger is a publisher.LogStore).
// The ledger's Witness is a *witness.Group itself.

import (
	"context"
	"errors"
	"fmt"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/publisher"
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
