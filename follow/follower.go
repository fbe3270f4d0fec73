package follow

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

// ErrQuorum wraps the error for a checkpoint larger than the verified one
// that does not carry the witness quorum of Config.Policy: it is not
// accepted (and not fetched).
var ErrQuorum = errors.New("the checkpoint does not meet the witness policy")

// Config configures a Follower. Source, LogKey and Store are required; every
// other field's zero value is documented.
type Config struct {
	// Source reads the log (its tlog-tiles prefix).
	Source *Source
	// LogKey is the log's checkpoint verifier key: a checkpoint is
	// considered only if it is signed by it, with the key's name as origin.
	LogKey note.Verifier
	// Policy, if not nil, is a witness policy (C2SP tlog-policy) a
	// checkpoint must satisfy before the follower fetches its leaves and
	// accepts it. Checkpoints without the quorum are still checked against
	// the verified copy: a log's signature is enough to be caught forking.
	Policy *merkle.Policy
	// Store is the copy; one Follower writes a Store.
	Store *Store
	// Concurrency is how many entry bundles are fetched at once. Zero
	// means 8.
	Concurrency int
	// Chunk is how many entry bundles are stored per durable batch while
	// catching up: a process killed mid-way fetches at most that many (and
	// those in flight) again. Zero means 16.
	Chunk int
	// MaxSize is the largest tree the follower accepts: a checkpoint of
	// the log that is larger is refused at once as the log's fault
	// (ErrLogFault, a *LimitError), before anything is fetched or
	// allocated for it. Zero means DefaultMaxSize.
	MaxSize uint64
	// MaxBytes, if positive, is the copy's disk budget: the Store's bytes
	// on disk (Store.DiskUsage). A catch-up that would take the store past
	// it stops before storing the batch that would (ErrBudget, a
	// *LimitError); the copy stays at its verified checkpoint and serves
	// it, and a later call resumes once there is room. Zero: no budget.
	MaxBytes int64
	// StepBytes bounds the bytes of entry bundles a catch-up holds in
	// memory before it has verified them: a step of at most Chunk bundles
	// and StepBytes bytes is appended, checked against the checkpoint
	// (below) and only then stored. Zero means DefaultStepBytes.
	StepBytes int
	// Progress, if not nil, is called after each durable batch of a
	// catch-up and at its end, from the goroutine that called Advance.
	Progress func(Progress)
	// Now gives the time of evidence records. Nil means time.Now.
	Now func() time.Time
	// Logger receives the follower's logs. Nil discards them.
	Logger *slog.Logger
	// Registerer receives the follower's metrics (zarlog_follow_*). Nil:
	// they are not registered.
	Registerer prometheus.Registerer
}

// Defaults of Config.
const (
	// DefaultMaxSize is 2^38 leaves: ten emitters at a tenth of the peak
	// rate of docs/OPERATIONS.md §9 (2,500 events a second together) for
	// three and a half years, about 100 TB at zarlog's 370 bytes an event.
	// It only says what no zarlog log can be yet: 2^40, 2^63−1 and 2^64−1
	// are refused; a disk budget (MaxBytes) bounds what is stored.
	DefaultMaxSize = 1 << 38
	// DefaultStepBytes is 32 MiB: two of the largest entry bundles
	// (256 × 65,537 bytes each), or about 400 bundles of typical events.
	DefaultStepBytes = 32 << 20
)

// ErrLogFault wraps the error for what only a faulty or hostile log serves
// and no retry mends: a checkpoint larger than Config.MaxSize, an entry
// bundle or tile larger than the format allows (ErrTooLarge) or that does
// not parse (merkle.ErrMalformed). Nothing of it is stored; the copy stays
// at its verified checkpoint. Entries or tiles that parse but do not give
// the checkpoint's root are a *Refusal instead, with evidence.
var ErrLogFault = errors.New("the log is at fault")

// ErrBudget wraps the error of a catch-up stopped at the disk budget
// (Config.MaxBytes): the copy stays at its verified checkpoint.
var ErrBudget = errors.New("the copy is at its disk budget")

// A LimitError says which limit a log's checkpoint or response went past.
// It wraps ErrLogFault (the log's fault: Limit "max-size", "bundle-size",
// "tile-size", "checkpoint-size" or "malformed") or ErrBudget (Limit
// "max-disk").
type LimitError struct {
	Limit  string // the limit, by the flag of zarlog mirror and zarlog audit that sets it
	Max    uint64 // the limit's value (0 for "malformed")
	Got    uint64 // what the log asked for (a tree size; bytes on disk)
	Source string // the URL of what went past it
	Err    error  // what happened, wrapping ErrLogFault or ErrBudget
}

func (e *LimitError) Error() string { return e.Err.Error() }
func (e *LimitError) Unwrap() error { return e.Err }

// LogFault reports whether the log is at fault (not the copy's budget).
func (e *LimitError) LogFault() bool { return errors.Is(e.Err, ErrLogFault) }

// Progress reports a catch-up: the stored tree has grown from Start to
// Stored leaves on its way to Target.
type Progress struct {
	Start, Stored, Target uint64
	Bundles               int           // entry bundles fetched so far in this catch-up
	Bytes                 int64         // their size
	Elapsed               time.Duration // since the catch-up began
	Done                  bool          // the last call of this catch-up
}

