package publisher

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/verifier"
	"github.com/zarlog/zarlog/verifier/cli"
)

// jsPackage is the JavaScript verifier package (zarlog-verify on npm).
var jsPackage = filepath.Join("..", "verifier", "js")

// jsCatalog returns src/messages.js of the JavaScript package: the
// verifier's messages, its command line's and the browser's own, in the
// three languages, so that the package says what zarlog-verify says.
func jsCatalog(t *testing.T) []byte {
	t.Helper()
	if err := verifier.CheckTexts(verifier.Texts(), cli.Texts(), browserMessages); err != nil {
		t.Fatal(err)
	}
	all := wordsOf(append(scriptTexts(), cli.Texts()...))
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b bytes.Buffer
	b.WriteString("// Generated from the message tables of packages verifier and verifier/cli and the pages' browser messages\n")
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

// vectorManifests are the project's vector sets: the dice (evidence files,
// proof bundles, tlog-proofs; testdata/dice) and the moves (proof bundles of
// games whose moves are logged; testdata/moves).
var vectorManifests = []string{"../testdata/dice", "../testdata/moves"}

// A vector is one file of a manifest with the flags it is verified with.
type vector struct {
	Name, File, ExpectedCommitment, LogKey, WitnessPolicy string
	EmitterKeys                                           []string
	Exit                                                  int
	Failing                                               []string
	dir                                                   string
}

// policyPath returns the path of the vector's witness policy, or "".
func (v vector) policyPath() string {
	if v.WitnessPolicy == "" {
		return ""
	}
	return filepath.Join(v.dir, v.WitnessPolicy)
}

// vectors reads the vectors of every manifest of vectorManifests.
func vectors(t testing.TB) []vector {
	t.Helper()
	var out []vector
	for _, dir := range vectorManifests {
		raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ Vectors []vector }
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if len(m.Vectors) == 0 {
			t.Fatalf("%s: no vectors", dir)
		}
		for _, v := range m.Vectors {
			v.dir = dir
			out = append(out, v)
		}
	}
	return out
}

// TestNodeVerifier runs every vector of testdata/dice and testdata/moves
// through the JavaScript package in Node and through package verifier with
// the same inputs (the file, --expected-commitment, --log-key,
// --emitter-key, --witness-policy), and compares the whole --json report in
// English, Turkish and Arabic: exit code, result, every check's status, detail, roll and move,
// what it proves and does not, the event of a tlog-proof, and the summary.
// The moves are replayed through the JavaScript port of the rules engine.
func TestNodeVerifier(t *testing.T) {
	node := nodeAvailable(t)
	compared, tlog, moves := 0, 0, 0
	for _, dl := range langDirs() {
		dir, l := dl.dir, dl.lang
		out, err := exec.Command(node, filepath.Join(jsPackage, "tools", "vectors.mjs"), filepath.Join(dir, "manifest.json"), dir, string(l)).Output()
		if err != nil {
			t.Fatalf("node: %v", err)
		}
		var vs []vector
		for _, v := range vectors(t) {
			if v.dir == dir {
				vs = append(vs, v)
			}
		}
		lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
		if len(lines) != len(vs) {
			t.Fatalf("%s: node reported %d vectors of %d", dir, len(lines), len(vs))
		}
		for i, v := range vs {
			var js struct {
				Name   string
				Report verifier.JSONReport
			}
			if err := json.Unmarshal(lines[i], &js); err != nil {
				t.Fatalf("%s: %v", v.Name, err)
			}
			data, err := os.ReadFile(filepath.Join(dir, v.File))
			if err != nil {
				t.Fatal(err)
			}
			if verifier.IsTlogProof(data) {
				tlog++
			}
			opt := vectorOptions(t, v.ExpectedCommitment, v.LogKey, v.policyPath(), v.EmitterKeys)
			var goRep verifier.JSONReport
			if err := json.Unmarshal(verifier.Verify(data, opt).JSON(l), &goRep); err != nil {
				t.Fatal(err)
			}
			for _, c := range goRep.Checks {
				if c.Name == verifier.CheckMoves && c.Status != verifier.Skipped {
					moves++
				}
			}
			g, _ := json.MarshalIndent(goRep, "", "  ")
			n, _ := json.MarshalIndent(js.Report, "", "  ")
			if !bytes.Equal(g, n) {
				t.Errorf("%s (%s): the JavaScript package and zarlog-verify disagree:\nGo:   %s\nNode: %s", v.Name, l, g, n)
			}
			compared++
		}
	}
	if moves < 3*14 {
		t.Errorf("only %d vectors had their moves replayed", moves)
	}
	if tlog == 0 {
		t.Error("no tlog-proof among the vectors")
	}
	t.Logf("%d vectors compared (%d tlog-proofs), %d of them with their moves replayed", compared, tlog, moves)
}

