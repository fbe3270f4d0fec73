package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/zarlog/zarlog/bucket"
	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/workload"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/storage"
	"github.com/zarlog/zarlog/wire"
)

// An EndToEndConfig configures an end-to-end measurement. Every field's zero
// value is documented.
type EndToEndConfig struct {
	// Dir holds the NATS store (Dir/nats) and the ledger (Dir/ledger); it
	// must be empty or absent. Required.
	Dir string
	// Rate is the offered load in events per second, paced over the whole
	// run. Zero means as fast as the publishers can (each SDK client keeps
	// up to its MaxQueued events waiting).
	Rate int
	// Window and MaxBatchEvents are the SDK clients' (sdk.Config): NATS
	// messages awaiting their JetStream ack, and the most events packed
	// into one message. Zero means the SDK's defaults (32 and 64).
	Window, MaxBatchEvents int
	// CheckpointInterval is the ledger's. Zero means its default, 100 ms.
	CheckpointInterval time.Duration
	// Progress, if not nil, is called with the number of events appended
	// so far, after each of the ingest's Appends (from its goroutine).
	Progress func(done int)
	// Profile, if not nil, receives the run's CPU profile (pprof format),
	// the one Result.Stages is computed from.
	Profile io.Writer
	// AllocProfile, if not nil, receives the run's allocations (pprof
	// format: alloc_objects and alloc_space, sampled as
	// runtime.MemProfileRate says), those of Result's allocsPerEvent and
	// its settling's (Result.Settle: taken after it). It costs two garbage
	// collections outside the measured time and the settling.
	AllocProfile io.Writer
	// Receipts asks, as the backends do, for the SDK's receipt of every
	// game's commit (a game's first roll waits for it) and of every
	// ReceiptSample-th event, once JetStream acknowledged it: each a
	// tlog-proof of the event, checked by the SDK against the event's bytes
	// and the log's key. Result.Receipt* are then set.
	Receipts bool
	// Storage, if not nil, is an empty bucket prefix where the log is kept
	// as `zarlog serve --storage` keeps it (package storage): every
	// checkpoint is published only once it, its tiles, entry bundles and
	// append times are in the bucket and the lock holds it.
	Storage bucket.Store
	// NoFollow turns the SDK clients' following off (a negative
	// sdk.Config.FollowInterval). Zero means the SDK's default: each
	// client holds its events until the ledger reports them logged,
	// asking every sdk.DefaultFollowInterval.
	NoFollow bool
	// PartialFlights is the SDK clients' (sdk.Config). Zero means the
	// SDK's default.
	PartialFlights int
	// EmitterRates limits each emitter to the ingest's default rates
	// (Config.EmitterRates); false limits none.
	EmitterRates bool
}

// followInterval is the sdk.Config.FollowInterval of a run that follows
// (the SDK's default) or not.
func followInterval(noFollow bool) time.Duration {
	if noFollow {
		return -1
	}
	return 0
}

// ReceiptSample is how often, besides the commits, EndToEnd asks for an
// event's receipt (EndToEndConfig.Receipts): every ReceiptSample-th event.
const ReceiptSample = 100

