package rules

import (
	"math/rand/v2"
	"testing"
)

// FuzzApply plays a random game of a fuzzer-chosen variant and, at every
// turn, also offers the engine plays made from the fuzzer's bytes: the text
// as notation, and the bytes as raw Move values. ApplyPlay must never panic,
// must refuse with an *IllegalMoveError or accept, and anything it accepts
// must be a legal play leading to a well-formed position (15 checkers a
// seat: nothing created or lost).
func FuzzApply(f *testing.F) {
	f.Add(uint64(1), uint8(0), "24/18 13/11", []byte{24, 18, 13, 11})
	f.Add(uint64(2), uint8(2), "10/4*/1", []byte{25, 20, 0, 0})
	f.Add(uint64(3), uint8(3), "24/21* 24/23", []byte{24, 21, 1, 200})
	f.Add(uint64(4), uint8(4), "24/13", []byte{24, 13, 255, 255, 7, 9})
	f.Add(uint64(5), uint8(1), "-", []byte{})
	f.Fuzz(func(t *testing.T, seed uint64, vi uint8, text string, raw []byte) {
		vs := AllVariants()
		v := vs[int(vi)%len(vs)]
		rng := rand.New(rand.NewPCG(seed, 7))
		p := Start(v)
		seat := int(seed % 2)
		junkText, textErr := ParsePlay(text)
		var junkRaw Play
		for i := 0; i+3 < len(raw) && len(junkRaw) < 6; i += 4 {
			junkRaw = append(junkRaw, Move{
				From: int(raw[i]) % 30, To: int(raw[i+1]) % 30,
				Via: uint32(raw[i+2]) << (raw[i+3] % 24), Hits: uint32(raw[i+3]) << (raw[i+2] % 24),
			})
		}
		for ply := 0; ply < 200; ply++ {
			d := Dice{1 + rng.IntN(6), 1 + rng.IntN(6)}
			legal, _ := legalPlays(v, p, seat, d)
			ends := make(map[Position]bool, len(legal))
			for _, l := range legal {
				ends[l.pos] = true
			}
			try := func(pl Play) {
				np, c, err := ApplyPlay(v, p, seat, d, pl)
				if err != nil {
					if _, ok := err.(*IllegalMoveError); !ok {
						t.Fatalf("ApplyPlay(%s, %q): error %T %v", p, FormatPlay(pl), err, err)
					}
					if np != p {
						t.Fatalf("ApplyPlay changed the position on error")
					}
					return
				}
				if err := Check(v, np); err != nil {
					t.Fatalf("ApplyPlay(%s, %s, %q) led to a bad position: %v", p, d, FormatPlay(pl), err)
				}
				if !ends[np] {
					t.Fatalf("ApplyPlay(%s, %s, %q) accepted a play that is not legal", p, d, FormatPlay(pl))
				}
				if cs, err := CanonicalPlay(v, p, seat, d, FormatPlay(c)); err != nil || cs != FormatPlay(c) {
					t.Fatalf("canonical %q is not its own canonical form: %q %v", FormatPlay(c), cs, err)
				}
			}
			if textErr == nil {
				try(junkText)
			}
			try(junkRaw)
			next := legal[rng.IntN(len(legal))]
			np, _, err := ApplyPlay(v, p, seat, d, next.play)
			if err != nil || np != next.pos {
				t.Fatalf("legal play %q refused: %v", next.text, err)
			}
			p = np
			if _, over := Outcome(v, p); over {
				return
			}
			seat = 1 - seat
		}
	})
}