// langDirs are the vector manifests, each in every language.
func langDirs() []struct {
	dir  string
	lang verifier.Lang
} {
	var out []struct {
		dir  string
		lang verifier.Lang
	}
	for _, dir := range vectorManifests {
		for _, l := range verifier.Langs() {
			out = append(out, struct {
				dir  string
				lang verifier.Lang
			}{dir, l})
		}
	}
	return out
}

// ed25519Cases are Ed25519 inputs on which implementations are known to
// differ ("Taming the many EdDSAs"): valid signatures, S not reduced (S +
// L), non-canonical encodings of the key and of R, the identity and other
// small-order keys and R.
func ed25519Cases(t *testing.T) []map[string]string {
	t.Helper()
	var out []map[string]string
	add := func(name string, pub, msg, sig []byte) {
		out = append(out, map[string]string{"name": name, "pub": hex.EncodeToString(pub), "msg": hex.EncodeToString(msg), "sig": hex.EncodeToString(sig)})
	}
	L := new(big.Int).SetBytes([]byte{0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x14, 0xde, 0xf9, 0xde, 0xa2, 0xf7, 0x9c, 0xd6, 0x58, 0x12, 0x63, 0x1a, 0x5c, 0xf5, 0xd3, 0xed})
	le := func(b []byte) *big.Int { r := slices.Clone(b); slices.Reverse(r); return new(big.Int).SetBytes(r) }
	toLE := func(x *big.Int) []byte { b := x.FillBytes(make([]byte, 32)); slices.Reverse(b); return b }
	for i := range 3 {
		seed := label32(fmt.Sprintf("ed25519 case %d", i))
		priv := ed25519.NewKeyFromSeed(seed[:])
		pub := priv.Public().(ed25519.PublicKey)
		msg := []byte(fmt.Sprintf("zarlog-event-v1\nmessage %d", i))
		sig := ed25519.Sign(priv, msg)
		add("valid", pub, msg, sig)
		// S + L: the same point, a non-reduced scalar.
		s := new(big.Int).Add(le(sig[32:]), L)
		if s.BitLen() <= 256 {
			add("S+L", pub, msg, append(slices.Clone(sig[:32]), toLE(s)...))
		}
		bad := slices.Clone(sig)
		bad[63] |= 0xe0 // S ≥ 2^253
		add("S high bits", pub, msg, bad)
		add("wrong message", pub, append(msg, '!'), sig)
	}
	// Random bytes: keys that are no point, signatures of nothing.
	for i := range 32 {
		r := label32(fmt.Sprintf("ed25519 random %d", i))
		q := label32(fmt.Sprintf("ed25519 random sig %d", i))
		add("random", r[:], []byte{byte(i)}, append(q[:], r[:]...))
	}
	// Small-order points: the identity (0, 1) and the point of order 2,
	// canonically and non-canonically encoded (y + p).
	identity := append([]byte{1}, make([]byte, 31)...)
	identityNC := []byte{0xee, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f} // y = p + 1
	order2 := []byte{0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f} // y = -1
	zero := make([]byte, 32)
	for _, a := range []struct {
		name string
		pub  []byte
	}{{"identity key", identity}, {"identity key, non-canonical", identityNC}, {"order-2 key", order2}} {
		for _, r := range []struct {
			name string
			r    []byte
		}{{"identity R", identity}, {"identity R, non-canonical", identityNC}, {"order-2 R", order2}} {
			add(a.name+", "+r.name+", S=0", a.pub, []byte("any message"), append(slices.Clone(r.r), zero...))
		}
	}
	return out
}

