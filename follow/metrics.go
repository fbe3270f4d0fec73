package follow

import "github.com/prometheus/client_golang/prometheus"

// metrics are the follower's Prometheus metrics.
type metrics struct {
	checkpointSize, storedSize, target, projected prometheus.Gauge
	logFault, diskBytes                           prometheus.Gauge
	limits                                        *prometheus.CounterVec
	bundles, bytes, entries, retries, fetchErrors prometheus.Counter
	checkpoints, refusals                         *prometheus.CounterVec
}

func newMetrics() *metrics {
	return &metrics{
		checkpointSize: prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_follow_checkpoint_size", Help: "Tree size of the accepted (verified) checkpoint."}),
		storedSize:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_follow_stored_size", Help: "Leaves stored, including those fetched for a checkpoint not verified yet."}),
		target:         prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_follow_target_size", Help: "Tree size of the checkpoint the last catch-up went to."}),
		projected:      prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_follow_projected_leaves", Help: "Leaves replayed into the games projection."}),
		bundles:        prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_follow_bundles_fetched_total", Help: "Entry bundles fetched."}),
		bytes:          prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_follow_bundle_bytes_total", Help: "Bytes of the entry bundles fetched (uncompressed)."}),
		entries:        prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_follow_entries_total", Help: "Entries appended to the copy's tree."}),
		retries:        prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_follow_fetch_retries_total", Help: "HTTP requests tried again after an error that may pass."}),
		fetchErrors:    prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_follow_fetch_errors_total", Help: "Fetches that failed after their retries."}),
		logFault: prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_follow_log_fault",
			Help: "1 while the log's latest checkpoint was refused for what no honest log serves (larger than max-size, a response larger than the format allows or malformed); 0 once a checkpoint is accepted."}),
		diskBytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_follow_store_disk_bytes", Help: "Bytes of the copy's store on disk, as last checked against its budget (max-disk)."}),
		limits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zarlog_follow_limit_stops_total",
			Help: "Catch-ups stopped at a limit, by limit: max-size, bundle-size, tile-size, malformed (the log's fault), max-disk (the copy's budget)."}, []string{"limit"}),
		checkpoints: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zarlog_follow_checkpoints_total",
			Help: "Checkpoints considered, by result: accepted, same, stale, refused, refused-before (the same note refused within follow.RefuseFor, not fetched again), bad-signature, quorum."}, []string{"result"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zarlog_follow_refusals_total",
			Help: "Validly signed checkpoints refused, by evidence kind: fork, inconsistent, entries."}, []string{"kind"}),
	}
}

func (m *metrics) register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.checkpointSize, m.storedSize, m.target, m.projected, m.bundles, m.bytes, m.entries,
		m.retries, m.fetchErrors, m.checkpoints, m.refusals, m.logFault, m.diskBytes, m.limits} {
		if err := r.Register(c); err != nil {
			return err
		}
	}
	return nil
}
