package bench

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/internal/workload"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// Defaults of HumanConfig.
const (
	DefaultHumanGames    = 50_000
	DefaultHumanDuration = 40 * time.Second
	// DefaultHumanRolls is the saturated run's (workload.DefaultRolls), so
	// that both paces play the same games (until 2026-12-04 it was 8).
	DefaultHumanRolls  = workload.DefaultRolls
	DefaultHumanMinGap = 2 * time.Second
	DefaultHumanMaxGap = 10 * time.Second
)

// A HumanConfig configures a human-pace measurement (Human). Every field's
// zero value is documented.
type HumanConfig struct {
	// Dir holds the NATS store and the ledger; it must be empty or absent.
	// Required.
	Dir string
	// Games is the number of games in play at once. Zero means
	// DefaultHumanGames.
	Games int
	// Duration is how long the games are played, the warm-up included.
	// Zero means DefaultHumanDuration.
	Duration time.Duration
	// Warmup is when the measured window starts, after the first event.
	// Zero means MaxGap: by then every game has sent an event.
	Warmup time.Duration
	// MinGap and MaxGap bound the pause between an event's receipt and
	// the game's next event, drawn uniformly. Zero means 2 s and 10 s.
	MinGap, MaxGap time.Duration
	// Emitters is the number of emitters the games are spread over, each
	// with its own SDK client. Zero means DefaultEmitters.
	Emitters int
	// Checks is the ledger's checks (Config.Checks). Zero means
	// ChecksProduction.
	Checks string
	// BeaconGamesPerRound is how many anchored-v1 games share a drand
	// round (workload.Config.BeaconGamesPerRound). Zero means as many as
	// this pace seals in one quicknet period (BeaconGamesPerPeriod): a
	// platform's games name the first round after their sealing, so all
	// the games sealed within the same three seconds name the same round.
	BeaconGamesPerRound int
	// BeaconCache and GameCacheBytes are as in Config.
	BeaconCache    int
	GameCacheBytes int64
	// NoFollow turns the SDK clients' following off (Config.NoFollow).
	NoFollow bool
	// Rolls is the number of rolls of a per-game scheme's game (a
	// per-roll-v1 match has half as many; workload.Config.Rolls). Zero
	// means DefaultHumanRolls, the saturated run's games.
	Rolls int
	// Progress, if not nil, is called as the run goes: the step, and how
	// many of its total items are done.
	Progress func(step string, done, total int)
	// Profile, if not nil, receives the CPU profile (pprof format) of the
	// measured window, the one HumanMeasure.CPUStagesMicros comes from.
	Profile io.Writer
	// HeapProfile, if not nil, receives the heap profile (pprof format)
	// after the measured window and its settling (the memtable flushed),
	// after a garbage collection: what the process holds with the games
	// in play.
	HeapProfile io.Writer
	// HeapProfileBase, if not nil, receives the allocations profile
	// (pprof format) at the measured window's start: with HeapProfile as
	// the profile and this one as its base (go tool pprof
	// -sample_index=alloc_space -base), what the window and its settling
	// allocated, where.
	HeapProfileBase io.Writer
	// IngestLinger is the ingest's Linger (ingest.Config). Zero means
	// ingest.DefaultLinger, as `zarlog serve` runs it; negative, none.
	IngestLinger time.Duration
	// SDKLinger is the SDK clients' Linger (sdk.Config): the most a
	// message that is not full waits for more events to pack, when the
	// emitter's recent rate predicts one within it. Zero means the SDK's
	// default (sdk.DefaultLinger); negative, none.
	SDKLinger time.Duration
	// PartialFlights is the SDK clients' (sdk.Config). Zero means the
	// SDK's default.
	PartialFlights int
}

