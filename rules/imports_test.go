package rules

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestPure keeps the package pure: its non-test files import only these
// standard packages (no I/O, no clock), so that the verifier and the ledger
// can both use it. (sync is for the pool of the move generator's scratch
// maps, which holds no state between calls.)
func TestPure(t *testing.T) {
	allowed := []string{"cmp", "errors", "fmt", "math/bits", "math/rand/v2", "slices", "strconv", "strings", "sync"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !slices.Contains(allowed, path) {
				t.Errorf("%s imports %q", f, path)
			}
		}
		n++
	}
	if n == 0 {
		t.Fatal("no source files")
	}
}
