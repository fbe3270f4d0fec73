package witness

// This file is the log's witnessing loop: off the path of its receipts, at
// the cadence a public witness network accepts.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/merkle"
)

// Defaults of SubmitterConfig.
const (
	// DefaultInterval is the default time between two rounds of
	// witnessing: one add-checkpoint request per witness per minute, 1,440
	// a day, within what witness-network.org lists for small logs.
	DefaultInterval = time.Minute
	// DefaultRoundTimeout bounds a round by default.
	DefaultRoundTimeout = 10 * time.Second
)

// A LogSource is the log as the Submitter reads it: its latest signed
// checkpoint. *ledger.Ledger is one.
type LogSource interface {
	// Latest returns the latest signed checkpoint note (nil if none yet),
	// its checkpoint, and a channel closed when a newer one is published.
	Latest() (note []byte, cp merkle.Checkpoint, next <-chan struct{})
}

// SubmitterConfig configures a Submitter. Group, Log, Proofs, LogKey and
// Witnessed are required; every other field's zero value is documented.
type SubmitterConfig struct {
	// Group asks the witnesses (NewGroup with the log's policy).
	Group *Group
	// Log gives the checkpoints to have witnessed.
	Log LogSource
	// Proofs gives the consistency proofs the witnesses need (the ledger).
	Proofs merkle.ConsistencyProver
	// LogKey is the log's checkpoint verifier key: what the witnesses
	// return must still be the checkpoint sent, signed by it.
	LogKey note.Verifier
	// Witnessed keeps the checkpoints whose cosignatures meet the quorum.
	Witnessed *Witnessed
	// Interval is the least time between the starts of two rounds: each
	// witness gets at most one round of requests per Interval (a round is
	// one request, or more when the witness answers 409 and is asked again
	// from its size). Zero means DefaultInterval.
	Interval time.Duration
	// Timeout bounds one round. Zero means DefaultRoundTimeout.
	Timeout time.Duration
	// Now is the clock of the witnesses' status. Nil means time.Now. (The
	// rounds are paced with the time package's timers; tests run the
	// Submitter in a testing/synctest bubble.)
	Now func() time.Time
	// Logger receives the Submitter's logs. Nil discards them.
	Logger *slog.Logger
	// Registerer receives its metrics (zarlog_witnessing_*). Nil: none.
	Registerer prometheus.Registerer
}

// A Submitter has a log's checkpoints witnessed at a fixed cadence, apart
// from the path of the log's receipts (which carry the log's signature
// alone, at the log's own pace): it sends the latest signed checkpoint to
// the policy's witnesses at most once per Interval, and only when it is
// larger than the latest witnessed one (or none is witnessed yet), with the
// consistency proof from each witness's last size (Group). A checkpoint
// whose cosignatures meet the policy's quorum is kept durably in
// Witnessed before anyone sees it. A slow or dead witness delays only the
// round it is in; the log's signing never waits for it.
//
// A witness that refuses a checkpoint as inconsistent with one it cosigned
// (see WitnessResult.Err) is evidence that the log showed it another
// history, or has gone back: the Submitter logs it at error level, counts
// it (zarlog_witnessing_inconsistent_total) and reports it in Health until
// that witness cosigns again.
//
// Create it with NewSubmitter and run it with Run.
type Submitter struct {
	cfg SubmitterConfig
	log *slog.Logger
	m   *submitterMetrics

	mu     sync.Mutex
	status map[string]*WitnessStatus // by witness name
	order  []string
}

// A WitnessStatus is what the Submitter knows of one witness: its latest
// answer.
type WitnessStatus struct {
	Name string
	URL  string // its add-checkpoint URL
	// Cosigned is the size of the latest checkpoint it cosigned in a
	// round, and CosignedAt when (zero: never since the start).
	Cosigned   uint64
	CosignedAt time.Time
	// LastErr is the error of its latest round, nil if it cosigned; at is
	// when. Inconsistent reports whether that error was a refusal as
	// inconsistent (it wraps ErrInconsistent).
	LastErr      error
	LastAt       time.Time
	Inconsistent bool
	// Requests counts the add-checkpoint requests made to it.
	Requests int
}

type submitterMetrics struct {
	requests     *prometheus.CounterVec
	failures     *prometheus.CounterVec
	inconsistent *prometheus.CounterVec
	refusing     prometheus.Gauge
	rounds       *prometheus.CounterVec
	roundSeconds prometheus.Histogram
	size         prometheus.Gauge
	stored       prometheus.Gauge
}

