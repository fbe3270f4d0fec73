package publisher

// This file publishes proof bundles by themselves: the Bundler follows the
// log's finished games and, as soon as a signed checkpoint covers a game's
// final event, builds its bundle, stores it durably in the bundle store and
// announces it (on NATS, docs/NATS.md §5a); once a witnessed checkpoint
// covers the game, it builds the bundle again at that checkpoint, replaces
// the first one with it and announces it again.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// A BundleSource is the log as the Bundler reads it. A Source is one, over
// the ledger or a watcher's copy. Its methods are safe for concurrent use;
// ReadTiles is called from several goroutines at once.
type BundleSource interface {
	// ReadTiles reads the log's tiles (merkle.TileReader): every tile of
	// the tree of any checkpoint Latest returned.
	merkle.TileReader
	// Latest returns the latest signed checkpoint note, verbatim (nil if
	// none yet), its tree size, and a channel that is closed when a newer
	// one is published.
	Latest() (note []byte, size uint64, next <-chan struct{})
	// Finished returns up to limit finished games whose final event has a
	// leaf index ≥ from, in log order (the Bundler reads Index and Game). A
	// game may be listed before a checkpoint covers its final event, never
	// before that event is durable.
	Finished(ctx context.Context, from uint64, limit int) ([]events.FinishedGame, error)
	// GameLeaves returns every event of the game with its leaf index, seq 0
	// first.
	GameLeaves(ctx context.Context, game string) ([]IndexedLeaf, error)
}

// A WitnessedSource gives the log's latest witnessed checkpoint: a
// checkpoint of the log (signed by its key) whose cosignatures meet its
// witness policy's quorum. The log service's is its witness.Witnessed; a
// mirror's, its verified copy of the log's. Latest is safe for concurrent
// use.
type WitnessedSource interface {
	// Latest returns the latest witnessed checkpoint note, verbatim (nil
	// if none yet), its checkpoint, and a channel that is closed when a
	// newer one is kept. *witness.Witnessed is one.
	Latest() (note []byte, cp merkle.Checkpoint, next <-chan struct{})
}

// An Announcement is a proof bundle the Bundler has just stored.
type Announcement struct {
	Game           string
	Emitter        string // the game's emitter (the commit's)
	Index          uint64 // the leaf index of the game's final event
	CheckpointSize uint64 // the tree size of the bundle's checkpoint
	// Witnessed reports whether the bundle's checkpoint is a witnessed
	// one (BundlerConfig.Witnessed): the game's final bundle. A game's
	// bundle is announced twice with witnessing, first when it is built and
	// again once witnessed, unless a witnessed checkpoint covered the game
	// already when it was first built.
	Witnessed bool
	Bundle    []byte
}

// BundlerConfig configures a Bundler. Source and Store are required; every
// other field's zero value is documented.
type BundlerConfig struct {
	Source BundleSource
	Store  *Store
	// Witnessed, if not nil, gives the log's witnessed checkpoints: once
	// one covers a finished game whose bundle is stored, the bundle is
	// built again at it and replaces the first (Store.Upgrade), in log
	// order; a game whose final event a witnessed checkpoint covers already
	// is built at it at once. Nil: bundles are built once, at the latest
	// signed checkpoint.
	Witnessed WitnessedSource
	// Announce, if not nil, is called for each stored bundle, in log order,
	// after it is durable. Its errors are logged and counted, never retried:
	// the store and the HTTP API are the durable record.
	Announce func(ctx context.Context, a Announcement) error
	// Workers is how many bundles are built at once. Zero means GOMAXPROCS.
	Workers int
	// Batch is the most games decided per round (one durable write to the
	// store). Zero means 64.
	Batch int
	// RetryMin and RetryMax bound the backoff after a failed round (a read
	// or write error). Zero means 100 ms and 10 s.
	RetryMin, RetryMax time.Duration
	// Logger receives the Bundler's logs. Nil discards them.
	Logger *slog.Logger
	// Registerer receives its metrics. Nil means none.
	Registerer prometheus.Registerer
}

