package ledger

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/hex"
	"math/big"
	"math/rand/v2"
	"testing"

	"filippo.io/edwards25519"
)

// The points of the curve's torsion subgroup (order dividing 8), in their
// canonical encodings. edgePoints checks that each is one.
var torsionHex = []string{
	"0100000000000000000000000000000000000000000000000000000000000000", // identity
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
	"0000000000000000000000000000000000000000000000000000000000000080", // order 4
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85", // order 8
	"0000000000000000000000000000000000000000000000000000000000000000", // order 4
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa", // order 8
}

// torsion returns the eight torsion points, checked: each decodes, is
// killed by the cofactor, and they are distinct.
func torsion(t testing.TB) []*edwards25519.Point {
	var out []*edwards25519.Point
	for _, h := range torsionHex {
		b, _ := hex.DecodeString(h)
		p, err := new(edwards25519.Point).SetBytes(b)
		if err != nil {
			t.Fatalf("torsion point %s: %v", h, err)
		}
		if new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) != 1 {
			t.Fatalf("%s is not of small order", h)
		}
		for _, q := range out {
			if q.Equal(p) == 1 {
				t.Fatalf("%s twice", h)
			}
		}
		out = append(out, p)
	}
	return out
}

// edgeEncodings returns the 32-byte strings of the encodings where
// implementations differ: the torsion points' canonical encodings, and
// every y below 19 written as y and as y+p (non-canonical), each with the
// sign bit clear and set (x = 0 with the sign bit set is non-canonical
// too). Some of them are not points at all.
func edgeEncodings() [][]byte {
	var out [][]byte
	for _, h := range torsionHex {
		b, _ := hex.DecodeString(h)
		out = append(out, b)
	}
	p := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))
	for y := int64(0); y < 19; y++ {
		for _, v := range []*big.Int{big.NewInt(y), new(big.Int).Add(p, big.NewInt(y))} {
			for _, sign := range []byte{0, 0x80} {
				b := make([]byte, 32)
				v.FillBytes(b)
				for i, j := 0, 31; i < j; i, j = i+1, j-1 {
					b[i], b[j] = b[j], b[i]
				}
				b[31] |= sign
				if !containsBytes(out, b) {
					out = append(out, b)
				}
			}
		}
	}
	return out
}

func containsBytes(list [][]byte, b []byte) bool {
	for _, x := range list {
		if bytes.Equal(x, b) {
			return true
		}
	}
	return false
}

// sigPair checks one (key, message, signature) with the ledger's check
// (sigKeys.verify, with the key expanded as newSigKeys expands it) and with
// crypto/ed25519.Verify, and fails t if they differ. It returns the
// verdict.
func sigPair(t testing.TB, pub, msg, sig []byte) bool {
	t.Helper()
	want := ed25519.Verify(pub, msg, sig)
	s := sigKeys{"e": {expandKey(pub)}}
	if got := s.verify("e", 0, pub, msg, sig); got != want {
		t.Errorf("pub %x msg %q sig %x: the ledger says %v, crypto/ed25519 says %v", pub, msg, sig, got, want)
	}
	return want
}

// challenge is k = SHA-512(R ‖ A ‖ msg) mod ℓ.
func challenge(r, a, msg []byte) *edwards25519.Scalar {
	h := sha512.New()
	h.Write(r)
	h.Write(a)
	h.Write(msg)
	k, err := new(edwards25519.Scalar).SetUniformBytes(h.Sum(nil))
	if err != nil {
		panic(err)
	}
	return k
}

func sigOf(r []byte, s *edwards25519.Scalar) []byte {
	return append(append([]byte(nil), r...), s.Bytes()...)
}

