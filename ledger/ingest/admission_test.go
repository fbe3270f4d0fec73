package ingest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// startAdmission runs in's admission, and nothing else, until the returned
// stop is called or the test ends: emitters publish into the stream, no
// one decides anything.
func startAdmission(t testing.TB, in *Ingester) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := in.adm.run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := false
	stop = func() {
		if !done {
			done = true
			cancel()
			s()
		}
	}
	t.Cleanup(stop)
	return stop
}

// publishRaw publishes data on emitter's events subject as JetStream
// publishers do (a request whose reply is the stream's ack), from emitter's
// inbox, and returns the ack or the stream's refusal.
func publishRaw(ctx context.Context, js jetstream.JetStream, emitter string, data []byte) (*jetstream.PubAck, error) {
	return js.Publish(ctx, wire.Subjects{}.Events(emitter), data)
}

// TestBacklogBudget: an emitter with as many messages (or bytes) undecided
// in the stream as its backlog budget allows is refused at once: the
// stream's error for a full backlog (JetStream 10077, which the SDK turns
// into sdk.ErrBacklog) naming the emitter and the limit, counted by
// emitter and limit. Another emitter publishes meanwhile as if it were not
// there. The budget outlives a restart: a new admission counts what the
// stream holds of each emitter, and refuses it still. Once the ingest has
// decided the backlog, the emitter publishes again.
func TestBacklogBudget(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	ensureStream(t, connect(t, s), StreamConfig{})
	const msgs, bytesLimit = 10, 3000
	cfg := func() Config {
		sink := newFakeSink()
		return Config{Sink: sink, Locator: sink, Checkpoints: sink,
			BacklogMessagesPerEmitter: msgs, BacklogBytesPerEmitter: bytesLimit}
	}
	first := newIngester(t, connect(t, s), cfg())
	stopFirst := startAdmission(t, first)

	// mallory: small events, one a message, up to its messages' limit.
	mallory := newClient(t, clientConn(t, s, "mallory"), sdk.Config{Emitter: "mallory", MaxBatchEvents: 1})
	seq := 0
	publish := func(c *sdk.Client, emitter string) error {
		id, data := makeEvent(emitter, "g", seq)
		seq++
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := c.Publish(pctx, sdk.Event{ID: id, Data: data})
		return err
	}
	for i := range msgs {
		if err := publish(mallory, "mallory"); err != nil {
			t.Fatalf("mallory's message %d, within its budget: %v", i, err)
		}
	}
	refused := publish(mallory, "mallory")
	var pe *sdk.PublishError
	if !errors.Is(refused, sdk.ErrBacklog) || !errors.As(refused, &pe) {
		t.Fatalf("mallory past its backlog budget: %v, want sdk.ErrBacklog", refused)
	}
	for _, want := range []string{"maximum messages exceeded", "emitter mallory", "backlog-messages-per-emitter 10"} {
		if !strings.Contains(refused.Error(), want) {
			t.Errorf("mallory's refusal %q does not say %q", refused, want)
		}
	}
	if n := testutil.ToFloat64(first.m.limitRefusals.WithLabelValues("mallory", LimitBacklogMessages)); n != 1 {
		t.Errorf("zarlog_ingest_limit_refusals_total{mallory,%s} = %v, want 1", LimitBacklogMessages, n)
	}
	if n := testutil.ToFloat64(first.m.backlogMsgs.WithLabelValues("mallory")); n != msgs {
		t.Errorf("zarlog_ingest_backlog_messages{mallory} = %v, want %d", n, msgs)
	}

	// bigmouth: two messages of 2,000 bytes; the second would take it past
	// its bytes' limit. (The first is admitted whatever its size.)
	bigJS, err := jetstream.New(clientConn(t, s, "bigmouth"))
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 2000)
	if _, err := publishRaw(ctx, bigJS, "bigmouth", big); err != nil {
		t.Fatalf("bigmouth's first message: %v", err)
	}
	_, err = publishRaw(ctx, bigJS, "bigmouth", big)
	var api *jetstream.APIError
	if !errors.As(err, &api) || api.ErrorCode != 10077 {
		t.Fatalf("bigmouth past its bytes: %v, want JetStream error 10077", err)
	}
	for _, want := range []string{"maximum bytes exceeded", "emitter bigmouth has 2000 bytes", "message of 2000 bytes", "backlog-bytes-per-emitter 3000"} {
		if !strings.Contains(api.Description, want) {
			t.Errorf("bigmouth's refusal %q does not say %q", api.Description, want)
		}
	}
	if n := testutil.ToFloat64(first.m.limitRefusals.WithLabelValues("bigmouth", LimitBacklogBytes)); n != 1 {
		t.Errorf("zarlog_ingest_limit_refusals_total{bigmouth,%s} = %v, want 1", LimitBacklogBytes, n)
	}

	// alice publishes as many as mallory did, all acknowledged.
	alice := newClient(t, clientConn(t, s, "alice"), sdk.Config{Emitter: "alice", MaxBatchEvents: 1})
	for i := range msgs {
		if err := publish(alice, "alice"); err != nil {
			t.Fatalf("alice's message %d while mallory is at its limit: %v", i, err)
		}
	}
	if b, m := first.adm.backlog("alice"); m != msgs || b == 0 {
		t.Errorf("alice's backlog: %d messages, %d bytes; want %d messages", m, b, msgs)
	}

	// A restart: the new admission counts mallory's backlog from the
	// stream and refuses it still.
	stopFirst()
	second := newIngester(t, connect(t, s), cfg())
	stopSecond := startAdmission(t, second)
	if _, m := second.adm.backlog("mallory"); m != msgs {
		t.Errorf("after a restart, mallory's backlog counts %d messages, want %d", m, msgs)
	}
	if err := publish(mallory, "mallory"); !errors.Is(err, sdk.ErrBacklog) || !strings.Contains(err.Error(), "emitter mallory") {
		t.Errorf("mallory after a restart: %v, want sdk.ErrBacklog naming it", err)
	}
	stopSecond()

	// The ingest decides the backlog: every budget is free again. (Its
	// admission counts the backlog from the stream once it runs: wait for
	// the ingest to have appended mallory's and alice's events, so that a
	// count of zero is the decided backlog's, not the one before the
	// count.)
	c3 := cfg()
	third := newIngester(t, connect(t, s), c3)
	runIngest(t, third)
	c3.Sink.(*fakeSink).waitLen(t, ctx, 2*msgs)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, m := third.adm.backlog("mallory")
		_, a := third.adm.backlog("alice")
		_, b := third.adm.backlog("bigmouth")
		if m+a+b == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("backlogs after the ingest ran: mallory %d, alice %d, bigmouth %d messages", m, a, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := publish(mallory, "mallory"); err != nil {
		t.Errorf("mallory once its backlog is decided: %v", err)
	}
}

