package drand

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/cloudflare/circl/sign/bls"
)

// ownChain returns a chain of the quicknet scheme with its own key (derived
// from name), and a function that signs its rounds.
func ownChain(t testing.TB, name string) (*Chain, func(round uint64) []byte) {
	t.Helper()
	ikm := sha256.Sum256([]byte("zarlog drand test key/" + name))
	sk, err := bls.KeyGen[bls.KeyG2SigG1](ikm[:], nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := sk.PublicKey().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewChain(Params{BeaconID: "test-" + name, Scheme: SchemeG1RFC9380, Period: 3, Genesis: QuicknetParams().Genesis, PublicKey: pub})
	if err != nil {
		t.Fatal(err)
	}
	return c, func(round uint64) []byte {
		m := Message(round)
		return bls.Sign(sk, m[:])
	}
}

func TestCacheHit(t *testing.T) {
	k := NewCache(0)
	q := k.Chain(Quicknet())
	b := beacons[0]
	sig := unhex(t, b.sig)
	for i := range 3 {
		r, err := q.Verify(b.round, sig)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if r != Randomness(sig) {
			t.Fatalf("call %d: randomness %x", i, r)
		}
	}
	if h, m := k.Stats(); h != 2 || m != 1 {
		t.Errorf("hits %d, misses %d; want 2 and 1 (one pairing check for three calls)", h, m)
	}
	if err := q.VerifyBeacon(b.round, sig, [32]byte(unhex(t, b.rand_))); err != nil {
		t.Errorf("VerifyBeacon through the cache: %v", err)
	}
	var wrong [32]byte
	if err := q.VerifyBeacon(b.round, sig, wrong); !errors.Is(err, ErrBadRandomness) {
		t.Errorf("VerifyBeacon with wrong randomness, from the cache: %v", err)
	}
	if k.Len() != 1 {
		t.Errorf("Len %d, want 1", k.Len())
	}
}

// TestCacheRefuses: what is not the very (chain key, round, signature) that
// verified is verified afresh, and refused when it is not valid, after the
// valid beacon is cached. Failures are never remembered.
func TestCacheRefuses(t *testing.T) {
	k := NewCache(0)
	q := Quicknet()
	own, sign := ownChain(t, "a")
	other, _ := ownChain(t, "b")
	b := beacons[0]
	qsig := unhex(t, b.sig)
	osig := sign(b.round)
	if _, err := k.Verify(q, b.round, qsig); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Verify(own, b.round, osig); err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(qsig)
	flipped[len(flipped)-1] ^= 1
	cases := []struct {
		name  string
		chain *Chain
		round uint64
		sig   []byte
	}{
		{"another signature for the round (quicknet's of another round)", q, b.round, unhex(t, beacons[1].sig)},
		{"another signature for the round (one bit changed)", q, b.round, flipped},
		{"the own chain's signature under quicknet's key", q, b.round, osig},
		{"quicknet's signature under the own chain's key", own, b.round, qsig},
		{"the own chain's signature under a third chain's key", other, b.round, osig},
		{"the signature for another round", q, b.round + 1, qsig},
		{"round 0", q, 0, qsig},
		{"a short signature", q, b.round, qsig[:47]},
	}
	for _, c := range cases {
		for try := range 2 { // the second try must fail as the first did
			_, err := k.Verify(c.chain, c.round, c.sig)
			if !errors.Is(err, ErrBadSignature) && !errors.Is(err, ErrBadRound) {
				t.Errorf("%s, try %d: %v, want a refusal", c.name, try, err)
			}
		}
	}
	h, m := k.Stats()
	if h != 0 || m != uint64(2+2*len(cases)) {
		t.Errorf("hits %d, misses %d: every refused beacon must be checked in full each time", h, m)
	}
	if k.Len() != 2 {
		t.Errorf("Len %d, want 2 (the two valid beacons only)", k.Len())
	}
	// The valid ones are still hits.
	if _, err := k.Verify(own, b.round, osig); err != nil {
		t.Error(err)
	}
	if _, err := k.Verify(q, b.round, qsig); err != nil {
		t.Error(err)
	}
	if h, _ := k.Stats(); h != 2 {
		t.Errorf("hits %d, want 2", h)
	}
}

// TestCacheBound: at most the cache's size, the least recently used goes.
func TestCacheBound(t *testing.T) {
	own, sign := ownChain(t, "bound")
	k := NewCache(3)
	sigs := map[uint64][]byte{}
	for r := uint64(1); r <= 5; r++ {
		sigs[r] = sign(r)
	}
	verify := func(r uint64) {
		t.Helper()
		if _, err := k.Verify(own, r, sigs[r]); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
	}
	verify(1)
	verify(2)
	verify(3)
	verify(1) // 1 is now the most recently used; 2 the least
	verify(4) // evicts 2
	if k.Len() != 3 {
		t.Errorf("Len %d, want 3", k.Len())
	}
	h0, m0 := k.Stats()
	verify(1)
	verify(3)
	verify(4)
	if h, m := k.Stats(); h-h0 != 3 || m != m0 {
		t.Errorf("rounds 1, 3, 4 should be cached: hits +%d, misses +%d", h-h0, m-m0)
	}
	verify(2)
	if _, m := k.Stats(); m != m0+1 {
		t.Errorf("round 2 should have been evicted and checked again")
	}
}

func TestCacheNil(t *testing.T) {
	var k *Cache
	if NewCache(-1) != nil {
		t.Error("NewCache(-1) is not the nil cache")
	}
	b := beacons[0]
	sig := unhex(t, b.sig)
	for range 2 {
		if _, err := k.Chain(Quicknet()).Verify(b.round, sig); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := k.Verify(Quicknet(), b.round+1, sig); !errors.Is(err, ErrBadSignature) {
		t.Errorf("nil cache accepted a bad beacon: %v", err)
	}
	if h, m := k.Stats(); h != 0 || m != 0 || k.Len() != 0 {
		t.Error("the nil cache holds something")
	}
}

// TestCacheConcurrent checks the cache under -race: callers of valid and
// invalid beacons at once, with evictions.
func TestCacheConcurrent(t *testing.T) {
	own, sign := ownChain(t, "concurrent")
	k := NewCache(4)
	sigs := make([][]byte, 8)
	for i := range sigs {
		sigs[i] = sign(uint64(i + 1))
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 6 {
				r := uint64((w+i)%len(sigs) + 1)
				if _, err := k.Verify(own, r, sigs[r-1]); err != nil {
					t.Errorf("round %d: %v", r, err)
				}
				if _, err := k.Verify(own, r, sigs[r%uint64(len(sigs))]); err == nil {
					t.Errorf("round %d: another round's signature accepted", r)
				}
			}
		})
	}
	wg.Wait()
	if k.Len() > 4 {
		t.Errorf("Len %d over the bound 4", k.Len())
	}
}

// TestCacheMemory backs DefaultCacheEntries' "under 200 bytes each": the
// heap a full default cache holds.
func TestCacheMemory(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	k := NewCache(0)
	for i := range DefaultCacheEntries + 10 {
		// Entries are inserted as Verify inserts them; the pairing check
		// is skipped (it is what the cache remembers, not what it holds).
		key := sha256.Sum256([]byte{byte(i), byte(i >> 8)})
		k.m[key] = k.lru.PushFront(key)
		if k.lru.Len() > k.max {
			old := k.lru.Back()
			k.lru.Remove(old)
			delete(k.m, old.Value.([32]byte))
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / DefaultCacheEntries
	t.Logf("%.0f bytes per entry", per)
	if per > 200 {
		t.Errorf("%.0f bytes per entry, the documentation says under 200", per)
	}
	runtime.KeepAlive(k)
}
