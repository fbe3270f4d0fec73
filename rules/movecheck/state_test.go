package movecheck_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// gameStates returns the distinct states of a few played games.
func gameStates(t testing.TB) [][]byte {
	var out [][]byte
	seen := map[string]bool{}
	for _, v := range rules.AllVariants() {
		for _, o := range openings {
			_, evs := play(t, testonly.Config{Scheme: events.PerRoll, Variant: v, Opening: o, Label: "states", Games: 2})
			for _, g := range applyAll(t, evs) {
				if g.Position != nil && !seen[string(g.Position)] {
					seen[string(g.Position)] = true
					out = append(out, g.Position)
				}
			}
		}
	}
	return out
}

func TestStateRoundTrip(t *testing.T) {
	states := gameStates(t)
	phases := map[movecheck.Phase]int{}
	for _, b := range states {
		s, err := movecheck.ParseState(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if s.String() != string(b) {
			t.Fatalf("String() = %s, want %s", s, b)
		}
		if len(b) > 100 || len(b) > events.MaxPosition {
			t.Fatalf("%d-byte state", len(b))
		}
		phases[s.Phase]++
	}
	// PhaseOpening is in the state only after an opening tie.
	for _, p := range []movecheck.Phase{movecheck.PhaseReroll, movecheck.PhaseTurn, movecheck.PhasePlay, movecheck.PhaseOver} {
		if phases[p] == 0 {
			t.Errorf("no state in phase %c among %d", p, len(states))
		}
	}
}

func TestParseStateRejects(t *testing.T) {
	for _, s := range []string{
		"",
		"portes western t0",
		"portes  western t0 " + start,
		"portes western t0 " + start + " ",
		"nard western t0 " + start,
		"portes greek t0 " + start,
		"portes western t2 " + start,
		"portes western t " + start,
		"portes western q " + start,
		"portes western o0 " + start,
		"portes western x " + start,                // not over
		"portes western r0 " + start,               // a re-roll under western
		"portes western p0:01:31 " + start,         // leading zero
		"portes western p0:4294967296:31 " + start, // beyond uint32
		"portes western p0:-1:31 " + start,
		"portes western p0:+1:31 " + start,
		"portes western p0:1:71 " + start, // die 7
		"portes western p0:1:3 " + start,  // one die
		"portes western p0::31 " + start,
		"portes western p0:1:31:1 " + start,
		"portes western o 0000050300005000000000021/0000050300005000000000020", // 16 checkers
		"portes western o 0000050300005000000000011/0000050300005000000000020", // not the start
		"portes western t0 " + strings.Repeat("0", 25) + "/" + strings.Repeat("0", 25),
	} {
		if _, err := movecheck.ParseState([]byte(s)); !errors.Is(err, movecheck.ErrState) {
			t.Errorf("ParseState(%q) = %v, want ErrState", s, err)
		}
	}
	for _, s := range []string{
		"portes western o " + start,
		"tavla turkish-reroll r1 " + start,
		"portes western t0 0000050300005000000000011/0000050300005000000000020",
		"fevga western p1:4294967295:66 00000000000000000000000f0/00000000000000000000000f0",
	} {
		if b, err := movecheck.ParseState([]byte(s)); err != nil || b.String() != s {
			t.Errorf("ParseState(%q) = %v, %v", s, b, err)
		}
	}
}

// FuzzParseState: never a panic, and what parses is canonical.
func FuzzParseState(f *testing.F) {
	for _, b := range gameStates(f) {
		f.Add(b)
	}
	f.Add([]byte("portes western p0:4294967295:66 " + start))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := movecheck.ParseState(b)
		if err != nil {
			return
		}
		if s.String() != string(b) {
			t.Fatalf("String() = %q, input %q", s, b)
		}
	})
}