// EndToEnd runs w's events through the whole ingest path in one process:
// one SDK client per emitter (sdk.Dial over TCP to the embedded
// nats-server's listener, sdk.Client.PublishAsync with the game id as
// OrderKey, events published in stream order), the JetStream stream, the
// ingest (ingest.Ingester) and the ledger (full append path), the ingest
// calling the ledger's Append through a sink that records leaves. It
// returns when a published signed checkpoint covers every event.
//
// Latencies (P50, P99, Max) run from each event's PublishAsync call to the
// publication of the first signed checkpoint covering it. Metrics:
// "events/submit", the mean number of events per Append, and
// "events/message", the mean number of events per NATS message, and
// "alloc-B/event" and "allocs/event", the bytes and objects the whole
// process allocated (the garbage collector's work) per event.
func EndToEnd(ctx context.Context, cfg EndToEndConfig, w *Workload) (Result, error) {
	if cfg.Dir == "" {
		return Result{}, errors.New("bench: EndToEndConfig.Dir is empty")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The log's side of the CPU (cpuSplit): the server, the ledger, the
	// ingest and every goroutine they start.
	setSide(sideLog)
	defer setSide("")
	// The emitters authenticate as they do against zarlog serve: each
	// with its own user and the permissions of docs/NATS.md §7.
	access := make([]ingest.EmitterAccess, len(w.Emitters))
	for i, e := range w.Emitters {
		access[i] = ingest.EmitterAccess{Emitter: e, Password: rand.Text()}
	}
	srv, err := ingest.StartServer(ctx, ingest.ServerConfig{StoreDir: filepath.Join(cfg.Dir, "nats"), Port: -1, Emitters: access})
	if err != nil {
		return Result{}, err
	}
	defer srv.Shutdown()
	reg := prometheus.NewRegistry()
	l, err := openEndToEndLedger(ctx, cfg, w, reg)
	if err != nil {
		return Result{}, err
	}
	defer l.Close()

	n := len(w.Events)
	sink := &sink{l: l, pos: newPositions(w.Events), leaf: make([]uint64, n), done: make(chan struct{}), want: int64(n), progress: cfg.Progress}

	nc, err := srv.Connect()
	if err != nil {
		return Result{}, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return Result{}, err
	}
	// The stream exists before the first publish (the ingest would create
	// it too, at the start of its session).
	stream, err := ingest.EnsureStream(ctx, js, wire.Subjects{}, ingest.StreamConfig{MaxBytes: srv.StreamBytes()})
	if err != nil {
		return Result{}, err
	}
	// The bench measures the service's capacity: no emitter's rate is
	// limited (docs/OPERATIONS.md §9), unless asked (0: the defaults).
	var rates int64 = -1
	if cfg.EmitterRates {
		rates = 0
	}
	in, err := ingest.New(nc, ingest.Config{Sink: sink, Locator: l, Checkpoints: l, InfoInterval: -1, Linger: ingest.DefaultLinger,
		RateBytesPerEmitter: rates, RateMessagesPerEmitter: rates})
	if err != nil {
		return Result{}, err
	}
	ran := make(chan error, 1)
	ictx, stopIngest := context.WithCancel(ctx)
	go func() { ran <- in.Run(ictx) }()
	defer func() { stopIngest(); <-ran }()

	_, vk, err := logKey(ledgerOrigin)
	if err != nil {
		return Result{}, err
	}
	// The emitters' side: the SDK clients, the publishing and the
	// benchmark's own waiting and recording.
	setSide(sideEmitters)
	clients := map[string]*sdk.Client{}
	for i, e := range w.Emitters {
		enc, err := sdk.Dial(srv.ClientURL(), e, nats.UserInfo(e, access[i].Password))
		if err != nil {
			return Result{}, err
		}
		defer enc.Close()
		c, err := sdk.New(enc, sdk.Config{Emitter: e, Window: cfg.Window, MaxBatchEvents: cfg.MaxBatchEvents, PartialFlights: cfg.PartialFlights, LogKey: vk, FollowInterval: followInterval(cfg.NoFollow)})
		if err != nil {
			return Result{}, err
		}
		defer c.Close()
		clients[e] = c
	}

	// Record every published checkpoint: (time, size).
	var cps checkpoints
	cpDone := make(chan struct{})
	go func() {
		defer close(cpDone)
		cps.watch(ctx, l, uint64(n))
	}()

	// Publish, paced at cfg.Rate.
	pub := make([]time.Duration, n) // since start: no pointer for the collector to follow
	pending := make(chan *sdk.Pending, 1<<16)
	ackErr := make(chan error, 1)
	go func() { ackErr <- awaitAcks(ctx, pending) }()
	var rc receipts
	allocs := startAllocs(cfg.AllocProfile)
	var mem0 runtime.MemStats
	runtime.ReadMemStats(&mem0)
	prof := startProfile()
	startCPU, start := cpuTime(), time.Now()
	for i, e := range w.Events {
		if cfg.Rate > 0 && i%64 == 0 {
			if d := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(cfg.Rate))); d > 0 {
				time.Sleep(d)
			}
		}
		pub[i] = time.Since(start)
		ev := sdk.Event{ID: e.ID, Data: e.Data, OrderKey: e.Game}
		p, err := clients[e.Emitter].PublishAsync(ctx, ev)
		if err != nil {
			close(pending)
			return Result{}, fmt.Errorf("bench: publishing event %d: %w", i, err)
		}
		pending <- p
		if cfg.Receipts && (i%ReceiptSample == 0 || strings.HasSuffix(e.ID, ":0")) {
			rc.ask(ctx, clients[e.Emitter], ev, p, start, pub[i])
		}
	}
	close(pending)
	published := time.Since(start)
	select {
	case <-sink.done:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	if err := sink.error(); err != nil {
		return Result{}, err
	}
	if _, err := l.WaitCovering(ctx, sink.maxLeaf()); err != nil {
		return Result{}, fmt.Errorf("bench: waiting for the last checkpoint: %w", err)
	}
	// The measured time ends here, for the CPU too: what follows is the
	// settling (the answers still in flight, then the store work the
	// run's writes left due), and after it the harness's own work.
	elapsed := time.Since(start)
	endCPU := cpuTime()
	prof.stop()
	setSide("") // the waiting for the last checkpoint above was the bench's, the emitters' side
	var mem1 runtime.MemStats
	runtime.ReadMemStats(&mem1)
	var rlat []time.Duration
	var rsize []int
	st, err := settle(ctx, l, n, func() error {
		<-cpDone
		if err := <-ackErr; err != nil {
			return fmt.Errorf("bench: a publish failed: %w", err)
		}
		var err error
		rlat, rsize, err = rc.wait()
		return err
	})
	if err != nil {
		prof.stages(n, nil)
		return Result{}, err
	}
	split, err := prof.stages(n, cfg.Profile)
	if err != nil {
		return Result{}, err
	}
	if err := allocs.write(cfg.AllocProfile); err != nil {
		return Result{}, err
	}

	lat := make([]time.Duration, n)
	for i := range lat {
		t, ok := cps.covering(sink.leaf[i])
		if !ok {
			return Result{}, fmt.Errorf("bench: no checkpoint recorded covering leaf %d", sink.leaf[i])
		}
		lat[i] = t.Sub(start) - pub[i]
	}
	res := Result{Name: "zarlog-endtoend", Events: n, Elapsed: elapsed, Metrics: map[string]float64{}}
	res.P50, res.P99, res.Max = percentiles(lat)
	if len(rlat) > 0 {
		res.Receipts = len(rlat)
		res.ReceiptP50, res.ReceiptP99, res.ReceiptMax = percentiles(rlat)
		slices.Sort(rsize)
		res.ReceiptBytesP50, res.ReceiptBytesMax = rsize[len(rsize)/2], rsize[len(rsize)-1]
	}
	res.Metrics["events/submit"] = float64(n) / float64(max(sink.submits.Load(), 1))
	res.Metrics["publish-s"] = published.Seconds()
	res.Metrics["alloc-B/event"] = float64(mem1.TotalAlloc-mem0.TotalAlloc) / float64(n)
	res.Metrics["allocs/event"] = float64(mem1.Mallocs-mem0.Mallocs) / float64(n)
	// The stream numbers every message it stored: LastSeq is how many
	// NATS messages carried the n events (more if any was resent).
	if info, err := stream.Info(ctx); err == nil && info.State.LastSeq > 0 {
		res.Metrics["events/message"] = float64(n) / float64(info.State.LastSeq)
	}
	res.cpuMetricsOf(endCPU - startCPU)
	res.Stages, res.Sides = split.Stages, split.Sides
	if err := beaconChecks(reg, res.Metrics); err != nil {
		return Result{}, err
	}
	st.setCPU(endCPU-startCPU, n)
	res.Settle = st
	return res, nil
}

