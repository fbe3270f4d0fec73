package audit

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/internal/testonly"
)

// TestHostileLog: an auditor of a log that signs a checkpoint of 2^64−1
// leaves reports the log as faulty (a log-fault problem naming max-size,
// once however many passes see it) and fetches nothing; one whose entry
// bundles are larger than the format allows reports that; the pass goes on
// with the verified view.
func TestHostileLog(t *testing.T) {
	for _, tc := range []struct {
		size  uint64
		lie   testonly.Lie
		check string
	}{
		{1<<64 - 1, testonly.LieNone, "max-size"},
		{1 << 30, testonly.LieOversizeBundles, "bundle-size"},
	} {
		h, err := testonly.NewHostileLog("hostile.zarlog.example/log", tc.size, tc.lie)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		a, err := New(context.Background(), Config{From: srv.URL, LogKey: h.VKey(), EvidenceDir: filepath.Join(t.TempDir(), "evidence"), Concurrency: 2})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := a.Pass(context.Background(), true); err != nil {
				t.Fatalf("%s: Pass: %v", h, err)
			}
		}
		ps, err := a.Problems()
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 || ps[0].Kind != ProblemLogFault || ps[0].Check != tc.check || !strings.Contains(ps[0].Detail, tc.check) {
			t.Fatalf("%s: problems %v, want one log-fault of %s", h, ps, tc.check)
		}
		if err := a.Health(context.Background()); err == nil || !strings.Contains(err.Error(), "log-fault") {
			t.Errorf("%s: health %v", h, err)
		}
		if n, _ := h.Served(); tc.lie == testonly.LieNone && n != 0 {
			t.Errorf("%s: fetched %d bundles", h, n)
		}
		t.Log(ps[0])
		a.Close()
		srv.Close()
	}
}
