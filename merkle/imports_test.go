package merkle

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package pure: besides the standard library it may
// import only transparency-dev/merkle and sumdb/note, so that the offline
// verifier, which imports it, stays small and free of storage and network
// code.
func TestImports(t *testing.T) {
	allowed := map[string]bool{
		"github.com/transparency-dev/merkle/compact": true,
		"github.com/transparency-dev/merkle/proof":   true,
		"github.com/transparency-dev/merkle/rfc6962": true,
		"golang.org/x/mod/sumdb/note":                true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		n++
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(strings.SplitN(path, "/", 2)[0], ".") && !allowed[path] {
				t.Errorf("%s imports %s", name, path)
			}
			if path == "os" || path == "net" || path == "net/http" {
				t.Errorf("%s imports %s: the package does no I/O", name, path)
			}
		}
	}
	if n == 0 {
		t.Fatal("no source files found")
	}
}
