// Package dice implements the arithmetic of zarlog's three provably fair dice
// schemes: tavlarena-v1, anchored-v1 and per-roll-v1. It is pure: no I/O, no
// clock, and randomness only where a caller asks for a fresh seed.
//
// The byte-level contract is docs/SCHEMES.md (from the shared DICE.md). In
// short, every scheme turns HMAC-SHA256 blocks into dice the same way: read
// the 32 bytes of block 0 left to right, skip every byte ≥ 252, map each
// accepted byte b to the die b%6+1, and continue with block 1, 2, … until two
// dice are accepted. What differs between the schemes is the HMAC key and
// message, and what is committed to before the game.
package dice

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
)

// Scheme names as they appear in evidence files and events.
const (
	Tavlarena = "tavlarena-v1"
	Anchored  = "anchored-v1"
	PerRoll   = "per-roll-v1"
)

// Domain-separation strings of tavlarena-v1 (UTF-8, no terminator).
const (
	CtxCommit = "tavlarena-dice-commit-v1"
	CtxRoll   = "tavlarena-dice-roll-v1"
)

// Dice are the two dice of one roll, each from 1 to 6. In an opening roll
// Dice[0] belongs to seat 0 and Dice[1] to seat 1.
type Dice [2]int

// IsDouble reports whether both dice show the same face.
func (d Dice) IsDouble() bool { return d[0] == d[1] }

// Valid reports whether both dice are between 1 and 6.
func (d Dice) Valid() bool { return d[0] >= 1 && d[0] <= 6 && d[1] >= 1 && d[1] <= 6 }

func (d Dice) String() string { return fmt.Sprintf("%d-%d", d[0], d[1]) }

// A Block is one 32-byte HMAC-SHA256 output.
type Block = [32]byte

// FromBlocks turns the stream of MAC blocks into two dice. block(k) must
// return block k; it is called for k = 0, 1, … only as long as fewer than
// two bytes below 252 have been seen. FromBlocks also returns the number of
// blocks it read. A block of 32 bytes that are all ≥ 252 has probability
// 2^-192 per block; FromBlocks does not bound the number of blocks (the
// block counter is a uint32 and wraps only after 2^32 blocks).
func FromBlocks(block func(k uint32) Block) (Dice, uint32) {
	var d Dice
	got := 0
	for k := uint32(0); ; k++ {
		b := block(k)
		for _, c := range b {
			if c >= 252 {
				continue
			}
			d[got] = int(c%6) + 1
			got++
			if got == 2 {
				return d, k + 1
			}
		}
	}
}

// A UUID is 16 bytes in the order its hex digits are written (RFC 9562
// network order, not the little-endian GUID layout).
type UUID [16]byte

// ParseUUID parses the 8-4-4-4-12 hex form of a UUID. Upper- and lower-case
// hex digits are accepted; String always writes lower case.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, fmt.Errorf("uuid %q: want the 8-4-4-4-12 hex form", s)
	}
	h := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	if _, err := hex.Decode(u[:], []byte(h)); err != nil {
		return UUID{}, fmt.Errorf("uuid %q: %w", s, err)
	}
	return u, nil
}

func (u UUID) String() string {
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// u32be appends n as 4 big-endian bytes.
func u32be(b []byte, n uint32) []byte { return binary.BigEndian.AppendUint32(b, n) }

// A Roller computes the dice of one game (or, for per-roll-v1, one roll)
// from its revealed secret. A Roller is not safe for concurrent use.
type Roller interface {
	// Block returns MAC block k of roll n. Per-roll-v1 ignores n.
	Block(n, k uint32) Block
	// Roll returns the dice of roll n. Per-roll-v1 ignores n.
	Roll(n uint32) Dice
}

// macRoller is the common shape of all three schemes: HMAC-SHA256 keyed by
// the seed over prefix ‖ [u32be(n)] ‖ u32be(k).
type macRoller struct {
	mac    hash.Hash
	prefix []byte
	withN  bool
	msg    []byte
}

func newMACRoller(seed [32]byte, prefix []byte, withN bool) *macRoller {
	return &macRoller{mac: hmac.New(sha256.New, seed[:]), prefix: prefix, withN: withN}
}

func (r *macRoller) Block(n, k uint32) Block {
	r.msg = append(r.msg[:0], r.prefix...)
	if r.withN {
		r.msg = u32be(r.msg, n)
	}
	r.msg = u32be(r.msg, k)
	r.mac.Reset()
	r.mac.Write(r.msg)
	var b Block
	r.mac.Sum(b[:0])
	return b
}

func (r *macRoller) Roll(n uint32) Dice {
	d, _ := FromBlocks(func(k uint32) Block { return r.Block(n, k) })
	return d
}

// ErrBadInput is wrapped by every error this package returns for values that
// are out of range or malformed.
var ErrBadInput = errors.New("bad dice input")
