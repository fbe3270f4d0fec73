package merkle

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// TestNodeCache: a NodeCache's inclusion proofs are InclusionProof's, in a
// tree that grows past two tile levels (its partial tiles at every width
// they take), for recent leaves and old ones, from goroutines at once; a
// proof whose tiles it holds reads none; it keeps at most its size.
func TestNodeCache(t *testing.T) {
	ctx := context.Background()
	b, err := NewBuilder(ctx, nil, State{})
	if err != nil {
		t.Fatal(err)
	}
	store := newMemReader()
	cache := NewNodeCache(8)
	rng := rand.New(rand.NewPCG(3, 1))
	var size uint64
	for size < 70_000 {
		n := 1 + rng.IntN(3000)
		batch := make([][]byte, n)
		for i := range batch {
			batch[i] = binary.BigEndian.AppendUint64(nil, size+uint64(i))
		}
		tds, err := b.Append(batch)
		if err != nil {
			t.Fatal(err)
		}
		store.store(tds)
		size += uint64(n)
		// The receipts of a checkpoint: mostly recent leaves, some old.
		var wg sync.WaitGroup
		for g := range 4 {
			idx := make([]uint64, 12)
			for i := range idx {
				if i%4 == 3 {
					idx[i] = rng.Uint64N(size)
				} else {
					idx[i] = size - 1 - rng.Uint64N(min(size, 600))
				}
			}
			wg.Go(func() {
				for _, i := range idx {
					want, err := InclusionProof(ctx, store, i, size)
					if err != nil {
						t.Errorf("size %d, leaf %d: %v", size, i, err)
						return
					}
					got, err := cache.InclusionProof(ctx, store, i, size)
					if err != nil || !slices.Equal(got, want) {
						t.Errorf("goroutine %d, size %d, leaf %d: the cache's proof %x (%v), want %x", g, size, i, got, err, want)
						return
					}
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		if n := cache.Len(); n > 8 {
			t.Fatalf("the cache holds %d tiles, more than its 8", n)
		}
		// Asked again, the last leaf's proof reads no tile.
		if _, err := cache.InclusionProof(ctx, store, size-1, size); err != nil {
			t.Fatal(err)
		}
		store.mu.Lock()
		before := store.calls
		store.mu.Unlock()
		if _, err := cache.InclusionProof(ctx, store, size-1, size); err != nil {
			t.Fatal(err)
		}
		store.mu.Lock()
		after := store.calls
		store.mu.Unlock()
		if after != before {
			t.Fatalf("size %d: a proof the cache holds every tile of read tiles %d times", size, after-before)
		}
	}
	var nilCache *NodeCache
	if p, err := nilCache.InclusionProof(ctx, store, 5, size); err != nil || len(p) == 0 || nilCache.Len() != 0 {
		t.Errorf("a nil NodeCache: %x, %v", p, err)
	}
}

// BenchmarkInclusionProofRecent measures the inclusion proofs of a
// checkpoint's receipts, leaves among its last 800 in a tree of 2^20, with
// and without a NodeCache: what the ingest's receipts cost at a human pace.
func BenchmarkInclusionProofRecent(b *testing.B) {
	store, _ := benchTree()
	const size = 1 << 20
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		cache *NodeCache
	}{{"uncached", nil}, {"cached", NewNodeCache(64)}} {
		b.Run(c.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 1))
			for b.Loop() {
				idx := size - 1 - rng.Uint64N(800)
				if _, err := c.cache.InclusionProof(ctx, store, idx, size); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
