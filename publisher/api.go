package publisher

// This file serves the log itself over HTTP as C2SP tlog-tiles
// (https://c2sp.org/tlog-tiles): the signed checkpoint, the hash tiles and
// the entry bundles, plus each logged event's C2SP tlog-proof, /metrics and
// /healthz (docs/HTTP.md). The handlers read through LogReader and
// GameSource only, so a mirror serves the same API from its own store.

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// A LogReader is the log the read API serves: its latest signed checkpoint
// and the tiles and entry bundles of its tree. The ledger is one (through a
// small adapter in package serve); a mirror implements it over its verified
// copy. It is a contract:
//
//   - ReadTiles (merkle.TileReader) is called with exactly one tile per
//     request. It returns that tile or entry bundle, or a wider version of it
//     (a store that keeps one growing tile per level and index returns what
//     it has): the API serves the prefix of the width asked for and answers
//     404 when what it gets is narrower. A tile or bundle the store does not
//     have is an error wrapping merkle.ErrNotFound (404); any other error is
//     a 500. The returned bytes are not modified.
//   - Checkpoint returns the latest signed checkpoint note verbatim (the log's
//     signature and any witness cosignatures), or an error wrapping
//     merkle.ErrNotFound if the log has none yet (404). Every tile and bundle
//     of a tree of that size must be readable through ReadTiles by the time
//     Checkpoint returns it: stores write tiles before the checkpoint over
//     them.
//   - A reader may hold tiles of a larger tree than the latest checkpoint's
//     (the ledger's durable tree runs ahead of its signer by up to one
//     checkpoint interval); the API serves them. Clients must not ask for a
//     partial tile without a checkpoint that needs it (C2SP tlog-tiles).
//   - Both methods are safe for concurrent use (the API calls them from HTTP
//     handlers), honour ctx, and never retry on the caller's behalf.
type LogReader interface {
	merkle.TileReader
	Checkpoint(ctx context.Context) ([]byte, error)
}

// Cache-Control values of the read API (docs/HTTP.md).
const (
	// CacheImmutable is sent with full tiles and full entry bundles, which
	// never change.
	CacheImmutable = "public, max-age=31536000, immutable"
	// CachePartial is sent with partial tiles and bundles: their bytes never
	// change either, but they are superseded and may be deleted once the
	// full tile exists (C2SP tlog-tiles), so caches keep them briefly.
	CachePartial = "public, max-age=60"
	// CacheCheckpoint is sent with /checkpoint, which changes with every
	// checkpoint the log signs.
	CacheCheckpoint = "public, max-age=2"
	// CacheBundle is sent with a game's proof bundle and its tlog-proof
	// files: with witnesses they change once, a minute or two after the
	// game's end, when the bundle is built again at a witnessed checkpoint
	// (and when the operator rebuilds the bundle store).
	CacheBundle = "public, max-age=60"
)

// Content types of the read API.
const (
	ContentTypeCheckpoint = "text/plain; charset=utf-8"
	ContentTypeTile       = "application/octet-stream"
	ContentTypeTlogProof  = "text/plain; charset=utf-8"
)

// APIConfig configures the read API. Log is required; every other field may
// be zero.
type APIConfig struct {
	// Log is the log served at /checkpoint and /tile/. Required.
	Log LogReader
	// Games gives the finished games' proof bundles, from which each event's
	// tlog-proof is served (/games/{id}/proofs/{seq}.tlog-proof). Nil: that
	// path is not registered.
	Games GameSource
	// Witness gives the log's witnessing, served at /checkpoint.witnessed
	// and /witness-policy (witnessed.go). Nil: those paths answer 404.
	Witness WitnessReader
	// EmitterKeys gives the emitters' verifier keys, served at
	// /emitter-keys. Nil (or a nil result): 404.
	EmitterKeys func() []string
	// Metrics is the registry /metrics serves. Nil: /metrics is not
	// registered.
	Metrics prometheus.Gatherer
	// Registerer receives the API's own metrics (requests by resource and
	// status). Nil: they are not registered.
	Registerer prometheus.Registerer
	// Health reports whether the service is healthy: /healthz answers 200
	// when it returns nil and 503 with its error otherwise. Nil: always 200.
	Health func(ctx context.Context) error
	// Ready reports whether the service is ready to take events: /readyz
	// answers 200 when it returns nil and 503 with its error otherwise.
	// Nil: /readyz answers as /healthz.
	Ready func(ctx context.Context) error
	// BundleCache is how many gzip-compressed full entry bundles are kept
	// in memory. Zero means 256 (a few MiB); negative means none.
	BundleCache int
	// Logger receives the errors of the sources. Nil discards them.
	Logger *slog.Logger
}