// openEndToEndLedger opens EndToEnd's ledger: with cfg.Storage, as the
// primary of the bucket's log (the node holds the lock when it returns;
// its renewal runs until ctx ends). Its metrics go to reg.
func openEndToEndLedger(ctx context.Context, cfg EndToEndConfig, w *Workload, reg prometheus.Registerer) (*ledger.Ledger, error) {
	dir := filepath.Join(cfg.Dir, "ledger")
	if cfg.Storage == nil {
		return OpenLedger(ctx, dir, w, cfg.CheckpointInterval, reg)
	}
	lc, err := ledgerConfig(dir, w, cfg.CheckpointInterval, reg)
	if err != nil {
		return nil, err
	}
	node, err := storage.New(storage.Config{Bucket: cfg.Storage, LogKey: lc.Verifier, NodeID: "bench"})
	if err != nil {
		return nil, err
	}
	lc.Publish = node.Publish
	l, err := ledger.Open(ctx, lc)
	if err != nil {
		return nil, err
	}
	if err := node.Prepare(ctx, l); err != nil {
		l.Close()
		return nil, err
	}
	ran := make(chan error, 1)
	go func() { ran <- node.Run(ctx) }()
	select {
	case <-node.Leading():
		return l, nil
	case err := <-ran:
		l.Close()
		return nil, fmt.Errorf("bench: the storage node: %w", err)
	case <-ctx.Done():
		l.Close()
		return nil, ctx.Err()
	}
}

