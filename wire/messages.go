package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
)

// ErrMessage is wrapped by every error parsing a rejection or receipt
// message.
var ErrMessage = errors.New("malformed zarlog wire message")

// MaxMessageSize bounds the rejection and receipt messages Parse accepts.
const MaxMessageSize = 1 << 20

// MaxReasonLength bounds a rejection reason; longer reasons are cut when
// announced.
const MaxReasonLength = 4096

// codeRE is the shape of a machine-readable rejection or error code.
var codeRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// CheckCode returns nil if code is a valid machine-readable code:
// [a-z0-9][a-z0-9-]{0,63}.
func CheckCode(code string) error {
	if !codeRE.MatchString(code) {
		return fmt.Errorf("%w: code %q is not [a-z0-9][a-z0-9-]{0,63}", ErrMessage, code)
	}
	return nil
}

// A Rejection is announced on Subjects.Rejected for every event the ledger
// refused (and recorded, with the same code and reason, in its rejected
// store). It is JSON with the members in the order below; empty members are
// left out.
type Rejection struct {
	// Code is the machine-readable reason, e.g. "bad-signature".
	Code string `json:"code"`
	// ID is the event's id if the ledger could read one.
	ID string `json:"id,omitempty"`
	// MsgID is the Nats-Msg-Id of the NATS message that carried the event.
	MsgID string `json:"msg_id,omitempty"`
	// Part is the event's position in a multi-event message, 0 otherwise.
	Part int `json:"part,omitempty"`
	// Reason says in words what is wrong, with the numbers.
	Reason string `json:"reason"`
	// Seq is the JetStream stream sequence of the message.
	Seq uint64 `json:"seq"`
	// SHA256 is the hex SHA-256 of the rejected bytes, so an emitter can
	// match a rejection to what it sent even without an id.
	SHA256 string `json:"sha256"`
}

// MarshalRejection encodes r.
func MarshalRejection(r Rejection) ([]byte, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	return marshal(r)
}

// ParseRejection decodes a Rejection, failing with ErrMessage on unknown or
// missing members, trailing data or invalid values.
func ParseRejection(b []byte) (Rejection, error) {
	var r Rejection
	if err := unmarshal(b, &r); err != nil {
		return Rejection{}, err
	}
	if err := r.check(); err != nil {
		return Rejection{}, err
	}
	return r, nil
}

func (r Rejection) check() error {
	if err := CheckCode(r.Code); err != nil {
		return err
	}
	if r.Part < 0 || r.Part >= MaxBatchEvents {
		return fmt.Errorf("%w: part %d is not 0…%d", ErrMessage, r.Part, MaxBatchEvents-1)
	}
	if len(r.Reason) > MaxReasonLength {
		return fmt.Errorf("%w: reason of %d bytes exceeds %d", ErrMessage, len(r.Reason), MaxReasonLength)
	}
	if len(r.ID) > MaxIDLength || len(r.MsgID) > 256 {
		return fmt.Errorf("%w: id of %d or msg_id of %d bytes too long", ErrMessage, len(r.ID), len(r.MsgID))
	}
	if !isHex(r.SHA256, 64) {
		return fmt.Errorf("%w: sha256 %q is not 64 lowercase hex digits", ErrMessage, r.SHA256)
	}
	return nil
}

// A ReceiptRequest asks, on Subjects.Receipts, for the receipt of an event.
type ReceiptRequest struct {
	// ID is the event id.
	ID string `json:"id"`
	// WaitMillis is how long the ledger may hold the request waiting for
	// the event to become durable and covered by a signed checkpoint before
	// answering "pending". 0 means answer at once. The ledger caps it.
	WaitMillis int64 `json:"wait_ms,omitempty"`
	// Seq, if not 0, is the stream sequence of the message that carried
	// this copy of the event (its JetStream publish ack's): the ledger then
	// answers only from its decision of that message, never from an
	// earlier one of the same id (an event refused, then sent again once
	// its game allowed it, must not get the old refusal).
	Seq uint64 `json:"seq,omitempty"`
}

