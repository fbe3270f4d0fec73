package verifier

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/zarlog/zarlog/internal/testonly"
)

// TestGolden pins the exact output format (text in the three languages and
// --json) for a few vectors: testdata/dice/golden/<vector>.<lang>.txt and
// <vector>.json. Regenerate with ZARLOG_UPDATE_GOLDEN=1 and review the diff.
func TestGolden(t *testing.T) {
	dir, err := testonly.Dir()
	if err != nil {
		t.Fatal(err)
	}
	update := os.Getenv("ZARLOG_UPDATE_GOLDEN") == "1"
	for _, name := range []string{
		"tavlarena-worked-example-seal-code", "tavlarena-flipped-die", "die-seven",
		"anchored-quicknet-657413-60-rolls", "per-roll-server-60-rolls", "tavlarena-against-computer",
		"bundle-tavlarena-10-rolls", "bundle-tavlarena-no-keys", "bundle-top-level-disagrees", "bundle-commit-after-roll",
		"tlog-proof-commit", "moves-tavla-anchored-turkish-reroll", "moves-illegal-move", "moves-missing-move",
	} {
		r := verifyVector(t, vectorNamed(t, name))
		files := map[string][]byte{name + ".json": r.JSON(English)}
		for _, l := range Langs() {
			files[name+"."+string(l)+".txt"] = []byte(r.Text(l))
		}
		for f, got := range files {
			path := filepath.Join(dir, "golden", f)
			if update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (set ZARLOG_UPDATE_GOLDEN=1 to create it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("%s differs from the golden file:\n%s", f, got)
			}
		}
	}
}
