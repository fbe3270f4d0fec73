package merkle

import (
	"context"
	"fmt"
	"testing"
)

// benchLeafSize is about the size of a zarlog event leaf.
const benchLeafSize = 300

// BenchmarkBuilderAppend measures Builder.Append with 300-byte leaves at
// batch sizes 1, 100 and 1000, reporting leaves per second. It includes
// State() and MarshalBinary per batch, as the ledger does.
func BenchmarkBuilderAppend(b *testing.B) {
	for _, batch := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			bl, err := NewBuilder(context.Background(), nil, State{})
			if err != nil {
				b.Fatal(err)
			}
			leaves := make([][]byte, batch)
			for i := range leaves {
				leaves[i] = make([]byte, benchLeafSize)
				leaves[i][0] = byte(i)
			}
			var buf []byte
			n := 0
			for b.Loop() {
				if _, err := bl.Append(leaves); err != nil {
					b.Fatal(err)
				}
				buf, err = bl.State().AppendBinary(buf[:0])
				if err != nil {
					b.Fatal(err)
				}
				n += batch
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "leaves/s")
			b.SetBytes(int64(batch * benchLeafSize))
		})
	}
}
