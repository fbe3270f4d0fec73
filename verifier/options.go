package verifier

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/merkle"
	"golang.org/x/mod/sumdb/note"
)

// Options are what the user adds to an evidence file. The zero value checks
// the file alone.
type Options struct {
	// Expected is the commitment (or its seal code) the user saw before
	// the game; nil skips the expected-commitment check.
	Expected *Expected
	// LogKey is the verifier key of the log the file must come from; nil
	// when none was given. Given a key, the log-signature check must pass
	// for the file to be valid.
	LogKey note.Verifier
	// WitnessPolicy is the C2SP tlog-policy the checkpoint's cosignatures
	// must satisfy (the log-witnesses check); nil when none was given. Its
	// logs, if it lists any, check the log signature when LogKey is nil.
	WitnessPolicy *merkle.Policy
	// WitnessesPending makes a witness quorum not (yet) met, with no
	// invalid cosignature, not a failure: the log-witnesses check is then
	// skipped with what it found, and the statement says the checkpoint is
	// not witnessed. It is how a log's own pages check a game with the log's
	// policy: the game's first bundle is not witnessed yet, its witnessed
	// bundle comes a minute or two after the game's end (docs/FORMATS.md
	// §3). zarlog-verify --witness-policy never sets it.
	WitnessesPending bool
	// EmitterKeys are the keys of the game operators (emitters) whose
	// signatures the binding events must carry (the log-emitter-signatures
	// check); nil when none were given.
	EmitterKeys *events.Keyring
	// Leaf is the event a C2SP tlog-proof is about, for a tlog-proof without
	// an extra line (the spec makes it optional; zarlog's publisher puts the
	// leaf there): zarlog-verify --leaf FILE. With an extra line it must be
	// the same bytes. Nil when not given.
	Leaf []byte
}

// ErrBadFlag is wrapped by ParseExpected and ParseLogKey errors.
var ErrBadFlag = errors.New("bad flag value")

// An Expected is a commitment the user saw before the game: either the full
// 32-byte commitment or its seal code (the first 40 bits).
type Expected struct {
	full   [32]byte
	seal   dice.Seal
	isFull bool
}

// ParseExpected parses the value of --expected-commitment: 64 hex digits
// (either case) or a seal code as a person types it (case ignored, O read as
// 0, I and L as 1, hyphens and spaces ignored).
func ParseExpected(s string) (*Expected, error) {
	t := strings.TrimSpace(s)
	if len(t) == 64 {
		var e Expected
		if _, err := hex.Decode(e.full[:], []byte(strings.ToLower(t))); err == nil {
			e.isFull = true
			e.seal = dice.SealOf(e.full)
			return &e, nil
		}
	}
	seal, err := dice.ParseSealCode(t)
	if err != nil {
		return nil, fmt.Errorf("%w: --expected-commitment %q: want 64 hex digits or an 8-symbol seal code: %w", ErrBadFlag, s, err)
	}
	return &Expected{seal: seal}, nil
}

// Matches reports whether commitment is the expected one: equal to the full
// commitment, or with the expected seal code.
func (e *Expected) Matches(commitment [32]byte) bool {
	if e.isFull {
		return e.full == commitment
	}
	return e.seal.Matches(commitment)
}

// String returns the expected value as given, normalized: lower-case hex
// or the seal code XXXX-XXXX.
func (e *Expected) String() string {
	if e.isFull {
		return hex.EncodeToString(e.full[:])
	}
	return e.seal.String()
}

// ParseLogKey parses the value of --log-key: a C2SP signed-note verifier
// key, <name>+<8 hex key hash>+<base64 key>.
func ParseLogKey(s string) (note.Verifier, error) {
	v, err := note.NewVerifier(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("%w: --log-key: %w", ErrBadFlag, err)
	}
	return v, nil
}

// ParseWitnessPolicy parses the file given with --witness-policy: a C2SP
// tlog-policy (https://c2sp.org/tlog-policy).
func ParseWitnessPolicy(text []byte) (*merkle.Policy, error) {
	p, err := merkle.ParsePolicy(text)
	if err != nil {
		return nil, fmt.Errorf("%w: --witness-policy: %w", ErrBadFlag, err)
	}
	return p, nil
}

// ParseEmitterKeys parses the values of --emitter-key: C2SP signed-note
// verifier keys whose names are emitter ids (docs/FORMATS.md §1.3).
func ParseEmitterKeys(vkeys ...string) (*events.Keyring, error) {
	trimmed := make([]string, len(vkeys))
	for i, v := range vkeys {
		trimmed[i] = strings.TrimSpace(v)
	}
	k, err := events.NewKeyring(trimmed...)
	if err != nil {
		return nil, fmt.Errorf("%w: --emitter-key: %w", ErrBadFlag, err)
	}
	return k, nil
}