// MarshalReceiptRequest encodes q.
func MarshalReceiptRequest(q ReceiptRequest) ([]byte, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	return marshal(q)
}

// ParseReceiptRequest decodes a ReceiptRequest.
func ParseReceiptRequest(b []byte) (ReceiptRequest, error) {
	var q ReceiptRequest
	if err := unmarshal(b, &q); err != nil {
		return ReceiptRequest{}, err
	}
	if err := q.check(); err != nil {
		return ReceiptRequest{}, err
	}
	return q, nil
}

func (q ReceiptRequest) check() error {
	if err := CheckEventID(q.ID); err != nil {
		return fmt.Errorf("%w: %w", ErrMessage, err)
	}
	if q.WaitMillis < 0 || q.WaitMillis > 1<<31 {
		return fmt.Errorf("%w: wait_ms %d is not 0…2^31", ErrMessage, q.WaitMillis)
	}
	return nil
}

// Receipt statuses.
const (
	// StatusOK: the event is durable at Index and Checkpoint, a signed
	// checkpoint of a tree larger than Index, covers it.
	StatusOK = "ok"
	// StatusPending: not yet; ask again. Index is set if the event is
	// already durable but no signed checkpoint covers it yet.
	StatusPending = "pending"
	// StatusRejected: the ledger refused the event; Code and Reason say why.
	StatusRejected = "rejected"
	// StatusError: the request could not be served; Code and Reason say why
	// ("bad-request", "unavailable", "busy").
	StatusError = "error"
)

// A ReceiptReply answers a ReceiptRequest.
type ReceiptReply struct {
	// Checkpoint is the signed checkpoint note (C2SP tlog-checkpoint signed
	// as a C2SP signed note), verbatim. Set iff Status is StatusOK.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Code is the rejection or error code.
	Code string `json:"code,omitempty"`
	// ID is the requested event id.
	ID string `json:"id"`
	// Index is the event's leaf index, when known.
	Index *uint64 `json:"index,omitempty"`
	// Reason explains a rejection or error.
	Reason string `json:"reason,omitempty"`
	// Status is one of the Status constants.
	Status string `json:"status"`
}

// MarshalReceiptReply encodes p.
func MarshalReceiptReply(p ReceiptReply) ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	return marshal(p)
}

// ParseReceiptReply decodes a ReceiptReply and checks that its members fit
// its status.
func ParseReceiptReply(b []byte) (ReceiptReply, error) {
	var p ReceiptReply
	if err := unmarshal(b, &p); err != nil {
		return ReceiptReply{}, err
	}
	if err := p.check(); err != nil {
		return ReceiptReply{}, err
	}
	return p, nil
}

func (p ReceiptReply) check() error {
	if len(p.ID) > MaxIDLength {
		return fmt.Errorf("%w: id of %d bytes exceeds %d", ErrMessage, len(p.ID), MaxIDLength)
	}
	if len(p.Reason) > MaxReasonLength {
		return fmt.Errorf("%w: reason of %d bytes exceeds %d", ErrMessage, len(p.Reason), MaxReasonLength)
	}
	switch p.Status {
	case StatusOK:
		if p.Index == nil || p.Checkpoint == "" || p.Code != "" || p.Reason != "" {
			return fmt.Errorf("%w: status ok needs index and checkpoint only", ErrMessage)
		}
	case StatusPending:
		if p.Checkpoint != "" || p.Code != "" {
			return fmt.Errorf("%w: status pending carries no checkpoint or code", ErrMessage)
		}
	case StatusRejected, StatusError:
		if p.Checkpoint != "" || p.Index != nil {
			return fmt.Errorf("%w: status %s carries no index or checkpoint", ErrMessage, p.Status)
		}
		if err := CheckCode(p.Code); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: unknown status %q", ErrMessage, p.Status)
	}
	return nil
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding %T: %w", v, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

func unmarshal(b []byte, v any) error {
	if len(b) > MaxMessageSize {
		return fmt.Errorf("%w: %d bytes exceeds %d", ErrMessage, len(b), MaxMessageSize)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %w", ErrMessage, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: trailing data after the JSON object", ErrMessage)
	}
	return nil
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}
