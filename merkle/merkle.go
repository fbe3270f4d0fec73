// Package merkle implements zarlog's transparency log on top of
// github.com/transparency-dev/merkle: an RFC 6962 Merkle tree over SHA-256
// served as C2SP tlog-tiles (https://c2sp.org/tlog-tiles), with C2SP
// tlog-checkpoint checkpoints (https://c2sp.org/tlog-checkpoint) signed as
// C2SP signed notes (https://c2sp.org/signed-note), witness cosignatures
// (https://c2sp.org/tlog-cosignature), witness policies
// (https://c2sp.org/tlog-policy), C2SP tlog-proof files
// (https://c2sp.org/tlog-proof) and the shared-hash proof bundles of
// docs/FORMATS.md §3.
//
// The package is pure: it does no I/O beyond the TileReader interface, holds
// no global state, and takes randomness and clocks as arguments.
//
// The parts:
//
//   - Tile, ParseTilePath, FormatBundle and ParseBundle name and encode the
//     tlog-tiles resources: hash tiles of height 8 and entry bundles.
//   - Builder appends leaves for the writer: from a persisted State it returns
//     every tile and entry bundle that changed, ready to be stored as one key
//     each, and the new State to store with them.
//   - RootHash, InclusionProof, ConsistencyProof, ProveMulti, ReadLeafHashes
//     and ReadEntries read a tree through a TileReader; CheckInclusion,
//     CheckConsistency and CheckMulti verify what they return.
//   - Checkpoint, Sign, Open, Cosigner and Policy sign and verify
//     checkpoints; InconsistencyError carries the evidence of a split view.
//   - TlogProof is the C2SP tlog-proof@v1 file for one entry.
//
// All hashes are RFC 6962: a leaf hashes as SHA-256(0x00 ‖ leaf) and an
// interior node as SHA-256(0x01 ‖ left ‖ right); the empty tree's root is
// SHA-256 of the empty string.
package merkle

import (
	"crypto/sha256"
	"errors"
)

// HashSize is the size of a hash in bytes.
const HashSize = sha256.Size

// A Hash is a SHA-256 hash of a leaf, an interior node or a tree.
type Hash = [HashSize]byte

// Sentinel errors. Errors returned by this package wrap one of these where it
// applies, so callers can branch with errors.Is.
var (
	// ErrNotFound is returned by a TileReader for a tile or entry bundle it
	// does not have, and passed through by the functions that read tiles.
	ErrNotFound = errors.New("not found")
	// ErrMalformed marks input that does not parse: a tile path, an entry
	// bundle, a tile of the wrong length, a checkpoint, a note, a proof file,
	// a policy or a serialized State.
	ErrMalformed = errors.New("malformed")
	// ErrProof marks a proof that does not verify: a computed root that
	// differs from the expected one, or a proof of the wrong length.
	ErrProof = errors.New("proof does not verify")
	// ErrStateMismatch is returned by NewBuilder when the stored tiles do not
	// hash to the persisted State: the store was changed behind the log.
	ErrStateMismatch = errors.New("stored tiles do not match the tree state")
	// ErrLeafTooLarge is returned by Builder.Append and FormatBundle for an
	// entry longer than MaxEntrySize.
	ErrLeafTooLarge = errors.New("entry too large")
	// ErrSignature marks a checkpoint, cosignature or proof file that is not
	// validly signed by the expected key, or whose key does not match its
	// origin.
	ErrSignature = errors.New("signature")
)

// emptyRoot is the root of the empty tree, SHA-256 of the empty string.
var emptyRoot = Hash(sha256.Sum256(nil))

// EmptyRoot returns the RFC 6962 root hash of the empty tree.
func EmptyRoot() Hash { return emptyRoot }

// LeafHash returns the RFC 6962 hash of a leaf: SHA-256(0x00 ‖ leaf).
func LeafHash(leaf []byte) Hash {
	h := sha256.New()
	h.Write([]byte{0})
	h.Write(leaf)
	var out Hash
	h.Sum(out[:0])
	return out
}

// NodeHash returns the RFC 6962 hash of an interior node:
// SHA-256(0x01 ‖ left ‖ right).
func NodeHash(left, right Hash) Hash {
	var b [1 + 2*HashSize]byte
	b[0] = 1
	copy(b[1:], left[:])
	copy(b[1+HashSize:], right[:])
	return sha256.Sum256(b[:])
}

// nodeHashSlices is NodeHash for the [][]byte hashes of
// github.com/transparency-dev/merkle. It never allocates beyond the result.
func nodeHashSlices(left, right []byte) []byte {
	var b [1 + 2*HashSize]byte
	b[0] = 1
	copy(b[1:], left)
	copy(b[1+HashSize:], right)
	h := sha256.Sum256(b[:])
	return h[:]
}
