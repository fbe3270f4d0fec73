package testonly

import (
	"os"
	"os/exec"
	"testing"
)

func TestLoad(t *testing.T) {
	vs, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, v := range vs {
		if names[v.Name] {
			t.Errorf("vector %s appears twice", v.Name)
		}
		names[v.Name] = true
		if _, err := os.Stat(v.Path); err != nil {
			t.Errorf("vector %s: %v", v.Name, err)
		}
		if (v.Exit == 0) != (len(v.Failing) == 0) {
			t.Errorf("vector %s: exit %d with failing checks %v", v.Name, v.Exit, v.Failing)
		}
	}
}

// TestGeneratorReproducible reruns the Python generator in --check mode:
// the committed vectors are exactly what it writes. Skipped without python3.
func TestGeneratorReproducible(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "gen.py", "--check")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("gen.py --check: %v\n%s", err, out)
	}
}