// A Bundler builds, stores and announces the proof bundle of every finished
// game of a log, once, as soon as a signed checkpoint covers the game's
// final event. Its cursor is in the Store, so it resumes after a restart
// where it stopped and never builds a game's bundle twice (unless the store
// is Reset). Create it with NewBundler and run it with Run.
type Bundler struct {
	cfg BundlerConfig
	log *slog.Logger

	stored, skipped, roundErrors, announceErrors prometheus.Counter
	witnessed                                    prometheus.Counter
	buildSeconds, bundleBytes                    prometheus.Histogram
	cursor, wcursor                              prometheus.Gauge
}

// NewBundler returns a Bundler for cfg. It fails if Source or Store is nil
// or the metrics cannot be registered.
func NewBundler(cfg BundlerConfig) (*Bundler, error) {
	if cfg.Source == nil || cfg.Store == nil {
		return nil, errors.New("publisher: bundler: Source and Store are required")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 64
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = 100 * time.Millisecond
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = 10 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Bundler{cfg: cfg, log: log,
		stored:         prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_bundles_stored_total", Help: "Proof bundles built and stored."}),
		skipped:        prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_bundles_skipped_total", Help: "Finished games whose bundle could not be built (logged as errors)."}),
		roundErrors:    prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_bundles_round_errors_total", Help: "Rounds of the bundler that failed on a read or write and were retried."}),
		announceErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_bundles_announce_errors_total", Help: "Bundles stored whose announcement failed."}),
		buildSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "zarlog_bundles_build_seconds", Help: "Time to build and self-check one proof bundle.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}),
		bundleBytes: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "zarlog_bundles_bytes", Help: "Size of the proof bundles built.",
			Buckets: prometheus.ExponentialBuckets(4096, 2, 12)}),
		cursor: prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_bundles_cursor", Help: "Every finished game whose final event's leaf index is below this is decided."}),
		witnessed: prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_bundles_witnessed_total",
			Help: "Proof bundles stored at a witnessed checkpoint (built again once one covered the game, or built at one at once)."}),
		wcursor: prometheus.NewGauge(prometheus.GaugeOpts{Name: "zarlog_bundles_witnessed_cursor",
			Help: "Every stored bundle of a game whose final event's leaf index is below this is at a witnessed checkpoint."}),
	}
	if cfg.Registerer != nil {
		cs := []prometheus.Collector{b.stored, b.skipped, b.roundErrors, b.announceErrors, b.buildSeconds, b.bundleBytes, b.cursor}
		if cfg.Witnessed != nil {
			cs = append(cs, b.witnessed, b.wcursor)
		}
		for _, c := range cs {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("publisher: bundler: registering metrics: %w", err)
			}
		}
	}
	return b, nil
}

