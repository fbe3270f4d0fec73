package wire

import (
	"errors"
	"fmt"
)

// ReceiptBatchVersion is the version of the batched receipt protocol: an
// emitter asks, on Subjects.Receipts, for the receipts of every event it
// waits on at once (ReceiptsRequest), and the ledger answers with one
// signed checkpoint note and, for each event covered by it, its leaf index
// and inclusion proof in that checkpoint's tree (ReceiptsReply). The
// ledger holds the request until at least one of its events can be
// answered (logged under a signed checkpoint, rejected, or known to have
// no record), or until its wait ends; the events not answerable yet are
// answered "pending", and the emitter asks again for them with the events
// it came to wait on meanwhile (docs/NATS.md §5, "Batched receipts"). The
// receipt requests of versions 1 to 3 (ReceiptRequest) are still served; a
// ledger that predates this version answers a ReceiptsRequest with a
// ReceiptReply of status error, code "bad-request", and the SDK asks with
// ReceiptStateVersion from then on.
const ReceiptBatchVersion = 5

// MaxReceiptBatch is the most events one ReceiptsRequest asks about: the
// reply of as many events, each with an inclusion proof of MaxProofHashes
// and a reason of MaxStatusReason bytes, stays below MaxMessageSize.
const MaxReceiptBatch = 128

// A ReceiptsRequest asks for the receipts of up to MaxReceiptBatch of the
// emitter's events at once. Its version is ReceiptBatchVersion.
type ReceiptsRequest struct {
	// Events are the events asked about, at least one: each id with, if
	// not 0, the stream sequence of the message that carried its latest
	// copy (as ReceiptRequest.Seq: the ledger answers only from its
	// decision of that message).
	Events []StatusQuery `json:"events"`
	// V is ReceiptBatchVersion.
	V int `json:"v"`
	// WaitMillis is how long the ledger may hold the request waiting for
	// one of its events to become answerable (ReceiptRequest.WaitMillis).
	WaitMillis int64 `json:"wait_ms,omitempty"`
}

// MarshalReceiptsRequest encodes q.
func MarshalReceiptsRequest(q ReceiptsRequest) ([]byte, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	return marshal(q)
}

// ParseReceiptsRequest decodes a ReceiptsRequest. One in the canonical
// form MarshalReceiptsRequest writes is read by a fast path
// (receipts_fast.go), anything else by encoding/json, which reads the
// canonical form to the same value.
func ParseReceiptsRequest(b []byte) (ReceiptsRequest, error) {
	if len(b) <= MaxMessageSize {
		if q, ok := fastReceiptsRequest(b); ok {
			if err := q.check(); err != nil {
				return ReceiptsRequest{}, err
			}
			return q, nil
		}
	}
	var q ReceiptsRequest
	if err := unmarshal(b, &q); err != nil {
		return ReceiptsRequest{}, err
	}
	if err := q.check(); err != nil {
		return ReceiptsRequest{}, err
	}
	return q, nil
}

func (q ReceiptsRequest) check() error {
	if q.V != ReceiptBatchVersion {
		return fmt.Errorf("%w: a batched receipt request is of version %d, not %d", ErrMessage, ReceiptBatchVersion, q.V)
	}
	if len(q.Events) == 0 || len(q.Events) > MaxReceiptBatch {
		return fmt.Errorf("%w: a batched receipt request asks about 1…%d events, not %d", ErrMessage, MaxReceiptBatch, len(q.Events))
	}
	if q.WaitMillis < 0 || q.WaitMillis > 1<<31 {
		return fmt.Errorf("%w: wait_ms %d is not 0…2^31", ErrMessage, q.WaitMillis)
	}
	for i, e := range q.Events {
		if err := CheckEventID(e.ID); err != nil {
			return fmt.Errorf("%w: events[%d]: %w", ErrMessage, i, err)
		}
	}
	return nil
}

// The statuses of one event in a ReceiptsReply: StatusOK, StatusPending,
// StatusRejected, and EventUnknown.
//
//   - StatusOK: the event is at Index, and Proof is its inclusion proof in
//     the tree of the reply's checkpoint (absent when empty, a tree of one
//     leaf).
//   - StatusPending: not answerable yet (no signed checkpoint covers it, or
//     its message is not decided yet); Index is set if the event is
//     durable. Ask again.
//   - StatusRejected: the ledger refused the event; Code and Reason (at
//     most MaxStatusReason bytes) say why.
//   - EventUnknown: the ledger holds no record of the event (or not from
//     the message its query's Seq names) and will not wait for one: the
//     reply's StreamState says whether the stream lost it (StreamState.Lost)
//     or, for a query without Seq, which sequence to ask again with.