// An API serves a log's read API. Create it with NewAPI; it is safe for
// concurrent use.
type API struct {
	cfg      APIConfig
	log      *slog.Logger
	requests *prometheus.CounterVec
	gz       *gzipCache
}

// NewAPI returns the read API of cfg.Log. It fails if cfg.Log is nil or
// the metrics cannot be registered.
func NewAPI(cfg APIConfig) (*API, error) {
	if cfg.Log == nil {
		return nil, errors.New("publisher: api: APIConfig.Log is nil")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &API{cfg: cfg, log: log,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zarlog_http_log_requests_total",
			Help: "Requests of the log's read API by resource (checkpoint, tile, entries, tlog-proof) and HTTP status.",
		}, []string{"resource", "code"}),
	}
	if cfg.BundleCache >= 0 {
		n := cfg.BundleCache
		if n == 0 {
			n = 256
		}
		a.gz = newGzipCache(n)
	}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(a.requests); err != nil {
			return nil, fmt.Errorf("publisher: api: registering metrics: %w", err)
		}
	}
	return a, nil
}

// Register mounts the API on mux:
//
//	GET /checkpoint                           the latest signed checkpoint
//	GET /checkpoint.witnessed                 the latest witnessed checkpoint (with Witness)
//	GET /witness-policy                       the witness policy (with Witness)
//	GET /emitter-keys                         the emitters' verifier keys (with EmitterKeys)
//	GET /tile/{L}/{N}[.p/{W}]                 hash tiles (C2SP tlog-tiles)
//	GET /tile/entries/{N}[.p/{W}]             entry bundles (gzip when accepted)
//	GET /games/{id}/proofs/{seq}.tlog-proof   an event's C2SP tlog-proof (with Games)
//	GET /metrics                              Prometheus (with Metrics)
//	GET /healthz                              200 ok or 503 (liveness)
//	GET /readyz                               200 ok or 503 (ready to take events)
//
// It does not register the pages (Pages.Register) and does not add CORS
// headers (wrap the mux with CORS).
func (a *API) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /checkpoint", a.checkpoint)
	mux.HandleFunc("GET /tile/", a.tile)
	if a.cfg.Witness != nil {
		mux.HandleFunc("GET /"+WitnessedPath, a.witnessed)
		mux.HandleFunc("GET /"+WitnessPolicyPath, a.witnessPolicy)
	}
	if a.cfg.EmitterKeys != nil {
		mux.HandleFunc("GET /"+EmitterKeysPath, a.emitterKeys)
	}
	if a.cfg.Games != nil {
		mux.HandleFunc("GET /games/{id}/proofs/{file}", a.tlogProof)
	}
	if a.cfg.Metrics != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(a.cfg.Metrics, promhttp.HandlerOpts{}))
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { probe(w, r, a.cfg.Health) })
	ready := a.cfg.Ready
	if ready == nil {
		ready = a.cfg.Health
	}
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) { probe(w, r, ready) })
}

// CORS returns h with the header Access-Control-Allow-Origin: * on every
// response, so that browser auditors on any origin can read the log, and
// answers CORS preflight requests (OPTIONS) for GET and HEAD itself.
func CORS(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			hd.Set("Access-Control-Allow-Methods", "GET, HEAD")
			if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" {
				hd.Set("Access-Control-Allow-Headers", rh)
			}
			hd.Set("Access-Control-Max-Age", "86400")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (a *API) count(resource string, code int) {
	a.requests.WithLabelValues(resource, strconv.Itoa(code)).Inc()
}

func (a *API) fail(w http.ResponseWriter, resource string, code int, msg string) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	http.Error(w, msg, code)
	a.count(resource, code)
}

