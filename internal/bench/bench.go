// Package bench measures zarlog's ingest path on the machine it runs on, and
// github.com/transparency-dev/tessera with its POSIX driver on the same
// events, so that the two can be compared in one run (issues 3 and 4;
// docs/BENCHMARKS.md has the numbers and how they were taken).
//
// Each function runs one measurement and returns a Result: Ledger (zarlog's
// ledger, the full append path: parse, signatures, dedup, game state
// machine, projections, tree, one fsync per group), Tessera (Tessera's
// appender on its POSIX driver), and EndToEnd (SDK clients publishing over
// an embedded nats-server, the ingest, the ledger). All count an event as
// done once it is durable and covered by a published signed checkpoint.
// The events come from package internal/workload (NewWorkload), generated
// before the clock starts.
//
// The `zarlog bench` command and the Benchmark functions of this package's
// tests (and of package ledger) call these functions; the tests report
// Result's fields as custom benchmark metrics.
package bench

import (
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/workload"
)

// A Result is one measurement.
type Result struct {
	// Name says what ran, such as "zarlog-full" or "tessera-posix".
	Name string
	// Events is the number of events (entries) appended.
	Events int
	// Elapsed is the time from the first append (or publish) until a
	// published signed checkpoint covered every event.
	Elapsed time.Duration
	// Latencies, when measured (EndToEnd): from each event's publication
	// to the publication of the first signed checkpoint covering it.
	P50, P99, Max time.Duration
	// Receipts, when asked for (EndToEndConfig.Receipts): how many, the
	// latencies from each one's event's publication to the SDK's checked
	// receipt, and their sizes as tlog-proof files (median and largest).
	Receipts                           int
	ReceiptP50, ReceiptP99, ReceiptMax time.Duration
	ReceiptBytesP50, ReceiptBytesMax   int
	// Stages is the CPU time per event of each stage, in microseconds, from
	// a CPU profile of the run (end to end only; nil when the process was
	// already being profiled).
	Stages map[string]float64
	// Sides is the same CPU time by side: the log's, the emitters', the
	// runtime's (cpuSplit; end to end only).
	Sides map[string]float64
	// Settle is the run's settling: the answers still in flight when its
	// measured time ended and the store work its writes left due, and the
	// CPU with it (end to end only).
	Settle *Settle
	// Metrics holds further numbers by unit, as testing.B.ReportMetric
	// takes them (for example "events/group").
	Metrics map[string]float64
}

// EventsPerSec returns Events over Elapsed.
func (r Result) EventsPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Events) / r.Elapsed.Seconds()
}

func (r Result) String() string {
	s := fmt.Sprintf("%s: %d events in %v: %.0f events/s", r.Name, r.Events, r.Elapsed.Round(time.Millisecond), r.EventsPerSec())
	if r.P99 > 0 {
		s += fmt.Sprintf(", publish→checkpoint p50 %v p99 %v max %v", r.P50.Round(time.Microsecond), r.P99.Round(time.Microsecond), r.Max.Round(time.Microsecond))
	}
	if r.Receipts > 0 {
		s += fmt.Sprintf(", %d receipts: publish→receipt p50 %v p99 %v max %v, %d bytes (median) %d (largest)", r.Receipts,
			r.ReceiptP50.Round(time.Microsecond), r.ReceiptP99.Round(time.Microsecond), r.ReceiptMax.Round(time.Microsecond), r.ReceiptBytesP50, r.ReceiptBytesMax)
	}
	keys := make([]string, 0, len(r.Metrics))
	for k := range r.Metrics {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s += fmt.Sprintf(", %.4g %s", r.Metrics[k], k)
	}
	return s
}

// A Workload is a pre-generated stream of events with the keys that
// verify them.
type Workload struct {
	Events  []workload.Event
	Keyring *events.Keyring
	// Emitters are the emitter ids, and VerifierKeys their keys.
	Emitters     []string
	VerifierKeys []string
	// MeanBytes is the mean event size; SignedShare the share of events
	// that carry an Ed25519 signature.
	MeanBytes, SignedShare float64
	// Moves and RealBeacons are the stream's (workload.Config): the
	// ledgers OpenLedger opens for it check what they say, as `zarlog
	// serve` does.
	Moves, RealBeacons bool
	// BeaconGamesPerRound is the stream's (workload.Config), with
	// RealBeacons: how many anchored-v1 games share a round.
	BeaconGamesPerRound int
	// BeaconCache is the ledgers' verified-beacon cache
	// (ledger.Config.BeaconCache): zero means the ledger's default, as
	// `zarlog serve` runs it; negative means none.
	BeaconCache int
	// GameCacheBytes bounds the ledgers' game cache
	// (ledger.Config.GameCacheBytes): zero means the ledger's default, as
	// `zarlog serve` runs it.
	GameCacheBytes int64
}

