package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zarlog/zarlog/internal/testonly"
)

// TestRunStorage: with Config.Storage the run goes end to end a second
// time with the log kept in a real S3 server (versitygw), under a new
// prefix: the report has both rates and their ratio, and the bucket holds
// the whole log, read and verified by tessera's client from the bucket's
// HTTP endpoint.
func TestRunStorage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts versitygw")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s3 := testonly.StartVersitygw(t, "bench")
	s3.Setenv(t)
	rep, err := Run(ctx, Config{Dir: t.TempDir() + "/scratch", Events: 3000, Games: 8, Bundles: 1, Rate: 20000, Checks: ChecksStructural, Storage: "s3://bench/runs"})
	if err != nil {
		t.Fatal(err)
	}
	st := rep.Storage
	if st == nil || st.Events != 3000 || st.EventsPerSec <= 0 || rep.StorageRatio <= 0 || !strings.HasPrefix(rep.StorageURL, "s3://bench/runs/zarlog-bench-") {
		t.Fatalf("storage: %+v, ratio %v, at %q", st, rep.StorageRatio, rep.StorageURL)
	}
	if !strings.Contains(rep.Text(), "bucket     ") || !strings.Contains(string(rep.JSON()), `"storageRatio"`) {
		t.Errorf("the report does not show the bucket's run:\n%s", rep.Text())
	}
	base := s3.PublicURL(t, "bench") + strings.TrimPrefix(rep.StorageURL, "s3://bench/")
	lg, err := testonly.Fetch(ctx, base, nil, rep.LogKey)
	if err != nil {
		t.Fatalf("the log in the bucket: %v", err)
	}
	if len(lg.Entries) != 3000 {
		t.Fatalf("the bucket's log has %d entries, the run %d events", len(lg.Entries), 3000)
	}
	t.Logf("end to end %.0f events/s, with the bucket %.0f (%.2f×)", rep.EndToEnd.EventsPerSec, st.EventsPerSec, rep.StorageRatio)
}
