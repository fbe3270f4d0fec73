package ledger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/merkle"
)

// Errors. Callers branch on them with errors.Is.
var (
	// ErrClosed is returned by every method of a closed Ledger.
	ErrClosed = errors.New("ledger closed")
	// ErrStopped is returned once a write to Pebble has failed: the ledger
	// appends and signs nothing more. Err gives the cause. An Append that
	// fails with ErrStopped may or may not have been persisted: after the
	// ledger is reopened, sending the same inputs again is safe (the same
	// bytes get the same index, as a Duplicate).
	ErrStopped = errors.New("ledger stopped after a failed write")
	// ErrNotFound is returned for a game, leaf, tile or checkpoint the
	// ledger does not have. It is merkle.ErrNotFound, so the errors of
	// proofs computed from the ledger's tiles match it too.
	ErrNotFound = merkle.ErrNotFound
	// ErrTampered is wrapped by the *TamperError Open returns when the
	// stored log differs from what the ledger signed or stored.
	ErrTampered = errors.New("store does not match the signed log")
	// ErrCorrupt marks a stored record that does not decode.
	ErrCorrupt = errors.New("corrupt record")
	// ErrRange is returned for an index or tree size beyond what the
	// ledger has (or has signed, for proofs at a checkpoint).
	ErrRange = errors.New("out of range")
)

// A CheckLevel says how much of the stored tree Open verifies.
type CheckLevel int

// Check levels, each including the one before.
const (
	// CheckRoot recomputes the root of the last signed checkpoint from the
	// stored tiles (one tile per level), checks the builder's partial tiles
	// and entry bundle against the stored tree state, and checks that state
	// is consistent with the checkpoint. It reads a few tiles: milliseconds.
	CheckRoot CheckLevel = iota
	// CheckTiles also checks every full hash tile against the tile above
	// it, so a changed hash anywhere is named by its tile. It reads every
	// hash tile: about 32 bytes per leaf (under a second per 10M leaves).
	CheckTiles
	// CheckEntries also hashes every entry of every entry bundle against
	// the level-0 tiles: it reads the whole log.
	CheckEntries
)

// Defaults of the Config fields whose zero value means "the default".
const (
	DefaultCheckpointInterval      = 100 * time.Millisecond
	DefaultMaxBatchEvents          = 4096
	DefaultMaxBatchBytes           = 16 << 20
	DefaultGameCacheBytes          = 128 << 20
	DefaultMaxGameBytes            = 1 << 20
	DefaultOpenGamesPerEmitter     = 20_000
	DefaultOpenGameBytesPerEmitter = 256 << 20
	DefaultOpenGameBytes           = 1 << 30
	DefaultRejectedQuotaRecords    = 100_000
	DefaultRejectedQuotaBytes      = 128 << 20
	DefaultBeaconCache             = drand.DefaultCacheEntries
)