// A HumanMeasure is what a human-pace run measured, in its window (from
// Warmup to Duration after the first event).
type HumanMeasure struct {
	Games    int `json:"gamesInPlay"`
	Emitters int `json:"emitters"`
	Rolls    int `json:"rollsPerGame"`
	MinGapMs int `json:"minGapMs"`
	MaxGapMs int `json:"maxGapMs"`
	// SDKLingerMs is the SDK clients' Linger (HumanConfig.SDKLinger, the
	// SDK's default resolved); 0 means none.
	SDKLingerMs float64 `json:"sdkLingerMs"`
	// MeanGameEvents is the mean number of events of the stream's games
	// (of a sample of 512: the saturated run's, with the default Rolls).
	MeanGameEvents float64 `json:"meanGameEvents"`
	// Each table's game was started at a point drawn below StartLimit
	// events; RejectedStarts games ended before their point and were
	// put aside (humanSetup).
	StartLimit     int `json:"startLimitEvents"`
	RejectedStarts int `json:"rejectedStarts"`
	// Preloaded is how many events were appended directly before the run,
	// in PreloadS seconds, the making of the games included.
	Preloaded int     `json:"preloadedEvents"`
	PreloadS  float64 `json:"preloadSeconds"`
	// PreloadSettleS is how long the ledger's store took, after the
	// preload, to finish the compactions the preload left due
	// (ledger.Ledger.WaitCompacted), before the games started.
	PreloadSettleS float64 `json:"preloadSettleSeconds"`
	// SetupS and SetupCPUS are the wall and CPU time from the start to the
	// games' start (a sample of the games, the games made, the preload and
	// its compactions, the SDK clients); RSSStartBytes the resident set
	// then, and HeldEventBytesStart what of it the events made for the run
	// take.
	SetupS              float64 `json:"setupSeconds"`
	SetupCPUS           float64 `json:"setupCpuSeconds"`
	RSSStartBytes       int64   `json:"rssStartBytes"`
	HeldEventBytesStart int64   `json:"heldEventBytesStart"`
	WindowS             float64 `json:"windowSeconds"`
	// Receipts says which events the games wait for a checked receipt
	// of, and which only for JetStream's acknowledgement.
	Receipts string `json:"receipts"`
	// Events is how many events the ledger appended in the window, at
	// EventsPerSec.
	Events       int     `json:"events"`
	EventsPerSec float64 `json:"eventsPerSec"`
	MeanBytes    float64 `json:"meanBytes"`
	SignedShare  float64 `json:"signedShare"`
	// CPUMicrosPerEvent is the process's CPU time in the window over
	// Events; CPUStagesMicros splits it by stage (as Measure's).
	CPUMicrosPerEvent float64            `json:"cpuMicrosPerEvent"`
	CPUStagesMicros   map[string]float64 `json:"cpuStagesMicrosPerEvent,omitempty"`
	// CPUSidesMicros splits the same profile by side (as Measure's): the
	// log's, the emitters' and the runtime's; CPUHarnessMicros is the
	// benchmark's own players' part of the emitters'.
	CPUSidesMicros   map[string]float64 `json:"cpuSidesMicrosPerEvent,omitempty"`
	CPUHarnessMicros float64            `json:"cpuHarnessMicrosPerEvent"`
	// CPUMicrosPerEventSettled is the window's CPU with that of its
	// settling (Settle), over Events: CPUMicrosPerEvent + SettleCPUMicros.
	// The settling starts at the window's end: the schedulers stop, the
	// events in flight then are processed and answered (the window's
	// tail, as the events in flight at its start were processed in it),
	// then the memtable is flushed and the compactions that leaves due
	// are done. SettleCPUMicros is the settling's CPU per event of the
	// window, SettleS how long it took and SettleStagesMicros its CPU by
	// stage, per event of the window. The memtable then also holds the
	// writes of the warm-up's last seconds, as the window's first flush
	// held those before it.
	CPUMicrosPerEventSettled float64            `json:"cpuMicrosPerEventSettled"`
	SettleCPUMicros          float64            `json:"settleCpuMicrosPerEvent"`
	SettleS                  float64            `json:"settleSeconds"`
	SettleStagesMicros       map[string]float64 `json:"settleCpuStagesMicrosPerEvent,omitempty"`
	// The latencies of the events published in the window: from the
	// publication to the checked receipt (ReceiptCount of them), and to
	// JetStream's acknowledgement (AckCount), in milliseconds.
	ReceiptCount int     `json:"receiptCount"`
	ReceiptP50ms float64 `json:"receiptP50ms"`
	ReceiptP99ms float64 `json:"receiptP99ms"`
	ReceiptMaxMs float64 `json:"receiptMaxMs"`
	AckCount     int     `json:"ackCount"`
	AckP50ms     float64 `json:"ackP50ms"`
	AckP99ms     float64 `json:"ackP99ms"`
	// RSSBytes is the process's resident set at the window's end, and
	// RSSPeakBytes its peak so far (Linux; 0 elsewhere). HeldEventBytes
	// is what of it the benchmark's own events still to be sent take.
	RSSBytes       int64 `json:"rssBytes"`
	RSSPeakBytes   int64 `json:"rssPeakBytes"`
	HeldEventBytes int64 `json:"heldEventBytes"`
	// AllocBytesPerEvent and AllocsPerEvent are what the whole process
	// (ledger, ingest, NATS, the backends' SDK and the harness) allocated
	// in the window, per event (the garbage collector's work); GCs is how
	// many collections ended in it.
	AllocBytesPerEvent float64 `json:"allocBytesPerEvent"`
	AllocsPerEvent     float64 `json:"allocsPerEvent"`
	GCs                int     `json:"gcs"`
	// EventsPerAppend is the mean number of events per call of the
	// ledger's Append, and EventsPerMessage per NATS message, in the
	// window.
	EventsPerAppend  float64 `json:"eventsPerAppend"`
	EventsPerMessage float64 `json:"eventsPerMessage"`
	// NATSMessages is the NATS messages of the window an event, by kind
	// (readNATSCounts): each connection's publishes and each of its
	// subscriptions' deliveries.
	NATSMessages map[string]float64 `json:"natsMessagesPerEvent,omitempty"`
	// IdleGames is how many times a table had no event made for it when
	// one was due (0: humanSetup makes every event that could be due).
	IdleGames int `json:"idleGames"`
	// BeaconGamesPerRound is how many anchored-v1 games shared a drand
	// round (HumanConfig.BeaconGamesPerRound; 0 with a fake chain), and
	// BeaconPairings and BeaconCached how the ledger checked the beacons
	// it was offered in the window: BLS pairing checks, and answers of its
	// verified-beacon cache (both 0 without a cache).
	BeaconGamesPerRound int `json:"beaconGamesPerRound,omitempty"`
	BeaconPairings      int `json:"beaconPairings"`
	BeaconCached        int `json:"beaconCached"`
	// Duplicates is how many of the window's Events the ledger found in
	// the log already (resends, redeliveries): each was parsed and its
	// signature checked again.
	Duplicates int `json:"duplicates"`
	// GameLoads is how many game states the ledger read back from its
	// store in the window because its game cache (GameCacheBytes) did not
	// hold them, and GameCacheBytes that cache's bound: with games that do
	// not fit, nearly every event reads its game back.
	GameLoads      int   `json:"gameLoads"`
	GameCacheBytes int64 `json:"gameCacheBytes"`
}

