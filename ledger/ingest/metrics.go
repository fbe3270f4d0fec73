package ingest

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the ingest's Prometheus metrics. They are registered on the
// Registerer given in Config (never the default registry).
type metrics struct {
	batchEvents    prometheus.Histogram
	batchMessages  prometheus.Histogram
	submitSeconds  prometheus.Histogram
	submitErrors   prometheus.Counter
	outcomes       *prometheus.CounterVec
	gapFilled      prometheus.Counter
	redelivered    prometheus.Counter
	gone           prometheus.Counter
	rewinds        prometheus.Counter
	streamPending  prometheus.Gauge
	ackPending     prometheus.Gauge
	inflight       prometheus.Gauge
	sessions       prometheus.Counter
	announceErrors prometheus.Counter
	receipts       *prometheus.CounterVec
	receiptsHeld   *prometheus.GaugeVec
	limitRefusals  *prometheus.CounterVec
	admissions     *prometheus.CounterVec
	backlogBytes   *prometheus.GaugeVec
	backlogMsgs    *prometheus.GaugeVec
	penalties      *prometheus.CounterVec
	disconnects    *prometheus.CounterVec
	heldBack       *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		batchEvents: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "zarlog_ingest_batch_events",
			Help:    "Events per Sink.Append call.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 14),
		}),
		batchMessages: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "zarlog_ingest_batch_messages",
			Help:    "NATS messages per Sink.Append call.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 14),
		}),
		submitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "zarlog_ingest_submit_seconds",
			Help:    "Latency of successful Sink.Append calls (durable when they return).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		submitErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zarlog_ingest_submit_errors_total",
			Help: "Sink.Append calls that failed (the batch is retried).",
		}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zarlog_ingest_outcomes_total",
			Help: "Durable outcomes of submitted events by kind (appended, duplicate, rejected).",
		}, []string{"kind"}),
		gapFilled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zarlog_ingest_gap_filled_total",
			Help: "Messages read directly from the stream because the consumer delivered a later one first.",
		}),
		redelivered: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zarlog_ingest_redelivered_total",
			Help: "Messages delivered again after the ingest had already decided them (acknowledged without resubmitting).",
		}),
		gone: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zarlog_ingest_gone_total",
			Help: "Stream sequences the ingest's cursor passed because their messages were gone from the stream before reaching it (acknowledged by another ingest, or removed by the stream's limits); their emitters publish them again.",
		}),
		rewinds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zarlog_ingest_stream_rewinds_total",
			Help: "Times the stream's last sequence was seen below the ingest's cursor: the stream lost acknowledged messages the ledger had decided and gives their sequences again.",
		}),
		streamPending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "zarlog_ingest_stream_pending_messages",
			Help: "Messages in the stream not yet delivered to the ingest (the lag).",
		}),
		ackPending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "zarlog_ingest_ack_pending_messages",
			Help: "Messages delivered to the ingest and not yet acknowledged (bounded by MaxAckPending).",
		}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "zarlog_ingest_inflight_messages",
			Help: "Messages the ingest holds in memory (received, not yet acknowledged).",
		}),
		sessions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zarlog_ingest_sessions_total",
			Help: "Consumer sessions started (1 plus the number of restarts after errors).",
		}),
		announceErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zarlog_ingest_announce_errors_total",
			Help: "Rejections that could not be announced on the rejected subject.",
		}),
		receipts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zarlog_ingest_receipt_requests_total",
			Help: "Receipt requests by reply status.",
		}, []string{"status"}),
		receiptsHeld: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "zarlog_ingest_receipt_requests_held",
			Help: "Receipt requests held (waiting for their event or a checkpoint), by emitter.",
		}, []string{"emitter"}),
		limitRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zarlog_ingest_limit_refusals_total",
			Help: "Requests and messages refused because their emitter, or all emitters together, reached a limit, by emitter and limit.",
		}, []string{"emitter", "limit"}),
		admissions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zarlog_ingest_admissions_total",
			Help: "Messages emitters published, by what the admission did: admitted (forwarded to the stream), over-limit (their emitter's backlog is full), refused (a reply subject outside the emitter's inbox).",
		}, []string{"result"}),
		backlogBytes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "zarlog_ingest_backlog_bytes",
			Help: "Bytes of messages admitted into the stream and not yet decided, by emitter.",
		}, []string{"emitter"}),
		backlogMsgs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "zarlog_ingest_backlog_messages",
			Help: "Messages admitted into the stream and not yet decided, by emitter.",
		}, []string{"emitter"}),
		penalties: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zarlog_ingest_penalties_total",
			Help: "Penalties of emitters that published on while their messages were refused, past refused-bytes-per-emitter (refused at once, and disconnected), by emitter.",
		}, []string{"emitter"}),
		disconnects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zarlog_ingest_disconnects_total",
			Help: "Connections closed of emitters in a penalty for ignoring their refusals, by emitter.",
		}, []string{"emitter"}),
		heldBack: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zarlog_ingest_held_back_total",
			Help: "What the ingest did not do because Config.Hold closed (a node without a fresh lease on the log): batch (a batch not appended, or appended and not acknowledged), receipt and status (requests answered unavailable).",
		}, []string{"what"}),
	}
	for _, r := range results {
		m.outcomes.WithLabelValues(r.String())
	}
	for _, w := range []string{"batch", "receipt", "status"} {
		m.heldBack.WithLabelValues(w)
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.batchEvents, m.batchMessages, m.submitSeconds,
			m.submitErrors, m.outcomes, m.gapFilled, m.redelivered, m.gone, m.rewinds, m.streamPending, m.ackPending,
			m.inflight, m.sessions, m.announceErrors, m.receipts, m.receiptsHeld, m.limitRefusals,
			m.admissions, m.backlogBytes, m.backlogMsgs, m.penalties, m.disconnects, m.heldBack} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("registering ingest metrics: %w", err)
			}
		}
	}
	return m, nil
}