// Run builds bundles until ctx ends, then returns ctx's error (after the
// round in progress, whose write is durable or not made). A failed round
// is logged and retried with backoff; Run returns early only with an error
// from the store's cursors at the start.
func (b *Bundler) Run(ctx context.Context) error {
	cursor, err := b.cfg.Store.Cursor()
	if err != nil {
		return err
	}
	wcursor, err := b.cfg.Store.WitnessedCursor()
	if err != nil {
		return err
	}
	b.cursor.Set(float64(cursor))
	b.wcursor.Set(float64(wcursor))
	backoff := time.Duration(0)
	for {
		note, size, next := b.cfg.Source.Latest()
		var wnote []byte
		var wsize uint64
		var wnext <-chan struct{}
		if b.cfg.Witnessed != nil {
			var wcp merkle.Checkpoint
			wnote, wcp, wnext = b.cfg.Witnessed.Latest()
			wsize = wcp.Size
			if wsize > size {
				// The source's tiles do not reach the witnessed tree yet (a
				// mirror catching up): wait for them.
				wnote = nil
			}
		}
		progressed := false
		var err error
		if note != nil && size > cursor {
			var n, w uint64
			n, w, err = b.round(ctx, cursor, wcursor, note, size, wnote, wsize)
			if err == nil && n > cursor {
				cursor, wcursor, progressed = n, w, true
				b.cursor.Set(float64(cursor))
				b.wcursor.Set(float64(wcursor))
			}
		}
		if err == nil && wnote != nil && wcursor < min(cursor, wsize) {
			var w uint64
			w, err = b.upgrade(ctx, wcursor, min(cursor, wsize), wnote, wsize)
			if err == nil && w > wcursor {
				wcursor, progressed = w, true
				b.wcursor.Set(float64(wcursor))
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			b.roundErrors.Inc()
			backoff = min(max(2*backoff, b.cfg.RetryMin), b.cfg.RetryMax)
			b.log.Error("bundler: round failed; retrying", "cursor", cursor, "witnessed", wcursor, "backoff", backoff, "err", err)
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
			continue
		}
		backoff = 0
		if progressed {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-next:
		case <-wnext:
		}
	}
}

// round decides the finished games from cursor that the checkpoint (note,
// size) covers, at most Batch of them, and returns the new cursor and
// witnessed cursor (the old ones if there were none). When the witnessed
// checkpoint (wnote, wsize) covers them all and every game before them is
// witnessed, they are built at it instead.
func (b *Bundler) round(ctx context.Context, cursor, wcursor uint64, note []byte, size uint64, wnote []byte, wsize uint64) (uint64, uint64, error) {
	games, err := b.cfg.Source.Finished(ctx, cursor, b.cfg.Batch)
	if err != nil {
		return cursor, wcursor, fmt.Errorf("listing finished games from %d: %w", cursor, err)
	}
	for i, g := range games {
		if g.Index >= size {
			games = games[:i]
			break
		}
	}
	if len(games) == 0 {
		return cursor, wcursor, nil
	}
	witnessed := wnote != nil && wcursor == cursor && games[len(games)-1].Index < wsize
	if witnessed {
		note, size = wnote, wsize
	}
	type result struct {
		bundle  []byte
		emitter string
		err     error
	}
	results := make([]result, len(games))
	sem := make(chan struct{}, b.cfg.Workers)
	var wg sync.WaitGroup
	for i, g := range games {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			start := time.Now()
			bundle, emitter, err := b.build(ctx, g.Game, note)
			if err == nil {
				b.buildSeconds.Observe(time.Since(start).Seconds())
				b.bundleBytes.Observe(float64(len(bundle)))
			}
			results[i] = result{bundle, emitter, err}
		})
	}
	wg.Wait()
	var stored []StoredBundle
	var ann []Announcement
	for i, g := range games {
		r := results[i]
		switch {
		case errors.Is(r.err, ErrNotProvable):
			// Not a passing fault: building it again gives the same
			// error. Log it loudly and go on; the game's page stays
			// "in play" and the operator sees the error and the metric.
			b.skipped.Inc()
			b.log.Error("bundler: cannot build a finished game's bundle; skipped", "game", g.Game, "index", g.Index, "err", r.err)
			continue
		case r.err != nil:
			return cursor, wcursor, fmt.Errorf("building the bundle of %q: %w", g.Game, r.err)
		}
		stored = append(stored, StoredBundle{Index: g.Index, Game: g.Game, Bundle: r.bundle})
		ann = append(ann, Announcement{Game: g.Game, Emitter: r.emitter, Index: g.Index, CheckpointSize: size, Witnessed: witnessed, Bundle: r.bundle})
	}
	next := games[len(games)-1].Index + 1
	add := b.cfg.Store.Add
	if witnessed {
		add = b.cfg.Store.AddWitnessed
	}
	if err := add(ctx, next, stored); err != nil {
		return cursor, wcursor, err
	}
	b.stored.Add(float64(len(stored)))
	if witnessed {
		b.witnessed.Add(float64(len(stored)))
		wcursor = next
	}
	b.announce(ctx, ann)
	return next, wcursor, nil
}