// humanReceipts is HumanMeasure.Receipts.
const humanReceipts = "a checked receipt of every game's commit and of every per-roll-v1 roll-commit (what a player waits for before rolling or seconding); JetStream's acknowledgement of the other events"

// waitsForReceipt reports whether a game waits for the checked receipt of
// an event of type t before its next event (humanReceipts).
func waitsForReceipt(t events.Type) bool {
	return t == events.TypeCommit || t == events.TypeRollCommit
}

// Human measures the ledger's path at a human pace: cfg.Games games in play
// at once, each sending its next event a random MinGap to MaxGap after the
// previous one's receipt (humanReceipts), spread over cfg.Emitters
// emitters, through the whole path of EndToEnd (SDK → embedded NATS
// JetStream → ingest → ledger → signed checkpoint).
//
// The games are those of the saturated run's stream (cfg.Rolls rolls, the
// same mix and checks), in steady state from the start: each table's game
// is drawn in proportion to its length and started at a uniform point of
// it, its earlier events appended to the ledger directly before the run
// (not measured; humanSetup), so that the run sees games at every stage of
// their life, not 50,000 commits at once. The events a table may send in
// the run (its game's rest, then the table's next games) are made before
// the run too, so that the run's CPU is not the benchmark's making of
// events. The store then finishes the compactions the preload left due
// (ledger.Ledger.WaitCompacted) before the games start, so that the window
// pays for its own writes only.
func Human(ctx context.Context, cfg HumanConfig) (HumanMeasure, error) {
	if cfg.Dir == "" {
		return HumanMeasure{}, errors.New("bench: HumanConfig.Dir is empty")
	}
	cfg.Games = cmpOr(cfg.Games, DefaultHumanGames)
	cfg.Duration = cmpOr(cfg.Duration, DefaultHumanDuration)
	cfg.MinGap = cmpOr(cfg.MinGap, DefaultHumanMinGap)
	cfg.MaxGap = cmpOr(cfg.MaxGap, DefaultHumanMaxGap)
	cfg.Warmup = cmpOr(cfg.Warmup, cfg.MaxGap)
	cfg.Emitters = cmpOr(cfg.Emitters, DefaultEmitters)
	cfg.Rolls = cmpOr(cfg.Rolls, DefaultHumanRolls)
	if cfg.IngestLinger == 0 {
		cfg.IngestLinger = ingest.DefaultLinger
	}
	if cfg.MaxGap < cfg.MinGap || cfg.Warmup >= cfg.Duration {
		return HumanMeasure{}, fmt.Errorf("bench: human pace: gaps %v to %v, warm-up %v of %v", cfg.MinGap, cfg.MaxGap, cfg.Warmup, cfg.Duration)
	}
	progress := cfg.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	wcfg, err := WorkloadConfig(cfg.Checks)
	if err != nil {
		return HumanMeasure{}, err
	}
	setupStart, setupCPU := time.Now(), cpuTime()
	wcfg.Seed, wcfg.Prefix, wcfg.Emitters, wcfg.Rolls, wcfg.BeaconGamesPerRound = 1, "human", cfg.Emitters, cfg.Rolls, cfg.BeaconGamesPerRound
	sample, err := sampleGames(wcfg)
	if err != nil {
		return HumanMeasure{}, err
	}
	if wcfg.RealBeacons && wcfg.BeaconGamesPerRound == 0 {
		wcfg.BeaconGamesPerRound = sample.perPeriod(cfg)
	}
	gen, err := workload.New(wcfg)
	if err != nil {
		return HumanMeasure{}, err
	}
	w := &Workload{Keyring: gen.Keyring(), Emitters: gen.Emitters(), VerifierKeys: gen.VerifierKeys(), Moves: wcfg.Moves, RealBeacons: wcfg.RealBeacons,
		BeaconGamesPerRound: gen.BeaconGamesPerRound(), BeaconCache: cfg.BeaconCache, GameCacheBytes: cfg.GameCacheBytes}
	emitterIndex := map[string]int{}
	for i, e := range w.Emitters {
		emitterIndex[e] = i
	}

	access := make([]ingest.EmitterAccess, len(w.Emitters))
	for i, e := range w.Emitters {
		access[i] = ingest.EmitterAccess{Emitter: e, Password: rand.Text()}
	}
	// The log's side of the CPU (cpuSplit): the server, the ledger, the
	// ingest and every goroutine they start.
	setSide(sideLog)
	defer setSide("")
	srv, err := ingest.StartServer(ctx, ingest.ServerConfig{StoreDir: filepath.Join(cfg.Dir, "nats"), Port: -1, Emitters: access})
	if err != nil {
		return HumanMeasure{}, err
	}
	defer srv.Shutdown()
	reg := prometheus.NewRegistry()
	l, err := OpenLedger(ctx, filepath.Join(cfg.Dir, "ledger"), w, 0, reg)
	if err != nil {
		return HumanMeasure{}, err
	}
	defer l.Close()

	// The games in play, each started at a random point of its life, its
	// events before that point appended directly, those it may send in the
	// run made beforehand (humanSetup).
	hs, err := humanSetup(ctx, cfg, gen, sample, emitterIndex, l, progress)
	if err != nil {
		return HumanMeasure{}, err
	}
	slots := hs.slots
	// The preload appends millions of events in a minute or two; the
	// compactions it leaves due would otherwise run in the measured
	// window and be counted against the human pace's events.
	preSettle := time.Now()
	if err := l.WaitCompacted(ctx); err != nil {
		return HumanMeasure{}, fmt.Errorf("bench: compacting the preload: %w", err)
	}
	settled := time.Since(preSettle)

	// The path: the ingest into the ledger, one SDK client per emitter.
	sink := &countingSink{l: l}
	nc, err := srv.Connect()
	if err != nil {
		return HumanMeasure{}, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return HumanMeasure{}, err
	}
	stream, err := ingest.EnsureStream(ctx, js, wire.Subjects{}, ingest.StreamConfig{MaxBytes: srv.StreamBytes()})
	if err != nil {
		return HumanMeasure{}, err
	}
	in, err := ingest.New(nc, ingest.Config{Sink: sink, Locator: l, Checkpoints: l, InfoInterval: -1, Linger: max(cfg.IngestLinger, 0)})
	if err != nil {
		return HumanMeasure{}, err
	}
	ran := make(chan error, 1)
	ictx, stopIngest := context.WithCancel(ctx)
	go func() { ran <- in.Run(ictx) }()
	defer func() { stopIngest(); <-ran }()
	_, vk, err := logKey(ledgerOrigin)
	if err != nil {
		return HumanMeasure{}, err
	}
	// The emitters' side: the SDK clients and the benchmark's players.
	setSide(sideEmitters)
	clients := make([]*sdk.Client, len(w.Emitters))
	for i, e := range w.Emitters {
		enc, err := sdk.Dial(srv.ClientURL(), e, nats.UserInfo(e, access[i].Password))
		if err != nil {
			return HumanMeasure{}, err
		}
		defer enc.Close()
		if clients[i], err = sdk.New(enc, sdk.Config{Emitter: e, LogKey: vk, FollowInterval: followInterval(cfg.NoFollow), Linger: cfg.SDKLinger, PartialFlights: cfg.PartialFlights}); err != nil {
			return HumanMeasure{}, err
		}
		defer clients[i].Close()
	}

	setupS, setupCPUS := time.Since(setupStart), cpuTime()-setupCPU
	rssStart, _ := readRSS()

	// Play: one scheduler per emitter sends each of its games' next event
	// when it is due; its acker waits for each one's acknowledgement (and
	// a goroutine per receipt waited for, for that) and sets when the
	// game's next one is due.
	start := time.Now()
	r := &humanRun{cfg: cfg, start: start, end: start.Add(cfg.Duration), window: start.Add(cfg.Warmup),
		scheds: make([]*humanScheduler, len(w.Emitters))}
	for i := range r.scheds {
		r.scheds[i] = &humanScheduler{r: r, c: clients[i], flights: make(chan humanFlight, 1<<14), wake: make(chan struct{}, 1)}
	}
	// A game's previous event was receipted some time before the start:
	// its next one is due at a uniform time within the longest gap
	// (humanSetup drew it).
	for _, s := range slots {
		r.scheds[s.emitter].heap.push(humanDue{at: s.first.Nanoseconds(), slot: s})
	}
	var sched sync.WaitGroup
	for _, s := range r.scheds {
		sched.Go(func() { s.run(ctx) })
		r.inflight.Go(func() { s.ack(ctx) })
	}
	setSide("")

	// The window.
	if !sleepUntil(ctx, r.window) {
		return HumanMeasure{}, ctx.Err()
	}
	info0, err := stream.Info(ctx)
	if err != nil {
		return HumanMeasure{}, err
	}
	count0, submits0 := sink.count.Load(), sink.submits.Load()
	nats0, err := readNATSCounts(srv.NATS())
	if err != nil {
		return HumanMeasure{}, err
	}
	beacons0 := map[string]float64{}
	if err := beaconChecks(reg, beacons0); err != nil {
		return HumanMeasure{}, err
	}
	if cfg.HeapProfileBase != nil {
		if err := pprof.Lookup("allocs").WriteTo(cfg.HeapProfileBase, 0); err != nil {
			return HumanMeasure{}, fmt.Errorf("bench: the allocations profile: %w", err)
		}
	}
	var mem0, mem1 runtime.MemStats
	runtime.ReadMemStats(&mem0)
	prof := startProfile()
	cpu0, t0 := cpuTime(), time.Now()
	if !sleepUntil(ctx, r.end) {
		return HumanMeasure{}, ctx.Err()
	}
	// The measured time ends here, for the CPU too. The window's counts
	// are read at its end; then comes the settling: the schedulers stop
	// (they send nothing due after the window's end), the events in flight
	// are processed and answered, and the store work the window's writes
	// left due is done. The harness's own work (the CPU profile's parsing,
	// the heap profile's garbage collection) comes after it.
	cpu1, t1 := cpuTime(), time.Now()
	count1, submits1 := sink.count.Load(), sink.submits.Load()
	runtime.ReadMemStats(&mem1)
	nats1, err := readNATSCounts(srv.NATS())
	if err != nil {
		prof.stop()
		return HumanMeasure{}, err
	}
	prof.stop()
	n := int(count1 - count0)
	beacons1 := map[string]float64{}
	if err := beaconChecks(reg, beacons1); err != nil {
		return HumanMeasure{}, err
	}
	info1, err := stream.Info(ctx)
	if err != nil {
		return HumanMeasure{}, err
	}
	rss, peak := readRSS()
	st, err := settle(ctx, l, max(n, 1), func() error {
		sched.Wait()
		r.inflight.Wait()
		if err := r.error(); err != nil {
			return err
		}
		return sink.error()
	})
	if err != nil {
		prof.stages(1, nil)
		return HumanMeasure{}, err
	}
	st.setCPU(cpu1-cpu0, n)
	split, err := prof.stages(max(n, 1), cfg.Profile)
	if err != nil {
		return HumanMeasure{}, err
	}
	if cfg.HeapProfile != nil {
		runtime.GC()
		if err := pprof.Lookup("heap").WriteTo(cfg.HeapProfile, 0); err != nil {
			return HumanMeasure{}, fmt.Errorf("bench: the heap profile: %w", err)
		}
	}
	// What the benchmark still holds of its events (the schedulers have
	// stopped, a moment after the window's end).
	var held int64
	for _, s := range slots {
		for _, e := range s.evs[s.next:] {
			held += int64(len(e.Data))
		}
	}

	m := HumanMeasure{Games: cfg.Games, Emitters: len(w.Emitters), Rolls: cfg.Rolls, MinGapMs: int(cfg.MinGap.Milliseconds()), MaxGapMs: int(cfg.MaxGap.Milliseconds()),
		SDKLingerMs:    float64(sdkLinger(cfg.SDKLinger)) / float64(time.Millisecond),
		MeanGameEvents: sample.meanEvents, StartLimit: hs.limit, RejectedStarts: hs.rejected,
		SetupS: setupS.Seconds(), SetupCPUS: setupCPUS.Seconds(), PreloadS: hs.preloadS, RSSStartBytes: rssStart, HeldEventBytesStart: hs.held,
		Preloaded: hs.preloaded, PreloadSettleS: settled.Seconds(), WindowS: t1.Sub(t0).Seconds(), Receipts: humanReceipts, Events: n, EventsPerSec: float64(n) / t1.Sub(t0).Seconds(),
		CPUStagesMicros: split.Stages, CPUSidesMicros: split.Sides, CPUHarnessMicros: split.Sides[sideHarness],
		CPUMicrosPerEventSettled: st.CPUMicrosPerEvent, SettleCPUMicros: st.CPUS * 1e6 / float64(max(n, 1)), SettleS: st.Seconds, SettleStagesMicros: st.Stages, RSSBytes: rss, RSSPeakBytes: peak, HeldEventBytes: held, IdleGames: int(r.idle.Load()),
		AllocBytesPerEvent: float64(mem1.TotalAlloc-mem0.TotalAlloc) / float64(max(n, 1)), AllocsPerEvent: float64(mem1.Mallocs-mem0.Mallocs) / float64(max(n, 1)), GCs: int(mem1.NumGC - mem0.NumGC),
		BeaconGamesPerRound: wcfg.BeaconGamesPerRound,
		BeaconPairings:      int(beacons1["beacon-pairings"] - beacons0["beacon-pairings"]),
		BeaconCached:        int(beacons1["beacon-cached"] - beacons0["beacon-cached"]),
		Duplicates:          int(beacons1["duplicates"] - beacons0["duplicates"]),
		GameLoads:           int(beacons1["game-loads"] - beacons0["game-loads"]),
		NATSMessages:        nats1.perEvent(nats0, n),
		GameCacheBytes:      cmp.Or(cfg.GameCacheBytes, ledger.DefaultGameCacheBytes)}
	if !wcfg.RealBeacons {
		m.BeaconGamesPerRound = 0
	}
	if n > 0 {
		m.CPUMicrosPerEvent = (cpu1 - cpu0).Seconds() * 1e6 / float64(n)
		m.EventsPerAppend = float64(n) / float64(max(submits1-submits0, 1))
		if msgs := info1.State.LastSeq - info0.State.LastSeq; msgs > 0 {
			m.EventsPerMessage = float64(n) / float64(msgs)
		}
	}
	// The schedulers, their ackers and the receipts' waiters are done.
	var sent, signed, sentBytes int
	var receipts, acks []time.Duration
	for _, s := range r.scheds {
		sent, signed, sentBytes = sent+s.sent, signed+s.signed, sentBytes+s.sentBytes
		receipts, acks = append(receipts, s.receipts...), append(acks, s.acks...)
	}
	if sent > 0 {
		m.MeanBytes, m.SignedShare = float64(sentBytes)/float64(sent), float64(signed)/float64(sent)
	}
	m.ReceiptCount, m.AckCount = len(receipts), len(acks)
	var p50, p99, mx time.Duration
	p50, p99, mx = percentiles(receipts)
	m.ReceiptP50ms, m.ReceiptP99ms, m.ReceiptMaxMs = ms(p50), ms(p99), ms(mx)
	p50, p99, _ = percentiles(acks)
	m.AckP50ms, m.AckP99ms = ms(p50), ms(p99)
	return m, nil
}

func cmpOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// sleepUntil sleeps until t, or returns false if ctx ends first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// A humanSlot is one table: the events it may send in the run (those of
// its game in play from its start point on, then of the table's next games),
// the next of them, and the pause after each one's receipt.
type humanSlot struct {
	evs     []workload.Event
	next    int
	emitter int
	// first is when the first event is due, after the play's start; gaps[i]
	// is the pause between evs[i]'s receipt and the next event.
	first time.Duration
	gaps  []time.Duration
}

// A humanRun is the state of a human-pace run's play.
type humanRun struct {
	cfg           HumanConfig
	start, window time.Time
	end           time.Time
	scheds        []*humanScheduler
	// inflight counts the ackers and the receipts' waiters.
	inflight sync.WaitGroup
	idle     atomic.Int64
	mu       sync.Mutex
	first    error
}

func (r *humanRun) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first == nil {
		r.first = err
	}
}

func (r *humanRun) error() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

// A humanDue is when a table's next event is due, in nanoseconds after the
// play's start.
type humanDue struct {
	at   int64
	slot *humanSlot
}

// A humanHeap is a min-heap of dues by time (container/heap's algorithm
// without its interface conversions: this is the benchmark's own work).
type humanHeap []humanDue

func (h *humanHeap) push(d humanDue) {
	*h = append(*h, d)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if q[p].at <= q[i].at {
			break
		}
		q[p], q[i] = q[i], q[p]
		i = p
	}
}

