package dice

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"github.com/zarlog/zarlog/events/cjson"
)

// SettingsHash returns SHA-256 of the canonical JSON form of settings. The
// settings text may be in any valid JSON form; it is canonicalized first, and
// anything canonical JSON refuses (floats, unsafe integers, duplicate keys)
// is an error. Settings must be a JSON object.
func SettingsHash(settings []byte) ([32]byte, error) {
	c, err := cjson.Parse(settings)
	if err != nil {
		return [32]byte{}, fmt.Errorf("settings: %w", err)
	}
	if len(c) == 0 || c[0] != '{' {
		return [32]byte{}, fmt.Errorf("settings: %w: not a JSON object", ErrBadInput)
	}
	return sha256.Sum256(c), nil
}

// TavlarenaCommitment returns the tavlarena-v1 commitment
// SHA-256(ctxCommit ‖ gameId ‖ settingsHash ‖ seat0Id ‖ seat1Id ‖ seed).
func TavlarenaCommitment(gameID UUID, settingsHash [32]byte, seats [2]UUID, seed [32]byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(CtxCommit))
	h.Write(gameID[:])
	h.Write(settingsHash[:])
	h.Write(seats[0][:])
	h.Write(seats[1][:])
	h.Write(seed[:])
	var c [32]byte
	h.Sum(c[:0])
	return c
}

// NewTavlarena returns the Roller of a tavlarena-v1 game: block k of roll n is
// HMAC-SHA256(key = seed, ctxRoll ‖ gameId ‖ contribution0 ‖ contribution1 ‖
// u32be(n) ‖ u32be(k)).
func NewTavlarena(seed [32]byte, gameID UUID, contributions [2][32]byte) Roller {
	p := make([]byte, 0, len(CtxRoll)+16+64)
	p = append(p, CtxRoll...)
	p = append(p, gameID[:]...)
	p = append(p, contributions[0][:]...)
	p = append(p, contributions[1][:]...)
	return newMACRoller(seed, p, true)
}

// Fingerprint returns SHA-256(seed): the anchored-v1 fingerprint and the
// per-roll-v1 commitment.
func Fingerprint(seed [32]byte) [32]byte { return sha256.Sum256(seed[:]) }

// Token length bounds of anchored-v1, in bytes of UTF-8.
const (
	MinTokenLen = 1
	MaxTokenLen = 256
)

// CheckToken returns an error if t is not a valid anchored-v1 player token:
// valid UTF-8 of 1 to 256 bytes.
func CheckToken(t string) error {
	if len(t) < MinTokenLen || len(t) > MaxTokenLen {
		return fmt.Errorf("token is %d bytes, want 1..256: %w", len(t), ErrBadInput)
	}
	if !utf8.ValidString(t) {
		return fmt.Errorf("token is not valid UTF-8: %w", ErrBadInput)
	}
	return nil
}

// An Anchor names a drand beacon round and carries its randomness, which is
// SHA-256 of the beacon's signature. Verifying the beacon is package drand's
// job; this package only binds its values.
type Anchor struct {
	Chain      [32]byte // drand chain hash
	Round      uint64
	Randomness [32]byte
}

// AnchoredBinding returns the anchored-v1 binding
// lp(matchId) ‖ lp(u32be(gameNo)) ‖ lp(token0) ‖ lp(token1) ‖ lp(chainHash) ‖
// lp(u64be(round)) ‖ lp(randomness), where lp(x) = u32be(len(x)) ‖ x.
func AnchoredBinding(matchID string, gameNo uint32, tokens [2]string, a Anchor) []byte {
	var b []byte
	lp := func(x []byte) {
		b = u32be(b, uint32(len(x)))
		b = append(b, x...)
	}
	lp([]byte(matchID))
	lp(binary.BigEndian.AppendUint32(nil, gameNo))
	lp([]byte(tokens[0]))
	lp([]byte(tokens[1]))
	lp(a.Chain[:])
	lp(binary.BigEndian.AppendUint64(nil, a.Round))
	lp(a.Randomness[:])
	return b
}

// NewAnchored returns the Roller of an anchored-v1 game: block k of roll n is
// HMAC-SHA256(key = seed, binding ‖ u32be(n) ‖ u32be(k)).
func NewAnchored(seed [32]byte, binding []byte) Roller {
	return newMACRoller(seed, append([]byte(nil), binding...), true)
}

// NewPerRoll returns the Roller of one per-roll-v1 roll: block k (the block
// counter) is HMAC-SHA256(key = seed_r, matchId ‖ rollId ‖ u32be(k) ‖ second).
// The roll number n passed to Block and Roll is ignored.
func NewPerRoll(seed [32]byte, matchID, rollID UUID, second [32]byte) Roller {
	return &perRollRoller{seed: seed, matchID: matchID, rollID: rollID, second: second}
}

type perRollRoller struct {
	seed            [32]byte
	matchID, rollID UUID
	second          [32]byte
	inner           *macRoller
}

func (r *perRollRoller) Block(_, k uint32) Block {
	if r.inner == nil {
		r.inner = newMACRoller(r.seed, nil, false)
	}
	m := r.inner
	m.msg = append(m.msg[:0], r.matchID[:]...)
	m.msg = append(m.msg, r.rollID[:]...)
	m.msg = u32be(m.msg, k)
	m.msg = append(m.msg, r.second[:]...)
	m.mac.Reset()
	m.mac.Write(m.msg)
	var b Block
	m.mac.Sum(b[:0])
	return b
}

func (r *perRollRoller) Roll(n uint32) Dice {
	d, _ := FromBlocks(func(k uint32) Block { return r.Block(n, k) })
	return d
}