// A ReceiptsReply answers a ReceiptsRequest: Status StatusOK with one
// EventReceipt per query, in the same order, or StatusError with a Code
// and Reason ("bad-request", "unavailable", "busy").
type ReceiptsReply struct {
	// Checkpoint is the signed checkpoint note, verbatim, that every
	// StatusOK event's proof leads to; absent if no event is StatusOK.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Code and Reason: the error's, with StatusError.
	Code string `json:"code,omitempty"`
	// Decided and Last are the StreamState, read before the events were
	// looked up; both or neither; only in a reply with an EventUnknown
	// event (absent there too if the ledger could not read the stream).
	Decided *uint64        `json:"decided,omitempty"`
	Events  []EventReceipt `json:"events,omitempty"`
	Last    *uint64        `json:"last,omitempty"`
	Reason  string         `json:"reason,omitempty"`
	Status  string         `json:"status"`
	// V is ReceiptBatchVersion.
	V int `json:"v"`
}

// An EventReceipt is the answer about one event of a ReceiptsRequest.
type EventReceipt struct {
	Code string `json:"code,omitempty"`
	ID   string `json:"id"`
	// Index is the leaf index of a StatusOK event, and of a StatusPending
	// one that is durable.
	Index *uint64 `json:"index,omitempty"`
	// Proof is the inclusion proof of a StatusOK event (ReceiptReply.Proof).
	Proof  []Hash `json:"proof,omitempty"`
	Reason string `json:"reason,omitempty"`
	Status string `json:"status"`
}

// State returns the reply's StreamState, and false if it carries none.
func (p ReceiptsReply) State() (StreamState, bool) { return stateOf(p.Decided, p.Last) }

// MarshalReceiptsReply encodes p.
func MarshalReceiptsReply(p ReceiptsReply) ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	return marshal(p)
}

// ParseReceiptsReply decodes a ReceiptsReply and checks that its members
// fit its status. It does not check the proofs: the SDK does, event by
// event, against its own bytes of each event and the log's key.
//
// A reply in the canonical form MarshalReceiptsReply writes is read by a
// fast path (receipts_fast.go); anything else by encoding/json, which
// reads the canonical form to the same value.
func ParseReceiptsReply(b []byte) (ReceiptsReply, error) {
	if len(b) <= MaxMessageSize {
		if p, ok := fastReceiptsReply(b); ok {
			if err := p.check(); err != nil {
				return ReceiptsReply{}, err
			}
			return p, nil
		}
	}
	return parseChecked[ReceiptsReply](b)
}

func (p ReceiptsReply) check() error {
	if err := checkStateReply("a batched receipt reply is of", p.V, ReceiptBatchVersion, p.Decided, p.Last, p.Reason); err != nil {
		return err
	}
	if ok, err := checkStatus("a batched receipt reply", "events", p.Status, p.Code, p.Reason, p.Checkpoint, p.Decided, len(p.Events), p.Events == nil, MaxReceiptBatch); !ok || err != nil {
		return err
	}
	ok, unknown := false, false
	for i, e := range p.Events {
		if err := e.check(); err != nil {
			return fmt.Errorf("%w: events[%d]: %w", ErrMessage, i, err)
		}
		ok = ok || e.Status == StatusOK
		unknown = unknown || e.Status == EventUnknown
	}
	if ok != (p.Checkpoint != "") {
		return fmt.Errorf("%w: the checkpoint comes with an event of status ok, and only with one", ErrMessage)
	}
	if p.Decided != nil && !unknown {
		return fmt.Errorf("%w: decided and last come with an event of status unknown only", ErrMessage)
	}
	return nil
}

func (e EventReceipt) check() error {
	if err := CheckEventID(e.ID); err != nil {
		return err
	}
	if len(e.Reason) > MaxStatusReason {
		return fmt.Errorf("reason of %d bytes exceeds %d", len(e.Reason), MaxStatusReason)
	}
	if e.Proof != nil && (e.Status != StatusOK || len(e.Proof) == 0) {
		return errors.New("a proof, not empty, is in an event of status ok only")
	}
	if len(e.Proof) > MaxProofHashes {
		return fmt.Errorf("a proof of %d hashes, more than %d", len(e.Proof), MaxProofHashes)
	}
	switch e.Status {
	case StatusOK:
		if e.Index == nil || e.Code != "" || e.Reason != "" {
			return errors.New("status ok needs index (and its proof) only")
		}
	case StatusPending:
		if e.Code != "" || e.Reason != "" {
			return errors.New("status pending carries no code or reason")
		}
	case EventUnknown:
		if e.Index != nil || e.Code != "" || e.Reason != "" {
			return errors.New("status unknown carries nothing")
		}
	case StatusRejected:
		if e.Index != nil {
			return errors.New("status rejected carries no index")
		}
		return CheckCode(e.Code)
	default:
		return fmt.Errorf("unknown status %q", e.Status)
	}
	return nil
}
