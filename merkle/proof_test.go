package merkle

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/transparency-dev/merkle/rfc6962"
)

// TestInclusionMutations checks that CheckInclusion refuses each mutation of
// a valid proof.
func TestInclusionMutations(t *testing.T) {
	ctx := context.Background()
	const size = 2*TileWidth + 77
	store, rf := build(t, size, batchSizes)
	root := rf.mth(0, size)
	for _, idx := range []uint64{0, 1, 100, 255, 256, 300, size - 2, size - 1} {
		p, err := InclusionProof(ctx, store, idx, size)
		if err != nil {
			t.Fatal(err)
		}
		leaf := rf.leaves[idx]
		if err := CheckInclusion(leaf, idx, size, p, root); err != nil {
			t.Fatalf("leaf %d: %v", idx, err)
		}
		flipped := slices.Clone(p)
		flipped[len(p)/2][7] ^= 0x10
		otherLeaf := rf.leaves[(idx+1)%size]
		for name, c := range map[string]struct {
			leaf        Hash
			idx, size   uint64
			p           []Hash
			root        Hash
			wantProofEr bool
		}{
			"flipped-hash": {leaf, idx, size, flipped, root, true},
			"wrong-leaf":   {otherLeaf, idx, size, p, root, true},
			"wrong-index":  {leaf, idx ^ 1, size, p, root, true},
			// A size whose tree gives the leaf a path of the same shape
			// verifies with the same root (only the checkpoint binds size and
			// root together), so the wrong size here changes the shape.
			"wrong-size":      {leaf, idx, size + 2*TileWidth, p, root, true},
			"truncated-proof": {leaf, idx, size, p[:len(p)-1], root, true},
			"extended-proof":  {leaf, idx, size, append(slices.Clone(p), root), root, true},
			"wrong-root":      {leaf, idx, size, p, rf.mth(0, size-1), true},
			"index-past-size": {leaf, size, size, p, root, true},
		} {
			if err := CheckInclusion(c.leaf, c.idx, c.size, c.p, c.root); !errors.Is(err, ErrProof) {
				t.Errorf("leaf %d %s: CheckInclusion = %v, want ErrProof", idx, name, err)
			}
		}
	}
}

func TestConsistencyMutations(t *testing.T) {
	ctx := context.Background()
	const size = 2*TileWidth + 77
	store, rf := build(t, size, batchSizes)
	for _, old := range []uint64{1, 2, 3, 100, 256, 300, size - 1} {
		p, err := ConsistencyProof(ctx, store, old, size)
		if err != nil {
			t.Fatal(err)
		}
		oldRoot, root := rf.mth(0, old), rf.mth(0, size)
		if err := CheckConsistency(old, size, oldRoot, root, p); err != nil {
			t.Fatal(err)
		}
		var flipped []Hash
		if len(p) > 0 {
			flipped = slices.Clone(p)
			flipped[0][0] ^= 1
		}
		for name, c := range map[string]struct {
			old, size uint64
			oldRoot   Hash
			root      Hash
			p         []Hash
		}{
			"flipped-hash":       {old, size, oldRoot, root, flipped},
			"wrong-old-root":     {old, size, rf.mth(0, old-1), root, p},
			"wrong-new-root":     {old, size, oldRoot, rf.mth(0, size-1), p},
			"wrong-old-size":     {old + 1, size, oldRoot, root, p},
			"truncated-proof":    {old, size, oldRoot, root, p[:max(0, len(p)-1)]},
			"swapped-checkpoint": {size, old, root, oldRoot, p},
		} {
			if c.p == nil && name == "flipped-hash" {
				continue // a power-of-two prefix of a perfect tree has an empty proof
			}
			if err := CheckConsistency(c.old, c.size, c.oldRoot, c.root, c.p); !errors.Is(err, ErrProof) {
				t.Errorf("old %d %s: CheckConsistency = %v, want ErrProof", old, name, err)
			}
		}
	}
	if err := CheckConsistency(0, 5, Hash{1}, rf.mth(0, 5), nil); !errors.Is(err, ErrProof) {
		t.Error("size 0 with a non-empty root accepted")
	}
	if err := CheckConsistency(5, 5, rf.mth(0, 5), rf.mth(0, 5), []Hash{{1}}); !errors.Is(err, ErrProof) {
		t.Error("equal sizes with a non-empty proof accepted")
	}
}

