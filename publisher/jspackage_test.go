package publisher

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/verifier"
)

// jsPackage is the JavaScript verifier package (zarlog-verify on npm).
var jsPackage = filepath.Join("..", "verifier", "js")

// jsCatalog returns src/messages.js of the JavaScript package: package
// verifier's catalog and the browser's own messages, in the three
// languages, so that the package says what zarlog-verify says.
func jsCatalog(t *testing.T) []byte {
	t.Helper()
	all := map[string][3]string{}
	for id, texts := range verifier.MessageCatalog() {
		all[id] = texts
	}
	for id, texts := range browserMessages {
		all[id] = texts
	}
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b bytes.Buffer
	b.WriteString("// Generated from package verifier's message catalog and the pages' browser messages\n")
	b.WriteString("// by TestJSCatalog (publisher/jspackage_test.go): do not edit; ZARLOG_UPDATE_GOLDEN=1 rewrites it.\n\n")
	b.WriteString("/** The languages, in the order of each message's texts. */\n")
	b.WriteString("export const langs = [\"en\", \"tr\", \"ar\"];\n\n")
	b.WriteString("/** langIndex returns the index of a language's text (English for any other). */\n")
	b.WriteString("export function langIndex(lang) { const i = langs.indexOf(lang); return i < 0 ? 0 : i; }\n\n")
	b.WriteString("/** catalog maps a message id to its texts: Go format strings with %[n]s, %[n]d, %[n]q. */\n")
	b.WriteString("export const catalog = {\n")
	for _, id := range ids {
		k, _ := json.Marshal(id)
		v, err := json.Marshal(all[id])
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("  " + string(k) + ": " + string(v) + ",\n")
	}
	b.WriteString("};\n")
	return b.Bytes()
}

// TestJSCatalog holds the JavaScript package's messages to the Go
// verifier's catalog: a message added or changed in Go is one the package
// has too.
func TestJSCatalog(t *testing.T) {
	want := jsCatalog(t)
	path := filepath.Join(jsPackage, "src", "messages.js")
	if os.Getenv("ZARLOG_UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not the catalog of package verifier (ZARLOG_UPDATE_GOLDEN=1 rewrites it)", path)
	}
}

// nodeAvailable returns the path of node and of the package's installed
// dependencies, or skips (fails under CI) when either is missing.
func nodeAvailable(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(jsPackage, "node_modules", "@noble", "curves", "package.json"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node or the JavaScript package's dependencies are missing (.ci/deps installs them): %v", err)
		}
		t.Skipf("node or the JavaScript package's dependencies are missing (run .ci/deps): %v", err)
	}
	return node
}

// TestNodeVerifier runs every vector of testdata/dice through the
// JavaScript package in Node and through package verifier with the same
// inputs (the file, --expected-commitment, --log-key), and compares the
// whole --json report in English: exit code, result, every check's status,
// detail and roll, what it proves and does not, and the summary. The only
// differences allowed are the moves replay, which is Go's (the package
// says "skipped"), and the tlog-proof files, which are zarlog-verify's
// alone.
func TestNodeVerifier(t *testing.T) {
	node := nodeAvailable(t)
	out, err := exec.Command(node, filepath.Join(jsPackage, "test", "vectors.mjs"), "../testdata/dice/manifest.json", "../testdata/dice").Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	raw, err := os.ReadFile("../testdata/dice/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Vectors []struct{ Name, File, ExpectedCommitment, LogKey string }
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if len(lines) != len(m.Vectors) {
		t.Fatalf("node reported %d vectors of %d", len(lines), len(m.Vectors))
	}
	compared, moves, tlog := 0, 0, 0
	for i, v := range m.Vectors {
		var js struct {
			Name   string
			Report verifier.JSONReport
		}
		if err := json.Unmarshal(lines[i], &js); err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		data, err := os.ReadFile(filepath.Join("../testdata/dice", v.File))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.HasPrefix(data, []byte("c2sp.org/tlog-proof@v1\n")) {
			tlog++
			continue
		}
		opt := verifier.Options{}
		if v.ExpectedCommitment != "" {
			if opt.Expected, err = verifier.ParseExpected(v.ExpectedCommitment); err != nil {
				t.Fatal(err)
			}
		}
		if v.LogKey != "" {
			if opt.LogKey, err = verifier.ParseLogKey(v.LogKey); err != nil {
				t.Fatal(err)
			}
		}
		var goRep verifier.JSONReport
		if err := json.Unmarshal(verifier.Verify(data, opt).JSON(verifier.English), &goRep); err != nil {
			t.Fatal(err)
		}
		if movesDiffer(&goRep, &js.Report) {
			moves++
		}
		g, _ := json.MarshalIndent(goRep, "", "  ")
		n, _ := json.MarshalIndent(js.Report, "", "  ")
		if !bytes.Equal(g, n) {
			t.Errorf("%s: the JavaScript package and zarlog-verify disagree:\nGo:   %s\nNode: %s", v.Name, g, n)
		}
		compared++
	}
	t.Logf("%d vectors compared (%d with the moves replay left to Go); %d tlog-proof files are zarlog-verify's alone", compared, moves, tlog)
}

// movesDiffer reports whether the two reports differ in the moves replay
// only, and if so makes them equal there: the JavaScript package skips the
// moves check of a game whose moves are logged, and says nothing of them
// in its statements.
func movesDiffer(goRep, js *verifier.JSONReport) bool {
	var jm, gm *verifier.JSONCheck
	for i := range js.Checks {
		if js.Checks[i].Name == verifier.CheckMoves {
			jm = &js.Checks[i]
		}
	}
	for i := range goRep.Checks {
		if goRep.Checks[i].Name == verifier.CheckMoves {
			gm = &goRep.Checks[i]
		}
	}
	if jm == nil || gm == nil || jm.Status != verifier.Skipped || jm.Detail != browserMessages["BrMovesLogged"][0] {
		return false
	}
	*gm = *jm
	// Go's statement of the moves, which the package does not make.
	var proves []string
	for _, p := range goRep.Proves {
		if !strings.Contains(p, "move") {
			proves = append(proves, p)
		}
	}
	goRep.Proves = proves
	var not []string
	for _, p := range goRep.DoesNotProve {
		if !strings.Contains(p, "move") && !strings.Contains(p, "doubling cube") {
			not = append(not, p)
		}
	}
	goRep.DoesNotProve = not
	if goRep.Exit == 1 && js.Exit == 0 {
		return true // the moves check failed in Go: the other checks must still agree
	}
	return true
}
