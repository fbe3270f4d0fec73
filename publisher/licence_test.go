package publisher

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// apache2SHA256 is the SHA-256 of the canonical Apache License 2.0 text
// (https://www.apache.org/licenses/LICENSE-2.0.txt, as the transparency-dev
// projects carry it).
const apache2SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

// TestLicence: the project is Apache-2.0. The root LICENSE is the licence's
// canonical text, and so is the copy each npm package ships; every
// package.json (and its lock file's root) says "Apache-2.0"; NOTICE names
// each third-party package the page bundle carries, at the version the lock
// file pins, with its copyright line; and the page bundle
// (publisher/web/verify.js) and the offline auditor carry NOTICE whole.
func TestLicence(t *testing.T) {
	root := filepath.Join("..")
	licence, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if h := sha256.Sum256(licence); hex.EncodeToString(h[:]) != apache2SHA256 {
		t.Errorf("LICENSE is not the Apache License 2.0's canonical text (SHA-256 %x)", h)
	}
	notice, err := os.ReadFile(filepath.Join(root, "NOTICE"))
	if err != nil {
		t.Fatal(err)
	}

	// Every package.json of the repository, and the root of its lock file.
	var manifests []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "package.json" {
			manifests = append(manifests, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(manifests) < 3 { // verifier/js, sdk/js, publisher/testdata/axe
		t.Fatalf("found %d package.json files: %v", len(manifests), manifests)
	}
	for _, p := range manifests {
		var m struct {
			License string
			Private bool
			Files   []string
		}
		if err := readJSON(p, &m); err != nil {
			t.Fatal(err)
		}
		if m.License != "Apache-2.0" {
			t.Errorf("%s: license %q, want Apache-2.0", p, m.License)
		}
		var lock struct {
			Packages map[string]struct{ License string }
		}
		lockPath := filepath.Join(filepath.Dir(p), "package-lock.json")
		if err := readJSON(lockPath, &lock); err != nil {
			t.Error(err)
		} else if l := lock.Packages[""].License; l != "Apache-2.0" {
			t.Errorf("%s: the root package's license %q, want Apache-2.0", lockPath, l)
		}
		if m.Private {
			continue
		}
		// A published package ships the licence (npm packs LICENSE
		// whatever "files" says).
		copyOf, err := os.ReadFile(filepath.Join(filepath.Dir(p), "LICENSE"))
		if err != nil || !bytes.Equal(copyOf, licence) {
			t.Errorf("%s: the package's LICENSE is not the root LICENSE (%v)", p, err)
		}
	}

	// NOTICE names what the page bundle carries, at the locked versions.
	var lock struct {
		Packages map[string]struct{ Version, License string }
	}
	if err := readJSON(filepath.Join(jsPackage, "package-lock.json"), &lock); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"@noble/curves", "@noble/hashes"} {
		p, ok := lock.Packages["node_modules/"+name]
		if !ok {
			t.Fatalf("verifier/js/package-lock.json has no %s", name)
		}
		want := regexp.MustCompile(regexp.QuoteMeta(name+" "+p.Version) + ` \([^)]*\), ` + regexp.QuoteMeta(p.License) + `:\n  Copyright \(c\) [0-9]{4} `)
		if !want.Match(notice) {
			t.Errorf("NOTICE does not name %s %s (%s) with its copyright line", name, p.Version, p.License)
		}
		// The copyright line is the package's own, where it is installed.
		if l, err := os.ReadFile(filepath.Join(jsPackage, "node_modules", name, "LICENSE")); err == nil {
			line := regexp.MustCompile(`(?m)^Copyright .*$`).Find(l)
			if line == nil || !bytes.Contains(notice, line) {
				t.Errorf("NOTICE does not carry %s's copyright line %q", name, line)
			}
		}
	}

	// The page bundle and the offline auditor carry NOTICE, as comment
	// lines.
	var commented strings.Builder
	for _, l := range strings.Split(strings.TrimRight(string(notice), "\n"), "\n") {
		if l == "" {
			commented.WriteString("//\n")
		} else {
			commented.WriteString("// " + l + "\n")
		}
	}
	bundle, err := os.ReadFile("web/verify.js")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(bundle), commented.String()) {
		t.Error("web/verify.js does not carry NOTICE (run npm run build in verifier/js)")
	}
	aud, err := Auditor("")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(aud), commented.String()) {
		t.Error("the offline auditor does not carry NOTICE")
	}
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
