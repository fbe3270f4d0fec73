package verifier

import (
	"os"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testonly"
)

// BenchmarkVerify60Rolls verifies a 60-roll game of each scheme from its
// bytes: parsing, commitments, every die, the sequence, and for anchored-v1
// one BLS verification of the drand beacon.
func BenchmarkVerify60Rolls(b *testing.B) {
	for _, tt := range []struct{ scheme, vector string }{
		{"tavlarena-v1", "tavlarena-turkish-60-rolls"},
		{"anchored-v1", "anchored-quicknet-657413-60-rolls"},
		{"per-roll-v1", "per-roll-client-60-rolls"},
	} {
		var data []byte
		for _, v := range loadVectors(b) {
			if v.Name == tt.vector {
				d, err := os.ReadFile(v.Path)
				if err != nil {
					b.Fatal(err)
				}
				data = d
			}
		}
		if data == nil {
			b.Fatalf("no vector %s", tt.vector)
		}
		b.Run(tt.scheme, func(b *testing.B) {
			if r := Verify(data, Options{}); r.Exit() != 0 {
				b.Fatalf("exit %d", r.Exit())
			}
			for b.Loop() {
				Verify(data, Options{})
			}
		})
	}
}

// BenchmarkVerifyMoves60Rolls verifies the proof bundle of a 60-roll
// backgammon game whose moves are logged (testdata/moves), without keys:
// the whole report ("bundle"), and the moves check alone ("moves": the
// replay of every event through the rules engine) on the parsed bundle.
func BenchmarkVerifyMoves60Rolls(b *testing.B) {
	v := vectorNamedB(b, "moves-backgammon-resigned-60-rolls")
	data, err := os.ReadFile(v.Path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("bundle", func(b *testing.B) {
		if c, _ := Verify(data, Options{}).Check(CheckMoves); c.Status != Pass {
			b.Fatalf("moves %s", c.Status)
		}
		for b.Loop() {
			Verify(data, Options{})
		}
	})
	b.Run("moves", func(b *testing.B) {
		ev, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		res := checkBundle(ev, Options{})
		evs := make([]*events.Event, len(ev.Log.Entries))
		for i, e := range ev.Log.Entries {
			if evs[i], err = events.Parse(e.Leaf); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(evs)), "events")
		for b.Loop() {
			if c, _ := movesCheck(ev.Log, evs, res.game); c.Status != Pass {
				b.Fatal(c.Detail)
			}
		}
	})
}

func vectorNamedB(b *testing.B, name string) testonly.Vector {
	for _, v := range loadVectors(b) {
		if v.Name == name {
			return v
		}
	}
	b.Fatalf("no vector %s", name)
	return testonly.Vector{}
}
