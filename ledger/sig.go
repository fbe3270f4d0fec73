package ledger

import (
	"crypto/ed25519"

	voi "github.com/oasisprotocol/curve25519-voi/primitives/ed25519"

	"github.com/zarlog/zarlog/events"
)

// sigKeys holds the emitters' Ed25519 keys expanded once (curve25519-voi's
// ExpandedPublicKey: the point decoded, negated and tabulated), so that a
// signature check does not decode the key and multiplies by it faster:
// about 40 % less CPU per signature than crypto/ed25519.Verify
// (BenchmarkSig). The checks use voi's VerifyOptionsStdLib, the acceptance
// rules of crypto/ed25519: the cofactorless equation, s < ℓ, R compared as
// bytes (so a non-canonical R never verifies), non-canonical and
// small-order A and R allowed. The verifiers (package verifier,
// zarlog-verify, the JavaScript package) check with crypto/ed25519 or its
// equivalent, so a difference would be a signature the log accepts and an
// auditor refuses: TestSigDifferential and FuzzSigDifferential compare the
// two on every kind of edge point. A key voi cannot decode is checked with
// crypto/ed25519 itself.
type sigKeys map[string][]*voi.ExpandedPublicKey

// stdLib is the options of every voi check.
var stdLib = &voi.Options{Verify: voi.VerifyOptionsStdLib}

// newSigKeys expands every key of k.
func newSigKeys(k *events.Keyring) sigKeys {
	s := sigKeys{}
	if k == nil {
		return s
	}
	for _, name := range k.Emitters() {
		for _, pub := range k.Keys(name) {
			s[name] = append(s[name], expandKey(pub))
		}
	}
	return s
}

// expandKey returns pub expanded, or nil if voi cannot decode it.
func expandKey(pub ed25519.PublicKey) *voi.ExpandedPublicKey {
	x, err := voi.NewExpandedPublicKey(voi.PublicKey(pub))
	if err != nil {
		return nil
	}
	return x
}

// verify is an events.SigFunc.
func (s sigKeys) verify(emitter string, i int, pub ed25519.PublicKey, msg, sig []byte) bool {
	if ks := s[emitter]; i < len(ks) && ks[i] != nil {
		return voi.VerifyExpandedWithOptions(ks[i], msg, sig, stdLib)
	}
	return ed25519.Verify(pub, msg, sig)
}
