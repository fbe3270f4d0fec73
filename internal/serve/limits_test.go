package serve_test

import (
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
	// service says so (it answers 503 for a moment at start, once in CI).
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(r.info.HTTP + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz not 200 after 30 s: %v", err)
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