// TestEd25519Agreement is the differential test of the JavaScript
// package's Ed25519 fallback (@noble/curves, zip215 off) against Go's
// crypto/ed25519, which the ledger and zarlog-verify use: a signature one
// accepts and the other refuses would be a verdict that depends on the
// device. It also reports, without failing, where the platform's own
// WebCrypto (Node's: OpenSSL) differs, since the package uses WebCrypto
// where it has Ed25519.
func TestEd25519Agreement(t *testing.T) {
	node := nodeAvailable(t)
	cases := ed25519Cases(t)
	b, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join(jsPackage, "tools", "ed25519.mjs"), file).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []struct{ Noble, WebCrypto bool }
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(cases) {
		t.Fatalf("node said %s (%v)", out, err)
	}
	for i, c := range cases {
		pub, _ := hex.DecodeString(c["pub"])
		msg, _ := hex.DecodeString(c["msg"])
		sig, _ := hex.DecodeString(c["sig"])
		want := ed25519.Verify(pub, msg, sig)
		if got[i].Noble != want {
			t.Errorf("%s: @noble/curves says %v, crypto/ed25519 %v", c["name"], got[i].Noble, want)
		}
		if got[i].WebCrypto != want {
			t.Logf("%s: Node's WebCrypto says %v, crypto/ed25519 %v", c["name"], got[i].WebCrypto, want)
		}
	}
}

// TestVerifyJSBuilt: the pages' web/verify.js is the JavaScript package
// built by its build.js (esbuild, pinned by the package's lock file), so
// that the pages run the package and not a copy of it.
func TestVerifyJSBuilt(t *testing.T) {
	node := nodeAvailable(t)
	out := filepath.Join(t.TempDir(), "verify.js")
	if b, err := exec.Command(node, filepath.Join(jsPackage, "build.js"), "--out", out).CombinedOutput(); err != nil {
		t.Fatalf("node build.js: %v\n%s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := webFS.ReadFile("web/verify.js")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("web/verify.js is not the build of verifier/js/src: run npm run build in verifier/js")
	}
}

// TestJSBadge: the package's badge() draws the server's Badge, byte for
// byte.
func TestJSBadge(t *testing.T) {
	node := nodeAvailable(t)
	var cs []string
	for i := range 16 {
		c := label32(fmt.Sprintf("badge %d", i))
		cs = append(cs, hex.EncodeToString(c[:]))
	}
	js := `import { badge } from "./src/badge.js"; for (const c of process.argv.slice(1)) console.log(badge(c));`
	cmd := exec.Command(node, append([]string{"--input-type=module", "-e", js}, cs...)...)
	cmd.Dir = jsPackage
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(cs) {
		t.Fatalf("node drew %d badges of %d", len(lines), len(cs))
	}
	for i, c := range cs {
		var b [32]byte
		hex.Decode(b[:], []byte(c))
		if lines[i] != Badge(b) {
			t.Errorf("badge of %s:\nnode %s\ngo   %s", c, lines[i], Badge(b))
		}
	}
}

// TestNodePackage runs the package's own tests (node --test): the BLS
// check on real quicknet beacons and flipped bits, the app API.
func TestNodePackage(t *testing.T) {
	node := nodeAvailable(t)
	cmd := exec.Command(node, "--test", "test/")
	cmd.Dir = jsPackage
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
}

// sixtyRolls are 60-roll games of each scheme (testdata/dice), and a
// 60-move game's proof bundle (testdata/moves).
var sixtyRolls = []struct{ scheme, file string }{
	{"tavlarena-v1", "../testdata/dice/evidence/valid/tavlarena-western-60-rolls.json"},
	{"anchored-v1", "../testdata/dice/evidence/valid/anchored-quicknet-657413-60-rolls.json"},
	{"per-roll-v1", "../testdata/dice/evidence/valid/per-roll-client-60-rolls.json"},
	// A proof bundle of a 60-move backgammon game whose moves are logged:
	// the log checks and the moves replayed through the rules engine.
	{"bundle-60-moves", sixtyMoves},
}

// BenchmarkVerifiers times the three verifiers on a 60-roll game of each
// scheme in the same run: package verifier (Go), the JavaScript package in
// Node and in Chromium (the pages' build, in the offline auditor), each
// reporting ms/verify measured inside its own process after a warm-up;
// and the time from a game page's navigation to its verdict in Chromium
// (the fixture's 86-roll backgammon game, a proof bundle).
func BenchmarkVerifiers(b *testing.B) {
	for _, g := range sixtyRolls {
		data, err := os.ReadFile(g.file)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("go/"+g.scheme, func(b *testing.B) {
			for b.Loop() {
				if r := verifier.Verify(data, verifier.Options{}); r.Exit() != 0 {
					b.Fatal(r.Failed())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/verify")
		})
	}
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("no node")
	}
	for _, g := range sixtyRolls {
		b.Run("node/"+g.scheme, func(b *testing.B) {
			n := max(b.N, 20)
			out, err := exec.Command(node, filepath.Join(jsPackage, "tools", "bench.mjs"), fmt.Sprint(n), g.file).Output()
			if err != nil {
				b.Fatalf("node: %v", err)
			}
			var ms map[string]float64
			if err := json.Unmarshal(out, &ms); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(ms[g.file], "ms/verify")
		})
	}
	if chromiumPath() == "" {
		b.Skip("no Chromium")
	}
	browser := newBrowser(b)
	dir := b.TempDir()
	auditor := filepath.Join(dir, "auditor.html")
	if err := WriteAuditor(auditor, ""); err != nil {
		b.Fatal(err)
	}
	for _, g := range sixtyRolls {
		data, err := os.ReadFile(g.file)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("chromium/"+g.scheme, func(b *testing.B) {
			ctx := tab(b, browser)
			if err := chromedp.Do(ctx, chromedp.Navigate("file://"+auditor), chromedp.WaitReady(chromedp.CSS("#file"))); err != nil {
				b.Fatal(err)
			}
			n := max(b.N, 20)
			js := fmt.Sprintf(`(async () => { const b = Uint8Array.from(atob(%q), c => c.charCodeAt(0));
				await ZarlogVerifier.verify(b, {}); const t0 = performance.now();
				for (let i = 0; i < %d; i++) await ZarlogVerifier.verify(b, {});
				return (performance.now() - t0) / %d; })()`, base64.StdEncoding.EncodeToString(data), n, n)
			ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](js, chromedp.EvalAwaitPromise))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(ms, "ms/verify")
		})
	}
	b.Run("chromium/page-verdict", func(b *testing.B) {
		f := testFixture(b)
		srv := newTestPages(b, f, nil)
		var total float64
		n := max(b.N, 5)
		for range n {
			ctx := tab(b, browser)
			if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/games/"+f.played[0]), chromedp.WaitVisible(chromedp.CSS("#verdict[data-exit]"))); err != nil {
				b.Fatal(err)
			}
			ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`window.zarlogVerdictMs`))
			if err != nil {
				b.Fatal(err)
			}
			total += ms
		}
		b.ReportMetric(total/float64(n), "ms-to-verdict")
	})
}

