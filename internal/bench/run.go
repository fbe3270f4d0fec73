// Run is `zarlog bench`: the measurements of this package in one run on
// this machine, with the figures around them
// that a reader of docs/BENCHMARKS.md asks for, and reports them as text or
// JSON. The run:
//
//  1. generates the events (package internal/workload: games of the three
//     schemes in play at once, interleaved, spread over the emitters);
//  2. end to end (EndToEnd): one SDK client per emitter publishes
//     them to an embedded nats-server, the ingest appends them to the
//     ledger. First as fast as the emitters can (events/s; the latencies
//     then measure the queue), then, on a fresh log, paced at half that
//     rate: each event's publish→checkpoint latency under a load the
//     machine sustains, and the publish→receipt latency of the SDK's
//     checked receipts of every game's commit and every ReceiptSample-th
//     event, with the receipts' sizes (a Rate given runs only that pass);
//  3. the ledger's size on disk per event;
//  4. the proof bundles of finished games, built from that ledger
//     (publisher.BuildBundle) and verified as zarlog-verify does
//     (verifier.Verify with the log's and the emitters' keys): bytes and
//     verify time per game, by scheme;
//  5. with Tessera set, the ledger's append path alone (Ledger, one
//     caller in calls of 1000, as docs/BENCHMARKS.md compares it) and
//     Tessera's POSIX log (Tessera, at its default batching and at
//  4096. on the same events, and their size on disk.
//
// The checks are those of `zarlog serve` by default (Config.Checks
// "production": the rules engine checks every move, anchored-v1 games carry
// BLS-signed beacons, BeaconGamesPerRound games to a round, which the ledger
// checks with a pairing check per round through its verified-beacon cache,
// as `zarlog serve`), or those
// of the benchmarks until issue 31 ("structural": moves checked
// structurally, a fake drand chain, whose anchored-v1 bundles the verifier
// refuses, so they are not built). The report says which (Report.Config).

package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/zarlog/zarlog/bucket"
	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/internal/serve"
	"github.com/zarlog/zarlog/internal/workload"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/publisher"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/verifier"
)

// Defaults of Config.
const (
	DefaultEvents   = 200_000
	DefaultEmitters = 4
	DefaultGames    = 256
	DefaultBundles  = 40
)

// Config configures a run. Every field's zero value is documented.
type Config struct {
	// Dir is a scratch directory for the logs, which is removed at the end.
	// Zero means a new temporary directory.
	Dir string
	// Events is the number of events. Zero means DefaultEvents.
	Events int
	// Emitters is the number of emitters (game backends), each with its own
	// SDK client and NATS connection. Zero means DefaultEmitters.
	Emitters int
	// Games is the number of games in play at once. Zero means DefaultGames.
	Games int
	// Mix names the schemes' shares of the games (workload.ParseMix).
	// Zero means "mixed".
	Mix string
	// Rate is the offered load in events/s of a single end-to-end pass.
	// Zero means two passes: as fast as the emitters can publish, then at
	// half the rate measured.
	Rate int
	// Bundles is how many finished games' bundles are built and verified
	// per scheme. Zero means DefaultBundles.
	Bundles int
	// Tessera adds the ledger's append path alone and Tessera's POSIX log
	// on the same events.
	Tessera bool
	// Checks names the checks the ledger makes (and the stream is made
	// for): ChecksProduction, those of `zarlog serve`, or ChecksStructural,
	// the benchmarks' configuration until issue 31. Zero means
	// ChecksProduction.
	Checks string
	// BeaconGamesPerRound is, with ChecksProduction, how many anchored-v1
	// games share a drand round (workload.Config.BeaconGamesPerRound,
	// package internal/workload's "Rounds"). Zero means
	// workload.DefaultBeaconGamesPerRound.
	BeaconGamesPerRound int
	// BeaconCache is the ledgers' verified-beacon cache
	// (ledger.Config.BeaconCache). Zero means the ledger's default, as
	// `zarlog serve` runs it; negative means none.
	BeaconCache int
	// GameCacheBytes bounds the ledgers' game cache
	// (ledger.Config.GameCacheBytes, `zarlog serve --game-cache-bytes`).
	// Zero means the ledger's default, as `zarlog serve` runs it.
	GameCacheBytes int64
	// Progress, if not nil, is called as the run goes: the step, and how
	// many of its total items are done.
	Progress func(step string, done, total int)
	// Profile, if not nil, receives the CPU profile (pprof format) of the
	// end-to-end run at full speed, from which the report's split by stage
	// is computed: the whole picture, for `go tool pprof`.
	Profile io.Writer
	// AllocProfile, if not nil, receives the allocations of the same run
	// (EndToEndConfig.AllocProfile).
	AllocProfile io.Writer
	// Pace is PaceSaturated, or PaceHuman: the runs of PaceSaturated, then
	// the human pace (Human, with Human's configuration) in the same
	// invocation. Zero means PaceSaturated.
	Pace string
	// Human configures the human pace (its Dir, Emitters and Checks are
	// set from this Config's).
	Human HumanConfig
	// Storage, if not empty, is an s3://BUCKET[/PREFIX] URL (the endpoint
	// and credentials from the environment, as `zarlog serve --storage`
	// takes them): after the end-to-end run, the same events run end to
	// end again with the log kept in the bucket, under a new prefix
	// PREFIX/zarlog-bench-<time>/ (left there), and the report compares
	// the two (Report.Storage, StorageRatio).
	Storage string
	// NoFollow turns the SDK clients' following off in every pass (a
	// negative sdk.Config.FollowInterval); zero means the SDK's default,
	// following on (RunConfig.Follow says which ran).
	NoFollow bool
	// PartialFlights is the SDK clients' sdk.Config.PartialFlights in
	// every pass, the human pace's too. Zero means the SDK's default.
	PartialFlights int
	// EmitterRates runs the saturated and paced passes with the ingest's
	// default per-emitter rates (ingest.DefaultRateMessagesPerEmitter and
	// DefaultRateBytesPerEmitter, as `zarlog serve` runs); false, the
	// default, limits no emitter: the bench measures the service's
	// capacity.
	EmitterRates bool
}

