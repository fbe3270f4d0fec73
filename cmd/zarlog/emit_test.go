package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/verifier"
)

// emitStack is an embedded nats-server with an ingest into the ledger.
type emitStack struct {
	url    string
	ledger *testlog.Ledger
	signer interface {
		Name() string
		Sign([]byte) ([]byte, error)
	}
}

func newEmitStack(t *testing.T) *emitStack { return newEmitStackAuth(t, "") }

// newEmitStackAuth starts the stack; with a password, the server lets in
// only the emitter tavla-east (with it) with the permissions of
// docs/NATS.md §7.
func newEmitStackAuth(t *testing.T, password string) *emitStack {
	t.Helper()
	signer, vkey, err := testonly.Key("tavla-east")
	if err != nil {
		t.Fatal(err)
	}
	ledger := testlog.OpenLedger(t, testlog.LedgerConfig{EmitterKeys: []string{vkey}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := ingest.ServerConfig{StoreDir: t.TempDir(), Port: -1, InsecureNoAuth: password == ""}
	if password != "" {
		cfg.Emitters = []ingest.EmitterAccess{{Emitter: "tavla-east", Password: password}}
	}
	srv, err := ingest.StartServer(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	in, err := ingest.New(nc, ledger.Ingest(ingest.Config{InfoInterval: -1, RetryMin: time.Millisecond, RetryMax: 50 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	ictx, icancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- in.Run(ictx) }()
	var once sync.Once
	t.Cleanup(func() {
		once.Do(func() {
			icancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("ingest: %v", err)
			}
		})
	})
	return &emitStack{url: srv.ClientURL(), ledger: ledger, signer: signer}
}

// gameLines returns the leaves of a finished move-logged game, one per line.
func (s *emitStack) gameLines(t *testing.T, label string) [][]byte {
	t.Helper()
	c := testonly.Config{Scheme: events.Tavlarena, Variant: rules.Portes, Label: label, MaxRolls: 12}
	p, err := testonly.Play(c)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := testonly.Events(c, p.Bodies, s.signer)
	if err != nil {
		t.Fatal(err)
	}
	lines := make([][]byte, len(evs))
	for i, ev := range evs {
		if lines[i], err = events.Format(ev); err != nil {
			t.Fatal(err)
		}
	}
	return lines
}

func writeLines(t *testing.T, lines [][]byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "events.jsonl")
	if err := os.WriteFile(f, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func runEmitTest(t *testing.T, stdin string, args ...string) (int, []string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	code := emit(ctx, args, strings.NewReader(stdin), &out, &errOut)
	text := strings.TrimSuffix(out.String(), "\n")
	var lines []string
	if text != "" {
		lines = strings.Split(text, "\n")
	}
	return code, lines, errOut.String()
}

// TestEmit publishes a whole game with zarlog emit, waits for the receipts,
// publishes it again (duplicates: same indices) with the log's key and
// --receipts, and checks the game in the ledger and every receipt file
// with the verifier: each is a tlog-proof of its own line.
func TestEmit(t *testing.T) {
	s := newEmitStack(t)
	lines := s.gameLines(t, "emit")
	file := writeLines(t, lines)
	code, out, stderr := runEmitTest(t, "", "--nats", s.url, "--emitter", "tavla-east", "--wait", file)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, strings.Join(out, "\n"), stderr)
	}
	if len(out) != len(lines) {
		t.Fatalf("%d output lines for %d events:\n%s", len(out), len(lines), strings.Join(out, "\n"))
	}
	logged := regexp.MustCompile(`^line (\d+): (\S+): logged at index (\d+) \(checkpoint test\.zarlog\.example/log, tree size (\d+); inclusion proof checked, log signature not checked: no --log-key\)$`)
	indices := map[string]string{}
	for i, l := range out {
		m := logged.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("output line %q", l)
		}
		ev, _ := events.Parse(lines[i])
		if m[1] != fmt.Sprint(i+1) || m[2] != ev.ID {
			t.Errorf("output line %d is %q, for %s", i, l, ev.ID)
		}
		indices[m[2]] = m[3]
	}
	g := s.ledger.Game(testonly.Config{Scheme: events.Tavlarena, Label: "emit"}.GameID())
	if g == nil || !g.Closed || g.Status != events.StatusVerified || len(g.Leaves) != len(lines) {
		t.Fatalf("ledger game: %+v", g)
	}

	// Again, from standard input, as JSON: every event a duplicate with its
	// index.
	dir := t.TempDir()
	code, out, stderr = runEmitTest(t, string(bytes.Join(lines, []byte("\n"))), "--nats", s.url, "--emitter", "tavla-east", "--wait", "--json",
		"--log-key", s.ledger.VerifierKey(), "--receipts", dir, "-")
	if code != 0 {
		t.Fatalf("again: exit %d\n%s", code, stderr)
	}
	logKey, err := merkle.NewVerifier(s.ledger.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range out {
		var j jsonResult
		if err := json.Unmarshal([]byte(l), &j); err != nil {
			t.Fatal(err)
		}
		if j.Status != "logged" || j.Index == nil || fmt.Sprint(*j.Index) != indices[j.ID] || !strings.HasPrefix(j.Checkpoint, "test.zarlog.example/log\n") ||
			j.SignatureChecked == nil || !*j.SignatureChecked {
			t.Errorf("again: %s (first index %s)", l, indices[j.ID])
		}
		file, err := os.ReadFile(filepath.Join(dir, j.ID+".tlog-proof"))
		if err != nil || string(file) != j.Receipt {
			t.Fatalf("the receipt file of %s: %v", j.ID, err)
		}
		r, err := sdk.ParseReceipt(file)
		if err != nil || r.EventID != j.ID {
			t.Fatalf("the receipt file of %s: %+v, %v", j.ID, r.EventID, err)
		}
		if _, err := sdk.CheckReceipt(r, lines[i], logKey); err != nil {
			t.Errorf("the receipt of %s does not prove its line: %v", j.ID, err)
		}
		rep := verifier.VerifyTlogProof(file, verifier.Options{LogKey: logKey, Leaf: lines[i]})
		if rep.Exit() != 0 {
			t.Errorf("zarlog-verify's check of the receipt of %s: %+v", j.ID, rep.Checks)
		}
	}
	if n := s.ledger.Len(); n != len(lines) {
		t.Errorf("the ledger has %d leaves after publishing %d events twice", n, len(lines))
	}
}

// TestEmitFailures: lines that are not events are not published (their line
// numbers are printed and the exit code is 1); with --no-check they reach
// the ledger, whose rejection --wait prints; the good lines go through. An
// event published before its predecessor is refused out-of-order, and the
// SDK, holding its predecessor, publishes it again once that is logged.
func TestEmitFailures(t *testing.T) {
	s := newEmitStack(t)
	lines := s.gameLines(t, "fail")
	other, _, err := testonly.Key("other")
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := events.NewSigned(events.Header{Scheme: events.PerRoll, Game: testonly.LabelUUID("f").String(), Emitter: "other", Time: time.Unix(0, 0)},
		events.PerRollCommit{Settings: []byte(`{}`)}, other)
	if err != nil {
		t.Fatal(err)
	}
	foreignLine, _ := events.Format(foreign)
	input := [][]byte{
		lines[0],
		[]byte(`{"v": 1}`), // line 2: not canonical
		foreignLine,        // line 3: another emitter's
		{},                 // line 4: empty, skipped
		lines[2],           // line 5: out of order (seq 2 before seq 1): sent again after it
		lines[1],           // line 6
		[]byte("not json"), // line 7
		bytes.Repeat([]byte("x"), events.MaxEventSize+10), // line 8
	}
	file := writeLines(t, input)
	code, out, stderr := runEmitTest(t, "", "--nats", s.url, "--emitter", "tavla-east", "--wait", file)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	want := []string{
		`^line 1: \S+:0: logged at index 0 `,
		`^line 2: -: not published: not-canonical: `,
		`^line 3: \S+:0: not published: line is not a publishable event: the event is emitter "other"'s, publishing as "tavla-east"$`,
		`^line 5: \S+:2: logged at index 2 `,
		`^line 6: \S+:1: logged at index 1 `,
		`^line 7: -: not published: malformed: `,
		`^line 8: -: not published: line is not a publishable event: longer than 65535 bytes$`,
	}
	if len(out) != len(want) {
		t.Fatalf("output:\n%s", strings.Join(out, "\n"))
	}
	for i, w := range want {
		if !regexp.MustCompile(w).MatchString(out[i]) {
			t.Errorf("output line %q does not match %q", out[i], w)
		}
	}
	if !strings.Contains(stderr, "4 lines failed (lines 2, 3, 7, 8)") {
		t.Errorf("stderr: %s", stderr)
	}

	// --no-check sends the bad lines to the ledger, which rejects them.
	file = writeLines(t, [][]byte{[]byte(`{"id":"x:1","game":"x","v":2}`), lines[3]})
	code, out, _ = runEmitTest(t, "", "--nats", s.url, "--emitter", "tavla-east", "--wait", "--no-check", file)
	if code != 1 || len(out) != 2 || !strings.HasPrefix(out[0], "line 1: x:1: rejected: not-canonical: ") ||
		!regexp.MustCompile(`^line 2: \S+:3: logged at index 3 `).MatchString(out[1]) {
		t.Errorf("--no-check: exit %d\n%s", code, strings.Join(out, "\n"))
	}

	// Without --wait only the JetStream ack is printed.
	file = writeLines(t, [][]byte{lines[4]})
	code, out, _ = runEmitTest(t, "", "--nats", s.url, "--emitter", "tavla-east", file)
	if code != 0 || len(out) != 1 || !regexp.MustCompile(`^line 1: \S+:4: acknowledged \(stream ZARLOG_EVENTS, seq \d+\)$`).MatchString(out[0]) {
		t.Errorf("without --wait: exit %d %q", code, out)
	}
}

// TestEmitUsage: bad flags exit 2.
func TestEmitUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--emitter", "Bad Name"},
		{"--emitter", "e", "a", "b"},
		{"--emitter", "e", "--creds", "x", "--nkey", "y"},
		{"--emitter", "e", "--timeout", "0s"},
		{"--emitter", "e", "/does/not/exist"},
		{"--bogus"},
	} {
		if code, _, _ := runEmitTest(t, "", args...); code != 2 {
			t.Errorf("zarlog emit %q: exit %d, want 2", args, code)
		}
	}
	if code, _, _ := runEmitTest(t, "", "-h"); code != 0 {
		t.Errorf("-h: exit %d", code)
	}
	// No server: exit 1.
	if code, _, stderr := runEmitTest(t, "", "--nats", "nats://127.0.0.1:1", "--emitter", "e"); code != 1 {
		t.Errorf("no server: exit %d %s", code, stderr)
	}
}

// TestEmitAuth: zarlog emit works under the emitter permissions of
// docs/NATS.md §7 (its replies come on _INBOX.<emitter>).
func TestEmitAuth(t *testing.T) {
	s := newEmitStackAuth(t, "s3cret")
	lines := s.gameLines(t, "auth")
	url := strings.Replace(s.url, "nats://", "nats://tavla-east:s3cret@", 1)
	code, out, stderr := runEmitTest(t, "", "--nats", url, "--emitter", "tavla-east", "--wait", writeLines(t, lines[:2]))
	if code != 0 || len(out) != 2 {
		t.Fatalf("exit %d\n%s\n%s", code, strings.Join(out, "\n"), stderr)
	}
}

// TestNatsCLI publishes a valid event with the plain nats CLI (natscli,
// v0.5.0), as docs/NATS.md shows, as an emitter with the permissions of
// docs/NATS.md §7, and checks that the ledger logs it. It needs the `nats`
// binary in PATH and skips without it.
func TestNatsCLI(t *testing.T) {
	bin, err := exec.LookPath("nats")
	if err != nil {
		t.Skip("no nats CLI in PATH")
	}
	s := newEmitStackAuth(t, "s3cret")
	lines := s.gameLines(t, "cli")
	ev, _ := events.Parse(lines[0])
	out, err := exec.Command(bin, "--server", s.url, "--user", "tavla-east", "--password", "s3cret", "--inbox-prefix", "_INBOX.tavla-east",
		"pub", "--jetstream", "--no-templates", "zarlog.events.tavla-east",
		"--header", "Nats-Msg-Id:"+ev.ID, string(lines[0])).CombinedOutput()
	if err != nil {
		t.Fatalf("nats pub: %v\n%s", err, out)
	}
	t.Logf("nats pub: %s", out)
	if !strings.Contains(string(out), "Stored in Stream: ZARLOG_EVENTS") {
		t.Errorf("nats pub output: %s", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.ledger.WaitGame(ctx, ev.Game, func(*events.Game) bool { return true }); err != nil {
		t.Fatalf("the event did not reach the ledger: %v (rejections %v)", err, s.ledger.Rejected())
	}
}

// TestEmitKey: with --key, zarlog emit signs the binding events of lines
// that carry no sig (events made elsewhere, unsigned) and the game is logged
// whole; without it those lines are refused before publishing; a key of
// another emitter, or readable by others, is refused.
func TestEmitKey(t *testing.T) {
	s := newEmitStack(t)
	var unsigned [][]byte
	stripped := 0
	for _, l := range s.gameLines(t, "emit-key") {
		v, err := cjson.Decode(l)
		if err != nil {
			t.Fatal(err)
		}
		var kept cjson.Object
		for _, m := range v.(cjson.Object) {
			if m.Key == "sig" {
				stripped++
				continue
			}
			kept = append(kept, m)
		}
		b, err := cjson.Marshal(kept)
		if err != nil {
			t.Fatal(err)
		}
		unsigned = append(unsigned, b)
	}
	if stripped == 0 {
		t.Fatal("the game has no binding event")
	}
	file := writeLines(t, unsigned)
	seed := testonly.Label32("key/tavla-east")
	_, vkey, _ := testonly.Key("tavla-east")
	skey := fmt.Sprintf("PRIVATE+KEY+tavla-east+%s+%s\n", strings.Split(vkey, "+")[1], base64.StdEncoding.EncodeToString(append([]byte{1}, seed[:]...)))
	keyFile := filepath.Join(t.TempDir(), "tavla-east.key")
	if err := os.WriteFile(keyFile, []byte(skey), 0o600); err != nil {
		t.Fatal(err)
	}

	if code, out, _ := runEmitTest(t, "", "--nats", s.url, "--emitter", "tavla-east", file); code != 1 || !strings.Contains(strings.Join(out, "\n"), "not published: malformed") {
		t.Errorf("unsigned lines without --key: exit %d\n%s", code, strings.Join(out, "\n"))
	}
	code, out, stderr := runEmitTest(t, "", "--nats", s.url, "--emitter", "tavla-east", "--key", keyFile, "--wait", file)
	if code != 0 || len(out) != len(unsigned) {
		t.Fatalf("--key: exit %d\n%s\n%s", code, strings.Join(out, "\n"), stderr)
	}
	for _, l := range out {
		if !strings.Contains(l, "logged at index") {
			t.Errorf("--key: %s", l)
		}
	}

	other := filepath.Join(t.TempDir(), "other.key")
	os.WriteFile(other, []byte(strings.Replace(skey, "tavla-east", "nard-west", 1)), 0o600)
	if code, _, stderr := runEmitTest(t, "", "--nats", s.url, "--emitter", "tavla-east", "--key", other, file); code != 1 || !strings.Contains(stderr, "event key") {
		t.Errorf("another emitter's key: exit %d %s", code, stderr)
	}
	os.Chmod(keyFile, 0o644)
	if code, _, stderr := runEmitTest(t, "", "--nats", s.url, "--emitter", "tavla-east", "--key", keyFile, file); code != 1 || !strings.Contains(stderr, "readable by others") {
		t.Errorf("a world-readable key: exit %d %s", code, stderr)
	}
}

// TestEmitResendAfterRejection: an event refused because its game had no
// commit yet, sent again under the same id once the commit is logged, is
// judged anew and logged (not answered with the old refusal, and not
// dropped by JetStream as a repeat: the SDK sets no Nats-Msg-Id).
func TestEmitResendAfterRejection(t *testing.T) {
	s := newEmitStack(t)
	lines := s.gameLines(t, "resend")
	code, out, _ := runEmitTest(t, "", "--nats", s.url, "--emitter", "tavla-east", "--wait", writeLines(t, [][]byte{lines[1]}))
	if code != 1 || len(out) != 1 || !strings.Contains(out[0], "rejected: unknown-game") {
		t.Fatalf("the contribution before the commit: exit %d %q", code, out)
	}
	code, out, _ = runEmitTest(t, "", "--nats", s.url, "--emitter", "tavla-east", "--wait", writeLines(t, [][]byte{lines[0], lines[1]}))
	if code != 0 || len(out) != 2 || !strings.Contains(out[1], ":1: logged at index 1 ") {
		t.Errorf("the commit, then the same contribution again: exit %d\n%s", code, strings.Join(out, "\n"))
	}
}