func (a *API) checkpoint(w http.ResponseWriter, r *http.Request) {
	note, err := a.cfg.Log.Checkpoint(r.Context())
	switch {
	case errors.Is(err, merkle.ErrNotFound):
		a.fail(w, "checkpoint", http.StatusNotFound, "the log has no checkpoint yet")
		return
	case err != nil:
		a.log.Error("api: reading the checkpoint", "err", err)
		a.fail(w, "checkpoint", http.StatusInternalServerError, "cannot read the checkpoint")
		return
	}
	h := w.Header()
	h.Set("Content-Type", ContentTypeCheckpoint)
	h.Set("Cache-Control", CacheCheckpoint)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(note)))
	w.Write(note)
	a.count("checkpoint", http.StatusOK)
}

func (a *API) tile(w http.ResponseWriter, r *http.Request) {
	resource := "tile"
	if strings.HasPrefix(r.URL.Path, "/tile/entries/") {
		resource = "entries"
	}
	// Only the canonical spelling of a path names a tile: an escaped byte
	// (/tile/0/%30%30%31) is not "001".
	if r.URL.RawPath != "" {
		a.fail(w, resource, http.StatusNotFound, "not a tile path")
		return
	}
	t, err := merkle.ParseTilePath(strings.TrimPrefix(r.URL.Path, "/"))
	if err != nil {
		a.fail(w, resource, http.StatusNotFound, "not a tile path")
		return
	}
	if t.IsEntries() && t.IsFull() && a.gz != nil && acceptsGzip(r.Header) {
		if z, ok := a.gz.get(t.Index); ok {
			a.writeTile(w, t, z, true)
			return
		}
	}
	data, err := a.read(r.Context(), t)
	switch {
	case errors.Is(err, merkle.ErrNotFound):
		a.fail(w, resource, http.StatusNotFound, "no such tile")
		return
	case err != nil:
		a.log.Error("api: reading a tile", "tile", t.Path(), "err", err)
		a.fail(w, resource, http.StatusInternalServerError, "cannot read the tile")
		return
	}
	if t.IsEntries() && acceptsGzip(r.Header) {
		z, err := gzipBytes(data)
		if err != nil {
			a.log.Error("api: compressing an entry bundle", "tile", t.Path(), "err", err)
			a.fail(w, resource, http.StatusInternalServerError, "cannot compress the entry bundle")
			return
		}
		if t.IsFull() && a.gz != nil {
			a.gz.put(t.Index, z)
		}
		a.writeTile(w, t, z, true)
		return
	}
	a.writeTile(w, t, data, false)
}

// read returns tile t at exactly its width, or an error wrapping
// merkle.ErrNotFound if the reader has it narrower or not at all.
func (a *API) read(ctx context.Context, t merkle.Tile) ([]byte, error) {
	ds, err := a.cfg.Log.ReadTiles(ctx, []merkle.Tile{t})
	if err != nil {
		return nil, err
	}
	if len(ds) != 1 {
		return nil, fmt.Errorf("the log reader returned %d tiles for 1", len(ds))
	}
	return TileAtWidth(t, ds[0])
}

// TileAtWidth returns the first t.Width hashes or entries of data, a stored
// version of tile t that may be wider: what a tlog-tiles server sends for
// t. It returns an error wrapping merkle.ErrNotFound if data holds fewer,
// and one wrapping merkle.ErrMalformed if data is not a tile or bundle.
func TileAtWidth(t merkle.Tile, data []byte) ([]byte, error) {
	if !t.IsEntries() {
		if len(data)%merkle.HashSize != 0 || len(data) > merkle.TileWidth*merkle.HashSize {
			return nil, fmt.Errorf("%s: stored tile of %d bytes: %w", t.Path(), len(data), merkle.ErrMalformed)
		}
		if w := len(data) / merkle.HashSize; w < t.Width {
			return nil, fmt.Errorf("%s: stored tile has width %d: %w", t.Path(), w, merkle.ErrNotFound)
		}
		return merkle.TilePrefix(data, t.Width)
	}
	// Count the stored bundle's entries up to t.Width, to tell a narrower
	// bundle from a broken one.
	n, off := 0, 0
	for n < t.Width && off < len(data) {
		if len(data)-off < 2 {
			return nil, fmt.Errorf("%s: stored bundle cut short at byte %d: %w", t.Path(), off, merkle.ErrMalformed)
		}
		off += 2 + (int(data[off])<<8 | int(data[off+1]))
		if off > len(data) {
			return nil, fmt.Errorf("%s: stored bundle cut short in entry %d: %w", t.Path(), n, merkle.ErrMalformed)
		}
		n++
	}
	if n < t.Width {
		return nil, fmt.Errorf("%s: stored bundle has %d entries: %w", t.Path(), n, merkle.ErrNotFound)
	}
	return data[:off], nil
}

