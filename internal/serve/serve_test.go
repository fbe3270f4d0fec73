package serve_test

import (
	"github.com/zarlog/zarlog/internal/serve"

	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.yaml.in/yaml/v3"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/verifier"
	"github.com/zarlog/zarlog/wire"
	"github.com/zarlog/zarlog/witness"
)

const emitter = "tavla-east"

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// A running service started by start.
type running struct {
	t    testing.TB
	info serve.Info
	stop func() error
}

// start runs the service in a goroutine and returns once it is ready.
func start(t testing.TB, cfg serve.Config) *running {
	t.Helper()
	if cfg.HTTPAddr == "" {
		cfg.HTTPAddr = "127.0.0.1:0"
	}
	if cfg.NATSListen == "" {
		cfg.NATSListen = "127.0.0.1:0"
	}
	if cfg.AdminAddr == "" {
		cfg.AdminAddr = "127.0.0.1:0"
	}
	if cfg.NATSUsers == nil {
		// The embedded server always authenticates: the test backend's user.
		cfg.NATSUsers = []ingest.EmitterAccess{{Emitter: emitter, Password: testPassword}}
	}
	ready := make(chan serve.Info, 1)
	cfg.Ready = func(i serve.Info) { ready <- i }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve.Run(ctx, cfg) }()
	r := &running{t: t}
	var once sync.Once
	var stopErr error
	r.stop = func() error {
		once.Do(func() { cancel(); stopErr = <-done })
		return stopErr
	}
	t.Cleanup(func() { r.stop() })
	select {
	case r.info = <-ready:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	}
	return r
}