// Paces of Config.Pace.
const (
	PaceSaturated = "saturated"
	PaceHuman     = "human"
)

// A Report is what a run measured.
type Report struct {
	Machine Machine `json:"machine"`
	// Config is the configuration the run measured: what the ledger
	// checked, and how the events were offered.
	Config RunConfig `json:"config"`
	// LogKey is the verifier key (C2SP vkey) of the throwaway logs the run
	// writes, so their checkpoints and bundles can be checked.
	LogKey   string       `json:"logKey"`
	Workload WorkloadInfo `json:"workload"`
	// EndToEnd is SDK → NATS → ingest → ledger → signed checkpoint, as
	// fast as the emitters can publish (or at Config.Rate).
	EndToEnd Measure `json:"endToEnd"`
	// Paced is the same at half EndToEnd's rate (absent with Config.Rate):
	// its latencies are the path's, not a queue's.
	Paced *Measure `json:"paced,omitempty"`
	// DiskBytesPerEvent is the ledger directory's size over the events
	// (Pebble's tables, WAL and manifest); TableBytesPerEvent counts the
	// tables only.
	DiskBytesPerEvent  float64 `json:"diskBytesPerEvent"`
	TableBytesPerEvent float64 `json:"tableBytesPerEvent"`
	// Bundles are the proof bundles built and verified, by scheme.
	Bundles []Bundles `json:"bundles"`
	// Ledger and Tessera are the same-run comparison (Config.Tessera).
	Ledger  *Measure  `json:"ledger,omitempty"`
	Tessera []Measure `json:"tessera,omitempty"`
	// Ratios are the same-run throughput ratios against each Tessera
	// setting (Config.Tessera): what issue 17's targets are stated in.
	Ratios []Ratio `json:"ratios,omitempty"`
	// Human is the human pace (Config.Pace PaceHuman), and
	// HumanCPURatio its CPU per event over EndToEnd's, from the same run,
	// each over its measured time (CPUMicrosPerEvent: the saturated run's
	// ends at the checkpoint covering its last event, before the store
	// work its writes leave due; the human pace's is 30 s of steady
	// state, paying its own). HumanCPURatioSettled is the same ratio with
	// both including the store work their writes left due
	// (CPUMicrosPerEventSettled): the like-for-like one.
	// HumanCPURatioDefinitions says so in the JSON.
	Human                    *HumanMeasure     `json:"human,omitempty"`
	HumanCPURatio            float64           `json:"humanCpuRatio,omitempty"`
	HumanCPURatioSettled     float64           `json:"humanCpuRatioSettled,omitempty"`
	HumanCPURatioDefinitions map[string]string `json:"humanCpuRatioDefinitions,omitempty"`
	// Storage is the end-to-end run with the log kept in the bucket
	// (Config.Storage), StorageURL where, and StorageRatio its events/s
	// over EndToEnd's, measured in the same run.
	Storage      *Measure `json:"storage,omitempty"`
	StorageURL   string   `json:"storageUrl,omitempty"`
	StorageRatio float64  `json:"storageRatio,omitempty"`
}

// A RunConfig says what a run measured, so that no figure is read out of
// context.
type RunConfig struct {
	// Checks is ChecksProduction or ChecksStructural (Config.Checks).
	Checks string `json:"checks"`
	// Moves is "rules" (the rules engine checks every roll, move and end,
	// movecheck.Checker as in `zarlog serve`) or "structural".
	Moves string `json:"moves"`
	// Beacons is "bls" (BLS-signed drand beacons, checked by a pairing
	// check: quicknet's recorded rounds, then the benchmark's own chain of
	// the same scheme) or "fake" (a hash).
	Beacons string `json:"beacons"`
	// BeaconGamesPerRound is, with "bls", how many anchored-v1 games share
	// each round (package internal/workload's "Rounds").
	BeaconGamesPerRound int `json:"beaconGamesPerRound,omitempty"`
	// BeaconCache is, with "bls", how many verified beacons the ledger
	// remembers (ledger.Config.BeaconCache); 0 means none: every game's
	// beacon is checked with a pairing check.
	BeaconCache int `json:"beaconCache"`
	// GameCacheBytes bounds the ledger's cache of decoded game states
	// (ledger.Config.GameCacheBytes, `zarlog serve --game-cache-bytes`).
	GameCacheBytes int64 `json:"gameCacheBytes"`
	// Receipts says which receipts the latency pass asks for.
	Receipts string `json:"receipts"`
	// CheckpointIntervalMs is the ledger's checkpoint interval.
	CheckpointIntervalMs int `json:"checkpointIntervalMs"`
	// IngestLingerMs is how long the ingest lets a small batch wait for
	// more messages (ingest.DefaultLinger, as `zarlog serve` runs it).
	IngestLingerMs int `json:"ingestLingerMs"`
	// Pace is "saturated" (events offered as fast as the emitters take
	// them, then at half that rate), or "rate" (Config.Rate); followed by
	// "+human" when the run has the human pace too (Report.Human).
	Pace string `json:"pace"`
	// Follow is "every 500 ms" when the SDK clients follow their events
	// (sdk.DefaultFollowInterval, their default), or "off" (--follow=false).
	Follow string `json:"follow"`
	// PartialFlights is how many messages the SDK clients let fly while a
	// message that is not full waits (sdk.Config.PartialFlights); 0 means
	// no bound besides the window.
	PartialFlights int `json:"sdkPartialFlights"`
	// SDKLingerMs is the SDK clients' Linger in the end-to-end passes (the
	// SDK's default, sdk.DefaultLinger: the most a message that is not full
	// waits for more events, when the emitter's recent rate predicts one
	// within it); the human pace's is HumanMeasure.SDKLingerMs.
	SDKLingerMs float64 `json:"sdkLingerMs"`
	// EmitterRates is "none", or the per-emitter rates the end-to-end
	// passes ran with (--emitter-rates).
	EmitterRates string `json:"emitterRates"`
}

