package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/verifier"
)

// bin is the zarlog-verify binary, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zarlog-verify-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	bin = filepath.Join(dir, "zarlog-verify")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runBin runs the binary as a user does and returns its exit code and output.
func runBin(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errOut.String()
	}
	t.Fatalf("running %s: %v", bin, err)
	return 0, "", ""
}

var summaries = map[verifier.Lang]string{verifier.English: "Every roll checked", verifier.Turkish: "Her atış kontrol edildi", verifier.Arabic: "تم التحقق من كل رمية"}

// tlogSummaries are the last lines of a valid tlog-proof's report.
var tlogSummaries = map[verifier.Lang]string{verifier.English: "The event is in the log", verifier.Turkish: "Olay kayıt defterinde", verifier.Arabic: "الحدث مدرج في السجل"}

// TestBinaryVectors runs every vector of testdata/dice and testdata/moves
// through the built binary: --json (exit code, the exact failing checks,
// and for a failing moves check the code and rule it names), and the text
// output in one of the three languages (the last line).
func TestBinaryVectors(t *testing.T) {
	vs, err := testonly.LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	bundles, tlogProofs, moves := 0, 0, 0
	for _, v := range vs {
		if v.IsBundle() {
			bundles++
		}
		if slices.Contains(v.Failing, verifier.CheckMoves) {
			moves++
		}
		if v.IsTlogProof() {
			tlogProofs++
		}
	}
	if bundles == 0 || tlogProofs == 0 || moves == 0 {
		t.Errorf("%d proof-bundle, %d tlog-proof and %d illegal-move vectors, want some of each", bundles, tlogProofs, moves)
	}
	for i, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			code, out, errOut := runBin(t, nil, append(v.Args(), "--json", v.Path)...)
			if code != v.Exit {
				t.Errorf("--json: exit %d, want %d\n%s%s", code, v.Exit, out, errOut)
			}
			var j verifier.JSONReport
			if err := json.Unmarshal([]byte(out), &j); err != nil {
				t.Fatalf("--json output: %v\n%s", err, out)
			}
			var failed []string
			for _, c := range j.Checks {
				if c.Status == verifier.Fail {
					failed = append(failed, c.Name)
				}
			}
			slices.Sort(failed)
			if failed == nil {
				failed = []string{}
			}
			for _, c := range j.Checks {
				if c.Name == verifier.CheckMoves && c.Status == verifier.Fail && (c.Move == nil || c.Move.Code != v.MoveCode || c.Move.Rule != v.MoveRule) {
					t.Errorf("--json: moves names %+v, want code %s rule %q", c.Move, v.MoveCode, v.MoveRule)
				}
			}
			if !slices.Equal(failed, v.Failing) || j.Exit != v.Exit {
				t.Errorf("--json: failed %v (exit %d), want %v (exit %d)", failed, j.Exit, v.Failing, v.Exit)
			}

			lang := verifier.Langs()[i%len(verifier.Langs())]
			// The file on standard input for every third vector.
			args, stdin := append(v.Args(), "--lang", string(lang), v.Path), []byte(nil)
			if i%3 == 0 {
				b, err := os.ReadFile(v.Path)
				if err != nil {
					t.Fatal(err)
				}
				args, stdin = append(v.Args(), "--lang", string(lang), "-"), b
			}
			code, out, _ = runBin(t, stdin, args...)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			last := lines[len(lines)-1]
			want := summaries[lang] // a bundle without --log-key adds to it
			if v.IsTlogProof() {
				want = tlogSummaries[lang]
			}
			if code != v.Exit || strings.HasPrefix(last, want) != (v.Exit == 0) {
				t.Errorf("--lang %s: exit %d, last line %q; want exit %d", lang, code, last, v.Exit)
			}
		})
	}
}

func TestBinaryUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"--bogus", "x.json"}, 2},
		{[]string{}, 2},
		{[]string{"--lang", "xx", "x.json"}, 2},
		{[]string{"--expected-commitment", "not-a-seal", "x.json"}, 2},
		{[]string{"--log-key", "bad", "x.json"}, 2},
		{[]string{"-h"}, 0},
	} {
		if code, _, _ := runBin(t, nil, tt.args...); code != tt.code {
			t.Errorf("zarlog-verify %q: exit %d, want %d", tt.args, code, tt.code)
		}
	}
}

// TestReadmeCommand runs the zarlog-verify command shown in the README's
// "Verifying a game" section, as written, from the module root.
func TestReadmeCommand(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds [][]string
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "./zarlog-verify ") {
			cmds = append(cmds, strings.Fields(line)[1:])
		}
	}
	if len(cmds) == 0 {
		t.Fatal("the README shows no ./zarlog-verify command")
	}
	for _, args := range cmds {
		cmd := exec.Command(bin, args...)
		cmd.Dir = filepath.Join("..", "..")
		out, err := cmd.CombinedOutput()
		if err != nil { // exit 0: every check passed
			t.Errorf("zarlog-verify %q: %v\n%s", args, err, out)
		}
	}
}

// TestTlogProofLeaf: a C2SP tlog-proof without the optional extra line is
// verified with the leaf given apart (--leaf FILE); without it, or with a
// leaf that is not the extra line's, or with a leaf that is not an event,
// zarlog-verify says why (exit 2, a reason that is never empty).
func TestTlogProofLeaf(t *testing.T) {
	const logKey = "log.zarlog.example+58a735df+AabtJ4sEH6aKjQjFidVXKTVU3pwEtYb2uS3y5DAd+GNI"
	root := "../../testdata/dice/evidence/valid/"
	full, err := os.ReadFile(root + "tlog-proof-commit.tlog-proof")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(full), "\n")
	if !strings.HasPrefix(lines[1], "extra ") {
		t.Fatalf("line 2 of the vector is %q", lines[1])
	}
	leaf, err := base64.StdEncoding.DecodeString(strings.TrimSpace(strings.TrimPrefix(lines[1], "extra ")))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bare := write("bare.tlog-proof", []byte(lines[0]+strings.Join(lines[2:], "")))
	leafFile := write("leaf.json", append(leaf, '\n')) // as an editor saves it
	other := write("other.json", []byte(`{"not":"an event"}`))

	if code, out, stderr := runBin(t, nil, "--log-key", logKey, "--leaf", leafFile, bare); code != 0 || !strings.Contains(out, "log-inclusion") {
		t.Errorf("an extra-less tlog-proof with --leaf: exit %d\n%s%s", code, out, stderr)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no leaf", []string{"--log-key", logKey, bare}, "no leaf file was given"},
		{"another leaf than extra", []string{"--log-key", logKey, "--leaf", other, root + "tlog-proof-commit.tlog-proof"}, "is not the leaf in the tlog-proof's extra line"},
		{"a leaf that is not an event", []string{"--log-key", logKey, "--leaf", other, bare}, "is not a zarlog event (malformed: "},
		{"an unreadable leaf", []string{"--log-key", logKey, "--leaf", filepath.Join(dir, "missing"), bare}, "cannot read the --leaf file"},
	} {
		code, out, stderr := runBin(t, nil, c.args...)
		if code != 2 || !strings.Contains(out+stderr, c.want) {
			t.Errorf("%s: exit %d, want 2 with %q\n%s%s", c.name, code, c.want, out, stderr)
		}
	}
}
