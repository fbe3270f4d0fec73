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

// ReceiptStateVersion is the version of the receipt protocol in which the
// ledger also says how far it has read the events stream, so that an
// emitter can tell an event the stream lost from one not yet read
// (docs/NATS.md §5, "Resending"): a request with "v": 3 gets a reply with
// "v": 3, as version 2's, except that a pending reply for an event the
// ledger holds no record of carries "decided" and "last" (the StreamState).
// Status requests (StatusRequest) are of this version only.
const ReceiptStateVersion = 3

// MaxProofHashes is the length of the longest inclusion proof, in a tree
// of 2^64−1 leaves.
const MaxProofHashes = 64

// A ReceiptRequest asks, on Subjects.Receipts, for the receipt of an event.
type ReceiptRequest struct {
	// ID is the event id. Event ids are per emitter: the ledger answers
	// about the requesting emitter's event with this id.
	ID string `json:"id"`
	// V is the protocol version: 0 (the member absent, version 1),
	// ReceiptProofVersion or ReceiptStateVersion. The SDK asks for
	// ReceiptStateVersion.
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
	if v != 0 && v != ReceiptProofVersion && v != ReceiptStateVersion {
		return fmt.Errorf("%w: receipt protocol version %d is not %d or %d (or absent, version 1)", ErrMessage, v, ReceiptProofVersion, ReceiptStateVersion)
	}
	return nil
}

// A StreamState is how far the ledger has read the events stream, as it
// tells an emitter in pending replies and status replies of version
// ReceiptStateVersion. An emitter compares it with the stream sequence S
// of the message that carried its event (its publish ack's): if the ledger
// holds no record of the event and Decided > S, or Last < S and
// Last < Decided, the stream lost the message (or the ledger that decided
// it lost its decision), and the emitter publishes the event again
// (docs/NATS.md §5, "Resending"). Both are read before the ledger looks
// the event up.
type StreamState struct {
	// Decided is the ingest's cursor: every message of the stream whose
	// sequence is below it has been decided by this ledger (its events
	// appended or rejected, durably) or was gone from the stream when the
	// ingest reached it.
	Decided uint64
	// Last is the stream's last sequence, read after the request arrived:
	// below S, the stream no longer holds the message at S.
	Last uint64
}

// Lost reports whether an event that the ledger holds no record of, and
// whose message had stream sequence seq, is lost by st: Decided > seq, or
// Last < seq and Last < Decided. It is the SDKs' rule for publishing an
// event again.
func (st StreamState) Lost(seq uint64) bool {
	return seq < st.Decided || st.Last < seq && st.Last < st.Decided
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
	// V is the protocol version, the request's: 0 (absent, version 1),
	// ReceiptProofVersion or ReceiptStateVersion.
	V int `json:"v,omitempty"`
	// Decided and Last are the StreamState, in a pending reply of version
	// ReceiptStateVersion without Index (the ledger holds no record of the
	// event), and only there; both or neither (the ledger could not read
	// the stream's state).
	Decided *uint64 `json:"decided,omitempty"`
	Last    *uint64 `json:"last,omitempty"`
}

