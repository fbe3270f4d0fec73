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

	mu sync.Mutex      // serializes catch-ups and writes
	b  *merkle.Builder // the stored tree; nil: reopen from the store
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
		return Result{Checkpoint: cp}, fmt.Errorf("follow: fetching the checkpoint: %w", err)
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
//   - larger: with a Policy, its quorum is checked (ErrQuorum); the missing
//     entry bundles are fetched at the checkpoint's widths, appended to the
//     copy's tree and stored in durable batches; if the tree then has the
//     checkpoint's root, the checkpoint is stored and accepted
//     (Result.Accepted) and its new leaves projected; if not, the leaves
//     fetched for it are dropped and a *Refusal is returned. A failed fetch
//     returns an error wrapping ErrFetch (or merkle.ErrNotFound); the leaves
//     stored so far are kept for the next call.
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
	return f.advance(ctx, sc, source)
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
	start := b.Size()
	n, _, err := f.catchUp(ctx, b, cp)
	res.Bundles, res.Entries = n, b.Size()-start
	if err != nil {
		return res, err
	}
	if b.Root() == cp.Hash {
		return f.accept(ctx, sc, source, res)
	}
	ref := f.diagnose(ctx, old, accSource, sc, source)
	if err := f.rollback(ctx, acc.Size); err != nil {
		return res, errors.Join(ref, err)
	}
	return res, ref
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

// diagnose says why the log's entries do not give a larger checkpoint's
// root: the log's own tiles either do not show it consistent with the
// verified checkpoint (a split view), or do, and then its entries do not
// match its tiles.
func (f *Follower) diagnose(ctx context.Context, old merkle.SignedCheckpoint, oldSource string, sc merkle.SignedCheckpoint, source string) *Refusal {
	cp := sc.Checkpoint
	errEntries := fmt.Errorf("%w: the entries of leaves [%d, %d) on the verified tree of size %d do not give root %s",
		ErrEntries, old.Checkpoint.Size, cp.Size, old.Checkpoint.Size, b64(cp.Hash))
	lt := f.cfg.Source
	if old.Note != nil {
		proof, err := merkle.ConsistencyProof(ctx, lt, old.Checkpoint.Size, cp.Size)
		if err != nil {
			return f.refuse(KindEntries, old, oldSource, sc, source, nil, "", nil,
				fmt.Sprintf("the log's hash tiles could not be read to tell a split view from bad entries: %s", err), errEntries)
		}
		if err := merkle.CheckSignedConsistency(old, sc, proof); err != nil {
			return f.refuse(KindInconsistent, old, oldSource, sc, source, proof, ProofFromLog, rootAt(ctx, lt, old.Checkpoint.Size, sc.Checkpoint, proof), "", err)
		}
	}
	// The tiles are consistent: find the bundle whose entries differ.
	detail := ""
	mine, err := merkle.ReadLeafHashes(ctx, f.cfg.Store, old.Checkpoint.Size, cp.Size, cp.Size)
	if err == nil {
		var theirs []merkle.Hash
		theirs, err = merkle.ReadLeafHashes(ctx, lt, old.Checkpoint.Size, cp.Size, cp.Size)
		if err == nil {
			for i := range mine {
				if mine[i] != theirs[i] {
					idx := old.Checkpoint.Size + uint64(i)
					t, _ := merkle.TileAt(merkle.EntriesLevel, idx/merkle.TileWidth, cp.Size)
					lt0, _ := merkle.TileAt(0, idx/merkle.TileWidth, cp.Size)
					detail = fmt.Sprintf("entry %d of %s hashes to %x, but the log's %s has %x", idx, t, mine[i], lt0, theirs[i])
					break
				}
			}
		}
	}
	if err != nil {
		detail = fmt.Sprintf("the log's level-0 tiles could not be compared: %s", err)
	} else if detail == "" {
		detail = "the log's level-0 tiles match its entries, but not the checkpoint's root"
	}
	return f.refuse(KindEntries, old, oldSource, sc, source, nil, "", nil, detail, errEntries)
}

// catchUp fetches the entry bundles from the stored tree's size to cp's,
// appends them to b and stores them in batches of Chunk bundles. On an error
// the leaves appended so far are stored (or b is dropped). f.mu is held.
func (f *Follower) catchUp(ctx context.Context, b *merkle.Builder, cp merkle.Checkpoint) (bundles int, nbytes int64, err error) {
	start := b.Size()
	if start >= cp.Size {
		return 0, 0, nil
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
	window := uint64(2 * f.cfg.Concurrency)
	out := make(chan result, window)
	tokens := make(chan struct{}, window)
	jobs := make(chan uint64)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(jobs)
		for i := range total {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	})
	for range f.cfg.Concurrency {
		wg.Go(func() {
			for i := range jobs {
				t, _ := merkle.TileAt(merkle.EntriesLevel, first+i, cp.Size)
				entries, n, err := f.cfg.Source.Bundle(ctx, t)
				out <- result{i, entries, n, err}
			}
		})
	}
	defer func() {
		cancel()
		wg.Wait()
	}()

	pending := map[[2]int64]merkle.TileData{} // tiles to store, by level and index
	flush := func() error {
		tds := make([]merkle.TileData, 0, len(pending))
		for _, td := range pending {
			tds = append(tds, td)
		}
		if err := f.cfg.Store.writeTree(tds, b.State()); err != nil {
			f.b = nil
			return err
		}
		clear(pending)
		f.m.storedSize.Set(float64(b.Size()))
		return nil
	}
	report := func(done bool) {
		if f.cfg.Progress != nil {
			f.cfg.Progress(Progress{Start: start, Stored: b.Size(), Target: cp.Size, Bundles: bundles, Bytes: nbytes, Elapsed: time.Since(began), Done: done})
		}
	}
	got := map[uint64]result{}
	unflushed := 0
	for next := uint64(0); next < total; {
		var r result
		select {
		case r = <-out:
		case <-ctx.Done():
			return bundles, nbytes, errors.Join(ctx.Err(), flush())
		}
		got[r.i] = r
		for {
			r, ok := got[next]
			if !ok {
				break
			}
			delete(got, next)
			<-tokens
			if r.err != nil {
				f.m.fetchErrors.Inc()
				return bundles, nbytes, errors.Join(fmt.Errorf("follow: catching up from %d to %d: %w", start, cp.Size, r.err), flush())
			}
			entries := r.entries
			if skip := b.Size() - (first+next)*merkle.TileWidth; skip > 0 {
				entries = entries[skip:] // the stored partial bundle has these
			}
			tds, err := b.Append(entries)
			if err != nil {
				f.b = nil
				return bundles, nbytes, fmt.Errorf("follow: appending bundle %d: %w", first+next, err)
			}
			for _, td := range tds {
				pending[[2]int64{int64(td.Tile.Level), int64(td.Tile.Index)}] = td
			}
			bundles++
			nbytes += int64(r.n)
			f.m.bundles.Inc()
			f.m.bytes.Add(float64(r.n))
			f.m.entries.Add(float64(len(entries)))
			next++
			unflushed++
			if unflushed >= f.cfg.Chunk || next == total {
				if err := flush(); err != nil {
					return bundles, nbytes, err
				}
				unflushed = 0
				report(next == total)
			}
		}
	}
	return bundles, nbytes, nil
}
