package wire

import (
	"bytes"
	"encoding/base64"
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

// ReceiptProofVersion is the version of the receipt protocol whose ok
// replies carry the event's inclusion proof: a request with "v": 2 gets a
// reply with "v": 2 and, when ok, "proof". A request without "v" (version
// 1, the protocol before it) gets a reply without either, as before, so a
// ledger serves the SDKs of both versions. Every other version is refused.
const ReceiptProofVersion = 2

// MaxProofHashes is the length of the longest inclusion proof, in a tree
// of 2^64−1 leaves.
const MaxProofHashes = 64

// A ReceiptRequest asks, on Subjects.Receipts, for the receipt of an event.
type ReceiptRequest struct {
	// ID is the event id. Event ids are per emitter: the ledger answers
	// about the requesting emitter's event with this id.
	ID string `json:"id"`
	// V is the protocol version: 0 (the member absent, version 1) or
	// ReceiptProofVersion. The SDK asks for ReceiptProofVersion.
	V int `json:"v,omitempty"`
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
	return checkVersion(q.V)
}

func checkVersion(v int) error {
	if v != 0 && v != ReceiptProofVersion {
		return fmt.Errorf("%w: receipt protocol version %d is not %d (or absent, version 1)", ErrMessage, v, ReceiptProofVersion)
	}
	return nil
}

// Receipt statuses.
const (
	// StatusOK: the event is durable at Index and Checkpoint, a signed
	// checkpoint of a tree larger than Index, covers it; in version
	// ReceiptProofVersion, Proof is its inclusion proof in that tree.
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
	// Proof is the RFC 6962 inclusion proof of the leaf at Index in the
	// tree of Checkpoint's size, from the leaf's sibling up (the hashes of a
	// C2SP tlog-proof, each standard base64 of 32 bytes). Only in a reply of
	// version ReceiptProofVersion with status ok; absent when the proof is
	// empty (a tree of one leaf).
	Proof []Hash `json:"proof,omitempty"`
	// Reason explains a rejection or error.
	Reason string `json:"reason,omitempty"`
	// Status is one of the Status constants.
	Status string `json:"status"`
	// V is the protocol version, the request's: 0 (absent, version 1) or
	// ReceiptProofVersion.
	V int `json:"v,omitempty"`
}

// A Hash is a SHA-256 hash of a Merkle tree, as standard base64 (with
// padding) in JSON: the form of a C2SP tlog-proof's hash lines.
type Hash [32]byte

// MarshalText returns h in standard base64.
func (h Hash) MarshalText() ([]byte, error) {
	return base64.StdEncoding.AppendEncode(nil, h[:]), nil
}

// UnmarshalJSON reads h from a JSON string of standard base64 of exactly
// 32 bytes, in its one canonical form (padding, no stray bits, no escapes);
// null and anything else are refused.
func (h *Hash) UnmarshalJSON(b []byte) error {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		return h.UnmarshalText(b[1 : len(b)-1])
	}
	return h.UnmarshalText(b)
}

// UnmarshalText reads h from standard base64 of exactly 32 bytes, in its
// one canonical form (padding, no stray bits).
func (h *Hash) UnmarshalText(b []byte) error {
	var out [33]byte // 44 base64 characters decode to at most 33 bytes
	if len(b) == base64.StdEncoding.EncodedLen(32) {
		if n, err := base64.StdEncoding.Strict().Decode(out[:], b); err == nil && n == 32 {
			*h = Hash(out[:32])
			return nil
		}
	}
	if len(b) > 64 {
		b = append(b[:61:61], "..."...)
	}
	return fmt.Errorf("%w: hash %q is not standard base64 of 32 bytes", ErrMessage, b)
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
	if err := checkVersion(p.V); err != nil {
		return err
	}
	if p.Proof != nil && (p.Status != StatusOK || p.V != ReceiptProofVersion) {
		return fmt.Errorf("%w: a proof is in a reply of version %d with status ok only", ErrMessage, ReceiptProofVersion)
	}
	if p.Proof != nil && len(p.Proof) == 0 {
		return fmt.Errorf("%w: an empty proof is written without the proof member", ErrMessage)
	}
	if len(p.Proof) > MaxProofHashes {
		return fmt.Errorf("%w: a proof of %d hashes, more than %d", ErrMessage, len(p.Proof), MaxProofHashes)
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