// humanCPURatioDefinitions is Report.HumanCPURatioDefinitions.
var humanCPURatioDefinitions = map[string]string{
	"humanCpuRatio": "human.cpuMicrosPerEvent / endToEnd.cpuMicrosPerEvent: each pace's process CPU over its measured time and its events; " +
		"the saturated run's time ends at the checkpoint covering its last event, before the Pebble flush and compactions its writes leave due, " +
		"while the human pace's 30 s of steady state pay for their own (the definition before 2026-12-04)",
	"humanCpuRatioSettled": "human.cpuMicrosPerEventSettled / endToEnd.cpuMicrosPerEventSettled: the same, each with the CPU of its settling " +
		"(cpuMicrosPerEvent + settleCpuMicrosPerEvent): the process's CPU from the measured time's end (the checkpoint covering the saturated run's last event; " +
		"the human window's end) while the answers still in flight then come in (the human pace's events in flight processed) and the store work " +
		"its writes left due is done (the memtable flushed and the compactions that leaves due, ledger.WaitCompacted); the harness's work after the run " +
		"counted in neither: like for like (these boundaries since 2026-12-04's \"bench: both paces' settled CPU drawn with the same boundaries\")",
}

// runConfig describes the run of cfg on w.
func runConfig(cfg Config, w *Workload) RunConfig {
	c := RunConfig{Checks: w.Checks(), Moves: "structural", Beacons: "fake", Pace: "saturated",
		CheckpointIntervalMs: int(ledger.DefaultCheckpointInterval / time.Millisecond),
		IngestLingerMs:       int(ingest.DefaultLinger / time.Millisecond),
		Receipts:             fmt.Sprintf("every game's commit and every %dth event, in the latency pass", ReceiptSample)}
	if w.Moves {
		c.Moves = "rules"
	}
	if w.RealBeacons {
		c.Beacons = "bls"
		c.BeaconGamesPerRound = w.BeaconGamesPerRound
		switch {
		case w.BeaconCache == 0:
			c.BeaconCache = ledger.DefaultBeaconCache
		case w.BeaconCache > 0:
			c.BeaconCache = w.BeaconCache
		}
	}
	c.GameCacheBytes = cmp.Or(w.GameCacheBytes, ledger.DefaultGameCacheBytes)
	if cfg.Rate > 0 {
		c.Pace = "rate"
	}
	c.Follow = fmt.Sprintf("every %d ms", sdk.DefaultFollowInterval/time.Millisecond)
	if cfg.NoFollow {
		c.Follow = "off"
	}
	if cfg.Pace == PaceHuman {
		c.Pace += "+" + PaceHuman
	}
	c.PartialFlights = sdkPartialFlights(cfg.PartialFlights)
	c.SDKLingerMs = float64(sdk.DefaultLinger) / float64(time.Millisecond)
	c.EmitterRates = "none"
	if cfg.EmitterRates {
		c.EmitterRates = fmt.Sprintf("%d messages and %d bytes a second per emitter (the ingest's defaults)",
			ingest.DefaultRateMessagesPerEmitter, ingest.DefaultRateBytesPerEmitter)
	}
	return c
}

// sdkPartialFlights is the sdk.Config.PartialFlights that an SDK client
// given p runs with, 0 for its window (the default): a p of the window or
// more bounds nothing the window does not.
func sdkPartialFlights(p int) int {
	if p >= sdk.DefaultWindow {
		return 0
	}
	return max(p, 0)
}

// A Ratio is one throughput ratio measured in one run: Of's events/s over
// To's.
type Ratio struct {
	Of    string  `json:"of"`
	To    string  `json:"to"`
	Ratio float64 `json:"ratio"`
}

// ratios returns end to end and the ledger alone over each Tessera
// measurement.
func ratios(endToEnd Measure, ledger *Measure, tessera []Measure) []Ratio {
	var out []Ratio
	for _, t := range tessera {
		if t.EventsPerSec <= 0 {
			continue
		}
		out = append(out, Ratio{Of: "end to end", To: t.Name, Ratio: endToEnd.EventsPerSec / t.EventsPerSec})
		if ledger != nil {
			out = append(out, Ratio{Of: ledger.Name, To: t.Name, Ratio: ledger.EventsPerSec / t.EventsPerSec})
		}
	}
	return out
}

// A Machine describes where a run was measured.
type Machine struct {
	CPU    string `json:"cpu"`
	Cores  int    `json:"cores"`
	OS     string `json:"os"`
	Go     string `json:"go"`
	Kernel string `json:"kernel,omitempty"`
}

// A WorkloadInfo describes the events of a Report.
type WorkloadInfo struct {
	Mix         string  `json:"mix"`
	Events      int     `json:"events"`
	Emitters    int     `json:"emitters"`
	Games       int     `json:"gamesInPlay"`
	MeanBytes   float64 `json:"meanBytes"`
	SignedShare float64 `json:"signedShare"`
}

