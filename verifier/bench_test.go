package verifier

import (
	"os"
	"testing"
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
