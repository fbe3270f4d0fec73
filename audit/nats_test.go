package audit

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/publisher"
	"github.com/zarlog/zarlog/wire"
)

// TestNATSAnnouncements: with --nats, the bundles announced on the proofs
// subjects are verified as they come (the good one is not fetched over
// HTTP afterwards; a tampered one is a problem naming its source).
func TestNATSAnnouncements(t *testing.T) {
	ctx := context.Background()
	ns, err := ingest.StartServer(ctx, ingest.ServerConfig{StoreDir: t.TempDir(), Port: -1, InsecureNoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	nc, err := ns.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	announce := publisher.NATSAnnouncer(nc, wire.Subjects{})

	o, ids := origin(t, 2)
	var fetched atomic.Int64
	o.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/proof.json") && !strings.Contains(r.URL.Path, ids[0]) && !strings.Contains(r.URL.Path, ids[1]) {
			fetched.Add(1)
		}
		return false
	})
	type decided struct {
		game string
		ok   bool
	}
	decisions := make(chan decided, 16)
	found := make(chan Problem, 16)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := Run(rctx, RunConfig{Config: Config{From: o.URL, LogKey: o.VKey,
			Decided: func(g string, ok bool) { decisions <- decided{g, ok} },
			Found:   func(p Problem) { found <- p }}, NATS: ns.ClientURL(), Poll: time.Hour})
		done <- err
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	next := func() decided {
		t.Helper()
		select {
		case d := <-decisions:
			return d
		case err := <-done:
			t.Fatalf("Run ended: %v", err)
		case <-time.After(time.Minute):
			t.Fatal("no decision")
		}
		return decided{}
	}
	for range ids {
		if d := next(); !d.ok {
			t.Fatalf("first pass: %+v", d)
		}
	}
	// Two more games; their bundles are announced (one tampered) while
	// no pass runs.
	more := o.Play(t, "nats", 2, 6)
	o.WaitBundles(t, more...)
	for i, id := range more {
		b, err := o.Bundles.Bundle(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			b = mutate(t, b, func(m map[string]any) {
				d := m["rolls"].([]any)[0].(map[string]any)["dice"].([]any)
				d[0] = float64(int(d[0].(float64))%6 + 1)
			})
		}
		if err := announce(ctx, publisher.Announcement{Game: id, Emitter: testlog.Emitter, Bundle: b}); err != nil {
			t.Fatal(err)
		}
		d := next()
		if d.game != id || d.ok != (i == 0) {
			t.Fatalf("announced bundle %d: decision %+v", i, d)
		}
	}
	p := <-found
	if p.Game != more[1] || p.Source != "nats zarlog.proofs."+testlog.Emitter || p.Check != "log-agreement" {
		t.Fatalf("problem %s from %q", p, p.Source)
	}
	if n := fetched.Load(); n != 0 {
		t.Fatalf("%d announced bundles were fetched over HTTP", n)
	}
}