// A Measure is one measured log.
type Measure struct {
	Name   string `json:"name"`
	Events int    `json:"events"`
	// OfferedPerSec is the paced load, 0 for as fast as possible.
	OfferedPerSec int     `json:"offeredPerSec,omitempty"`
	Seconds       float64 `json:"seconds"`
	EventsPerSec  float64 `json:"eventsPerSec"`
	// Latencies from publication to the first signed checkpoint covering
	// the event, in milliseconds (end to end only).
	P50ms float64 `json:"p50ms,omitempty"`
	P99ms float64 `json:"p99ms,omitempty"`
	MaxMs float64 `json:"maxMs,omitempty"`
	// Receipts, in the pass that measures latency (the paced one, or the
	// one at Config.Rate): the SDK's receipts of every game's commit and of
	// every ReceiptSample-th event, each a tlog-proof checked against the
	// event's bytes and the log's key. How many, the latencies from the
	// event's publication to its checked receipt, in milliseconds, and the
	// receipts' sizes in bytes (median, largest).
	Receipts        int     `json:"receipts,omitempty"`
	ReceiptP50ms    float64 `json:"receiptP50ms,omitempty"`
	ReceiptP99ms    float64 `json:"receiptP99ms,omitempty"`
	ReceiptMaxMs    float64 `json:"receiptMaxMs,omitempty"`
	ReceiptBytes    int     `json:"receiptBytes,omitempty"`
	ReceiptBytesMax int     `json:"receiptBytesMax,omitempty"`
	// CPUMicrosPerEvent is the process's CPU time per event over the
	// measured time (end to end: from the first publication until the
	// checkpoint covering the last event is in; since the settled figures
	// got the same boundaries on both paces, 2026-12-04, without the
	// harness's work after the run: its profile's stopping and parsing,
	// the wait for the acknowledgements and receipts still in flight).
	CPUMicrosPerEvent float64 `json:"cpuMicrosPerEvent,omitempty"`
	// DiskBytesPerEvent is the log directory's size over the events.
	DiskBytesPerEvent float64 `json:"diskBytesPerEvent,omitempty"`
	// CPUStagesMicros splits CPUMicrosPerEvent by stage (end to end only),
	// from a CPU profile of the run: publish (the backends' SDK), nats
	// (server and clients), ingest, parse, signature, state, tree, pebble,
	// ledger-other, checkpoint, gc, other.
	CPUStagesMicros map[string]float64 `json:"cpuStagesMicrosPerEvent,omitempty"`
	// CPUSidesMicros splits the same profile by side (end to end only),
	// by the pprof label of the goroutine each sample was taken in: "log"
	// (the embedded nats-server, the ingest, the ledger, Pebble),
	// "emitters" (the SDK clients, their NATS connections, the benchmark's
	// publishing and waiting) and "runtime" (samples in no labelled
	// goroutine: the garbage collector's background workers, the
	// scheduler, timers); the three sum to the stages' total. "harness"
	// (also CPUHarnessMicros) is the part of "emitters" with no SDK or
	// NATS frame: the benchmark's own work, not a backend's SDK's.
	CPUSidesMicros   map[string]float64 `json:"cpuSidesMicrosPerEvent,omitempty"`
	CPUHarnessMicros float64            `json:"cpuHarnessMicrosPerEvent,omitempty"`
	// CPUMicrosPerEventSettled is CPUMicrosPerEvent with the CPU of the
	// run's settling (end to end only; Settle): the acknowledgements and
	// receipts still in flight when the checkpoint covering the last event
	// was in, then the store work the run's writes left due (its memtable
	// flushed and the compactions that leaves due), over the events:
	// CPUMicrosPerEvent + SettleCPUMicros, the settling's CPU per event.
	// SettleS is how long the settling took after the run, and
	// SettleStagesMicros its CPU by stage, per event of the run.
	CPUMicrosPerEventSettled float64            `json:"cpuMicrosPerEventSettled,omitempty"`
	SettleCPUMicros          float64            `json:"settleCpuMicrosPerEvent,omitempty"`
	SettleS                  float64            `json:"settleSeconds,omitempty"`
	SettleStagesMicros       map[string]float64 `json:"settleCpuStagesMicrosPerEvent,omitempty"`
	// EventsPerMessage is the mean number of events per NATS message, and
	// EventsPerAppend per call of the ledger's Append (end to end only):
	// how well the SDK and the ingest batch.
	EventsPerMessage float64 `json:"eventsPerMessage,omitempty"`
	EventsPerAppend  float64 `json:"eventsPerAppend,omitempty"`
	// AllocBytesPerEvent and AllocsPerEvent are what the whole process
	// (backends, NATS, ingest, ledger) allocated per event (end to end
	// only): the garbage collector's work.
	AllocBytesPerEvent float64 `json:"allocBytesPerEvent,omitempty"`
	AllocsPerEvent     float64 `json:"allocsPerEvent,omitempty"`
	// BeaconPairings and BeaconCached are how the ledger checked the
	// anchored-v1 beacons (end to end, with the ledger's verified-beacon
	// cache): BLS pairing checks (refusals included), and beacons answered
	// by the cache. Without a cache they are absent: a pairing check per
	// beacon.
	BeaconPairings int `json:"beaconPairings,omitempty"`
	BeaconCached   int `json:"beaconCached,omitempty"`
	// Duplicates is how many of the events the ledger was offered were in
	// the log already (end to end: the SDK's resends, the ingest's
	// redeliveries), each parsed and its signature checked again; absent
	// when none was (and for the runs without the SDK).
	Duplicates int `json:"duplicates,omitempty"`
	// GameLoads is how many game states the ledger read back from its
	// store because its game cache (Config.GameCacheBytes) did not hold
	// them (end to end).
	GameLoads int `json:"gameLoads,omitempty"`
}

// Bundles are the proof bundles of one scheme's games.
type Bundles struct {
	Scheme       string  `json:"scheme"`
	Games        int     `json:"games"`
	MeanEvents   float64 `json:"meanEvents"`
	MeanBytes    float64 `json:"meanBytes"`
	MeanVerifyMs float64 `json:"meanVerifyMs"`
}

