package storage

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	leader      prometheus.Gauge
	leaseFresh  prometheus.GaugeFunc
	term        prometheus.Gauge
	takeovers   prometheus.Counter
	takeoverSec prometheus.Gauge
	lost        prometheus.Counter
	puts        *prometheus.CounterVec
	replaced    prometheus.Counter
	putSeconds  prometheus.Histogram
	imported    prometheus.Counter
	bucketSize  prometheus.Gauge
	errors      *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, fresh func() float64) (*metrics, error) {
	m := &metrics{
		leaseFresh:  prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "zarlog_storage_lease_fresh", Help: "1 while this node holds the log's lock and its last successful write of it was sent less than half the lease ago (Node.Fresh): only then does it ingest and answer receipt and status requests."}, fresh),
		leader:      prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_storage_leader", Help: "1 while this node holds the log's lock in the bucket (it sequences), 0 while it follows as a standby."}),
		term:        prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_storage_term", Help: "The lock's term as this node last read or wrote it (one more at every takeover)."}),
		takeovers:   prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_storage_takeovers_total", Help: "Times this node took the lock over (after its lease lapsed, or at a restart of its holder)."}),
		takeoverSec: prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_storage_takeover_seconds", Help: "The last takeover: from the lock's last change this node saw to its own write of the lock."}),
		lost:        prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_storage_lease_lost_total", Help: "Times this node found the lock taken by another (it then stops: it never publishes again)."}),
		puts:        prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zarlog_storage_puts_total", Help: "Objects written to the bucket, by kind (tile, times, lock, checkpoint)."}, []string{"kind"}),
		replaced:    prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_storage_replaced_total", Help: "Objects beyond the lock's checkpoint that an earlier sequencer wrote with other content, replaced."}),
		putSeconds:  prometheus.NewHistogram(prometheus.HistogramOpts{Name: "zarlog_storage_commit_seconds", Help: "Time to make one checkpoint durable in the bucket (tiles, lock, public checkpoint).", Buckets: prometheus.ExponentialBuckets(1e-3, 2, 14)}),
		imported:    prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_storage_imported_total", Help: "Leaves read from the bucket into the local ledger (following, restoring)."}),
		bucketSize:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_storage_checkpoint_size", Help: "Tree size of the checkpoint in the bucket's lock, as this node last read or wrote it."}),
		errors:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zarlog_storage_errors_total", Help: "Failed bucket operations, by what was tried (commit, renew, follow)."}, []string{"op"}),
	}
	for _, k := range []string{"tile", "times", "lock", "checkpoint"} {
		m.puts.WithLabelValues(k)
	}
	for _, k := range []string{"commit", "renew", "follow"} {
		m.errors.WithLabelValues(k)
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.leader, m.leaseFresh, m.term, m.takeovers, m.takeoverSec, m.lost, m.puts, m.replaced, m.putSeconds, m.imported, m.bucketSize, m.errors} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
