package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/workload"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// A LedgerConfig configures a measurement of the ledger's append path. Every
// field's zero value is documented.
type LedgerConfig struct {
	// Dir is the ledger's Pebble directory, which must be empty or absent.
	// Required.
	Dir string
	// Batch is the number of events per Append call. Zero means 1000.
	Batch int
	// Callers is the number of goroutines calling Append at once, each
	// appending the events of its own share of the games, in order. Zero
	// means 1 (the ingest's pattern: one Append per Submit).
	Callers int
	// CheckpointInterval is the ledger's (Config.CheckpointInterval). Zero
	// means the ledger's default, 100 ms.
	CheckpointInterval time.Duration
	// Progress, if not nil, is called with the number of events appended
	// so far, after each Append (from the callers' goroutines, one at a
	// time).
	Progress func(done int)
}

// OpenLedger opens a ledger in dir that accepts w's events, with the
// benchmark log key and w's emitters' keys, and makes the checks w's
// stream is made for (Workload.Checks): with w.Moves, the rules engine
// (movecheck.Checker, as `zarlog serve` has it); with w.RealBeacons, the
// ledger's own drand chains (quicknet, BLS) and a clock that shows
// workload.QuicknetStart when the ledger is opened and runs at the real
// rate from there (so that every recorded round is a day away), and the
// chains of the stream (workload.Chains) with w.BeaconCache; otherwise
// the fake chain of package internal/workload and the real clock. metrics,
// if not nil, receives the ledger's metrics.
func OpenLedger(ctx context.Context, dir string, w *Workload, interval time.Duration, metrics prometheus.Registerer) (*ledger.Ledger, error) {
	cfg, err := ledgerConfig(dir, w, interval, metrics)
	if err != nil {
		return nil, err
	}
	return ledger.Open(ctx, cfg)
}

// ledgerConfig is the configuration OpenLedger opens.
func ledgerConfig(dir string, w *Workload, interval time.Duration, metrics prometheus.Registerer) (ledger.Config, error) {
	signer, verifier, err := logKey(ledgerOrigin)
	if err != nil {
		return ledger.Config{}, err
	}
	cfg := ledger.Config{Dir: dir, Signer: signer, Verifier: verifier, Emitters: w.Keyring,
		Beacons: workload.Beacons, CheckpointInterval: interval, Metrics: metrics, GameCacheBytes: w.GameCacheBytes}
	if w.Moves {
		cfg.Moves = movecheck.Checker{}
	}
	if w.RealBeacons {
		// Quicknet and the workload's own chain of the same scheme, both
		// *drand.Chain: the ledger's verified-beacon cache applies to them
		// as to quicknet in `zarlog serve` (off with w.BeaconCache < 0).
		cfg.Beacons = events.BeaconsOf(workload.Chains)
		cfg.BeaconCache = w.BeaconCache
		off := time.Until(workload.QuicknetStart)
		cfg.Now = func() time.Time { return time.Now().Add(off) }
	}
	return cfg, nil
}

// ledgerOrigin is the origin of the ledgers OpenLedger opens.
const ledgerOrigin = "zarlog.bench.zarlog.example/log"

// LedgerVerifierKey returns the verifier key of the ledgers OpenLedger
// opens: what verifies their checkpoints and proof bundles.
func LedgerVerifierKey() (string, error) {
	_, vkey, err := workload.Key(ledgerOrigin)
	return vkey, err
}

// Inputs returns the events of w as ledger inputs (the transport's emitter
// and message id set as the ingest sets them).
func (w *Workload) Inputs() []ledger.Input {
	out := make([]ledger.Input, len(w.Events))
	for i, e := range w.Events {
		out[i] = ledger.Input{Emitter: e.Emitter, MsgID: e.ID, Data: e.Data}
	}
	return out
}