func (r *running) get(path string) (int, []byte) {
	r.t.Helper()
	resp, err := http.Get(r.info.HTTP + path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return resp.StatusCode, b
}

// backend connects an SDK backend for emitter to the service.
// testPassword is the test backend's NATS password (start's default user).
const testPassword = "s3cret"

func backend(t testing.TB, url string, signer note.Signer, now func() time.Time, opts ...nats.Option) (*sdk.Backend, *sdk.Client, *nats.Conn) {
	t.Helper()
	nc, err := sdk.Dial(url, emitter, append([]nats.Option{nats.UserInfo(emitter, testPassword)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	c, err := sdk.New(nc, sdk.Config{Emitter: emitter, AckTimeout: 2 * time.Second, RetryMin: time.Millisecond, RetryMax: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b, err := sdk.NewBackend(c, sdk.GameConfig{Signer: signer, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return b, c, nc
}

// TestRun runs the service with NATS authentication on, plays a game of
// each scheme through the SDK, and checks what it publishes: each game's
// bundle announced on the proofs subject and served at proof.json, both
// verifying with the printed log key and the emitter's key; each event's
// tlog-proof, and the SDK's receipt of the same event, byte for byte the
// same file where its checkpoint is the bundle's; the pages, stats, health
// and metrics; the whole log read with tessera's client. After a clean stop, a one-shot export of the data
// directory serves the same log.
func TestRun(t *testing.T) {
	ctx := testCtx(t)
	signer, vkey, err := testonly.Key(emitter)
	if err != nil {
		t.Fatal(err)
	}
	clock := testlog.NewClock(testlog.AnchoredStart())
	ledgerClock := testlog.NewClock(testlog.AnchoredStart())
	dir, out := t.TempDir(), t.TempDir()
	cfg := serve.Config{Dir: dir, EmitterKeys: []string{vkey}, Now: ledgerClock.Now, CheckpointInterval: 20 * time.Millisecond,
		NATSUsers: []ingest.EmitterAccess{{Emitter: emitter, Password: "s3cret"}}, ExportDir: out}
	r := start(t, cfg)
	if !r.info.KeyCreated || r.info.Origin != serve.DefaultOrigin || !strings.HasPrefix(r.info.VerifierKey, serve.DefaultOrigin+"+") {
		t.Errorf("info: %+v", r.info)
	}
	if fi, err := os.Stat(filepath.Join(dir, "log.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the created key: %v, %v", fi, err)
	}
	b, client, nc := backend(t, r.info.NATS, signer, clock.Now, nats.UserInfo(emitter, "s3cret"))
	proofs := make(chan *nats.Msg, 16)
	sub, err := nc.ChanSubscribe(wire.Subjects{}.Proofs(emitter), proofs)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	var ids []string
	for _, p := range []func() (string, error){
		func() (string, error) {
			return testlog.Tavlarena(ctx, b, "run-t", `{"moves":"logged","variant":"tavla","opening":"turkish-reroll"}`, 0, nil)
		},
		func() (string, error) {
			return testlog.Anchored(ctx, b, clock, "run-a", `{"variant":"portes"}`, 8, nil)
		},
		func() (string, error) { return testlog.PerRoll(ctx, b, "run-p", `{"variant":"fevga"}`, 5, nil) },
	} {
		id, err := p()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}

	logKey, err := verifier.ParseLogKey(r.info.VerifierKey)
	if err != nil {
		t.Fatal(err)
	}
	emitterKeys, err := verifier.ParseEmitterKeys(vkey)
	if err != nil {
		t.Fatal(err)
	}
	v, err := merkle.NewVerifier(r.info.VerifierKey)
	if err != nil {
		t.Fatal(err)
	}
	announced := map[string][]byte{}
	for len(announced) < len(ids) {
		select {
		case m := <-proofs:
			announced[m.Header.Get(wire.HeaderGame)] = m.Data
			if m.Header.Get(wire.HeaderBundleSize) != fmt.Sprint(len(m.Data)) {
				t.Errorf("announced size %s, payload %d bytes", m.Header.Get(wire.HeaderBundleSize), len(m.Data))
			}
		case <-ctx.Done():
			t.Fatalf("bundles announced: %d of %d", len(announced), len(ids))
		}
	}
	for _, id := range ids {
		same := 0 // receipts whose checkpoint is the game's bundle's
		code, bundle := r.get("/games/" + id + "/proof.json")
		if code != 200 || !bytes.Equal(bundle, announced[id]) {
			t.Fatalf("proof.json of %s: %d, equal to the announced: %t", id, code, bytes.Equal(bundle, announced[id]))
		}
		rep := verifier.Verify(bundle, verifier.Options{LogKey: logKey, EmitterKeys: emitterKeys})
		if rep.Exit() != 0 {
			t.Fatalf("bundle of %s: %s", id, rep.Text(verifier.English))
		}
		ev, err := verifier.Parse(bundle)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range ev.Log.Entries {
			code, body := r.get(fmt.Sprintf("/games/%s/proofs/%d.tlog-proof", id, i))
			if code != 200 {
				t.Fatalf("tlog-proof %d of %s: %d", i, id, code)
			}
			p, err := merkle.ParseTlogProof(body)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := merkle.CheckTlogProof(p, merkle.LeafHash(e.Leaf), v); err != nil || !bytes.Equal(p.Extra, e.Leaf) {
				t.Fatalf("tlog-proof %d of %s: %v", i, id, err)
			}
			// The SDK's receipt of the event is the same file where its
			// checkpoint is the bundle's (the last game's: nothing was
			// logged after it), and proves the event anyway.
			rc, err := client.Receipt(ctx, sdk.Event{ID: fmt.Sprintf("%s:%d", id, i), Data: e.Leaf})
			if err != nil {
				t.Fatalf("the receipt of %s:%d: %v", id, i, err)
			}
			if _, err := sdk.CheckReceipt(rc, e.Leaf, v); err != nil {
				t.Fatalf("the receipt of %s:%d: %v", id, i, err)
			}
			if !bytes.Equal(rc.Checkpoint, ev.Log.Checkpoint) {
				continue
			}
			same++
			if got, err := rc.Format(); err != nil || !bytes.Equal(got, body) {
				t.Errorf("the receipt of %s:%d differs from the tlog-proof served:\n%s\n%s", id, i, got, body)
			}
		}
		if id == ids[len(ids)-1] && same < len(ev.Log.Entries) {
			t.Errorf("%d of the last game's %d receipts have the bundle's checkpoint", same, len(ev.Log.Entries))
		}
		if code, page := r.get("/games/" + id); code != 200 || !strings.Contains(string(page), id) {
			t.Errorf("the page of %s: %d", id, code)
		}
	}
	if code, body := r.get("/healthz"); code != 200 || string(body) != "ok\n" {
		t.Errorf("healthz: %d %q", code, body)
	}
	if code, _ := r.get("/stats"); code != 200 {
		t.Errorf("stats: %d", code)
	}
	if code, body := r.get("/metrics"); code != 200 || !strings.Contains(string(body), "zarlog_bundles_stored_total 3") ||
		!strings.Contains(string(body), "zarlog_ingest_outcomes_total") || !strings.Contains(string(body), "go_goroutines") {
		t.Errorf("metrics: %d", code)
	}
	lg, err := testonly.Fetch(ctx, r.info.HTTP+"/", nil, r.info.VerifierKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		ev, _ := verifier.Parse(announced[id])
		for _, e := range ev.Log.Entries {
			if e.Index >= uint64(len(lg.Entries)) || !bytes.Equal(lg.Entries[e.Index], e.Leaf) {
				t.Fatalf("game %s: leaf %d is not in the served log", id, e.Index)
			}
		}
	}
	if err := r.stop(); err != nil {
		t.Fatalf("serve.Run after a clean stop: %v", err)
	}

	// The export kept while serving is a consistent log as far as it got
	// (the service does not wait for it); the one-shot export of the
	// stopped service continues it to the end.
	fsrv := httptest.NewServer(http.FileServer(http.Dir(out)))
	defer fsrv.Close()
	live, err := testonly.Fetch(ctx, fsrv.URL+"/", fsrv.Client(), r.info.VerifierKey)
	if err != nil {
		t.Fatalf("the export kept while serving: %v", err)
	}
	if len(live.Entries) > len(lg.Entries) {
		t.Fatalf("the live export has %d entries, the log had %d when read", len(live.Entries), len(lg.Entries))
	}
	for i, e := range live.Entries {
		if !bytes.Equal(e, lg.Entries[i]) {
			t.Fatalf("entry %d of the live export differs from the log's", i)
		}
	}
	info, res, err := serve.Export(ctx, serve.Config{Dir: dir}, out)
	if err != nil {
		t.Fatal(err)
	}
	if info.VerifierKey != r.info.VerifierKey || res.OldSize != live.Checkpoint.Size || res.Size < uint64(len(lg.Entries)) {
		t.Errorf("export: %+v %+v", info, res)
	}
	if _, err := testonly.Fetch(ctx, fsrv.URL+"/", fsrv.Client(), r.info.VerifierKey, lg.Note, live.Note); err != nil {
		t.Fatalf("the export: %v", err)
	}
	for _, id := range ids {
		b, err := os.ReadFile(filepath.Join(out, "games", id, "proof.json"))
		if err != nil || !bytes.Equal(b, announced[id]) {
			t.Errorf("exported proof.json of %s: %v", id, err)
		}
	}
}

// TestWitnessed runs the service with a witness policy that lists no log
// (the service adds its own line) and a short witness interval: the
// receipts and /checkpoint carry the log's signature alone, at the log's
// pace, while the witnessing loop has the checkpoints cosigned;
// /checkpoint.witnessed serves the latest with the witness's cosignature,
// meeting the policy served at /witness-policy, kept in
// DIR/witnessed/checkpoint. A finished game's bundle is announced again
// once a witnessed checkpoint covers it, and then verifies against the
// policy, at proof.json and in the export too. A policy that lists another
// log's key, or quorum none, is refused.
func TestWitnessed(t *testing.T) {
	ctx := testCtx(t)
	dir, out := t.TempDir(), t.TempDir()
	skey, logVkey, err := merkle.GenerateKey(strings.NewReader(strings.Repeat("k", 64)), "witnessed.example/log")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "log.key"), []byte(skey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wi := startWitness(t, ctx, logVkey)
	wline := fmt.Sprintf("witness w1 %s %s\n", wi.VerifierKey, strings.TrimSuffix(wi.AddCheckpointURL, "/add-checkpoint"))
	_, otherVkey, _ := merkle.GenerateKey(strings.NewReader(strings.Repeat("o", 64)), "witnessed.example/log")
	if _, _, err := serve.PolicyFor([]byte("log "+otherVkey+"\n"+wline+"quorum w1\n"), logVkey); err == nil {
		t.Error("a policy of another log's key was accepted")
	}
	if _, _, err := serve.PolicyFor([]byte(wline+"quorum none\n"), logVkey); err == nil {
		t.Error("a policy with quorum none was accepted")
	}
	signer, vkey, _ := testonly.Key(emitter)
	r := start(t, serve.Config{Dir: dir, EmitterKeys: []string{vkey}, WitnessPolicy: []byte(wline + "quorum w1\n"),
		WitnessInterval: 200 * time.Millisecond, ExportDir: out})
	if r.info.KeyCreated || r.info.VerifierKey != logVkey {
		t.Fatalf("the service did not use the key file: %+v", r.info)
	}
	if !slices.Contains(r.info.Lines(), "witness-policy "+r.info.HTTP+"/witness-policy") {
		t.Errorf("the start lines do not name /witness-policy: %q", r.info.Lines())
	}
	if code, keys := r.get("/emitter-keys"); code != 200 || string(keys) != vkey+"\n" {
		t.Errorf("/emitter-keys: %d %q", code, keys)
	}
	code, served := r.get("/witness-policy")
	if code != 200 || !strings.HasPrefix(string(served), "log "+logVkey+"\n") {
		t.Fatalf("/witness-policy: %d\n%s", code, served)
	}
	p, err := merkle.ParsePolicy(served)
	if err != nil {
		t.Fatal(err)
	}
	b, _, nc := backend(t, r.info.NATS, signer, nil)
	proofs := make(chan *nats.Msg, 16)
	sub, err := nc.ChanSubscribe(wire.Subjects{}.Proofs(emitter), proofs)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	g, err := b.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: [2]dice.UUID{testonly.LabelUUID("w0"), testonly.LabelUUID("w1")}, Settings: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := g.CommitReceipt(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cs, err := merkle.VerifyCosignatures(rc.Checkpoint, p.Witnesses()); err != nil || len(cs) != 0 {
		t.Errorf("the receipt's checkpoint carries cosignatures (%d, %v): witnessing is on the receipt path\n%s", len(cs), err, rc.Checkpoint)
	}
	id, err := testlog.Tavlarena(ctx, b, "witnessed", `{}`, 6, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The game's bundle, announced once it is witnessed.
	lk, err := verifier.ParseLogKey(logVkey)
	if err != nil {
		t.Fatal(err)
	}
	opt := verifier.Options{LogKey: lk, WitnessPolicy: p}
	var witnessed []byte
	for witnessed == nil {
		select {
		case m := <-proofs:
			if m.Header.Get(wire.HeaderGame) == id && verifier.Verify(m.Data, opt).Exit() == 0 {
				witnessed = m.Data
			}
		case <-ctx.Done():
			t.Fatal("no witnessed bundle of the game was announced")
		}
	}
	if code, bundle := r.get("/games/" + id + "/proof.json"); code != 200 || !bytes.Equal(bundle, witnessed) {
		t.Errorf("proof.json is not the witnessed bundle (%d)", code)
	}
	code, wnote := r.get("/checkpoint.witnessed")
	cp, _, err := p.Open(wnote)
	if code != 200 || err != nil {
		t.Fatalf("/checkpoint.witnessed: %d, does not meet the served policy: %v\n%s", code, err, wnote)
	}
	ev, err := verifier.Parse(witnessed)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Log.Tree.Size > cp.Size {
		t.Errorf("the bundle's witnessed checkpoint (size %d) is past /checkpoint.witnessed (%d)", ev.Log.Tree.Size, cp.Size)
	}
	kept, err := os.ReadFile(filepath.Join(dir, "witnessed", "checkpoint"))
	if err != nil || !bytes.Equal(kept, wnote) {
		t.Errorf("DIR/witnessed/checkpoint is not the served one: %v", err)
	}
	code, cpNote := r.get("/checkpoint")
	if code != 200 {
		t.Fatalf("checkpoint: %d", code)
	}
	if cs, _ := merkle.VerifyCosignatures(cpNote, p.Witnesses()); len(cs) != 0 {
		t.Errorf("/checkpoint carries cosignatures:\n%s", cpNote)
	}
	// The export kept while serving gets the witnessed bundle (written
	// again after its first), the policy and a witnessed checkpoint.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(out, "games", id, "proof.json"))
		if err == nil && bytes.Equal(b, witnessed) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exported proof.json is not the witnessed bundle: %v", err)
		}
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "emitter-keys")); err != nil || string(b) != vkey+"\n" {
		t.Errorf("the exported emitter-keys: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "witness-policy")); err != nil || !bytes.Equal(b, served) {
		t.Errorf("the exported witness-policy: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "checkpoint.witnessed")); err != nil {
		t.Errorf("the exported checkpoint.witnessed: %v", err)
	} else if _, _, err := p.Open(b); err != nil {
		t.Errorf("the exported checkpoint.witnessed does not meet the policy: %v", err)
	}
}

// startWitness runs a zarlog witness of the log with key logVkey in the
// test's process and returns what it prints.
func startWitness(t *testing.T, ctx context.Context, logVkey string) witness.Info {
	t.Helper()
	wdir := t.TempDir()
	logs := filepath.Join(wdir, "logs")
	if err := os.WriteFile(logs, []byte("log "+logVkey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	winfo := make(chan witness.Info, 1)
	wctx, wcancel := context.WithCancel(ctx)
	wdone := make(chan error, 1)
	go func() {
		wdone <- witness.Serve(wctx, witness.ServeConfig{Dir: filepath.Join(wdir, "data"), Addr: "127.0.0.1:0", LogsFile: logs,
			Init: true, Name: "witness.example/w1", Ready: func(i witness.Info) { winfo <- i }})
	}()
	t.Cleanup(func() { wcancel(); <-wdone })
	select {
	case wi := <-winfo:
		return wi
	case err := <-wdone:
		t.Fatal(err)
	}
	panic("unreachable")
}

func TestParseNATSUsers(t *testing.T) {
	got, err := serve.ParseNATSUsers([]byte("# backends\n\ntavla-east password s3cret\n  nard-2 nkey UABC \n"))
	want := []ingest.EmitterAccess{{Emitter: "tavla-east", Password: "s3cret"}, {Emitter: "nard-2", NKey: "UABC"}}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{
		"tavla-east password",
		"tavla-east password a b",
		"Tavla password x",
		"tavla-east token x",
		"tavla-east nkey SUABC",
		"a password x\na nkey UX",
	} {
		if _, err := serve.ParseNATSUsers([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestInfoLines(t *testing.T) {
	i := serve.Info{KeyFile: "d/log.key", VerifierKey: "o+1+A", Origin: "o", HTTP: "http://h:1", NATS: "nats://h:2"}
	got := strings.Join(i.Lines(), "\n")
	for _, want := range []string{"key d/log.key\n", "vkey o+1+A\n", "origin o\n", "checkpoint http://h:1/checkpoint\n",
		"tiles http://h:1/tile/\n", "game http://h:1/games/{id}\n", "auditor http://h:1/auditor.html\n",
		"metrics http://h:1/metrics\n", "healthz http://h:1/healthz\n", "\nnats nats://h:2"} {
		if !strings.Contains(got, want) {
			t.Errorf("the lines lack %q:\n%s", want, got)
		}
	}
	i.KeyCreated = true
	if l := i.Lines()[0]; l != "key d/log.key created" {
		t.Errorf("first line %q", l)
	}
}

// FuzzParseNATSUsers: never panics; every user it returns has a valid
// emitter id and exactly one credential.
func FuzzParseNATSUsers(f *testing.F) {
	f.Add("tavla-east password s3cret\nnard nkey UABC\n# x\n")
	f.Add("a b c d")
	f.Fuzz(func(t *testing.T, text string) {
		us, err := serve.ParseNATSUsers([]byte(text))
		if err != nil {
			return
		}
		for _, u := range us {
			if wire.CheckEmitter(u.Emitter) != nil || (u.Password == "") == (u.NKey == "") {
				t.Fatalf("user %+v", u)
			}
		}
	})
}

// TestReadSecretFile: the files that hold secrets (the log key, the admin
// token, the --nats-users file) are refused while group or others may read
// them, with an error naming the file and the mode; the service refuses to
// start on such a log key or admin token.
func TestReadSecretFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "secret")
	if err := os.WriteFile(p, []byte("s3cret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := serve.ReadSecretFile(p); err == nil || !strings.Contains(err.Error(), "readable by others") || !strings.Contains(err.Error(), p) {
		t.Errorf("a 0644 secret: %v", err)
	}
	os.Chmod(p, 0o600)
	if b, err := serve.ReadSecretFile(p); err != nil || string(b) != "s3cret\n" {
		t.Errorf("a 0600 secret: %q, %v", b, err)
	}

	// The service: a world-readable log key, then a world-readable token.
	for _, name := range []string{"log.key", "admin.token"} {
		data := t.TempDir()
		r := start(t, serve.Config{Dir: data})
		r.stop()
		os.Chmod(filepath.Join(data, name), 0o644)
		err := serve.Run(context.Background(), serve.Config{Dir: data, HTTPAddr: "127.0.0.1:0", NATSListen: "127.0.0.1:0", AdminAddr: "127.0.0.1:0"})
		if err == nil || !strings.Contains(err.Error(), "readable by others") {
			t.Errorf("serving with a world-readable %s: %v", name, err)
		}
	}
}

// TestAlertRules: every metric the Prometheus rules of deploy/prometheus
// name is one that zarlog serve exports, and every rule has an alert name,
// an expression and a summary.
func TestAlertRules(t *testing.T) {
	b, err := os.ReadFile("../../deploy/prometheus/zarlog.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Alert       string
				Expr        string
				Annotations map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatalf("the rules file: %v", err)
	}
	// With a witness policy, so that the witnessing's metrics are there.
	dir := t.TempDir()
	skey, logVkey, err := merkle.GenerateKey(strings.NewReader(strings.Repeat("a", 64)), "alerts.example/log")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "log.key"), []byte(skey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wi := startWitness(t, testCtx(t), logVkey)
	policy := fmt.Sprintf("witness w1 %s %s\nquorum w1\n", wi.VerifierKey, strings.TrimSuffix(wi.AddCheckpointURL, "/add-checkpoint"))
	r := start(t, serve.Config{Dir: dir, WitnessPolicy: []byte(policy)})
	r.get("/healthz")
	_, body := r.get("/metrics")
	exported := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# HELP (zarlog_[a-z_]+) `).FindAllStringSubmatch(string(body), -1) {
		exported[m[1]] = true
	}
	n := 0
	for _, g := range rules.Groups {
		for _, rule := range g.Rules {
			n++
			if rule.Alert == "" || rule.Expr == "" || rule.Annotations["summary"] == "" {
				t.Errorf("rule %+v lacks an alert name, an expression or a summary", rule)
			}
			for _, name := range regexp.MustCompile(`zarlog_[a-z_]+`).FindAllString(rule.Expr, -1) {
				if !exported[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")] {
					t.Errorf("rule %s names %s, which zarlog serve does not export", rule.Alert, name)
				}
			}
		}
	}
	if n < 5 {
		t.Errorf("%d rules", n)
	}
}

// TestPlayerPagesPerPlatform makes the attack of issue 27 through the whole
// service, as two game backends would: the platform tavla-east logs games
// of Ayşe (her seat id in seat 0, her name in seatNames); another platform
// with a key to the log, mallory, logs 1,004 short games with Ayşe's id in
// seat 0 and the name "Ayşe cheats - ask support", through NATS, the
// ingest, the ledger and the bundler. Ayşe's page on tavla-east is then
// byte for byte what it was, in every language; mallory's games are on
// mallory's page of the id; the id alone lists both platforms. (-short: 40
// games.)
func TestPlayerPagesPerPlatform(t *testing.T) {
	ctx := testCtx(t)
	n := 1004
	if testing.Short() {
		n = 40
	}
	type platform struct {
		name   string
		signer note.Signer
		vkey   string
		b      *sdk.Backend
		proofs chan *nats.Msg
	}
	platforms := []*platform{{name: emitter}, {name: "mallory"}}
	var users []ingest.EmitterAccess
	var keys []string
	for _, p := range platforms {
		s, vkey, err := testonly.Key(p.name)
		if err != nil {
			t.Fatal(err)
		}
		p.signer, p.vkey = s, vkey
		keys = append(keys, vkey)
		users = append(users, ingest.EmitterAccess{Emitter: p.name, Password: testPassword + "-" + p.name})
	}
	r := start(t, serve.Config{Dir: t.TempDir(), EmitterKeys: keys, NATSUsers: users, CheckpointInterval: 20 * time.Millisecond})
	for _, p := range platforms {
		nc, err := sdk.Dial(r.info.NATS, p.name, nats.UserInfo(p.name, testPassword+"-"+p.name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		p.proofs = make(chan *nats.Msg, n+16)
		sub, err := nc.ChanSubscribe(wire.Subjects{}.Proofs(p.name), p.proofs)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sub.Unsubscribe() })
		c, err := sdk.New(nc, sdk.Config{Emitter: p.name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		if p.b, err = sdk.NewBackend(c, sdk.GameConfig{Signer: p.signer, PublishSeatNames: true}); err != nil {
			t.Fatal(err)
		}
	}
	published := func(p *platform, games int) {
		t.Helper()
		for range games {
			select {
			case <-p.proofs:
			case <-ctx.Done():
				t.Fatalf("%s: not every bundle was published: %v", p.name, ctx.Err())
			}
		}
	}
	ayse, mehmet := testonly.LabelUUID("player/Ayşe"), testonly.LabelUUID("player/Mehmet")
	for i := range 3 {
		if _, err := testlog.TavlarenaSeats(ctx, platforms[0].b, fmt.Sprintf("ayse-%d", i), [2]dice.UUID{ayse, mehmet},
			`{"seatNames":["Ayşe","Mehmet"]}`, 6, nil); err != nil {
			t.Fatal(err)
		}
	}
	published(platforms[0], 3)
	page := "/players/" + emitter + "/" + ayse.String()
	before := map[verifier.Lang][]byte{}
	for _, l := range verifier.Langs() {
		code, body := r.get(page + "?lang=" + string(l))
		if code != http.StatusOK {
			t.Fatalf("%s: %d", page, code)
		}
		before[l] = body
	}
	if !bytes.Contains(before[verifier.English], []byte("<h1>\u2068Ayşe\u2069: the dice of every game</h1>")) {
		t.Fatalf("Ayşe's page:\n%.1500s", before[verifier.English])
	}

	// The attack: mallory's games, eight at a time.
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				_, err := testlog.TavlarenaSeats(ctx, platforms[1].b, fmt.Sprintf("mallory-%d", i), [2]dice.UUID{ayse, testonly.LabelUUID("puppet")},
					`{"seatNames":["Ayşe cheats - ask support","Mehmet"]}`, 1, nil)
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	published(platforms[1], n)

	for _, l := range verifier.Langs() {
		if _, body := r.get(page + "?lang=" + string(l)); !bytes.Equal(body, before[l]) {
			t.Errorf("%s (%s) changed after %d games of another platform with the same player id", page, l, n)
		}
	}
	code, body := r.get("/players/mallory/" + ayse.String())
	want := fmt.Sprintf("%d games logged by the platform \u2066mallory\u2069", min(n, 1000))
	if code != http.StatusOK || !bytes.Contains(body, []byte(want)) {
		t.Errorf("mallory's page of the id: %d, says %q: %v", code, want, bytes.Contains(body, []byte(want)))
	}
	for _, path := range []string{"/players/" + ayse.String(), "/search?q=" + ayse.String()} {
		code, body := r.get(path)
		if code != http.StatusOK || !bytes.Contains(body, []byte(`href="`+page+`?lang=en"`)) || !bytes.Contains(body, []byte(`href="/players/mallory/`+ayse.String()+`?lang=en"`)) {
			t.Errorf("%s: %d, not both platforms:\n%.1500s", path, code, body)
		}
	}
}

// FuzzPolicyFor: never panics; a policy it accepts parses, lists the log's
// key, has a witness and needs a cosignature.
func FuzzPolicyFor(f *testing.F) {
	_, vkey, err := merkle.GenerateKey(strings.NewReader(strings.Repeat("f", 64)), "fuzz.example/log")
	if err != nil {
		f.Fatal(err)
	}
	_, wkey, err := merkle.GenerateCosignerKey(strings.NewReader(strings.Repeat("w", 64)), "fuzz.example/w")
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte("witness w " + wkey + " http://w.example\nquorum w\n"))
	f.Add([]byte("log " + vkey + "\nwitness w " + wkey + "\nquorum none\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		out, p, err := serve.PolicyFor(text, vkey)
		if err != nil {
			return
		}
		q, err := merkle.ParsePolicy(out)
		if err != nil || len(p.Witnesses()) == 0 || len(q.Logs()) == 0 {
			t.Fatalf("accepted %q as %q: %v", text, out, err)
		}
		found := false
		for _, l := range q.Logs() {
			found = found || l.Name() == "fuzz.example/log"
		}
		if !found {
			t.Fatalf("%q does not list the log", out)
		}
	})
}
