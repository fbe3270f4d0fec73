package events

import (
	"testing"
	"unsafe"

	"github.com/zarlog/zarlog/events/dice"
)

// TestSizeConstants holds Size's constants to the layout of this
// machine's Go, on 64-bit machines (where they are written for).
func TestSizeConstants(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the constants are a 64-bit Go's")
	}
	for _, c := range []struct {
		name      string
		have, got uintptr
	}{
		// Game.decoded, a cache of the checker's that Size does not
		// count (so that a game's size, which limits and durable sums
		// use, is what it was before the cache), is left out.
		// Game.cut, a cut state's (Cut), likewise: MemSize counts it.
		{"Game", sizeGame, unsafe.Sizeof(Game{}) - unsafe.Sizeof(Game{}.decoded) - unsafe.Sizeof(Game{}.cut)},
		{"cutPart", sizeCutPart, unsafe.Sizeof(cutPart{})},
		{"Move", sizeMove, unsafe.Sizeof(Move{})},
		{"dice.Roll", sizeRoll, unsafe.Sizeof(dice.Roll{})},
		{"RollRecord", sizeRollRecord, unsafe.Sizeof(RollRecord{})},
		{"Beacon", sizeBeacon, unsafe.Sizeof(Beacon{})},
		{"End", sizeEnd, unsafe.Sizeof(End{})},
		{"Failure", sizeFailure, unsafe.Sizeof(Failure{})},
	} {
		if c.have != c.got {
			t.Errorf("size of %s: the constant says %d, Go lays it out in %d", c.name, c.have, c.got)
		}
	}
}