func (a *API) writeTile(w http.ResponseWriter, t merkle.Tile, data []byte, gzipped bool) {
	h := w.Header()
	h.Set("Content-Type", ContentTypeTile)
	h.Set("X-Content-Type-Options", "nosniff")
	if t.IsFull() {
		h.Set("Cache-Control", CacheImmutable)
	} else {
		h.Set("Cache-Control", CachePartial)
	}
	resource := "tile"
	if t.IsEntries() {
		resource = "entries"
		h.Set("Vary", "Accept-Encoding")
		if gzipped {
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.Write(data)
	a.count(resource, http.StatusOK)
}

// acceptsGzip reports whether an Accept-Encoding header accepts gzip (named
// with a non-zero q-value, or through "*").
func acceptsGzip(h http.Header) bool {
	for _, v := range h.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			if coding != "gzip" && coding != "*" {
				continue
			}
			if q, ok := strings.CutPrefix(strings.ReplaceAll(strings.ToLower(params), " ", ""), "q="); ok {
				if f, err := strconv.ParseFloat(q, 64); err == nil && f == 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}

func gzipBytes(data []byte) ([]byte, error) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// A gzipCache keeps the compressed forms of the most recently compressed
// full entry bundles (which never change), first in first out.
type gzipCache struct {
	mu    sync.Mutex
	max   int
	m     map[uint64][]byte
	order []uint64
}

func newGzipCache(max int) *gzipCache { return &gzipCache{max: max, m: map[uint64][]byte{}} }

func (c *gzipCache) get(i uint64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[i]
	return b, ok
}

func (c *gzipCache) put(i uint64, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[i]; ok {
		return
	}
	if len(c.order) >= c.max {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[i] = b
	c.order = append(c.order, i)
}

func (a *API) tlogProof(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	seq, ok := parseProofFile(r.PathValue("file"))
	if !ok || !events.ValidGameID(id) {
		a.fail(w, "tlog-proof", http.StatusNotFound, "no such proof")
		return
	}
	g, err := a.cfg.Games.Game(r.Context(), id)
	switch {
	case errors.Is(err, ErrNoGame):
		a.fail(w, "tlog-proof", http.StatusNotFound, "no such game")
		return
	case err != nil:
		a.log.Error("api: reading a game", "game", id, "err", err)
		a.fail(w, "tlog-proof", http.StatusInternalServerError, "cannot read the game")
		return
	case g.Status != GameFinished:
		a.fail(w, "tlog-proof", http.StatusNotFound, "this game has no proof yet")
		return
	}
	proofs, err := TlogProofs(g.Bundle)
	if err != nil {
		a.log.Error("api: the game's bundle does not give tlog-proofs", "game", id, "err", err)
		a.fail(w, "tlog-proof", http.StatusInternalServerError, "cannot read the game's proof bundle")
		return
	}
	if seq >= uint64(len(proofs)) {
		a.fail(w, "tlog-proof", http.StatusNotFound, fmt.Sprintf("the game has %d events", len(proofs)))
		return
	}
	p := proofs[seq]
	h := w.Header()
	h.Set("Content-Type", ContentTypeTlogProof)
	h.Set("Cache-Control", CacheBundle)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(p)))
	w.Write(p)
	a.count("tlog-proof", http.StatusOK)
}

// parseProofFile reads "<seq>.tlog-proof", seq in decimal without leading
// zeros.
func parseProofFile(name string) (uint64, bool) {
	s, ok := strings.CutSuffix(name, ".tlog-proof")
	if !ok || s == "" || len(s) > 16 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// TlogProofPath returns the path of event seq's tlog-proof file of a game:
// "games/<id>/proofs/<seq>.tlog-proof", relative to the log's prefix.
func TlogProofPath(game string, seq int) string {
	return "games/" + game + "/proofs/" + strconv.Itoa(seq) + ".tlog-proof"
}

// probe answers a health probe: 200 "ok" when check returns nil (or is
// nil), 503 with the error otherwise.
func probe(w http.ResponseWriter, r *http.Request, check func(context.Context) error) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	if check != nil {
		if err := check(r.Context()); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "unhealthy: %s\n", err)
			return
		}
	}
	w.Write([]byte("ok\n"))
}
