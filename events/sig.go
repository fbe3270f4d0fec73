package events

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// SigContext is the domain-separation prefix of every event signature
// (FORMATS.md §1.3).
const SigContext = "zarlog-event-v1\n"

// SigningMessage returns the bytes a binding event's signature covers:
// SigContext ‖ the canonical JSON of ev without its "sig" member. It checks
// ev as Format does (ignoring whether it is already signed).
func SigningMessage(ev *Event) ([]byte, error) {
	if err := check(ev); err != nil {
		return nil, err
	}
	return signingMessage(ev), nil
}

func signingMessage(ev *Event) []byte {
	return appendEvent(append(make([]byte, 0, 512), SigContext...), ev, false)
}

// errNotBinding is returned by Sign for a type that carries no signature.
var errNotBinding = errors.New("event type is not binding")

// A Signer signs with an emitter's Ed25519 key. A note.Signer from
// golang.org/x/mod/sumdb/note (note.NewSigner of the emitter's signer key)
// is one.
type Signer interface {
	// Name returns the emitter id the key belongs to.
	Name() string
	// Sign returns the Ed25519 signature of msg.
	Sign(msg []byte) ([]byte, error)
}

// Sign signs a binding event with the emitter's key and sets ev.Sig. The
// signer's name must be the event's emitter. It refuses events of a type that
// is not binding and events Format would refuse.
func Sign(ev *Event, s Signer) error {
	if ev == nil || !ev.Type.Binding() {
		if ev == nil {
			return fmt.Errorf("sign event: nil event")
		}
		return fmt.Errorf("sign %s event: %w", ev.Type, errNotBinding)
	}
	if s.Name() != ev.Emitter {
		return fmt.Errorf("sign event of emitter %q: the key is named %q", ev.Emitter, s.Name())
	}
	msg, err := SigningMessage(ev)
	if err != nil {
		return fmt.Errorf("sign event: %w", err)
	}
	sig, err := s.Sign(msg)
	if err != nil {
		return fmt.Errorf("sign event: %w", err)
	}
	if len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("sign event: signer returned %d bytes, want an Ed25519 signature of %d", len(sig), ed25519.SignatureSize)
	}
	ev.Sig = sig
	return nil
}

// A Keyring holds the configured emitters and their Ed25519 public keys. An
// emitter may have several keys (a rotation); a signature by any of them is
// accepted. A Keyring is immutable and safe for concurrent use.
type Keyring struct {
	keys map[string][]ed25519.PublicKey
}

// NewKeyring parses C2SP signed-note verifier keys
// (<emitter>+<8 hex key hash>+<base64(0x01 ‖ 32-byte Ed25519 key)>) whose key
// names are emitter ids. It refuses a malformed key, another key type, a
// name that is not an emitter id and the same key twice.
func NewKeyring(vkeys ...string) (*Keyring, error) {
	k := &Keyring{keys: make(map[string][]ed25519.PublicKey)}
	for i, vkey := range vkeys {
		vkey = strings.TrimSpace(vkey)
		if _, err := note.NewVerifier(vkey); err != nil {
			return nil, fmt.Errorf("emitter key %d: %w", i, err)
		}
		// note.NewVerifier checked the form, the hash and the algorithm.
		parts := strings.SplitN(vkey, "+", 3)
		name := parts[0]
		if !ValidEmitter(name) {
			return nil, fmt.Errorf("emitter key %d: name %q is not an emitter id ([a-z0-9][a-z0-9-]{0,62})", i, name)
		}
		raw, err := base64.StdEncoding.DecodeString(parts[2])
		if err != nil || len(raw) != 1+ed25519.PublicKeySize || raw[0] != 0x01 {
			return nil, fmt.Errorf("emitter key %d: not an Ed25519 key", i)
		}
		pub := ed25519.PublicKey(raw[1:])
		if slices.ContainsFunc(k.keys[name], func(p ed25519.PublicKey) bool { return p.Equal(pub) }) {
			return nil, fmt.Errorf("emitter key %d: %s has this key twice", i, name)
		}
		k.keys[name] = append(k.keys[name], pub)
	}
	return k, nil
}

// Has reports whether emitter has a configured key.
func (k *Keyring) Has(emitter string) bool { return k != nil && len(k.keys[emitter]) > 0 }

// Emitters returns the configured emitter ids, sorted.
func (k *Keyring) Emitters() []string {
	if k == nil {
		return nil
	}
	names := make([]string, 0, len(k.keys))
	for n := range k.keys {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Keys returns a copy of emitter's configured keys, in the order given to
// NewKeyring (the order VerifyWith tries them in), or nil.
func (k *Keyring) Keys(emitter string) []ed25519.PublicKey {
	if k == nil || len(k.keys[emitter]) == 0 {
		return nil
	}
	out := make([]ed25519.PublicKey, len(k.keys[emitter]))
	for i, pub := range k.keys[emitter] {
		out[i] = slices.Clone(pub)
	}
	return out
}

// A SigFunc checks one Ed25519 signature: whether sig is the signature of
// msg by pub, the i-th of emitter's keys (Keyring.Keys). It must accept
// exactly what crypto/ed25519.Verify accepts; it exists so that a caller
// holding the keys in a precomputed form can check faster.
type SigFunc func(emitter string, i int, pub ed25519.PublicKey, msg, sig []byte) bool

// StdSig is the SigFunc of Verify: crypto/ed25519.Verify.
func StdSig(_ string, _ int, pub ed25519.PublicKey, msg, sig []byte) bool {
	return ed25519.Verify(pub, msg, sig)
}

// Verify checks an event (as returned by Parse) against the keyring: its
// emitter must be configured (CodeUnknownEmitter, for every type, since the
// keyring is the list of emitters the log accepts), and a binding event's sig
// must be the emitter's signature of SigningMessage (CodeBadSignature).
func Verify(ev *Event, k *Keyring) error { return VerifyWith(ev, k, StdSig) }

// VerifyWith is Verify with each signature checked by sig.
func VerifyWith(ev *Event, k *Keyring, sig SigFunc) error {
	if ev == nil {
		return reject(CodeMalformed, "", "nil event")
	}
	if !k.Has(ev.Emitter) {
		return reject(CodeUnknownEmitter, "emitter", "no key is configured for emitter %q", ev.Emitter)
	}
	if !ev.Type.Binding() {
		if ev.Sig != nil {
			return reject(CodeMalformed, "sig", "present: %s events are not binding and must not have a sig", ev.Type)
		}
		return nil
	}
	if len(ev.Sig) != ed25519.SignatureSize {
		return reject(CodeMalformed, "sig", "is %d bytes, want %d", len(ev.Sig), ed25519.SignatureSize)
	}
	msg := signingMessage(ev)
	for i, pub := range k.keys[ev.Emitter] {
		if sig(ev.Emitter, i, pub, msg, ev.Sig) {
			return nil
		}
	}
	return reject(CodeBadSignature, "sig", "is not %s's signature of this %s event (%d key(s) tried)", ev.Emitter, ev.Type, len(k.keys[ev.Emitter]))
}
