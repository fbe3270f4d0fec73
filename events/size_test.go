package events_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// TestSizeAfter plays a game of every scheme and variant (per-roll-v1: a
// match of three games) with every move logged, and checks at every event
// that the size SizeAfter keeps from the last equals Size computed afresh.
// It logs the largest state of each, the numbers docs/OPERATIONS.md §9
// sizes the ledger's budgets from.
func TestSizeAfter(t *testing.T) {
	signer, _, err := testonly.Key("tavla-east")
	if err != nil {
		t.Fatal(err)
	}
	for _, scheme := range []events.Scheme{events.Tavlarena, events.Anchored, events.PerRoll} {
		for _, v := range rules.AllVariants() {
			c := testonly.Config{Scheme: scheme, Variant: v, Label: fmt.Sprintf("size/%s/%s", scheme, v), Games: 3,
				Settings: `"matchLength":5,"table":"` + strings.Repeat("x", 200) + `"`}
			p, err := testonly.Play(c)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := testonly.Events(c, p.Bodies, signer)
			if err != nil {
				t.Fatal(err)
			}
			var g *events.Game
			size := 0
			for i, ev := range evs {
				ng, err := events.Apply(g, ev, testonly.Env(ev, uint64(i), movecheck.Checker{}))
				if err != nil {
					t.Fatalf("%s %s event %d: %v", scheme, v, i, err)
				}
				size = events.SizeAfter(size, g, ng)
				if want := ng.Size(); size != want {
					t.Fatalf("%s %s event %d (%s): SizeAfter %d, Size %d", scheme, v, i, ev.Type, size, want)
				}
				g = ng
			}
			t.Logf("%-13s %-10s %3d events, %3d rolls, %3d moves: %6d bytes", scheme, v, len(evs), p.Rolls, p.Moves, size)
		}
	}
}
