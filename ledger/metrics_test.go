package ledger

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestMetrics checks the counters on a registry after appends and a
// rejection.
func TestMetrics(t *testing.T) {
	e := newTestEnv(t)
	reg := prometheus.NewRegistry()
	e.cfg.Metrics = reg
	l := e.open()
	leaves := newStreamGen(t, e.k, "metrics", 29, 2).take(30)
	appendAll(t, l, leaves, 10)
	mustAppend(t, l, inputs(t, leaves[0]))
	mustAppend(t, l, []Input{{Emitter: emitterA, Data: []byte("x")}})
	mustSign(t, l)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			name := f.GetName()
			for _, lp := range m.GetLabel() {
				name += "/" + lp.GetValue()
			}
			got[name] = value(m)
		}
	}
	for name, want := range map[string]float64{
		"zarlog_ledger_appended_total":           30,
		"zarlog_ledger_duplicates_total":         1,
		"zarlog_ledger_rejected_total/malformed": 1,
		"zarlog_ledger_rejected_total/too-large": 0,
		"zarlog_ledger_tree_size":                30,
		"zarlog_ledger_checkpoint_size":          30,
		"zarlog_ledger_group_inputs":             5, // observations
		"zarlog_ledger_stopped":                  0,
	} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
	// A second ledger on the same registry is refused, not silently merged.
	e2 := newTestEnv(t)
	e2.cfg.Metrics = reg
	if _, err := Open(context.Background(), e2.cfg); err == nil {
		t.Error("a second ledger registered its metrics on the same registry")
	}
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return -1
}
