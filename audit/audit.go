// Package audit verifies a zarlog log as a third party, as `zarlog audit`
// does (docs/WATCHERS.md): it keeps a verified copy of the log with package
// follow, finds every finished game among the leaves, fetches the game's
// proof bundle from the log (and takes the bundles announced on NATS),
// verifies it completely with package verifier (dice, inclusion, order, log
// signature, witnesses), checks that the bundle's checkpoint is consistent
// with its own verified view, and that the bundle's events are the game's
// events in its copy. Every signed checkpoint it sees — the log's
// /checkpoint over time, the bundles', those of extra sources such as
// mirrors and witnesses — is checked against the view; two that cannot both
// be true are a split view, kept as an evidence file (follow.Evidence).
//
// It reads the log's witnessing too (witnessing.go): the witness policy the
// log publishes and its latest witnessed checkpoint, which must be signed
// by the log, meet that policy (and the auditor's own, if given) and be
// consistent with the view; a witnessed checkpoint that stays behind a
// growing log for longer than WitnessGrace is a problem (its witnesses have
// stopped cosigning: one refusing the log's checkpoint as inconsistent, or
// down), and so is a game whose bundle is still not witnessed then.
//
// Everything wrong it finds is a Problem: kept in its state (so a restart
// still reports it), logged at error level, counted in the metrics, and it
// turns /healthz red.
//
// The data directory holds:
//
//	DIR/log/       the verified copy (package follow's Pebble store)
//	DIR/audit/     the auditor's own state: its cursor, a decision per game, the problems
//	DIR/evidence/  evidence files (unless Config.EvidenceDir)
package audit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/follow"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/verifier"
)

// Defaults of Config.
const (
	DefaultPoll         = 10 * time.Second
	DefaultBundleGrace  = 30 * time.Second
	DefaultWitnessGrace = 10 * time.Minute
	// maxBundle bounds a fetched proof bundle.
	maxBundle = 64 << 20
	// DefaultMaxDisk is the verified copy's default disk budget with a
	// data directory, 100 GiB: a log of about 290 million events at
	// zarlog's 370 bytes an event (docs/OPERATIONS.md §3).
	DefaultMaxDisk = 100 << 30
	// DefaultMaxMemory is the copy's default budget without a data
	// directory, where it is kept in memory: 1 GiB, a log of about 2.9
	// million events.
	DefaultMaxMemory = 1 << 30
)

// Config configures an Auditor. From, LogKey are required; every other
// field's zero value is documented.
type Config struct {
	// From is the log's tlog-tiles prefix; its games' bundles are at
	// From/games/<id>/proof.json.
	From string
	// LogKey is the log's checkpoint verifier key (vkey).
	LogKey string
	// Dir is the data directory (see the package doc). Empty: the state is
	// kept in memory and lost at exit.
	Dir string
	// FS is the file system of Dir. Nil means the operating system's.
	FS vfs.FS
	// WitnessPolicy, if not empty, is a C2SP tlog-policy: checkpoints are
	// accepted into the view only with its quorum, and every bundle's
	// log-witnesses check must pass.
	WitnessPolicy []byte
	// Also are extra sources of signed checkpoints (tlog-tiles or witness
	// monitoring prefixes: <URL>/checkpoint is fetched): mirrors,
	// witnesses. Each pass checks their checkpoints against the view.
	Also []string
	// EvidenceDir is where evidence files are written. Empty means
	// DIR/evidence, or "zarlog-evidence" without Dir.
	EvidenceDir string
	// BundleGrace is how long a finished game may go without its bundle
	// (404, or an error) before that is a problem; a pass with final set
	// decides at once. Zero means DefaultBundleGrace.
	BundleGrace time.Duration
	// WitnessGrace is how long, with a witness policy (the auditor's or
	// the log's published one), a finished game's bundle may stay not
	// witnessed, and the log's witnessed checkpoint stay behind a log that
	// grew, before that is a problem; a pass with final set decides a game
	// at once. Zero means DefaultWitnessGrace (10 minutes: ten rounds of a
	// log's default witnessing).
	WitnessGrace time.Duration
	// Client is the HTTP client. Nil means one with a 60 s timeout.
	Client *http.Client
	// Workers is how many bundles are verified at once. Zero means 4.
	Workers int
	// Concurrency and Chunk are the follower's (follow.Config).
	Concurrency, Chunk int
	// MaxSize is the largest tree the auditor accepts: a larger
	// checkpoint is a problem (ProblemLogFault) found before anything is
	// fetched. Zero means follow.DefaultMaxSize (2^38).
	MaxSize uint64
	// MaxDisk is the verified copy's budget in bytes (on disk in DIR/log,
	// or in memory without Dir): a catch-up stops before a step would
	// take it past it, and the pass fails saying so (follow.ErrBudget).
	// Zero means DefaultMaxDisk, or DefaultMaxMemory without Dir;
	// negative: no budget.
	MaxDisk int64
	// Progress, if not nil, receives the progress of each catch-up.
	Progress func(follow.Progress)
	// Found, if not nil, is called with each new problem.
	Found func(Problem)
	// Decided, if not nil, is called after a game's decision is stored,
	// with whether its bundle passed.
	Decided func(game string, ok bool)
	// Now is the clock of problems and grace periods. Nil means time.Now.
	Now func() time.Time
	// Logger receives the auditor's logs. Nil discards them.
	Logger *slog.Logger
	// Registerer receives the metrics (zarlog_audit_*, zarlog_follow_*).
	// Nil: they are not registered.
	Registerer prometheus.Registerer
}

