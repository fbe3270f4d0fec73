package dice

import (
	"bytes"
	"fmt"
	"strings"
)

// crockford is the Crockford base32 alphabet.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// A Seal is the first 40 bits of a commitment: what a seal code shows.
type Seal [5]byte

// SealOf returns the seal of a 32-byte commitment.
func SealOf(commitment [32]byte) Seal {
	var s Seal
	copy(s[:], commitment[:5])
	return s
}

// String returns the seal code: 8 Crockford base32 symbols, most significant
// bits first, written XXXX-XXXX.
func (s Seal) String() string {
	var v uint64
	for _, b := range s {
		v = v<<8 | uint64(b)
	}
	var out [9]byte
	j := 8
	for i := 7; i >= 0; i-- {
		if i == 3 {
			out[j] = '-'
			j--
		}
		out[j] = crockford[v&31]
		v >>= 5
		j--
	}
	return string(out[:])
}

// SealCode returns the seal code of a commitment, e.g. "5CJ3-5ZCZ".
func SealCode(commitment [32]byte) string { return SealOf(commitment).String() }

// Matches reports whether the seal is the seal of commitment.
func (s Seal) Matches(commitment [32]byte) bool { return bytes.Equal(s[:], commitment[:5]) }

// ParseSealCode decodes a seal code as a person types it: case is ignored,
// O reads as 0, I and L read as 1, and hyphens and spaces are ignored. It
// needs exactly 8 symbols.
func ParseSealCode(s string) (Seal, error) {
	var v uint64
	n := 0
	for _, r := range s {
		switch r {
		case '-', ' ':
			continue
		}
		c := r
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		switch c {
		case 'O':
			c = '0'
		case 'I', 'L':
			c = '1'
		}
		i := -1
		if c < 128 {
			i = strings.IndexByte(crockford, byte(c))
		}
		if i < 0 {
			return Seal{}, fmt.Errorf("seal code %q: %q is not a Crockford base32 symbol: %w", s, r, ErrBadInput)
		}
		n++
		if n > 8 {
			return Seal{}, fmt.Errorf("seal code %q: more than 8 symbols: %w", s, ErrBadInput)
		}
		v = v<<5 | uint64(i)
	}
	if n != 8 {
		return Seal{}, fmt.Errorf("seal code %q: %d symbols, want 8: %w", s, n, ErrBadInput)
	}
	var out Seal
	for i := 4; i >= 0; i-- {
		out[i] = byte(v)
		v >>= 8
	}
	return out, nil
}
