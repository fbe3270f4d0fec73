package merkle

import (
	"context"
	"fmt"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
)

// ProveMulti returns the inclusion proofs of the leaves at indices in the
// tree of the given size, in the form of docs/FORMATS.md §3: a table of
// distinct hashes, and for each index its RFC 6962 inclusion proof (from the
// leaf's sibling up to the root's child) as positions in that table. Hashes
// shared by several proofs, such as the upper nodes of leaves that are close
// together, are stored once. The table is in order of first use, so the
// result is deterministic. Every index must be below size; all tiles are read
// in one ReadTiles call.
func ProveMulti(ctx context.Context, r TileReader, indices []uint64, size uint64) (hashes []Hash, proofs [][]int, err error) {
	all := make([]proof.Nodes, len(indices))
	seen := make(map[compact.NodeID]bool)
	var ids []compact.NodeID
	for i, idx := range indices {
		n, err := proof.Inclusion(idx, size)
		if err != nil {
			return nil, nil, fmt.Errorf("proving entry %d (leaf %d) in tree size %d: %w", i, idx, size, err)
		}
		all[i] = n
		for _, id := range n.IDs {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	nodeHashes, err := readNodes(ctx, r, size, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("proving %d leaves in tree size %d: %w", len(indices), size, err)
	}
	byID := make(map[compact.NodeID]Hash, len(ids))
	for i, id := range ids {
		byID[id] = nodeHashes[i]
	}
	table := make(map[Hash]int)
	proofs = make([][]int, len(indices))
	for i, n := range all {
		hs := make([]Hash, len(n.IDs))
		for j, id := range n.IDs {
			hs[j] = byID[id]
		}
		p, err := rehash(n, hs)
		if err != nil {
			return nil, nil, fmt.Errorf("proving entry %d (leaf %d) in tree size %d: %w", i, indices[i], size, err)
		}
		refs := make([]int, len(p))
		for j, h := range p {
			k, ok := table[h]
			if !ok {
				k = len(hashes)
				table[h] = k
				hashes = append(hashes, h)
			}
			refs[j] = k
		}
		proofs[i] = refs
	}
	return hashes, proofs, nil
}

// An EntryError says which entry of a multi-leaf proof failed to verify.
type EntryError struct {
	Entry int    // the position of the entry in the indices given
	Index uint64 // its leaf index in the log
	Err   error
}

func (e *EntryError) Error() string {
	return fmt.Sprintf("entry %d (leaf %d): %s", e.Entry, e.Index, e.Err.Error())
}

func (e *EntryError) Unwrap() error { return e.Err }

// CheckMulti checks the proofs ProveMulti returns: that for each i the leaf
// with hash leafHashes[i] is at indices[i] in the tree of the given size and
// root, with proofs[i] naming its inclusion proof in hashes. It returns nil
// if every proof verifies. A proof that does not verify, or refers outside
// the table, gives an *EntryError naming the entry (wrapping ErrProof or
// ErrMalformed). The table must be as ProveMulti makes it: mismatched
// lengths, a hash listed twice or a hash no proof uses is an error wrapping
// ErrMalformed, so a bundle has one form.
func CheckMulti(leafHashes []Hash, indices []uint64, hashes []Hash, proofs [][]int, size uint64, root Hash) error {
	if len(leafHashes) != len(indices) || len(proofs) != len(indices) {
		return fmt.Errorf("multi-leaf proof has %d leaf hashes, %d indices and %d proofs: %w", len(leafHashes), len(indices), len(proofs), ErrMalformed)
	}
	distinct := make(map[Hash]bool, len(hashes))
	for i, h := range hashes {
		if distinct[h] {
			return fmt.Errorf("multi-leaf proof lists hash %d twice: %w", i, ErrMalformed)
		}
		distinct[h] = true
	}
	used := make([]bool, len(hashes))
	p := make([]Hash, 0, 64)
	for i, refs := range proofs {
		p = p[:0]
		for j, k := range refs {
			if k < 0 || k >= len(hashes) {
				return &EntryError{Entry: i, Index: indices[i], Err: fmt.Errorf("proof hash %d refers to table position %d of %d: %w", j, k, len(hashes), ErrMalformed)}
			}
			used[k] = true
			p = append(p, hashes[k])
		}
		if err := CheckInclusion(leafHashes[i], indices[i], size, p, root); err != nil {
			return &EntryError{Entry: i, Index: indices[i], Err: err}
		}
	}
	for k, u := range used {
		if !u {
			return fmt.Errorf("multi-leaf proof hash %d is used by no proof: %w", k, ErrMalformed)
		}
	}
	return nil
}
