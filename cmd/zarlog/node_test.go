package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/wire"
)

// nodeSDK returns node, or skips (fails under CI) when node or the Node
// SDK's and the JavaScript verifier's dependencies are missing.
func nodeSDK(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	for _, f := range []string{"sdk/js/node_modules/@nats-io/jetstream/package.json", "verifier/js/node_modules/@noble/curves/package.json"} {
		if err == nil {
			_, err = os.Stat(filepath.Join(root, f))
		}
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node or the npm packages are missing (.ci/deps installs them): %v", err)
		}
		t.Skipf("node or the npm packages are missing (run .ci/deps): %v", err)
	}
	return node
}

// TestNodeBackend: the Node SDK's example backend (sdk/js/example/
// backend.mjs, run as the README says) plays real games of the three
// schemes against a built `zarlog serve`, every move checked by the rules
// engine; every game it prints gets its proof bundle, which the Go
// zarlog-verify and npx zarlog-verify both accept with the log's key, the
// platform's key and the seal code the backend printed.
func TestNodeBackend(t *testing.T) {
	bin, verify := tools(t)
	node := nodeSDK(t)
	ctx := testContext(t)
	dir := t.TempDir()
	_, evkey, line, nkey := emitterKey(t, bin, dir, "acme")
	emitters := filepath.Join(dir, "emitters")
	if err := os.WriteFile(emitters, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := testlog.AnchoredStart().Format(time.RFC3339Nano)
	p := startServe(t, bin, "--data", filepath.Join(dir, "data"), "--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
		"--emitters", emitters, "--clock-start", start, "--checkpoint-interval", "20ms")
	vkey := p.lines["vkey"]
	proofs := subscribeProofs(t, p.lines["nats"], nkey, "acme")

	const games = 6
	cmd := exec.CommandContext(ctx, node, "example/backend.mjs", "--nats", p.lines["nats"], "--emitter", "acme", "--key", filepath.Join(dir, "acme.key"),
		"--nkey", nkey, "--games", fmt.Sprint(games), "--pages", p.base(), "--log-key", vkey, "--clock-start", start)
	cmd.Dir = filepath.Join(root, "sdk", "js")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node example/backend.mjs: %v\n%s%s", err, out, stderr.String())
	}
	t.Logf("node example/backend.mjs:\n%s", out)
	re := regexp.MustCompile(`(?m)^game (\d+) (\S+) id (\S+) seal (\S+) audit (\S+) \(`)
	found := re.FindAllStringSubmatch(string(out), -1)
	if len(found) != games || !strings.Contains(string(out), fmt.Sprintf("%d of %d games played and logged", games, games)) {
		t.Fatalf("the backend printed %d games:\n%s", len(found), out)
	}
	schemes := map[string]int{}
	for range games {
		select {
		case <-proofs:
		case <-ctx.Done():
			t.Fatal("not every game's bundle was announced")
		}
	}
	for _, f := range found {
		scheme, id, seal, audit := f[2], f[3], f[4], f[5]
		schemes[scheme]++
		if audit != p.base()+"/games/"+id {
			t.Errorf("game %s: audit URL %s", id, audit)
		}
		code, bundle := p.get("/games/" + id + "/proof.json")
		if code != http.StatusOK {
			t.Fatalf("proof.json of %s: %d", id, code)
		}
		file := filepath.Join(dir, id+".json")
		if err := os.WriteFile(file, bundle, 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"--log-key", vkey, "--emitter-key", evkey}
		if seal != "-" {
			args = append(args, "--expected-commitment", seal)
		}
		args = append(args, file)
		for _, c := range [][]string{append([]string{verify}, args...), append([]string{node, filepath.Join(root, "verifier", "js", "bin", "zarlog-verify.js")}, args...)} {
			got, err := exec.Command(c[0], c[1:]...).CombinedOutput()
			if err != nil || !strings.HasSuffix(string(got), "\nEvery roll checked\n") {
				t.Errorf("%s on the %s game %s: %v\n%s", filepath.Base(c[len(c)-len(args)-1]), scheme, id, err, got)
			}
		}
	}
	if len(schemes) != 3 {
		t.Errorf("the backend played the schemes %v, want all three", schemes)
	}
}