// TestJSExample runs the package's example page (verifier/js/example) in
// Chromium, the package's modules loaded as they are (an import map for
// @noble), and checks what it computed with the app API on the project's
// vectors: a bundle verified, its seal, every roll of a 60-roll per-roll-v1
// match checked as revealed, a receipt with its inclusion proof.
func TestJSExample(t *testing.T) {
	nodeAvailable(t)
	browser := newBrowser(t)
	srv := httptest.NewServer(http.FileServer(http.Dir("..")))
	defer srv.Close()
	ctx := tab(t, browser)
	var raw []byte
	err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/verifier/js/example/index.html"))
	if err == nil {
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](`window.zarlogExample !== undefined`))
	}
	if err == nil {
		raw, err = chromedp.Run(ctx, chromedp.Evaluate[[]byte](`window.zarlogExample`))
	}
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Exit          int
		Summary, Seal string
		RollsRevealed int
		Rolls         int
		Receipt       bool
		Error         string
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.Error != "" || got.Exit != 0 || got.Summary != verifier.MessageCatalog()["SuPass"].In(verifier.English) || got.Rolls != 60 ||
		got.RollsRevealed != 60 || !got.Receipt || len(got.Seal) != 9 {
		t.Errorf("the example page computed %+v", got)
	}
}

