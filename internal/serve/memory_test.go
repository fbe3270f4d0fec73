package serve

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/ledger"
)

// TestMemoryBudget: the bound is the sum of its terms, the Go limit the
// bound less the headroom and what cgo allocates outside the runtime, the terms follow the
// budgets (a smaller game cache, fewer receipt requests), and
// docs/OPERATIONS.md §9 "Memory" lists every term of the defaults with its
// size, and the bound.
func TestMemoryBudget(t *testing.T) {
	terms := MemoryBudget(Config{})
	t.Logf("the defaults:\n%s", FormatMemoryBudget(terms))
	var sum, outside int64
	for _, term := range terms {
		if term.Bytes <= 0 {
			t.Errorf("%s: %d bytes", term.Name, term.Bytes)
		}
		sum += term.Bytes
		if term.Outside || term.Headroom {
			outside += term.Bytes
		}
	}
	if last := terms[len(terms)-1]; !last.Headroom || last.Bytes != (sum-last.Bytes)*MemoryHeadroomPercent/100 {
		t.Errorf("the last term %+v is not the headroom of %d %%", last, MemoryHeadroomPercent)
	}
	if MemoryBound(terms) != sum || GoMemoryLimit(terms) != sum-outside {
		t.Errorf("bound %d, Go limit %d; want %d and %d", MemoryBound(terms), GoMemoryLimit(terms), sum, sum-outside)
	}
	small := MemoryBudget(Config{GameCacheBytes: 16 << 20, ReceiptRequests: 1024})
	want := MemoryBound(terms) - (ledger.DefaultGameCacheBytes-16<<20+(16384-1024)*MemoryReceiptRequest)*(100+MemoryHeadroomPercent)/100
	if got := MemoryBound(small); got != want {
		t.Errorf("with a 16 MiB cache and 1,024 receipt requests: bound %d, want %d", got, want)
	}

	doc, err := os.ReadFile("../../docs/OPERATIONS.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, term := range terms {
		row := fmt.Sprintf("| %s | %s MiB |", term.Name, commas(term.Bytes>>20))
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/OPERATIONS.md has no row %q", row)
		}
	}
	bound := fmt.Sprintf("| **the bound** | **%s MiB** |", commas(MemoryBound(terms)>>20))
	if !strings.Contains(string(doc), bound) {
		t.Errorf("docs/OPERATIONS.md has no row %q", bound)
	}
}
