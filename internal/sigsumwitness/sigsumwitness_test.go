package sigsumwitness_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"

	"sigsum.org/sigsum-go/pkg/checkpoint"
	"sigsum.org/sigsum-go/pkg/crypto"
	"sigsum.org/sigsum-go/pkg/types"

	"github.com/zarlog/zarlog/internal/sigsumwitness"
	"github.com/zarlog/zarlog/merkle"
)

// TestLogKey: a checkpoint signed with LogKey's key by zarlog's merkle.Sign
// is one that Sigsum's own code (sigsum-go v0.14.1, the witness's parser and
// verifier) parses and verifies for that public key: its origin is
// types.SigsumCheckpointOrigin, its key id checkpoint.NewLogKeyId. And the
// names and key ids this package computes are sigsum-go's.
func TestLogKey(t *testing.T) {
	skey, vkey, err := sigsumwitness.LogKey(rand.NewChaCha8([32]byte{1}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := merkle.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := merkle.VerifierKey(skey); err != nil || got != vkey {
		t.Fatalf("VerifierKey(skey) = %q, %v, want %q", got, err, vkey)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.SplitN(vkey, "+", 3)[2])
	if err != nil || len(raw) != 33 {
		t.Fatalf("vkey %q: %v", vkey, err)
	}
	var pub crypto.PublicKey
	copy(pub[:], raw[1:])
	if want := types.SigsumCheckpointOrigin(&pub); s.Name() != want || sigsumwitness.Origin(ed25519.PublicKey(pub[:])) != want {
		t.Fatalf("origin %q, Origin %q, sigsum-go's %q", s.Name(), sigsumwitness.Origin(ed25519.PublicKey(pub[:])), want)
	}
	msg, err := merkle.Sign(merkle.Checkpoint{Origin: s.Name(), Size: 7, Hash: merkle.Hash{1, 2, 3}}, s)
	if err != nil {
		t.Fatal(err)
	}
	var cp checkpoint.Checkpoint
	if err := cp.FromASCII(bytes.NewReader(msg)); err != nil {
		t.Fatalf("sigsum-go's parser: %v\n%s", err, msg)
	}
	if err := cp.Verify(&pub); err != nil || cp.Size != 7 {
		t.Fatalf("sigsum-go's verifier: %v (size %d)\n%s", err, cp.Size, msg)
	}
	msg[len(msg)-3] ^= 1
	if err := cp.FromASCII(bytes.NewReader(msg)); err == nil && cp.Verify(&pub) == nil {
		t.Fatalf("a tampered signature verifies\n%s", msg)
	}

	// The witness's name and cosignature key id.
	wpub := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, 32)).Public().(ed25519.PublicKey)
	var wp crypto.PublicKey
	copy(wp[:], wpub)
	h := crypto.HashBytes(wpub)
	name := sigsumwitness.WitnessName(wpub)
	if name != "sigsum.org/v1/witness/"+hex.EncodeToString(h[:]) {
		t.Fatalf("WitnessName %q", name)
	}
	id := checkpoint.NewWitnessKeyId(name, &wp)
	// NewCosignatureVerifier checks the key ID against the name and key.
	if _, err := merkle.NewCosignatureVerifier(name + "+" + hex.EncodeToString(id[:]) + "+" + base64.StdEncoding.EncodeToString(append([]byte{4}, wpub...))); err != nil {
		t.Fatalf("sigsum-go's key id for %s is not the cosignature/v1 key hash: %v", name, err)
	}
}