// A Config configures a Ledger. Only Dir, Signer and Verifier are required.
type Config struct {
	// Dir is the Pebble data directory; it is created if missing.
	// Required: empty is an error.
	Dir string
	// FS is the file system Pebble uses: vfs.NewMem() or an errorfs
	// wrapper in tests. Nil means the operating system's.
	FS vfs.FS
	// Pebble is the base of the Pebble options, cloned; FS and Logger are
	// set from this Config. Nil means zarlog's defaults (a 64 MiB memtable,
	// a 256 MiB block cache, Bloom filters on every level).
	Pebble *pebble.Options

	// Signer signs the log's checkpoints; its name is the log's origin.
	// Verifier is the matching verifier key: Open uses it to check the
	// stored checkpoint. merkle.NewSigner and merkle.NewVerifier make them
	// from the keys of `zarlog keygen`. Required: nil is an error, and so
	// are keys that do not match.
	Signer   note.Signer
	Verifier note.Verifier

	// Emitters holds the emitters the log accepts and their keys. Nil means
	// none: every event is refused as unknown-emitter.
	Emitters *events.Keyring
	// Beacons returns the pinned drand chain of a chain hash, for the
	// anchored-v1 scheme. Nil means the chains package events/drand pins
	// (drand quicknet): events.BeaconsOf(drand.ChainByHash).
	Beacons func(chainHash [32]byte) (events.BeaconVerifier, bool)
	// BeaconCache is how many verified drand beacons the ledger remembers
	// (drand.Cache), so that the anchored-v1 games anchored to the same
	// round cost one BLS pairing check between them, not one each. It
	// applies to the chains of package events/drand (*drand.Chain) that
	// Beacons returns; another BeaconVerifier is asked every time. Only
	// beacons that verified are remembered, under a hash of the chain's
	// scheme and key, the round and the signature (SECURITY.md, "Beacon
	// checks"). Zero means DefaultBeaconCache; negative means none.
	BeaconCache int
	// Moves checks move events against the rules. Nil means moves are
	// checked only structurally (events.Env.Moves).
	Moves events.MoveChecker
	// ClockSkew is how far the ledger's clock may be behind true time in
	// the anchored-v1 clock checks (events.Env.ClockSkew). Zero means none.
	ClockSkew time.Duration

	// CheckpointInterval is how often the signer looks for a grown tree to
	// sign. Zero means DefaultCheckpointInterval; negative means no signer
	// loop: checkpoints are signed only by Sign (tests).
	CheckpointInterval time.Duration

	// MaxBatchEvents and MaxBatchBytes bound a group commit: the sequencer
	// stops adding callers' inputs to a group once it holds that many
	// inputs or bytes. Zero means DefaultMaxBatchEvents and
	// DefaultMaxBatchBytes.
	MaxBatchEvents int
	MaxBatchBytes  int
	// GameCacheBytes bounds the states of open games the sequencer keeps
	// decoded in memory, in bytes (events.Game.MemSize and DecodedSize,
	// and about 200 bytes an entry): past it, the least recently used
	// state of the emitter holding the most is dropped (and read again
	// from Pebble when its game goes on). A state is kept cut to the last
	// few events of its history (events.Game.Cut: about 2 KB for a
	// game in play, whatever its length); an event whose checks need
	// more (a move of an older roll, a roll id that may repeat one) reads
	// the full state back. Finished games are not kept. Zero
	// means DefaultGameCacheBytes.
	GameCacheBytes int64
	// MaxGameBytes bounds one game's state (events.Game.Size): an event
	// that would take its game past it is refused (CodeGameTooLarge),
	// unless it is one that finishes the game or a pending roll (end,
	// reveal, roll-second, roll-reveal). Zero means DefaultMaxGameBytes.
	MaxGameBytes int
	// OpenGamesPerEmitter bounds the games an emitter has open (committed,
	// not closed), OpenGameBytesPerEmitter their states' bytes, and
	// OpenGameBytes the states' bytes of every emitter's open games
	// together: an event that would take its emitter (or all of them)
	// past one is refused (CodeOverLimit, naming the emitter and the
	// limit), unless it finishes a game or a pending roll. The counts are
	// kept durably per emitter (ledger/README.md, 'o'). Zero means
	// DefaultOpenGamesPerEmitter, DefaultOpenGameBytesPerEmitter and
	// DefaultOpenGameBytes.
	OpenGamesPerEmitter     int
	OpenGameBytesPerEmitter int64
	OpenGameBytes           int64
	// RejectedQuotaRecords and RejectedQuotaBytes are each emitter's quota
	// in the rejected store (RejectedSummary.Emitters: every configured
	// emitter has its own; all other inputs share one). A rejection that
	// would take its namespace over either is not stored but counted there
	// (how many, the first and last ids and times), logged and counted in
	// zarlog_ledger_rejected_over_quota_total; its outcome is still
	// Rejected. Stored records are never deleted, so one emitter's flood
	// never removes another's records. Zero means
	// DefaultRejectedQuotaRecords and DefaultRejectedQuotaBytes.
	RejectedQuotaRecords int
	RejectedQuotaBytes   int64

	// Check is how much of the stored tree Open verifies. Zero means
	// CheckRoot.
	Check CheckLevel

	// Now is the ledger's clock: the append time of each group (Env.Now)
	// and the time of rejections. Nil means time.Now.
	Now func() time.Time
	// Logger receives the ledger's logs and Pebble's. Nil means none.
	Logger *slog.Logger
	// Metrics is where the ledger registers its Prometheus metrics. Nil
	// means they are not registered.
	Metrics prometheus.Registerer

	// Publish, if not nil, is where a signed checkpoint goes before it is
	// published (package storage: the bucket's lock and copy of the log).
	// The signer calls it with each new checkpoint, after the checkpoint
	// is stored and before Latest, WaitCovering (the receipts) or a proof
	// can use it; it runs under the signer's lock, so calls never overlap,
	// and come in the order of the checkpoints. It returns nil once the
	// checkpoint and everything it covers is durable there. An error
	// wrapping ErrFenced stops the ledger (nothing more is signed: another
	// sequencer holds the log); any other error leaves the checkpoint
	// signed but unpublished, and the next signing round offers it (or a
	// larger one) again. With Publish set, Open publishes no checkpoint:
	// the stored one is published by the first round that Publish accepts,
	// or by Import. Nil: every checkpoint is published once stored.
	Publish func(ctx context.Context, c Commit) error

	// migrateChunk is how many dedup records Open moves per batch when it
	// upgrades a format-3 store (migrateDedup), how many game heads it
	// splits per batch when it upgrades a format-6 store (migrateHeads),
	// and how many games it moves per batch at most when it upgrades a
	// format-8 store (migrateGameNumbers). Zero means migrateChunk; tests
	// lower it.
	migrateChunk int
}

