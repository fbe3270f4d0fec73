package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zarlog/zarlog/internal/serve"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// TestIsolation attacks a built `zarlog serve` with its default embedded
// NATS as a hostile backend and a local process would (docs/SECURITY.md),
// while a victim backend plays a game through the SDK:
//
//   - an anonymous client cannot connect at all;
//   - the attacker, authenticated as itself, cannot call the JetStream API
//     (delete or purge the stream, pause or delete the consumer) nor
//     publish on the victim's subject;
//   - once the victim's commit is logged, the attacker publishes junk under
//     every id of the victim's game, with and without Nats-Msg-Id (the
//     suppression attack), asks for receipts with the victim's events
//     subject as the reply subject (the redirect), and floods the
//     rejected store past its quota;
//   - the victim itself sends junk under its own next id before the real
//     event (the same attack within one emitter).
//
// The victim's game is logged whole, every event's receipt names it at
// its leaf, the bundle verifies, the victim's part of the rejected store
// holds only its own junk, and the attacker's flood is counted over its
// quota, as `zarlog rejected` shows through the admin listener.
func TestIsolation(t *testing.T) {
	bin, verify := tools(t)
	ctx := testContext(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	victim, victimVkey, victimLine, victimNkey := emitterKey(t, bin, dir, "victim")
	_, _, atkLine, atkNkey := emitterKey(t, bin, dir, "atk")
	emitters := filepath.Join(dir, "emitters")
	if err := os.WriteFile(emitters, []byte(victimLine+"\n"+atkLine+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const quota = 50
	p := startServe(t, bin, "--data", data, "--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--admin", "127.0.0.1:0",
		"--emitters", emitters, "--checkpoint-interval", "20ms", "--rejected-quota", fmt.Sprint(quota))
	natsURL, logKey := p.lines["nats"], p.lines["vkey"]

	// Anonymous clients are refused.
	if nc, err := nats.Connect(natsURL, nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("an anonymous client connected to the default embedded server")
	} else if !strings.Contains(err.Error(), "Authorization Violation") {
		t.Errorf("anonymous connect: %v, want an authorization violation", err)
	}

	// The attacker, as itself.
	auth, err := nats.NkeyOptionFromSeed(atkNkey)
	if err != nil {
		t.Fatal(err)
	}
	// (Its permission violations are expected: they are not printed.)
	anc, err := sdk.Dial(natsURL, "atk", auth, nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
	if err != nil {
		t.Fatal(err)
	}
	defer anc.Close()
	for _, api := range []string{"$JS.API.STREAM.DELETE.ZARLOG_EVENTS", "$JS.API.STREAM.PURGE.ZARLOG_EVENTS",
		"$JS.API.CONSUMER.PAUSE.ZARLOG_EVENTS.zarlog-ledger", "$JS.API.CONSUMER.DELETE.ZARLOG_EVENTS.zarlog-ledger",
		"$JS.API.STREAM.INFO.ZARLOG_EVENTS"} {
		if m, err := anc.Request(api, []byte(`{}`), 500*time.Millisecond); err == nil {
			t.Errorf("the attacker called %s: %s", api, m.Data)
		}
	}
	js, err := jetstream.New(anc)
	if err != nil {
		t.Fatal(err)
	}
	junk := func(subject, msgID string, body []byte) {
		m := nats.NewMsg(subject)
		m.Data = body
		if msgID != "" {
			m.Header.Set(wire.HeaderMsgID, msgID)
		}
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Errorf("publishing junk on the attacker's own subject: %v", err)
		}
	}
	// Publishing as the victim is refused by the permissions (no ack).
	{
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		m := nats.NewMsg(wire.Subjects{}.Events("victim"))
		m.Data = []byte(`{"forged":true}`)
		if _, err := js.PublishMsg(pctx, m); err == nil {
			t.Error("the attacker published on the victim's subject")
		}
		cancel()
	}

	b, client, vnc := sdkBackend(t, natsURL, victim, nil, victimNkey)
	vjs, err := jetstream.New(vnc)
	if err != nil {
		t.Fatal(err)
	}
	attack := func(game string) {
		// (Ids 2…41: seq 1 is left to the victim's own junk below, which
		// carries a Nats-Msg-Id and so would be deduplicated against the
		// attacker's: the SDK sets none for that reason.)
		for k := 2; k <= 41; k++ {
			id := fmt.Sprintf("%s:%d", game, k)
			junk(wire.Subjects{}.Events("atk"), id, []byte("junk "+id))
			junk(wire.Subjects{}.Events("atk"), "", fmt.Appendf(nil, `{"emitter":"atk","id":%q}`, id))
			// The redirect: a receipt request whose reply is the victim's
			// events subject.
			req, _ := wire.MarshalReceiptRequest(wire.ReceiptRequest{ID: id})
			if err := anc.PublishRequest(wire.Subjects{}.Receipts("atk"), wire.Subjects{}.Events("victim"), req); err != nil {
				t.Error(err)
			}
		}
		// The flood: past the attacker's quota.
		for k := range 3 * quota {
			junk(wire.Subjects{}.Events("atk"), "", fmt.Appendf(nil, "flood %d", k))
		}
		// The victim's own junk under its next id, before the real event.
		m := nats.NewMsg(wire.Subjects{}.Events("victim"))
		m.Data = []byte("the victim's own junk")
		m.Header.Set(wire.HeaderMsgID, game+":1")
		if _, err := vjs.PublishMsg(ctx, m); err != nil {
			t.Error(err)
		}
		anc.Flush()
	}
	id, err := testlog.Tavlarena(ctx, b, "isolation", `{}`, 12, func(game string, seq uint64, _ []byte) {
		if seq == 0 {
			attack(game)
		}
	})
	if err != nil {
		t.Fatalf("the victim's game: %v", err)
	}

	// The bundle: every event of the game, verified.
	var bundle []byte
	for {
		resp, err := http.Get(p.base() + "/games/" + id + "/proof.json")
		if err != nil {
			t.Fatal(err)
		}
		bundle, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no bundle for %s: %d %s", id, resp.StatusCode, bundle)
		case <-time.After(50 * time.Millisecond):
		}
	}
	bundleFile := filepath.Join(dir, "bundle.json")
	os.WriteFile(bundleFile, bundle, 0o644)
	if out, stderr, code := runBin(t, dir, verify, "--log-key", logKey, "--emitter-key", victimVkey, bundleFile); code != 0 {
		t.Errorf("zarlog-verify of the victim's game: exit %d\n%s%s", code, out, stderr)
	}
	var parsed struct {
		Log struct {
			Entries []struct {
				Index uint64 `json:"index"`
				Leaf  string `json:"leaf"`
			} `json:"entries"`
		} `json:"log"`
	}
	if err := json.Unmarshal(bundle, &parsed); err != nil || len(parsed.Log.Entries) < 10 {
		t.Fatalf("the bundle holds %d events: %v", len(parsed.Log.Entries), err)
	}
	// Every event's receipt: logged, none "rejected".
	for seq, e := range parsed.Log.Entries {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		r, err := client.Receipt(rctx, sdk.Event{ID: fmt.Sprintf("%s:%d", id, seq), Data: []byte(e.Leaf)})
		cancel()
		if err != nil {
			t.Errorf("receipt of %s:%d: %v", id, seq, err)
			continue
		}
		if r.Index != e.Index {
			t.Errorf("receipt of %s:%d: index %d, the bundle has it at %d", id, seq, r.Index, e.Index)
		}
	}

	// The rejected store, read while the service runs.
	token := filepath.Join(data, "admin.token")
	out, stderr, code := runBin(t, dir, bin, "rejected", "--admin", p.lines["admin"], "--admin-token", token, "--emitter", "victim", "--json")
	if code != 0 {
		t.Fatalf("zarlog rejected: exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var victimRecs []serve.RejectedRecord
	for _, l := range lines[:len(lines)-1] {
		var r serve.RejectedRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("zarlog rejected --json line %q: %v", l, err)
		}
		victimRecs = append(victimRecs, r)
	}
	if len(victimRecs) != 1 || !bytes.Equal(victimRecs[0].Data, []byte("the victim's own junk")) || victimRecs[0].Code != "malformed" {
		t.Errorf("the victim's rejected records: %+v; want only its own junk", victimRecs)
	}
	var sum serve.RejectedSummary
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatal(err)
	}
	a, v := sum.Emitters["atk"], sum.Emitters["victim"]
	if a.Stored != quota || a.OverQuota != 40*2+3*quota-quota || v.Stored != 1 || v.OverQuota != 0 {
		t.Errorf("summary: attacker %+v, victim %+v", a, v)
	}
	text, _, code := runBin(t, dir, bin, "rejected", "--admin", p.lines["admin"], "--data", data, "--summary")
	if code != 0 || !strings.Contains(text, "emitter atk: 50 stored") || !strings.Contains(text, "over its rejection quota") {
		t.Errorf("zarlog rejected --summary: exit %d\n%s", code, text)
	}
	// Without the token, the admin listener refuses.
	resp, err := http.Get(p.lines["admin"] + "/rejected")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the admin listener without a token: %s", resp.Status)
	}
}