func measure(r Result) Measure {
	m := Measure{Name: r.Name, Events: r.Events, Seconds: r.Elapsed.Seconds(), EventsPerSec: r.EventsPerSec(),
		CPUMicrosPerEvent: r.Metrics["cpu-µs/event"], CPUStagesMicros: r.Stages, CPUSidesMicros: r.Sides, CPUHarnessMicros: r.Sides[sideHarness],
		EventsPerMessage: r.Metrics["events/message"], EventsPerAppend: r.Metrics["events/submit"],
		AllocBytesPerEvent: r.Metrics["alloc-B/event"], AllocsPerEvent: r.Metrics["allocs/event"],
		BeaconPairings: int(r.Metrics["beacon-pairings"]), BeaconCached: int(r.Metrics["beacon-cached"]), Duplicates: int(r.Metrics["duplicates"]), GameLoads: int(r.Metrics["game-loads"])}
	if r.P99 > 0 {
		m.P50ms, m.P99ms, m.MaxMs = ms(r.P50), ms(r.P99), ms(r.Max)
	}
	if st := r.Settle; st != nil {
		m.CPUMicrosPerEventSettled, m.SettleS, m.SettleStagesMicros = st.CPUMicrosPerEvent, st.Seconds, st.Stages
		m.SettleCPUMicros = st.CPUS * 1e6 / float64(max(r.Events, 1))
	}
	if r.Receipts > 0 {
		m.Receipts, m.ReceiptP50ms, m.ReceiptP99ms, m.ReceiptMaxMs = r.Receipts, ms(r.ReceiptP50), ms(r.ReceiptP99), ms(r.ReceiptMax)
		m.ReceiptBytes, m.ReceiptBytesMax = r.ReceiptBytesP50, r.ReceiptBytesMax
	}
	return m
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Run runs the measurements and returns the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Events <= 0 {
		cfg.Events = DefaultEvents
	}
	if cfg.Emitters <= 0 {
		cfg.Emitters = DefaultEmitters
	}
	if cfg.Games <= 0 {
		cfg.Games = DefaultGames
	}
	if cfg.Bundles <= 0 {
		cfg.Bundles = DefaultBundles
	}
	switch cfg.Pace {
	case "":
		cfg.Pace = PaceSaturated
	case PaceSaturated, PaceHuman:
	default:
		return nil, fmt.Errorf("bench: unknown pace %q (want %s or %s)", cfg.Pace, PaceSaturated, PaceHuman)
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "zarlog-bench-")
		if err != nil {
			return nil, err
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	progress("generating events", 0, cfg.Events)
	mix, err := workload.ParseMix(cmp.Or(cfg.Mix, "mixed"))
	if err != nil {
		return nil, err
	}
	wcfg, err := WorkloadConfig(cfg.Checks)
	if err != nil {
		return nil, err
	}
	wcfg.Seed, wcfg.Mix, wcfg.Emitters, wcfg.Concurrent, wcfg.BeaconGamesPerRound = 1, mix, cfg.Emitters, cfg.Games, cfg.BeaconGamesPerRound
	w, err := NewWorkload(wcfg, cfg.Events)
	if err != nil {
		return nil, fmt.Errorf("generating the events: %w", err)
	}
	w.BeaconCache, w.GameCacheBytes = cfg.BeaconCache, cfg.GameCacheBytes
	progress("generating events", cfg.Events, cfg.Events)
	logKey, err := LedgerVerifierKey()
	if err != nil {
		return nil, err
	}
	rep := &Report{Machine: machine(), Config: runConfig(cfg, w), LogKey: logKey, Workload: WorkloadInfo{Mix: cmp.Or(cfg.Mix, "mixed"), Events: len(w.Events), Emitters: len(w.Emitters), Games: cfg.Games,
		MeanBytes: w.MeanBytes, SignedShare: w.SignedShare}}

	e2eDir := filepath.Join(dir, "endtoend")
	res, err := EndToEnd(ctx, EndToEndConfig{Dir: e2eDir, Rate: cfg.Rate, Profile: cfg.Profile, AllocProfile: cfg.AllocProfile, Receipts: cfg.Rate > 0, NoFollow: cfg.NoFollow, PartialFlights: cfg.PartialFlights, EmitterRates: cfg.EmitterRates,
		Progress: func(done int) { progress("end to end", done, cfg.Events) }}, w)
	if err != nil {
		return nil, fmt.Errorf("end to end: %w", err)
	}
	rep.EndToEnd = measure(res)
	total, tables, err := dirSize(filepath.Join(e2eDir, "ledger"))
	if err != nil {
		return nil, err
	}
	rep.DiskBytesPerEvent = float64(total) / float64(res.Events)
	rep.TableBytesPerEvent = float64(tables) / float64(res.Events)
	rep.EndToEnd.DiskBytesPerEvent = rep.DiskBytesPerEvent

	if cfg.Storage != "" {
		b, err := bucket.Open(ctx, strings.TrimSuffix(cfg.Storage, "/")+"/zarlog-bench-"+time.Now().UTC().Format("20060102T150405.000Z"), bucket.Config{})
		if err != nil {
			return nil, err
		}
		sdir := filepath.Join(dir, "storage")
		res, err := EndToEnd(ctx, EndToEndConfig{Dir: sdir, Rate: cfg.Rate, Storage: b, NoFollow: cfg.NoFollow, PartialFlights: cfg.PartialFlights, EmitterRates: cfg.EmitterRates,
			Progress: func(done int) { progress("end to end, bucket", done, cfg.Events) }}, w)
		if err != nil {
			return nil, fmt.Errorf("end to end with the bucket: %w", err)
		}
		res.Name = "zarlog-endtoend-bucket"
		m := measure(res)
		m.OfferedPerSec = rep.EndToEnd.OfferedPerSec
		rep.Storage, rep.StorageURL = &m, b.URL()
		if rep.EndToEnd.EventsPerSec > 0 {
			rep.StorageRatio = m.EventsPerSec / rep.EndToEnd.EventsPerSec
		}
		os.RemoveAll(sdir)
	}

	if cfg.Rate == 0 {
		rate := int(res.EventsPerSec() / 2)
		pdir := filepath.Join(dir, "paced")
		res, err := EndToEnd(ctx, EndToEndConfig{Dir: pdir, Rate: rate, Receipts: true, NoFollow: cfg.NoFollow, PartialFlights: cfg.PartialFlights, EmitterRates: cfg.EmitterRates,
			Progress: func(done int) { progress("end to end, paced", done, cfg.Events) }}, w)
		if err != nil {
			return nil, fmt.Errorf("end to end, paced: %w", err)
		}
		m := measure(res)
		m.OfferedPerSec = rate
		rep.Paced = &m
		os.RemoveAll(pdir)
	} else {
		rep.EndToEnd.OfferedPerSec = cfg.Rate
	}

	if cfg.Pace == PaceHuman {
		h := cfg.Human
		h.Dir, h.Emitters, h.Checks, h.Progress = filepath.Join(dir, "human"), cfg.Emitters, cfg.Checks, progress
		h.BeaconCache, h.GameCacheBytes = cfg.BeaconCache, cfg.GameCacheBytes
		h.NoFollow = cfg.NoFollow
		h.PartialFlights = cfg.PartialFlights
		m, err := Human(ctx, h)
		if err != nil {
			return nil, fmt.Errorf("human pace: %w", err)
		}
		rep.Human = &m
		if rep.EndToEnd.CPUMicrosPerEvent > 0 {
			rep.HumanCPURatio = m.CPUMicrosPerEvent / rep.EndToEnd.CPUMicrosPerEvent
		}
		if rep.EndToEnd.CPUMicrosPerEventSettled > 0 {
			rep.HumanCPURatioSettled = m.CPUMicrosPerEventSettled / rep.EndToEnd.CPUMicrosPerEventSettled
		}
		rep.HumanCPURatioDefinitions = humanCPURatioDefinitions
		os.RemoveAll(h.Dir)
	}

	if rep.Bundles, err = bundles(ctx, filepath.Join(e2eDir, "ledger"), w, cfg.Bundles, progress); err != nil {
		return nil, fmt.Errorf("bundles: %w", err)
	}

	if cfg.Tessera {
		ldir := filepath.Join(dir, "ledger")
		res, err := Ledger(ctx, LedgerConfig{Dir: ldir,
			Progress: func(done int) { progress("ledger alone", done, cfg.Events) }}, w)
		if err != nil {
			return nil, fmt.Errorf("the ledger alone: %w", err)
		}
		m := measure(res)
		if total, _, err := dirSize(ldir); err == nil {
			m.DiskBytesPerEvent = float64(total) / float64(res.Events)
		}
		rep.Ledger = &m
		leaves := w.Leaves()
		for _, batch := range []uint{0, 4096} {
			tdir := filepath.Join(dir, fmt.Sprint("tessera-", batch))
			step := fmt.Sprintf("tessera (batch %d)", max(batch, 256))
			res, err := Tessera(ctx, TesseraConfig{Dir: tdir, BatchSize: batch,
				Progress: func(done int) { progress(step, done, len(leaves)) }}, leaves)
			if err != nil {
				return nil, fmt.Errorf("tessera: %w", err)
			}
			m := measure(res)
			if total, _, err := dirSize(tdir); err == nil {
				m.DiskBytesPerEvent = float64(total) / float64(res.Events)
			}
			rep.Tessera = append(rep.Tessera, m)
		}
		rep.Ratios = ratios(rep.EndToEnd, rep.Ledger, rep.Tessera)
	}
	return rep, nil
}

// bundles builds and verifies the bundles of up to per finished games of
// each scheme, from the ledger in dir: anchored-v1 only with real beacons
// and only the games anchored to quicknet (the verifier pins quicknet: it
// refuses the fake chain and the workload's own chain).
func bundles(ctx context.Context, dir string, w *Workload, per int, progress func(string, int, int)) ([]Bundles, error) {
	l, err := OpenLedger(ctx, dir, w, 0, nil)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	note, _, _ := l.Latest()
	if note == nil {
		return nil, errors.New("the ledger has no checkpoint")
	}
	vkey, err := LedgerVerifierKey()
	if err != nil {
		return nil, err
	}
	logKey, err := verifier.ParseLogKey(vkey)
	if err != nil {
		return nil, err
	}
	emitterKeys, err := verifier.ParseEmitterKeys(w.VerifierKeys...)
	if err != nil {
		return nil, err
	}
	src := serve.NewBundleSource(l)
	type acc struct {
		games, events, bytes int
		verify               time.Duration
	}
	by := map[events.Scheme]*acc{events.Tavlarena: {}, events.PerRoll: {}}
	if w.RealBeacons {
		by[events.Anchored] = &acc{}
	}
	total := per * len(by)
	done := 0
	for from := uint64(0); done < total; {
		page, err := l.Finished(ctx, from, 256)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			break
		}
		for _, f := range page {
			from = f.Index + 1
			g, err := l.Game(ctx, f.Game)
			if err != nil {
				return nil, err
			}
			a := by[g.Scheme]
			if a == nil || a.games >= per || g.Scheme == events.Anchored && g.Anchor.Chain != drand.Quicknet().Hash() {
				continue
			}
			leaves, err := src.GameLeaves(ctx, f.Game)
			if err != nil {
				return nil, err
			}
			b, err := publisher.BuildBundle(ctx, l.TileReader(), leaves, note)
			if err != nil {
				return nil, fmt.Errorf("game %s: %w", f.Game, err)
			}
			start := time.Now()
			rep := verifier.Verify(b, verifier.Options{LogKey: logKey, EmitterKeys: emitterKeys})
			a.verify += time.Since(start)
			if rep.Exit() != 0 {
				return nil, fmt.Errorf("game %s: the bundle does not verify: %s", f.Game, strings.Join(rep.Failed(), ", "))
			}
			a.games++
			a.events += len(leaves)
			a.bytes += len(b)
			done++
			progress("bundles", done, total)
		}
	}
	var out []Bundles
	for _, s := range []events.Scheme{events.Anchored, events.Tavlarena, events.PerRoll} {
		a := by[s]
		if a == nil || a.games == 0 {
			continue
		}
		n := float64(a.games)
		out = append(out, Bundles{Scheme: string(s), Games: a.games, MeanEvents: float64(a.events) / n,
			MeanBytes: float64(a.bytes) / n, MeanVerifyMs: ms(a.verify) / n})
	}
	return out, nil
}

