package main

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// shippedBuildEnv is how the project builds zarlog (`make demo`,
// deploy/build-image.sh), and so how the tests build it: static, without
// cgo. A cgo build allocates Pebble's block cache and memtables with C's
// malloc, outside the Go runtime's memory limit (docs/OPERATIONS.md §9
// "Memory").
const shippedBuildEnv = "CGO_ENABLED=0"

// goBuild matches a shell or make line that runs `go build`.
var goBuild = regexp.MustCompile(`(^|\s)(go|\$\(GO\)|\$\{GO:-go\})\s+build\s`)

// TestShippedBuilds: every `go build` of zarlog in the Makefile and
// deploy/build-image.sh builds it with shippedBuildEnv, and the binary the
// tests run (TestServeRSS's measurement among them) is built so.
func TestShippedBuilds(t *testing.T) {
	for _, f := range []string{"../../Makefile", "../../deploy/build-image.sh"} {
		file, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		sc := bufio.NewScanner(file)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(strings.TrimSpace(line), "#") || !goBuild.MatchString(line) || !strings.Contains(line, "./cmd/zarlog") {
				continue
			}
			n++
			if !strings.Contains(line, shippedBuildEnv+" ") {
				t.Errorf("%s builds zarlog without %s: %s", f, shippedBuildEnv, strings.TrimSpace(line))
			}
		}
		file.Close()
		if n == 0 {
			t.Errorf("%s: no go build of ./cmd/zarlog found", f)
		}
	}
	if os.Getenv("ZARLOG_TEST_CGO") == "1" {
		t.Skip("ZARLOG_TEST_CGO=1: the tests' binaries are built with cgo")
	}
	bin, _ := tools(t)
	out, err := exec.Command("go", "version", "-m", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^\s+build\s+` + shippedBuildEnv + `$`).Match(out) {
		t.Errorf("the tests' zarlog is not built with %s:\n%s", shippedBuildEnv, out)
	}
}
