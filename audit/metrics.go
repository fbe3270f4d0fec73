package audit

import "github.com/prometheus/client_golang/prometheus"

// metrics are the auditor's Prometheus metrics.
type metrics struct {
	verified, splitViews prometheus.Counter
	problems, undecided  prometheus.Gauge
	found, checkpoints   *prometheus.CounterVec
	verifySeconds        prometheus.Histogram
}

func newMetrics() *metrics {
	return &metrics{
		verified:   prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_audit_games_verified_total", Help: "Finished games whose proof bundle passed every check."}),
		splitViews: prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_audit_split_views_total", Help: "Signed checkpoints found inconsistent with the verified view (evidence files written)."}),
		problems:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_audit_problems", Help: "Problems found, in this run and earlier ones on the same data directory; non-zero turns /healthz red."}),
		undecided:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_audit_undecided_games", Help: "Finished games whose bundle could not be fetched yet (within the grace period)."}),
		found: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zarlog_audit_problems_found_total",
			Help: "Problems found by this process, by kind: game, missing-bundle, split-view, entries, leaf."}, []string{"kind"}),
		checkpoints: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zarlog_audit_checkpoints_checked_total",
			Help: "Signed checkpoints checked against the verified view, by source: log (its /checkpoint), bundle (fetched or announced), also (--also sources)."}, []string{"source"}),
		verifySeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "zarlog_audit_bundle_verify_seconds", Help: "Time to check one proof bundle.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)}),
	}
}

func (m *metrics) register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.verified, m.splitViews, m.problems, m.undecided, m.found, m.checkpoints, m.verifySeconds} {
		if err := r.Register(c); err != nil {
			return err
		}
	}
	return nil
}