// TestSigDifferential holds the ledger's Ed25519 check (curve25519-voi with
// expanded keys) to crypto/ed25519's verdict where implementations are
// known to differ ("Taming the many EdDSAs", Chalkias et al. 2020):
// small-order and mixed-order keys and R, non-canonical encodings of A and
// R, s ≥ ℓ, and the cofactored versus cofactorless equation. It counts the
// signatures crypto/ed25519 accepts, so that the cases are not all
// refusals.
func TestSigDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tor := torsion(t)
	edges := edgeEncodings()
	msgs := [][]byte{nil, []byte("a"), []byte("zarlog-event-v1\n{}"), bytes.Repeat([]byte{0xff}, 300)}
	accepted, total := 0, 0
	count := func(ok bool) {
		total++
		if ok {
			accepted++
		}
	}

	// Small-order A and R in every encoding, s = 0: valid iff R = -[k]A,
	// with R's bytes compared literally (so a non-canonical R never is).
	zero := edwards25519.NewScalar()
	for _, a := range edges {
		for _, r := range edges {
			for _, m := range msgs {
				count(sigPair(t, a, m, sigOf(r, zero)))
			}
		}
	}

	// Small-order A, random s, R = [s]B - T for each torsion point T:
	// valid iff [k]A = T.
	for _, a := range edges {
		if _, err := new(edwards25519.Point).SetBytes(a); err != nil {
			continue
		}
		for _, T := range tor {
			s := randScalar(rng)
			R := new(edwards25519.Point).Subtract(new(edwards25519.Point).ScalarBaseMult(s), T)
			for _, m := range msgs {
				count(sigPair(t, a, m, sigOf(R.Bytes(), s)))
			}
		}
	}

	// Mixed-order A = [a]B + T_A and R = [r]B + T_R with s = r + k·a: the
	// cofactored equation holds always, the cofactorless one iff
	// T_R + [k]T_A = 0.
	for _, TA := range tor {
		for _, TR := range tor {
			for range 4 {
				a, r := randScalar(rng), randScalar(rng)
				A := new(edwards25519.Point).Add(new(edwards25519.Point).ScalarBaseMult(a), TA)
				R := new(edwards25519.Point).Add(new(edwards25519.Point).ScalarBaseMult(r), TR)
				m := msgs[rng.IntN(len(msgs))]
				k := challenge(R.Bytes(), A.Bytes(), m)
				s := new(edwards25519.Scalar).MultiplyAdd(k, a, r)
				count(sigPair(t, A.Bytes(), m, sigOf(R.Bytes(), s)))
			}
		}
	}

	// Ordinary signatures, and the same with s + ℓ (a non-canonical
	// scalar, refused), the top bits of s set, and each bit of R, s and
	// the key flipped in turn.
	ell, _ := new(big.Int).SetString("7237005577332262213973186563042994240857116359379907606001950938285454250989", 10)
	for i := range 8 {
		pub, priv, _ := ed25519.GenerateKey(rng32(rng))
		m := msgs[i%len(msgs)]
		sig := ed25519.Sign(priv, m)
		count(sigPair(t, pub, m, sig))

		s := new(big.Int).SetBytes(reverse(sig[32:]))
		sl := make([]byte, 32)
		new(big.Int).Add(s, ell).FillBytes(sl)
		count(sigPair(t, pub, m, append(sig[:32:32], reverse(sl)...)))
		top := bytes.Clone(sig)
		top[63] |= 0xe0
		count(sigPair(t, pub, m, top))
		for bit := range 8 * 64 {
			bad := bytes.Clone(sig)
			bad[bit/8] ^= 1 << (bit % 8)
			count(sigPair(t, pub, m, bad))
		}
		for bit := range 8 * 32 {
			bad := bytes.Clone(pub)
			bad[bit/8] ^= 1 << (bit % 8)
			count(sigPair(t, bad, m, sig))
		}
	}
	t.Logf("%d cases, %d accepted by crypto/ed25519", total, accepted)
	if accepted < 100 || accepted == total {
		t.Fatalf("%d of %d cases accepted: the cases do not probe both verdicts", accepted, total)
	}
}

// FuzzSigDifferential compares the ledger's Ed25519 check with
// crypto/ed25519's on arbitrary (key, message, signature) triples, and on
// signatures built from fuzzed scalars, torsion components and messages
// (the mixed-order construction of TestSigDifferential), which reach the
// accepting side of the equation.
func FuzzSigDifferential(f *testing.F) {
	pub, priv, _ := ed25519.GenerateKey(bytes.NewReader(make([]byte, 32)))
	f.Add([]byte(pub), []byte("m"), ed25519.Sign(priv, []byte("m")), uint8(0), uint8(0))
	f.Add(make([]byte, 32), []byte{}, make([]byte, 64), uint8(3), uint8(5))
	edges := edgeEncodings()
	for i, e := range edges {
		f.Add(e, []byte("x"), append(bytes.Clone(edges[(i+1)%len(edges)]), make([]byte, 32)...), uint8(i), uint8(i*3))
	}
	tor := torsion(f)
	f.Fuzz(func(t *testing.T, key, msg, sig []byte, ta, tr uint8) {
		if len(key) == 32 && len(sig) == 64 {
			sigPair(t, key, msg, sig)
		}
		// Built: a and r from the key and signature bytes.
		a, err := new(edwards25519.Scalar).SetUniformBytes(pad64(key))
		if err != nil {
			t.Fatal(err)
		}
		r, err := new(edwards25519.Scalar).SetUniformBytes(pad64(sig))
		if err != nil {
			t.Fatal(err)
		}
		A := new(edwards25519.Point).Add(new(edwards25519.Point).ScalarBaseMult(a), tor[ta%8])
		R := new(edwards25519.Point).Add(new(edwards25519.Point).ScalarBaseMult(r), tor[tr%8])
		k := challenge(R.Bytes(), A.Bytes(), msg)
		s := new(edwards25519.Scalar).MultiplyAdd(k, a, r)
		sigPair(t, A.Bytes(), msg, sigOf(R.Bytes(), s))
	})
}

// BenchmarkSig compares the ledger's Ed25519 check with crypto/ed25519's,
// on one key and a message of the size of a signed event.
func BenchmarkSig(b *testing.B) {
	pub, priv, _ := ed25519.GenerateKey(bytes.NewReader(make([]byte, 32)))
	msg := bytes.Repeat([]byte("x"), 300)
	sig := ed25519.Sign(priv, msg)
	b.Run("crypto-ed25519", func(b *testing.B) {
		for b.Loop() {
			if !ed25519.Verify(pub, msg, sig) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("ledger", func(b *testing.B) {
		s := sigKeys{"e": {expandKey(pub)}}
		for b.Loop() {
			if !s.verify("e", 0, pub, msg, sig) {
				b.Fatal("refused")
			}
		}
	})
}

func randScalar(rng *rand.Rand) *edwards25519.Scalar {
	b := make([]byte, 64)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	s, err := new(edwards25519.Scalar).SetUniformBytes(b)
	if err != nil {
		panic(err)
	}
	return s
}

func rng32(rng *rand.Rand) *bytes.Reader {
	b := make([]byte, 32)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return bytes.NewReader(b)
}

func pad64(b []byte) []byte {
	out := make([]byte, 64)
	copy(out, b)
	return out
}

func reverse(b []byte) []byte {
	out := bytes.Clone(b)
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
