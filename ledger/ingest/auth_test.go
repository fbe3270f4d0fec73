package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// TestPermissions checks the permissions docs/NATS.md prescribes, as the
// embedded server applies them: an emitter publishes its own events, gets
// its receipts and rejections, and can neither publish as another emitter
// nor read other subjects; unknown clients cannot connect.
func TestPermissions(t *testing.T) {
	ctx := testContext(t)
	beta, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	betaPub, err := beta.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, ServerConfig{Emitters: []EmitterAccess{
		{Emitter: "alpha", Password: "alpha-secret"},
		{Emitter: "beta", NKey: betaPub},
	}})
	sink := newFakeSink()
	sink.publishCheckpoint(1 << 40)
	in := newIngester(t, connect(t, s), Config{Sink: sink, Locator: sink, Checkpoints: sink})
	acks := watchAcks(in) // the ledger's user may acknowledge
	runIngest(t, in)

	asyncErrs := make(chan error, 10)
	alphaNC, err := sdk.Dial(s.ClientURL(), "alpha", nats.UserInfo("alpha", "alpha-secret"),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { asyncErrs <- err }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(alphaNC.Close)
	alpha := newClient(t, alphaNC, sdk.Config{Emitter: "alpha"})
	rejections := make(chan wire.Rejection, 1)
	if _, err := alpha.Rejections(func(r wire.Rejection) { rejections <- r }); err != nil {
		t.Fatal(err)
	}
	id, data := makeEvent("alpha", "g", 0)
	if _, err := alpha.Publish(ctx, sdk.Event{ID: id, Data: data}); err != nil {
		t.Fatal(err)
	}
	if r, err := alpha.Receipt(ctx, sdk.Event{ID: id, Data: data}); err != nil || r.Index != 0 {
		t.Fatalf("receipt %+v, %v", r, err)
	}
	bad := []byte(`{"bad":true,"emitter":"alpha","game":"g","id":"g:1","seq":1}`)
	if _, err := alpha.Publish(ctx, sdk.Event{ID: "g:1", Data: bad}); err != nil {
		t.Fatal(err)
	}
	if r := <-rejections; r.ID != "g:1" || r.Code != "bad-event" {
		t.Errorf("rejection %+v", r)
	}

	// alpha may not publish beta's events, nor read anything else.
	for _, tc := range []struct {
		name string
		do   func() error
	}{
		{"publish as beta", func() error { return alphaNC.Publish(wire.Subjects{}.Events("beta"), data) }},
		{"publish into the stream past the admission", func() error { return alphaNC.Publish(wire.Subjects{}.Admitted("alpha"), data) }},
		{"read the admission's acks", func() error { _, err := alphaNC.SubscribeSync("_INBOX.ZARLOG_ADMISSION.>"); return err }},
		{"ask beta's receipts", func() error { return alphaNC.Publish(wire.Subjects{}.Receipts("beta"), nil) }},
		{"read all events", func() error { _, err := alphaNC.SubscribeSync("zarlog.events.>"); return err }},
		{"read beta's rejections", func() error { _, err := alphaNC.SubscribeSync(wire.Subjects{}.Rejected("beta")); return err }},
		{"read the default inbox", func() error { _, err := alphaNC.SubscribeSync("_INBOX.>"); return err }},
		{"use the JetStream API", func() error { return alphaNC.Publish("$JS.API.STREAM.DELETE.ZARLOG_EVENTS", nil) }},
	} {
		if err := tc.do(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err := alphaNC.Flush(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-asyncErrs:
			if !errors.Is(err, nats.ErrPermissionViolation) {
				t.Errorf("%s: %v, want a permission violation", tc.name, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s: allowed", tc.name)
		}
	}

	// beta authenticates with its nkey.
	betaNC, err := sdk.Dial(s.ClientURL(), "beta", nats.Nkey(betaPub, beta.Sign))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(betaNC.Close)
	betaClient := newClient(t, betaNC, sdk.Config{Emitter: "beta"})
	bid, bdata := makeEvent("beta", "b", 0)
	ack, err := betaClient.Publish(ctx, sdk.Event{ID: bid, Data: bdata})
	if err != nil {
		t.Fatal(err)
	}
	acks.wait(t, ctx, ack.Seq)
	sink.checkExactlyOnce(t, []string{id, bid})
	if st := streamState(t, connect(t, s), "ZARLOG_EVENTS"); st.Msgs != 0 {
		t.Errorf("stream holds %d messages", st.Msgs)
	}

	// Strangers and wrong passwords are refused.
	for _, opt := range []nats.Option{nats.UserInfo("alpha", "wrong"), nats.UserInfo("zarlog-ledger", "guess"), func(*nats.Options) error { return nil }} {
		if nc, err := nats.Connect(s.ClientURL(), opt); err == nil {
			nc.Close()
			t.Errorf("connected without valid credentials")
		} else if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
			t.Errorf("connecting: %v, want an authorization error", err)
		}
	}
}

// TestDialNKey runs the ingest in external mode as a user authenticated by
// an nkey seed file, with the ledger permissions of docs/NATS.md.
func TestDialNKey(t *testing.T) {
	ctx := testContext(t)
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	seed, err := kp.Seed()
	if err != nil {
		t.Fatal(err)
	}
	seedFile := filepath.Join(t.TempDir(), "ledger.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, ServerConfig{
		Emitters: []EmitterAccess{{Emitter: "alpha", Password: "pw"}},
		Configure: func(o *server.Options) {
			o.Nkeys = append(o.Nkeys, &server.NkeyUser{Nkey: pub,
				Permissions: LedgerPermissions(wire.Subjects{}, "ZARLOG_EVENTS", "zarlog-ledger")})
		},
	})
	if _, err := Dial(DialConfig{URL: s.ClientURL()}); err == nil {
		t.Fatal("connected without credentials")
	}
	nc, err := Dial(DialConfig{URL: s.ClientURL(), NKeySeedFile: seedFile, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	sink := newFakeSink()
	in := newIngester(t, nc, Config{Sink: sink})
	acks := watchAcks(in)
	runIngest(t, in)

	anc, err := sdk.Dial(s.ClientURL(), "alpha", nats.UserInfo("alpha", "pw"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(anc.Close)
	c := newClient(t, anc, sdk.Config{Emitter: "alpha"})
	id, data := makeEvent("alpha", "g", 0)
	ack, err := c.Publish(ctx, sdk.Event{ID: id, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	acks.wait(t, ctx, ack.Seq)
	sink.checkExactlyOnce(t, []string{id})
}

// TestClosedByDefault: an embedded server configured with no emitters at
// all takes no client but the in-process ledger: an anonymous client over
// the network is refused, and the ledger's own user runs the ingest with
// its narrow permissions (it cannot, say, delete the stream).
func TestClosedByDefault(t *testing.T) {
	ctx := testContext(t)
	s, err := StartServer(ctx, ServerConfig{StoreDir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	if nc, err := nats.Connect(s.ClientURL(), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("an anonymous client connected")
	} else if !errors.Is(err, nats.ErrAuthorization) && !strings.Contains(err.Error(), "Authorization") {
		t.Errorf("anonymous connect: %v", err)
	}
	lc, err := s.Connect(nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lc.Close)
	sink := newFakeSink()
	in := newIngester(t, lc, Config{Sink: sink, Locator: sink, Checkpoints: sink})
	runIngest(t, in)
	up := func() bool { in.health.mu.Lock(); defer in.health.mu.Unlock(); return in.health.sessionUp }
	deadline := time.Now().Add(10 * time.Second)
	for !up() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := in.Health(ctx); err != nil || !up() {
		t.Errorf("the ingest as the ledger user: session up %v, %v", up(), err)
	}
	if m, err := lc.Request("$JS.API.STREAM.DELETE.ZARLOG_EVENTS", nil, 300*time.Millisecond); err == nil {
		t.Errorf("the ledger user deleted the stream: %s", m.Data)
	}
}
