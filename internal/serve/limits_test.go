package serve_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zarlog/zarlog/internal/httpserve"
	"github.com/zarlog/zarlog/internal/serve"
	"github.com/zarlog/zarlog/internal/testonly"
)

// testLimits are short read timeouts, so that the slow clients' test
// waits for them and not for the defaults.
var testLimits = httpserve.Limits{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 500 * time.Millisecond}

// TestSlowClients holds 50 requests of each never-finished kind open on
// the public and the admin listener of a running service (headers never
// finished, a body of 200,000 or 1,000 bytes declared and never sent, a
// body trickled a byte at a time): an honest request is served meanwhile,
// and the server closes every one of them (the 200,000-byte ones at once,
// with 413; the others at the read timeout).
func TestSlowClients(t *testing.T) {
	r := start(t, serve.Config{Dir: t.TempDir(), HTTPLimits: testLimits, AdminLimits: testLimits})
	// The honest request's answer must be the healthy one: wait until the
	// service says so, and has for longer than the ingest's grace at start
	// (ingest's health is nil for its first 2 s without a consumer
	// session, and 503 after that until the session is up: a loaded CI
	// machine once saw 200, then 503 at the honest request).
	var healthySince time.Time
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(r.info.HTTP + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		switch {
		case err != nil || resp.StatusCode != http.StatusOK:
			healthySince = time.Time{}
		case healthySince.IsZero():
			healthySince = time.Now()
		}
		if !healthySince.IsZero() && time.Since(healthySince) > 3*time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz not 200 for 3 s within 30 s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	token, err := os.ReadFile(r.info.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct {
		name, base, path string
		header           http.Header
	}{
		{"public", r.info.HTTP, "/healthz", nil},
		{"admin", r.info.Admin, "/healthz", http.Header{"Authorization": {"Bearer " + strings.TrimSpace(string(token))}}},
	} {
		u, err := url.Parse(l.base)
		if err != nil {
			t.Fatal(err)
		}
		report, err := testonly.SlowClientsClosed(u.Host, l.path, l.path, l.header, 50, 100*time.Millisecond, time.Minute)
		if err != nil {
			t.Fatalf("%s listener: %v", l.name, err)
		}
		t.Logf("%s listener: %s", l.name, report)
	}
}

// TestAdminProfiles: the admin listener serves the Go runtime's profiles
// (a heap profile, gzipped protobuf) and Pebble's memory metrics to the
// token's holder, and neither without it.
func TestAdminProfiles(t *testing.T) {
	r := start(t, serve.Config{Dir: t.TempDir()})
	token, err := os.ReadFile(r.info.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string, auth bool) (int, []byte) {
		req, err := http.NewRequest("GET", r.info.Admin+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth {
			req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}
	if code, b := get("/debug/pprof/heap", true); code != http.StatusOK || !bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		t.Errorf("/debug/pprof/heap with the token: %d, %d bytes (%q…), want 200 and a gzipped profile", code, len(b), b[:min(len(b), 40)])
	}
	for _, p := range []string{"/debug/pprof/heap", "/debug/pprof/", "/debug/pprof/goroutine?debug=1"} {
		if code, _ := get(p, false); code != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d, want 401", p, code)
		}
	}
	code, b := get("/metrics", true)
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, m := range []string{"zarlog_ledger_pebble_block_cache_max_bytes 2.68435456e+08", "zarlog_ledger_pebble_memtable_bytes ",
		"zarlog_ledger_pebble_zombie_memtables ", "zarlog_ledger_pebble_snapshots "} {
		if !strings.Contains(string(b), "\n"+m) {
			t.Errorf("/metrics has no %q", m)
		}
	}
	// The public listener serves no profiles.
	resp, err := http.Get(r.info.HTTP + "/debug/pprof/heap")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Errorf("the public listener serves /debug/pprof/heap")
	}
}