// A ConsistencyProver returns consistency proofs between two tree sizes of
// the log. The Ledger is one.
type ConsistencyProver = merkle.ConsistencyProver

// A Ledger is an open event log. Its methods are safe for concurrent use.
type Ledger struct {
	cfg    Config
	log    *slog.Logger
	now    func() time.Time
	db     *pebble.DB
	origin string
	met    *metrics
	sigs   sigKeys // cfg.Emitters, expanded
	// nodes keeps the interior nodes of the hash tiles the latest
	// inclusion proofs read (InclusionProof): a checkpoint's receipts are
	// mostly of its recent leaves, on the same few tiles.
	nodes *merkle.NodeCache

	pebbleOpen atomic.Bool // pebble.Open has returned
	pebbleMem  *pebbleMemory
	bgMu       sync.Mutex
	bgErrors   int       // Pebble background errors seen
	bgErr      error     // the last one
	bgLast     time.Time // when it came
	bgStreak   time.Time // when the current streak of them began
	bgLogged   time.Time // when one was last logged

	overQuotaMu     sync.Mutex
	overQuotaLogged map[string]time.Time // when each namespace last logged that it is over quota

	mu      sync.RWMutex // guards closed, so Close can wait for Appends
	closed  bool
	appends sync.WaitGroup
	reqs    chan *request
	seqDone chan struct{}
	seq     *sequencer // owned by the sequencer goroutine

	commits    chan *prepared // sequencer → committer
	commitDone chan struct{}
	committed  atomic.Uint64 // the number of the last group committed
	epoch      atomic.Uint64 // incremented around each Rebuild: dedup hints from another epoch are not used
	// legacyIDs is set when the log holds an event whose id has the form of
	// another event's canonical id (appended before store format 3 reserved
	// that form): canonical ids are then looked up in the dedup index too.
	legacyIDs atomic.Bool
	// allowReservedIDs lifts the reserved-id rule: tests set it to write
	// the logs of versions before format 3.
	allowReservedIDs bool
	// recent holds the latest appended events by (emitter, id), for the
	// status lookups (RecentLookups).
	recent *recentIndex

	// openView is what OpenGames returns: the sequencer's open-game
	// counts, published as it changes them.
	openMu   sync.Mutex
	openView map[string]openCount

	view     atomic.Pointer[view]
	snaps    sync.WaitGroup // open view snapshots
	closedCh chan struct{}

	commitMu sync.Mutex // serializes commits (see commit)

	signMu   sync.Mutex // serializes signing
	signed   *published // the last checkpoint signed and stored; signMu
	latest   atomic.Pointer[published]
	signStop chan struct{}
	signDone chan struct{}

	stopOnce sync.Once
	stopErr  atomic.Pointer[stopCause]
	stopped  chan struct{}
}

