// Package drand verifies drand randomness beacons offline, for the outside
// anchor of the anchored-v1 dice scheme (docs/SCHEMES.md, "The drand anchor").
//
// drand is a public randomness beacon run jointly by independent operators
// (the League of Entropy). Its quicknet chain emits one beacon every 3
// seconds: round r is a BLS signature, by the chain's threshold key, of
// SHA-256(u64be(r)), and the round's randomness is SHA-256 of that signature.
// Quicknet uses the scheme "bls-unchained-g1-rfc9380": 48-byte compressed
// signatures on G1, a 96-byte public key on G2, and the RFC 9380 hash-to-G1
// domain-separation tag BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_.
//
// A round that did not yet exist when a game was sealed could not have been
// known, let alone chosen, by anyone taking part in the game. This package
// answers the three questions the dice verifier needs: is this signature the
// chain's beacon for this round, what is its randomness, and did the round
// exist at a given time. It is pure: no network, no clock. Chain parameters
// are pinned in the source and the chain hash is recomputed from them; a
// later relay client can fetch beacons and hand their bytes to Verify.
package drand

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/cloudflare/circl/sign/bls"
)

// SchemeG1RFC9380 is the only drand signature scheme this package verifies:
// unchained beacons, signatures on G1 with the RFC 9380 DST, keys on G2.
const SchemeG1RFC9380 = "bls-unchained-g1-rfc9380"

// SignatureSize is the size of a compressed G1 signature.
const SignatureSize = 48

// PublicKeySize is the size of a compressed G2 public key.
const PublicKeySize = 96

// Errors returned by this package. Callers branch on them with errors.Is;
// the returned errors wrap them with the numbers involved.
var (
	// ErrUnknownChain: the chain hash is not one of the pinned chains.
	ErrUnknownChain = errors.New("drand: unknown chain")
	// ErrBadRound: round 0 does not exist (rounds start at 1).
	ErrBadRound = errors.New("drand: no such round")
	// ErrBadSignature: the signature is malformed or is not the chain's
	// signature of the round.
	ErrBadSignature = errors.New("drand: bad beacon signature")
	// ErrBadRandomness: the randomness is not SHA-256 of the signature.
	ErrBadRandomness = errors.New("drand: randomness is not SHA-256 of the signature")
	// ErrBadParams: chain parameters that NewChain refuses.
	ErrBadParams = errors.New("drand: bad chain parameters")
)

// Params are the public parameters of a drand chain, as its /info endpoint
// reports them.
type Params struct {
	BeaconID    string   // e.g. "quicknet"; "default" is the unnamed chain
	Scheme      string   // must be SchemeG1RFC9380
	Period      uint32   // seconds between rounds
	Genesis     int64    // Unix time of round 1
	PublicKey   []byte   // compressed G2 point, 96 bytes
	GenesisSeed [32]byte // the group hash
}

// Hash returns the chain hash of p: SHA-256(u32be(period) ‖ i64be(genesis) ‖
// publicKey ‖ genesisSeed ‖ beaconID), where the beacon id is left out for
// the chain named "default" (drand's rule; quicknet is not "default").
func (p Params) Hash() [32]byte {
	h := sha256.New()
	var b [12]byte
	binary.BigEndian.PutUint32(b[0:4], p.Period)
	binary.BigEndian.PutUint64(b[4:12], uint64(p.Genesis))
	h.Write(b[:])
	h.Write(p.PublicKey)
	h.Write(p.GenesisSeed[:])
	if p.BeaconID != "" && p.BeaconID != "default" {
		h.Write([]byte(p.BeaconID))
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// A Chain is a drand chain whose parameters are known: it verifies that
// chain's beacons and converts between rounds and times. A Chain is
// immutable and safe for concurrent use.
type Chain struct {
	params Params
	hash   [32]byte
	key    bls.PublicKey[bls.KeyG2SigG1]
}

// NewChain returns the Chain with parameters p, after checking that the
// scheme is SchemeG1RFC9380, the period is positive and the public key is a
// valid G2 point. Decoding the key costs about a millisecond, so keep the
// Chain rather than building it per beacon.
func NewChain(p Params) (*Chain, error) {
	if p.Scheme != SchemeG1RFC9380 {
		return nil, fmt.Errorf("%w: scheme %q, want %q", ErrBadParams, p.Scheme, SchemeG1RFC9380)
	}
	if p.Period == 0 {
		return nil, fmt.Errorf("%w: period 0", ErrBadParams)
	}
	if len(p.PublicKey) != PublicKeySize {
		return nil, fmt.Errorf("%w: public key is %d bytes, want %d", ErrBadParams, len(p.PublicKey), PublicKeySize)
	}
	c := &Chain{params: p, hash: p.Hash()}
	c.params.PublicKey = append([]byte(nil), p.PublicKey...)
	if err := c.key.UnmarshalBinary(c.params.PublicKey); err != nil {
		return nil, fmt.Errorf("%w: public key: %w", ErrBadParams, err)
	}
	if !c.key.Validate() {
		return nil, fmt.Errorf("%w: public key is not a point of G2", ErrBadParams)
	}
	return c, nil
}

// The pinned parameters of the League of Entropy quicknet chain.
const (
	quicknetHash        = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"
	quicknetPublicKey   = "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a"
	quicknetGenesisSeed = "f477d5c89f21a17c863a7f937c6a6d15859414d2be09cd448d4279af331c5d3e"
	quicknetGenesis     = 1692803367 // 2023-08-23T15:09:27Z
	quicknetPeriod      = 3
)

// QuicknetParams returns the pinned parameters of the quicknet chain.
func QuicknetParams() Params {
	return Params{
		BeaconID:    "quicknet",
		Scheme:      SchemeG1RFC9380,
		Period:      quicknetPeriod,
		Genesis:     quicknetGenesis,
		PublicKey:   mustHex(quicknetPublicKey),
		GenesisSeed: [32]byte(mustHex(quicknetGenesisSeed)),
	}
}

// quicknet decodes the pinned chain once, on first use. A failure here is a
// broken invariant of this source file (the pinned constants), not bad input.
var quicknet = sync.OnceValue(func() *Chain {
	c, err := NewChain(QuicknetParams())
	if err != nil {
		panic("drand: pinned quicknet parameters: " + err.Error())
	}
	if got := hex.EncodeToString(c.hash[:]); got != quicknetHash {
		panic("drand: pinned quicknet parameters hash to " + got + ", want " + quicknetHash)
	}
	return c
})

// Quicknet returns the pinned League of Entropy quicknet chain, chain hash
// 52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971.
func Quicknet() *Chain { return quicknet() }

// ChainByHash returns the pinned chain with chain hash h. Only quicknet is
// pinned: testnets and deprecated chains (fastnet, quicknet-t) are unknown on
// purpose, since a game anchored to them would not have an independent anchor.
func ChainByHash(h [32]byte) (*Chain, bool) {
	if hex.EncodeToString(h[:]) == quicknetHash {
		return Quicknet(), true
	}
	return nil, false
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic("drand: bad pinned hex: " + err.Error())
	}
	return b
}

// Hash returns the chain hash, recomputed from the chain's parameters.
func (c *Chain) Hash() [32]byte { return c.hash }

// Params returns a copy of the chain's parameters.
func (c *Chain) Params() Params {
	p := c.params
	p.PublicKey = append([]byte(nil), p.PublicKey...)
	return p
}

// Period returns the time between two rounds.
func (c *Chain) Period() time.Duration { return time.Duration(c.params.Period) * time.Second }

// Genesis returns the time of round 1.
func (c *Chain) Genesis() time.Time { return time.Unix(c.params.Genesis, 0).UTC() }

// Message returns the message a round's signature signs: SHA-256(u64be(round)).
func Message(round uint64) [32]byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], round)
	return sha256.Sum256(b[:])
}

