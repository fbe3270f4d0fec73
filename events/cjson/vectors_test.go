package cjson

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestPrimitiveVectors checks the canonical-JSON vectors of the independent
// Python generator (testdata/dice/primitives.json).
func TestPrimitiveVectors(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "dice", "primitives.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Canonical []struct {
			Name, Input, Canonical, SHA256 string
		}
		CanonicalRejects []struct{ Name, Input string }
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Canonical) == 0 || len(p.CanonicalRejects) == 0 {
		t.Fatal("no canonical JSON vectors")
	}
	for _, v := range p.Canonical {
		got, err := Parse([]byte(v.Input))
		if err != nil {
			t.Errorf("%s: Parse: %v", v.Name, err)
			continue
		}
		if string(got) != v.Canonical {
			t.Errorf("%s: Parse = %q, want %q", v.Name, got, v.Canonical)
		}
		if s := sha256.Sum256(got); hex.EncodeToString(s[:]) != v.SHA256 {
			t.Errorf("%s: sha256 = %x, want %s", v.Name, s, v.SHA256)
		}
	}
	for _, v := range p.CanonicalRejects {
		if got, err := Parse([]byte(v.Input)); err == nil {
			t.Errorf("%s: Parse(%q) = %q, want an error", v.Name, v.Input, got)
		}
	}
}