type stopCause struct{ err error }

// A view is what readers see: a Pebble snapshot taken after a group's batch
// was durably committed, with the tree it holds. A batch whose commit failed
// may already be in Pebble's memtable, visible to plain reads; a view never
// shows it.
type view struct {
	snap     *pebble.Snapshot
	size     uint64
	root     merkle.Hash
	stats    Stats
	rejected RejectedSummary
	refs     atomic.Int64
	done     func()
}

func (v *view) release() {
	if v.refs.Add(-1) == 0 {
		v.snap.Close()
		v.done()
	}
}

// acquire returns the current view, which the caller must release.
func (l *Ledger) acquire() (*view, error) {
	for {
		v := l.view.Load()
		if v == nil {
			return nil, ErrClosed
		}
		n := v.refs.Load()
		if n == 0 {
			continue // being released; a newer one is installed
		}
		if v.refs.CompareAndSwap(n, n+1) {
			return v, nil
		}
	}
}

// install makes a new view of the database current.
func (l *Ledger) install(size uint64, root merkle.Hash, stats *Stats, rej *RejectedSummary) {
	l.snaps.Add(1)
	v := &view{snap: l.db.NewSnapshot(), size: size, root: root, stats: *stats, rejected: rej.clone(), done: l.snaps.Done}
	v.refs.Store(1)
	if old := l.view.Swap(v); old != nil {
		old.release()
	}
	l.met.treeSize.Set(float64(size))
}

// A published checkpoint is what Latest returns.
type published struct {
	note []byte
	cp   merkle.Checkpoint
	ok   bool          // false before the first checkpoint
	next chan struct{} // closed when a newer checkpoint is published
}

