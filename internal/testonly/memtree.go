package testonly

import (
	"encoding/base64"
	"fmt"
	"sync"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/zarlog/zarlog/merkle"
)

// A MemTree is an RFC 6962 tree of leaves in memory, built with
// golang.org/x/mod/sumdb/tlog (an implementation independent of package
// merkle): what a fake ledger in a test needs to serve receipts that a real
// client checks (a checkpoint whose root is the tree's, inclusion proofs).
// Its checkpoints carry a placeholder signature, which no log key verifies.
// It is safe for concurrent use.
type MemTree struct {
	mu     sync.Mutex
	hashes []tlog.Hash
	n      int64
}

// Add appends a leaf and returns its index.
func (t *MemTree) Add(leaf []byte) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	hs, err := tlog.StoredHashes(t.n, leaf, hashReader{t})
	if err != nil {
		panic(err) // the tree's own hashes are all there
	}
	t.hashes = append(t.hashes, hs...)
	t.n++
	return uint64(t.n - 1)
}

// Size returns the number of leaves.
func (t *MemTree) Size() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return uint64(t.n)
}

// Checkpoint returns a checkpoint note of the tree of the given size (at
// most Size) for origin, with a placeholder signature line.
func (t *MemTree) Checkpoint(origin string, size uint64) ([]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	root, err := tlog.TreeHash(int64(size), hashReader{t})
	if err != nil {
		return nil, fmt.Errorf("memtree: root of size %d: %w", size, err)
	}
	return fmt.Appendf(nil, "%s\n%d\n%s\n\n— %s %s\n", origin, size, base64.StdEncoding.EncodeToString(root[:]),
		origin, base64.StdEncoding.EncodeToString([]byte("placeholder signature"))), nil
}

// InclusionProof returns the inclusion proof of leaf index in the tree of
// the given size.
func (t *MemTree) InclusionProof(index, size uint64) ([]merkle.Hash, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, err := tlog.ProveRecord(int64(size), int64(index), hashReader{t})
	if err != nil {
		return nil, fmt.Errorf("memtree: proof of leaf %d in size %d: %w", index, size, err)
	}
	out := make([]merkle.Hash, len(p))
	for i, h := range p {
		out[i] = merkle.Hash(h)
	}
	return out, nil
}

// hashReader reads t's stored hashes; t.mu is held by the caller.
type hashReader struct{ t *MemTree }

func (r hashReader) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(r.t.hashes)) {
			return nil, fmt.Errorf("memtree: no stored hash %d", x)
		}
		out[i] = r.t.hashes[x]
	}
	return out, nil
}