// dirSize returns the total size of the files under dir, and of its
// Pebble tables (*.sst).
func dirSize(dir string) (total, tables int64, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		total += fi.Size()
		if strings.HasSuffix(p, ".sst") {
			tables += fi.Size()
		}
		return nil
	})
	return total, tables, err
}

// machine describes this machine.
func machine() Machine {
	m := Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// JSON returns the report as indented JSON.
func (r *Report) JSON() []byte {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		panic(err) // plain structs
	}
	return append(b, '\n')
}

// Text returns the report for people.
func (r *Report) Text() string {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "machine    %s, %d cores, %s, %s", orUnknown(m.CPU), m.Cores, m.OS, m.Go)
	if m.Kernel != "" {
		fmt.Fprintf(&b, ", Linux %s", m.Kernel)
	}
	fmt.Fprintln(&b)
	fmt.Fprintf(&b, "log        %s (the key of the throwaway logs this run writes)\n", r.LogKey)
	fmt.Fprintf(&b, "config     %s\n", r.Config.describe())
	wl := r.Workload
	fmt.Fprintf(&b, "events     %d (%s mix) of %d emitters, %d games in play, %.0f bytes on average, %.1f%% signed\n",
		wl.Events, wl.Mix, wl.Emitters, wl.Games, wl.MeanBytes, 100*wl.SignedShare)
	e := r.EndToEnd
	offered := "as fast as the emitters can publish"
	if e.OfferedPerSec > 0 {
		offered = fmt.Sprintf("%d events/s offered", e.OfferedPerSec)
	}
	fmt.Fprintf(&b, "end to end %.0f events/s, SDK → NATS JetStream → ingest → ledger → signed checkpoint (%s, %.1f s)\n", e.EventsPerSec, offered, e.Seconds)
	if st := r.Storage; st != nil {
		fmt.Fprintf(&b, "bucket     %.0f events/s end to end with the log kept in %s (each checkpoint published once it and its tiles are there), %.2f× the embedded store's (same run, %.1f s)\n",
			st.EventsPerSec, r.StorageURL, r.StorageRatio, st.Seconds)
		fmt.Fprintf(&b, "           publish → checkpoint p50 %.1f ms, p99 %.1f ms (the embedded store's: %.1f, %.1f)\n", st.P50ms, st.P99ms, e.P50ms, e.P99ms)
	}
	lat := e
	if r.Paced != nil {
		lat = *r.Paced
		fmt.Fprintf(&b, "latency    publish → checkpoint at %d events/s offered: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", lat.OfferedPerSec, lat.P50ms, lat.P99ms, lat.MaxMs)
		fmt.Fprintf(&b, "           (as fast as possible, the queue's: p50 %.0f ms, p99 %.0f ms)\n", e.P50ms, e.P99ms)
	} else {
		fmt.Fprintf(&b, "latency    publish → checkpoint p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", lat.P50ms, lat.P99ms, lat.MaxMs)
	}
	if lat.Receipts > 0 {
		fmt.Fprintf(&b, "receipt    publish → receipt (the SDK's, checked: a tlog-proof of the event) p50 %.1f ms, p99 %.1f ms, max %.1f ms, over %d receipts\n",
			lat.ReceiptP50ms, lat.ReceiptP99ms, lat.ReceiptMaxMs, lat.Receipts)
		fmt.Fprintf(&b, "           (every game's commit and every %dth event); %d bytes each (median), %d at most\n", ReceiptSample, lat.ReceiptBytes, lat.ReceiptBytesMax)
	}
	fmt.Fprintf(&b, "cpu        %.1f µs per event, end to end\n", e.CPUMicrosPerEvent)
	if len(e.CPUStagesMicros) > 0 {
		fmt.Fprintf(&b, "           by stage (µs per event, CPU profile): %s\n", stagesText(e.CPUStagesMicros))
	}
	if len(e.CPUSidesMicros) > 0 {
		fmt.Fprintf(&b, "           by side (µs per event, CPU profile): %s\n", sidesText(e.CPUSidesMicros))
	}
	if e.CPUMicrosPerEventSettled > 0 {
		fmt.Fprintf(&b, "           %.1f µs per event with the store work its writes left due (memtable flush and compactions, %.1f s after the run: %s)\n",
			e.CPUMicrosPerEventSettled, e.SettleS, stagesText(e.SettleStagesMicros))
		if p := r.Paced; p != nil && p.CPUMicrosPerEventSettled > 0 {
			fmt.Fprintf(&b, "           paced pass: %.1f µs per event, %.1f with the store work its writes left due\n", p.CPUMicrosPerEvent, p.CPUMicrosPerEventSettled)
		}
	}
	if e.AllocBytesPerEvent > 0 {
		fmt.Fprintf(&b, "memory     %.0f bytes in %.1f allocations per event, end to end (the garbage collector's work)\n", e.AllocBytesPerEvent, e.AllocsPerEvent)
	}
	if e.EventsPerMessage > 0 {
		fmt.Fprintf(&b, "batching   %.1f events per NATS message, %.0f per call of the ledger's Append\n", e.EventsPerMessage, e.EventsPerAppend)
	}
	if e.BeaconPairings+e.BeaconCached > 0 {
		fmt.Fprintf(&b, "beacons    %d anchored-v1 beacons end to end: %d BLS pairing checks, %d answered by the ledger's verified-beacon cache\n",
			e.BeaconPairings+e.BeaconCached, e.BeaconPairings, e.BeaconCached)
	}
	if h := r.Human; h != nil {
		fmt.Fprintf(&b, "human      %d games in play over %d emitters, each sending its next event %v to %v after the previous one's receipt\n",
			h.Games, h.Emitters, time.Duration(h.MinGapMs)*time.Millisecond, time.Duration(h.MaxGapMs)*time.Millisecond)
		fmt.Fprintf(&b, "           (games of %d rolls, %.0f events on average, each started at a random point: %d events appended directly before, their compactions done in %.1f s; measured over %.1f s)\n",
			h.Rolls, h.MeanGameEvents, h.Preloaded, h.PreloadSettleS, h.WindowS)
		fmt.Fprintf(&b, "           set-up %.1f s (%.1f s of CPU; making the games and the preload %.1f s), rss %.0f MB at the games' start, of which the events made for the run %.0f MB\n",
			h.SetupS, h.SetupCPUS, h.PreloadS, float64(h.RSSStartBytes)/1e6, float64(h.HeldEventBytesStart)/1e6)
		fmt.Fprintf(&b, "           %.0f events/s, %.0f bytes on average, %.1f%% signed\n", h.EventsPerSec, h.MeanBytes, 100*h.SignedShare)
		fmt.Fprintf(&b, "           cpu %.1f µs per event, %.2f× the saturated run's %.1f (same run; each over its measured time)\n", h.CPUMicrosPerEvent, r.HumanCPURatio, e.CPUMicrosPerEvent)
		if r.HumanCPURatioSettled > 0 {
			fmt.Fprintf(&b, "           with the store work each one's writes left due: %.1f µs per event, %.2f× the saturated run's %.1f (like for like)\n",
				h.CPUMicrosPerEventSettled, r.HumanCPURatioSettled, e.CPUMicrosPerEventSettled)
		}
		if len(h.CPUStagesMicros) > 0 {
			fmt.Fprintf(&b, "           by stage (µs per event, CPU profile): %s\n", stagesText(h.CPUStagesMicros))
		}
		if len(h.CPUSidesMicros) > 0 {
			fmt.Fprintf(&b, "           by side (µs per event, CPU profile): %s\n", sidesText(h.CPUSidesMicros))
		}
		fmt.Fprintf(&b, "           publish → receipt p50 %.1f ms, p99 %.1f ms, max %.1f ms over %d checked receipts; publish → JetStream ack p50 %.1f ms, p99 %.1f ms\n",
			h.ReceiptP50ms, h.ReceiptP99ms, h.ReceiptMaxMs, h.ReceiptCount, h.AckP50ms, h.AckP99ms)
		fmt.Fprintf(&b, "           (receipts: %s)\n", h.Receipts)
		fmt.Fprintf(&b, "           batching %.1f events per NATS message, %.1f per call of the ledger's Append\n", h.EventsPerMessage, h.EventsPerAppend)
		fmt.Fprintf(&b, "           %d of the events were in the log already when offered (resends: parsed and their signatures checked again)\n", h.Duplicates)
		fmt.Fprintf(&b, "           rss %.0f MB (peak %.0f MB), of which the benchmark's events still to send take %.0f MB\n",
			float64(h.RSSBytes)/1e6, float64(h.RSSPeakBytes)/1e6, float64(h.HeldEventBytes)/1e6)
		fmt.Fprintf(&b, "           memory %.0f bytes in %.1f allocations per event (the whole process), %d garbage collections in the window\n", h.AllocBytesPerEvent, h.AllocsPerEvent, h.GCs)
		if h.BeaconGamesPerRound > 0 {
			fmt.Fprintf(&b, "           beacons: %d anchored-v1 games a drand round (those this pace seals in one round's 3 s, unless set), %d BLS pairing checks and %d cached answers in the window\n",
				h.BeaconGamesPerRound, h.BeaconPairings, h.BeaconCached)
		}
		if h.IdleGames > 0 {
			fmt.Fprintf(&b, "           %d games ran out of events before the end\n", h.IdleGames)
		}
	}
	fmt.Fprintf(&b, "disk       %.0f bytes per event in the ledger directory (%.0f in its tables)\n", r.DiskBytesPerEvent, r.TableBytesPerEvent)
	bs := append([]Bundles(nil), r.Bundles...)
	sort.Slice(bs, func(i, j int) bool { return bs[i].Scheme < bs[j].Scheme })
	if len(bs) == 0 {
		fmt.Fprintf(&b, "bundle     no game finished: give more --events than %d games' worth\n", r.Workload.Games)
	}
	for _, x := range bs {
		fmt.Fprintf(&b, "bundle     %s: %.1f kB per game (%.0f events), verified in %.1f ms (the log's and emitters' keys; %d games)\n",
			x.Scheme, x.MeanBytes/1000, x.MeanEvents, x.MeanVerifyMs, x.Games)
	}
	if r.Ledger != nil {
		fmt.Fprintf(&b, "the same events, appended directly (no NATS), in the same run:\n")
		row := func(x Measure) {
			fmt.Fprintf(&b, "  %-24s %8.0f events/s  %6.1f s  %5.1f µs CPU/event  %5.0f bytes/event on disk\n",
				x.Name, x.EventsPerSec, x.Seconds, x.CPUMicrosPerEvent, x.DiskBytesPerEvent)
		}
		row(*r.Ledger)
		for _, t := range r.Tessera {
			row(t)
		}
	}
	for _, x := range r.Ratios {
		fmt.Fprintf(&b, "ratio      %-24s / %-24s %5.2f×\n", x.Of, x.To, x.Ratio)
	}
	return b.String()
}

