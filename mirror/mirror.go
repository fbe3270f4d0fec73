// Package mirror runs a read-only mirror of a zarlog log (or of any C2SP
// tlog-tiles log, https://c2sp.org/tlog-tiles), as `zarlog mirror` does
// (docs/WATCHERS.md): it follows the origin with package follow, which
// verifies every checkpoint by rebuilding the tree from the entries, and
// serves from its own verified copy the same read API (tlog-tiles,
// tlog-proofs, /metrics, /healthz; package publisher's API) and the same
// game pages as the origin. The proof bundles it serves are its own, built
// with publisher.BuildBundle from its verified tiles at its verified
// checkpoint; leaves that are not zarlog events are mirrored but make no
// games.
//
// It re-serves what the origin's pages check a game against, so that its
// pages give the same verdict: the origin's witness policy
// (/witness-policy), its latest witnessed checkpoint (/checkpoint.witnessed,
// checked against the policy and the verified copy) and the emitters' keys
// (/emitter-keys), each read at every poll and kept; the bundles of the
// games a witnessed checkpoint covers are built again at it, as the
// origin's are (publisher.Bundler), so they are the origin's bytes.
//
// The data directory holds:
//
//	DIR/log/         the verified copy (package follow's Pebble store)
//	DIR/bundles/     the proof bundles built from it (publisher.Store; derived, may be deleted)
//	DIR/evidence/    the evidence of every checkpoint refused as a split view or bad entries
//	DIR/witnessed/   the origin's witness policy and latest witnessed checkpoint (witness.Witnessed)
//	DIR/emitter-keys the origin's emitter keys, as it serves them
package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/zarlog/zarlog/follow"
	"github.com/zarlog/zarlog/internal/httpserve"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/publisher"
)

// Defaults of Config.
const (
	DefaultHTTPAddr = "localhost:8081"
	DefaultPoll     = 5 * time.Second
	// ShutdownTimeout bounds how long the HTTP server waits for requests
	// in flight when the mirror stops.
	ShutdownTimeout = 10 * time.Second
	// DefaultMaxDisk is the verified copy's default disk budget, 100 GiB:
	// a log of about 290 million events at zarlog's 370 bytes an event
	// (docs/OPERATIONS.md §3). Raise it for a larger log.
	DefaultMaxDisk = 100 << 30
)

// Config is what `zarlog mirror` is asked to run. From, LogKey and Dir are
// required; every other field's zero value is documented.
type Config struct {
	// From is the origin's tlog-tiles prefix (the URL its /checkpoint and
	// /tile/ are under).
	From string
	// LogKey is the origin's checkpoint verifier key (vkey).
	LogKey string
	// Dir is the data directory (see the package doc); created with mode
	// 0700 if missing.
	Dir string
	// HTTPAddr is the listen address. Zero means DefaultHTTPAddr; port 0
	// picks a free port.
	HTTPAddr string
	// HTTPLimits bound the listener (timeouts, body and header bytes,
	// connections). Zero fields mean httpserve's defaults.
	HTTPLimits httpserve.Limits
	// WitnessPolicy, if not empty, is a C2SP tlog-policy: a checkpoint is
	// accepted only with its witness quorum.
	WitnessPolicy []byte
	// HiddenNames are the players' display names the pages do not show
	// (publisher.ParseHiddenNames, docs/PRIVACY.md); nil shows every name.
	HiddenNames *publisher.HiddenNames
	// Poll is how often the origin's checkpoint is fetched. Zero means
	// DefaultPoll.
	Poll time.Duration
	// Client is the HTTP client for the origin. Nil means one with a 60 s
	// timeout.
	Client *http.Client
	// Concurrency is how many entry bundles are fetched at once. Zero
	// means 8.
	Concurrency int
	// Chunk is how many entry bundles are stored per durable batch while
	// catching up. Zero means 16.
	Chunk int
	// MaxSize is the largest tree the mirror accepts: a larger checkpoint
	// is refused as the origin's fault before anything is fetched (/healthz
	// says so, zarlog_follow_log_fault is 1). Zero means
	// follow.DefaultMaxSize (2^38).
	MaxSize uint64
	// MaxDisk is the verified copy's disk budget in bytes (DIR/log): the
	// mirror stops fetching before a step would take it past it, says so in
	// /healthz, and keeps serving what it has verified. Zero means
	// DefaultMaxDisk; negative: no budget.
	MaxDisk int64
	// Progress, if not nil, receives the progress of each catch-up.
	Progress func(follow.Progress)
	// Logger receives every component's logs. Nil discards them.
	Logger *slog.Logger
	// Ready, if not nil, is called once the HTTP server listens, with what
	// the command prints, before the first catch-up.
	Ready func(Info)
	// Updated, if not nil, is called after each poll with its result (for
	// tests and progress displays).
	Updated func(follow.Result, error)
	// Bundled, if not nil, is called after each proof bundle the mirror
	// builds is stored.
	Bundled func(publisher.Announcement)
	// Witnessed, if not nil, is called after each poll of the origin's
	// witnessing (its policy, witnessed checkpoint and emitter keys) with
	// what went wrong, nil if nothing.
	Witnessed func(error)
}

