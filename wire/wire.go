// Package wire defines how zarlog talks over NATS: the subjects, the headers,
// the framing of several events in one message, and the small JSON messages
// of the rejection and receipt protocols. It is pure (no NATS client, no I/O)
// and shared by the ledger's ingest (ledger/ingest) and the emitter SDK (sdk),
// so the two sides cannot drift apart. docs/NATS.md is the prose contract;
// docs/FORMATS.md §1 defines the events themselves.
//
// Subjects, for a root R (default "zarlog") and an emitter id E:
//
//	R.events.E    an emitter publishes its events here (request/reply: the
//	              ingest's admission answers with the stream's publish ack)
//	R.admitted.E  the admission forwards each message of E within E's
//	              backlog budget here (captured by the stream)
//	R.rejected.E  the ingest announces each rejected event of E here
//	R.receipts.E  E asks for receipts here (request/reply)
//	R.proofs.E    the publisher announces each proof bundle of E's games here
//
// The emitter id is the only subject token an emitter controls and the only
// identity the ingest takes from NATS: operators grant each backend publish
// permission on its own R.events.E, so the subject authenticates the emitter.
// Game ids may contain '.', so they never appear in a subject.
package wire

import (
	"errors"
	"fmt"
	"strings"
)

// DefaultRoot is the first subject token of every zarlog subject unless
// configured otherwise.
const DefaultRoot = "zarlog"

// Header names.
const (
	// HeaderMsgID is JetStream's deduplication header. zarlog's SDK does
	// not set it: JetStream deduplicates it across the whole stream, so an
	// emitter that sets it lets any other emitter suppress its events by
	// publishing first under the same id (docs/SECURITY.md). If a one-event
	// message carries it anyway, it must be the event's id (the ledger
	// refuses it otherwise: msg-id-mismatch).
	HeaderMsgID = "Nats-Msg-Id"
	// HeaderEvents marks a multi-event message and gives its number of
	// events (decimal, 2…MaxBatchEvents). A message without it holds exactly
	// one event.
	HeaderEvents = "Zarlog-Events"
	// HeaderGame names the game of a proof bundle announced on
	// Subjects.Proofs (game ids may contain '.', so they are never in a
	// subject).
	HeaderGame = "Zarlog-Game"
	// HeaderBundleSize gives the size in bytes of the announced proof bundle
	// (decimal). A bundle larger than the connection's maximum payload is
	// announced with an empty payload: fetch it over HTTP.
	HeaderBundleSize = "Zarlog-Bundle-Size"
	// HeaderCheckpointSize gives the tree size of the signed checkpoint the
	// announced bundle's proofs lead to (decimal).
	HeaderCheckpointSize = "Zarlog-Checkpoint-Size"
)

// Limits.
const (
	// MaxEventSize is the largest event, in bytes (the tlog-tiles entry
	// bundle limit, docs/FORMATS.md §1).
	MaxEventSize = 65535
	// MaxBatchEvents is the most events one NATS message may carry.
	MaxBatchEvents = 4096
	// MaxIDLength is the longest event id (docs/FORMATS.md §1.1).
	MaxIDLength = 128
	// MaxEmitterLength is the longest emitter id.
	MaxEmitterLength = 63
)

// Errors callers can branch on.
var (
	ErrSubject = errors.New("not a zarlog event subject")
	ErrEmitter = errors.New("invalid emitter id")
	ErrEventID = errors.New("invalid event id")
	ErrRoot    = errors.New("invalid subject root")
)

// Subjects builds and parses the subjects under one root. The zero value
// uses DefaultRoot.
type Subjects struct {
	// Root is the first subject token(s), e.g. "zarlog" or "acme.zarlog".
	// Empty means DefaultRoot.
	Root string
}

func (s Subjects) root() string {
	if s.Root == "" {
		return DefaultRoot
	}
	return s.Root
}

// Check returns an error wrapping ErrRoot unless the root is one or more
// dot-separated tokens without wildcards or whitespace.
func (s Subjects) Check() error {
	r := s.root()
	for t := range strings.SplitSeq(r, ".") {
		if t == "" || strings.ContainsAny(t, "*> \t\r\n") {
			return fmt.Errorf("%w: %q", ErrRoot, r)
		}
	}
	return nil
}

// Events is the subject emitter publishes its events on.
func (s Subjects) Events(emitter string) string { return s.root() + ".events." + emitter }