// receipts are the receipt requests of a run (EndToEndConfig.Receipts):
// one goroutine per sampled event waits for its ack, then for its receipt,
// as a backend does (sdk.PublishLines), and records the latency from the
// publication and the receipt's size.
type receipts struct {
	wg    sync.WaitGroup
	mu    sync.Mutex
	lat   []time.Duration
	size  []int
	first error
}

func (r *receipts) ask(ctx context.Context, c *sdk.Client, ev sdk.Event, p *sdk.Pending, start time.Time, published time.Duration) {
	r.wg.Go(func() {
		rc, err := waitReceipt(ctx, c, ev, p)
		at := time.Since(start)
		var b []byte
		if err == nil {
			b, err = rc.Format()
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil {
			if r.first == nil {
				r.first = fmt.Errorf("bench: the receipt of %s: %w", ev.ID, err)
			}
			return
		}
		if !rc.SignatureChecked && r.first == nil {
			r.first = fmt.Errorf("bench: the receipt of %s: the SDK did not check its signature", ev.ID)
		}
		r.lat = append(r.lat, at-published)
		r.size = append(r.size, len(b))
	})
}

// waitReceipt waits for an event's ack, then for its receipt. It has a name
// of its own so that the CPU profile counts it as the backends'.
func waitReceipt(ctx context.Context, c *sdk.Client, ev sdk.Event, p *sdk.Pending) (sdk.Receipt, error) {
	ack, err := p.Wait(ctx)
	if err != nil {
		return sdk.Receipt{}, err
	}
	return c.ReceiptOf(ctx, ev, ack)
}

func (r *receipts) wait() ([]time.Duration, []int, error) {
	r.wg.Wait()
	return r.lat, r.size, r.first
}

// awaitAcks waits for each publish in turn, as a backend waits for its
// acknowledgements, and returns the first error. It has a name of its own
// so that the CPU profile's split counts it as the backends' (stages.go).
func awaitAcks(ctx context.Context, pending <-chan *sdk.Pending) error {
	var first error
	for p := range pending {
		if _, err := p.Wait(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// A sink is the ledger as the benchmark's ingest sees it: the ledger's own
// Append (the ingest's Sink is the ledger's vocabulary), recording each
// event's leaf index on the way.
type sink struct {
	l       *ledger.Ledger
	pos     positions // event id → position in the workload
	leaf    []uint64  // by position: the event's leaf index
	submits atomic.Int64
	count   atomic.Int64
	want    int64
	done    chan struct{}
	// progress, if not nil, is called with count after each Append.
	progress func(done int)
	mu       sync.Mutex
	err      error
	max      uint64
}

// Append is the ledger's, recording each event's leaf.
func (s *sink) Append(ctx context.Context, in []ledger.Input) ([]ledger.Outcome, error) {
	outs, err := s.l.Append(ctx, in)
	if err != nil {
		return nil, err
	}
	appended := 0
	s.mu.Lock()
	for _, o := range outs {
		switch o.Result {
		case ledger.Appended, ledger.Duplicate:
			if p, ok := s.pos.of(o.ID); ok {
				s.leaf[p] = o.Index
				s.max = max(s.max, o.Index)
				appended++
			}
		default:
			if s.err == nil {
				s.err = fmt.Errorf("bench: the ledger refused event %s: %v", o.ID, o.Reject)
			}
		}
	}
	failed := s.err != nil
	s.mu.Unlock()
	s.submits.Add(1)
	c := s.count.Add(int64(appended))
	if s.progress != nil {
		s.progress(int(c))
	}
	if c >= s.want || failed {
		select {
		case <-s.done:
		default:
			close(s.done)
		}
	}
	return outs, nil
}

// positions finds an event's position in the workload from its id. The
// events' ids are canonical (<game>:<seq>): a map by game, of a few
// thousand entries, and a slice by seq, instead of a map of every id, whose
// lookups missed the cache once per event (0.3 µs per event in a CPU
// profile of a million, all of it the benchmark's own).
type positions struct {
	byGame map[string][]int32
	other  map[string]int // ids that are not canonical
}

func newPositions(evs []workload.Event) positions {
	p := positions{byGame: map[string][]int32{}, other: map[string]int{}}
	for i, e := range evs {
		game, seq, ok := events.ParseCanonicalID(e.ID)
		if !ok || game != e.Game || seq != uint64(len(p.byGame[game])) {
			p.other[e.ID] = i
			continue
		}
		p.byGame[game] = append(p.byGame[game], int32(i))
	}
	return p
}

func (p positions) of(id string) (int, bool) {
	if game, seq, ok := events.ParseCanonicalID(id); ok {
		if at := p.byGame[game]; seq < uint64(len(at)) {
			return int(at[seq]), true
		}
	}
	i, ok := p.other[id]
	return i, ok
}

func (s *sink) error() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *sink) maxLeaf() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max
}

// checkpoints records when each signed checkpoint was published.
type checkpoints struct {
	times []time.Time
	sizes []uint64
}

// watch records every checkpoint the ledger publishes until one covers
// want leaves or ctx ends.
func (c *checkpoints) watch(ctx context.Context, l *ledger.Ledger, want uint64) {
	for {
		_, cp, next := l.Latest()
		now := time.Now()
		if len(c.sizes) == 0 || cp.Size > c.sizes[len(c.sizes)-1] {
			c.times = append(c.times, now)
			c.sizes = append(c.sizes, cp.Size)
		}
		if cp.Size >= want {
			return
		}
		select {
		case <-next:
		case <-ctx.Done():
			return
		}
	}
}

// covering returns the time of the first checkpoint covering leaf index.
func (c *checkpoints) covering(index uint64) (time.Time, bool) {
	i := sort.Search(len(c.sizes), func(i int) bool { return c.sizes[i] > index })
	if i == len(c.sizes) {
		return time.Time{}, false
	}
	return c.times[i], true
}

// A Settle is what follows a run's measured time until the store has
// settled: the answers still in flight when it ended (the events sent and
// not yet acknowledged, and the receipts waited for), then the store work
// the run's own writes left due: its memtable's flush and the compactions
// that leaves due (ledger.Ledger.WaitCompacted). Its CPU is the process's
// over that time, whatever ran in it.
//
// Both paces draw the same boundaries: the measured CPU ends when the
// measured time does (end to end: when the checkpoint covering the last
// event is in; the human pace: at the window's end), the settling comes
// next, and the harness's own work (the CPU profile's parsing, the
// allocation and heap profiles, their garbage collections, the latencies'
// computation) only after it, counted in neither.
type Settle struct {
	// Seconds is how long the settling took: the answers in flight, the
	// flush and the compactions.
	Seconds float64
	// CPUMicrosPerEvent is the run's CPU time with the settling's, over
	// the run's events: (the measured time's CPU) + CPUS. Besides the
	// store, the process meanwhile finishes the events in flight at the
	// measured time's end (the human pace's: their ingest, append and
	// acknowledgement; end to end, all are appended and only their
	// acknowledgements and receipts are left), answers the SDK clients'
	// following (status requests about the run's last events, the run's
	// own) and idles the 100 ms at least that WaitCompacted polls for.
	CPUMicrosPerEvent float64
	// CPUS is the settling's own CPU time, in seconds.
	CPUS float64
	// Stages is the settling's CPU per event of the run, by stage (a
	// profile of it alone), and Sides by side.
	Stages, Sides map[string]float64
}

// setCPU sets s.CPUMicrosPerEvent from the measured time's CPU, over n
// events.
func (s *Settle) setCPU(measured time.Duration, n int) {
	s.CPUMicrosPerEvent = (measured.Seconds() + s.CPUS) * 1e6 / float64(max(n, 1))
}

// settle runs drain (the wait for the answers in flight: the bench's,
// the emitters' side), then flushes l's memtable and waits for the
// compactions that leaves due, profiled; the caller calls setCPU. No other
// CPU profile may run.
func settle(ctx context.Context, l *ledger.Ledger, n int, drain func() error) (*Settle, error) {
	prof := startProfile()
	start, cpu0 := time.Now(), cpuTime()
	setSide(sideEmitters)
	err := drain()
	if err == nil {
		setSide(sideLog) // the flush may run in this goroutine
		if err = l.WaitCompacted(ctx); err != nil {
			err = fmt.Errorf("bench: settling the store: %w", err)
		}
	}
	setSide("")
	elapsed, cpu := time.Since(start), cpuTime()-cpu0
	if err != nil {
		prof.stages(n, nil)
		return nil, err
	}
	split, err := prof.stages(n, nil)
	if err != nil {
		return nil, err
	}
	if len(split.Stages) == 0 { // no sample: a short settling
		split.Stages = nil
	}
	return &Settle{Seconds: elapsed.Seconds(), CPUS: cpu.Seconds(), Stages: split.Stages, Sides: split.Sides}, nil
}