// State returns the reply's StreamState, and false if it carries none.
func (p ReceiptReply) State() (StreamState, bool) {
	if p.Decided == nil || p.Last == nil {
		return StreamState{}, false
	}
	return StreamState{Decided: *p.Decided, Last: *p.Last}, true
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
	return parseChecked[ReceiptReply](b)
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
	if p.Proof != nil && (p.Status != StatusOK || p.V < ReceiptProofVersion) {
		return fmt.Errorf("%w: a proof is in a reply of version %d or %d with status ok only", ErrMessage, ReceiptProofVersion, ReceiptStateVersion)
	}
	if (p.Decided == nil) != (p.Last == nil) {
		return fmt.Errorf("%w: decided and last come together", ErrMessage)
	}
	if p.Decided != nil && (p.Status != StatusPending || p.V != ReceiptStateVersion || p.Index != nil) {
		return fmt.Errorf("%w: decided and last are in a pending reply of version %d without index only", ErrMessage, ReceiptStateVersion)
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

// checkStatus checks a reply's status against its members: "ok" carries
// 1…max items (events or messages) and no code or reason; "error" carries
// no checkpoint, stream state or items, and a known code (CheckCode). It
// reports whether the reply is ok, its items then to be checked by the
// caller.
func checkStatus(reply, items, status, code, reason, checkpoint string, decided *uint64, n int, itemsNil bool, max int) (bool, error) {
	switch status {
	case StatusOK:
		if code != "" || reason != "" || n == 0 || n > max {
			return false, fmt.Errorf("%w: status ok carries 1…%d %s and no code or reason", ErrMessage, max, items)
		}
		return true, nil
	case StatusError:
		if checkpoint != "" || decided != nil || !itemsNil {
			return false, fmt.Errorf("%w: status error carries no checkpoint, state or %s", ErrMessage, items)
		}
		return false, CheckCode(code)
	default:
		return false, fmt.Errorf("%w: unknown status %q of %s", ErrMessage, status, reply)
	}
}

// parseChecked decodes a reply of type T (unmarshal) and checks that its
// members fit together (T's check): the Parse functions of the replies.
func parseChecked[T interface{ check() error }](b []byte) (T, error) {
	var p, zero T
	if err := unmarshal(b, &p); err != nil {
		return zero, err
	}
	if err := p.check(); err != nil {
		return zero, err
	}
	return p, nil
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

// MaxStatusEvents is the most events one StatusRequest asks about.
const MaxStatusEvents = 256

// MaxStatusReason bounds the reason of a rejected event in a StatusReply
// (longer ones are cut): a reply of MaxStatusEvents events stays far below
// NATS's 1 MiB payload. A receipt request gives the whole reason.
const MaxStatusReason = 256

// A StatusRequest asks, on Subjects.Receipts, what the ledger knows of up
// to MaxStatusEvents of the emitter's events at once, without waiting: what
// an SDK sends to follow the events it holds until they are logged
// (docs/NATS.md §5, "Resending"). Its version is ReceiptStateVersion.
type StatusRequest struct {
	// Events are the events asked about, at least one.
	Events []StatusQuery `json:"events"`
	// V is ReceiptStateVersion.
	V int `json:"v"`
}

// A StatusQuery names one event of a StatusRequest.
type StatusQuery struct {
	// ID is the event id (the requesting emitter's).
	ID string `json:"id"`
	// Seq, if not 0, is the stream sequence of the message that carried
	// the latest copy of the event: the ledger then answers "unknown"
	// rather than from an earlier copy until it has decided that message
	// (as ReceiptRequest.Seq).
	Seq uint64 `json:"seq,omitempty"`
}

// MarshalStatusRequest encodes q.
func MarshalStatusRequest(q StatusRequest) ([]byte, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	return marshal(q)
}

// ParseStatusRequest decodes a StatusRequest.
func ParseStatusRequest(b []byte) (StatusRequest, error) {
	var q StatusRequest
	if err := unmarshal(b, &q); err != nil {
		return StatusRequest{}, err
	}
	if err := q.check(); err != nil {
		return StatusRequest{}, err
	}
	return q, nil
}

func (q StatusRequest) check() error {
	if q.V != ReceiptStateVersion {
		return fmt.Errorf("%w: a status request is of receipt protocol version %d, not %d", ErrMessage, ReceiptStateVersion, q.V)
	}
	if len(q.Events) == 0 || len(q.Events) > MaxStatusEvents {
		return fmt.Errorf("%w: a status request asks about 1…%d events, not %d", ErrMessage, MaxStatusEvents, len(q.Events))
	}
	for i, e := range q.Events {
		if err := CheckEventID(e.ID); err != nil {
			return fmt.Errorf("%w: events[%d]: %w", ErrMessage, i, err)
		}
	}
	return nil
}

// The statuses of one event in a StatusReply.
const (
	// EventLogged: the event is in the log at Index, and the reply's
	// checkpoint, a signed checkpoint of a larger tree, covers it.
	EventLogged = "logged"
	// EventAppended: the event is durable at Index; no signed checkpoint
	// covers it yet.
	EventAppended = "appended"
	// EventUnknown: the ledger holds no record of the event (or not from
	// the message the query's Seq names).
	EventUnknown = "unknown"
	// EventRejected: the ledger refused the event; Code and Reason say why.
	EventRejected = "rejected"
)

// A StatusReply answers a StatusRequest: Status StatusOK with one
// EventStatus per query, in the same order, or StatusError with a Code and
// Reason ("bad-request", "unavailable", "busy").
type StatusReply struct {
	// Checkpoint is the latest signed checkpoint note, verbatim, read
	// before the events were looked up; absent if the ledger has signed
	// none yet.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Code and Reason: the error's, with StatusError.
	Code string `json:"code,omitempty"`
	// Decided and Last are the StreamState, read before the events were
	// looked up; both or neither (the ledger could not read the stream).
	Decided *uint64       `json:"decided,omitempty"`
	Events  []EventStatus `json:"events,omitempty"`
	Last    *uint64       `json:"last,omitempty"`
	Reason  string        `json:"reason,omitempty"`
	Status  string        `json:"status"`
	// V is ReceiptStateVersion.
	V int `json:"v"`
}

// State returns the reply's StreamState, and false if it carries none.
func (p StatusReply) State() (StreamState, bool) { return stateOf(p.Decided, p.Last) }

// stateOf is a reply's StreamState from its members, and false if it
// carries none.
func stateOf(decided, last *uint64) (StreamState, bool) {
	if decided == nil || last == nil {
		return StreamState{}, false
	}
	return StreamState{Decided: *decided, Last: *last}, true
}

// checkStateReply checks what a status reply and a message status reply
// share: version v is want (what names the reply in the error: "… version
// %d, not %d"), decided and last come together, and the reason's length.
func checkStateReply(what string, v, want int, decided, last *uint64, reason string) error {
	if v != want {
		return fmt.Errorf("%w: %s version %d, not %d", ErrMessage, what, want, v)
	}
	if (decided == nil) != (last == nil) {
		return fmt.Errorf("%w: decided and last come together", ErrMessage)
	}
	if len(reason) > MaxReasonLength {
		return fmt.Errorf("%w: reason of %d bytes exceeds %d", ErrMessage, len(reason), MaxReasonLength)
	}
	return nil
}

// An EventStatus is what the ledger knows of one event of a StatusRequest.
type EventStatus struct {
	// Code and Reason (at most MaxStatusReason bytes) say why an
	// EventRejected event was refused.
	Code string `json:"code,omitempty"`
	ID   string `json:"id"`
	// Index is the leaf index of an EventLogged or EventAppended event.
	Index  *uint64 `json:"index,omitempty"`
	Reason string  `json:"reason,omitempty"`
	// Status is one of the Event constants.
	Status string `json:"status"`
}

// MarshalStatusReply encodes p.
func MarshalStatusReply(p StatusReply) ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	return marshal(p)
}

// ParseStatusReply decodes a StatusReply and checks that its members fit
// its status.
func ParseStatusReply(b []byte) (StatusReply, error) {
	return parseChecked[StatusReply](b)
}

func (p StatusReply) check() error {
	if err := checkStateReply("a status reply is of receipt protocol", p.V, ReceiptStateVersion, p.Decided, p.Last, p.Reason); err != nil {
		return err
	}
	if ok, err := checkStatus("a status reply", "events", p.Status, p.Code, p.Reason, p.Checkpoint, p.Decided, len(p.Events), p.Events == nil, MaxStatusEvents); !ok || err != nil {
		return err
	}
	logged := false
	for i, e := range p.Events {
		if err := e.check(); err != nil {
			return fmt.Errorf("%w: events[%d]: %w", ErrMessage, i, err)
		}
		logged = logged || e.Status == EventLogged
	}
	if logged && p.Checkpoint == "" {
		return fmt.Errorf("%w: a logged event without the checkpoint that covers it", ErrMessage)
	}
	return nil
}

func (e EventStatus) check() error {
	if err := CheckEventID(e.ID); err != nil {
		return err
	}
	if len(e.Reason) > MaxStatusReason {
		return fmt.Errorf("reason of %d bytes exceeds %d", len(e.Reason), MaxStatusReason)
	}
	switch e.Status {
	case EventLogged, EventAppended:
		if e.Index == nil || e.Code != "" || e.Reason != "" {
			return fmt.Errorf("status %s needs index only", e.Status)
		}
	case EventUnknown:
		if e.Index != nil || e.Code != "" || e.Reason != "" {
			return errors.New("status unknown carries nothing")
		}
	case EventRejected:
		if e.Index != nil {
			return errors.New("status rejected carries no index")
		}
		return CheckCode(e.Code)
	default:
		return fmt.Errorf("unknown status %q", e.Status)
	}
	return nil
}

// MessageStatusVersion is the version of the message status protocol: an
// SDK that knows the stream sequence and the payload of each message it
// published (its publish ack's sequence) asks, on Subjects.Receipts, what
// the ledger decided of whole messages (MessageStatusRequest), rather than
// of each event (StatusRequest, still served): a message of a few hundred
// events is confirmed by one entry. The ledger answers from a record of
// the messages it decided lately, kept in memory; whatever it cannot answer
// for sure (a message it has no record of, one not decided whole as
// appended) the SDK asks about event by event, as before (docs/NATS.md §5,
// "Following per message"). A ledger that predates it answers the request
// "bad-request"; the SDK then follows event by event.
const MessageStatusVersion = 4

// MaxStatusMessages is the most messages one MessageStatusRequest asks
// about.
const MaxStatusMessages = 256

// A MessageStatusRequest asks what the ledger decided of up to
// MaxStatusMessages of the emitter's messages, without waiting.
type MessageStatusRequest struct {
	// Messages are the messages asked about, at least one.
	Messages []MessageQuery `json:"messages"`
	// V is MessageStatusVersion.
	V int `json:"v"`
}

// A MessageQuery names one message of a MessageStatusRequest: its stream
// sequence and the SHA-256 of its payload, as published. The sequence
// alone does not name a message: a stream that lost its tail gives its
// sequences again (docs/NATS.md §5, "Sequences given twice").
type MessageQuery struct {
	Seq    uint64 `json:"seq"`
	SHA256 Hash   `json:"sha256"`
}

// MarshalMessageStatusRequest encodes q.
func MarshalMessageStatusRequest(q MessageStatusRequest) ([]byte, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	return marshal(q)
}

// ParseMessageStatusRequest decodes a MessageStatusRequest.
func ParseMessageStatusRequest(b []byte) (MessageStatusRequest, error) {
	var q MessageStatusRequest
	if err := unmarshal(b, &q); err != nil {
		return MessageStatusRequest{}, err
	}
	if err := q.check(); err != nil {
		return MessageStatusRequest{}, err
	}
	return q, nil
}

func (q MessageStatusRequest) check() error {
	if q.V != MessageStatusVersion {
		return fmt.Errorf("%w: a message status request is of version %d, not %d", ErrMessage, MessageStatusVersion, q.V)
	}
	if len(q.Messages) == 0 || len(q.Messages) > MaxStatusMessages {
		return fmt.Errorf("%w: a message status request asks about 1…%d messages, not %d", ErrMessage, MaxStatusMessages, len(q.Messages))
	}
	for i, m := range q.Messages {
		if m.Seq == 0 {
			return fmt.Errorf("%w: messages[%d]: stream sequence 0", ErrMessage, i)
		}
	}
	return nil
}

// The statuses of one message in a MessageStatusReply.
const (
	// MessageLogged: the ledger decided the message at Seq with this
	// payload (the requesting emitter's), every one of its Events events
	// was appended or was a duplicate of an event in the log, the largest
	// of their leaf indexes is Index, and the reply's checkpoint covers
	// it: every event of the message is logged.
	MessageLogged = "logged"
	// MessageAppended: as MessageLogged, but no signed checkpoint covers
	// Index yet.
	MessageAppended = "appended"
	// MessageMixed: the ledger decided the message, and refused at least
	// one of its events: ask about its events (StatusRequest).
	MessageMixed = "mixed"
	// MessageUnknown: the ledger holds no record of this payload at Seq:
	// it has not decided the message yet (Seq is at or above Decided),
	// or it no longer keeps the record, or it decided another message at
	// Seq, or the stream lost the message. An SDK asks about its events
	// (StatusRequest) once Decided is above Seq, or once the StreamState
	// says it lost it.
	MessageUnknown = "unknown"
)

// A MessageStatusReply answers a MessageStatusRequest: Status StatusOK
// with one MessageStatus per query, in the same order, or StatusError with
// a Code and Reason ("bad-request", "unavailable", "busy").
type MessageStatusReply struct {
	// Checkpoint is the latest signed checkpoint note, verbatim, read
	// before the messages were looked up; absent if the ledger has signed
	// none yet.
	Checkpoint string `json:"checkpoint,omitempty"`
	Code       string `json:"code,omitempty"`
	// Decided and Last are the StreamState, read before the messages
	// were looked up; both or neither.
	Decided  *uint64         `json:"decided,omitempty"`
	Last     *uint64         `json:"last,omitempty"`
	Messages []MessageStatus `json:"messages,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Status   string          `json:"status"`
	// V is MessageStatusVersion.
	V int `json:"v"`
}

// State returns the reply's StreamState, and false if it carries none.
func (p MessageStatusReply) State() (StreamState, bool) { return stateOf(p.Decided, p.Last) }

// A MessageStatus is what the ledger knows of one message of a
// MessageStatusRequest.
type MessageStatus struct {
	// Events is the number of events of a MessageLogged or
	// MessageAppended message.
	Events int `json:"events,omitempty"`
	// Index is the largest leaf index of the events of a MessageLogged or
	// MessageAppended message.
	Index  *uint64 `json:"index,omitempty"`
	Seq    uint64  `json:"seq"`
	Status string  `json:"status"`
}

// MarshalMessageStatusReply encodes p.
func MarshalMessageStatusReply(p MessageStatusReply) ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	return marshal(p)
}

// ParseMessageStatusReply decodes a MessageStatusReply and checks that its
// members fit its status.
func ParseMessageStatusReply(b []byte) (MessageStatusReply, error) {
	return parseChecked[MessageStatusReply](b)
}

func (p MessageStatusReply) check() error {
	if err := checkStateReply("a message status reply is of", p.V, MessageStatusVersion, p.Decided, p.Last, p.Reason); err != nil {
		return err
	}
	if ok, err := checkStatus("a message status reply", "messages", p.Status, p.Code, p.Reason, p.Checkpoint, p.Decided, len(p.Messages), p.Messages == nil, MaxStatusMessages); !ok || err != nil {
		return err
	}
	logged := false
	for i, m := range p.Messages {
		if err := m.check(); err != nil {
			return fmt.Errorf("%w: messages[%d]: %w", ErrMessage, i, err)
		}
		logged = logged || m.Status == MessageLogged
	}
	if logged && p.Checkpoint == "" {
		return fmt.Errorf("%w: a logged message without the checkpoint that covers it", ErrMessage)
	}
	return nil
}

func (m MessageStatus) check() error {
	if m.Seq == 0 {
		return errors.New("stream sequence 0")
	}
	switch m.Status {
	case MessageLogged, MessageAppended:
		if m.Index == nil || m.Events < 1 || m.Events > MaxBatchEvents {
			return fmt.Errorf("status %s needs an index and 1…%d events", m.Status, MaxBatchEvents)
		}
	case MessageMixed, MessageUnknown:
		if m.Index != nil || m.Events != 0 {
			return fmt.Errorf("status %s carries no index or events", m.Status)
		}
	default:
		return fmt.Errorf("unknown status %q", m.Status)
	}
	return nil
}