// Ledger appends w's events to a new ledger in cfg.Dir and returns when a
// signed checkpoint covers them all. Every event must be appended (a
// rejection is an error). Elapsed runs from the first Append until the
// covering checkpoint is published. Metrics: "events/group", the mean
// number of events per group commit (one fsync each).
func Ledger(ctx context.Context, cfg LedgerConfig, w *Workload) (Result, error) {
	if cfg.Dir == "" {
		return Result{}, errors.New("bench: LedgerConfig.Dir is empty")
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 1000
	}
	if cfg.Callers <= 0 {
		cfg.Callers = 1
	}
	reg := prometheus.NewRegistry()
	l, err := OpenLedger(ctx, cfg.Dir, w, cfg.CheckpointInterval, reg)
	if err != nil {
		return Result{}, err
	}
	defer l.Close()
	shares := splitByGame(w.Inputs(), w.Events, cfg.Callers)

	startCPU, start := cpuTime(), time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	var last uint64
	done := 0
	for _, share := range shares {
		wg.Go(func() {
			for i := 0; i < len(share); i += cfg.Batch {
				outs, err := l.Append(ctx, share[i:min(i+cfg.Batch, len(share))])
				if err == nil {
					err = allAppended(outs)
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				for _, o := range outs {
					last = max(last, o.Index)
				}
				done += len(outs)
				if cfg.Progress != nil {
					cfg.Progress(done)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return Result{}, firstErr
	}
	if _, err := l.WaitCovering(ctx, last); err != nil {
		return Result{}, fmt.Errorf("bench: waiting for a checkpoint covering %d: %w", last, err)
	}
	elapsed := time.Since(start)
	groups, err := histogramCount(reg, "zarlog_ledger_group_inputs")
	if err != nil {
		return Result{}, err
	}
	res := Result{Name: "zarlog-full", Events: len(w.Events), Elapsed: elapsed, Metrics: map[string]float64{}}
	if groups > 0 {
		res.Metrics["events/group"] = float64(len(w.Events)) / groups
	}
	res.cpuMetrics(startCPU)
	return res, nil
}

// allAppended returns an error unless every outcome is Appended.
func allAppended(outs []ledger.Outcome) error {
	for _, o := range outs {
		if o.Result != ledger.Appended {
			return fmt.Errorf("bench: event %s was not appended: %s %v", o.ID, o.Result, o.Reject)
		}
	}
	return nil
}

// splitByGame splits inputs into n shares by game, each in stream order.
func splitByGame(in []ledger.Input, evs []workload.Event, n int) [][]ledger.Input {
	shares := make([][]ledger.Input, n)
	owner := map[string]int{}
	next := 0
	for i, e := range evs {
		c, ok := owner[e.Game]
		if !ok {
			c = next % n
			next++
			owner[e.Game] = c
		}
		shares[c] = append(shares[c], in[i])
	}
	return shares
}

// histogramCount returns the sample count of a histogram in reg.
func histogramCount(reg *prometheus.Registry, name string) (float64, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return 0, fmt.Errorf("bench: reading the ledger's metrics: %w", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		var n uint64
		for _, m := range mf.GetMetric() {
			n += histogram(m).GetSampleCount()
		}
		return float64(n), nil
	}
	return 0, nil
}

func histogram(m *dto.Metric) *dto.Histogram { return m.GetHistogram() }

// beaconChecks adds to metrics how the ledger whose metrics are in reg
// checked the anchored-v1 beacons (zarlog_ledger_beacon_checks_total):
// "beacon-pairings" (BLS pairing checks) and "beacon-cached" (answered by
// its verified-beacon cache). Without a cache the ledger has no such
// counter, and every beacon was a pairing check: nothing is added. It adds
// "duplicates" too (zarlog_ledger_duplicates_total): the inputs the ledger
// found in the log already, the SDK's resends and the ingest's
// redeliveries, each parsed and its signature checked a second time.
func beaconChecks(reg *prometheus.Registry, metrics map[string]float64) error {
	mfs, err := reg.Gather()
	if err != nil {
		return fmt.Errorf("bench: reading the ledger's metrics: %w", err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "zarlog_ledger_duplicates_total" {
			n := 0.0
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
			metrics["duplicates"] = n
		}
		if mf.GetName() == "zarlog_ledger_game_loads_total" {
			for _, m := range mf.GetMetric() {
				metrics["game-loads"] = m.GetCounter().GetValue()
			}
		}
		if mf.GetName() != "zarlog_ledger_beacon_checks_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				switch lp.GetValue() {
				case "pairing":
					metrics["beacon-pairings"] = m.GetCounter().GetValue()
				case "cached":
					metrics["beacon-cached"] = m.GetCounter().GetValue()
				}
			}
		}
	}
	return nil
}