func (h *humanHeap) pop() humanDue {
	q := *h
	d := q[0]
	n := len(q) - 1
	q[0] = q[n]
	q = q[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && q[c+1].at < q[c].at {
			c++
		}
		if q[i].at <= q[c].at {
			break
		}
		q[i], q[c] = q[c], q[i]
		i = c
	}
	*h = q
	return d
}

// A humanFlight is an event published and not yet answered.
type humanFlight struct {
	slot      *humanSlot
	ev        sdk.Event
	p         *sdk.Pending
	receipt   bool // the game waits for its checked receipt
	inWindow  bool
	published time.Time
	gap       time.Duration // after its answer, before the table's next event
}

// A humanScheduler sends one emitter's games' events when they are due:
// its run loop sends the due events, and its acker (ack) takes the
// published events in order, waits for each one's acknowledgement, and
// sets when the table's next event is due (or hands the event to a waiter
// of its checked receipt, which then does). The events of an emitter are
// acknowledged in the order they were published, a NATS message's
// together, so the acker rarely waits for one event while a later one is
// answered; when it does, the later one's latency is counted when the
// acker sees it: longer, never shorter, than it was.
type humanScheduler struct {
	r       *humanRun
	c       *sdk.Client
	flights chan humanFlight // published, to the acker, in order; closed when run returns
	wake    chan struct{}    // capacity 1: a due earlier than waking
	mu      sync.Mutex       // heap, waking
	heap    humanHeap
	waking  int64 // when run wakes next, after the start
	// The window's figures: sent, signed and sentBytes run's, acks the
	// acker's, receipts the receipts' waiters' (under rmu).
	sent, signed, sentBytes int
	acks                    []time.Duration
	rmu                     sync.Mutex
	receipts                []time.Duration
}