// Open opens (or creates) the ledger in cfg.Dir and starts its sequencer and
// signer. It verifies the stored tree against the last signed checkpoint (see
// CheckLevel) and returns a *TamperError if they differ. If a Rebuild was
// interrupted, Open finishes it before returning.
//
// Shutdown is Close, which stops in this order: new Appends are refused;
// queued groups are committed; the signer signs a last checkpoint covering
// every appended event and stops; WaitCovering callers are released; the
// read views are released once in-flight reads finish; Pebble is closed.
func Open(ctx context.Context, cfg Config) (*Ledger, error) {
	if cfg.Dir == "" {
		return nil, errors.New("ledger: Config.Dir is empty")
	}
	if cfg.Signer == nil || cfg.Verifier == nil {
		return nil, errors.New("ledger: Config.Signer and Config.Verifier are required")
	}
	if cfg.Signer.Name() != cfg.Verifier.Name() || cfg.Signer.KeyHash() != cfg.Verifier.KeyHash() {
		return nil, fmt.Errorf("ledger: the signer key %s+%08x and the verifier key %s+%08x differ",
			cfg.Signer.Name(), cfg.Signer.KeyHash(), cfg.Verifier.Name(), cfg.Verifier.KeyHash())
	}
	setDefaults(&cfg)
	var beaconCache *drand.Cache
	if cfg.BeaconCache > 0 {
		beaconCache = drand.NewCache(cfg.BeaconCache)
		cfg.Beacons = cachedBeacons(cfg.Beacons, beaconCache)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l := &Ledger{
		cfg:        cfg,
		log:        logger,
		now:        cfg.Now,
		origin:     cfg.Signer.Name(),
		sigs:       newSigKeys(cfg.Emitters),
		nodes:      merkle.NewNodeCache(ProofCacheTiles),
		reqs:       make(chan *request, 256),
		seqDone:    make(chan struct{}),
		commits:    make(chan *prepared),
		commitDone: make(chan struct{}),
		closedCh:   make(chan struct{}),
		signStop:   make(chan struct{}),
		signDone:   make(chan struct{}),
		stopped:    make(chan struct{}),
	}
	met, err := newMetrics(cfg.Metrics, beaconCache)
	if err != nil {
		return nil, err
	}
	l.met = met
	l.latest.Store(&published{next: make(chan struct{})})

	opts := pebbleOptions(&cfg, logger)
	// The ledger's own hook for background errors; a caller's other hooks
	// (Config.Pebble's, e.g. a benchmark's count of compaction bytes)
	// stay.
	var el pebble.EventListener
	if opts.EventListener != nil {
		el = *opts.EventListener
	}
	el.BackgroundError = l.backgroundError
	opts.EventListener = &el
	db, err := pebble.Open(cfg.Dir, opts)
	if err != nil {
		return nil, fmt.Errorf("ledger: opening Pebble in %s: %w", cfg.Dir, err)
	}
	l.pebbleOpen.Store(true)
	l.db = db
	l.pebbleMem = newPebbleMemory(opts.CacheSize)
	if cfg.Metrics != nil {
		if err := cfg.Metrics.Register(l.pebbleMem); err != nil {
			return nil, errors.Join(fmt.Errorf("ledger: %w", err), db.Close())
		}
	}
	l.pebbleMem.set(db)
	if err := l.load(ctx); err != nil {
		l.pebbleMem.set(nil)
		return nil, errors.Join(err, db.Close())
	}
	go l.sequence()
	if cfg.CheckpointInterval > 0 {
		go l.signLoop()
	} else {
		close(l.signDone)
	}
	return l, nil
}

func setDefaults(cfg *Config) {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&cfg.CheckpointInterval, DefaultCheckpointInterval)
	if cfg.MaxBatchEvents <= 0 {
		cfg.MaxBatchEvents = DefaultMaxBatchEvents
	}
	if cfg.MaxBatchBytes <= 0 {
		cfg.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if cfg.GameCacheBytes <= 0 {
		cfg.GameCacheBytes = DefaultGameCacheBytes
	}
	if cfg.MaxGameBytes <= 0 {
		cfg.MaxGameBytes = DefaultMaxGameBytes
	}
	if cfg.OpenGamesPerEmitter <= 0 {
		cfg.OpenGamesPerEmitter = DefaultOpenGamesPerEmitter
	}
	if cfg.OpenGameBytesPerEmitter <= 0 {
		cfg.OpenGameBytesPerEmitter = DefaultOpenGameBytesPerEmitter
	}
	if cfg.OpenGameBytes <= 0 {
		cfg.OpenGameBytes = DefaultOpenGameBytes
	}
	if cfg.RejectedQuotaRecords <= 0 {
		cfg.RejectedQuotaRecords = DefaultRejectedQuotaRecords
	}
	if cfg.RejectedQuotaBytes <= 0 {
		cfg.RejectedQuotaBytes = DefaultRejectedQuotaBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Beacons == nil {
		cfg.Beacons = events.BeaconsOf(drand.ChainByHash)
	}
	if cfg.BeaconCache == 0 {
		cfg.BeaconCache = DefaultBeaconCache
	}
}

// load reads and verifies the store and prepares the sequencer.
func (l *Ledger) load(ctx context.Context) error {
	db := l.db
	// The format record names the origin: a store is one log's.
	f, err := get(db, keyFormat)
	migrate := false   // a format-3 store: its dedup index moves to per-emitter keys
	countOpen := false // a format-4 store (or 3): its open games are counted
	heads := false     // a format-6 store (or 3 to 5): its game heads are split
	pieces := false    // a format-7 store (or 3 to 6): marked format 8, its full bundles kept
	numbers := false   // a format-8 store (or 3 to 7): its games' records move to their numbers
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		if _, err := get(db, keyState); !errors.Is(err, pebble.ErrNotFound) {
			return fmt.Errorf("ledger: %s has a tree state but no format record: %w", l.cfg.Dir, ErrCorrupt)
		}
		if err := l.setFormat(storeFormat, "creating the store"); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
	case err != nil:
		return fmt.Errorf("ledger: reading the format record: %w", err)
	case len(f) == 0 || f[0] != storeFormat && (f[0] < 1 || f[0] > 8):
		return fmt.Errorf("ledger: %s has store format %x, want %d: %w", l.cfg.Dir, f[:min(len(f), 1)], storeFormat, ErrCorrupt)
	case string(f[1:]) != l.origin:
		return fmt.Errorf("ledger: %s holds the log %q, not %q", l.cfg.Dir, f[1:], l.origin)
	case f[0] == 3:
		// Format 3 kept the dedup index by event id alone: once the store
		// is checked, migrateDedup moves it to (emitter, id) keys, and then
		// its open games are counted as format 4's are.
		migrate, countOpen, heads, pieces, numbers = true, true, true, true, true
	case f[0] == 4:
		// Format 4 did not count each emitter's open games:
		// migrateOpenGames does, once the store is checked (and takes
		// it to format 6).
		countOpen, heads, pieces, numbers = true, true, true, true
	case f[0] == 5:
		// Format 5 rewrote the growing entry bundle whole: its 'e' record
		// stays, and the entries after it go in pieces (bundle.go). Only the
		// format record changes, so that an older version refuses the store.
		l.log.Info("upgrading the store: the growing entry bundle is stored in pieces", "from", 5, "to", 6)
		heads, pieces, numbers = true, true, true
		if err := l.setFormat(6, "upgrading the store format"); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
	case f[0] == 6:
		// Format 6 rewrote each game's whole head at each of its events:
		// migrateHeads splits the heads, once the store is checked.
		heads, pieces, numbers = true, true, true
	case f[0] == 7:
		// Format 7 wrote a full entry bundle whole under 'e': its full
		// bundles stay, and the format record changes below, once the
		// store is checked.
		pieces, numbers = true, true
	case f[0] == 8:
		// Format 8 kept each game's live part and history chunks by the
		// game's id: migrateGameNumbers moves them to its number, once
		// the store is checked.
		numbers = true
	case f[0] != storeFormat:
		// Format 1 kept each game's state whole, format 2 a dedup record
		// for every id. The log is the same, and the projections are
		// derived from it: they are rebuilt below, in the current format,
		// as after an interrupted Rebuild. The marker and the new format go
		// in one batch, so a crash leaves either the old format or a
		// rebuild to finish.
		l.log.Info("upgrading the store: its projections are rebuilt from the log", "from", int(f[0]), "to", storeFormat)
		b := db.NewBatch()
		b.Set(keyFormat, append([]byte{storeFormat}, l.origin...), nil)
		b.Set(keyRebuild, nil, nil)
		err := l.commit(b, "upgrading the store format")
		b.Close()
		if err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
	}
	// A store of format 7 whose heads migrateHeads was splitting when it
	// stopped: some games are split, some not yet. The format record said 7
	// from its first batch on, so that an older version refuses the store;
	// it says 8 only once the split is done.
	resume := false
	switch _, err := get(db, keySplitHeads); {
	case err == nil:
		if len(f) == 0 || f[0] != 7 {
			return fmt.Errorf("ledger: %s has store format %x and the marker of a split of its game heads, which only format 7 sets: %w", l.cfg.Dir, f[:min(len(f), 1)], ErrCorrupt)
		}
		heads, resume = true, true
	case !errors.Is(err, pebble.ErrNotFound):
		return fmt.Errorf("ledger: reading the marker of the split of the game heads: %w", err)
	}
	// A store of format 9 whose games migrateGameNumbers was moving when
	// it stopped: some games are numbered, some not yet. The format record
	// says 9 from its first batch on, so that an older version refuses it.
	resumeNumbers := false
	switch _, err := get(db, keyGameNums); {
	case err == nil:
		if len(f) == 0 || f[0] != 9 {
			return fmt.Errorf("ledger: %s has store format %x and the marker of a move of its games to their numbers, which only format 9 sets: %w", l.cfg.Dir, f[:min(len(f), 1)], ErrCorrupt)
		}
		numbers, resumeNumbers = true, true
	case !errors.Is(err, pebble.ErrNotFound):
		return fmt.Errorf("ledger: reading the marker of the move of the games to their numbers: %w", err)
	}
	switch _, err := get(db, keyLegacyIDs); {
	case err == nil:
		l.legacyIDs.Store(true)
	case !errors.Is(err, pebble.ErrNotFound):
		return fmt.Errorf("ledger: %w", err)
	}

	st, err := readState(db)
	if err != nil {
		return err
	}
	pub, err := readCheckpoint(db, l.cfg.Verifier)
	if err != nil {
		return err
	}
	b, err := l.checkStore(ctx, db, st, pub)
	if err != nil {
		return err
	}
	var stats Stats
	if v, err := get(db, keyStats); err == nil {
		if err := stats.UnmarshalBinary(v); err != nil {
			return fmt.Errorf("ledger: reading the statistics: %w", err)
		}
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("ledger: reading the statistics: %w", err)
	}
	rej := RejectedSummary{Counts: map[events.Code]uint64{}, Emitters: map[string]EmitterRejections{}}
	if v, err := get(db, keyRejMeta); err == nil {
		var v1 bool
		if rej, v1, err = parseRejMeta(v); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		if v1 {
			l.log.Info("migrating the rejected store: indexing its records by emitter")
			if err := migrateRejected(db, &rej, l.rejectedNamespace); err != nil {
				return fmt.Errorf("ledger: migrating the rejected store: %w", err)
			}
		}
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("ledger: reading the rejected store's counters: %w", err)
	}
	if migrate {
		l.log.Info("upgrading the store: event ids become per emitter; the dedup index moves to (emitter, id) keys", "from", 3, "to", storeFormat)
		chunk := l.cfg.migrateChunk
		if chunk <= 0 {
			chunk = migrateChunk
		}
		if _, err := l.migrateDedup(ctx, chunk); err != nil {
			return fmt.Errorf("ledger: moving the dedup index to per-emitter keys: %w", err)
		}
	}
	var open map[string]openCount
	if countOpen {
		l.log.Info("upgrading the store: the open games of each emitter are counted", "from", int(f[0]), "to", storeFormat)
		if open, err = l.migrateOpenGames(ctx); err != nil {
			return fmt.Errorf("ledger: counting the open games of each emitter: %w", err)
		}
	} else if open, err = readOpen(db); err != nil {
		return fmt.Errorf("ledger: reading the open games of each emitter: %w", err)
	}
	if heads {
		if resume {
			l.log.Info("upgrading the store: going on with the interrupted split of each game's head into the part its set-up writes and the part each event rewrites", "to", storeFormat)
		} else {
			l.log.Info("upgrading the store: each game's head is split into the part its set-up writes and the part each event rewrites", "from", int(f[0]), "to", storeFormat)
		}
		chunk := l.cfg.migrateChunk
		if chunk <= 0 {
			chunk = migrateChunk
		}
		if _, err := l.migrateHeads(ctx, chunk); err != nil {
			return fmt.Errorf("ledger: splitting the game heads: %w", err)
		}
	}
	if pieces {
		// Format 8 keeps a full entry bundle as its pieces (bundle.go);
		// the full bundles of format 7 stay whole under 'e', where the
		// readers look first. Only the format record changes, so that an
		// older version refuses the store.
		l.log.Info("upgrading the store: a full entry bundle is kept as its pieces", "from", 7, "to", storeFormat)
		if err := l.setFormat(8, "upgrading the store format"); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
	}
	if numbers {
		if resumeNumbers {
			l.log.Info("upgrading the store: going on with the interrupted move of each game's records to its number's keys", "to", storeFormat)
		} else {
			l.log.Info("upgrading the store: each game's live part and history are keyed by its number", "from", 8, "to", storeFormat)
		}
		chunk := l.cfg.migrateChunk
		if chunk <= 0 {
			chunk = migrateChunk
		}
		if _, err := l.migrateGameNumbers(ctx, chunk); err != nil {
			return fmt.Errorf("ledger: moving the games to their numbers' keys: %w", err)
		}
	}
	l.seq = newSequencer(l, b, stats, rej, open)
	l.recent = newRecentIndex(RecentLookups)
	if _, err := get(db, keyRebuild); err == nil {
		l.log.Warn("an interrupted rebuild of the projections is finished before opening")
		if err := l.seq.rebuild(ctx); err != nil {
			return fmt.Errorf("ledger: finishing the interrupted rebuild: %w", err)
		}
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("ledger: reading the rebuild marker: %w", err)
	}
	l.install(b.Size(), b.Root(), &l.seq.stats, &l.seq.rej.sum)
	l.signed = pub
	if pub.ok {
		pub.next = make(chan struct{})
		if l.cfg.Publish == nil {
			l.latest.Store(pub)
			l.met.checkpoint(pub.cp)
		}
	}
	return nil
}

// setFormat durably writes the format record: format f, then the origin.
// what names the step in the error.
func (l *Ledger) setFormat(f byte, what string) error {
	b := l.db.NewBatch()
	defer b.Close()
	b.Set(keyFormat, append([]byte{f}, l.origin...), nil)
	return l.commit(b, what)
}

func readState(r pebble.Reader) (merkle.State, error) {
	var st merkle.State
	v, err := get(r, keyState)
	if errors.Is(err, pebble.ErrNotFound) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("ledger: reading the tree state: %w", err)
	}
	if err := st.UnmarshalBinary(v); err != nil {
		return st, &TamperError{Check: "tree state", Err: err}
	}
	return st, nil
}