// TestAdmissionReply: a message whose reply subject is not under its
// emitter's inbox is neither forwarded nor answered (the admission would
// otherwise publish the stream's ack, with the ledger's rights, where the
// publisher says).
func TestAdmissionReply(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	ensureStream(t, connect(t, s), StreamConfig{})
	in := newIngester(t, connect(t, s), Config{Sink: newFakeSink()})
	startAdmission(t, in)
	nc := clientConn(t, s, "mallory")
	victim, err := nc.SubscribeSync("zarlog.victim")
	if err != nil {
		t.Fatal(err)
	}
	_, data := makeEvent("mallory", "g", 0)
	if err := nc.PublishMsg(&nats.Msg{Subject: wire.Subjects{}.Events("mallory"), Reply: "zarlog.victim", Data: data}); err != nil {
		t.Fatal(err)
	}
	if err := nc.FlushWithContext(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(in.m.admissions.WithLabelValues("refused")) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the message with a foreign reply subject was not refused")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if m, err := victim.NextMsg(200 * time.Millisecond); err == nil {
		t.Errorf("the admission answered on the foreign reply subject: %q", m.Data)
	}
	if st := streamState(t, connect(t, s), "ZARLOG_EVENTS"); st.Msgs != 0 {
		t.Errorf("the stream holds %d messages, want 0", st.Msgs)
	}
}