// run is the scheduler's loop, until the run's end.
func (s *humanScheduler) run(ctx context.Context) {
	defer close(s.flights)
	end := s.r.end.Sub(s.r.start).Nanoseconds()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var due []humanDue
	for {
		now := time.Since(s.r.start).Nanoseconds()
		s.mu.Lock()
		due = due[:0]
		for len(s.heap) > 0 && s.heap[0].at <= now {
			due = append(due, s.heap.pop())
		}
		next := end
		if len(s.heap) > 0 {
			next = min(next, s.heap[0].at)
		}
		s.waking = next
		s.mu.Unlock()
		for _, d := range due {
			if d.at < end {
				s.send(ctx, d.slot)
			}
		}
		if now >= end {
			return
		}
		if len(due) > 0 {
			continue // sending took time: look again
		}
		timer.Reset(time.Duration(next - now))
		select {
		case <-s.wake:
		case <-timer.C:
		case <-ctx.Done():
			return
		}
	}
}

// schedule sets the table's next event due gap from now.
func (s *humanScheduler) schedule(slot *humanSlot, gap time.Duration) {
	at := time.Since(s.r.start).Nanoseconds() + gap.Nanoseconds()
	s.mu.Lock()
	s.heap.push(humanDue{at: at, slot: slot})
	early := at < s.waking
	s.mu.Unlock()
	if early {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// send publishes the table's next event and hands it to the acker.
func (s *humanScheduler) send(ctx context.Context, slot *humanSlot) {
	r := s.r
	if slot.next == len(slot.evs) {
		// Not made beforehand: humanSetup made every event due before the
		// end at the earliest.
		r.idle.Add(1)
		return
	}
	gap := slot.gaps[slot.next]
	e := slot.evs[slot.next]
	slot.evs[slot.next] = workload.Event{} // sent: its bytes are not held any more
	slot.next++
	ev := sdk.Event{ID: e.ID, Data: e.Data, OrderKey: e.Game}
	published := time.Now()
	p, err := s.c.PublishAsync(ctx, ev)
	if err != nil {
		r.fail(fmt.Errorf("bench: publishing %s: %w", e.ID, err))
		return
	}
	inWindow := !published.Before(r.window)
	if inWindow {
		s.sent++
		s.sentBytes += len(e.Data)
		if e.Signed {
			s.signed++
		}
	}
	f := humanFlight{slot: slot, ev: ev, p: p, receipt: waitsForReceipt(e.Type), inWindow: inWindow, published: published, gap: gap}
	select {
	case s.flights <- f: // without a select of two cases, mostly
	default:
		select {
		case s.flights <- f:
		case <-ctx.Done():
		}
	}
}

// ack is the scheduler's acker, until run returns and every event it
// published is answered.
func (s *humanScheduler) ack(ctx context.Context) {
	r := s.r
	for f := range s.flights {
		select {
		case <-f.p.Done(): // answered already, mostly: a message's events together
		default:
			select {
			case <-f.p.Done():
			case <-ctx.Done():
				return
			}
		}
		ack, err := f.p.Result()
		if err != nil {
			r.fail(fmt.Errorf("bench: the acknowledgement of %s: %w", f.ev.ID, err))
			continue
		}
		if f.inWindow {
			s.acks = append(s.acks, time.Since(f.published))
		}
		if f.receipt {
			r.inflight.Go(func() { s.receiptWait(ctx, f, ack) })
			continue
		}
		s.schedule(f.slot, f.gap)
	}
}

// receiptWait waits for an event's checked receipt, then sets the table's
// next event due.
func (s *humanScheduler) receiptWait(ctx context.Context, f humanFlight, ack sdk.Ack) {
	r := s.r
	rc, err := s.c.ReceiptOf(ctx, f.ev, ack)
	if err != nil {
		r.fail(fmt.Errorf("bench: the receipt of %s: %w", f.ev.ID, err))
		return
	}
	if !rc.SignatureChecked {
		r.fail(fmt.Errorf("bench: the receipt of %s: the SDK did not check its signature", f.ev.ID))
		return
	}
	if f.inWindow {
		got := time.Since(f.published)
		s.rmu.Lock()
		s.receipts = append(s.receipts, got)
		s.rmu.Unlock()
	}
	s.schedule(f.slot, f.gap)
}

// A countingSink is the ledger's Append, counting the events appended and
// the calls.
type countingSink struct {
	l       *ledger.Ledger
	submits atomic.Int64
	count   atomic.Int64
	mu      sync.Mutex
	err     error
}

func (s *countingSink) Append(ctx context.Context, in []ledger.Input) ([]ledger.Outcome, error) {
	outs, err := s.l.Append(ctx, in)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, o := range outs {
		switch o.Result {
		case ledger.Appended, ledger.Duplicate:
			n++
		default:
			s.mu.Lock()
			if s.err == nil {
				s.err = fmt.Errorf("bench: the ledger refused event %s: %v", o.ID, o.Reject)
			}
			s.mu.Unlock()
		}
	}
	s.submits.Add(1)
	s.count.Add(int64(n))
	return outs, nil
}

func (s *countingSink) error() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// readRSS returns the process's resident set size and its peak, from
// /proc/self/status (0, 0 where there is none).
func readRSS() (rss, peak int64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte(":"))
		if !ok {
			continue
		}
		f := bytes.Fields(v)
		if len(f) != 2 || string(f[1]) != "kB" {
			continue
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			continue
		}
		switch string(k) {
		case "VmRSS":
			rss = kb << 10
		case "VmHWM":
			peak = kb << 10
		}
	}
	return rss, peak
}

