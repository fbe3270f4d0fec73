package witness

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zarlog/zarlog/internal/httpserve"
	"github.com/zarlog/zarlog/internal/testonly"
)

// TestSlowClients holds 50 requests of each never-finished kind open on the
// witness's listener (the add-checkpoint route reads its body): an honest
// request is served meanwhile and the server closes every one of them.
func TestSlowClients(t *testing.T) {
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs.policy")
	if err := os.WriteFile(logs, []byte("log "+a.vkey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan Info, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServeConfig{Dir: filepath.Join(dir, "data"), Addr: "127.0.0.1:0", LogsFile: logs,
			Init: true, Name: "witness.example/slow", Rand: testRand(7), Clock: testClock,
			HTTPLimits: httpserve.Limits{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 500 * time.Millisecond},
			Ready:      func(i Info) { ready <- i }})
	}()
	var info Info
	select {
	case info = <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	u, err := url.Parse(info.HealthURL)
	if err != nil {
		t.Fatal(err)
	}
	report, err := testonly.SlowClientsClosed(u.Host, "/healthz", "/healthz", nil, 50, 100*time.Millisecond, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(report)
	// The add-checkpoint route reads its body: a body declared and never
	// sent is closed at the read timeout too.
	report, err = testonly.SlowClientsClosed(u.Host, "/add-checkpoint", "/healthz", nil, 50, 100*time.Millisecond, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(report)
	cancel()
	<-done
}
