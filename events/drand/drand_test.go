package drand

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	GG "github.com/cloudflare/circl/ecc/bls12381"
)

// beacons are the real quicknet beacons of DRAND.md.
var beacons = []struct {
	round      uint64
	sig, rand_ string
}{
	{8, "a0c06b9964123d2e6036aa004c140fc301f4edd3ea6b8396a15dfd7dfd70cc0dce0b4a97245995767ab72cf59de58c47", "996f280fcd832b382ea43338549f108fae303bdb9f781fe99fc062f554a036f1"},
	{10, "ac415e508c484053efed1c6c330e3ae0bf20185b66ed088864dac1ff7d6f927610824986390d3239dac4dd73e6f865f5", "850f2d84fec6935508464a33f5389b3103087bc44599d782b83cbe2eaa8451e3"},
	{123, "b75c69d0b72a5d906e854e808ba7e2accb1542ac355ae486d591aa9d43765482e26cd02df835d3546d23c4b13e0dfc92", "fb8f7bc29bf24db51871ec8c79f3a1e4bd0557bc0dfcee9ed1d924e69d1c60dc"},
	{657413, "b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b", "fc1873a13f3545aeade8401532ef5519920652eee6b0d2b19ca12643b87b3587"},
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestQuicknetPinned(t *testing.T) {
	c := Quicknet()
	h := c.Hash()
	if got := hex.EncodeToString(h[:]); got != "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971" {
		t.Errorf("quicknet hash = %s", got)
	}
	if got, ok := ChainByHash(h); !ok || got != c {
		t.Errorf("ChainByHash(quicknet) = %v, %v", got, ok)
	}
	if _, ok := ChainByHash([32]byte{1}); ok {
		t.Error("ChainByHash found an unknown chain")
	}
	if got := c.Genesis(); !got.Equal(time.Date(2023, 8, 23, 15, 9, 27, 0, time.UTC)) {
		t.Errorf("genesis = %v", got)
	}
	if c.Period() != 3*time.Second {
		t.Errorf("period = %v", c.Period())
	}
	// Changing any parameter changes the hash.
	p := QuicknetParams()
	for name, mut := range map[string]func(*Params){
		"period":  func(p *Params) { p.Period++ },
		"genesis": func(p *Params) { p.Genesis++ },
		"key":     func(p *Params) { p.PublicKey = append([]byte(nil), p.PublicKey...); p.PublicKey[95] ^= 1 },
		"seed":    func(p *Params) { p.GenesisSeed[0] ^= 1 },
		"id":      func(p *Params) { p.BeaconID = "quicknet-t" },
	} {
		q := p
		mut(&q)
		if q.Hash() == h {
			t.Errorf("changing %s keeps the chain hash", name)
		}
	}
}

func TestVerifyRealBeacons(t *testing.T) {
	c := Quicknet()
	for _, b := range beacons {
		sig := unhex(t, b.sig)
		r, err := c.Verify(b.round, sig)
		if err != nil {
			t.Errorf("round %d: %v", b.round, err)
			continue
		}
		if got := hex.EncodeToString(r[:]); got != b.rand_ {
			t.Errorf("round %d randomness = %s, want %s", b.round, got, b.rand_)
		}
		if err := c.VerifyBeacon(b.round, sig, [32]byte(unhex(t, b.rand_))); err != nil {
			t.Errorf("VerifyBeacon round %d: %v", b.round, err)
		}
	}
}

func TestVerifyNegative(t *testing.T) {
	c := Quicknet()
	b0, b1 := beacons[0], beacons[1]
	sig0 := unhex(t, b0.sig)
	for i := range len(sig0) * 8 {
		if i%7 != 0 && i > 16 { // every bit of the header byte, then a sample
			continue
		}
		s := append([]byte(nil), sig0...)
		s[i/8] ^= 1 << (i % 8)
		if _, err := c.Verify(b0.round, s); !errors.Is(err, ErrBadSignature) {
			t.Errorf("bit %d flipped: err = %v, want ErrBadSignature", i, err)
		}
	}
	tests := []struct {
		name  string
		round uint64
		sig   []byte
		want  error
	}{
		{"round+1", b0.round + 1, sig0, ErrBadSignature},
		{"round-1", b0.round - 1, sig0, ErrBadSignature},
		{"another-round's-signature", b0.round, unhex(t, b1.sig), ErrBadSignature},
		{"round-0", 0, sig0, ErrBadRound},
		{"empty", b0.round, nil, ErrBadSignature},
		{"short", b0.round, sig0[:47], ErrBadSignature},
		{"long", b0.round, append(append([]byte(nil), sig0...), 0), ErrBadSignature},
		{"identity", b0.round, append([]byte{0xc0}, make([]byte, 47)...), ErrBadSignature},
		{"uncompressed-flag-cleared", b0.round, append([]byte{sig0[0] &^ 0x80}, sig0[1:]...), ErrBadSignature},
		{"max-round", ^uint64(0), sig0, ErrBadSignature},
	}
	for _, tt := range tests {
		if _, err := c.Verify(tt.round, tt.sig); !errors.Is(err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
		}
	}
	// A randomness field that is not SHA-256 of the signature.
	bad := [32]byte(unhex(t, b1.rand_))
	if err := c.VerifyBeacon(b0.round, sig0, bad); !errors.Is(err, ErrBadRandomness) {
		t.Errorf("wrong randomness: err = %v, want ErrBadRandomness", err)
	}
}

// The uncompressed form of a valid signature is the same point, but the
// randomness is defined over the compressed bytes: refuse it.
func TestVerifyRejectsUncompressed(t *testing.T) {
	var p GG.G1
	if err := p.SetBytes(unhex(t, beacons[0].sig)); err != nil {
		t.Fatal(err)
	}
	if _, err := Quicknet().Verify(beacons[0].round, p.Bytes()); !errors.Is(err, ErrBadSignature) {
		t.Errorf("uncompressed signature: err = %v, want ErrBadSignature", err)
	}
}

// verifyWithDST is an independent BLS check, e(sig, g2) == e(H(msg), pk),
// with a chosen hash-to-G1 domain-separation tag.
func verifyWithDST(t *testing.T, pub, sig, msg []byte, dst string) bool {
	t.Helper()
	var pk GG.G2
	if err := pk.SetBytes(pub); err != nil {
		t.Fatal(err)
	}
	var s, h GG.G1
	if err := s.SetBytes(sig); err != nil {
		t.Fatal(err)
	}
	h.Hash(msg, []byte(dst))
	res := GG.ProdPairFrac([]*GG.G1{&s, &h}, []*GG.G2{GG.G2Generator(), &pk}, []int{1, -1})
	return res.IsIdentity()
}

// TestDST: quicknet signatures verify under the RFC 9380 G1 DST and fail
// under the G2 DST that the deprecated fastnet chain used on G1.
func TestDST(t *testing.T) {
	pub := QuicknetParams().PublicKey
	for _, b := range beacons[:2] {
		msg := Message(b.round)
		if !verifyWithDST(t, pub, unhex(t, b.sig), msg[:], "BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_") {
			t.Errorf("round %d does not verify under the G1 DST with the independent check", b.round)
		}
		if verifyWithDST(t, pub, unhex(t, b.sig), msg[:], "BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_NUL_") {
			t.Errorf("round %d verifies under the G2 DST (fastnet-style)", b.round)
		}
	}
}

// quicknetT is the drand testnet twin of quicknet ("quicknet-t"). Its
// parameters are public (drand's documentation and client configurations);
// they are trusted here only because they hash to the published testnet
// chain hash cc9c3984…a9a5, which the test checks.
func quicknetT(t *testing.T) *Chain {
	t.Helper()
	p := Params{
		BeaconID:    "quicknet-t",
		Scheme:      SchemeG1RFC9380,
		Period:      3,
		Genesis:     1689232296,
		PublicKey:   unhex(t, "b15b65b46fb29104f6a4b5d1e11a8da6344463973d423661bb0804846a0ecd1ef93c25057f1c0baab2ac53e56c662b66072f6d84ee791a3382bfb055afab1e6a375538d8ffc451104ac971d2dc9b168e2d3246b0be2015969cbaac298f6502da"),
		GenesisSeed: [32]byte(unhex(t, "40d49d910472d4adb1d67f65db8332f11b4284eecf05c05c5eacd5eef7d40e2d")),
	}
	h := p.Hash()
	if got := hex.EncodeToString(h[:]); got != "cc9c398442737cbd141526600919edd69f1d6f9b4adb67e4d912fbc64341a9a5" {
		t.Fatalf("quicknet-t parameters hash to %s, not the published chain hash", got)
	}
	c, err := NewChain(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestTestnetKeyRejectsQuicknet(t *testing.T) {
	tn := quicknetT(t)
	if _, ok := ChainByHash(tn.Hash()); ok {
		t.Error("the testnet is a known chain")
	}
	for _, b := range beacons {
		if _, err := tn.Verify(b.round, unhex(t, b.sig)); !errors.Is(err, ErrBadSignature) {
			t.Errorf("quicknet round %d under the quicknet-t key: err = %v, want ErrBadSignature", b.round, err)
		}
	}
}

func TestNewChainRejects(t *testing.T) {
	for name, mut := range map[string]func(*Params){
		"scheme":     func(p *Params) { p.Scheme = "pedersen-bls-unchained" },
		"period":     func(p *Params) { p.Period = 0 },
		"short-key":  func(p *Params) { p.PublicKey = p.PublicKey[:48] },
		"bad-point":  func(p *Params) { p.PublicKey = append([]byte{0x80}, make([]byte, 95)...) },
		"identity":   func(p *Params) { p.PublicKey = append([]byte{0xc0}, make([]byte, 95)...) },
		"garbage-hi": func(p *Params) { p.PublicKey = append([]byte{0xff}, p.PublicKey[1:]...) },
	} {
		p := QuicknetParams()
		mut(&p)
		if _, err := NewChain(p); !errors.Is(err, ErrBadParams) {
			t.Errorf("%s: err = %v, want ErrBadParams", name, err)
		}
	}
}

func TestRoundTime(t *testing.T) {
	c := Quicknet()
	g := c.Genesis()
	tests := []struct {
		round uint64
		at    time.Time
	}{
		{1, g},
		{2, g.Add(3 * time.Second)},
		{8, time.Date(2023, 8, 23, 15, 9, 48, 0, time.UTC)},
		{657413, time.Unix(1692803367+657412*3, 0)},
	}
	for _, tt := range tests {
		if got := c.RoundTime(tt.round); !got.Equal(tt.at) {
			t.Errorf("RoundTime(%d) = %v, want %v", tt.round, got, tt.at)
		}
		if got := c.RoundAt(tt.at); got != tt.round {
			t.Errorf("RoundAt(%v) = %d, want %d", tt.at, got, tt.round)
		}
		// The round exists from its time on, and not a nanosecond before.
		if !c.ExistedAt(tt.round, tt.at) {
			t.Errorf("round %d did not exist at its own time", tt.round)
		}
		before := tt.at.Add(-time.Nanosecond)
		if c.ExistedAt(tt.round, before) {
			t.Errorf("round %d existed 1ns before its time", tt.round)
		}
		if got := c.RoundAt(before); got != tt.round-1 {
			t.Errorf("RoundAt(1ns before round %d) = %d", tt.round, got)
		}
		if got := c.RoundAt(tt.at.Add(3*time.Second - time.Nanosecond)); got != tt.round {
			t.Errorf("RoundAt(just before round %d+1) = %d", tt.round, got)
		}
	}
	if got := c.RoundAt(time.Unix(0, 0)); got != 0 {
		t.Errorf("RoundAt(1970) = %d, want 0", got)
	}
	if c.ExistedAt(0, time.Now()) {
		t.Error("round 0 exists")
	}
	if got := c.RoundTime(^uint64(0)); got.Unix() <= g.Unix() {
		t.Errorf("RoundTime(max) = %v, want a saturated future time", got)
	}
	// Exhaustive around genesis: ExistedAt agrees with the definition.
	for r := uint64(0); r < 40; r++ {
		for s := int64(-10); s < 130; s++ {
			at := time.Unix(1692803367+s, 500_000_000)
			want := r >= 1 && !at.Before(g.Add(time.Duration(r-1)*3*time.Second))
			if got := c.ExistedAt(r, at); got != want {
				t.Fatalf("ExistedAt(%d, genesis%+d.5s) = %v, want %v", r, s, got, want)
			}
		}
	}
}

func TestRandomness(t *testing.T) {
	for _, b := range beacons {
		s := unhex(t, b.sig)
		if Randomness(s) != sha256.Sum256(s) {
			t.Fatal("Randomness is not SHA-256")
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	c := Quicknet()
	sig, _ := hex.DecodeString(beacons[3].sig)
	for b.Loop() {
		if _, err := c.Verify(beacons[3].round, sig); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewChain(b *testing.B) {
	p := QuicknetParams()
	for b.Loop() {
		if _, err := NewChain(p); err != nil {
			b.Fatal(err)
		}
	}
}