// BeaconGamesPerPeriod returns how many anchored-v1 games the human pace
// of cfg seals in one quicknet period (three seconds), at least one: the
// games in play over a game's mean life (its mean number of events times
// the mean gap between them) are the games started a second, of which the
// stream's share of anchored-v1 games are anchored; each names the first
// round after its sealing, so those of one period share a round and its
// beacon. The mean life and the share are those of 512 games of the
// stream wcfg describes (with a fake chain: their shapes are the same).
func BeaconGamesPerPeriod(wcfg workload.Config, cfg HumanConfig) (int, error) {
	s, err := sampleGames(wcfg)
	if err != nil {
		return 0, err
	}
	return s.perPeriod(cfg), nil
}

// A gameSample describes the games of a stream, from 512 of them: their
// mean and largest number of events, and the share of anchored-v1 games.
type gameSample struct {
	meanEvents    float64
	longest       int
	anchoredShare float64
}

// sampleGames describes the games of the stream wcfg describes (with a
// fake chain: their shapes are the same).
func sampleGames(wcfg workload.Config) (gameSample, error) {
	wcfg.RealBeacons, wcfg.Prefix = false, "sample"
	gen, err := workload.New(wcfg)
	if err != nil {
		return gameSample{}, err
	}
	const sample = 512
	var s gameSample
	evs, anchored := 0, 0
	for range sample {
		g, err := gen.Game()
		if err != nil {
			return gameSample{}, err
		}
		evs += len(g)
		s.longest = max(s.longest, len(g))
		if slices.ContainsFunc(g, func(e workload.Event) bool { return e.Type == events.TypeBeacon }) {
			anchored++
		}
	}
	s.meanEvents, s.anchoredShare = float64(evs)/sample, float64(anchored)/sample
	return s, nil
}

// perPeriod is BeaconGamesPerPeriod of the sample's stream.
func (s gameSample) perPeriod(cfg HumanConfig) int {
	meanGap := (cfg.MinGap + cfg.MaxGap).Seconds() / 2
	life := s.meanEvents * meanGap
	perPeriod := float64(cfg.Games) / life * s.anchoredShare * drand.Quicknet().Period().Seconds()
	return max(1, int(math.Round(perPeriod)))
}

// A humanSetupResult is the games of a human-pace run, ready to play.
type humanSetupResult struct {
	slots []*humanSlot
	// preloaded is how many events were appended directly, in preloadS
	// seconds (their making included); held the bytes of the events made
	// for the run; limit the bound of the start points, rejected how many
	// games ended before theirs.
	preloaded, limit, rejected int
	preloadS                   float64
	held                       int64
}

