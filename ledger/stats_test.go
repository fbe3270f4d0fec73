package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// TestStatsRecord: the stored record round-trips, and a record whose
// totals (each roll set's rolls, doubles and faces) do not match its pairs,
// or whose verified and failed games overflow, is refused.
func TestStatsRecord(t *testing.T) {
	var s Stats
	s.Events, s.Types[0], s.Games, s.Finished, s.Failed = 50, 4, 4, 3, 1
	s.Opening.Pairs[2][1], s.Opening.Pairs[4][4], s.Play.Pairs[0][5] = 3, 1, 2
	b, _ := s.MarshalBinary()
	// version, events, the types, games, verified, failed, then twice:
	// rolls, doubles, 6 faces, 36 pairs. Every counter here is one byte.
	const verified = 1 + 1 + numTypes + 1
	if len(b) != verified+2+2*(2+6+36) || b[verified] != 2 {
		t.Fatalf("record of %d bytes: %x", len(b), b)
	}
	var got Stats
	if err := got.UnmarshalBinary(b); err != nil || got != s {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	for _, set := range []int{verified + 2, verified + 2 + 44} {
		for i := set; i < set+8; i++ {
			bad := bytes.Clone(b)
			bad[i]++
			if err := new(Stats).UnmarshalBinary(bad); !errors.Is(err, ErrCorrupt) {
				t.Errorf("total at byte %d changed: %v, want ErrCorrupt", i, err)
			}
		}
	}
	over := append(binary.AppendUvarint(bytes.Clone(b[:verified]), math.MaxUint64), b[verified+1:]...)
	if err := new(Stats).UnmarshalBinary(over); !errors.Is(err, ErrCorrupt) {
		t.Errorf("verified + failed overflows: %v, want ErrCorrupt", err)
	}
}
