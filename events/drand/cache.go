package drand

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"sync"
)

// DefaultCacheEntries is a Cache's size when NewCache is given zero: 1024
// beacons, 51 minutes of quicknet rounds, under 200 bytes each (about
// 200 KiB in all; TestCacheMemory).
const DefaultCacheEntries = 1024

// A Cache remembers beacons that verified, so that a beacon checked once is
// not checked again with a BLS pairing check (about a millisecond). On a
// platform, many anchored-v1 games are anchored to the same round: every
// game sealed within the same three seconds names the same next quicknet
// round, and each logs that round's beacon.
//
// Whether a beacon verifies depends only on the chain's scheme and public
// key, the round and the signature's bytes (Verify reads nothing else), so
// a success is remembered under SHA-256 of exactly those; a hit returns
// SHA-256 of the signature, as Verify does. Failures are never remembered:
// a signature that did not verify is checked again, in full, every time it
// is offered. A different signature for a cached round, or the same
// signature under another chain's key, is another key of the cache, so it
// is verified afresh. Since a cached entry can only be made by a signature
// that verified, an adversary can fill the cache only with real beacons; it
// can evict others (the least recently used goes first), which costs the
// evicted beacon's next game one full check, never a wrong answer.
//
// A Cache is bounded by its number of entries and is safe for concurrent
// use; one Cache can serve several chains.
type Cache struct {
	max int

	mu   sync.Mutex
	m    map[[32]byte]*list.Element // element values are [32]byte keys
	lru  list.List                  // most recently used at the front
	hits uint64
	miss uint64
}

// NewCache returns a cache of at most entries verified beacons; zero means
// DefaultCacheEntries. A negative size is refused by returning nil, which
// is a valid Cache that remembers nothing.
func NewCache(entries int) *Cache {
	if entries < 0 {
		return nil
	}
	if entries == 0 {
		entries = DefaultCacheEntries
	}
	return &Cache{max: entries, m: make(map[[32]byte]*list.Element, min(entries, 4096))}
}

// cacheKey is SHA-256 of a domain tag, the chain's scheme (length-prefixed)
// and public key, the round and the signature: everything a beacon's
// verification depends on.
func cacheKey(c *Chain, round uint64, sig []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte("zarlog drand verified beacon v1\x00"))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(len(c.params.Scheme)))
	h.Write(b[:])
	h.Write([]byte(c.params.Scheme))
	h.Write(c.params.PublicKey) // always PublicKeySize bytes (NewChain)
	binary.BigEndian.PutUint64(b[:], round)
	h.Write(b[:])
	h.Write(sig)
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// Verify is c.Verify(round, sig), answered from the cache when the same
// chain key has verified the same signature for the same round before. Only
// a success is remembered. A nil Cache verifies every time.
func (k *Cache) Verify(c *Chain, round uint64, sig []byte) ([32]byte, error) {
	if k == nil {
		return c.Verify(round, sig)
	}
	key := cacheKey(c, round, sig)
	k.mu.Lock()
	if e, ok := k.m[key]; ok {
		k.lru.MoveToFront(e)
		k.hits++
		k.mu.Unlock()
		return Randomness(sig), nil
	}
	k.miss++
	k.mu.Unlock()
	// The pairing check runs outside the lock: two callers that miss at
	// once both verify, and the second insert finds the first's entry.
	r, err := c.Verify(round, sig)
	if err != nil {
		return r, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if e, ok := k.m[key]; ok {
		k.lru.MoveToFront(e)
		return r, nil
	}
	k.m[key] = k.lru.PushFront(key)
	if k.lru.Len() > k.max {
		old := k.lru.Back()
		k.lru.Remove(old)
		delete(k.m, old.Value.([32]byte))
	}
	return r, nil
}

// Len returns the number of beacons the cache holds.
func (k *Cache) Len() int {
	if k == nil {
		return 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lru.Len()
}

// Stats returns how many calls of Verify were answered from the cache
// (hits) and how many ran the pairing check (misses, failures included).
func (k *Cache) Stats() (hits, misses uint64) {
	if k == nil {
		return 0, 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.hits, k.miss
}

// Chain returns c with its Verify and VerifyBeacon answered through the
// cache; its other methods are c's. It satisfies events.BeaconVerifier.
func (k *Cache) Chain(c *Chain) *CachedChain { return &CachedChain{Chain: c, cache: k} }

// A CachedChain is a Chain whose beacon checks go through a Cache
// (Cache.Chain).
type CachedChain struct {
	*Chain
	cache *Cache
}

// Verify is Chain.Verify through the cache.
func (cc *CachedChain) Verify(round uint64, signature []byte) ([32]byte, error) {
	return cc.cache.Verify(cc.Chain, round, signature)
}

// VerifyBeacon is Chain.VerifyBeacon through the cache.
func (cc *CachedChain) VerifyBeacon(round uint64, signature []byte, randomness [32]byte) error {
	r, err := cc.Verify(round, signature)
	if err != nil {
		return err
	}
	return checkRandomness(round, r, randomness)
}
