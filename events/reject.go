package events

import (
	"errors"
	"fmt"
)

// A Code is the stable machine-readable reason an event was refused. Codes
// are part of the contract (docs/FORMATS.md §1.5): the ledger stores them with
// every rejected event, counts them in its metrics and sends them back to the
// emitter. A code is never renamed; new codes may be added.
type Code string

// Rejection codes, in the order the checks run (FORMATS.md §1.5): when an
// event breaks several rules, the code of the first check that fails is
// reported. Apply checks the emitter, the game, its emitter, its scheme,
// closed and seq in this order, then the rules of the event's type.
const (
	// Parse.
	CodeTooLarge     Code = "too-large"     // more than MaxEventSize bytes
	CodeMalformed    Code = "malformed"     // not JSON, or not an event: a member missing, unknown, of the wrong type or out of range
	CodeNotCanonical Code = "not-canonical" // valid JSON but not its canonical form

	// Verify (the emitter's key).
	CodeUnknownEmitter Code = "unknown-emitter" // no key is configured for the emitter
	CodeBadSignature   Code = "bad-signature"   // the sig of a binding event does not verify

	// CodeDuplicateID is the ledger's: an event id already in the log with
	// other bytes. This package never returns it (the ledger has the index
	// and checks it before Apply); it is defined here so all codes live in
	// one place.
	CodeDuplicateID Code = "duplicate-id"
	// CodeMsgIDMismatch is the ledger's too: a one-event message whose
	// Nats-Msg-Id header is not the event's id.
	CodeMsgIDMismatch Code = "msg-id-mismatch"
	// CodeReservedID is the ledger's too: an id of the form of a canonical
	// id (CanonicalID: "<game>:<seq>") that is not the event's own.
	CodeReservedID Code = "reserved-id"

	// Apply (the game's history).
	CodeWrongEmitter        Code = "wrong-emitter"         // the emitter member is not the NATS-authenticated emitter
	CodeUnknownGame         Code = "unknown-game"          // a game's first event is not its commit
	CodeGameExists          Code = "game-exists"           // a commit for a game that already exists
	CodeForeignGame         Code = "foreign-game"          // the game was committed by another emitter
	CodeWrongScheme         Code = "wrong-scheme"          // the event's scheme is not its game's
	CodeGameClosed          Code = "game-closed"           // the game's last event is already logged
	CodeOutOfOrder          Code = "out-of-order"          // seq is not the game's next
	CodeNotAllowedNow       Code = "not-allowed-now"       // the type may not follow the game's history (yet, or any more)
	CodeBadSequence         Code = "bad-sequence"          // a roll breaks the roll-sequence rules
	CodeUnknownChain        Code = "unknown-chain"         // the anchor names a drand chain the ledger does not pin
	CodeRoundAlreadyExisted Code = "round-already-existed" // the anchor round existed at sealedAt or when the commit was appended
	CodeSealedInFuture      Code = "sealed-in-future"      // sealedAt is later than the ledger's clock allows
	CodeBadBeacon           Code = "bad-beacon"            // the beacon is not the one named, or does not verify
	CodeDuplicateRollID     Code = "duplicate-roll-id"     // a roll-commit reuses a rollId of its match
	CodeWrongRoll           Code = "wrong-roll"            // roll-second/roll-reveal names a roll that is not the pending one
	CodeIllegalMove         Code = "illegal-move"          // a move breaks the rules (or plays a roll twice, or one that is not played)
	CodeMoveOwed            Code = "move-owed"             // a roll or a finished end while a played roll's move is not logged (games whose moves are logged)
	CodeWrongResult         Code = "wrong-result"          // a finished end whose winner or points the final position does not give (games whose moves are logged)
)

// Codes returns every rejection code, in check order.
func Codes() []Code {
	return []Code{
		CodeTooLarge, CodeMalformed, CodeNotCanonical,
		CodeUnknownEmitter, CodeBadSignature,
		CodeMsgIDMismatch, CodeReservedID, CodeDuplicateID,
		CodeWrongEmitter, CodeUnknownGame, CodeGameExists, CodeForeignGame, CodeWrongScheme,
		CodeGameClosed, CodeOutOfOrder, CodeNotAllowedNow, CodeBadSequence,
		CodeUnknownChain, CodeRoundAlreadyExisted, CodeSealedInFuture, CodeBadBeacon,
		CodeDuplicateRollID, CodeWrongRoll, CodeIllegalMove, CodeMoveOwed, CodeWrongResult,
	}
}

// A RejectError says why an event was refused: a stable Code, the member the
// problem is in (a dotted path such as "body.seats[1]", or "" for the whole
// event) and a human message with the numbers. Err is the underlying error
// where there is one (a cjson.SyntaxError, a dice.SequenceError, a
// MoveChecker's error).
type RejectError struct {
	Code  Code
	Field string
	Msg   string
	Err   error
}

func (e *RejectError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("event rejected (%s): %s", e.Code, e.Msg)
	}
	return fmt.Sprintf("event rejected (%s): %s: %s", e.Code, e.Field, e.Msg)
}

func (e *RejectError) Unwrap() error { return e.Err }

// CodeOf returns the Code of the *RejectError in err's chain, and false if
// there is none (err is nil or not a rejection).
func CodeOf(err error) (Code, bool) {
	var re *RejectError
	if errors.As(err, &re) {
		return re.Code, true
	}
	return "", false
}

func reject(code Code, field, format string, args ...any) *RejectError {
	return &RejectError{Code: code, Field: field, Msg: fmt.Sprintf(format, args...)}
}