// stagesText lists stages in stageOrder.
func stagesText(stages map[string]float64) string {
	var parts []string
	for _, s := range stageOrder {
		if v, ok := stages[s]; ok {
			parts = append(parts, fmt.Sprintf("%s %.1f", s, v))
		}
	}
	return strings.Join(parts, ", ")
}

// sidesText says the sides of the CPU (cpuSplit).
func sidesText(sides map[string]float64) string {
	return fmt.Sprintf("the log's %.1f (NATS server, ingest, ledger, Pebble), the emitters' %.1f (SDK clients; of it the bench's own players %.1f), the runtime's %.1f (GC workers, scheduler)",
		sides[sideLog], sides[sideEmitters], sides[sideHarness], sides[sideRuntime])
}

// describe says the configuration in words.
func (c RunConfig) describe() string {
	moves := "moves checked structurally (not by the rules engine)"
	if c.Moves == "rules" {
		moves = "every roll, move and end checked by the rules engine"
	}
	beacons := "a fake drand chain (a hash, no BLS)"
	if c.Beacons == "bls" {
		cache := "no beacon cache: a BLS check per anchored-v1 game"
		if c.BeaconCache > 0 {
			cache = fmt.Sprintf("a cache of %d verified beacons: a BLS check per round", c.BeaconCache)
		}
		beacons = fmt.Sprintf("BLS-signed beacons (quicknet's recorded rounds, then the bench's own chain), %d anchored-v1 games a round, %s", c.BeaconGamesPerRound, cache)
	}
	follow := "the SDK clients follow their events (a status request " + c.Follow + ")"
	if c.Follow == "off" || c.Follow == "" {
		follow = "the SDK clients do not follow their events"
	}
	packing := "the SDK sends every message as soon as its window allows"
	if c.PartialFlights > 0 {
		packing = fmt.Sprintf("a message that is not full waits while the SDK has %d in flight (group commit)", c.PartialFlights)
	}
	rates := "no emitter's rate limited"
	if c.EmitterRates != "none" && c.EmitterRates != "" {
		rates = "each emitter limited to " + c.EmitterRates
	}
	return fmt.Sprintf("%s: %s; %s; a checkpoint every %d ms; small ingest batches wait up to %d ms; %s; %s; %s", c.Checks, moves, beacons, c.CheckpointIntervalMs, c.IngestLingerMs, follow, packing, rates)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown CPU"
	}
	return s
}
