package ingest

import (
	"context"
	"errors"
	"fmt"
)

// A Submission is one event handed to the Sink, with what NATS says about
// where it came from. The ingest does not parse events: the bytes are
// exactly what the emitter published (one event, or one part of a
// multi-event message, see package wire).
type Submission struct {
	// Emitter is the emitter token of the subject the message was published
	// on (wire.Subjects.Events). It is the emitter's authenticated identity
	// when the NATS permissions of docs/NATS.md are in place. The ingest does
	// not validate it: the sink must refuse an event whose emitter member is
	// not Emitter, or whose Emitter is not a configured emitter.
	Emitter string
	// MsgID is the Nats-Msg-Id of a one-event message ("" if the header was
	// absent), which the sink must refuse if it is not the event's id, so
	// that JetStream's deduplication key and the ledger's agree. It is
	// empty for the events of a multi-event message, whose Nats-Msg-Id is
	// wire.BatchID of the whole payload.
	MsgID string
	// Event is the event's bytes. The sink must not retain or modify the
	// slice after Submit returns; copy what it keeps.
	Event []byte
	// Seq is the JetStream stream sequence of the message that carried the
	// event, and Part its position in a multi-event message (0 otherwise).
	// (Seq, Part) increases strictly in the order the ingest submits within
	// one consumer session; a new session (after a restart or a NATS error)
	// may submit again from an earlier Seq (everything not yet acknowledged).
	Seq  uint64
	Part int
	// Refused, if not nil, is the ingest's own refusal of these bytes (for
	// example a multi-event message whose framing is broken, submitted whole):
	// the sink must not append them, must record them in its rejected store
	// with Refused's code and reason, and return that Rejected outcome.
	Refused *Refusal
}

// A Refusal is a machine-readable code (wire.CheckCode: [a-z0-9][a-z0-9-]*)
// and a reason in words that says what is wrong, with the numbers.
type Refusal struct {
	Code   string
	Reason string
}

// Codes the ingest itself refuses with (Submission.Refused).
const (
	// CodeBadBatch: a multi-event message whose Zarlog-Events header or
	// payload framing is broken (wire.SplitBatch).
	CodeBadBatch = "bad-batch"
	// CodeBadSubject: a message on a subject whose emitter token is not a
	// valid emitter id (wire.CheckEmitter), or not of the events shape.
	CodeBadSubject = "bad-subject"
)

// An OutcomeKind says what the sink did with a submission.
type OutcomeKind uint8

const (
	_ OutcomeKind = iota
	// Appended: the event is durable in the log at Index.
	Appended
	// Duplicate: the same event (same id, same bytes) was already durable
	// in the log at Index; nothing was added.
	Duplicate
	// Rejected: the event is refused and durably recorded in the rejected
	// store with Refusal.
	Rejected
)

func (k OutcomeKind) String() string {
	switch k {
	case Appended:
		return "appended"
	case Duplicate:
		return "duplicate"
	case Rejected:
		return "rejected"
	}
	return fmt.Sprintf("OutcomeKind(%d)", uint8(k))
}

// An Outcome is the sink's durable answer for one submission.
type Outcome struct {
	Kind OutcomeKind
	// Index is the event's leaf index (Appended, Duplicate).
	Index uint64
	// EventID is the event's id if the sink could read one (always, for
	// Appended and Duplicate). Receipt waiters are keyed by it.
	EventID string
	// Refusal is why (Rejected only).
	Refusal Refusal
}

// A Sink durably appends events to the log or durably rejects them. The
// ledger implements it; the ingest is its only caller.
//
// Submit decides every submission of subs, in order, as if they had been
// submitted one by one, and returns one Outcome per submission (outs[i]
// answers subs[i]). Submissions are in JetStream stream order: the ledger's
// per-game order checks may rely on it.
//
// Contract:
//
//   - When Submit returns a nil error, every outcome is durable: an
//     Appended or Duplicate event is in the log at its Index (its batch is
//     fsynced), and a Rejected one is in the rejected store with its reason.
//     Only then does the ingest acknowledge the NATS messages, so an event
//     whose message is acknowledged is never lost.
//   - When Submit returns an error, the ingest assumes nothing about any
//     submission of the batch: some, all or none may be durable ("failed and
//     not persisted" and "failed but persisted" look the same). The ingest
//     acknowledges nothing and retries the same submissions, in the same
//     order, with backoff, until Submit succeeds or the ingest stops; then
//     JetStream redelivers them to the next Ingester. The sink does not
//     retry internally.
//   - Submit is idempotent per event: an event whose id and bytes are already
//     in the log gives Duplicate with its Index, whatever the earlier call
//     returned. An event submitted again after it was Rejected may be
//     rejected again (the rejected store may then hold it twice; the ingest
//     announces it again), or judged anew.
//   - The ingest never calls Submit concurrently; Submit must honour ctx.
//     Large batches are the point: one fsync for the whole batch.
type Sink interface {
	Submit(ctx context.Context, subs []Submission) ([]Outcome, error)
}

// ErrNotFound is returned by a Locator for an event id it has no durable
// record of.
var ErrNotFound = errors.New("event not found")

// A Locator finds the durable outcome of an event by id, for receipts. The
// ledger implements it.
//
// Locate returns the Appended outcome (Index set) of an event in the log
// (whoever asks: the log is public), or else the Rejected outcome of
// emitter's own input with that id if the rejected store holds one, or an
// error wrapping ErrNotFound. Another emitter's rejected input under the
// same id is never returned: emitter is the one whose receipt subject the
// request came on, and rejections are namespaced by it. It is safe for
// concurrent use and called concurrently with Submit.
type Locator interface {
	Locate(ctx context.Context, emitter, eventID string) (Outcome, error)
}

// A CheckpointWaiter hands out signed checkpoints. The ledger's checkpoint
// signer implements it.
//
// WaitCovering blocks until a signed checkpoint of a tree of more than index
// leaves is durable (it will never be contradicted by a later one), and
// returns that signed note verbatim (C2SP tlog-checkpoint body signed as a
// C2SP signed note). If such a checkpoint exists it returns it at once, even
// if ctx is already done (a receipt request with wait 0 relies on that);
// otherwise it returns ctx.Err() when ctx ends first. It is safe for concurrent use; many
// waiters may wait at once, so it should wake them together when a
// checkpoint is published rather than poll.
type CheckpointWaiter interface {
	WaitCovering(ctx context.Context, index uint64) ([]byte, error)
}