// Randomness returns the randomness of a beacon: SHA-256(signature).
func Randomness(signature []byte) [32]byte { return sha256.Sum256(signature) }

// Verify checks that signature is the chain's beacon signature for round
// and returns the round's randomness, SHA-256(signature). The signature must
// be the 48-byte compressed form (the bytes the randomness is taken over).
// Errors wrap ErrBadRound or ErrBadSignature.
func (c *Chain) Verify(round uint64, signature []byte) (randomness [32]byte, err error) {
	if round == 0 {
		return [32]byte{}, fmt.Errorf("%w: round 0 (rounds start at 1)", ErrBadRound)
	}
	if len(signature) != SignatureSize {
		return [32]byte{}, fmt.Errorf("%w: round %d: signature is %d bytes, want %d", ErrBadSignature, round, len(signature), SignatureSize)
	}
	if signature[0]&0x80 == 0 {
		return [32]byte{}, fmt.Errorf("%w: round %d: signature is not in compressed form", ErrBadSignature, round)
	}
	msg := Message(round)
	if !bls.Verify(&c.key, msg[:], signature) {
		return [32]byte{}, fmt.Errorf("%w: round %d: signature does not verify under chain %x", ErrBadSignature, round, c.hash[:4])
	}
	return Randomness(signature), nil
}

// VerifyBeacon checks a stored beacon: the signature as Verify does, and that
// randomness is SHA-256 of the signature (ErrBadRandomness if not).
func (c *Chain) VerifyBeacon(round uint64, signature []byte, randomness [32]byte) error {
	r, err := c.Verify(round, signature)
	if err != nil {
		return err
	}
	return checkRandomness(round, r, randomness)
}

// checkRandomness checks a beacon's stated randomness against r, the
// SHA-256 of its verified signature.
func checkRandomness(round uint64, r, randomness [32]byte) error {
	if r != randomness {
		return fmt.Errorf("%w: round %d: randomness %x, SHA-256 of the signature is %x", ErrBadRandomness, round, randomness, r)
	}
	return nil
}

// RoundTime returns the time round is emitted: genesis + (round−1)·period.
// Round 0 does not exist; RoundTime(0) is genesis − period. Rounds too late
// for a time.Time saturate at the largest Unix second.
func (c *Chain) RoundTime(round uint64) time.Time {
	p := uint64(c.params.Period)
	if round == 0 {
		return time.Unix(c.params.Genesis-int64(p), 0).UTC()
	}
	k := round - 1
	if k > (math.MaxInt64-uint64(max(c.params.Genesis, 0)))/p {
		return time.Unix(math.MaxInt64, 0).UTC()
	}
	return time.Unix(c.params.Genesis+int64(k*p), 0).UTC()
}

// RoundAt returns the latest round that exists at time t:
// floor((t − genesis) / period) + 1, or 0 before genesis.
func (c *Chain) RoundAt(t time.Time) uint64 {
	// Genesis and period are whole seconds, so the fraction of t's second
	// never changes the floor once t ≥ genesis; t.Unix() floors toward −∞.
	s := t.Unix()
	if s < c.params.Genesis {
		return 0
	}
	return uint64(s-c.params.Genesis)/uint64(c.params.Period) + 1
}

// ExistedAt reports whether round had been emitted at time t, that is
// whether t ≥ genesis + (round−1)·period. Round 0 never exists. A round that
// did not exist when a game was sealed (ExistedAt(round, sealedAt) == false)
// could not have been known to anyone when the game was sealed.
func (c *Chain) ExistedAt(round uint64, t time.Time) bool {
	return round >= 1 && round <= c.RoundAt(t)
}