// Info is what a running mirror tells its operator.
type Info struct {
	VerifierKey string // the followed log's vkey
	Origin      string
	From        string
	Dir         string
	HTTP        string // the base URL, without a trailing slash
}

// Lines returns the lines `zarlog mirror` prints on start, label first.
func (i Info) Lines() []string {
	return []string{
		"vkey " + i.VerifierKey,
		"origin " + i.Origin,
		"from " + i.From,
		"data " + i.Dir,
		"pages " + i.HTTP + "/",
		"checkpoint " + i.HTTP + "/checkpoint",
		"tiles " + i.HTTP + "/tile/",
		"entries " + i.HTTP + "/tile/entries/",
		"game " + i.HTTP + "/games/{id}",
		"player " + i.HTTP + "/players/{emitter}/{id}",
		"export " + i.HTTP + "/players/{emitter}/{id}/export",
		"proof " + i.HTTP + "/games/{id}/proof.json",
		"tlog-proof " + i.HTTP + "/games/{id}/proofs/{seq}.tlog-proof",
		"auditor " + i.HTTP + "/auditor.html",
		"stats " + i.HTTP + "/stats",
		"witnessed " + i.HTTP + "/" + publisher.WitnessedPath,
		"witness-policy " + i.HTTP + "/" + publisher.WitnessPolicyPath,
		"emitter-keys " + i.HTTP + "/" + publisher.EmitterKeysPath,
		"metrics " + i.HTTP + "/metrics",
		"healthz " + i.HTTP + "/healthz",
	}
}