// humanSetup makes the games in play of a human-pace run and appends each
// one's events before its start point to l.
//
// A table's game in play at a random instant is a game drawn in
// proportion to its length, at a uniform point of it: each table draws a
// game (workload.Generator.StreamOf, made as it is read) and a start
// point k uniform below limit (a tenth above the longest of the sample's
// games); a game that ends before its event k is put aside (rejected) and
// another drawn, so that a game of n events is kept with a probability
// n/limit. The game's first k events are appended to the ledger (not
// measured); the events the table may send in the run are made now, so
// that the run's CPU is not the benchmark's making of events: the gaps
// after each receipt are drawn now too, and every event that could be due
// before the run's end (its table's first due time plus the gaps before
// it, the receipts' latencies taken as nothing) is made, crossing into the
// table's next games (of the same emitter) when one ends. Nothing else of
// a game is held: its events are made as they are read, by GOMAXPROCS
// goroutines.
func humanSetup(ctx context.Context, cfg HumanConfig, gen *workload.Generator, sample gameSample, emitterIndex map[string]int, l *ledger.Ledger,
	progress func(string, int, int)) (humanSetupResult, error) {
	res := humanSetupResult{slots: make([]*humanSlot, cfg.Games), limit: sample.longest + sample.longest/10 + 1}
	start := time.Now()
	var genMu sync.Mutex // gen and starts
	starts := mrand.New(mrand.NewPCG(1, 0x4a11))
	stream := func(emitter int, draw bool) (*workload.GameStream, int, error) {
		genMu.Lock()
		defer genMu.Unlock()
		s, err := gen.StreamOf(emitter)
		k := 0
		if draw {
			k = starts.IntN(res.limit)
		}
		return s, k, err
	}
	var rejected atomic.Int64
	// slot makes table i and returns the events before its start point.
	slot := func(i int) (*humanSlot, []workload.Event, error) {
		for {
			s, k, err := stream(-1, true)
			if err != nil {
				return nil, nil, err
			}
			pre := make([]workload.Event, 0, k+1)
			for len(pre) <= k {
				e, ok, err := s.Next()
				if err != nil {
					return nil, nil, err
				}
				if !ok {
					break
				}
				pre = append(pre, e)
			}
			if len(pre) <= k {
				rejected.Add(1)
				continue
			}
			first := pre[k]
			emitter := emitterIndex[first.Emitter]
			rng := mrand.New(mrand.NewPCG(3, uint64(i)))
			t := &humanSlot{emitter: emitter, first: time.Duration(rng.Int64N(int64(cfg.MaxGap)))}
			evs := []workload.Event{first}
			for at := t.first; ; {
				gap := cfg.MinGap + time.Duration(rng.Int64N(int64(cfg.MaxGap-cfg.MinGap)+1))
				t.gaps = append(t.gaps, gap)
				if at += gap; at >= cfg.Duration {
					break
				}
				e, ok, err := s.Next()
				for err == nil && !ok { // the game ended: the table's next one
					if s, _, err = stream(emitter, false); err == nil {
						e, ok, err = s.Next()
					}
				}
				if err != nil {
					return nil, nil, err
				}
				evs = append(evs, e)
			}
			// The bench's own events: a few objects a table, not three an
			// event (compact).
			compact(evs)
			t.evs = evs
			return t, pre[:k], nil
		}
	}
	type made struct {
		i   int
		t   *humanSlot
		pre []workload.Event
		err error
	}
	out := make(chan made, 64)
	var next atomic.Int64
	for range runtime.GOMAXPROCS(0) {
		go func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= cfg.Games {
					return
				}
				t, pre, err := slot(i)
				select {
				case out <- made{i, t, pre, err}:
				case <-ctx.Done():
					return
				}
				if err != nil {
					return
				}
			}
		}()
	}
	var batch []ledger.Input
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		outs, err := l.Append(ctx, batch)
		if err == nil {
			err = allAppended(outs)
		}
		res.preloaded += len(batch)
		batch = batch[:0]
		if err != nil {
			return fmt.Errorf("bench: preloading: %w", err)
		}
		return nil
	}
	for done := range cfg.Games {
		var m made
		select {
		case m = <-out:
		case <-ctx.Done():
			return humanSetupResult{}, ctx.Err()
		}
		if m.err != nil {
			return humanSetupResult{}, m.err
		}
		res.slots[m.i] = m.t
		for _, e := range m.t.evs {
			res.held += int64(len(e.Data))
		}
		for _, e := range m.pre {
			batch = append(batch, ledger.Input{Emitter: e.Emitter, MsgID: e.ID, Data: e.Data})
		}
		if len(batch) >= 2000 {
			if err := flush(); err != nil {
				return humanSetupResult{}, err
			}
		}
		if done%256 == 0 {
			progress("human pace: games", done, cfg.Games)
		}
	}
	if err := flush(); err != nil {
		return humanSetupResult{}, err
	}
	progress("human pace: games", cfg.Games, cfg.Games)
	res.rejected, res.preloadS = int(rejected.Load()), time.Since(start).Seconds()
	return res, nil
}

// sdkLinger returns the Linger an SDK client given linger runs with.
func sdkLinger(linger time.Duration) time.Duration {
	switch {
	case linger == 0:
		return sdk.DefaultLinger
	case linger < 0:
		return 0
	}
	return linger
}
