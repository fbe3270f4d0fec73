package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The repository's root, from this package's directory.
const root = "../.."

// readmeCommands returns the commands of README.md's code blocks: every
// line of a block without its "# comment" and its "$ " prompt. Blocks
// tagged with a language other than sh ("```text": output, diagrams) are
// not commands.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			if tag := strings.TrimPrefix(line, "```"); !in && tag != "" && tag != "sh" {
				for sc.Scan() && !strings.HasPrefix(sc.Text(), "```") {
				}
				continue
			}
			in = !in
			continue
		}
		if !in {
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if line = strings.TrimSpace(strings.TrimPrefix(line, "$ ")); line != "" {
			cmds = append(cmds, line)
		}
	}
	if len(cmds) == 0 {
		t.Fatal("README.md has no commands")
	}
	return cmds
}

// makeRecipe returns the recipe lines of a Makefile target.
func makeRecipe(t *testing.T, target string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, target+":"):
			in = true
		case in && strings.HasPrefix(line, "\t"):
			lines = append(lines, strings.TrimSpace(line))
		case in:
			return lines
		}
	}
	return lines
}

// TestReadmeTwoCommands: the README's two commands are make targets, the
// first running the demo, the second vet and the tests.
func TestReadmeTwoCommands(t *testing.T) {
	cmds := readmeCommands(t)
	if len(cmds) < 2 || cmds[0] != "make demo" || cmds[1] != "make test" {
		t.Fatalf("the README's first commands are %q, want make demo, make test", cmds[:min(2, len(cmds))])
	}
	if r := makeRecipe(t, "demo"); len(r) != 3 || !strings.Contains(r[1], "$(GO) build -o bin/zarlog ./cmd/zarlog") || !strings.HasPrefix(r[2], "@set -m; ./bin/zarlog demo") {
		t.Errorf("make demo runs %q", r)
	}
	r := strings.Join(makeRecipe(t, "test"), "\n")
	for _, want := range []string{"$(GO) test -race", "$(GO) test "} {
		if !strings.Contains(r, want) {
			t.Errorf("make test does not run %q: %q", want, r)
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "Makefile")); err != nil || !regexp.MustCompile(`(?m)^test: .*\bvet\b`).Match(b) {
		t.Errorf("make test does not depend on vet (%v)", err)
	}
}

// TestReadmeCLI: the README shows an example of every subcommand that is
// built (a placeholder says "not built yet").
func TestReadmeCLI(t *testing.T) {
	cmds := strings.Join(readmeCommands(t), "\n")
	for name := range commands() {
		var stderr bytes.Buffer
		run(context.Background(), []string{name, "-h"}, io.Discard, &stderr)
		if strings.Contains(stderr.String(), "not built yet") {
			continue
		}
		if !regexp.MustCompile(`(?m)^(zarlog|go run ./cmd/zarlog) ` + name + `\b`).MatchString(cmds) {
			t.Errorf("the README has no example of zarlog %s", name)
		}
	}
}

// TestReadmeDemo runs the README's scripted demo command exactly as the
// README writes it, from the repository's root, and checks that every game
// it played was published and verified.
func TestReadmeDemo(t *testing.T) {
	var line string
	for _, c := range readmeCommands(t) {
		if strings.HasPrefix(c, "go run ./cmd/zarlog demo ") && strings.Contains(c, " --exit") {
			line = c
			break
		}
	}
	if line == "" {
		t.Fatal("the README has no `go run ./cmd/zarlog demo … --exit` command")
	}
	args := strings.Fields(line)
	games := 0
	for i, a := range args {
		if a == "--games" && i+1 < len(args) {
			fmt.Sscan(args[i+1], &games)
		}
	}
	if games < 3 {
		t.Fatalf("the README's demo command plays %d games; want a few, given with --games", games)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	_, statErr := os.Stat(filepath.Join(abs, "demo-data"))
	hadData := statErr == nil
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = abs
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	out := stdout.String()
	// Remove the run's data directory (a fresh one per run).
	if m := regexp.MustCompile(`(?m)^data (\S+) `).FindStringSubmatch(out); m != nil {
		os.RemoveAll(filepath.Join(abs, m[1]))
		if !hadData {
			os.Remove(filepath.Join(abs, "demo-data"))
		}
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s\n%s", line, err, out, stderr.String())
	}
	verified := regexp.MustCompile(`(?m)^ +verified: `).FindAllString(out, -1)
	if len(verified) != games || !strings.Contains(out, fmt.Sprintf("\n%d of %d games verified\n", games, games)) {
		t.Fatalf("%s: %d games verified, want %d:\n%s\n%s", line, len(verified), games, out, stderr.String())
	}
	for _, s := range []string{"tavlarena-v1", "anchored-v1", "per-roll-v1"} {
		if !strings.Contains(out, " "+s+" ") {
			t.Errorf("no %s game in:\n%s", s, out)
		}
	}
}

// TestReadmeLayout: the README's layout table has a row for every package
// and every top-level folder, and every row names a folder that exists.
func TestReadmeLayout(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n## Layout\n")
	if !ok {
		t.Fatal("the README has no Layout section")
	}
	rows := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(table, -1) {
		rows[m[1]] = true
		if fi, err := os.Stat(filepath.Join(root, m[1])); err != nil || !fi.IsDir() {
			t.Errorf("the layout names %s, which is not a folder", m[1])
		}
	}
	want := map[string]bool{}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		// (bin/ is make demo's build output, ignored by git.)
		if e.IsDir() && e.Name() != ".git" && e.Name() != "demo-data" && e.Name() != "bin" && e.Name() != "cmd" && e.Name() != "internal" {
			want[e.Name()] = true
		}
	}
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// The go command ignores folders whose name starts with "_" (a
		// measurement harness that is no package, verifier/js/tools/_wasm)
		// and node_modules holds no package of ours.
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == ".git" || d.Name() == "demo-data" ||
			d.Name() == "node_modules" || strings.HasPrefix(d.Name(), "_")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(p))
			if err != nil {
				return err
			}
			want[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range want {
		if !rows[p] {
			t.Errorf("the layout has no row for %s", p)
		}
	}
}

// TestRacePackages: every package that imports sync or sync/atomic is in
// the Makefile's RACE_PKGS (run under the race detector) or RACE_EXEMPT
// (with the reason written there), so that a new concurrent package cannot
// slip out of the race detector unnoticed.
func TestRacePackages(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	mk := strings.ReplaceAll(string(b), "\\\n", " ")
	listed := func(name string) []string {
		m := regexp.MustCompile(`(?m)^` + name + ` := (.*)$`).FindStringSubmatch(mk)
		if m == nil {
			t.Fatalf("no %s in the Makefile", name)
		}
		return strings.Fields(m[1])
	}
	covered := map[string]bool{}
	for _, p := range append(listed("RACE_PKGS"), listed("RACE_EXEMPT")...) {
		out, err := exec.Command("go", "list", "-C", root, p).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", p, err)
		}
		for _, pkg := range strings.Fields(string(out)) {
			covered[pkg] = true
		}
	}
	out, err := exec.Command("go", "list", "-C", root, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if slices.Contains(f[1:], "sync") || slices.Contains(f[1:], "sync/atomic") {
			if !covered[f[0]] {
				t.Errorf("%s imports sync but is in neither RACE_PKGS nor RACE_EXEMPT (Makefile)", f[0])
			}
		}
	}
}