// NewSubmitter returns a Submitter for cfg. It fails if a required field
// is missing or the metrics cannot be registered.
func NewSubmitter(cfg SubmitterConfig) (*Submitter, error) {
	if cfg.Group == nil || cfg.Log == nil || cfg.Proofs == nil || cfg.LogKey == nil || cfg.Witnessed == nil {
		return nil, errors.New("witness: submitter: Group, Log, Proofs, LogKey and Witnessed are required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultRoundTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &submitterMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zarlog_witnessing_requests_total",
			Help: "add-checkpoint requests sent to each witness."}, []string{"witness"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zarlog_witnessing_failures_total",
			Help: "Rounds in which a witness did not cosign (down, slow, refusing), by witness."}, []string{"witness"}),
		inconsistent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zarlog_witnessing_inconsistent_total",
			Help: "Refusals of the log's checkpoint as inconsistent with what the witness cosigned before, by witness: evidence of a fork or of a log gone back."}, []string{"witness"}),
		refusing: prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_witnessing_refusing_witnesses",
			Help: "Witnesses whose latest answer refused the log's checkpoint as inconsistent."}),
		rounds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "zarlog_witnessing_rounds_total",
			Help: "Rounds of witnessing, by result (witnessed: the quorum was met; not-witnessed: it was not)."}, []string{"result"}),
		roundSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "zarlog_witnessing_round_seconds",
			Help: "Time of a round of witnessing, the slowest witness's answer included.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		size: prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_witnessing_witnessed_size",
			Help: "Tree size of the latest witnessed checkpoint (its cosignatures meet the policy's quorum)."}),
		stored: prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_witnessing_witnessed_timestamp_seconds",
			Help: "Unix time the latest witnessed checkpoint was kept."}),
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{m.requests, m.failures, m.inconsistent, m.refusing, m.rounds, m.roundSeconds, m.size, m.stored} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("witness: submitter: registering metrics: %w", err)
			}
		}
	}
	m.rounds.WithLabelValues("witnessed")
	m.rounds.WithLabelValues("not-witnessed")
	s := &Submitter{cfg: cfg, log: log, m: m, status: map[string]*WitnessStatus{}}
	for _, c := range cfg.Group.Clients() {
		s.status[c.Name()] = &WitnessStatus{Name: c.Name(), URL: c.URL()}
		s.order = append(s.order, c.Name())
		m.requests.WithLabelValues(c.Name())
		m.failures.WithLabelValues(c.Name())
		m.inconsistent.WithLabelValues(c.Name())
	}
	if n, cp, _ := cfg.Witnessed.Latest(); n != nil {
		cfg.Group.Seed(n)
		m.size.Set(float64(cp.Size))
	}
	return s, nil
}

// Run has the log's checkpoints witnessed until ctx ends, then returns
// ctx's error, after the round in progress (bounded by Timeout). The first
// round is at once (as soon as the log has a checkpoint of a non-empty tree
// larger than the witnessed one); the next ones at least Interval after the start of the
// one before, each with the latest checkpoint at the time it starts.
func (s *Submitter) Run(ctx context.Context) error {
	var last time.Time // the start of the last round; zero: none yet
	for {
		if err := s.waitForNew(ctx); err != nil {
			return err
		}
		if !last.IsZero() {
			if wait := s.cfg.Interval - time.Since(last); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return ctx.Err()
				case <-t.C:
				}
			}
		}
		last = time.Now()
		note, cp, _ := s.cfg.Log.Latest()
		s.round(ctx, note, cp)
	}
}

// waitForNew waits until the log has a checkpoint to have witnessed: one
// larger than the latest witnessed checkpoint, or any if none is.
func (s *Submitter) waitForNew(ctx context.Context) error {
	for {
		n, cp, next := s.cfg.Log.Latest()
		if n != nil && needsWitnessing(cp, s.cfg.Witnessed) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-next:
		}
	}
}

// needsWitnessing reports whether the log's checkpoint cp is one to send:
// it is not empty, and no checkpoint is witnessed yet or cp is larger than
// the witnessed one. (An empty tree is not worth a request.)
func needsWitnessing(cp merkle.Checkpoint, w *Witnessed) bool {
	n, wcp, _ := w.Latest()
	return cp.Size > 0 && (n == nil || cp.Size > wcp.Size)
}

// Round sends the log's latest checkpoint to the witnesses now, whether or
// not it is new, and returns once it is witnessed and kept (or not): for
// tools and tests. Run paces its rounds itself.
func (s *Submitter) Round(ctx context.Context) error {
	note, cp, _ := s.cfg.Log.Latest()
	if note == nil {
		return errors.New("witness: submitter: the log has no checkpoint yet")
	}
	return s.round(ctx, note, cp)
}

