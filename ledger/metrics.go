package ledger

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/merkle"
)

// metrics are the ledger's Prometheus metrics.
type metrics struct {
	appended    prometheus.Counter
	duplicates  prometheus.Counter
	rejected    *prometheus.CounterVec
	groupSize   prometheus.Histogram
	commit      prometheus.Histogram
	treeSize    prometheus.Gauge
	cpSize      prometheus.Gauge
	cpTime      prometheus.Gauge
	signSeconds prometheus.Histogram
	// publishSeconds and publishFailures time Config.Publish and count
	// its failures; imported counts leaves Import appended.
	publishSeconds  prometheus.Histogram
	publishFailures prometheus.Counter
	imported        prometheus.Counter
	stopped         prometheus.Gauge
	overQuota       *prometheus.CounterVec

	limitRefusals *prometheus.CounterVec
	openGames     *prometheus.GaugeVec
	openBytes     *prometheus.GaugeVec
	gameCache     prometheus.Gauge
	gameLoads     prometheus.Counter
}

// newMetrics makes the ledger's metrics and registers them on reg, if it is
// not nil, with the counters of the verified-beacon cache, if not nil.
func newMetrics(reg prometheus.Registerer, beacons *drand.Cache) (*metrics, error) {
	m := &metrics{
		appended:   prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_ledger_appended_total", Help: "Events appended to the log."}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_ledger_duplicates_total", Help: "Inputs that were already in the log (same id, same bytes)."}),
		rejected:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zarlog_ledger_rejected_total", Help: "Inputs refused, by rejection code."}, []string{"code"}),
		groupSize: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "zarlog_ledger_group_inputs", Help: "Inputs per group commit (one fsync).",
			Buckets: prometheus.ExponentialBuckets(1, 4, 8)}),
		commit: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "zarlog_ledger_group_seconds", Help: "Time to sequence and durably commit one group.",
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 16)}),
		treeSize:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_ledger_tree_size", Help: "Leaves durably in the log."}),
		cpSize:      prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_ledger_checkpoint_size", Help: "Tree size of the latest published checkpoint."}),
		cpTime:      prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_ledger_checkpoint_published_seconds", Help: "Unix time the latest checkpoint was published."}),
		signSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "zarlog_ledger_sign_seconds", Help: "Time to store a signed checkpoint durably.", Buckets: prometheus.ExponentialBuckets(100e-6, 2, 16)}),
		publishSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "zarlog_ledger_publish_seconds",
			Help: "Time Config.Publish took to accept a checkpoint (with --storage: its tiles, the lock and the checkpoint written to the bucket).", Buckets: prometheus.ExponentialBuckets(1e-3, 2, 14)}),
		publishFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_ledger_publish_failures_total", Help: "Checkpoints Config.Publish failed to accept (offered again at the next round)."}),
		imported:        prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_ledger_imported_total", Help: "Leaves appended by Import (a standby's copy of the bucket)."}),
		stopped:         prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_ledger_stopped", Help: "1 once a failed write stopped the ledger."}),
		overQuota: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zarlog_ledger_rejected_over_quota_total",
			Help: "Rejections not stored because their emitter's quota in the rejected store is full (counted in its summary instead), by emitter (\"(unconfigured)\": inputs of emitters the ledger has no key for)."}, []string{"emitter"}),
		limitRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zarlog_ledger_limit_refusals_total",
			Help: "Events refused because they would take their emitter's open games (or every emitter's, or their game) past a limit, by emitter and limit."}, []string{"emitter", "limit"}),
		openGames: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "zarlog_ledger_open_games", Help: "Open games (committed, not closed), by emitter."}, []string{"emitter"}),
		openBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "zarlog_ledger_open_game_bytes", Help: "Bytes of the states of the open games, by emitter."}, []string{"emitter"}),
		gameCache: prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_ledger_game_cache_bytes", Help: "Bytes of the game states the sequencer keeps decoded in memory."}),
		gameLoads: prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_ledger_game_loads_total", Help: "Game states the sequencer read back from the store because they were not in its cache (--game-cache-bytes), or were held there cut to their last events and the event needed more of the history (a move of an older roll, a roll id that may repeat one)."}),
	}
	for _, c := range events.Codes() {
		m.rejected.WithLabelValues(string(c))
	}
	for _, c := range []events.Code{CodeInternal, CodeOverLimit, CodeGameTooLarge} {
		m.rejected.WithLabelValues(string(c))
	}
	m.overQuota.WithLabelValues("(unconfigured)")
	if reg != nil {
		cs := []prometheus.Collector{m.appended, m.duplicates, m.rejected, m.groupSize, m.commit, m.treeSize, m.cpSize, m.cpTime, m.signSeconds,
			m.publishSeconds, m.publishFailures, m.imported, m.stopped, m.overQuota, m.limitRefusals, m.openGames, m.openBytes, m.gameCache, m.gameLoads}
		if beacons != nil {
			const help = "Beacon signatures checked (anchored-v1), by how: \"cached\" (found in the verified-beacon cache) or \"pairing\" (a BLS pairing check; refusals included)."
			cs = append(cs,
				prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "zarlog_ledger_beacon_checks_total", Help: help, ConstLabels: prometheus.Labels{"how": "cached"}},
					func() float64 { h, _ := beacons.Stats(); return float64(h) }),
				prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "zarlog_ledger_beacon_checks_total", Help: help, ConstLabels: prometheus.Labels{"how": "pairing"}},
					func() float64 { _, m := beacons.Stats(); return float64(m) }))
		}
		for _, c := range cs {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func (m *metrics) group(n int, c groupCounts, d time.Duration) {
	m.appended.Add(float64(c.appended))
	m.duplicates.Add(float64(c.duplicates))
	for _, code := range c.rejected {
		m.rejected.WithLabelValues(string(code)).Inc()
	}
	m.groupSize.Observe(float64(n))
	m.commit.Observe(d.Seconds())
}

func (m *metrics) checkpoint(cp merkle.Checkpoint) {
	m.cpSize.Set(float64(cp.Size))
	m.cpTime.SetToCurrentTime()
}
