package witness

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the witness's Prometheus metrics.
type metrics struct {
	requests    *prometheus.CounterVec // add-checkpoint requests by HTTP status
	duration    prometheus.Histogram   // add-checkpoint handling time, fsyncs included
	size        *prometheus.GaugeVec   // latest cosigned size by origin
	evidence    *prometheus.CounterVec // inconsistencies refused, by origin and kind
	writeErrors prometheus.Counter     // failed state writes
}

func newMetrics() *metrics {
	return &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zarlog_witness_add_checkpoint_requests_total",
			Help: "add-checkpoint requests, by HTTP status code.",
		}, []string{"code"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "zarlog_witness_add_checkpoint_duration_seconds",
			Help:    "Time to answer an add-checkpoint request, the durable state write included.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		size: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "zarlog_witness_cosigned_size",
			Help: "Tree size of the latest checkpoint cosigned, by log origin.",
		}, []string{"origin"}),
		evidence: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zarlog_witness_inconsistencies_total",
			Help: "Validly signed checkpoints refused as inconsistent with the cosigned one, by origin and kind (fork: same size, different root; proof: the consistency proof fails).",
		}, []string{"origin", "kind"}),
		writeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zarlog_witness_state_write_errors_total",
			Help: "State writes that failed (the request was refused, nothing cosigned).",
		}),
	}
}

func (m *metrics) register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.size, m.evidence, m.writeErrors} {
		if err := r.Register(c); err != nil {
			return err
		}
	}
	return nil
}
