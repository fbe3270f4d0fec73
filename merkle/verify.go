package merkle

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
)

// A proofHasher is rfc6962.DefaultHasher whose HashChildren allocates
// only its result (nodeHashSlices) for the 32-byte hashes of a proof: the
// default's hash.Hash and Sum cost three allocations a node, so checking a
// receipt's proof of 17 hashes cost 51 (an SDK at a human pace checks one
// for every receipt it waits on: docs/BENCHMARKS.md, issue 31, ninth
// session). Other lengths are hashed by the default, as before.
type proofHasher struct{ *rfc6962.Hasher }

// HashChildren returns SHA-256(0x01 ‖ l ‖ r), as rfc6962.Hasher does.
func (h proofHasher) HashChildren(l, r []byte) []byte {
	if len(l) != HashSize || len(r) != HashSize {
		return h.Hasher.HashChildren(l, r)
	}
	return nodeHashSlices(l, r)
}

// CheckInclusion reports whether proof proves that the leaf with the given
// leaf hash is at index in the tree of the given size and root, returning nil
// if it does and an error wrapping ErrProof if it does not (including for
// index >= size and a proof of the wrong length).
func CheckInclusion(leafHash Hash, index, size uint64, p []Hash, root Hash) error {
	if err := proof.VerifyInclusion(proofHasher{rfc6962.DefaultHasher}, index, size, leafHash[:], slicesOf(p), root[:]); err != nil {
		return fmt.Errorf("inclusion of leaf %d in tree size %d with a proof of %d hashes: %w", index, size, len(p), proofError(err))
	}
	return nil
}

// CheckConsistency reports whether proof proves that the tree of size
// oldSize and root oldRoot is a prefix of the tree of size newSize and root
// newRoot, returning nil if it does and an error wrapping ErrProof if it does
// not. Equal sizes need equal roots and an empty proof; a tree of size 0 must
// have the empty tree's root.
func CheckConsistency(oldSize, newSize uint64, oldRoot, newRoot Hash, p []Hash) error {
	switch {
	case oldSize == 0 && oldRoot != emptyRoot:
		return fmt.Errorf("consistency from tree size 0 to %d: old root is not the empty tree's: %w", newSize, ErrProof)
	case newSize == 0 && newRoot != emptyRoot:
		return fmt.Errorf("consistency from tree size %d to 0: new root is not the empty tree's: %w", oldSize, ErrProof)
	}
	if err := proof.VerifyConsistency(proofHasher{rfc6962.DefaultHasher}, oldSize, newSize, slicesOf(p), oldRoot[:], newRoot[:]); err != nil {
		return fmt.Errorf("consistency from tree size %d to %d with a proof of %d hashes: %w", oldSize, newSize, len(p), proofError(err))
	}
	return nil
}

// slicesOf returns the hashes as byte slices sharing their memory.
func slicesOf(hashes []Hash) [][]byte {
	s := make([][]byte, len(hashes))
	for i := range hashes {
		s[i] = hashes[i][:]
	}
	return s
}

// proofError rewords an error of package proof and wraps ErrProof.
func proofError(err error) error {
	var m proof.RootMismatchError
	if errors.As(err, &m) {
		return fmt.Errorf("computed root %s…, want %s…: %w", hex.EncodeToString(m.CalculatedRoot[:4]), hex.EncodeToString(m.ExpectedRoot[:4]), ErrProof)
	}
	return fmt.Errorf("%w: %w", ErrProof, err)
}