// A Result says what Advance did with a checkpoint.
type Result struct {
	// Checkpoint is the accepted checkpoint after the call.
	Checkpoint merkle.Checkpoint
	// Accepted: the checkpoint was new and larger and is now accepted.
	Accepted bool
	// Same: it is the accepted tree (same size and root).
	Same bool
	// Stale: it is smaller than the accepted one and consistent with it
	// (an old checkpoint, a cache): nothing to do.
	Stale bool
	// Consistent (Check only): it is larger than the accepted one, and a
	// consistency proof from the given tiles shows it extends it; it is not
	// accepted.
	Consistent bool
	// Bundles and Entries count what was fetched.
	Bundles int
	Entries uint64
}

// A Follower keeps a Store in step with a log. Create it with New. Its
// methods are safe for concurrent use: Advance calls that need to fetch are
// serialized; checks of checkpoints no larger than the verified one run
// concurrently.
type Follower struct {
	cfg Config
	log *slog.Logger
	m   *metrics

	mu  sync.Mutex      // serializes catch-ups and writes
	b   *merkle.Builder // the stored tree; nil: reopen from the store
	bad refused         // the last checkpoint refused after fetching
}

// RefuseFor is how long a larger checkpoint refused after its entries were
// fetched (a *Refusal, or the log's fault: a response past the format's
// size, malformed) is refused again at once, with the same error, without
// fetching anything: a hostile log that keeps serving it costs a follower
// one step of bundles per RefuseFor, not per poll. A new checkpoint is
// fetched at once.
const RefuseFor = 10 * time.Minute

// refused is the last checkpoint refused after fetching.
type refused struct {
	note  []byte
	err   error
	until time.Time
}

