package merkle

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
)

// benchLeafSize is about the size of a zarlog event leaf.
const benchLeafSize = 300

// BenchmarkBuilderAppend measures Builder.Append with 300-byte leaves at
// batch sizes 1, 100 and 1000, reporting leaves per second, and with
// leaves of mixed sizes (150, 300, 450 bytes: mixed) at 100. It includes
// State() and MarshalBinary per batch, as the ledger does.
func BenchmarkBuilderAppend(b *testing.B) {
	for _, c := range []struct {
		batch int
		mixed bool
	}{{1, false}, {100, false}, {1000, false}, {100, true}} {
		batch, mixed := c.batch, c.mixed
		name := fmt.Sprintf("batch=%d", batch)
		if mixed {
			name += "/mixed"
		}
		b.Run(name, func(b *testing.B) {
			bl, err := NewBuilder(context.Background(), nil, State{})
			if err != nil {
				b.Fatal(err)
			}
			leaves := make([][]byte, batch)
			for i := range leaves {
				leaves[i] = make([]byte, benchLeafSize)
				leaves[i][0] = byte(i)
			}
			if mixed {
				// 150, 300 and 450 bytes in turn (the mean of the
				// workload's), the first bundle's first leaf a short one.
				for i := range leaves {
					leaves[i] = make([]byte, benchLeafSize/2*(1+i%3))
					leaves[i][0] = byte(i)
				}
			}
			var buf []byte
			n := 0
			for b.Loop() {
				if _, err := bl.Append(leaves); err != nil {
					b.Fatal(err)
				}
				buf, err = bl.State().AppendBinary(buf[:0])
				if err != nil {
					b.Fatal(err)
				}
				n += batch
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "leaves/s")
			b.SetBytes(int64(batch * benchLeafSize))
			b.ReportAllocs()
		})
	}
}

// benchTree builds, once, a 2^20-leaf tree (1,048,576 leaves of 40 bytes)
// and returns its store.
var benchTree = sync.OnceValues(func() (*memReader, Hash) {
	const size = 1 << 20
	ctx := context.Background()
	b, err := NewBuilder(ctx, nil, State{})
	if err != nil {
		panic(err)
	}
	store := newMemReader()
	batch := make([][]byte, 0, 4096)
	for i := range uint64(size) {
		leaf := make([]byte, 40)
		binary.BigEndian.PutUint64(leaf, i)
		batch = append(batch, leaf)
		if len(batch) == cap(batch) {
			tds, err := b.Append(batch)
			if err != nil {
				panic(err)
			}
			store.store(tds)
			batch = batch[:0]
		}
	}
	return store, b.Root()
})

// BenchmarkInclusionProof measures InclusionProof from an in-memory
// TileReader in a tree of 2^20 leaves.
func BenchmarkInclusionProof(b *testing.B) {
	store, root := benchTree()
	const size = 1 << 20
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 1))
	for b.Loop() {
		idx := rng.Uint64N(size)
		p, err := InclusionProof(ctx, store, idx, size)
		if err != nil || len(p) != 20 {
			b.Fatal(err)
		}
	}
	_ = root
}

// gameIndices returns the leaf indices of a game of n events in a log where
// the game's events are every stride-th leaf from start: stride is about the
// number of games being played at once.
func gameIndices(start, stride uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = start + uint64(i)*stride
	}
	return out
}

// BenchmarkProveMulti measures ProveMulti for a 130-event game interleaved
// with 10 others in a tree of 2^20 leaves, and CheckMulti.
func BenchmarkProveMulti(b *testing.B) {
	store, root := benchTree()
	const size = 1 << 20
	ctx := context.Background()
	set := gameIndices(700_001, 11, 130)
	b.Run("prove", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := ProveMulti(ctx, store, set, size); err != nil {
				b.Fatal(err)
			}
		}
	})
	hashes, proofs, err := ProveMulti(ctx, store, set, size)
	if err != nil {
		b.Fatal(err)
	}
	leaves, err := ReadLeafHashes(ctx, store, 0, size, size)
	if err != nil {
		b.Fatal(err)
	}
	lh := make([]Hash, len(set))
	for i, idx := range set {
		lh[i] = leaves[idx]
	}
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if err := CheckMulti(lh, set, hashes, proofs, size, root); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestMultiSavings reports how much smaller the shared hash table of
// ProveMulti is than separate proofs, for a 130-event game in a 2^20-leaf
// log, at several degrees of interleaving with other games. It builds a
// million-leaf tree, so it runs only with ZARLOG_SLOW=1 or -run explicitly
// naming it with -v; the numbers go to the test log.
func TestMultiSavings(t *testing.T) {
	if os.Getenv("ZARLOG_SLOW") == "" {
		t.Skip("builds a 2^20-leaf tree; set ZARLOG_SLOW=1")
	}
	store, root := benchTree()
	const size = 1 << 20
	ctx := context.Background()
	for _, stride := range []uint64{1, 4, 11, 50, 200, 1000, 5000} {
		set := gameIndices(300_007, stride, 130)
		hashes, proofs, err := ProveMulti(ctx, store, set, size)
		if err != nil {
			t.Fatal(err)
		}
		separate, refs := 0, 0
		for _, p := range proofs {
			separate += len(p)
			refs += len(p)
		}
		// Bytes as the JSON of docs/FORMATS.md §3 spends them: a hash is
		// "hex64", (67 bytes); a table position is its decimal digits and a
		// comma.
		refBytes := 0
		for _, p := range proofs {
			for _, k := range p {
				refBytes += len(strconv.Itoa(k)) + 1
			}
		}
		sharedBytes, separateBytes := 67*len(hashes)+refBytes, 67*separate
		t.Logf("game of 130 events every %5d leaves (span %7d): separate proofs %4d hashes (%6d B), shared table %4d hashes + %4d refs (%6d B): %.1f%% of separate",
			stride, 129*stride+1, separate, separateBytes, len(hashes), refs, sharedBytes, 100*float64(sharedBytes)/float64(separateBytes))
		lh, err := ReadLeafHashes(ctx, store, 0, size, size)
		if err != nil {
			t.Fatal(err)
		}
		sel := make([]Hash, len(set))
		for i, idx := range set {
			sel[i] = lh[idx]
		}
		if err := CheckMulti(sel, set, hashes, proofs, size, root); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkCheckpoint measures signing and opening a checkpoint.
func BenchmarkCheckpoint(b *testing.B) {
	s, v := testLogKey(b, "zarlog.example/log", 1)
	c := Checkpoint{Origin: "zarlog.example/log", Size: 1 << 20, Hash: Hash{1}}
	msg, err := Sign(c, s)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("sign", func(b *testing.B) {
		for b.Loop() {
			if _, err := Sign(c, s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			if _, err := Open(msg, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	w, wv := testCosigner(b, "w.example", 9, testNow)
	line, _ := w.Cosign(c)
	cosigned := append(bytes.Clone(msg), line...)
	b.Run("cosign", func(b *testing.B) {
		for b.Loop() {
			if _, err := w.Cosign(c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("verify-cosignature", func(b *testing.B) {
		for b.Loop() {
			if cs, err := VerifyCosignatures(cosigned, []*CosignatureVerifier{wv}); err != nil || len(cs) != 1 {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCheckInclusion measures CheckInclusion of a proof of 17 hashes
// (a tree of 100,000 leaves), what an SDK does for every receipt.
func BenchmarkCheckInclusion(b *testing.B) {
	const index, size = proof17Index, proof17Size
	leaf, p, root := proof17()
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckInclusion(leaf, index, size, p, root); err != nil {
			b.Fatal(err)
		}
	}
}
