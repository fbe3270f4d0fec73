package dice

import (
	"encoding/hex"
	"errors"
	"testing"
)

func seq32(start byte) (b [32]byte) {
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

func mustUUID(t testing.TB, s string) UUID {
	t.Helper()
	u, err := ParseUUID(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func hexOf(b []byte) string { return hex.EncodeToString(b) }

// TestTavlarenaWorkedExample is the "sequential-byte-seed" example of
// DICE.md §2, value for value.
func TestTavlarenaWorkedExample(t *testing.T) {
	settings := []byte(`{"rulesVersion":"tavla-1","variant":"portes","matchLength":5,"opening":"turkish-reroll","doublingCube":false}`)
	sh, err := SettingsHash(settings)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := hexOf(sh[:]), "e5d8e96dcc7688c26454bbaa0b3c67df9b28db14867a878c86aebba0ce60e095"; got != want {
		t.Errorf("settingsHash = %s, want %s", got, want)
	}
	game := mustUUID(t, "00112233-4455-6677-8899-aabbccddeeff")
	seats := [2]UUID{mustUUID(t, "10000000-0000-4000-8000-000000000000"), mustUUID(t, "20000000-0000-4000-8000-000000000000")}
	seed := seq32(0x00)
	c := TavlarenaCommitment(game, sh, seats, seed)
	if got, want := hexOf(c[:]), "2b2432fd9fb286c84f19b35297ab6ff81a51fbd05295b96a66ff46e7c27bc0cf"; got != want {
		t.Errorf("commitment = %s, want %s", got, want)
	}
	if got, want := SealCode(c), "5CJ3-5ZCZ"; got != want {
		t.Errorf("seal code = %s, want %s", got, want)
	}
	r := NewTavlarena(seed, game, [2][32]byte{seq32(0x20), seq32(0x40)})
	b0 := r.Block(0, 0)
	if got, want := hexOf(b0[:]), "b00862cc6f51ffa8d843ff819cf01083a24bb46dd8795a6432e91ce80516ca3a"; got != want {
		t.Errorf("n=0 block 0 = %s, want %s", got, want)
	}
	for _, tt := range []struct {
		n    uint32
		want Dice
	}{{0, Dice{3, 3}}, {1, Dice{2, 2}}, {2, Dice{5, 1}}, {3, Dice{3, 1}}, {232, Dice{3, 1}}} {
		if got := r.Roll(tt.n); got != tt.want {
			t.Errorf("roll %d = %v, want %v", tt.n, got, tt.want)
		}
	}
	b232 := r.Block(232, 0)
	if got, want := hexOf(b232[:]), "fc3e2ab8b76e550cb62f1425d2aaefe0499d51372991c7579a4584e93002ba2f"; got != want {
		t.Errorf("n=232 block 0 = %s, want %s", got, want)
	}
	bmax := r.Block(0xffffffff, 0xffffffff)
	if got, want := hexOf(bmax[:]), "f48392863e8da4e6badff9baa63eed0c4960d106f1deec4e57d7124d622337c7"; got != want {
		t.Errorf("n=max block max = %s, want %s", got, want)
	}
	rolls := []Roll{{0, Dice{3, 3}, KindOpening}, {1, Dice{2, 2}, KindOpening}, {2, Dice{5, 1}, KindOpening}, {3, Dice{3, 1}, KindReroll}}
	if err := CheckSequence(OpeningTurkishReroll, rolls); err != nil {
		t.Errorf("worked example sequence: %v", err)
	}
}

// TestPerRollWorkedExample is the example of DICE.md §4.
func TestPerRollWorkedExample(t *testing.T) {
	seed := seq32(0x60)
	c := Fingerprint(seed)
	if got, want := hexOf(c[:]), "4d8d274ff7e176af977a95a0055c8c5f3478d38640343a060cee893e56f39957"; got != want {
		t.Errorf("commitment = %s, want %s", got, want)
	}
	r := NewPerRoll(seed, mustUUID(t, "00112233-4455-6677-8899-aabbccddeeff"), mustUUID(t, "30000000-0000-4000-8000-000000000001"), seq32(0x80))
	b := r.Block(0, 0)
	if got, want := hexOf(b[:]), "8dc2dd363a79ff9fb5fc24ba1b63986d7f960bb3207e76580a71535bb9e27501"; got != want {
		t.Errorf("block 0 = %s, want %s", got, want)
	}
	if got := r.Roll(0); got != (Dice{4, 3}) {
		t.Errorf("dice = %v, want 4,3", got)
	}
}

func TestFromBlocksContinuation(t *testing.T) {
	// Block 0 has one accepted byte (at the end), block 1 gives the second.
	var b0, b1 Block
	for i := range b0 {
		b0[i] = 0xff
		b1[i] = 0xfc
	}
	b0[31] = 5  // die 6
	b1[7] = 250 // 250%6+1 = 5
	d, blocks := FromBlocks(func(k uint32) Block { return []Block{b0, b1}[k] })
	if d != (Dice{6, 5}) || blocks != 2 {
		t.Errorf("FromBlocks = %v after %d blocks, want 6-5 after 2", d, blocks)
	}
}

func TestAnchoredBindingLengths(t *testing.T) {
	a := Anchor{Round: 1}
	b1 := AnchoredBinding("m", 1, [2]string{"ab", "c"}, a)
	b2 := AnchoredBinding("m", 1, [2]string{"a", "bc"}, a)
	if string(b1) == string(b2) {
		t.Error(`tokens "ab"+"c" and "a"+"bc" give the same binding`)
	}
	// lp(matchId) ‖ lp(u32be(gameNo)) ‖ lp(t0) ‖ lp(t1) ‖ lp(chain) ‖ lp(u64be(round)) ‖ lp(randomness)
	if want := 4 + 1 + 4 + 4 + 4 + 2 + 4 + 1 + 4 + 32 + 4 + 8 + 4 + 32; len(b1) != want {
		t.Errorf("binding length %d, want %d", len(b1), want)
	}
}

func TestSealCode(t *testing.T) {
	var c [32]byte
	copy(c[:], []byte{0x2b, 0x24, 0x32, 0xfd, 0x9f})
	for _, in := range []string{"5CJ3-5ZCZ", "5cj35zcz", "5cj3-5zcz", " 5CJ3 5ZCZ "} {
		s, err := ParseSealCode(in)
		if err != nil {
			t.Errorf("ParseSealCode(%q): %v", in, err)
			continue
		}
		if !s.Matches(c) {
			t.Errorf("ParseSealCode(%q) = %x, want 2b2432fd9f", in, s)
		}
	}
	// O→0, I/L→1.
	a, _ := ParseSealCode("0000-1111")
	for _, in := range []string{"OOOO-IIII", "oooo-llll", "0o0O-1iLl"} {
		if b, err := ParseSealCode(in); err != nil || b != a {
			t.Errorf("ParseSealCode(%q) = %x, %v; want %x", in, b, err, a)
		}
	}
	for _, in := range []string{"", "5CJ3-5ZC", "5CJ3-5ZCZZ", "5CJ3-5ZCU", "5CJ3-5ZC!", "5CJ3-5ZCç"} {
		if _, err := ParseSealCode(in); !errors.Is(err, ErrBadInput) {
			t.Errorf("ParseSealCode(%q) = %v, want ErrBadInput", in, err)
		}
	}
	// Round trip over every 5-symbol boundary value.
	for _, s := range []Seal{{}, {0xff, 0xff, 0xff, 0xff, 0xff}, {0x80, 0, 0, 0, 1}} {
		got, err := ParseSealCode(s.String())
		if err != nil || got != s {
			t.Errorf("round trip %x: got %x, %v", s, got, err)
		}
	}
}

func TestSequenceRules(t *testing.T) {
	op := func(n uint32, a, b int) Roll { return Roll{n, Dice{a, b}, KindOpening} }
	rr := func(n uint32, a, b int) Roll { return Roll{n, Dice{a, b}, KindReroll} }
	tu := func(n uint32, a, b int) Roll { return Roll{n, Dice{a, b}, KindTurn} }
	tests := []struct {
		name    string
		opening Opening
		rolls   []Roll
		badN    int // -1: valid
	}{
		{"western", OpeningWestern, []Roll{op(0, 6, 1), tu(1, 3, 3)}, -1},
		{"western-ties", OpeningWestern, []Roll{op(0, 2, 2), op(1, 4, 4), op(2, 1, 6), tu(3, 5, 2)}, -1},
		{"turkish", OpeningTurkishReroll, []Roll{op(0, 6, 1), rr(1, 6, 6), tu(2, 3, 3)}, -1},
		{"tied-opening-played", OpeningWestern, []Roll{op(0, 3, 3), tu(1, 3, 3)}, 1},
		{"missing-reroll", OpeningTurkishReroll, []Roll{op(0, 6, 1), tu(1, 2, 3)}, 1},
		{"reroll-under-western", OpeningWestern, []Roll{op(0, 6, 1), rr(1, 2, 3)}, 1},
		{"two-rerolls", OpeningTurkishReroll, []Roll{op(0, 6, 1), rr(1, 2, 3), rr(2, 2, 3)}, 2},
		{"dropped-roll", OpeningWestern, []Roll{op(0, 6, 1), tu(2, 3, 3)}, 1},
		{"starts-with-turn", OpeningWestern, []Roll{tu(0, 6, 1)}, 0},
		{"die-seven", OpeningWestern, []Roll{op(0, 7, 1)}, 0},
		{"opening-after-decided", OpeningWestern, []Roll{op(0, 6, 1), op(1, 2, 1)}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSequence(tt.opening, tt.rolls)
			var se *SequenceError
			switch {
			case tt.badN < 0 && err != nil:
				t.Errorf("CheckSequence: %v, want nil", err)
			case tt.badN >= 0 && !errors.As(err, &se):
				t.Errorf("CheckSequence = %v, want a *SequenceError", err)
			case tt.badN >= 0 && se.N != tt.rolls[tt.badN].N:
				t.Errorf("CheckSequence failed at roll %d, want %d: %v", se.N, tt.rolls[tt.badN].N, err)
			}
		})
	}
}

func TestOpeningOf(t *testing.T) {
	for in, want := range map[string]Opening{
		`{}`:                                 OpeningWestern,
		`{"opening":"western"}`:              OpeningWestern,
		`{"opening":"turkish-reroll"}`:       OpeningTurkishReroll,
		`{"a":{"opening":"turkish-reroll"}}`: OpeningWestern,
	} {
		if got, err := OpeningOf([]byte(in)); err != nil || got != want {
			t.Errorf("OpeningOf(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`{"opening":"greek"}`, `{"opening":1}`, `[]`, `{"opening":"western","opening":"western"}`} {
		if _, err := OpeningOf([]byte(in)); err == nil {
			t.Errorf("OpeningOf(%s) succeeded", in)
		}
	}
}

func BenchmarkTavlarena60Rolls(b *testing.B) {
	seed := seq32(0)
	r := NewTavlarena(seed, UUID{1}, [2][32]byte{seq32(0x20), seq32(0x40)})
	for b.Loop() {
		for n := uint32(0); n < 60; n++ {
			r.Roll(n)
		}
	}
}

// TestResume checks Resume against a full replay after every prefix of
// every valid roll sequence of up to 7 rolls (opening ties, re-rolls and
// turns, both opening styles), and Resume of every prefix then Then of the
// rest.
func TestResume(t *testing.T) {
	faces := []Dice{{1, 1}, {2, 5}, {5, 2}}
	n := 0
	var grow func(o Opening, s *Sequence, rolls []Roll)
	grow = func(o Opening, s *Sequence, rolls []Roll) {
		got := Resume(o, rolls)
		if got != *s {
			t.Fatalf("%s %v: Resume gives %+v, replay %+v", o, rolls, got, *s)
		}
		for k := range len(rolls) + 1 { // Then, from every split
			if got := Resume(o, rolls[:k]).Then(rolls[k:]); got != *s {
				t.Fatalf("%s %v: Resume of %d then the rest gives %+v, replay %+v", o, rolls, k, got, *s)
			}
		}
		n++
		if len(rolls) == 7 {
			return
		}
		for _, d := range faces {
			r := Roll{N: uint32(len(rolls)), Dice: d, Kind: s.WantKind()}
			next := *s
			if err := next.Next(r); err != nil {
				t.Fatal(err)
			}
			grow(o, &next, append(rolls[:len(rolls):len(rolls)], r))
		}
	}
	for _, o := range []Opening{OpeningWestern, OpeningTurkishReroll} {
		grow(o, NewSequence(o), nil)
	}
	if n < 1000 {
		t.Fatalf("only %d sequences", n)
	}
}