// round has one checkpoint cosigned and keeps it if the quorum is met; it
// returns why it was not kept.
func (s *Submitter) round(ctx context.Context, signed []byte, cp merkle.Checkpoint) error {
	rctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	start := time.Now()
	r, err := s.cfg.Group.Round(rctx, signed, s.cfg.Proofs)
	s.m.roundSeconds.Observe(time.Since(start).Seconds())
	if err != nil {
		s.m.rounds.WithLabelValues("not-witnessed").Inc()
		s.log.Error("witnessing: the log's checkpoint cannot be sent", "size", cp.Size, "err", err)
		return err
	}
	s.record(cp, r.Witnesses)
	if r.Quorum == nil {
		err = s.keep(r.Note, signed, cp)
	} else {
		err = r.Quorum
	}
	if err != nil {
		s.m.rounds.WithLabelValues("not-witnessed").Inc()
		s.log.Warn("witnessing: the checkpoint is not witnessed; the next round tries again", "size", cp.Size, "interval", s.cfg.Interval, "err", err)
		return err
	}
	s.m.rounds.WithLabelValues("witnessed").Inc()
	s.log.Debug("witnessing: witnessed", "size", cp.Size, "seconds", time.Since(start).Seconds())
	return nil
}

// keep checks that the witnesses returned the checkpoint sent, still signed
// by the log, and keeps it.
func (s *Submitter) keep(out, signed []byte, cp merkle.Checkpoint) error {
	got, err := merkle.Open(out, s.cfg.LogKey)
	if err != nil {
		return fmt.Errorf("the cosigned note does not open with the log's key: %w", err)
	}
	body := signed[:bytes.Index(signed, []byte("\n\n"))+2]
	if got.Origin != cp.Origin || got.Size != cp.Size || got.Hash != cp.Hash || !bytes.HasPrefix(out, body) {
		return fmt.Errorf("the cosigned note is of another checkpoint (size %d) than the one sent (size %d)", got.Size, cp.Size)
	}
	if err := s.cfg.Witnessed.Put(out); err != nil {
		return err
	}
	s.m.size.Set(float64(cp.Size))
	s.m.stored.Set(float64(s.cfg.Now().UnixMilli()) / 1000)
	return nil
}

// record updates the witnesses' status and metrics after a round, and logs
// what went wrong.
func (s *Submitter) record(cp merkle.Checkpoint, res []WitnessResult) {
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range res {
		st := s.status[r.Name]
		if st == nil {
			continue
		}
		st.Requests += r.Requests
		st.LastAt = now
		st.LastErr = r.Err
		st.Inconsistent = errors.Is(r.Err, ErrInconsistent)
		s.m.requests.WithLabelValues(r.Name).Add(float64(r.Requests))
		switch {
		case r.Err == nil:
			st.Cosigned, st.CosignedAt = cp.Size, now
		case st.Inconsistent:
			s.m.failures.WithLabelValues(r.Name).Inc()
			s.m.inconsistent.WithLabelValues(r.Name).Inc()
			s.log.Error("witnessing: a witness REFUSED the log's checkpoint as inconsistent with what it cosigned before: the log has shown it another history, or has gone back",
				"witness", r.Name, "url", st.URL, "size", cp.Size, "err", r.Err)
		default:
			s.m.failures.WithLabelValues(r.Name).Inc()
			s.log.Warn("witnessing: a witness did not cosign", "witness", r.Name, "size", cp.Size, "err", r.Err)
		}
	}
	refusing := 0
	for _, st := range s.status {
		if st.Inconsistent {
			refusing++
		}
	}
	s.m.refusing.Set(float64(refusing))
}

// Status returns the status of each witness asked, in the policy's order.
func (s *Submitter) Status() []WitnessStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]WitnessStatus, len(s.order))
	for i, n := range s.order {
		out[i] = *s.status[n]
	}
	return out
}

// Health returns an error naming every witness whose latest answer refused
// the log's checkpoint as inconsistent with what it cosigned before, and
// nil if none did. Such a refusal does not go away by itself: it is
// evidence (the witness keeps it too) that someone showed the witness
// another history signed by the log's key, or that the log went back.
func (s *Submitter) Health() error {
	var errs []error
	for _, st := range s.Status() {
		if st.Inconsistent {
			errs = append(errs, fmt.Errorf("witness %s refused the log's checkpoint as inconsistent with what it cosigned (%s): %w",
				st.Name, st.LastAt.UTC().Format(time.RFC3339), st.LastErr))
		}
	}
	return errors.Join(errs...)
}

// Witnessed returns where the witnessed checkpoints are kept.
func (s *Submitter) Witnessed() *Witnessed { return s.cfg.Witnessed }