// TestNodeCLI: npx zarlog-verify keeps the Go command's contract: exit 0
// with "Every roll checked" only when every check passed, 1 for an invalid
// proof, 2 for bad input and a bad flag (with a short usage), the locale's
// language without --lang, the same --json as the Go command; and npm
// would publish the package's code, types and readme, nothing else.
func TestNodeCLI(t *testing.T) {
	node := nodeAvailable(t)
	bin := filepath.Join(jsPackage, "bin", "zarlog-verify.js")
	valid := "../testdata/dice/evidence/valid/tavlarena-worked-example.json"
	invalid := ""
	raw, _ := os.ReadFile("../testdata/dice/manifest.json")
	var m struct {
		Vectors []struct {
			Name, File, ExpectedCommitment, LogKey string
			Exit                                   int
		}
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, v := range m.Vectors {
		if v.Exit == 1 && strings.HasPrefix(v.File, "evidence/") && v.ExpectedCommitment == "" && v.LogKey == "" {
			invalid = filepath.Join("../testdata/dice", v.File)
			break
		}
	}
	run := func(env []string, args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(node, append([]string{bin}, args...)...)
		cmd.Env = append(os.Environ(), append([]string{"LC_ALL=", "LC_MESSAGES=", "LANG="}, env...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	if code, out, _ := run(nil, "--lang", "tr", "--expected-commitment", "5cj3 5zcz", valid); code != 0 || !strings.HasSuffix(out, "\nHer atış kontrol edildi\n") {
		t.Errorf("valid, Turkish: exit %d\n%s", code, out)
	}
	if code, out, _ := run([]string{"LANG=ar_EG.UTF-8"}, valid); code != 0 || !strings.HasSuffix(out, "\n"+verifier.MessageCatalog()["SuPass"].In(verifier.Arabic)+"\n") {
		t.Errorf("valid, LANG=ar_EG.UTF-8: exit %d\n%s", code, out)
	}
	if code, out, _ := run(nil, invalid); code != 1 || strings.Contains(out, "Every roll checked") {
		t.Errorf("invalid %s: exit %d\n%s", invalid, code, out)
	}
	// Bad input, word for word the Go command's: both say the words of
	// verifier/cli's table, on stderr, with exit 2 (a file that cannot be
	// read is a report on stdout, exit 2, in both).
	badPolicies := t.TempDir()
	unknownKeyword, noQuorum, undefined := filepath.Join(badPolicies, "unknown"), filepath.Join(badPolicies, "no-quorum"), filepath.Join(badPolicies, "undefined")
	for f, text := range map[string]string{unknownKeyword: "# a policy\nwitnesses 2\nquorum none\n", noQuorum: "# nothing\n", undefined: "group g any w1 w2\nquorum g\n"} {
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	emitterKey := "tavla-east+37db81b0+ASA6TprPQAw7Q3e2/a7k5DovKQFV53DHlDYeArRkdFW9"
	logKey := "log.zarlog.example+58a735df+AabtJ4sEH6aKjQjFidVXKTVU3pwEtYb2uS3y5DAd+GNI" // the log of testdata/dice's tlog-proofs
	for _, l := range []string{"en", "tr"} {
		t.Setenv("LC_ALL", "")
		t.Setenv("LC_MESSAGES", "")
		t.Setenv("LANG", l)
		for _, args := range [][]string{{"--no-such-flag", valid}, {"--lang"}, {"--lang", "xx", valid}, {}, {valid, valid}, {"--json=maybe", valid}, {"nope.json"}, {".."},
			{"--log-key", "not-a-key", valid}, {"--log-key", "log.zarlog.example+58a735df+AAAA", valid}, {"--log-key", "log.zarlog.example+00000000" + logKey[len("log.zarlog.example+58a735df"):], valid},
			{"--log-key"}, {"--emitter-key", "tavla-east+37db81b0", valid}, {"--emitter-key", logKey, valid}, {"--emitter-key", emitterKey, "--emitter-key", " " + emitterKey, valid},
			{"--expected-commitment", "5CJ3-5ZC", valid}, {"--expected-commitment", "", valid}, {"--witness-policy", "", valid},
			{"--witness-policy", "nope.policy", valid}, {"--witness-policy", "..", valid}, {"--witness-policy", unknownKeyword, valid},
			{"--witness-policy", noQuorum, valid}, {"--witness-policy", undefined, valid}, {"--leaf", "nope.json", valid},
			{"--log-key", "not-a-key", "--witness-policy", "nope.policy", valid, valid}} {
			code, out, errs := run([]string{"LANG=" + l}, args...)
			var goOut, goErr bytes.Buffer
			goCode := cli.Run(context.Background(), args, strings.NewReader(""), &goOut, &goErr)
			if code != goCode || out != goOut.String() || errs != goErr.String() || code != 2 {
				t.Errorf("LANG=%s %v: exit %d, stdout %q, stderr %q\nthe Go command: exit %d, stdout %q, stderr %q", l, args, code, out, errs, goCode, goOut.String(), goErr.String())
			}
		}
	}
	// --leaf: a tlog-proof without an extra line, checked with the event
	// given apart, as the Go command checks it; and a --leaf that cannot
	// be read.
	tlogDir := t.TempDir()
	proofFile, leafFile := filepath.Join(tlogDir, "no-extra.tlog-proof"), filepath.Join(tlogDir, "leaf.json")
	withExtra, err := os.ReadFile("../testdata/dice/evidence/valid/tlog-proof-commit.tlog-proof")
	if err != nil {
		t.Fatal(err)
	}
	tp, err := merkle.ParseTlogProof(withExtra)
	if err != nil {
		t.Fatal(err)
	}
	leaf := tp.Extra
	tp.Extra = nil
	noExtra, err := tp.Format()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(proofFile, noExtra, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(leafFile, append(leaf, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--json", "--lang", "en", "--log-key", logKey, "--leaf", leafFile, proofFile},
		{"--json", "--lang", "en", "--log-key", logKey, proofFile},
		{"--json", "--lang", "en", "--log-key", logKey, "--leaf", leafFile, "../testdata/dice/evidence/valid/tlog-proof-roll.tlog-proof"},
	} {
		code, out, errs := run(nil, args...)
		var goOut, goErr bytes.Buffer
		goCode := cli.Run(context.Background(), args, strings.NewReader(""), &goOut, &goErr)
		if code != goCode || out != goOut.String() || errs != goErr.String() {
			t.Errorf("%v: exit %d, stdout %q, stderr %q\nthe Go command: exit %d, stdout %q, stderr %q", args, code, out, errs, goCode, goOut.String(), goErr.String())
		}
	}
	if code, _, _ := run(nil, "--log-key", logKey, "--leaf", leafFile, proofFile); code != 0 {
		t.Errorf("--leaf with a tlog-proof without extra: exit %d, want 0", code)
	}
	if code, out, errs := run(nil, "--leaf", filepath.Join(tlogDir, "nope"), proofFile); code != 2 || out != "" ||
		!strings.HasPrefix(errs, "zarlog-verify: cannot read the --leaf file") {
		t.Errorf("--leaf nope: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// --json, byte for byte the Go command's.
	code, out, _ := run(nil, "--json", "--lang", "tr", valid)
	data, _ := os.ReadFile(valid)
	if want := string(verifier.Verify(data, verifier.Options{}).JSON(verifier.Turkish)); code != 0 || out != want {
		t.Errorf("--json --lang tr: exit %d\n%s\nwant\n%s", code, out, want)
	}

	npm, err := exec.LookPath("npm")
	if err != nil {
		return
	}
	cmd := exec.Command(npm, "pack", "--dry-run", "--json", "--ignore-scripts")
	cmd.Dir = jsPackage
	packed, err := cmd.Output()
	if err != nil {
		t.Fatalf("npm pack --dry-run: %v", err)
	}
	var p []struct{ Files []struct{ Path string } }
	if err := json.Unmarshal(packed, &p); err != nil || len(p) != 1 {
		t.Fatalf("npm pack --dry-run --json: %v: %s", err, packed)
	}
	var files []string
	for _, f := range p[0].Files {
		files = append(files, f.Path)
	}
	for _, want := range []string{"package.json", "README.md", "index.d.ts", "bin/zarlog-verify.js", "src/verify.js", "src/bls.js", "src/ed25519.js", "src/messages.js"} {
		if !slices.Contains(files, want) {
			t.Errorf("the package would not publish %s: %v", want, files)
		}
	}
	bundled := false
	for _, f := range files {
		// node_modules/@noble/: the bundled dependency (bundleDependencies),
		// so that the tarball installs without the registry
		// (TestNodePackages); nothing else of node_modules.
		if strings.HasPrefix(f, "node_modules/@noble/") {
			bundled = true
			continue
		}
		if strings.HasPrefix(f, "test/") || strings.HasPrefix(f, "tools/") || strings.HasPrefix(f, "node_modules/") {
			t.Errorf("the package would publish %s", f)
		}
	}
	if !bundled {
		t.Error("the package would not carry @noble/curves (bundleDependencies)")
	}
}

// vectorOptions returns the options of a vector as zarlog-verify would
// take them from its flags (policy: the policy file's path, or "").
func vectorOptions(t testing.TB, expected, logKey, policy string, emitterKeys []string) verifier.Options {
	t.Helper()
	var opt verifier.Options
	var err error
	if expected != "" {
		if opt.Expected, err = verifier.ParseExpected(expected); err != nil {
			t.Fatal(err)
		}
	}
	if logKey != "" {
		if opt.LogKey, err = verifier.ParseLogKey(logKey); err != nil {
			t.Fatal(err)
		}
	}
	if emitterKeys != nil {
		if opt.EmitterKeys, err = events.NewKeyring(emitterKeys...); err != nil {
			t.Fatal(err)
		}
	}
	if policy != "" {
		text, err := os.ReadFile(policy)
		if err != nil {
			t.Fatal(err)
		}
		if opt.WitnessPolicy, err = verifier.ParseWitnessPolicy(text); err != nil {
			t.Fatal(err)
		}
	}
	return opt
}

// TestNodeExport: npx zarlog-verify checks a player's export (every bundle
// of one player, JSON lines, /players/<emitter>/<id>/export) as the Go
// command does: the same text and --json, byte for byte, in English,
// Turkish and Arabic, and the same exit code, for a whole export, one with
// an invalid game, a cut one and one with a bad header.
func TestNodeExport(t *testing.T) {
	node := nodeAvailable(t)
	bin := filepath.Join(jsPackage, "bin", "zarlog-verify.js")
	dir := t.TempDir()
	seat, _ := dice.ParseUUID("0b2c4a1e-7d3f-4c59-9e21-3f8a6b5c4d2e")
	write := func(name string, games int, files ...string) string {
		b := append(verifier.FormatExportHeader("tavla-east", seat, games), '\n')
		for _, f := range files {
			raw, err := os.ReadFile(filepath.Join("..", "testdata", "dice", "evidence", f))
			if err != nil {
				t.Fatal(err)
			}
			c, err := cjson.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			b = append(append(b, c...), '\n')
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	valid := []string{"valid/bundle-tavlarena-10-rolls.json", "valid/bundle-anchored-8-rolls.json", "valid/bundle-per-roll-4-rolls.json"}
	files := map[string]int{
		write("whole.jsonl", 3, valid...): 0,
		write("invalid.jsonl", 3, valid[0], "invalid/bundle-flipped-proof-hash.json", valid[2]): 1,
		write("cut.jsonl", 3, valid[:2]...):                                                     2,
		write("no-key-policy.jsonl", 1, "valid/bundle-tavlarena-no-keys.json"):                  0,
	}
	badHeader := filepath.Join(dir, "bad-header.jsonl")
	if err := os.WriteFile(badHeader, []byte(`{"emitter":"tavla-east","format":"zarlog-player-export-v1","games":"two","player":"x"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files[badHeader] = 2
	logKey := "log.zarlog.example+58a735df+AabtJ4sEH6aKjQjFidVXKTVU3pwEtYb2uS3y5DAd+GNI"
	compared := 0
	for f, exit := range files {
		for _, lang := range []string{"en", "tr", "ar"} {
			for _, args := range [][]string{{"--lang", lang, "--log-key", logKey, f}, {"--json", "--lang", lang, "--log-key", logKey, f}, {"--lang", lang, f}} {
				cmd := exec.Command(node, append([]string{bin}, args...)...)
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				code := 0
				if err := cmd.Run(); err != nil {
					ee, ok := err.(*exec.ExitError)
					if !ok {
						t.Fatal(err)
					}
					code = ee.ExitCode()
				}
				var goOut, goErr bytes.Buffer
				goCode := cli.Run(context.Background(), args, strings.NewReader(""), &goOut, &goErr)
				if code != goCode || out.String() != goOut.String() || errb.String() != goErr.String() {
					t.Errorf("%v: exit %d, stdout\n%s\nstderr %q\nthe Go command: exit %d, stdout\n%s\nstderr %q", args, code, out.String(), errb.String(), goCode, goOut.String(), goErr.String())
				}
				if len(args) == 5 && args[0] == "--lang" && goCode != exit {
					t.Errorf("%s: exit %d, want %d", filepath.Base(f), goCode, exit)
				}
				compared++
			}
		}
	}
	t.Logf("%d runs of a player's export compared with the Go command", compared)
}