// Run runs the mirror until ctx ends, then shuts it down and returns nil.
// It returns an error if a component cannot start or fails for good.
//
// Start order: the stores, the follower (finishing an interrupted
// projection), the bundler, the HTTP server, Ready; then the poll loop,
// whose first round catches up with the origin.
//
// Shutdown order: the poll loop stops (a catch-up in progress stores what
// it has fetched); the bundler stops (its round is durable or not
// written); the HTTP server drains (up to ShutdownTimeout); the bundle
// store and the copy close.
func Run(ctx context.Context, cfg Config) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.From == "" || cfg.LogKey == "" || cfg.Dir == "" {
		return errors.New("mirror: From, LogKey and Dir are required")
	}
	key, err := merkle.NewVerifier(cfg.LogKey)
	if err != nil {
		return fmt.Errorf("mirror: log key: %w", err)
	}
	var policy *merkle.Policy
	if len(cfg.WitnessPolicy) > 0 {
		if policy, err = merkle.ParsePolicy(cfg.WitnessPolicy); err != nil {
			return fmt.Errorf("mirror: witness policy: %w", err)
		}
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return fmt.Errorf("mirror: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	st, err := follow.OpenStore(follow.StoreConfig{Dir: filepath.Join(cfg.Dir, "log"), LogKey: key, Logger: log.With("component", "copy")})
	if err != nil {
		return fmt.Errorf("mirror: %w", err)
	}
	defer st.Close()
	bundles, err := publisher.OpenStore(publisher.StoreConfig{Dir: filepath.Join(cfg.Dir, "bundles"), Origin: key.Name(), Logger: log.With("component", "bundles")})
	if err != nil {
		return fmt.Errorf("mirror: %w", err)
	}
	defer bundles.Close()
	src, err := follow.NewSource(follow.SourceConfig{URL: cfg.From, Client: cfg.Client})
	if err != nil {
		return fmt.Errorf("mirror: %w", err)
	}
	maxDisk := cfg.MaxDisk
	switch {
	case maxDisk == 0:
		maxDisk = DefaultMaxDisk
	case maxDisk < 0:
		maxDisk = 0
	}
	f, err := follow.New(ctx, follow.Config{Source: src, LogKey: key, Policy: policy, Store: st, Concurrency: cfg.Concurrency, Chunk: cfg.Chunk,
		MaxSize: cfg.MaxSize, MaxBytes: maxDisk, Progress: cfg.Progress, Logger: log.With("component", "follow"), Registerer: reg})
	if err != nil {
		return fmt.Errorf("mirror: %w", err)
	}
	wit, err := newWitnessing(cfg.Dir, key, src, f, log.With("component", "witnessing"))
	if err != nil {
		return err
	}
	var announce func(context.Context, publisher.Announcement) error
	if cfg.Bundled != nil {
		announce = func(_ context.Context, a publisher.Announcement) error { cfg.Bundled(a); return nil }
	}
	bundler, err := publisher.NewBundler(publisher.BundlerConfig{Source: NewSource(st, nil), Store: bundles, Witnessed: wit.store, Announce: announce,
		Logger: log.With("component", "bundler"), Registerer: reg})
	if err != nil {
		return fmt.Errorf("mirror: %w", err)
	}
	h := &health{}
	refusals := prometheus.NewCounter(prometheus.CounterOpts{Name: "zarlog_mirror_evidence_files_total", Help: "Evidence files written for refused checkpoints."})
	reg.MustRegister(refusals)
	mux, err := Handler(st, bundles, wit, cfg.LogKey, cfg.HiddenNames, log, reg, h.check, h.ready)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", orDefault(cfg.HTTPAddr, DefaultHTTPAddr))
	if err != nil {
		return fmt.Errorf("mirror: %w", err)
	}
	ln = httpserve.Listen(ln, cfg.HTTPLimits.MaxConns)
	hs := httpserve.Server(mux, cfg.HTTPLimits, slog.NewLogLogger(log.With("component", "http").Handler(), slog.LevelWarn))
	httpErr := make(chan error, 1)
	go func() {
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			httpErr <- err
		}
		close(httpErr)
	}()
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	bundlerErr := make(chan error, 1)
	wg.Go(func() { bundlerErr <- bundler.Run(runCtx) })

	info := Info{VerifierKey: cfg.LogKey, Origin: key.Name(), From: cfg.From, Dir: cfg.Dir, HTTP: baseURL(ln.Addr())}
	if cfg.Ready != nil {
		cfg.Ready(info)
	}
	_, cp, _ := st.Checkpoint()
	log.Info("mirroring", "origin", key.Name(), "from", cfg.From, "http", info.HTTP, "verified_size", cp.Size)

	poll := cfg.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	wg.Go(func() {
		for {
			res, err := f.Update(runCtx)
			if runCtx.Err() != nil {
				return
			}
			var ref *follow.Refusal
			var lim *follow.LimitError
			switch {
			case errors.As(err, &lim):
				h.setLimit(limitHealth(lim, res.Checkpoint.Size))
			case err == nil && (res.Accepted || res.Same):
				h.setLimit(nil)
			}
			switch {
			case errors.As(err, &ref):
				path, wrote, werr := follow.WriteEvidence(filepath.Join(cfg.Dir, "evidence"), &ref.Evidence)
				h.set(fmt.Errorf("refused a checkpoint of size %d (%s): evidence %s", ref.Evidence.Conflicting.Size, ref.Evidence.Kind, path))
				if werr != nil {
					log.Error("mirror: writing the evidence", "err", werr)
				} else if wrote {
					refusals.Inc()
					log.Error("mirror: evidence kept", "file", path)
				}
			case lim != nil:
				// The follower logged it (an error if the origin is at fault).
			case err != nil:
				log.Warn("mirror: following the origin", "err", err, "verified_size", res.Checkpoint.Size)
			case res.Accepted:
				log.Info("mirror: checkpoint verified", "size", res.Checkpoint.Size, "bundles", res.Bundles, "entries", res.Entries)
			}
			if cfg.Updated != nil {
				cfg.Updated(res, err)
			}
			werr := wit.poll(runCtx)
			var wref *follow.Refusal
			if errors.As(werr, &wref) {
				path, wrote, err := follow.WriteEvidence(filepath.Join(cfg.Dir, "evidence"), &wref.Evidence)
				h.set(fmt.Errorf("refused the origin's witnessed checkpoint of size %d (%s): evidence %s", wref.Evidence.Conflicting.Size, wref.Evidence.Kind, path))
				if err != nil {
					log.Error("mirror: writing the evidence", "err", err)
				} else if wrote {
					refusals.Inc()
					log.Error("mirror: evidence kept", "file", path)
				}
			} else if werr != nil && runCtx.Err() == nil {
				log.Warn("mirror: following the origin's witnessing", "err", werr)
			}
			if cfg.Witnessed != nil {
				cfg.Witnessed(werr)
			}
			t := time.NewTimer(poll)
			select {
			case <-runCtx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	})

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("mirror: shutting down")
	case err := <-httpErr:
		runErr = fmt.Errorf("mirror: http: %w", err)
	case err := <-bundlerErr:
		runErr = fmt.Errorf("mirror: the bundler stopped: %w", err)
	}
	stop()
	wg.Wait()
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	cancel()
	return runErr
}

// Handler returns the mirror's HTTP handler: the read API and the pages of
// the verified copy st and the bundle store, with CORS, and the origin's
// witnessing and emitter keys as wit keeps them (nil: none). vkey is the
// log's verifier key (shown on the pages); hidden are the players' names
// the pages do not show; reg is served at /metrics and gets the API's
// metrics; health is /healthz and ready /readyz (nil: as /healthz).
func Handler(st *follow.Store, bundles *publisher.Store, wit *Witnessing, vkey string, hidden *publisher.HiddenNames, log *slog.Logger, reg *prometheus.Registry, health, ready func(context.Context) error) (http.Handler, error) {
	src := NewSource(st, bundles)
	pcfg := publisher.Config{Games: src, Stats: src, LogKey: vkey, HiddenNames: hidden, Origin: st.Origin(), Logger: log.With("component", "pages")}
	acfg := publisher.APIConfig{Log: src, Games: src, Metrics: reg, Registerer: reg, Health: health, Ready: ready, Logger: log.With("component", "api")}
	if wit != nil {
		pcfg.Witness, pcfg.EmitterKeysFunc = wit, wit.EmitterKeys
		acfg.Witness, acfg.EmitterKeys = wit, wit.EmitterKeys
	}
	if bundles != nil {
		pcfg.Index = bundles
	}
	pages, err := publisher.NewPages(pcfg)
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	api, err := publisher.NewAPI(acfg)
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	mux := http.NewServeMux()
	api.Register(mux)
	pages.Register(mux)
	return publisher.CORS(mux), nil
}

// health is the mirror's /healthz: red once it refused a checkpoint, until
// it restarts (the evidence file stays); red while the origin's latest
// checkpoint is past a limit (the origin's fault, or the copy's disk
// budget), until a checkpoint is accepted. Its /readyz (ready) is red only
// for a refused checkpoint: past a limit the mirror still serves its
// verified copy, and a load balancer keeps it.
type health struct {
	mu    sync.Mutex
	err   error
	limit error
}

func (h *health) set(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.err = err
}

func (h *health) setLimit(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.limit = err
}

func (h *health) check(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return errors.Join(h.err, h.limit)
}

func (h *health) ready(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// limitHealth is what /healthz says of a limit the origin went past.
func limitHealth(lim *follow.LimitError, verified uint64) error {
	if lim.LogFault() {
		return fmt.Errorf("the origin log is at fault (%s): %w; serving the verified copy of size %d", lim.Limit, lim.Err, verified)
	}
	return fmt.Errorf("the copy is at its disk budget (%s): %w; serving the verified copy of size %d", lim.Limit, lim.Err, verified)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// baseURL returns the http URL of a listener's address; an unspecified host
// becomes localhost.
func baseURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