// subscribeProofs subscribes, as emitter (its nkey), to the announcements
// of its games' proof bundles.
func subscribeProofs(t *testing.T, url, nkeyFile, emitter string) chan *nats.Msg {
	t.Helper()
	auth, err := nats.NkeyOptionFromSeed(nkeyFile)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url, auth, nats.CustomInboxPrefix(wire.InboxPrefix(emitter)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ch := make(chan *nats.Msg, 1024)
	if _, err := nc.ChanSubscribe(wire.Subjects{}.Proofs(emitter), ch); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestPlayerExport: a player's own export. One player plays 50 games on a
// platform (and another platform logs a game with the same seat id, which
// is not theirs on this one); /players/<emitter>/<id>/export of the built
// `zarlog serve` and of a `zarlog mirror` of it holds the 50 bundles, and
// one command, the Go zarlog-verify or npx zarlog-verify (the same words
// and exit code), checks it whole: 50 verdicts and the summary.
func TestPlayerExport(t *testing.T) {
	bin, verify := tools(t)
	node := nodeSDK(t)
	ctx := testContext(t)
	dir := t.TempDir()
	signer, evkey, line, nkey := emitterKey(t, bin, dir, "tavla-east")
	other, _, otherLine, otherNkey := emitterKey(t, bin, dir, "elsewhere")
	emitters := filepath.Join(dir, "emitters")
	if err := os.WriteFile(emitters, []byte(line+"\n"+otherLine+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, bin, "--data", filepath.Join(dir, "data"), "--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
		"--emitters", emitters, "--checkpoint-interval", "20ms")
	vkey := p.lines["vkey"]
	proofs := subscribeProofs(t, p.lines["nats"], nkey, "tavla-east")
	b, _, _ := sdkBackend(t, p.lines["nats"], signer, time.Now, nkey)
	ob, _, _ := sdkBackend(t, p.lines["nats"], other, time.Now, otherNkey)

	me := testonly.LabelUUID("export/me")
	const games = 50
	for i := range games {
		label := fmt.Sprintf("export-%d", i)
		seats := [2]dice.UUID{me, testonly.LabelUUID(label + "/opponent")}
		if i%2 == 1 {
			seats[0], seats[1] = seats[1], seats[0]
		}
		if _, err := testlog.TavlarenaSeats(ctx, b, label, seats, `{"variant":"portes"}`, 8, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := testlog.TavlarenaSeats(ctx, ob, "export-other", [2]dice.UUID{me, testonly.LabelUUID("x")}, `{}`, 4, nil); err != nil {
		t.Fatal(err)
	}
	for range games {
		select {
		case <-proofs:
		case <-ctx.Done():
			t.Fatal("not every game's bundle was announced")
		}
	}
	path := "/players/tavla-east/" + me.String() + "/export"
	code, export := p.get(path)
	if code != http.StatusOK {
		t.Fatalf("%s: %d", path, code)
	}
	file := filepath.Join(dir, "export.jsonl")
	if err := os.WriteFile(file, export, 0o644); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(export, []byte{'\n'}); n != games+1 {
		t.Fatalf("the export has %d lines, want %d", n, games+1)
	}
	check := func(file string, args ...string) string {
		t.Helper()
		args = append(args, file)
		goOut, err := exec.Command(verify, args...).Output()
		if err != nil {
			t.Fatalf("zarlog-verify %v: %v\n%s", args, err, goOut)
		}
		nodeOut, err := exec.Command(node, append([]string{filepath.Join(root, "verifier", "js", "bin", "zarlog-verify.js")}, args...)...).Output()
		if err != nil || !bytes.Equal(nodeOut, goOut) {
			t.Errorf("npx zarlog-verify %v: %v\n%s\nthe Go command:\n%s", args, err, nodeOut, goOut)
		}
		return string(goOut)
	}
	out := check(file, "--log-key", vkey, "--emitter-key", evkey)
	if n := strings.Count(out, ": Every roll checked\n"); n != games {
		t.Errorf("%d of %d games say every roll checked:\n%s", n, games, out)
	}
	want := fmt.Sprintf("Games of player %s on \"tavla-east\": %d; every roll checked in %d, invalid: 0, not checked: 0\n", me, games, games)
	if !strings.HasSuffix(out, want) {
		t.Errorf("the summary:\n%s\nwant the end %q", out, want)
	}
	check(file, "--json", "--lang", "tr", "--log-key", vkey)
	// The other platform's export of the same seat id holds its one game only.
	if code, b := p.get("/players/elsewhere/" + me.String() + "/export"); code != http.StatusOK || bytes.Count(b, []byte{'\n'}) != 2 {
		t.Errorf("the other platform's export: %d, %d lines", code, bytes.Count(b, []byte{'\n'}))
	}
	if code, _ := p.get("/players/tavla-east/" + testonly.LabelUUID("nobody").String() + "/export"); code != http.StatusNotFound {
		t.Errorf("the export of a player with no game: %d", code)
	}

	// A mirror serves the export too, of its own bundles.
	m := start(t, bin, "healthz", "mirror", "--from", p.base(), "--log-key", vkey, "--data", filepath.Join(dir, "mirror"), "--http", "127.0.0.1:0", "--poll", "20ms")
	mbase := strings.TrimSuffix(m.lines["checkpoint"], "/checkpoint")
	if m.lines["export"] != mbase+"/players/{emitter}/{id}/export" {
		t.Errorf("the mirror printed export %q", m.lines["export"])
	}
	mfile := filepath.Join(dir, "mirror-export.jsonl")
	for {
		resp, err := http.Get(mbase + path)
		if err == nil {
			b := new(bytes.Buffer)
			b.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && bytes.Count(b.Bytes(), []byte{'\n'}) == games+1 {
				if err := os.WriteFile(mfile, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("the mirror never served the player's 50 games")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if mout := check(mfile, "--log-key", vkey, "--emitter-key", evkey); !strings.HasSuffix(mout, want) {
		t.Errorf("the mirror's export:\n%s", mout)
	}
}

// TestNodePackages: the two npm packages as a platform installs them. `node
// sdk/js/tools/pack.mjs` packs zarlog-verify and zarlog-emitter; both
// tarballs install into an empty folder with npm install --offline and an
// unreachable registry (each carries its dependencies); an older Node gets
// one line naming Node.js 20 from each; the installed example backend plays
// games against a built `zarlog serve`, and the installed npx
// zarlog-verify accepts each game's bundle.
func TestNodePackages(t *testing.T) {
	bin, _ := tools(t)
	node := nodeSDK(t)
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("no npm")
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("no npx")
	}
	ctx := testContext(t)
	out, empty := t.TempDir(), t.TempDir()
	packed, err := exec.CommandContext(ctx, node, filepath.Join(root, "sdk", "js", "tools", "pack.mjs"), out).Output()
	if err != nil {
		t.Fatalf("tools/pack.mjs: %v", err)
	}
	tarballs := strings.Fields(string(packed))
	if len(tarballs) != 2 {
		t.Fatalf("tools/pack.mjs printed %q", packed)
	}
	for _, tgz := range tarballs {
		st, err := os.Stat(tgz)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes", filepath.Base(tgz), st.Size())
	}
	// No network: npm may not ask any registry (--offline), and the one it
	// is given does not answer.
	offline := append(os.Environ(), "npm_config_registry=http://127.0.0.1:9/", "npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false")
	install := exec.CommandContext(ctx, npm, append([]string{"install", "--offline", "--ignore-scripts"}, tarballs...)...)
	install.Dir, install.Env = empty, offline
	if b, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install --offline of the two tarballs: %v\n%s", err, b)
	}

	// An older Node: one line, naming Node.js 20.
	fake := filepath.Join(out, "node18.mjs")
	if err := os.WriteFile(fake, []byte(`Object.defineProperty(process.versions, "node", { value: "18.19.0" });
Object.defineProperty(process, "version", { value: "v18.19.0" });
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--import", fake, filepath.Join("node_modules", "zarlog-verify", "bin", "zarlog-verify.js"), "x.json"},
		{"--import", fake, "--input-type=module", "-e", `import "zarlog-emitter";`}} {
		cmd := exec.CommandContext(ctx, node, args...)
		cmd.Dir = empty
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		msg := stderr.String()
		if err == nil || !strings.Contains(msg, "Node.js 20 or later") || !strings.Contains(msg, "v18.19.0") {
			t.Errorf("node %v on Node 18: %v\n%s", args, err, msg)
		}
		if args[2] != "--input-type=module" && strings.Count(strings.TrimSpace(msg), "\n") != 0 {
			t.Errorf("zarlog-verify on Node 18 says more than one line:\n%s", msg)
		}
	}

	dir := t.TempDir()
	_, evkey, line, nkey := emitterKey(t, bin, dir, "acme")
	emitters := filepath.Join(dir, "emitters")
	if err := os.WriteFile(emitters, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, bin, "--data", filepath.Join(dir, "data"), "--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
		"--emitters", emitters, "--checkpoint-interval", "20ms")
	vkey := p.lines["vkey"]
	proofs := subscribeProofs(t, p.lines["nats"], nkey, "acme")
	play := exec.CommandContext(ctx, node, filepath.Join("node_modules", "zarlog-emitter", "example", "backend.mjs"), "--nats", p.lines["nats"], "--emitter", "acme",
		"--key", filepath.Join(dir, "acme.key"), "--nkey", nkey, "--games", "2", "--pages", p.base(), "--log-key", vkey)
	play.Dir = empty
	played, err := play.Output()
	if err != nil {
		t.Fatalf("the installed example backend: %v\n%s", err, played)
	}
	found := regexp.MustCompile(`(?m)^game \d+ (\S+) id (\S+) `).FindAllStringSubmatch(string(played), -1)
	if len(found) != 2 {
		t.Fatalf("the installed example backend played:\n%s", played)
	}
	for range found {
		select {
		case <-proofs:
		case <-ctx.Done():
			t.Fatal("not every game's bundle was announced")
		}
	}
	for _, f := range found {
		code, bundle := p.get("/games/" + f[2] + "/proof.json")
		if code != http.StatusOK {
			t.Fatalf("proof.json of %s: %d", f[2], code)
		}
		file := filepath.Join(empty, f[2]+".json")
		if err := os.WriteFile(file, bundle, 0o644); err != nil {
			t.Fatal(err)
		}
		check := exec.CommandContext(ctx, npx, "--offline", "zarlog-verify", "--log-key", vkey, "--emitter-key", evkey, file)
		check.Dir, check.Env = empty, offline
		got, err := check.CombinedOutput()
		if err != nil || !strings.HasSuffix(string(got), "\nEvery roll checked\n") {
			t.Errorf("the installed npx zarlog-verify on the %s game: %v\n%s", f[1], err, got)
		}
	}
}