// New returns a Follower for cfg. It finishes the projection of leaves
// accepted before a crash.
func New(ctx context.Context, cfg Config) (*Follower, error) {
	if cfg.Source == nil || cfg.LogKey == nil || cfg.Store == nil {
		return nil, errors.New("follow: Source, LogKey and Store are required")
	}
	if cfg.Store.Origin() != cfg.LogKey.Name() {
		return nil, fmt.Errorf("follow: the store holds %q, the key is %q's", cfg.Store.Origin(), cfg.LogKey.Name())
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 8
	}
	if cfg.Chunk <= 0 {
		cfg.Chunk = 16
	}
	if cfg.MaxSize == 0 {
		cfg.MaxSize = DefaultMaxSize
	}
	if cfg.StepBytes <= 0 {
		cfg.StepBytes = DefaultStepBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := newMetrics()
	if cfg.Registerer != nil {
		if err := m.register(cfg.Registerer); err != nil {
			return nil, fmt.Errorf("follow: registering metrics: %w", err)
		}
	}
	f := &Follower{cfg: cfg, log: log, m: m}
	cfg.Source.retried = m.retries.Inc
	_, cp, _ := cfg.Store.Checkpoint()
	m.checkpointSize.Set(float64(cp.Size))
	m.storedSize.Set(float64(cfg.Store.State().Size))
	if err := f.project(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// Store returns the follower's store.
func (f *Follower) Store() *Store { return f.cfg.Store }

// Source returns the follower's source.
func (f *Follower) Source() *Source { return f.cfg.Source }

func (f *Follower) project(ctx context.Context) error {
	err := f.cfg.Store.project(ctx)
	f.m.projected.Set(float64(f.cfg.Store.Projected()))
	return err
}

// Update fetches the log's checkpoint and advances to it (see Advance).
func (f *Follower) Update(ctx context.Context) (Result, error) {
	n, err := f.cfg.Source.Checkpoint(ctx)
	if err != nil {
		f.m.fetchErrors.Inc()
		_, cp, _ := f.cfg.Store.Checkpoint()
		return Result{Checkpoint: cp}, f.fault(fmt.Errorf("follow: fetching the checkpoint: %w", err), "checkpoint-size", f.cfg.Source.URL("checkpoint"))
	}
	if f.cfg.Policy != nil && !f.meetsPolicy(n) {
		// A log that has its checkpoints witnessed apart from signing them
		// (zarlog's) serves the witnessed one at checkpoint.witnessed: a
		// follower with a policy advances to it. The log's /checkpoint is
		// still checked against the copy (Advance: a larger one is refused
		// for the quorum, a smaller or equal one is compared).
		if w, werr := f.cfg.Source.Get(ctx, WitnessedPath, merkle.MaxNoteSize); werr == nil && f.meetsPolicy(w) {
			res, err := f.Advance(ctx, w, f.cfg.Source.URL(WitnessedPath))
			if err != nil {
				return res, err
			}
			if _, cerr := f.Advance(ctx, n, f.cfg.Source.URL("checkpoint")); cerr != nil && !errors.Is(cerr, ErrQuorum) {
				return res, cerr
			}
			return res, nil
		}
	}
	return f.Advance(ctx, n, f.cfg.Source.URL("checkpoint"))
}

// WitnessedPath is where a zarlog log serves its latest witnessed
// checkpoint (docs/HTTP.md): the one a follower with a policy advances to
// when the log's /checkpoint carries the log's signature alone.
const WitnessedPath = "checkpoint.witnessed"

// Open verifies that signed is a checkpoint note of the log: signed by the
// log key, its origin the key's name. Errors wrap merkle.ErrSignature or
// merkle.ErrMalformed.
func (f *Follower) Open(signed []byte) (merkle.Checkpoint, error) {
	return merkle.Open(signed, f.cfg.LogKey)
}

// Advance considers a signed checkpoint of the log read from source (a URL,
// or a description such as "bundle of game X"):
//
//   - not validly signed by the log key: an error wrapping
//     merkle.ErrSignature or merkle.ErrMalformed; nothing else is done;
//   - no larger than the accepted one: checked against the verified copy
//     (same size: same root; smaller: its root must be the copy's root at
//     its size), Result.Same or Result.Stale if it holds, a *Refusal with
//     the evidence if not; the log's own /checkpoint of the accepted tree
//     with other cosignatures replaces the stored note;
//   - larger than Config.MaxSize: refused at once as the log's fault (a
//     *LimitError wrapping ErrLogFault), nothing fetched;
//   - larger: with a Policy, its quorum is checked (ErrQuorum); the log's
//     hash tiles must prove it consistent with the accepted one (else a
//     *Refusal of KindInconsistent); the missing entry bundles are fetched
//     at the checkpoint's widths and appended to the copy's tree in steps
//     (Config.Chunk, Config.StepBytes), each stored in one durable batch
//     only once the log's tiles prove the tree of that size a prefix of the
//     checkpoint's and the store stays within Config.MaxBytes (else
//     ErrBudget); the last step must give the checkpoint's root, and then
//     the checkpoint is stored and accepted (Result.Accepted) and its new
//     leaves projected. A step that is not a prefix is never stored: a
//     *Refusal of KindEntries, and the leaves stored for the checkpoint are
//     dropped. A failed fetch returns an error wrapping ErrFetch (or
//     merkle.ErrNotFound), a response no honest log serves (too large,
//     malformed) a *LimitError wrapping ErrLogFault; the verified steps
//     stored so far are kept for the next call. A checkpoint refused after
//     a fetch (a *Refusal, the log's fault) is refused again with the same
//     error, without a fetch, for RefuseFor.
//
// The accepted checkpoint only ever grows, and only to checkpoints whose
// root the copy's own tree reproduces.
func (f *Follower) Advance(ctx context.Context, signed []byte, source string) (Result, error) {
	cp, err := merkle.Open(signed, f.cfg.LogKey)
	if err != nil {
		f.m.checkpoints.WithLabelValues("bad-signature").Inc()
		_, acc, _ := f.cfg.Store.Checkpoint()
		return Result{Checkpoint: acc}, fmt.Errorf("follow: checkpoint from %s: %w", source, err)
	}
	sc := merkle.SignedCheckpoint{Checkpoint: cp, Note: signed}
	accNote, acc, _ := f.cfg.Store.Checkpoint()
	if f.cfg.Store.Projected() < acc.Size {
		// A projection interrupted after its checkpoint was accepted.
		f.mu.Lock()
		err := f.project(ctx)
		f.mu.Unlock()
		if err != nil {
			return Result{Checkpoint: acc}, err
		}
	}
	if accNote != nil && cp.Size <= acc.Size {
		return f.check(ctx, sc, source, false)
	}
	if cp.Size > f.cfg.MaxSize {
		return Result{Checkpoint: acc}, f.tooLarge(cp, source)
	}
	if f.cfg.Policy != nil {
		if _, err := f.cfg.Policy.CheckWitnesses(signed); err != nil {
			f.m.checkpoints.WithLabelValues("quorum").Inc()
			return Result{Checkpoint: acc}, fmt.Errorf("follow: checkpoint of size %d from %s: %w: %w", cp.Size, source, ErrQuorum, err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if accNote, acc, _ = f.cfg.Store.Checkpoint(); accNote != nil && cp.Size <= acc.Size {
		return f.check(ctx, sc, source, true)
	}
	now := f.cfg.Now()
	if f.bad.err != nil && bytes.Equal(f.bad.note, signed) && now.Before(f.bad.until) {
		f.m.checkpoints.WithLabelValues("refused-before").Inc()
		return Result{Checkpoint: acc}, f.bad.err
	}
	res, err := f.advance(ctx, sc, source)
	var ref *Refusal
	var lim *LimitError
	if errors.As(err, &ref) || (errors.As(err, &lim) && lim.LogFault()) {
		f.bad = refused{note: signed, err: err, until: now.Add(RefuseFor)}
	}
	return res, err
}

// Check checks a signed checkpoint from source against the verified copy
// without fetching entries or accepting anything: one no larger than the
// accepted checkpoint as Advance does; a larger one with a consistency
// proof from the accepted size built from the tiles r returns (those of the
// source that served it: a mirror's, say), giving Result.Consistent or a
// *Refusal of KindInconsistent. Before any checkpoint is accepted there is
// nothing to check a larger one against: the result is empty.
func (f *Follower) Check(ctx context.Context, signed []byte, source string, r merkle.TileReader) (Result, error) {
	cp, err := merkle.Open(signed, f.cfg.LogKey)
	if err != nil {
		f.m.checkpoints.WithLabelValues("bad-signature").Inc()
		_, acc, _ := f.cfg.Store.Checkpoint()
		return Result{Checkpoint: acc}, fmt.Errorf("follow: checkpoint from %s: %w", source, err)
	}
	sc := merkle.SignedCheckpoint{Checkpoint: cp, Note: signed}
	accNote, acc, accSource := f.cfg.Store.Checkpoint()
	if accNote == nil {
		return Result{}, nil
	}
	if cp.Size <= acc.Size {
		return f.check(ctx, sc, source, false)
	}
	if cp.Size > f.cfg.MaxSize {
		return Result{Checkpoint: acc}, f.tooLarge(cp, source)
	}
	old := merkle.SignedCheckpoint{Checkpoint: acc, Note: accNote}
	proof, err := merkle.ConsistencyProof(ctx, r, acc.Size, cp.Size)
	if err != nil {
		return Result{Checkpoint: acc}, fmt.Errorf("follow: consistency proof from %d to %d from the tiles of %s: %w", acc.Size, cp.Size, source, err)
	}
	if err := merkle.CheckSignedConsistency(old, sc, proof); err != nil {
		return Result{Checkpoint: acc}, f.refuse(KindInconsistent, old, accSource, sc, source, proof, ProofFromLog, rootAt(ctx, r, acc.Size, cp, proof), "", err)
	}
	return Result{Checkpoint: acc, Consistent: true}, nil
}

// rootAt returns the root at size of the larger tree whose tiles r
// returns, if proof leads from it to that tree's signed root: then the
// tiles are the larger checkpoint's own, and the root they give at the
// smaller size proves (when it is not the smaller checkpoint's) that the
// log signed two histories. It returns nil otherwise.
func rootAt(ctx context.Context, r merkle.TileReader, size uint64, larger merkle.Checkpoint, proof []merkle.Hash) *merkle.Hash {
	at, err := merkle.RootHash(ctx, r, size)
	if err != nil || merkle.CheckConsistency(size, larger.Size, at, larger.Hash, proof) != nil {
		return nil
	}
	return &at
}

// check checks a checkpoint no larger than the accepted one against the
// verified copy. locked says whether f.mu is held.
func (f *Follower) check(ctx context.Context, sc merkle.SignedCheckpoint, source string, locked bool) (Result, error) {
	accNote, acc, accSource := f.cfg.Store.Checkpoint()
	cp := sc.Checkpoint
	res := Result{Checkpoint: acc}
	old := merkle.SignedCheckpoint{Checkpoint: acc, Note: accNote}
	if cp.Size == acc.Size {
		if cp.Hash == acc.Hash {
			f.m.checkpoints.WithLabelValues("same").Inc()
			res.Same = true
			if !bytes.Equal(sc.Note, accNote) && source == f.cfg.Source.URL("checkpoint") && f.meetsPolicy(sc.Note) {
				// The log's latest note of the same tree, with other
				// cosignatures: serve it.
				if !locked {
					f.mu.Lock()
					defer f.mu.Unlock()
				}
				if n, c, _ := f.cfg.Store.Checkpoint(); c.Size == cp.Size && !bytes.Equal(n, sc.Note) {
					if err := f.cfg.Store.accept(sc.Note, cp, source); err != nil {
						return res, err
					}
				}
			}
			return res, nil
		}
		err := merkle.CheckSignedConsistency(old, sc, nil)
		return res, f.refuse(KindFork, old, accSource, sc, source, nil, "", nil, "", err)
	}
	v := f.cfg.Store.Verified()
	proof, err := merkle.ConsistencyProof(ctx, v, cp.Size, acc.Size)
	if err != nil {
		return res, fmt.Errorf("follow: consistency proof from %d to %d from the verified copy: %w", cp.Size, acc.Size, err)
	}
	if err := merkle.CheckSignedConsistency(sc, old, proof); err != nil {
		at, rerr := merkle.RootHash(ctx, v, cp.Size)
		if rerr != nil {
			return res, fmt.Errorf("follow: root at %d from the verified copy: %w", cp.Size, rerr)
		}
		return res, f.refuse(KindInconsistent, old, accSource, sc, source, proof, ProofFromVerified, &at, "", err)
	}
	f.m.checkpoints.WithLabelValues("stale").Inc()
	res.Stale = true
	return res, nil
}

func (f *Follower) meetsPolicy(signed []byte) bool {
	if f.cfg.Policy == nil {
		return true
	}
	_, err := f.cfg.Policy.CheckWitnesses(signed)
	return err == nil
}

// refuse builds and logs a Refusal.
func (f *Follower) refuse(kind string, verified merkle.SignedCheckpoint, vsource string, conflicting merkle.SignedCheckpoint, csource string,
	proof []merkle.Hash, from string, at *merkle.Hash, detail string, err error) *Refusal {
	e := Evidence{Kind: kind, Origin: conflicting.Checkpoint.Origin, Time: f.cfg.Now().UTC(), Error: err.Error(),
		Conflicting: observe(conflicting, csource), Proof: make([]string, len(proof)), ProofFrom: from, Detail: detail}
	if verified.Note != nil {
		o := observe(verified, vsource)
		e.Verified = &o
	}
	for i, h := range proof {
		e.Proof[i] = b64(h)
	}
	if at != nil {
		e.RootAtSmaller = b64(*at)
	}
	f.m.checkpoints.WithLabelValues("refused").Inc()
	f.m.refusals.WithLabelValues(kind).Inc()
	attrs := []any{"kind", kind, "source", csource, "size", conflicting.Checkpoint.Size, "verified_size", verified.Checkpoint.Size, "err", err}
	if kind == KindEntries {
		f.log.Error("follow: the log's entries do not give its checkpoint's root; refused", attrs...)
	} else {
		f.log.Error("follow: SPLIT VIEW: the log signed a checkpoint inconsistent with the verified one; refused", attrs...)
	}
	return &Refusal{Evidence: e, Err: err}
}

// builder returns the Builder of the stored tree, opening it if needed.
// f.mu is held.
func (f *Follower) builder(ctx context.Context) (*merkle.Builder, error) {
	if f.b != nil {
		return f.b, nil
	}
	st := f.cfg.Store.State()
	b, err := merkle.NewBuilder(ctx, f.cfg.Store, st)
	if err != nil {
		return nil, fmt.Errorf("follow: opening the stored tree of size %d: %w", st.Size, err)
	}
	f.b = b
	return b, nil
}

// advance catches up to a larger checkpoint. f.mu is held.
//
// It fetches and verifies in steps, so that it never holds more than one
// step of unverified leaves, in memory only: first the log's hash tiles must
// show the checkpoint extending the verified one (a consistency proof, or a
// *Refusal of KindInconsistent); then each step of at most Chunk entry
// bundles and StepBytes bytes is appended to the tree and stored only once a
// consistency proof from the log's tiles shows the tree of that size to be a
// prefix of the checkpoint's (the last step: the checkpoint's root itself).
// A step that fails is dropped, never stored, and diagnosed (a *Refusal of
// KindEntries). So what the store holds beyond the verified checkpoint is a
// proven prefix of a signed checkpoint's tree, at most MaxBytes of it.
func (f *Follower) advance(ctx context.Context, sc merkle.SignedCheckpoint, source string) (Result, error) {
	accNote, acc, accSource := f.cfg.Store.Checkpoint()
	res := Result{Checkpoint: acc}
	old := merkle.SignedCheckpoint{Checkpoint: acc, Note: accNote}
	cp := sc.Checkpoint
	b, err := f.builder(ctx)
	if err != nil {
		return res, err
	}
	if cp.Size <= b.Size() {
		// Leaves fetched earlier cover it: accept it if they give its root.
		root, err := merkle.RootHash(ctx, f.cfg.Store, cp.Size)
		if err != nil {
			return res, fmt.Errorf("follow: root at %d from the stored tree: %w", cp.Size, err)
		}
		if root == cp.Hash {
			return f.accept(ctx, sc, source, res)
		}
		// They do not: they were fetched for another checkpoint, which is
		// not verified. Drop them and fetch this one's.
		f.log.Warn("follow: the leaves fetched beyond the verified checkpoint do not give this checkpoint's root; fetching them again",
			"verified_size", acc.Size, "stored_size", b.Size(), "size", cp.Size)
		if err := f.rollback(ctx, acc.Size); err != nil {
			return res, err
		}
		if b, err = f.builder(ctx); err != nil {
			return res, err
		}
	}
	tiles := newTileCache(f.cfg.Source, 64)
	if accNote != nil && acc.Size > 0 {
		proof, err := merkle.ConsistencyProof(ctx, tiles, acc.Size, cp.Size)
		if err != nil {
			return res, f.fault(fmt.Errorf("follow: the log's consistency proof from %d to %d: %w", acc.Size, cp.Size, err), "tile-size", source)
		}
		if err := merkle.CheckSignedConsistency(old, sc, proof); err != nil {
			return res, f.refuse(KindInconsistent, old, accSource, sc, source, proof, ProofFromLog, rootAt(ctx, tiles, acc.Size, cp, proof), "", err)
		}
	}
	if b.Size() > acc.Size {
		// Leaves stored for another checkpoint must be a prefix of this one.
		if bad, err := f.checkStep(ctx, tiles, b.Size(), b.Root(), cp); err != nil {
			return res, err
		} else if bad {
			f.log.Warn("follow: the leaves fetched beyond the verified checkpoint are not a prefix of this checkpoint's tree; fetching them again",
				"verified_size", acc.Size, "stored_size", b.Size(), "size", cp.Size)
			if err := f.rollback(ctx, acc.Size); err != nil {
				return res, err
			}
			if b, err = f.builder(ctx); err != nil {
				return res, err
			}
		}
	}
	start := b.Size()
	n, _, err := f.catchUp(ctx, b, cp, source, tiles)
	res.Bundles, res.Entries = n, f.cfg.Store.State().Size-start
	var bad *badStep
	if errors.As(err, &bad) {
		ref := f.diagnose(ctx, tiles, old, accSource, sc, source, bad)
		if err := f.rollback(ctx, acc.Size); err != nil {
			return res, errors.Join(ref, err)
		}
		return res, ref
	}
	if err != nil {
		return res, err
	}
	f.m.logFault.Set(0)
	return f.accept(ctx, sc, source, res)
}

// fault turns an error of what the log served into a *LimitError wrapping
// ErrLogFault if it is one no retry mends (a response larger than the
// format allows, one that does not parse); limit names what was too large.
func (f *Follower) fault(err error, limit, source string) error {
	var max uint64
	var what string
	switch {
	case errors.Is(err, ErrTooLarge) && limit == "checkpoint-size":
		max, what = merkle.MaxNoteSize, fmt.Sprintf("checkpoint-size: a checkpoint has at most %d bytes", merkle.MaxNoteSize)
	case errors.Is(err, ErrTooLarge) && limit == "bundle-size":
		max, what = maxBundleBytes, fmt.Sprintf("bundle-size: an entry bundle has at most %d bytes", maxBundleBytes)
	case errors.Is(err, ErrTooLarge):
		max, what = maxTileBytes, fmt.Sprintf("tile-size: a hash tile has at most %d bytes", maxTileBytes)
	case errors.Is(err, merkle.ErrMalformed):
		limit, what = "malformed", "malformed: it does not parse as the format says"
	default:
		return err
	}
	return f.limit(&LimitError{Limit: limit, Max: max, Source: source, Err: fmt.Errorf("%w: %w (%s)", err, ErrLogFault, what)})
}

// tooLarge refuses a checkpoint larger than MaxSize.
func (f *Follower) tooLarge(cp merkle.Checkpoint, source string) error {
	return f.limit(&LimitError{Limit: "max-size", Max: f.cfg.MaxSize, Got: cp.Size, Source: source,
		Err: fmt.Errorf("follow: %w: its checkpoint from %s has size %d, more than the largest tree this copy accepts (max-size %d); refused without fetching anything",
			ErrLogFault, source, cp.Size, f.cfg.MaxSize)})
}

// limit counts and logs a LimitError.
func (f *Follower) limit(e *LimitError) error {
	f.m.limits.WithLabelValues(e.Limit).Inc()
	if e.LogFault() {
		f.m.logFault.Set(1)
		f.log.Error("follow: THE LOG IS AT FAULT: it served what no honest log serves; the copy stays at its verified checkpoint", "limit", e.Limit, "err", e.Err)
	} else {
		f.log.Warn("follow: the copy is at a limit; it stays at its verified checkpoint", "limit", e.Limit, "err", e.Err)
	}
	return e
}

func (f *Follower) accept(ctx context.Context, sc merkle.SignedCheckpoint, source string, res Result) (Result, error) {
	if err := f.cfg.Store.accept(sc.Note, sc.Checkpoint, source); err != nil {
		return res, err
	}
	f.m.checkpoints.WithLabelValues("accepted").Inc()
	f.m.checkpointSize.Set(float64(sc.Checkpoint.Size))
	res.Checkpoint, res.Accepted = sc.Checkpoint, true
	f.log.Debug("follow: checkpoint accepted", "size", sc.Checkpoint.Size, "source", source, "bundles", res.Bundles)
	return res, f.project(ctx)
}

// rollback drops the stored leaves beyond size (those of the verified
// tree). f.mu is held.
func (f *Follower) rollback(ctx context.Context, size uint64) error {
	f.b = nil
	st, err := stateAt(ctx, f.cfg.Store, size)
	if err != nil {
		return fmt.Errorf("follow: going back to the verified tree of size %d: %w", size, err)
	}
	if err := f.cfg.Store.writeTree(nil, st); err != nil {
		return err
	}
	f.m.storedSize.Set(float64(size))
	return nil
}

// A badStep is a step of a catch-up whose leaves, appended to the stored
// tree, do not give a tree that the checkpoint extends: the leaves
// [start, end) with their hashes, none of them stored.
type badStep struct {
	start, end uint64
	hashes     []merkle.Hash
	root       merkle.Hash // the tree's root at end
	err        error
}

func (e *badStep) Error() string { return e.err.Error() }

// checkStep says whether the tree of the given size and root is not a
// prefix of cp's tree, by a consistency proof from the log's tiles. An
// error means the proof could not be read.
func (f *Follower) checkStep(ctx context.Context, tiles merkle.TileReader, size uint64, root merkle.Hash, cp merkle.Checkpoint) (bool, error) {
	if size == cp.Size {
		return root != cp.Hash, nil
	}
	proof, err := merkle.ConsistencyProof(ctx, tiles, size, cp.Size)
	if err != nil {
		return false, f.fault(fmt.Errorf("follow: the log's consistency proof from %d to %d: %w", size, cp.Size, err), "tile-size", f.cfg.Source.URL("tile/"))
	}
	return merkle.CheckConsistency(size, cp.Size, root, cp.Hash, proof) != nil, nil
}

// diagnose says why a step's entries do not give a tree that a larger
// checkpoint extends: either the log's hash tiles do not lead to its
// checkpoint's root at that size either (the tiles do not match the
// checkpoint), or they do and the step's entries do not match the log's
// level-0 tiles (the entries do not match the tiles; the detail names the
// first entry that differs). Both are a Refusal of KindEntries: the log's
// entries do not give its checkpoint's root.
func (f *Follower) diagnose(ctx context.Context, tiles merkle.TileReader, old merkle.SignedCheckpoint, oldSource string, sc merkle.SignedCheckpoint, source string, bad *badStep) *Refusal {
	cp := sc.Checkpoint
	errEntries := fmt.Errorf("%w: the entries of leaves [%d, %d) on the verified tree of size %d do not give a tree that the checkpoint of size %d and root %s extends",
		ErrEntries, bad.start, bad.end, old.Checkpoint.Size, cp.Size, b64(cp.Hash))
	var detail string
	theirRoot, err := merkle.RootHash(ctx, tiles, bad.end)
	if err != nil {
		detail = fmt.Sprintf("the log's hash tiles could not be read to tell bad tiles from bad entries: %s", err)
		return f.refuse(KindEntries, old, oldSource, sc, source, nil, "", nil, detail, errEntries)
	}
	if ok, err := f.checkStep(ctx, tiles, bad.end, theirRoot, cp); err != nil {
		detail = fmt.Sprintf("the log's hash tiles could not be read to tell bad tiles from bad entries: %s", err)
		return f.refuse(KindEntries, old, oldSource, sc, source, nil, "", nil, detail, errEntries)
	} else if ok {
		detail = fmt.Sprintf("the log's own hash tiles do not match its checkpoint: the tree of size %d they give (root %s) is not a prefix of the checkpoint's tree", bad.end, b64(theirRoot))
		return f.refuse(KindEntries, old, oldSource, sc, source, nil, "", nil, detail, errEntries)
	}
	theirs, err := merkle.ReadLeafHashes(ctx, tiles, bad.start, bad.end, cp.Size)
	if err == nil {
		for i := range bad.hashes {
			if bad.hashes[i] != theirs[i] {
				idx := bad.start + uint64(i)
				t, _ := merkle.TileAt(merkle.EntriesLevel, idx/merkle.TileWidth, cp.Size)
				lt0, _ := merkle.TileAt(0, idx/merkle.TileWidth, cp.Size)
				detail = fmt.Sprintf("entry %d of %s hashes to %x, but the log's %s has %x", idx, t, bad.hashes[i], lt0, theirs[i])
				break
			}
		}
	}
	if err != nil {
		detail = fmt.Sprintf("the log's level-0 tiles could not be compared: %s", err)
	} else if detail == "" {
		detail = fmt.Sprintf("the log's level-0 tiles of leaves [%d, %d) match its entries, but the tree they give is not a prefix of the checkpoint's", bad.start, bad.end)
	}
	return f.refuse(KindEntries, old, oldSource, sc, source, nil, "", nil, detail, errEntries)
}

// catchUp fetches the entry bundles from the stored tree's size to cp's and
// appends them to b, in steps of at most Chunk bundles and StepBytes bytes;
// each step is stored (one durable batch) only once checkStep shows the
// tree a prefix of cp's, and only if the store stays within MaxBytes. A step
// that is not a prefix returns a *badStep; on any error the step in
// progress is dropped (f.b is reset to the stored tree). f.mu is held.
func (f *Follower) catchUp(ctx context.Context, b *merkle.Builder, cp merkle.Checkpoint, source string, tiles merkle.TileReader) (bundles int, nbytes int64, err error) {
	start := b.Size()
	if start >= cp.Size {
		return 0, 0, nil
	}
	if err := f.checkBudget(0, cp); err != nil {
		return 0, 0, err
	}
	first, last := start/merkle.TileWidth, (cp.Size-1)/merkle.TileWidth
	total := last - first + 1
	began := time.Now()
	f.m.target.Set(float64(cp.Size))

	ctx, cancel := context.WithCancel(ctx)
	type result struct {
		i       uint64
		entries [][]byte
		n       int
		err     error
	}
	// At most Concurrency bundles are fetched and not yet appended (in
	// flight, or arrived out of order), and while more than one is, at
	// most about StepBytes of them (the gate).
	g := newGate(f.cfg.Concurrency, int64(f.cfg.StepBytes))
	out := make(chan result, f.cfg.Concurrency)
	type job struct {
		i        uint64
		reserved int64
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(jobs)
		for i := range total {
			reserved, ok := g.acquire()
			if !ok {
				return
			}
			select {
			case jobs <- job{i, reserved}:
			case <-ctx.Done():
				return
			}
		}
	})
	for range f.cfg.Concurrency {
		wg.Go(func() {
			for j := range jobs {
				t, _ := merkle.TileAt(merkle.EntriesLevel, first+j.i, cp.Size)
				entries, n, err := f.cfg.Source.Bundle(ctx, t)
				g.fetched(j.reserved, int64(n))
				out <- result{j.i, entries, n, err}
			}
		})
	}
	defer func() {
		cancel()
		g.close()
		wg.Wait()
	}()

	pending := map[[2]int64]merkle.TileData{} // the step's tiles, by level and index
	stepStart, stepBytes, stepBundles := b.Size(), 0, 0
	var stepHashes []merkle.Hash
	drop := func() { f.b = nil } // the builder holds leaves not stored
	endStep := func(done bool) error {
		size, root := b.Size(), b.Root()
		bad, err := f.checkStep(ctx, tiles, size, root, cp)
		if err != nil {
			drop()
			return err
		}
		if bad {
			drop()
			return &badStep{start: stepStart, end: size, hashes: stepHashes, root: root,
				err: fmt.Errorf("%w: leaves [%d, %d)", ErrEntries, stepStart, size)}
		}
		if err := f.checkBudget(stepBytes, cp); err != nil {
			drop()
			return err
		}
		tds := make([]merkle.TileData, 0, len(pending))
		for _, td := range pending {
			tds = append(tds, td)
		}
		if err := f.cfg.Store.writeTree(tds, b.State()); err != nil {
			drop()
			return err
		}
		clear(pending)
		f.m.storedSize.Set(float64(size))
		stepStart, stepBytes, stepBundles, stepHashes = size, 0, 0, stepHashes[:0]
		if f.cfg.Progress != nil {
			f.cfg.Progress(Progress{Start: start, Stored: size, Target: cp.Size, Bundles: bundles, Bytes: nbytes, Elapsed: time.Since(began), Done: done})
		}
		return nil
	}
	got := map[uint64]result{}
	for next := uint64(0); next < total; {
		var r result
		select {
		case r = <-out:
		case <-ctx.Done():
			drop()
			return bundles, nbytes, ctx.Err()
		}
		got[r.i] = r
		for {
			r, ok := got[next]
			if !ok {
				break
			}
			delete(got, next)
			g.done(int64(r.n))
			if r.err != nil {
				f.m.fetchErrors.Inc()
				err := f.fault(fmt.Errorf("follow: catching up from %d to %d: %w", start, cp.Size, r.err), "bundle-size", source)
				if stepBundles > 0 && ctx.Err() == nil {
					// Keep what was fetched before, once verified.
					if serr := endStep(false); serr != nil {
						var bad *badStep
						if errors.As(serr, &bad) {
							return bundles, nbytes, serr
						}
						err = errors.Join(err, serr)
					}
				}
				drop()
				return bundles, nbytes, err
			}
			entries := r.entries
			if skip := b.Size() - (first+next)*merkle.TileWidth; skip > 0 {
				entries = entries[skip:] // the stored partial bundle has these
			}
			hashes := make([]merkle.Hash, len(entries))
			for i, e := range entries {
				hashes[i] = merkle.LeafHash(e)
			}
			tds, err := b.AppendHashed(entries, hashes)
			if err != nil {
				drop()
				return bundles, nbytes, fmt.Errorf("follow: appending bundle %d: %w", first+next, err)
			}
			for _, td := range tds {
				pending[[2]int64{int64(td.Tile.Level), int64(td.Tile.Index)}] = td
			}
			stepHashes = append(stepHashes, hashes...)
			bundles++
			nbytes += int64(r.n)
			stepBytes += r.n
			stepBundles++
			f.m.bundles.Inc()
			f.m.bytes.Add(float64(r.n))
			f.m.entries.Add(float64(len(entries)))
			next++
			if stepBundles >= f.cfg.Chunk || stepBytes >= f.cfg.StepBytes || next == total {
				if err := endStep(next == total); err != nil {
					return bundles, nbytes, err
				}
			}
		}
	}
	return bundles, nbytes, nil
}

// A gate bounds the entry bundles a catch-up has fetched and not yet
// appended: at most max of them, and, while more than one, bytes within
// budget. A fetch reserves the largest bundle seen so far in the catch-up
// (before the first, the largest the format allows), so that against a log
// serving full 16.8 MB bundles the catch-up fetches one or two at a time,
// and against a log of small bundles all max at once.
type gate struct {
	mu         sync.Mutex
	cond       *sync.Cond
	n, max     int
	bytes, est int64
	budget     int64
	seen       bool
	closed     bool
}

func newGate(max int, budget int64) *gate {
	g := &gate{max: max, budget: budget, est: maxBundleBytes}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// acquire waits for room for one more bundle and returns the bytes it
// reserved; false once the gate is closed.
func (g *gate) acquire() (int64, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for !g.closed && (g.n >= g.max || (g.n > 0 && g.bytes+g.est > g.budget)) {
		g.cond.Wait()
	}
	if g.closed {
		return 0, false
	}
	g.n++
	g.bytes += g.est
	return g.est, true
}

// fetched replaces a reservation by the bundle's actual size.
func (g *gate) fetched(reserved, n int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.bytes += n - reserved
	if !g.seen || n > g.est {
		g.est, g.seen = max(n, 1), true
	}
	g.cond.Broadcast()
}

// done releases a bundle of n bytes that was appended (or dropped).
func (g *gate) done(n int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n--
	g.bytes -= n
	g.cond.Broadcast()
}

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	g.cond.Broadcast()
}

// checkBudget fails with ErrBudget if storing n more bytes would take the
// store past MaxBytes.
func (f *Follower) checkBudget(n int, cp merkle.Checkpoint) error {
	if f.cfg.MaxBytes <= 0 {
		return nil
	}
	use := f.cfg.Store.DiskUsage()
	f.m.diskBytes.Set(float64(use))
	if use+int64(n) <= f.cfg.MaxBytes {
		return nil
	}
	_, acc, _ := f.cfg.Store.Checkpoint()
	what := fmt.Sprintf("the copy holds %d bytes on disk, and its next step of %d bytes would take it past its budget of %d (max-disk)", use, n, f.cfg.MaxBytes)
	if n == 0 {
		what = fmt.Sprintf("the copy holds %d bytes on disk, at its budget of %d (max-disk)", use, f.cfg.MaxBytes)
	}
	return f.limit(&LimitError{Limit: "max-disk", Max: uint64(f.cfg.MaxBytes), Got: uint64(use) + uint64(n), Source: f.cfg.Source.URL("checkpoint"),
		Err: fmt.Errorf("follow: %w: %s; it stays at its verified checkpoint of size %d, with %d of the %d leaves of the log's checkpoint stored",
			ErrBudget, what, acc.Size, f.cfg.Store.State().Size, cp.Size)})
}