// Checks names the checks a ledger of w makes: "production" (the rules
// engine checks every move, anchored-v1 beacons are real and their BLS
// signatures checked, as `zarlog serve` runs), "structural" (the
// configuration of the benchmarks until issue 31: moves checked
// structurally, a fake drand chain), or "mixed" for any other combination.
func (w *Workload) Checks() string {
	switch {
	case w.Moves && w.RealBeacons:
		return ChecksProduction
	case !w.Moves && !w.RealBeacons:
		return ChecksStructural
	}
	return "mixed"
}

// The named configurations of the checks (Workload.Checks, Config.Checks).
const (
	ChecksProduction = "production"
	ChecksStructural = "structural"
)

// WorkloadConfig returns the stream's configuration for the named checks.
func WorkloadConfig(checks string) (workload.Config, error) {
	switch checks {
	case "", ChecksProduction:
		return workload.Config{Moves: true, RealBeacons: true}, nil
	case ChecksStructural:
		return workload.Config{}, nil
	}
	return workload.Config{}, fmt.Errorf("bench: unknown checks %q (want %s or %s)", checks, ChecksProduction, ChecksStructural)
}

// NewWorkload generates n events of the stream cfg describes.
func NewWorkload(cfg workload.Config, n int) (*Workload, error) {
	g, err := workload.New(cfg)
	if err != nil {
		return nil, err
	}
	evs, err := g.Take(n)
	if err != nil {
		return nil, err
	}
	compact(evs)
	_, mean, signed := workload.Stats(evs)
	return &Workload{Events: evs, Keyring: g.Keyring(), Emitters: g.Emitters(), VerifierKeys: g.VerifierKeys(), MeanBytes: mean, SignedShare: signed,
		Moves: cfg.Moves, RealBeacons: cfg.RealBeacons, BeaconGamesPerRound: g.BeaconGamesPerRound()}, nil
}

// compact moves the bytes of evs into two allocations, one string for the
// ids, games and emitters and one slice for the data. The benchmark's
// process shares its garbage collector with the system it measures, and a
// pre-generated stream of a million small objects is live throughout: each
// collection had to mark every one of them (gctrace: a live heap of 260–360
// MB for 300k events, against the ledger's 70). In production the events
// live in the backends' processes, not in zarlog's heap.
func compact(evs []workload.Event) {
	var sb strings.Builder
	ids, data := 0, 0
	for _, e := range evs {
		ids += len(e.ID)
		data += len(e.Data)
	}
	sb.Grow(ids) // and the emitters and games, once each
	type span struct{ emitter, id, game [2]int }
	spans := make([]span, len(evs))
	seen := map[string][2]int{}
	intern := func(v string) [2]int {
		if r, ok := seen[v]; ok {
			return r
		}
		r := [2]int{sb.Len(), sb.Len() + len(v)}
		sb.WriteString(v)
		seen[v] = r
		return r
	}
	for i, e := range evs {
		spans[i].emitter, spans[i].game = intern(e.Emitter), intern(e.Game)
		spans[i].id = [2]int{sb.Len(), sb.Len() + len(e.ID)}
		sb.WriteString(e.ID)
	}
	all := sb.String()
	arena := make([]byte, 0, data)
	for i := range evs {
		e, sp := &evs[i], spans[i]
		e.Emitter, e.ID, e.Game = all[sp.emitter[0]:sp.emitter[1]], all[sp.id[0]:sp.id[1]], all[sp.game[0]:sp.game[1]]
		start := len(arena)
		arena = append(arena, e.Data...)
		e.Data = arena[start:len(arena):len(arena)]
	}
}

// Leaves returns the events' bytes.
func (w *Workload) Leaves() [][]byte {
	out := make([][]byte, len(w.Events))
	for i, e := range w.Events {
		out[i] = e.Data
	}
	return out
}

// logKey returns a checkpoint signer and verifier for a benchmark log.
func logKey(origin string) (note.Signer, note.Verifier, error) {
	s, vkey, err := workload.Key(origin)
	if err != nil {
		return nil, nil, err
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	return s, v, nil
}

// percentiles returns the 50th and 99th percentile and the maximum of d,
// which it sorts.
func percentiles(d []time.Duration) (p50, p99, maxD time.Duration) {
	if len(d) == 0 {
		return 0, 0, 0
	}
	slices.Sort(d)
	at := func(p float64) time.Duration { return d[min(len(d)-1, int(p*float64(len(d))))] }
	return at(0.50), at(0.99), d[len(d)-1]
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuMetrics sets "cpu-µs/event", the process's CPU time since start per
// event, and "cores", that CPU time over the elapsed time.
func (r *Result) cpuMetrics(startCPU time.Duration) {
	r.cpuMetricsOf(cpuTime() - startCPU)
}

// cpuMetricsOf sets "cpu-µs/event" and "cores" from the run's CPU time cpu.
func (r *Result) cpuMetricsOf(cpu time.Duration) {
	if r.Metrics == nil {
		r.Metrics = map[string]float64{}
	}
	if r.Events > 0 {
		r.Metrics["cpu-µs/event"] = cpu.Seconds() * 1e6 / float64(r.Events)
	}
	if r.Elapsed > 0 {
		r.Metrics["cores"] = cpu.Seconds() / r.Elapsed.Seconds()
	}
}
