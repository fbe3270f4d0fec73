package mirror

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/zarlog/zarlog/internal/httpserve"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/internal/testonly"
)

// TestSlowClients holds 50 requests of each never-finished kind open on the
// mirror's listener: an honest request is served meanwhile and the server
// closes every one of them.
func TestSlowClients(t *testing.T) {
	o := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan Info, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{From: o.URL, LogKey: o.VKey, Dir: t.TempDir(), HTTPAddr: "127.0.0.1:0", Poll: time.Hour,
			HTTPLimits: httpserve.Limits{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 500 * time.Millisecond},
			Ready:      func(i Info) { ready <- i }})
	}()
	var info Info
	select {
	case info = <-ready:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	}
	u, err := url.Parse(info.HTTP)
	if err != nil {
		t.Fatal(err)
	}
	report, err := testonly.SlowClientsClosed(u.Host, "/healthz", "/healthz", nil, 50, 100*time.Millisecond, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(report)
	cancel()
	<-done
}