// upgrade builds the stored bundles of the games from wcursor up to limit
// (at most Batch of them) again at the witnessed checkpoint (wnote, wsize),
// replaces them in the store and announces them, and returns the new
// witnessed cursor. limit is at most the cursor and wsize.
func (b *Bundler) upgrade(ctx context.Context, wcursor, limit uint64, wnote []byte, wsize uint64) (uint64, error) {
	refs, err := b.cfg.Store.List(ctx, wcursor, b.cfg.Batch)
	if err != nil {
		return wcursor, fmt.Errorf("listing the bundles from %d: %w", wcursor, err)
	}
	next := limit
	if len(refs) == b.cfg.Batch && refs[len(refs)-1].Index < limit {
		next = refs[len(refs)-1].Index + 1
	}
	for i, r := range refs {
		if r.Index >= next {
			refs = refs[:i]
			break
		}
	}
	type result struct {
		bundle  []byte
		emitter string
		err     error
	}
	results := make([]result, len(refs))
	sem := make(chan struct{}, b.cfg.Workers)
	var wg sync.WaitGroup
	for i, r := range refs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			start := time.Now()
			bundle, emitter, err := b.build(ctx, r.Game, wnote)
			if err == nil {
				b.buildSeconds.Observe(time.Since(start).Seconds())
				b.bundleBytes.Observe(float64(len(bundle)))
			}
			results[i] = result{bundle, emitter, err}
		})
	}
	wg.Wait()
	stored := make([]StoredBundle, 0, len(refs))
	ann := make([]Announcement, 0, len(refs))
	for i, r := range refs {
		// A game whose bundle was built once cannot be unprovable at a
		// larger tree of the same log: an error here is the witnessed
		// checkpoint's or the store's, and the round is retried.
		if err := results[i].err; err != nil {
			return wcursor, fmt.Errorf("building the bundle of %q at the witnessed checkpoint of size %d: %w", r.Game, wsize, err)
		}
		stored = append(stored, StoredBundle{Index: r.Index, Game: r.Game, Bundle: results[i].bundle})
		ann = append(ann, Announcement{Game: r.Game, Emitter: results[i].emitter, Index: r.Index, CheckpointSize: wsize, Witnessed: true, Bundle: results[i].bundle})
	}
	if err := b.cfg.Store.Upgrade(ctx, next, stored); err != nil {
		return wcursor, err
	}
	b.witnessed.Add(float64(len(stored)))
	b.announce(ctx, ann)
	return next, nil
}

// announce announces stored bundles, in log order.
func (b *Bundler) announce(ctx context.Context, ann []Announcement) {
	for _, a := range ann {
		b.log.Debug("bundler: stored", "game", a.Game, "index", a.Index, "bytes", len(a.Bundle), "checkpoint", a.CheckpointSize, "witnessed", a.Witnessed)
		if b.cfg.Announce == nil {
			continue
		}
		if err := b.cfg.Announce(ctx, a); err != nil {
			b.announceErrors.Inc()
			b.log.Warn("bundler: announcing a bundle", "game", a.Game, "err", err)
		}
	}
}

// build builds one game's bundle at the checkpoint note and returns it with
// the game's emitter.
func (b *Bundler) build(ctx context.Context, game string, note []byte) ([]byte, string, error) {
	leaves, err := b.cfg.Source.GameLeaves(ctx, game)
	if err != nil {
		return nil, "", fmt.Errorf("reading the game's leaves: %w", err)
	}
	if len(leaves) == 0 {
		return nil, "", fmt.Errorf("%w: game %q has no leaves", ErrNotProvable, game)
	}
	ev, err := events.Parse(leaves[0].Leaf)
	if err != nil {
		return nil, "", fmt.Errorf("%w: game %q: its first leaf: %w", ErrNotProvable, game, err)
	}
	bundle, err := BuildBundle(ctx, b.cfg.Source, leaves, note)
	if err != nil {
		return nil, "", err
	}
	return bundle, ev.Emitter, nil
}
