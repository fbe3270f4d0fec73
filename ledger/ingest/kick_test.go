package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zarlog/zarlog/sdk"
)

// startExternal starts two nats-servers routed to each other, from a
// configuration file as an operator writes one: the account APP (with
// JetStream) holds the ledger's user and the emitters', each with a
// password equal to its name, and SYS is the system account, with the user
// "sys". It returns the servers' client URLs.
func startExternal(t *testing.T, emitters ...string) []string {
	t.Helper()
	ports := freePorts(t, 2)
	var users []string
	for _, u := range append([]string{"ledger"}, emitters...) {
		users = append(users, fmt.Sprintf("{user: %q, password: %q}", u, u))
	}
	var urls []string
	var servers []*server.Server
	for i := range 2 {
		dir := t.TempDir()
		conf := fmt.Sprintf(`server_name: x%d
listen: "127.0.0.1:-1"
jetstream { store_dir: %q }
cluster { name: xc, listen: "127.0.0.1:%d", routes: ["nats://127.0.0.1:%d", "nats://127.0.0.1:%d"] }
accounts {
  APP { jetstream: enabled, users: [%s] }
  SYS { users: [{user: sys, password: sys}] }
}
system_account: SYS
`, i, filepath.Join(dir, "js"), ports[i], ports[0], ports[1], strings.Join(users, ", "))
		path := filepath.Join(dir, "nats.conf")
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		opts, err := server.ProcessConfigFile(path)
		if err != nil {
			t.Fatal(err)
		}
		opts.NoSigs = true
		s, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		t.Cleanup(s.Shutdown)
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatal("nats-server did not start")
		}
		urls = append(urls, s.ClientURL())
		servers = append(servers, s)
	}
	// The route between them: before it, a server's system requests
	// reach only itself, and a client learns of one server.
	deadline := time.Now().Add(20 * time.Second)
	for _, s := range servers {
		for s.NumRoutes() == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("nats-server %s has no route to the other after 20 s", s.Name())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return urls
}