func readCheckpoint(r pebble.Reader, v note.Verifier) (*published, error) {
	n, err := get(r, keyCheckpoint)
	if errors.Is(err, pebble.ErrNotFound) {
		return &published{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: reading the last checkpoint: %w", err)
	}
	cp, err := merkle.Open(n, v)
	if err != nil {
		return nil, &TamperError{Check: "checkpoint signature", Err: err}
	}
	return &published{note: n, cp: cp, ok: true}, nil
}

// stop stops the ledger after a failed write.
func (l *Ledger) stop(err error) {
	l.stopOnce.Do(func() {
		l.stopErr.Store(&stopCause{err})
		l.log.Error("ledger stopped: a write to Pebble failed; reopen the ledger to recover", "err", err)
		l.met.stopped.Set(1)
		close(l.stopped)
	})
}

// Err returns nil while the ledger runs, and after a failed write an error
// wrapping ErrStopped and the cause.
func (l *Ledger) Err() error {
	if c := l.stopErr.Load(); c != nil {
		return fmt.Errorf("%w: %w", ErrStopped, c.err)
	}
	return nil
}

// Done returns a channel that is closed when the ledger stops after a failed
// write (see Err). A service reacts by closing and reopening the ledger, or
// by exiting for its supervisor to restart it.
func (l *Ledger) Done() <-chan struct{} { return l.stopped }

// Origin returns the log's origin: the checkpoint signer's key name.
func (l *Ledger) Origin() string { return l.origin }

// Close shuts the ledger down in the order given at Open and closes Pebble.
// It returns ErrClosed if the ledger is already closed.
func (l *Ledger) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.closed = true
	l.mu.Unlock()
	l.appends.Wait()
	close(l.reqs)
	<-l.seqDone
	close(l.signStop)
	<-l.signDone
	if l.cfg.CheckpointInterval > 0 && l.Err() == nil {
		if _, err := l.sign(context.Background()); errors.Is(err, ErrNotSequencer) {
			l.log.Info("the last checkpoint is not published: this node does not sequence the log", "reason", err)
		} else if err != nil {
			l.log.Error("signing the last checkpoint at close", "err", err)
		}
	}
	close(l.closedCh)
	if v := l.view.Swap(nil); v != nil {
		v.release()
	}
	l.snaps.Wait()
	l.pebbleMem.set(nil)
	return l.db.Close()
}

// begin registers an operation that must finish before Close closes the
// sequencer's queue.
func (l *Ledger) begin() error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return ErrClosed
	}
	l.appends.Add(1)
	return nil
}

// cachedBeacons returns lookup with the drand chains it returns checking
// their beacons through cache (Config.BeaconCache).
func cachedBeacons(lookup func([32]byte) (events.BeaconVerifier, bool), cache *drand.Cache) func([32]byte) (events.BeaconVerifier, bool) {
	return func(h [32]byte) (events.BeaconVerifier, bool) {
		v, ok := lookup(h)
		if c, isChain := v.(*drand.Chain); ok && isChain {
			return cache.Chain(c), true
		}
		return v, ok
	}
}
