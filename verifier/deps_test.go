package verifier

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps the verifier buildable on its own, small and
// readable: neither it nor zarlog-verify may depend on NATS, Pebble (or
// anything else from cockroachdb) or the ledger. Of zarlog's own packages
// it uses events, merkle and the rules engine (rules, rules/movecheck). Non-standard modules
// outside the allow list fail too, so a new dependency is a decision.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}",
		"github.com/zarlog/zarlog/verifier", "github.com/zarlog/zarlog/cmd/zarlog-verify").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{"github.com/nats-io/", "github.com/cockroachdb/", "github.com/zarlog/zarlog/ledger", "github.com/zarlog/zarlog/publisher"}
	allowed := []string{
		"github.com/zarlog/zarlog/events", "github.com/zarlog/zarlog/merkle", "github.com/zarlog/zarlog/verifier",
		"github.com/zarlog/zarlog/cmd/zarlog-verify",
		"github.com/zarlog/zarlog/rules",            // the rules engine (pure, standard library only) and its adapter, for the moves check
		"github.com/cloudflare/circl/",              // BLS for the drand anchor
		"golang.org/x/crypto/", "golang.org/x/sys/", // used by circl
		"golang.org/x/mod/sumdb/note",        // signed-note verifier keys (--log-key)
		"github.com/transparency-dev/merkle", // for the proof-bundle checks
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list printed no dependencies")
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if strings.HasPrefix(d, f) {
				t.Errorf("forbidden dependency %s", d)
			}
		}
		ok := false
		for _, a := range allowed {
			if strings.HasPrefix(d, a) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("dependency %s is not on the allow list", d)
		}
	}
	t.Logf("non-standard dependencies: %s", strings.Join(deps, " "))
}
