package bench

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zarlog/zarlog/internal/workload"
)

// TestDuplicatesCounted: the events a ledger is offered again (the SDK's
// resends) are what the report's duplicates count, read from the ledger's
// own metrics as the end-to-end and human-pace runs read them.
func TestDuplicatesCounted(t *testing.T) {
	ctx := context.Background()
	w, err := NewWorkload(workload.Config{Seed: 5, Concurrent: 4, Rolls: 4}, 40)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	l, err := OpenLedger(ctx, t.TempDir(), w, 0, reg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	in := w.Inputs()
	if _, err := l.Append(ctx, in); err != nil {
		t.Fatal(err)
	}
	m := map[string]float64{}
	if err := beaconChecks(reg, m); err != nil {
		t.Fatal(err)
	}
	if m["duplicates"] != 0 {
		t.Fatalf("after each event once: %v duplicates, want 0", m["duplicates"])
	}
	if _, err := l.Append(ctx, in[:7]); err != nil {
		t.Fatal(err)
	}
	if err := beaconChecks(reg, m); err != nil {
		t.Fatal(err)
	}
	if m["duplicates"] != 7 {
		t.Errorf("after 7 events again: %v duplicates, want 7", m["duplicates"])
	}
}
