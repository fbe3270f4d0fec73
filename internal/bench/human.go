package bench

import (
	"bufio"
	"bytes"
	"container/heap"
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
	DefaultHumanRolls    = 8
	DefaultHumanMinGap   = 2 * time.Second
	DefaultHumanMaxGap   = 10 * time.Second
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
	// BeaconCache is as in Config.
	BeaconCache int
	// NoFollow turns the SDK clients' following off (Config.NoFollow).
	NoFollow bool
	// Rolls is the number of rolls of a per-game scheme's game (a
	// per-roll-v1 match has half as many; workload.Config.Rolls). Zero
	// means DefaultHumanRolls.
	Rolls int
	// Progress, if not nil, is called as the run goes: the step, and how
	// many of its total items are done.
	Progress func(step string, done, total int)
	// Profile, if not nil, receives the CPU profile (pprof format) of the
	// measured window, the one HumanMeasure.CPUStagesMicros comes from.
	Profile io.Writer
	// HeapProfile, if not nil, receives the heap profile (pprof format)
	// at the measured window's end, after a garbage collection: what the
	// process holds with the games in play.
	HeapProfile io.Writer
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
	Preloaded   int     `json:"preloadedEvents"`
	// PreloadSettleS is how long the ledger's store took, after the
	// preload, to finish the compactions the preload left due
	// (ledger.Ledger.WaitCompacted), before the games started.
	PreloadSettleS float64 `json:"preloadSettleSeconds"`
	WindowS        float64 `json:"windowSeconds"`
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
	// EventsPerAppend is the mean number of events per call of the
	// ledger's Append, and EventsPerMessage per NATS message, in the
	// window.
	EventsPerAppend  float64 `json:"eventsPerAppend"`
	EventsPerMessage float64 `json:"eventsPerMessage"`
	// IdleGames is how many games ran out of events before the end (0
	// unless the spare games were too few).
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
// The games are in steady state from the start: each is made whole
// (workload.Generator.Game, cfg.Rolls rolls) and its first k events, k
// drawn uniformly over its length, are appended to the ledger directly
// before the run (not measured), so that the run sees games at every stage
// of their life, not 50,000 commits at once. The store then finishes the
// compactions the preload left due (ledger.Ledger.WaitCompacted) before
// the games start, so that the window pays for its own writes only. A game that ends is followed
// by a new one (a table's next game), from spare games made beforehand.
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
	wcfg.Seed, wcfg.Prefix, wcfg.Emitters, wcfg.Rolls, wcfg.BeaconGamesPerRound = 1, "human", cfg.Emitters, cfg.Rolls, cfg.BeaconGamesPerRound
	if wcfg.RealBeacons && wcfg.BeaconGamesPerRound == 0 {
		if wcfg.BeaconGamesPerRound, err = BeaconGamesPerPeriod(wcfg, cfg); err != nil {
			return HumanMeasure{}, err
		}
	}
	gen, err := workload.New(wcfg)
	if err != nil {
		return HumanMeasure{}, err
	}
	w := &Workload{Keyring: gen.Keyring(), Emitters: gen.Emitters(), VerifierKeys: gen.VerifierKeys(), Moves: wcfg.Moves, RealBeacons: wcfg.RealBeacons,
		BeaconGamesPerRound: gen.BeaconGamesPerRound(), BeaconCache: cfg.BeaconCache}
	emitterIndex := map[string]int{}
	for i, e := range w.Emitters {
		emitterIndex[e] = i
	}

	access := make([]ingest.EmitterAccess, len(w.Emitters))
	for i, e := range w.Emitters {
		access[i] = ingest.EmitterAccess{Emitter: e, Password: rand.Text()}
	}
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

	// The games, each with its first events appended directly.
	rng := mrand.New(mrand.NewPCG(1, 0x4a11))
	slots := make([]*humanSlot, cfg.Games)
	var pre []ledger.Input
	preloaded, total := 0, 0
	flush := func() error {
		if len(pre) == 0 {
			return nil
		}
		outs, err := l.Append(ctx, pre)
		if err == nil {
			err = allAppended(outs)
		}
		preloaded += len(pre)
		pre = pre[:0]
		return err
	}
	for i := range slots {
		evs, err := gen.Game()
		if err != nil {
			return HumanMeasure{}, err
		}
		total += len(evs)
		k := rng.IntN(len(evs))
		for _, e := range evs[:k] {
			pre = append(pre, ledger.Input{Emitter: e.Emitter, MsgID: e.ID, Data: e.Data})
		}
		// The events still to send, in a few objects, not three an event
		// (compact): they are the bench's, not the ledger's.
		evs = slices.Clone(evs[k:])
		compact(evs)
		if len(pre) >= 2000 {
			if err := flush(); err != nil {
				return HumanMeasure{}, fmt.Errorf("bench: preloading: %w", err)
			}
		}
		slots[i] = &humanSlot{evs: evs, emitter: emitterIndex[evs[0].Emitter]}
		if i%256 == 0 {
			progress("human pace: games", i, cfg.Games)
		}
	}
	if err := flush(); err != nil {
		return HumanMeasure{}, fmt.Errorf("bench: preloading: %w", err)
	}
	progress("human pace: games", cfg.Games, cfg.Games)
	// The preload appends half a million events in a few seconds; the
	// compactions it leaves due would otherwise run in the measured
	// window and be counted against the human pace's events.
	settle := time.Now()
	if err := l.WaitCompacted(ctx); err != nil {
		return HumanMeasure{}, fmt.Errorf("bench: compacting the preload: %w", err)
	}
	settled := time.Since(settle)
	// Spare games, for the tables whose game ends: a game's remaining
	// events take about (MinGap+MaxGap)/2 each.
	meanLen := float64(total) / float64(cfg.Games)
	perGame := (cfg.MinGap + cfg.MaxGap).Seconds() / 2 * meanLen
	spares := make([]*humanSpares, len(w.Emitters))
	for i := range spares {
		spares[i] = &humanSpares{}
	}
	nSpare := int(1.3*float64(cfg.Games)*min(1, cfg.Duration.Seconds()/perGame)) + 16*len(w.Emitters)
	for i := range nSpare {
		evs, err := gen.Game()
		if err != nil {
			return HumanMeasure{}, err
		}
		compact(evs) // the bench's own events: a few objects a game, not three an event (compact)
		sp := spares[emitterIndex[evs[0].Emitter]]
		sp.games = append(sp.games, evs)
		if i%256 == 0 {
			progress("human pace: spare games", i, nSpare)
		}
	}
	progress("human pace: spare games", nSpare, nSpare)

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
	stream, err := ingest.EnsureStream(ctx, js, wire.Subjects{}, ingest.StreamConfig{})
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

	// Play: one scheduler per emitter sends each of its games' next event
	// when it is due; a goroutine per event in flight waits for its
	// receipt and sets when the game's next one is due.
	start := time.Now()
	r := &humanRun{cfg: cfg, start: start, end: start.Add(cfg.Duration), window: start.Add(cfg.Warmup),
		scheds: make([]*humanScheduler, len(w.Emitters))}
	for i := range r.scheds {
		r.scheds[i] = &humanScheduler{r: r, c: clients[i], spares: spares[i], wake: make(chan humanDue, 1024), stopped: make(chan struct{}),
			rng: mrand.New(mrand.NewPCG(2, uint64(i)))}
	}
	// A game's previous event was receipted some time before the start:
	// its next one is due at a uniform time within the longest gap.
	for _, s := range slots {
		due := start.Add(time.Duration(rng.Int64N(int64(cfg.MaxGap))))
		r.scheds[s.emitter].heap = append(r.scheds[s.emitter].heap, humanDue{at: due, slot: s})
	}
	var sched sync.WaitGroup
	for _, s := range r.scheds {
		heap.Init(&s.heap)
		sched.Go(func() { s.run(ctx) })
	}

	// The window.
	if !sleepUntil(ctx, r.window) {
		return HumanMeasure{}, ctx.Err()
	}
	info0, err := stream.Info(ctx)
	if err != nil {
		return HumanMeasure{}, err
	}
	count0, submits0 := sink.count.Load(), sink.submits.Load()
	beacons0 := map[string]float64{}
	if err := beaconChecks(reg, beacons0); err != nil {
		return HumanMeasure{}, err
	}
	prof := startProfile()
	cpu0, t0 := cpuTime(), time.Now()
	if !sleepUntil(ctx, r.end) {
		return HumanMeasure{}, ctx.Err()
	}
	cpu1, t1 := cpuTime(), time.Now()
	count1, submits1 := sink.count.Load(), sink.submits.Load()
	n := int(count1 - count0)
	beacons1 := map[string]float64{}
	if err := beaconChecks(reg, beacons1); err != nil {
		return HumanMeasure{}, err
	}
	stages, err := prof.stages(max(n, 1), cfg.Profile)
	if err != nil {
		return HumanMeasure{}, err
	}
	info1, err := stream.Info(ctx)
	if err != nil {
		return HumanMeasure{}, err
	}
	rss, peak := readRSS()
	if cfg.HeapProfile != nil {
		runtime.GC()
		if err := pprof.Lookup("heap").WriteTo(cfg.HeapProfile, 0); err != nil {
			return HumanMeasure{}, fmt.Errorf("bench: the heap profile: %w", err)
		}
	}

	sched.Wait()
	// What the benchmark still holds of its events (the schedulers have
	// stopped, a moment after the window's end).
	var held int64
	for _, s := range slots {
		for _, e := range s.evs[s.next:] {
			held += int64(len(e.Data))
		}
	}
	for _, sp := range spares {
		for _, evs := range sp.games[min(int(sp.next.Load()), len(sp.games)):] {
			for _, e := range evs {
				held += int64(len(e.Data))
			}
		}
	}
	r.inflight.Wait()
	if err := r.error(); err != nil {
		return HumanMeasure{}, err
	}
	if err := sink.error(); err != nil {
		return HumanMeasure{}, err
	}

	m := HumanMeasure{Games: cfg.Games, Emitters: len(w.Emitters), Rolls: cfg.Rolls, MinGapMs: int(cfg.MinGap.Milliseconds()), MaxGapMs: int(cfg.MaxGap.Milliseconds()),
		SDKLingerMs: float64(sdkLinger(cfg.SDKLinger)) / float64(time.Millisecond),
		Preloaded:   preloaded, PreloadSettleS: settled.Seconds(), WindowS: t1.Sub(t0).Seconds(), Receipts: humanReceipts, Events: n, EventsPerSec: float64(n) / t1.Sub(t0).Seconds(),
		CPUStagesMicros: stages, RSSBytes: rss, RSSPeakBytes: peak, HeldEventBytes: held, IdleGames: int(r.idle.Load()),
		BeaconGamesPerRound: wcfg.BeaconGamesPerRound,
		BeaconPairings:      int(beacons1["beacon-pairings"] - beacons0["beacon-pairings"]),
		BeaconCached:        int(beacons1["beacon-cached"] - beacons0["beacon-cached"]),
		Duplicates:          int(beacons1["duplicates"] - beacons0["duplicates"])}
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sent > 0 {
		m.MeanBytes, m.SignedShare = float64(r.sentBytes)/float64(r.sent), float64(r.signed)/float64(r.sent)
	}
	m.ReceiptCount, m.AckCount = len(r.receipts), len(r.acks)
	var p50, p99, mx time.Duration
	p50, p99, mx = percentiles(r.receipts)
	m.ReceiptP50ms, m.ReceiptP99ms, m.ReceiptMaxMs = ms(p50), ms(p99), ms(mx)
	p50, p99, _ = percentiles(r.acks)
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

// A humanSlot is one table: the game in play and its next event.
type humanSlot struct {
	evs     []workload.Event
	next    int
	emitter int
}

// humanSpares are the games that follow those that end.
type humanSpares struct {
	games [][]workload.Event
	next  atomic.Int64
}

func (s *humanSpares) take() ([]workload.Event, bool) {
	i := s.next.Add(1) - 1
	if int(i) >= len(s.games) {
		return nil, false
	}
	evs := s.games[i]
	s.games[i] = nil
	return evs, true
}

// A humanRun is the state of a human-pace run's play.
type humanRun struct {
	cfg            HumanConfig
	start, window  time.Time
	end            time.Time
	scheds         []*humanScheduler
	inflight       sync.WaitGroup
	idle           atomic.Int64
	mu             sync.Mutex
	receipts, acks []time.Duration // of the events published in the window
	sent, signed   int             // in the window
	sentBytes      int
	first          error
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

// A humanDue is when a table's next event is due.
type humanDue struct {
	at   time.Time
	slot *humanSlot
}

type humanHeap []humanDue

func (h humanHeap) Len() int           { return len(h) }
func (h humanHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h humanHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *humanHeap) Push(x any)        { *h = append(*h, x.(humanDue)) }
func (h *humanHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// A humanScheduler sends one emitter's games' events when they are due.
type humanScheduler struct {
	r       *humanRun
	c       *sdk.Client
	spares  *humanSpares // the emitter's
	heap    humanHeap
	wake    chan humanDue // games whose next event is due at a new time
	stopped chan struct{} // closed when run returns
	mu      sync.Mutex    // rng, used by the waiters
	rng     *mrand.Rand
}

// run is the scheduler's loop, until the run's end.
func (s *humanScheduler) run(ctx context.Context) {
	defer close(s.stopped)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		for len(s.heap) > 0 && !s.heap[0].at.After(now) {
			d := heap.Pop(&s.heap).(humanDue)
			if d.at.Before(s.r.end) {
				s.send(ctx, d.slot)
			}
		}
		if now.After(s.r.end) {
			return
		}
		wait := time.Until(s.r.end)
		if len(s.heap) > 0 {
			wait = min(wait, time.Until(s.heap[0].at))
		}
		timer.Reset(max(wait, 0))
		select {
		case d := <-s.wake:
			heap.Push(&s.heap, d)
		case <-timer.C:
		case <-ctx.Done():
			return
		}
	}
}

// send publishes the table's next event (starting its next game if its
// game has ended) and waits for its receipt in a goroutine of its own.
func (s *humanScheduler) send(ctx context.Context, slot *humanSlot) {
	r := s.r
	if slot.next == len(slot.evs) {
		evs, ok := s.spares.take()
		if !ok {
			r.idle.Add(1)
			return
		}
		slot.evs, slot.next = evs, 0
	}
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
		r.mu.Lock()
		r.sent++
		r.sentBytes += len(e.Data)
		if e.Signed {
			r.signed++
		}
		r.mu.Unlock()
	}
	r.inflight.Go(func() { s.humanWait(ctx, slot, ev, p, waitsForReceipt(e.Type), published, inWindow) })
}

// humanWait waits for an event's acknowledgement, and its checked receipt
// if the game waits for it, then sets the game's next event due. It has a
// name of its own so that the CPU profile counts it as the backends'.
func (s *humanScheduler) humanWait(ctx context.Context, slot *humanSlot, ev sdk.Event, p *sdk.Pending, receipt bool, published time.Time, inWindow bool) {
	r := s.r
	ack, err := p.Wait(ctx)
	if err != nil {
		r.fail(fmt.Errorf("bench: the acknowledgement of %s: %w", ev.ID, err))
		return
	}
	acked := time.Since(published)
	var got time.Duration
	if receipt {
		rc, err := s.c.ReceiptOf(ctx, ev, ack)
		if err != nil {
			r.fail(fmt.Errorf("bench: the receipt of %s: %w", ev.ID, err))
			return
		}
		if !rc.SignatureChecked {
			r.fail(fmt.Errorf("bench: the receipt of %s: the SDK did not check its signature", ev.ID))
			return
		}
		got = time.Since(published)
	}
	if inWindow {
		r.mu.Lock()
		r.acks = append(r.acks, acked)
		if receipt {
			r.receipts = append(r.receipts, got)
		}
		r.mu.Unlock()
	}
	s.mu.Lock()
	gap := r.cfg.MinGap + time.Duration(s.rng.Int64N(int64(r.cfg.MaxGap-r.cfg.MinGap)+1))
	s.mu.Unlock()
	select {
	case s.wake <- humanDue{at: time.Now().Add(gap), slot: slot}:
	case <-s.stopped:
	case <-ctx.Done():
	}
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
	wcfg.RealBeacons, wcfg.Prefix = false, "sample"
	gen, err := workload.New(wcfg)
	if err != nil {
		return 0, err
	}
	const sample = 512
	evs, anchored := 0, 0
	for range sample {
		g, err := gen.Game()
		if err != nil {
			return 0, err
		}
		evs += len(g)
		if slices.ContainsFunc(g, func(e workload.Event) bool { return e.Type == events.TypeBeacon }) {
			anchored++
		}
	}
	meanGap := (cfg.MinGap + cfg.MaxGap).Seconds() / 2
	life := float64(evs) / sample * meanGap
	perPeriod := float64(cfg.Games) / life * float64(anchored) / sample * drand.Quicknet().Period().Seconds()
	return max(1, int(math.Round(perPeriod))), nil
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