// An Auditor audits one log. Create it with New; Close it. Its methods are
// safe for concurrent use.
type Auditor struct {
	cfg         Config
	log         *slog.Logger
	key         note.Verifier
	policy      *merkle.Policy
	f           *follow.Follower
	copy        *follow.Store
	st          *state
	src         *follow.Source
	also        []*follow.Source
	evidenceDir string
	m           *metrics

	mu        sync.Mutex
	missing   map[string]time.Time // game → when its bundle was first missing
	pendingW  map[string]time.Time // game → when its bundle was first seen not witnessed
	waiting   int                  // games of the last sweep whose bundles are not witnessed yet
	wit       witnessState
	inFlight  map[string]bool
	pending   []observed // checkpoints of extra sources to check once the view reaches them
	last      *Problem
	nprobs    int
	lastFault string // the limit, size and source of the last ProblemLogFault
	budget    error  // the copy is at its budget (follow.ErrBudget), until a checkpoint is accepted
}

// New opens the auditor's state (and copy) and returns the Auditor.
func New(ctx context.Context, cfg Config) (*Auditor, error) {
	if cfg.From == "" || cfg.LogKey == "" {
		return nil, errors.New("audit: From and LogKey are required")
	}
	key, err := merkle.NewVerifier(cfg.LogKey)
	if err != nil {
		return nil, fmt.Errorf("audit: log key: %w", err)
	}
	a := &Auditor{key: key, missing: map[string]time.Time{}, pendingW: map[string]time.Time{}, inFlight: map[string]bool{}, m: newMetrics()}
	if len(cfg.WitnessPolicy) > 0 {
		if a.policy, err = merkle.ParsePolicy(cfg.WitnessPolicy); err != nil {
			return nil, fmt.Errorf("audit: witness policy: %w", err)
		}
	}
	if cfg.BundleGrace <= 0 {
		cfg.BundleGrace = DefaultBundleGrace
	}
	if cfg.WitnessGrace <= 0 {
		cfg.WitnessGrace = DefaultWitnessGrace
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a.log = cfg.Logger
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.cfg = cfg
	fs, dir := cfg.FS, cfg.Dir
	switch {
	case dir == "":
		fs, dir = vfs.NewMem(), "mem"
	case fs == nil:
		fs = vfs.Default
	}
	a.evidenceDir = cfg.EvidenceDir
	if a.evidenceDir == "" {
		a.evidenceDir = "zarlog-evidence"
		if cfg.Dir != "" {
			a.evidenceDir = filepath.Join(cfg.Dir, "evidence")
		}
	}
	if cfg.Registerer != nil {
		if err := a.m.register(cfg.Registerer); err != nil {
			return nil, fmt.Errorf("audit: registering metrics: %w", err)
		}
	}
	if err := fs.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if a.copy, err = follow.OpenStore(follow.StoreConfig{Dir: fs.PathJoin(dir, "log"), FS: fs, LogKey: key, Logger: a.log}); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if a.st, err = openState(fs.PathJoin(dir, "audit"), fs, a.log); err != nil {
		a.copy.Close()
		return nil, err
	}
	fail := func(err error) (*Auditor, error) { return nil, errors.Join(err, a.Close()) }
	if a.src, err = follow.NewSource(follow.SourceConfig{URL: cfg.From, Client: cfg.Client}); err != nil {
		return fail(fmt.Errorf("audit: %w", err))
	}
	for _, u := range cfg.Also {
		s, err := follow.NewSource(follow.SourceConfig{URL: u, Client: cfg.Client, Attempts: 2})
		if err != nil {
			return fail(fmt.Errorf("audit: --also: %w", err))
		}
		a.also = append(a.also, s)
	}
	maxDisk := cfg.MaxDisk
	switch {
	case maxDisk == 0 && cfg.Dir == "":
		maxDisk = DefaultMaxMemory
	case maxDisk == 0:
		maxDisk = DefaultMaxDisk
	case maxDisk < 0:
		maxDisk = 0
	}
	if a.f, err = follow.New(ctx, follow.Config{Source: a.src, LogKey: key, Policy: a.policy, Store: a.copy, Concurrency: cfg.Concurrency,
		Chunk: cfg.Chunk, MaxSize: cfg.MaxSize, MaxBytes: maxDisk, Progress: cfg.Progress, Now: cfg.Now, Logger: a.log.With("component", "follow"), Registerer: cfg.Registerer}); err != nil {
		return fail(fmt.Errorf("audit: %w", err))
	}
	ps, err := a.st.problems()
	if err != nil {
		return fail(err)
	}
	a.nprobs = len(ps)
	if len(ps) > 0 {
		a.last = &ps[len(ps)-1]
		a.log.Error("audit: problems found before", "count", len(ps), "last", a.last.String())
	}
	a.m.problems.Set(float64(len(ps)))
	return a, nil
}

// Close closes the auditor's state and copy.
func (a *Auditor) Close() error {
	var errs []error
	if a.st != nil {
		errs = append(errs, a.st.close())
	}
	if a.copy != nil {
		errs = append(errs, a.copy.Close())
	}
	return errors.Join(errs...)
}

// Checkpoint returns the verified view: the accepted checkpoint.
func (a *Auditor) Checkpoint() merkle.Checkpoint {
	_, cp, _ := a.copy.Checkpoint()
	return cp
}

// Store returns the auditor's verified copy.
func (a *Auditor) Store() *follow.Store { return a.copy }

// EvidenceDir returns where evidence files are written.
func (a *Auditor) EvidenceDir() string { return a.evidenceDir }

// Problems returns every problem found, in the order found (those of
// earlier runs on the same data directory included).
func (a *Auditor) Problems() ([]Problem, error) { return a.st.problems() }

// Health returns nil if no problem was ever found and the copy is not
// stopped at its budget, else an error that says how many problems and the
// last one, and the budget.
func (a *Auditor) Health(context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var err error
	if a.nprobs > 0 {
		err = fmt.Errorf("%d problems found; the last: %s", a.nprobs, a.last)
	}
	return errors.Join(err, a.budget)
}

// found reports problems that were just stored.
func (a *Auditor) found(ps ...Problem) {
	for _, p := range ps {
		a.mu.Lock()
		a.nprobs++
		a.last = &p
		a.mu.Unlock()
		a.m.problems.Inc()
		a.m.found.WithLabelValues(p.Kind).Inc()
		a.log.Error("audit: PROBLEM", "kind", p.Kind, "game", p.Game, "check", p.Check, "detail", p.Detail, "evidence", p.Evidence, "source", p.Source)
		if a.cfg.Found != nil {
			a.cfg.Found(p)
		}
	}
}

// store records decisions and problems durably, then reports the problems.
func (a *Auditor) store(ds []decision, ps []Problem, cursor, unusable *uint64) error {
	if err := a.st.record(ds, ps, cursor, unusable); err != nil {
		return err
	}
	var all []Problem
	for _, d := range ds {
		if d.problem != nil {
			all = append(all, *d.problem)
		} else if d.ok {
			a.m.verified.Inc()
		}
	}
	a.found(append(all, ps...)...)
	if a.cfg.Decided != nil {
		for _, d := range ds {
			a.cfg.Decided(d.game, d.ok)
		}
	}
	return nil
}

// refused turns a follower's refusal into a problem with its evidence file,
// or nil if the same evidence was already kept.
func (a *Auditor) refused(ref *follow.Refusal, game string) *Problem {
	path, wrote, err := follow.WriteEvidence(a.evidenceDir, &ref.Evidence)
	if err != nil {
		a.log.Error("audit: writing the evidence", "err", err)
	}
	if !wrote && err == nil && game == "" {
		return nil
	}
	kind := ProblemEntries
	if ref.SplitView() {
		kind = ProblemSplitView
		a.m.splitViews.Inc()
		a.log.Error("audit: SPLIT VIEW: two signed checkpoints of the log cannot both be true", "evidence", path,
			"verified_size", observedSize(ref.Evidence.Verified), "conflicting_size", ref.Evidence.Conflicting.Size,
			"conflicting_source", ref.Evidence.Conflicting.Source)
	}
	return &Problem{Time: a.cfg.Now().UTC(), Kind: kind, Game: game, Check: "view-consistency", Detail: ref.Err.Error(),
		Source: ref.Evidence.Conflicting.Source, Evidence: path}
}

// logFault turns a limit the log went past by its own fault into a
// problem, or nil if the last such problem was the same limit and size.
func (a *Auditor) logFault(lim *follow.LimitError) *Problem {
	key := fmt.Sprintf("%s %d %s", lim.Limit, lim.Got, lim.Source)
	a.mu.Lock()
	same := a.lastFault == key
	a.lastFault = key
	a.mu.Unlock()
	if same {
		return nil
	}
	return &Problem{Time: a.cfg.Now().UTC(), Kind: ProblemLogFault, Check: lim.Limit, Detail: lim.Err.Error(), Source: lim.Source}
}

func observedSize(o *follow.Observation) uint64 {
	if o == nil {
		return 0
	}
	return o.Size
}

// checkpoint checks one signed checkpoint from a source against the view
// (and advances the view to it if it is larger). It returns a problem for
// a refusal, and the error of anything else that went wrong.
func (a *Auditor) checkpoint(ctx context.Context, signed []byte, source, kind string) (*Problem, error) {
	a.m.checkpoints.WithLabelValues(kind).Inc()
	_, err := a.f.Advance(ctx, signed, source)
	var ref *follow.Refusal
	if errors.As(err, &ref) {
		return a.refused(ref, ""), nil
	}
	return nil, err
}

// observe checks a checkpoint from an extra source. One larger than the
// view is first checked with a consistency proof from the source's own
// tiles (a mirror has them; a witness does not), then the view is advanced
// to it from the log; if the log cannot serve it yet, it is kept and
// checked again once the view reaches its size.
func (a *Auditor) observe(ctx context.Context, signed []byte, s *follow.Source) (*Problem, error) {
	source := s.URL("checkpoint")
	cp, err := a.f.Open(signed)
	if err != nil {
		return nil, err
	}
	if cp.Size > a.Checkpoint().Size {
		_, err := a.f.Check(ctx, signed, source, s)
		var ref *follow.Refusal
		if errors.As(err, &ref) {
			a.m.checkpoints.WithLabelValues("also").Inc()
			return a.refused(ref, ""), nil
		}
	}
	p, err := a.checkpoint(ctx, signed, source, "also")
	if err != nil && cp.Size > a.Checkpoint().Size && (errors.Is(err, merkle.ErrNotFound) || errors.Is(err, follow.ErrFetch)) {
		a.mu.Lock()
		if len(a.pending) < maxPending {
			a.pending = append(a.pending, observed{signed, source, cp.Size})
		}
		a.mu.Unlock()
		return nil, nil
	}
	return p, err
}

// maxPending bounds the checkpoints kept to check later.
const maxPending = 64

// An observed is a signed checkpoint from an extra source that was larger
// than the view and that the log could not serve yet.
type observed struct {
	signed []byte
	source string
	size   uint64
}

// recheck checks the kept checkpoints that the view has reached.
func (a *Auditor) recheck(ctx context.Context) []Problem {
	size := a.Checkpoint().Size
	a.mu.Lock()
	var now, later []observed
	for _, o := range a.pending {
		if o.size <= size {
			now = append(now, o)
		} else {
			later = append(later, o)
		}
	}
	a.pending = later
	a.mu.Unlock()
	var ps []Problem
	for _, o := range now {
		p, err := a.checkpoint(ctx, o.signed, o.source, "also")
		if err != nil {
			a.log.Warn("audit: checking a kept checkpoint", "source", o.source, "size", o.size, "err", err)
		}
		if p != nil {
			ps = append(ps, *p)
		}
	}
	return ps
}

// Pass runs one round: it updates the view from the log's checkpoint,
// checks the extra sources' checkpoints, reports the unusable leaves, and
// verifies the finished games not decided yet. It returns how many games
// remain undecided (a bundle missing or not fetched within the grace
// period). With final, none remains: a bundle still missing is a problem.
// An error means the round could not be completed (the log unreachable, a
// store that failed); the next round starts again where it stopped.
func (a *Auditor) Pass(ctx context.Context, final bool) (undecided int, err error) {
	res, err := a.f.Update(ctx)
	var ref *follow.Refusal
	var lim *follow.LimitError
	switch {
	case errors.As(err, &ref):
		if p := a.refused(ref, ""); p != nil {
			if err := a.store(nil, []Problem{*p}, nil, nil); err != nil {
				return 0, err
			}
		}
	case errors.As(err, &lim) && lim.LogFault():
		if p := a.logFault(lim); p != nil {
			if err := a.store(nil, []Problem{*p}, nil, nil); err != nil {
				return 0, err
			}
		}
	case errors.Is(err, follow.ErrBudget):
		a.mu.Lock()
		a.budget = err
		a.mu.Unlock()
		return 0, err
	case err != nil:
		return 0, err
	case res.Accepted:
		a.mu.Lock()
		a.budget = nil
		a.mu.Unlock()
		a.log.Info("audit: checkpoint verified", "size", res.Checkpoint.Size, "bundles", res.Bundles, "entries", res.Entries)
	}
	a.m.checkpoints.WithLabelValues("log").Inc()
	var ps []Problem
	for _, s := range a.also {
		n, err := s.Checkpoint(ctx)
		if err != nil {
			a.log.Warn("audit: reading an extra source's checkpoint", "source", s.URL("checkpoint"), "err", err)
			continue
		}
		p, err := a.observe(ctx, n, s)
		if err != nil {
			a.log.Warn("audit: checking an extra source's checkpoint", "source", s.URL("checkpoint"), "err", err)
		}
		if p != nil {
			ps = append(ps, *p)
		}
	}
	ps = append(ps, a.recheck(ctx)...)
	ps = append(ps, a.witnessing(ctx)...)
	if len(ps) > 0 {
		if err := a.store(nil, ps, nil, nil); err != nil {
			return 0, err
		}
	}
	if err := a.unusable(ctx); err != nil {
		return 0, err
	}
	return a.sweep(ctx, final)
}

// unusable reports the leaves the projection could not use, once each: a
// leaf the state machine refuses always, a leaf that is not an event only
// in a log that has events (a zarlog log holds nothing else).
func (a *Auditor) unusable(ctx context.Context) error {
	from, err := a.st.u64(keyUnusable)
	if err != nil {
		return err
	}
	stats := a.copy.Stats()
	if stats.Events == 0 || from >= stats.Leaves {
		return nil
	}
	us, err := a.copy.Unusable(ctx, from, follow.MaxUnusable)
	if err != nil {
		return err
	}
	var ps []Problem
	for _, u := range us {
		if u.Index >= stats.Leaves {
			break
		}
		what := "not a zarlog event: "
		if u.Kind == follow.Refused {
			what = "an event the state machine refuses: "
		}
		i := u.Index
		ps = append(ps, Problem{Time: a.cfg.Now().UTC(), Kind: ProblemLeaf, Index: &i, Detail: what + u.Reason})
	}
	next := stats.Leaves
	return a.store(nil, ps, nil, &next)
}

// sweep verifies the finished games from the cursor.
func (a *Auditor) sweep(ctx context.Context, final bool) (int, error) {
	cursor, err := a.st.u64(keyCursor)
	if err != nil {
		return 0, err
	}
	undecided, waiting := 0, 0
	contiguous := true
	defer func() {
		a.mu.Lock()
		a.waiting = waiting
		a.mu.Unlock()
	}()
	for pos := cursor; ; {
		games, err := a.copy.Finished(ctx, pos, 256)
		if err != nil {
			return undecided, err
		}
		if len(games) == 0 {
			break
		}
		pos = games[len(games)-1].Index + 1
		type result struct {
			skip bool // decided before
			d    *decision
			ps   []Problem
			err  error
		}
		results := make([]result, len(games))
		sem := make(chan struct{}, a.cfg.Workers)
		var wg sync.WaitGroup
		for i, g := range games {
			d, err := a.st.decided(g.Game)
			if err != nil {
				wg.Wait()
				return undecided, err
			}
			if d != 0 {
				results[i].skip = true
				continue
			}
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				d, ps, err := a.verifyGame(ctx, g.Game, nil, a.src.URL(bundlePath(g.Game)), final)
				results[i] = result{d: d, ps: ps, err: err}
			})
		}
		wg.Wait()
		var ds []decision
		var ps []Problem
		for i, g := range games {
			r := results[i]
			if errors.Is(r.err, errWaitingWitnesses) {
				waiting++
				contiguous = false
				continue
			}
			if r.err != nil {
				return undecided, r.err
			}
			ps = append(ps, r.ps...)
			switch {
			case r.skip:
			case r.d == nil:
				undecided++
				contiguous = false
			default:
				ds = append(ds, *r.d)
			}
			if contiguous {
				cursor = g.Index + 1
			}
		}
		c := cursor
		if err := a.store(ds, ps, &c, nil); err != nil {
			return undecided, err
		}
	}
	a.m.undecided.Set(float64(undecided))
	return undecided, nil
}