// EventsWildcard is every emitter's events subject, one token each: what
// the ingest's admission listens to.
func (s Subjects) EventsWildcard() string { return s.root() + ".events.*" }

// Admitted is the subject the ingest's admission forwards emitter's
// messages to, once they are within its backlog budget: the events stream
// captures it (docs/NATS.md §6). Emitters may not publish on it.
func (s Subjects) Admitted(emitter string) string { return s.root() + ".admitted." + emitter }

// AdmittedWildcard is the events stream's subject: every emitter's admitted
// subject.
func (s Subjects) AdmittedWildcard() string { return s.root() + ".admitted.*" }

// Rejected is the subject rejections of emitter's events are announced on.
func (s Subjects) Rejected(emitter string) string { return s.root() + ".rejected." + emitter }

// Receipts is the subject emitter sends receipt requests to.
func (s Subjects) Receipts(emitter string) string { return s.root() + ".receipts." + emitter }

// ReceiptsWildcard is the subject the ingest serves receipts on.
func (s Subjects) ReceiptsWildcard() string { return s.root() + ".receipts.*" }

// Proofs is the subject the proof bundles of emitter's games are announced
// on, one message per finished game (docs/NATS.md §5a).
func (s Subjects) Proofs(emitter string) string { return s.root() + ".proofs." + emitter }

// EmitterOf returns the emitter token of an events, admitted or receipts
// subject under this root (kind is "events", "admitted" or "receipts"). The token is returned
// as is, valid or not: the ledger decides whether it names a configured
// emitter. It fails with ErrSubject if subject has another shape.
func (s Subjects) EmitterOf(kind, subject string) (string, error) {
	prefix := s.root() + "." + kind + "."
	tok, ok := strings.CutPrefix(subject, prefix)
	if !ok || tok == "" || strings.Contains(tok, ".") {
		return "", fmt.Errorf("%w: %q is not %s<emitter>", ErrSubject, subject, prefix)
	}
	return tok, nil
}

// CheckEmitter returns nil if id is a valid emitter id:
// [a-z0-9][a-z0-9-]{0,62} (docs/FORMATS.md §1.1). Valid ids are also valid
// single NATS subject tokens.
func CheckEmitter(id string) error {
	if len(id) == 0 || len(id) > MaxEmitterLength {
		return fmt.Errorf("%w: length %d is not 1…%d", ErrEmitter, len(id), MaxEmitterLength)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' && i > 0
		if !ok {
			return fmt.Errorf("%w: byte %d of %q", ErrEmitter, i, id)
		}
	}
	return nil
}

// CheckEventID returns nil if id is a valid event id:
// [A-Za-z0-9][A-Za-z0-9._:-]{0,127} (docs/FORMATS.md §1.1).
func CheckEventID(id string) error {
	if len(id) == 0 || len(id) > MaxIDLength {
		return fmt.Errorf("%w: length %d is not 1…%d", ErrEventID, len(id), MaxIDLength)
	}
	if idBytes[id[0]]&idFirst == 0 {
		return fmt.Errorf("%w: byte %d of %q", ErrEventID, 0, id)
	}
	for i := 1; i < len(id); i++ {
		if idBytes[id[i]]&idLater == 0 {
			return fmt.Errorf("%w: byte %d of %q", ErrEventID, i, id)
		}
	}
	return nil
}

// idBytes says, for each byte, whether it may be an event id's first
// byte (idFirst: [A-Za-z0-9]) and whether it may be a later one (idLater:
// [A-Za-z0-9._:-]): one load a byte, where the comparisons cost about 1 µs
// an event in the SDK's PublishAsync at a human pace.
var idBytes = func() (t [256]uint8) {
	for c := range 256 {
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if alnum {
			t[c] |= idFirst
		}
		if alnum || c == '.' || c == '_' || c == ':' || c == '-' {
			t[c] |= idLater
		}
	}
	return t
}()

const (
	idFirst = 1 << iota
	idLater
)

// InboxPrefix is emitter's own reply-subject prefix, "_INBOX.<emitter>":
// the SDK receives publish acks and receipt replies under it, the
// permissions of docs/NATS.md §7 let the emitter read nothing else, and the
// ledger answers a receipt request only if its reply subject is under it.
func InboxPrefix(emitter string) string { return "_INBOX." + emitter }
