package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// nkeyUser makes a user nkey, writes its seed to dir/name.nk (mode 0600)
// and returns the file and the public key.
func nkeyUser(t *testing.T, dir, name string) (file, public string) {
	t.Helper()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	public, _ = kp.PublicKey()
	file = filepath.Join(dir, name+".nk")
	if err := os.WriteFile(file, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	return file, public
}

// publicNKey returns the public key of the nkey seed in file.
func publicNKey(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := nkeys.FromSeed([]byte(strings.TrimSpace(string(b))))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := kp.PublicKey()
	return p
}

// TestServeSystemKick: `zarlog serve --nats URL --nats-system-nkey FILE`
// against a nats-server configured as an operator would (the account APP
// with JetStream holds the ledger's and the emitters' nkey users, SYS is
// the system account): an emitter that publishes on while its messages
// are refused is disconnected through the system account, as with the
// embedded server (zarlog_ingest_disconnects_total), and another emitter
// is not. A --nats-system-nkey of a user outside the system account stops
// serve at its start, naming the flag.
func TestServeSystemKick(t *testing.T) {
	bin, _ := tools(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var lines []string
	nkeyFiles := map[string]string{}
	for _, e := range []string{"mallory", "alice"} {
		_, _, line, nk := emitterKey(t, bin, dir, e)
		lines = append(lines, line)
		nkeyFiles[e] = nk
	}
	emitters := filepath.Join(dir, "emitters")
	if err := os.WriteFile(emitters, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ledgerNK, ledgerPub := nkeyUser(t, dir, "ledger")
	sysNK, sysPub := nkeyUser(t, dir, "sys")
	conf := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`listen: "127.0.0.1:-1"
jetstream { store_dir: %q }
accounts {
  APP { jetstream: enabled, users: [{nkey: %s}, {nkey: %s}, {nkey: %s}] }
  SYS { users: [{nkey: %s}] }
}
system_account: SYS
`, filepath.Join(dir, "js"), ledgerPub, publicNKey(t, nkeyFiles["mallory"]), publicNKey(t, nkeyFiles["alice"]), sysPub)), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	opts.NoSigs = true
	ns, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	args := []string{"--emitters", emitters, "--nats", ns.ClientURL(), "--nats-nkey", ledgerNK,
		"--http", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--rate-bytes-per-emitter", "1048576", "--refused-bytes-per-emitter", "1048576"}

	// A user outside the system account: serve stops at its start.
	_, stderr, code := runBin(t, dir, bin, append([]string{"serve", "--data", filepath.Join(dir, "bad"), "--nats-system-nkey", ledgerNK}, args...)...)
	if code == 0 || !strings.Contains(stderr, "--nats-system-nkey") || !strings.Contains(stderr, "system account") {
		t.Fatalf("serve with a --nats-system-nkey outside the system account: exit %d\n%s", code, stderr)
	}
	t.Logf("a --nats-system-nkey outside the system account: %s", strings.TrimSpace(stderr))

	p := startServe(t, bin, append([]string{"--data", filepath.Join(dir, "data"), "--nats-system-nkey", sysNK}, args...)...)
	dial := func(e string) (*nats.Conn, chan struct{}) {
		auth, err := nats.NkeyOptionFromSeed(nkeyFiles[e])
		if err != nil {
			t.Fatal(err)
		}
		gone := make(chan struct{}, 100)
		nc, err := sdk.Dial(ns.ClientURL(), e, auth, nats.DisconnectErrHandler(func(*nats.Conn, error) { gone <- struct{}{} }))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc, gone
	}
	mnc, mgone := dial("mallory")
	anc, agone := dial("alice")
	mjs, err := jetstream.New(mnc)
	if err != nil {
		t.Fatal(err)
	}
	ajs, err := jetstream.New(anc)
	if err != nil {
		t.Fatal(err)
	}
	// mallory sends 1 MB messages again and again, whatever the answer:
	// past its rate (1 MiB a second, a burst of 2), then past its refused
	// bytes (1 MiB a second, a burst of 8).
	big := make([]byte, 1_000_000)
	refusal := ""
	for i := 0; i < 200 && refusal == ""; i++ {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := mjs.Publish(pctx, wire.Subjects{}.Events("mallory"), big)
		cancel()
		if err != nil && strings.Contains(err.Error(), "refused-bytes-per-emitter") {
			refusal = err.Error()
		}
	}
	if refusal == "" {
		t.Fatal("mallory's 200 messages of 1 MB: never refused for ignoring its refusals")
	}
	t.Logf("mallory: %s", refusal)
	select {
	case <-mgone:
	case <-ctx.Done():
		t.Fatalf("mallory was not disconnected\n%s", p.stderr)
	}
	metric := `zarlog_ingest_disconnects_total{emitter="mallory"}`
	var got string
	for ctx.Err() == nil {
		if got = adminMetric(t, p, metric); got != "" && got != "0" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got == "" || got == "0" {
		t.Errorf("%s = %q after mallory was disconnected", metric, got)
	}
	if _, err := ajs.Publish(ctx, wire.Subjects{}.Events("alice"), []byte("a")); err != nil {
		t.Errorf("alice while mallory is in its penalty: %v", err)
	}
	if len(agone) > 0 {
		t.Errorf("alice was disconnected")
	}
	if !strings.Contains(p.stderr.String(), "nats system account") {
		t.Errorf("serve did not log its system account:\n%s", p.stderr)
	}
}

// adminMetric returns the value of one series on serve's admin /metrics
// ("" if absent).
func adminMetric(t *testing.T, p *serveProc, series string) string {
	t.Helper()
	token, err := os.ReadFile(p.lines["admin-token"])
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", p.lines["admin"]+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			return v
		}
	}
	return ""
}