func bundlePath(game string) string { return "games/" + game + "/proof.json" }

// verifyGame verifies one game's bundle (fetched from the log when bundle is
// nil). It returns the decision, nil if the game cannot be decided yet, and
// other problems found on the way.
func (a *Auditor) verifyGame(ctx context.Context, game string, bundle []byte, source string, final bool) (*decision, []Problem, error) {
	a.mu.Lock()
	if a.inFlight[game] {
		a.mu.Unlock()
		return nil, nil, nil
	}
	a.inFlight[game] = true
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.inFlight, game)
		a.mu.Unlock()
	}()
	now := a.cfg.Now()
	problem := func(kind, check, detail string) *decision {
		return &decision{game: game, problem: &Problem{Time: now.UTC(), Kind: kind, Game: game, Check: check, Detail: detail, Source: source}}
	}
	if bundle == nil {
		b, err := a.src.Get(ctx, bundlePath(game), maxBundle)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			a.mu.Lock()
			since, ok := a.missing[game]
			if !ok {
				a.missing[game], since = now, now
			}
			a.mu.Unlock()
			if !final && now.Sub(since) < a.cfg.BundleGrace {
				return nil, nil, nil
			}
			return problem(ProblemMissingBundle, "fetch", fmt.Sprintf("the finished game's proof bundle could not be fetched: %s", err)), nil, nil
		}
		bundle = b
		a.mu.Lock()
		delete(a.missing, game)
		a.mu.Unlock()
	}
	start := time.Now()
	defer func() { a.m.verifySeconds.Observe(time.Since(start).Seconds()) }()
	ev, err := verifier.Parse(bundle)
	if err != nil {
		return problem(ProblemGame, verifier.CheckFormat, err.Error()), nil, nil
	}
	if ev.Log == nil || len(ev.Log.Entries) == 0 {
		return problem(ProblemGame, verifier.CheckFormat, "the file has no log member: it is not a proof bundle"), nil, nil
	}
	first, err := events.Parse(ev.Log.Entries[0].Leaf)
	if err == nil && first.Game != game {
		return problem(ProblemGame, "view-leaves", fmt.Sprintf("the bundle is of game %q", first.Game)), nil, nil
	}
	// The bundle's checkpoint against the view (which may catch up to it).
	var ps []Problem
	cp, cerr := a.checkpoint(ctx, ev.Log.Checkpoint, "bundle of game "+game+" from "+source, "bundle")
	switch {
	case cp != nil:
		cp.Game = game
		return &decision{game: game, problem: cp}, nil, nil
	case cerr != nil && !errors.Is(cerr, merkle.ErrSignature) && !errors.Is(cerr, merkle.ErrMalformed) && !errors.Is(cerr, follow.ErrQuorum):
		// The checkpoint could not be checked (the log's tiles could not
		// be fetched): the verifier's own checks still run below.
		if !final {
			return nil, nil, nil
		}
		return problem(ProblemGame, "view-consistency", fmt.Sprintf("the bundle's checkpoint could not be checked against the verified view: %s", cerr)), nil, nil
	}
	policy := a.witnessPolicy()
	rep := verifier.Verify(bundle, verifier.Options{LogKey: a.key, WitnessPolicy: policy, WitnessesPending: true})
	if failed := rep.Failed(); len(failed) > 0 {
		c, _ := rep.Check(failed[0])
		detail := c.Detail.String()
		if len(failed) > 1 {
			detail += fmt.Sprintf(" (failed checks: %v)", failed)
		}
		return problem(ProblemGame, failed[0], detail), ps, nil
	}
	// The bundle's events are the game's events in the verified copy.
	g, err := a.copy.Game(ctx, game)
	if err != nil {
		return problem(ProblemGame, "view-leaves", fmt.Sprintf("the verified copy has no game %q: %s", game, err)), nil, nil
	}
	idx := make([]uint64, len(ev.Log.Entries))
	for i, e := range ev.Log.Entries {
		idx[i] = e.Index
	}
	if !slices.Equal(idx, g.Leaves) {
		return problem(ProblemGame, "view-leaves", fmt.Sprintf("the bundle's entries are leaves %v, the verified copy's game has %v", idx, g.Leaves)), nil, nil
	}
	leaves, err := a.copy.LeavesAt(ctx, idx)
	if err != nil {
		return nil, nil, err
	}
	for i, l := range leaves {
		if !bytes.Equal(l, ev.Log.Entries[i].Leaf) {
			return problem(ProblemGame, "view-leaves", fmt.Sprintf("entry %d (leaf %d) differs from the verified copy's leaf", i, idx[i])), nil, nil
		}
	}
	// With a policy, a game is decided once its bundle is witnessed: the
	// log builds it again at a witnessed checkpoint a minute or two after
	// the game's end (docs/FORMATS.md §3).
	if c, _ := rep.Check(verifier.CheckLogWitnesses); policy != nil && c.Status == verifier.Skipped {
		a.mu.Lock()
		since, ok := a.pendingW[game]
		if !ok {
			a.pendingW[game], since = now, now
		}
		a.mu.Unlock()
		// Not a problem while the log's witnessing moves, even in a final
		// pass: a later pass or run decides it.
		if !a.witnessStale() && now.Sub(since) < a.cfg.WitnessGrace {
			return nil, nil, errWaitingWitnesses
		}
		return problem(ProblemGame, verifier.CheckLogWitnesses, fmt.Sprintf("the game's bundle is not witnessed (first seen so %s ago, and the log's witnessing has stopped or the grace is over): %s",
			now.Sub(since).Round(time.Second), c.Detail)), nil, nil
	}
	a.mu.Lock()
	delete(a.pendingW, game)
	a.mu.Unlock()
	return &decision{game: game, ok: true, checkpointSize: ev.Log.Tree.Size}, ps, nil
}
