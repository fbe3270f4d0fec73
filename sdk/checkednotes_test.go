package sdk

import (
	"bytes"
	"encoding/base64"
	"errors"
	mrand "math/rand/v2"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/merkle"
)

// countingVerifier counts the signatures it verifies.
type countingVerifier struct {
	note.Verifier
	n int
}

func (v *countingVerifier) Verify(msg, sig []byte) bool {
	v.n++
	return v.Verifier.Verify(msg, sig)
}

// TestCheckedNotes: the Client checks a checkpoint note's signature once
// and reuses it only for the same bytes; every receipt's leaf and inclusion
// proof are still checked, and a note it has not opened (another
// signature over the same checkpoint, say) is checked and refused.
func TestCheckedNotes(t *testing.T) {
	const origin = "example.com/notes"
	skey, vkey, err := merkle.GenerateKey(mrand.NewChaCha8(testonly.Label32("checked notes")), origin)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := merkle.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	v, err := merkle.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	cv := &countingVerifier{Verifier: v}
	c := &Client{cfg: Config{LogKey: cv}}

	a, b := []byte("event a\n"), []byte("event b\n")
	ha, hb := merkle.LeafHash(a), merkle.LeafHash(b)
	sign := func(size uint64, root merkle.Hash) []byte {
		t.Helper()
		n, err := merkle.Sign(merkle.Checkpoint{Origin: origin, Size: size, Hash: root}, signer)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	two := sign(2, merkle.NodeHash(ha, hb))
	receipt := func(note []byte, index uint64, proof ...merkle.Hash) *Receipt {
		return &Receipt{EventID: "e", TlogProof: merkle.TlogProof{Index: index, Proof: proof, Checkpoint: bytes.Clone(note)}}
	}

	for i, tc := range []struct {
		r    *Receipt
		leaf []byte
	}{{receipt(two, 0, hb), a}, {receipt(two, 1, ha), b}, {receipt(two, 0, hb), a}} {
		if err := c.check(tc.r, tc.leaf); err != nil {
			t.Fatalf("receipt %d: %v", i, err)
		}
		if !tc.r.SignatureChecked {
			t.Errorf("receipt %d: SignatureChecked is false", i)
		}
	}
	if cv.n != 1 {
		t.Errorf("three receipts under one note: %d signatures verified, want 1", cv.n)
	}

	// The same note, a wrong proof or another event's leaf: refused.
	if err := c.check(receipt(two, 0, ha), a); !errors.Is(err, ErrBadReceipt) || !errors.Is(err, merkle.ErrProof) {
		t.Errorf("a wrong proof under a checked note: %v, want ErrBadReceipt and merkle.ErrProof", err)
	}
	if err := c.check(receipt(two, 0, hb), b); !errors.Is(err, ErrBadReceipt) {
		t.Errorf("another leaf under a checked note: %v, want ErrBadReceipt", err)
	}

	// The same checkpoint with a broken signature: other bytes, so checked
	// again, and refused.
	bad := flipSignature(t, two)
	before := cv.n
	if err := c.check(receipt(bad, 0, hb), a); !errors.Is(err, ErrBadReceipt) || !errors.Is(err, merkle.ErrSignature) {
		t.Errorf("a broken signature over a checked checkpoint: %v, want ErrBadReceipt and merkle.ErrSignature", err)
	}
	if cv.n != before+1 {
		t.Errorf("a note of other bytes: %d signatures verified, want 1", cv.n-before)
	}

	// Past checkedNotesSize other notes, the first is checked again.
	for size := uint64(3); size < 3+checkedNotesSize; size++ {
		if err := c.check(receipt(sign(size, merkle.Hash{byte(size)}), size, nil...), a); err == nil {
			t.Fatalf("a receipt with index %d in a tree of %d: accepted", size, size)
		}
	}
	before = cv.n
	if err := c.check(receipt(two, 0, hb), a); err != nil {
		t.Fatal(err)
	}
	if cv.n != before+1 {
		t.Errorf("a note forgotten: %d signatures verified, want 1", cv.n-before)
	}
}

// flipSignature returns n with a bit of its (only) signature flipped.
func flipSignature(t *testing.T, n []byte) []byte {
	t.Helper()
	i := bytes.Index(n, []byte("\n\n\u2014 ")) // the blank line, then "— name base64"
	if i < 0 {
		t.Fatalf("no signature line in %q", n)
	}
	line := n[i+2 : len(n)-1]
	sp := bytes.LastIndexByte(line, ' ')
	sig, err := base64.StdEncoding.DecodeString(string(line[sp+1:]))
	if err != nil {
		t.Fatal(err)
	}
	sig[len(sig)-1] ^= 1 // past the key hash: the signature's bytes
	out := append(bytes.Clone(n[:i+2+sp+1]), base64.StdEncoding.EncodeToString(sig)...)
	return append(out, '\n')
}