// TestSystemDisconnect: with an external NATS deployment (two servers) and
// a connection of its system account, an emitter that publishes on while
// its messages are refused is disconnected on every server
// (SystemDisconnect: the connections of its user, closed by the system
// account's KICK), as with the embedded server; another emitter is not.
// CheckSystem sees both servers through the system account, and refuses a
// connection of another account.
func TestSystemDisconnect(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster formation takes seconds")
	}
	ctx := testContext(t)
	urls := startExternal(t, "mallory", "alice")
	dial := func(url, user string, opts ...nats.Option) *nats.Conn {
		t.Helper()
		nc, err := sdk.Dial(url, user, append(opts, nats.UserInfo(user, user))...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	sys, err := nats.Connect(urls[1], nats.UserInfo("sys", "sys"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sys.Close)
	if n, err := CheckSystem(ctx, sys); err != nil || n != 2 {
		t.Fatalf("CheckSystem through the system account: %d servers, %v; want 2", n, err)
	}
	ledgerNC := dial(urls[0], "ledger")
	if n, err := CheckSystem(ctx, ledgerNC); err == nil {
		t.Fatalf("CheckSystem through the ledger's account: %d servers and no error", n)
	} else {
		t.Logf("CheckSystem through the ledger's account: %v", err)
	}
	// The stream, once the cluster has a JetStream leader.
	js, err := jetstream.New(ledgerNC)
	if err != nil {
		t.Fatal(err)
	}
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := js.AccountInfo(cctx)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("JetStream: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ensureStream(t, ledgerNC, StreamConfig{})

	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	users := func(emitter string) []string { return []string{emitter} }
	in := newIngester(t, ledgerNC, Config{Sink: newFakeSink(), Now: clock,
		RateMessagesPerEmitter: 1000, RateBytesPerEmitter: 1 << 20, Disconnect: SystemDisconnect(sys, users)})
	startAdmission(t, in)

	// watched connects user to the server at url, and reports its
	// disconnections on the channel.
	watched := func(url, user string) (*nats.Conn, chan struct{}) {
		ch := make(chan struct{}, 100)
		return dial(url, user, nats.DisconnectErrHandler(func(*nats.Conn, error) { ch <- struct{}{} })), ch
	}
	// mallory on both servers; it floods from the first.
	m1, gone1 := watched(urls[0], "mallory")
	_, gone2 := watched(urls[1], "mallory")
	alice, goneAlice := watched(urls[1], "alice")
	mjs, err := jetstream.New(m1)
	if err != nil {
		t.Fatal(err)
	}
	ajs, err := jetstream.New(alice)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 1_000_000)
	refused := ""
	for i := 0; i < 200 && refused == ""; i++ {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := publishRaw(pctx, mjs, "mallory", big)
		cancel()
		if err != nil && strings.Contains(err.Error(), LimitRefusedBytes) {
			refused = err.Error()
		}
	}
	if refused == "" {
		t.Fatal("mallory's 200 messages of 1 MB: never refused for ignoring its refusals")
	}
	t.Logf("mallory: %s", refused)
	for i, gone := range []chan struct{}{gone1, gone2} {
		select {
		case <-gone:
		case <-ctx.Done():
			t.Fatalf("mallory's connection to server %d was not closed", i)
		}
	}
	for testutil.ToFloat64(in.m.disconnects.WithLabelValues("mallory")) < 2 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if n := testutil.ToFloat64(in.m.disconnects.WithLabelValues("mallory")); n < 2 {
		t.Errorf("zarlog_ingest_disconnects_total{mallory} = %v, want 2 (one on each server)", n)
	}
	if n := testutil.ToFloat64(in.m.penalties.WithLabelValues("mallory")); n != 1 {
		t.Errorf("zarlog_ingest_penalties_total{mallory} = %v, want 1", n)
	}
	for i := range 5 {
		if _, err := publishRaw(ctx, ajs, "alice", []byte("a")); err != nil {
			t.Fatalf("alice's message %d while mallory is in its penalty: %v", i, err)
		}
	}
	if len(goneAlice) > 0 {
		t.Errorf("alice was disconnected")
	}
	// An emitter with no connection, or without a user, is an error,
	// not a silent no-op.
	if n, err := SystemDisconnect(sys, users)("nobody"); n != 0 || err == nil || !strings.Contains(err.Error(), "no connection of emitter nobody") {
		t.Errorf("SystemDisconnect of an emitter with no connection: %d, %v", n, err)
	}
	if _, err := SystemDisconnect(sys, func(string) []string { return nil })("bob"); err == nil {
		t.Errorf("SystemDisconnect of an emitter without a user: no error")
	}

	// An emitter with several users (its name and its nkeys), the one
	// connected last, through a system connection that knows of a server
	// that never answers (a URL given and not served: each question waits
	// its whole time for it): every user is asked in its own time, and
	// alice is disconnected. When the users were asked one after another
	// in one time, the last was never asked.
	dead := fmt.Sprintf("nats://127.0.0.1:%d", freePorts(t, 1)[0])
	sys2, err := nats.Connect(urls[1]+","+dead, nats.UserInfo("sys", "sys"), nats.DontRandomize())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sys2.Close)
	if known := len(sys2.Servers()); known < 3 {
		t.Fatalf("the system connection knows of %d servers, want the 2 and the one not served", known)
	}
	several := func(string) []string { return []string{"carol", "dave", "erin", "alice"} }
	if n, err := SystemDisconnect(sys2, several)("alice"); n != 1 {
		t.Errorf("SystemDisconnect of alice, her user last of four: %d connections closed (%v), want 1", n, err)
	}
	select {
	case <-goneAlice:
	case <-ctx.Done():
		t.Fatal("alice's connection was not closed")
	}
}
