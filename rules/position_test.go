package rules

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func TestPositionText(t *testing.T) {
	for _, c := range []struct {
		v    Variant
		want string
	}{
		{Backgammon, "0000050300005000000000020/0000050300005000000000020"},
		{Plakoto, "00000000000000000000000f0/00000000000000000000000f0"},
		{Fevga, "00000000000000000000000f0/00000000000000000000000f0"},
	} {
		if got := Start(c.v).String(); got != c.want {
			t.Errorf("Start(%s) = %s, want %s", c.v, got, c.want)
		}
	}
	n := 0
	for _, v := range AllVariants() {
		rng := rand.New(rand.NewPCG(17, uint64(len(v))))
		for range 200 {
			p := randomPosition(rng, v)
			q, err := ParsePosition(v, p.String())
			if err != nil {
				t.Fatalf("%s: ParsePosition(%s): %v", v, p, err)
			}
			if q != p {
				t.Fatalf("%s: ParsePosition(%s) = %s", v, p, q)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no positions")
	}
}

func TestParsePositionRejects(t *testing.T) {
	start := "0000050300005000000000020"
	for _, c := range []struct {
		v Variant
		s string
	}{
		{Backgammon, ""},
		{Backgammon, start},
		{Backgammon, start + "/" + start + "0"},
		{Backgammon, start + "|" + start},
		{Backgammon, "0000050300005000000000030/" + start},                  // 16 checkers
		{Backgammon, "00000503000050000000000f0/" + start},                  // more than 15
		{Backgammon, "000005030000500000000002A/" + start},                  // upper case
		{Backgammon, "0000050300005000000000021/" + start},                  // 16 with the bar
		{Backgammon, "2000030300005000000000020/" + start},                  // seat 0's 1 is seat 1's 24
		{Backgammon, "p000040300005000000000020/" + start},                  // no pins in backgammon
		{Plakoto, "00000000000000000000000f1/00000000000000000000000f0"},    // no bar
		{Plakoto, "0p000000000000000000000e0/00000000000000000000000f0"},    // pinned, but nobody on top
		{Plakoto, "00000000000000000000000fp/00000000000000000000000f0"},    // a pinned bar
		{Fevga, "000000000001000000000000e0/00000000000000000000000f0"},     // wrong length
		{Fevga, "00000000000100000000000e0/00000000000000000000000f0"},      // seat 0's 12 is seat 1's 24
		{Backgammon, "0000000000000000000000000/0000000000000000000000000"}, // both borne off
		{Variant("nard"), start + "/" + start},
	} {
		if p, err := ParsePosition(c.v, c.s); err == nil {
			t.Errorf("ParsePosition(%s, %q) = %s, want an error", c.v, c.s, p)
		} else if !errors.Is(err, ErrPosition) {
			t.Errorf("ParsePosition(%s, %q): %v does not wrap ErrPosition", c.v, c.s, err)
		}
	}
}

func FuzzParsePosition(f *testing.F) {
	f.Add(uint8(0), Start(Backgammon).String())
	f.Add(uint8(3), "00001000000020000010100a0/000p0000000p0030004000060")
	f.Add(uint8(4), Start(Fevga).String())
	f.Fuzz(func(t *testing.T, vi uint8, s string) {
		vs := AllVariants()
		v := vs[int(vi)%len(vs)]
		p, err := ParsePosition(v, s)
		if err != nil {
			return
		}
		if got := p.String(); got != s {
			t.Fatalf("ParsePosition(%s, %q).String() = %q", v, s, got)
		}
		if err := Check(v, p); err != nil {
			t.Fatal(err)
		}
		for _, d := range []Dice{{1, 2}, {6, 6}} {
			if len(LegalPlays(v, p, int(vi)%2, d)) == 0 {
				t.Fatalf("no plays (not even the empty one) in %s", s)
			}
		}
	})
}