// TestRateBudget: an emitter publishing faster than its rate budget (here
// 5 messages a second, a burst of 2 s) is refused at once past its burst,
// "maximum rate exceeded" naming the emitter and the limit (which the SDK
// sends again after its backoff, not sdk.ErrBacklog), counted; another
// emitter publishes meanwhile; a second later the emitter has a second's
// worth again. The bytes' rate likewise.
func TestRateBudget(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	ensureStream(t, connect(t, s), StreamConfig{})
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	in := newIngester(t, connect(t, s), Config{Sink: newFakeSink(), Now: clock,
		RateMessagesPerEmitter: 5, RateBytesPerEmitter: 1 << 20})
	startAdmission(t, in)
	js := map[string]jetstream.JetStream{}
	for _, e := range []string{"mallory", "alice", "bigmouth"} {
		j, err := jetstream.New(clientConn(t, s, e))
		if err != nil {
			t.Fatal(err)
		}
		js[e] = j
	}
	for i := range 10 {
		if _, err := publishRaw(ctx, js["mallory"], "mallory", []byte("m")); err != nil {
			t.Fatalf("mallory's message %d, within its burst: %v", i, err)
		}
	}
	_, err := publishRaw(ctx, js["mallory"], "mallory", []byte("m"))
	var api *jetstream.APIError
	if !errors.As(err, &api) || api.ErrorCode != 10077 {
		t.Fatalf("mallory past its rate: %v, want JetStream error 10077", err)
	}
	for _, want := range []string{"maximum rate exceeded", "emitter mallory", "rate-messages-per-emitter 5"} {
		if !strings.Contains(api.Description, want) {
			t.Errorf("mallory's refusal %q does not say %q", api.Description, want)
		}
	}
	if strings.Contains(api.Description, "maximum messages") || strings.Contains(api.Description, "maximum bytes") {
		t.Errorf("a rate refusal %q would read as a full backlog to the SDK (sdk.ErrBacklog, not sent again)", api.Description)
	}
	if n := testutil.ToFloat64(in.m.limitRefusals.WithLabelValues("mallory", LimitRateMessages)); n != 1 {
		t.Errorf("zarlog_ingest_limit_refusals_total{mallory,%s} = %v, want 1", LimitRateMessages, n)
	}
	for i := range 10 {
		if _, err := publishRaw(ctx, js["alice"], "alice", []byte("a")); err != nil {
			t.Fatalf("alice's message %d while mallory is over its rate: %v", i, err)
		}
	}
	advance(time.Second)
	for i := range 5 {
		if _, err := publishRaw(ctx, js["mallory"], "mallory", []byte("m")); err != nil {
			t.Fatalf("mallory's message %d a second later: %v", i, err)
		}
	}
	if _, err := publishRaw(ctx, js["mallory"], "mallory", []byte("m")); err == nil {
		t.Error("mallory's sixth message in that second was admitted")
	}

	// Bytes: 1 MiB a second, a burst of 2 MiB.
	big := make([]byte, 700<<10)
	for i := range 2 {
		if _, err := publishRaw(ctx, js["bigmouth"], "bigmouth", big); err != nil {
			t.Fatalf("bigmouth's message %d: %v", i, err)
		}
	}
	_, err = publishRaw(ctx, js["bigmouth"], "bigmouth", big)
	if !errors.As(err, &api) || !strings.Contains(api.Description, "rate-bytes-per-emitter 1048576") || !strings.Contains(api.Description, "emitter bigmouth") {
		t.Errorf("bigmouth past its bytes a second: %v", err)
	}
}

