package ingest

import (
	"context"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
)

// A submission is one event of a batch, with where it came from: the
// ledger's Input and the JetStream stream sequence of the message that
// carried it, with its position in a multi-event message (0 otherwise).
// (seq, part) increases strictly in the order the ingest submits within one
// consumer session; a new session (after a restart or a NATS error) may
// submit again from an earlier seq (everything not yet acknowledged).
type submission struct {
	ledger.Input
	seq  uint64
	part int
}

// Codes the ingest itself refuses with (ledger.Input.Refuse).
const (
	// CodeBadBatch: a multi-event message whose Zarlog-Events header or
	// payload framing is broken (wire.SplitBatch).
	CodeBadBatch events.Code = "bad-batch"
	// CodeBadSubject: a message on a subject whose emitter token is not a
	// valid emitter id (wire.CheckEmitter), or not of the events shape.
	CodeBadSubject events.Code = "bad-subject"
)

// eventID is the id an outcome is known by to receipt waiters: the event's
// id, or for a rejected input the id its rejection record has (its message
// id, or an "id" member the ledger could read).
func eventID(o ledger.Outcome) string {
	if o.Result == ledger.Rejected {
		return o.RecordID
	}
	return o.ID
}

// refusal returns a rejected outcome's code and its reason in words (the
// message, with the member it concerns).
func refusal(o ledger.Outcome) (code, reason string) {
	if o.Reject == nil {
		return string(ledger.CodeInternal), "rejected without a reason"
	}
	return string(o.Reject.Code), o.Reject.Error()
}

// A Sink durably appends events to the log or durably rejects them, in the
// ledger's own vocabulary: *ledger.Ledger is one, and the ingest is its
// only caller. Each Input carries the subject's emitter token (the
// emitter's authenticated identity under the permissions of
// docs/NATS.md), the Nats-Msg-Id of a one-event message, the event's
// bytes (the sink must not retain them), and the ingest's own refusal if
// it has one (the sink then records it as rejected without checking it).
//
// Append decides every input, in order, as if they had been submitted one
// by one, and returns one Outcome per input (outs[i] answers in[i]). Inputs
// are in JetStream stream order: the ledger's per-game order checks may
// rely on it.
//
// Contract:
//
//   - When Append returns a nil error, every outcome is durable: an
//     Appended or Duplicate event is in the log at its Index (its batch is
//     fsynced), and a Rejected one is in the rejected store with its reason.
//     Only then does the ingest acknowledge the NATS messages, so an event
//     whose message is acknowledged is never lost.
//   - When Append returns an error, the ingest assumes nothing about any
//     submission of the batch: some, all or none may be durable ("failed and
//     not persisted" and "failed but persisted" look the same). The ingest
//     acknowledges nothing and retries the same submissions, in the same
//     order, with backoff, until Append succeeds or the ingest stops; then
//     JetStream redelivers them to the next Ingester. The sink does not
//     retry internally.
//   - Append is idempotent per event: an event whose id and bytes are already
//     in the log gives Duplicate with its Index, whatever the earlier call
//     returned. An event submitted again after it was Rejected may be
//     rejected again (the rejected store may then hold it twice; the ingest
//     announces it again), or judged anew.
//   - The ingest never calls Append concurrently; Append must honour ctx.
//     Append keeps no reference to the slice in once it returns: the
//     ingest fills the same slice with its next batch (an input's Data is
//     the message's own, which Append may keep: Owned).
//     Large batches are the point: one fsync for the whole batch.
type Sink interface {
	Append(ctx context.Context, in []ledger.Input) ([]ledger.Outcome, error)
}

// A Locator finds the durable outcome of an event by emitter and id, for
// receipts: *ledger.Ledger is one.
//
// Locate returns the Appended outcome (Index set) of emitter's event with
// that id in the log, or else the Rejected outcome of emitter's own input
// with that id if the rejected store holds one, or an error wrapping
// ledger.ErrNotFound. Event ids are per emitter: another emitter's event or
// rejected input under the same id is never returned. emitter is the one
// whose receipt subject the request came on. It is safe for concurrent use
// and called concurrently with Append.
type Locator interface {
	Locate(ctx context.Context, emitter, eventID string) (ledger.Outcome, error)
}

// An EachLocator is a Locator that also looks several of an emitter's
// events up at once, sharing its reads (ledger.Ledger.LocateEach: a game's
// leaves and an entry bundle read once per call): out[i] and errs[i] are
// Locate's for ids[i]. The ingest answers status requests with it when its
// Locator is one.
type EachLocator interface {
	Locator
	LocateEach(ctx context.Context, emitter string, ids []string) (out []ledger.Outcome, errs []error)
}

// A CheckpointWaiter hands out signed checkpoints and inclusion proofs in
// them. *ledger.Ledger is one.
//
// WaitCovering blocks until a signed checkpoint of a tree of more than index
// leaves is durable (it will never be contradicted by a later one), and
// returns that signed note verbatim (C2SP tlog-checkpoint body signed as a
// C2SP signed note). If such a checkpoint exists it returns it at once, even
// if ctx is already done (a receipt request with wait 0 relies on that);
// otherwise it returns ctx.Err() when ctx ends first. It is safe for concurrent use; many
// waiters may wait at once, so it should wake them together when a
// checkpoint is published rather than poll.
//
// InclusionProof returns the inclusion proof of leaf index in the tree of
// the given size, a size of a checkpoint WaitCovering returned.
type CheckpointWaiter interface {
	WaitCovering(ctx context.Context, index uint64) ([]byte, error)
	InclusionProof(ctx context.Context, index, size uint64) ([]merkle.Hash, error)
}
