package main

import (
	"os/exec"
	"strings"
	"testing"
)

// layers is the import graph of docs/ARCHITECTURE.md: a package may import
// only packages of a lower layer. Every package of the module has a layer,
// so a new package is a decision too.
var layers = map[string]int{
	// 0: the pure bottom: formats and arithmetic, no I/O.
	"events/cjson": 0, "events/drand": 0, "merkle": 0, "rules": 0, "wire": 0,
	"internal/pebblefs": 0, "internal/httpserve": 0, "bucket": 0, "internal/toolproc": 0,
	"events/dice": 1,
	"events":      2,
	// 3: the rules engine's adapter, test workloads.
	"rules/movecheck": 3, "internal/workload": 3, "internal/litewitness": 3,
	"internal/sigsumwitness": 3,
	// 4: the verifier, and the engines: the ledger, the witness, the read
	// side's follower.
	"verifier": 4, "ledger": 4, "witness": 4, "follow": 4, "internal/testonly": 4,
	// 5: what is built on them: the ingest (above the ledger, which never
	// imports it), the publisher, the SDK, the auditor.
	"ledger/ingest": 5, "verifier/cli": 5, "publisher": 5, "sdk": 5, "audit": 5,
	// the log in object storage: the lock, the uploads, the standby.
	"storage": 5,
	"mirror":  6,
	// 7 and up: the wiring, the measurements, the commands.
	"internal/serve": 7,
	"internal/demo":  8, "internal/bench": 8, "internal/testlog": 8,
	// the fault harness: namespaces, processes and the outside checker
	// (its test runs the whole deployment).
	"internal/faults": 9,
	"cmd/zarlog":      10, "cmd/zarlog-verify": 10,
}

// pure are the packages that may do no I/O: they import no network, file,
// process or database package (standard or not).
var pure = []string{"events", "events/cjson", "events/dice", "events/drand", "merkle", "rules", "rules/movecheck", "wire", "verifier"}

// TestLayers holds the layering: every import of a zarlog package runs
// downward in layers, the pure packages import no I/O, and the ledger never
// imports the ingest, the publisher or the SDK (their layers say so).
func TestLayers(t *testing.T) {
	const mod = "github.com/zarlog/zarlog/"
	out, err := exec.Command("go", "list", "-C", root, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		imports[strings.TrimPrefix(f[0], mod)] = f[1:]
	}
	for pkg, imps := range imports {
		l, ok := layers[pkg]
		if !ok {
			t.Errorf("package %s has no layer (cmd/zarlog/layers_test.go, docs/ARCHITECTURE.md)", pkg)
			continue
		}
		for _, imp := range imps {
			dep, ours := strings.CutPrefix(imp, mod)
			if !ours {
				continue
			}
			if dl, ok := layers[dep]; ok && dl >= l {
				t.Errorf("%s (layer %d) imports %s (layer %d): imports run downward", pkg, l, dep, dl)
			}
		}
	}
	io := []string{"os", "os/exec", "net", "net/http", "syscall", "io/fs", "path/filepath", "github.com/nats-io/", "github.com/cockroachdb/"}
	for _, pkg := range pure {
		for _, imp := range imports[pkg] {
			for _, bad := range io {
				if imp == bad || strings.HasSuffix(bad, "/") && strings.HasPrefix(imp, bad) {
					t.Errorf("pure package %s imports %s", pkg, imp)
				}
			}
		}
	}
	if t.Failed() {
		return
	}
	for _, up := range []string{"ledger/ingest", "publisher", "sdk"} {
		if layers["ledger"] >= layers[up] {
			t.Errorf("the ledger's layer does not keep it below %s", up)
		}
	}
}