func TestSignedConsistency(t *testing.T) {
	ctx := context.Background()
	const size = 300
	store, rf := build(t, size, batchSizes)
	s, v := testLogKey(t, "zarlog.example/log", 1)
	signed := func(n uint64, root Hash) SignedCheckpoint {
		c := Checkpoint{Origin: "zarlog.example/log", Size: n, Hash: root}
		msg, err := Sign(c, s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Open(msg, v); err != nil {
			t.Fatal(err)
		}
		return SignedCheckpoint{Checkpoint: c, Note: msg}
	}
	a, b := signed(100, rf.mth(0, 100)), signed(size, rf.mth(0, size))
	p, err := ConsistencyProof(ctx, store, 100, size)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSignedConsistency(a, b, p); err != nil {
		t.Fatal(err)
	}
	if err := CheckSignedConsistency(b, a, p); err != nil {
		t.Fatalf("swapped order: %v", err)
	}
	// A fork: the same size with another root, and a larger tree that does
	// not extend a.
	fork := signed(100, rf.mth(1, 101))
	var ie *InconsistencyError
	if err := CheckSignedConsistency(a, fork, nil); !errors.As(err, &ie) || !errors.Is(err, ErrProof) {
		t.Fatalf("same size, different roots: %v", err)
	}
	if !bytes.Equal(ie.Old.Note, a.Note) || !bytes.Equal(ie.New.Note, fork.Note) || ie.Proof != nil {
		t.Fatalf("evidence does not hold both notes: %+v", ie)
	}
	forkBig := signed(size, rf.mth(0, size-1))
	if err := CheckSignedConsistency(forkBig, a, p); !errors.As(err, &ie) {
		t.Fatalf("forked larger tree: %v", err)
	}
	if ie.Old.Checkpoint.Size != 100 || ie.New.Checkpoint.Size != size || !slices.Equal(ie.Proof, p) {
		t.Fatalf("evidence holds %d → %d with %d hashes", ie.Old.Checkpoint.Size, ie.New.Checkpoint.Size, len(ie.Proof))
	}
	other := a
	other.Checkpoint.Origin = "elsewhere"
	if err := CheckSignedConsistency(a, other, nil); err == nil || errors.As(err, &ie) {
		t.Fatalf("different origins: %v", err)
	}
}

func TestProveMulti(t *testing.T) {
	ctx := context.Background()
	const size = 3*TileWidth + 41
	store, rf := build(t, size, batchSizes)
	root := rf.mth(0, size)
	rng := rand.New(rand.NewPCG(7, 8))
	sets := [][]uint64{{0}, {size - 1}, {0, 1, 2, 3}, {5, 5}, {0, size - 1}}
	for range 30 {
		var set []uint64
		for range 1 + rng.IntN(40) {
			set = append(set, rng.Uint64N(size))
		}
		sets = append(sets, set)
	}
	for _, set := range sets {
		hashes, proofs, err := ProveMulti(ctx, store, set, size)
		if err != nil {
			t.Fatal(err)
		}
		leaves := make([]Hash, len(set))
		for i, idx := range set {
			leaves[i] = rf.leaves[idx]
			var p []Hash
			for _, k := range proofs[i] {
				p = append(p, hashes[k])
			}
			if want := rf.path(idx, 0, size); !slices.Equal(p, want) {
				t.Fatalf("set %v: proof of %d differs from the reference", set, idx)
			}
		}
		if err := CheckMulti(leaves, set, hashes, proofs, size, root); err != nil {
			t.Fatalf("set %v: %v", set, err)
		}
	}

	set := []uint64{3, 4, 90, 300, 301, size - 1}
	hashes, proofs, err := ProveMulti(ctx, store, set, size)
	if err != nil {
		t.Fatal(err)
	}
	leaves := make([]Hash, len(set))
	for i, idx := range set {
		leaves[i] = rf.leaves[idx]
	}
	clone := func() ([]Hash, [][]int) {
		ps := make([][]int, len(proofs))
		for i := range proofs {
			ps[i] = slices.Clone(proofs[i])
		}
		return slices.Clone(hashes), ps
	}
	type mut struct {
		leaves  []Hash
		indices []uint64
		hashes  []Hash
		proofs  [][]int
		size    uint64
		entry   int // the entry an *EntryError names, or -1
		is      error
	}
	muts := map[string]func() mut{
		"flipped-hash": func() mut {
			h, p := clone()
			h[p[2][0]][0] ^= 1
			return mut{leaves, set, h, p, size, 2, ErrProof}
		},
		"wrong-leaf": func() mut {
			l := slices.Clone(leaves)
			l[4] = rf.leaves[0]
			h, p := clone()
			return mut{l, set, h, p, size, 4, ErrProof}
		},
		"wrong-index": func() mut {
			s := slices.Clone(set)
			s[1]++
			h, p := clone()
			return mut{leaves, s, h, p, size, 1, ErrProof}
		},
		"wrong-size": func() mut {
			h, p := clone()
			// Only the last leaf's path changes shape at size−1.
			return mut{leaves, set, h, p, size - 1, 5, ErrProof}
		},
		"truncated-proof": func() mut {
			h, p := clone()
			p[3] = p[3][:len(p[3])-1]
			return mut{leaves, set, h, p, size, 3, ErrProof}
		},
		"ref-out-of-range": func() mut {
			h, p := clone()
			p[5][0] = len(h)
			return mut{leaves, set, h, p, size, 5, ErrMalformed}
		},
		"unused-hash": func() mut {
			h, p := clone()
			return mut{leaves, set, append(h, Hash{7}), p, size, -1, ErrMalformed}
		},
		"duplicate-hash": func() mut {
			h, p := clone()
			return mut{leaves, set, append(h, h[0]), p, size, -1, ErrMalformed}
		},
		"missing-proof": func() mut {
			h, p := clone()
			return mut{leaves, set, h, p[:len(p)-1], size, -1, ErrMalformed}
		},
	}
	for name, f := range muts {
		m := f()
		err := CheckMulti(m.leaves, m.indices, m.hashes, m.proofs, m.size, root)
		if !errors.Is(err, m.is) {
			t.Errorf("%s: CheckMulti = %v, want %v", name, err, m.is)
			continue
		}
		var ee *EntryError
		if got := errors.As(err, &ee); got != (m.entry >= 0) || got && ee.Entry != m.entry {
			t.Errorf("%s: CheckMulti = %v, want it to name entry %d", name, err, m.entry)
		}
	}
	if _, _, err := ProveMulti(ctx, store, []uint64{1, size}, size); err == nil {
		t.Error("ProveMulti of an index past the size succeeded")
	}
}

func TestTlogProof(t *testing.T) {
	ctx := context.Background()
	const size = TileWidth + 9
	store, rf := build(t, size, batchSizes)
	s, v := testLogKey(t, "zarlog.example/log", 1)
	w, _ := testCosigner(t, "w.example", 9, testNow)
	cp := Checkpoint{Origin: "zarlog.example/log", Size: size, Hash: rf.mth(0, size)}
	msg, _ := Sign(cp, s)
	line, _ := w.Cosign(cp)
	msg = append(msg, line...)
	for _, idx := range []uint64{0, 17, size - 1} {
		p, err := InclusionProof(ctx, store, idx, size)
		if err != nil {
			t.Fatal(err)
		}
		for _, extra := range [][]byte{nil, refLeaf(idx)} {
			tp := TlogProof{Extra: extra, Index: idx, Proof: p, Checkpoint: msg}
			b, err := tp.Format()
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseTlogProof(b)
			if err != nil {
				t.Fatalf("ParseTlogProof(%q): %v", b, err)
			}
			again, _ := back.Format()
			if !bytes.Equal(again, b) || !bytes.Equal(back.Extra, extra) || back.Index != idx {
				t.Fatalf("round trip differs:\n%s\n%s", b, again)
			}
			if got, err := CheckTlogProof(back, rf.leaves[idx], v); err != nil || got.Size != size {
				t.Fatalf("CheckTlogProof: %v", err)
			}
			wrong := back
			wrong.Index ^= 1
			if _, err := CheckTlogProof(wrong, rf.leaves[idx], v); !errors.Is(err, ErrProof) {
				t.Fatalf("wrong index: %v", err)
			}
			if _, err := CheckTlogProof(back, rf.leaves[(idx+1)%size], v); !errors.Is(err, ErrProof) {
				t.Fatalf("wrong leaf: %v", err)
			}
			_, otherV := testLogKey(t, "zarlog.example/log", 2)
			if _, err := CheckTlogProof(back, rf.leaves[idx], otherV); !errors.Is(err, ErrSignature) {
				t.Fatalf("other key: %v", err)
			}
		}
	}
	p, _ := InclusionProof(ctx, store, 5, size)
	good, _ := TlogProof{Extra: []byte("x"), Index: 5, Proof: p, Checkpoint: msg}.Format()
	for name, b := range map[string][]byte{
		"no-header":       bytes.TrimPrefix(good, []byte(tlogProofHeader+"\n")),
		"empty-extra":     bytes.Replace(good, []byte("extra eA==\n"), []byte("extra \n"), 1),
		"extra-nonpadded": bytes.Replace(good, []byte("extra eA==\n"), []byte("extra eA\n"), 1),
		"index-leading0":  bytes.Replace(good, []byte("index 5\n"), []byte("index 05\n"), 1),
		"no-index":        bytes.Replace(good, []byte("index 5\n"), nil, 1),
		"bad-hash":        bytes.Replace(good, []byte("index 5\n"), []byte("index 5\nAAAA\n"), 1),
		"no-blank-line":   bytes.Replace(good, []byte("=\n\nzarlog"), []byte("=\nzarlog"), 1),
		"no-checkpoint":   good[:bytes.Index(good, []byte("\n\n"))+2],
		"bad-checkpoint":  bytes.Replace(good, []byte("\n265\n"), []byte("\n0265\n"), 1),
		"unsigned":        good[:bytes.Index(good, []byte("\n\n— "))+1],
		"crlf":            bytes.Replace(good, []byte("index 5\n"), []byte("index 5\r\n"), 1),
	} {
		if _, err := ParseTlogProof(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: ParseTlogProof = %v, want ErrMalformed", name, err)
		}
	}
}

// TestProofHasher: the proofs' hasher hashes a node exactly as
// rfc6962.DefaultHasher does, for 32-byte hashes and any others, and
// CheckInclusion allocates about one hash a proof node (three before it).
func TestProofHasher(t *testing.T) {
	h := proofHasher{rfc6962.DefaultHasher}
	for i, n := range [][2]int{{32, 32}, {32, 32}, {0, 0}, {31, 32}, {32, 33}, {64, 1}} {
		l, r := make([]byte, n[0]), make([]byte, n[1])
		for j := range l {
			l[j] = byte(i*7 + j)
		}
		for j := range r {
			r[j] = byte(i*13 + 3*j + 1)
		}
		if got, want := h.HashChildren(l, r), rfc6962.DefaultHasher.HashChildren(l, r); !bytes.Equal(got, want) {
			t.Errorf("HashChildren of %d and %d bytes = %x, want %x", n[0], n[1], got, want)
		}
	}

	// A tree of 100,000 leaves: a proof of 17 hashes.
	const index, size = proof17Index, proof17Size
	leaf, p, root := proof17()
	if len(p) != 17 {
		t.Fatalf("a proof of %d hashes, want 17", len(p))
	}
	if err := CheckInclusion(leaf, index, size, p, root); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if err := CheckInclusion(leaf, index, size, p, root); err != nil {
			t.Fatal(err)
		}
	})
	if max := float64(len(p) + 4); allocs > max {
		t.Errorf("CheckInclusion with a proof of %d hashes: %.0f allocations, want at most %.0f", len(p), allocs, max)
	}
}

// A tree of proof17Size leaves, whose leaf proof17Index has an inclusion
// proof of 17 hashes (TestProofHasher, BenchmarkCheckInclusion).
const proof17Index, proof17Size = 31_337, uint64(100_000)

// proof17 returns that leaf's hash, its inclusion proof and the tree's root,
// computed by the reference implementation.
func proof17() (leaf Hash, proof []Hash, root Hash) {
	leaves := make([]Hash, proof17Size)
	for i := range leaves {
		leaves[i] = refLeafHash(refLeaf(uint64(i)))
	}
	rf := newRef(leaves)
	return leaves[proof17Index], rf.path(proof17Index, 0, proof17Size), rf.mth(0, proof17Size)
}