// TestIgnoredRefusals: an emitter that publishes on while its messages are
// refused, past refused-bytes-per-emitter, is disconnected (the embedded
// server's DisconnectEmitter) and, for a penalty, refused at once with a
// refusal naming the emitter and the limit, counted; a repeat within a
// minute doubles the penalty, and after it the emitter publishes again.
// An emitter that backs off as the SDK does after each refusal (its whole
// window of 32 messages of 256 KiB refused and sent again after 25 ms,
// 50 ms … up to 2 s) is never penalized at the default budget, and
// another emitter publishes meanwhile as if neither were there.
func TestIgnoredRefusals(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{Emitters: []EmitterAccess{
		{Emitter: "mallory", Password: "m"}, {Emitter: "bob", Password: "b"}, {Emitter: "alice", Password: "a"}}})
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	in := newIngester(t, connect(t, s), Config{Sink: newFakeSink(), Now: clock,
		RateMessagesPerEmitter: 1000, RateBytesPerEmitter: 1 << 20, Disconnect: s.DisconnectEmitter})
	ensureStream(t, connect(t, s), StreamConfig{})
	startAdmission(t, in)
	disconnected := map[string]chan struct{}{}
	js := map[string]jetstream.JetStream{}
	for _, e := range []string{"mallory", "bob", "alice"} {
		ch := make(chan struct{}, 100)
		disconnected[e] = ch
		nc, err := sdk.Dial(s.ClientURL(), e, nats.UserInfo(e, e[:1]),
			nats.DisconnectErrHandler(func(*nats.Conn, error) { ch <- struct{}{} }))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		if js[e], err = jetstream.New(nc); err != nil {
			t.Fatal(err)
		}
	}
	refusal := func(err error) string {
		var api *jetstream.APIError
		if errors.As(err, &api) {
			return api.Description
		}
		if err != nil {
			return err.Error()
		}
		return ""
	}

	// bob, as the SDK: its window refused and sent again after its
	// backoff, for 20 s.
	mid := make([]byte, 256<<10)
	for d, at := 25*time.Millisecond, time.Duration(0); at < 20*time.Second; at, d = at+d, min(2*d, 2*time.Second) {
		for range 32 {
			_, err := publishRaw(ctx, js["bob"], "bob", mid)
			if strings.Contains(refusal(err), LimitRefusedBytes) {
				t.Fatalf("bob, backing off as the SDK does, at %v: %v", at, err)
			}
		}
		advance(d)
	}
	if n := testutil.ToFloat64(in.m.penalties.WithLabelValues("bob")); n != 0 || len(disconnected["bob"]) > 0 {
		t.Fatalf("bob, backing off as the SDK does: %v penalties, %d disconnects", n, len(disconnected["bob"]))
	}

	// mallory sends 1 MB again and again with the clock standing still:
	// 2 admitted (its burst of bytes), then refused, until it has had 64
	// MiB refused.
	big := make([]byte, 1_000_000)
	penalized := func(round int) string {
		t.Helper()
		for i := range 200 {
			// A publish whose connection is closed meanwhile gets no
			// answer: it times out, and the client connects again.
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err := publishRaw(pctx, js["mallory"], "mallory", big)
			cancel()
			if d := refusal(err); strings.Contains(d, LimitRefusedBytes) {
				return d
			}
			if i < 2 && round == 0 && err != nil {
				t.Fatalf("mallory's message %d, within its burst: %v", i, err)
			}
		}
		t.Fatalf("mallory's 200 messages of 1 MB: never refused for ignoring its refusals")
		return ""
	}
	until := func(d time.Duration) string { return "refused until " + clock().Add(d).UTC().Format(time.RFC3339Nano) }
	d := penalized(0)
	for _, want := range []string{"maximum rate exceeded", "emitter mallory", "refused-bytes-per-emitter 8388608", "disconnected", until(2 * time.Second)} {
		if !strings.Contains(d, want) {
			t.Errorf("mallory's refusal %q does not say %q", d, want)
		}
	}
	select {
	case <-disconnected["mallory"]:
	case <-ctx.Done():
		t.Fatal("mallory was not disconnected")
	}
	if n := testutil.ToFloat64(in.m.penalties.WithLabelValues("mallory")); n != 1 {
		t.Errorf("zarlog_ingest_penalties_total{mallory} = %v, want 1", n)
	}
	if n := testutil.ToFloat64(in.m.limitRefusals.WithLabelValues("mallory", LimitRefusedBytes)); n < 1 {
		t.Errorf("zarlog_ingest_limit_refusals_total{mallory,%s} = %v", LimitRefusedBytes, n)
	}
	for i := range 5 {
		if _, err := publishRaw(ctx, js["alice"], "alice", []byte("a")); err != nil {
			t.Fatalf("alice's message %d while mallory is in its penalty: %v", i, err)
		}
	}
	if len(disconnected["alice"]) > 0 || len(disconnected["bob"]) > 0 {
		t.Errorf("alice or bob was disconnected")
	}

	// After its penalty (2 s) mallory publishes within its rate; going on
	// within a minute doubles the penalty.
	advance(3 * time.Second)
	var err error
	for range 10 { // its connection may be coming back
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err = publishRaw(pctx, js["mallory"], "mallory", []byte("m"))
		cancel()
		if err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("mallory after its penalty: %v", err)
	}
	d = penalized(1)
	if !strings.Contains(d, until(4*time.Second)) {
		t.Errorf("mallory's second penalty: %q, want 4 s", d)
	}
}

// TestStored: what the admission takes for a stream's ack of a stored
// message, with and without the decoding of the ack.
func TestStored(t *testing.T) {
	for _, tc := range []struct {
		data   string
		status string
		want   bool
	}{
		{`{"stream":"ZARLOG_EVENTS","seq":17}`, "", true},
		{` {"stream":"ZARLOG_EVENTS","domain":"hub","seq":17}` + "\n", "", true},
		{`{"stream":"ZARLOG_EVENTS","seq":17,"duplicate":true}`, "", false},
		{`{"stream":"ZARLOG_EVENTS","seq":17, "duplicate" : true}`, "", false},
		{`{"stream":"ZARLOG_EVENTS","seq":17,"duplicate":false}`, "", true},
		{`{"error":{"code":503,"err_code":10077,"description":"maximum messages exceeded"}}`, "", false},
		{`{"stream":"ZARLOG_EVENTS","seq":17`, "", false},
		{`{"stream":"duplicate","seq":17`, "", false},
		{`[1]`, "", false},
		{``, "", false},
		{`{"stream":"ZARLOG_EVENTS","seq":17}`, "503", false},
	} {
		m := &nats.Msg{Data: []byte(tc.data), Header: nats.Header{}}
		if tc.status != "" {
			m.Header.Set("Status", tc.status)
		}
		if got := stored(m); got != tc.want {
			t.Errorf("stored(%q, status %q) = %t, want %t", tc.data, tc.status, got, tc.want)
		}
	}
}
