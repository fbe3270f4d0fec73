package sdk

import (
	"bytes"
	"encoding/base64"
	"errors"
	mrand "math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

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

// notesOrigin is the origin of the logs notesKey makes keys of.
const notesOrigin = "example.com/notes"

// notesKey returns a log's signer and verifier, of origin notesOrigin, made
// from label.
func notesKey(t *testing.T, label string) (note.Signer, note.Verifier) {
	t.Helper()
	skey, vkey, err := merkle.GenerateKey(mrand.NewChaCha8(testonly.Label32(label)), notesOrigin)
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
	return signer, v
}

// TestCheckedNotes: the Client checks a checkpoint note's signature once
// and reuses it only for the same bytes; every receipt's leaf and inclusion
// proof are still checked, and a note it has not opened (another
// signature over the same checkpoint, say) is checked and refused.
func TestCheckedNotes(t *testing.T) {
	signer, v := notesKey(t, "checked notes")
	cv := &countingVerifier{Verifier: v}
	c := &Client{cfg: Config{LogKey: cv}}

	a, b := []byte("event a\n"), []byte("event b\n")
	ha, hb := merkle.LeafHash(a), merkle.LeafHash(b)
	sign := func(size uint64, root merkle.Hash) []byte {
		t.Helper()
		n, err := merkle.Sign(merkle.Checkpoint{Origin: notesOrigin, Size: size, Hash: root}, signer)
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

// slowVerifier counts the signatures it verifies by their bytes, from any
// goroutine, and takes its time over each, so that checks started together
// overlap.
type slowVerifier struct {
	note.Verifier
	mu sync.Mutex
	n  map[string]int
}

func (v *slowVerifier) Verify(msg, sig []byte) bool {
	v.mu.Lock()
	v.n[string(sig)]++
	v.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	return v.Verifier.Verify(msg, sig)
}

func (v *slowVerifier) count() (distinct, all int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, k := range v.n {
		distinct++
		all += k
	}
	return distinct, all
}

// TestCheckedNotesConcurrent: the receipts of one batched reply are
// checked by their callers at once; they share one check of their note's
// signature (before, every caller that came before the first check ended
// checked it again), and a note of other bytes checked at the same time
// (the same checkpoint, its signature broken) is checked apart and
// refused, for every receipt that carries it, however the checks overlap.
func TestCheckedNotesConcurrent(t *testing.T) {
	signer, v := notesKey(t, "checked notes at once")
	sv := &slowVerifier{Verifier: v, n: map[string]int{}}
	c := &Client{cfg: Config{LogKey: sv}}
	a, b := []byte("event a\n"), []byte("event b\n")
	ha, hb := merkle.LeafHash(a), merkle.LeafHash(b)
	good, err := merkle.Sign(merkle.Checkpoint{Origin: notesOrigin, Size: 2, Hash: merkle.NodeHash(ha, hb)}, signer)
	if err != nil {
		t.Fatal(err)
	}
	bad := flipSignature(t, good)

	const n = 16
	errs := make([]error, 2*n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 2 * n {
		wg.Go(func() {
			cp := good
			if i%2 == 1 {
				cp = bad
			}
			r := &Receipt{EventID: "e", TlogProof: merkle.TlogProof{Index: 0, Proof: []merkle.Hash{hb}, Checkpoint: bytes.Clone(cp)}}
			<-start
			errs[i] = c.check(r, a)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		switch {
		case i%2 == 0 && err != nil:
			t.Errorf("receipt %d under the signed note: %v", i, err)
		case i%2 == 1 && (!errors.Is(err, ErrBadReceipt) || !errors.Is(err, merkle.ErrSignature)):
			t.Errorf("receipt %d under the broken note: %v, want ErrBadReceipt and merkle.ErrSignature", i, err)
		}
	}
	// The signed note checked once; the broken one at least once (those
	// waiting on its check share its failure, but it is not remembered: a
	// caller that came after the check ended checks it again).
	goodSig := signatureOf(t, good)
	sv.mu.Lock()
	signed, kinds := sv.n[string(goodSig)], len(sv.n)
	sv.mu.Unlock()
	if signed != 1 || kinds != 2 {
		t.Errorf("%d receipts under two notes at once: the signed note's signature verified %d times, %d signatures seen; want once, 2", 2*n, signed, kinds)
	}
	_, before := sv.count()
	if err := c.check(&Receipt{EventID: "e", TlogProof: merkle.TlogProof{Index: 1, Proof: []merkle.Hash{ha}, Checkpoint: bytes.Clone(good)}}, b); err != nil {
		t.Fatal(err)
	}
	if err := c.check(&Receipt{EventID: "e", TlogProof: merkle.TlogProof{Index: 1, Proof: []merkle.Hash{ha}, Checkpoint: bytes.Clone(bad)}}, b); !errors.Is(err, merkle.ErrSignature) {
		t.Errorf("the broken note afterwards: %v, want merkle.ErrSignature", err)
	}
	if _, all := sv.count(); all-before != 1 {
		t.Errorf("afterwards: %d signatures verified, want 1 (the broken note, never remembered)", all-before)
	}
}

// signatureOf returns the Ed25519 signature of n's (only) signature line,
// without its key hash: what a note.Verifier is given.
func signatureOf(t *testing.T, n []byte) []byte {
	t.Helper()
	i := bytes.Index(n, []byte("\n\n\u2014 "))
	if i < 0 {
		t.Fatalf("no signature line in %q", n)
	}
	line := n[i+2 : len(n)-1]
	sig, err := base64.StdEncoding.DecodeString(string(line[bytes.LastIndexByte(line, ' ')+1:]))
	if err != nil || len(sig) < 4 {
		t.Fatalf("signature line %q: %v", line, err)
	}
	return sig[4:]
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

// TestCheckedNotesCopies: each call of checkedNotes.open gets a checkpoint
// of its own (the Node SDK's twin in sdk/js/test/notes.test.js): changing
// the extension lines or the root of one it got changes neither what the
// note is remembered as opening to nor what a later receipt's proof is
// checked against.
func TestCheckedNotesCopies(t *testing.T) {
	signer, v := notesKey(t, "checked notes copies")
	cv := &countingVerifier{Verifier: v}
	c := &Client{cfg: Config{LogKey: cv}}
	a, b := []byte("event a\n"), []byte("event b\n")
	ha, hb := merkle.LeafHash(a), merkle.LeafHash(b)
	root := merkle.NodeHash(ha, hb)
	two, err := merkle.Sign(merkle.Checkpoint{Origin: notesOrigin, Size: 2, Hash: root, Extensions: []string{"an extension"}}, signer)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		cp, err := c.notes.open(two, cv)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Hash != root || !slices.Equal(cp.Extensions, []string{"an extension"}) {
			t.Fatalf("open %d: root %x, extensions %q, want %x and the note's", i, cp.Hash, cp.Extensions, root)
		}
		cp.Hash[0] ^= 1
		cp.Extensions[0] = "changed by a caller"
	}
	r := &Receipt{EventID: "e", TlogProof: merkle.TlogProof{Index: 1, Proof: []merkle.Hash{ha}, Checkpoint: bytes.Clone(two)}}
	if err := c.check(r, b); err != nil {
		t.Errorf("a receipt under the note after callers changed what they got: %v", err)
	}
	if cv.n != 1 {
		t.Errorf("%d signatures verified, want 1 (the note remembered)", cv.n)
	}
}
