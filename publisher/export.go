package publisher

// This file writes the read API as a tree of static files (docs/HTTP.md
// "Export"): the checkpoint, every tile and entry bundle, the finished
// games' proof bundles and tlog-proofs, and the pages, laid out exactly as
// the URL paths, so that any static file server or CDN can serve the log.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zarlog/zarlog/merkle"
)

// ExportStateFile is the file in an export directory where the Exporter
// keeps its progress through the bundle store. It starts with a dot so that
// static servers that hide dot files do not serve it (nothing in it is
// secret).
const ExportStateFile = ".zarlog-export.json"

// ExportConfig configures an Exporter. Log is required, and Dir or
// Target.
type ExportConfig struct {
	// Dir is the directory written; it is created if missing.
	Dir string
	// Target, if not nil, is written instead of Dir (an object store:
	// `zarlog serve --storage`). Its progress is kept in StateFile.
	Target ExportTarget
	// StateFile is the local file where the Exporter keeps its progress
	// through the bundle store (default Dir/.zarlog-export.json; required
	// with Target).
	StateFile string
	// NoLog: the checkpoint, tiles and entry bundles are not written, only
	// what the pages and the proofs need (package storage writes the log
	// itself to the bucket, under its lock). Sync still reads the
	// checkpoint, and reports its size.
	NoLog bool
	// Log is the log exported: its checkpoint and tiles.
	Log LogReader
	// Bundles, if not nil, is the bundle store whose games are exported:
	// games/<id>/proof.json and games/<id>/proofs/<seq>.tlog-proof. A game
	// whose bundle the Bundler replaced by one at a witnessed checkpoint is
	// written again.
	Bundles *Store
	// Witness, if not nil, is the log's witnessing: checkpoint.witnessed
	// and witness-policy are written as the read API serves them.
	Witness WitnessReader
	// EmitterKeys, if not nil, are written to emitter-keys, one per line,
	// as the read API serves them.
	EmitterKeys []string
	// Pages, if not nil, is the handler whose pages are exported
	// (rendered with GET, in English): /auditor.html, /static/…, /stats as
	// stats/index.html, and with Bundles each game's page as
	// games/<id>/index.html and its games/<id>/check.py. Pass the mux the
	// pages are registered on.
	Pages http.Handler
	// Logger receives progress logs. Nil discards them.
	Logger *slog.Logger
}

// An ExportTarget is where an Exporter writes files, by slash-separated
// names relative to the export's root (as the URL paths).
type ExportTarget interface {
	// Read returns a file's bytes, or an error wrapping fs.ErrNotExist.
	Read(ctx context.Context, name string) ([]byte, error)
	// Write writes a file whole: a reader sees the old bytes or the new.
	Write(ctx context.Context, name string, data []byte) error
	// RemoveAll removes name and everything under name/.
	RemoveAll(ctx context.Context, name string) error
}

// A dirTarget is a directory (ExportConfig.Dir).
type dirTarget string

func (d dirTarget) path(name string) string {
	return filepath.Join(string(d), filepath.FromSlash(name))
}

func (d dirTarget) Read(_ context.Context, name string) ([]byte, error) {
	return os.ReadFile(d.path(name))
}

func (d dirTarget) Write(_ context.Context, name string, data []byte) error {
	return writeFile(d.path(name), data)
}

func (d dirTarget) RemoveAll(_ context.Context, name string) error { return os.RemoveAll(d.path(name)) }

// An Exporter keeps a directory in step with a log. Sync may be called
// again and again (after each new checkpoint, say): it writes only what
// changed. Not safe for concurrent use.
type Exporter struct {
	cfg         ExportConfig
	log         *slog.Logger
	staticDone  bool
	stateLoaded bool
	state       exportState
	target      ExportTarget
	// written holds the hash of what writeIfChanged last wrote under each
	// name, so that an unchanged page costs no read of a Target.
	written map[string][32]byte
}

type exportState struct {
	// BundlesFrom is where the next Sync continues listing the bundle
	// store (Store.List).
	BundlesFrom uint64 `json:"bundles_from"`
	// WitnessedFrom is where the next Sync continues writing the games
	// whose bundles were replaced at a witnessed checkpoint: every game
	// below it was written with its witnessed bundle.
	WitnessedFrom uint64 `json:"witnessed_from"`
}

// An ExportResult says what one Sync wrote.
type ExportResult struct {
	OldSize, Size uint64 // the exported tree size before and after
	Tiles         int    // tiles and entry bundles written
	Games         int    // finished games written
}

// NewExporter returns an Exporter for cfg.
func NewExporter(cfg ExportConfig) (*Exporter, error) {
	if (cfg.Dir == "") == (cfg.Target == nil) || cfg.Log == nil {
		return nil, errors.New("publisher: export: Log and one of Dir and Target are required")
	}
	target := cfg.Target
	if target == nil {
		target = dirTarget(cfg.Dir)
		if cfg.StateFile == "" {
			cfg.StateFile = filepath.Join(cfg.Dir, ExportStateFile)
		}
	}
	if cfg.StateFile == "" {
		return nil, errors.New("publisher: export: a Target needs a StateFile")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Exporter{cfg: cfg, log: log, target: target, written: map[string][32]byte{}}, nil
}

// Sync brings the directory up to the log's latest checkpoint: it writes
// every tile and entry bundle the exported tree lacks (partial ones at the
// new checkpoint's width; a full tile replaces its partial versions), the
// games stored since the last Sync, and the pages, then the checkpoint
// last, so that a client never sees a checkpoint whose tiles are missing.
// Files are written whole (a temporary file renamed into place). After a
// machine crash delete Dir/checkpoint: the next Sync writes everything
// again.
func (e *Exporter) Sync(ctx context.Context) (ExportResult, error) {
	var res ExportResult
	note, err := e.cfg.Log.Checkpoint(ctx)
	if err != nil {
		return res, fmt.Errorf("export: reading the checkpoint: %w", err)
	}
	cp, err := merkle.ParseSignedCheckpoint(note)
	if err != nil {
		return res, fmt.Errorf("export: the log's checkpoint: %w", err)
	}
	if e.cfg.Dir != "" {
		if err := os.MkdirAll(e.cfg.Dir, 0o755); err != nil {
			return res, fmt.Errorf("export: %w", err)
		}
	}
	if !e.stateLoaded {
		if err := e.loadState(); err != nil {
			return res, err
		}
	}
	var old []byte
	if !e.cfg.NoLog {
		old, err = e.target.Read(ctx, "checkpoint")
	}
	switch {
	case e.cfg.NoLog:
		res.OldSize = cp.Size
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return res, fmt.Errorf("export: %w", err)
	default:
		ocp, err := merkle.ParseSignedCheckpoint(old)
		if err != nil {
			return res, fmt.Errorf("export: the exported checkpoint in %s: %w", e.where(), err)
		}
		if ocp.Origin != cp.Origin {
			return res, fmt.Errorf("export: %s holds the log %q, not %q", e.where(), ocp.Origin, cp.Origin)
		}
		if ocp.Size > cp.Size {
			return res, fmt.Errorf("export: %s holds a tree of %d leaves, the log's checkpoint has %d", e.where(), ocp.Size, cp.Size)
		}
		res.OldSize = ocp.Size
	}
	res.Size = cp.Size
	n, err := e.writeTiles(ctx, res.OldSize, cp.Size)
	res.Tiles = n
	if err != nil {
		return res, err
	}
	if e.cfg.Bundles != nil {
		if res.Games, err = e.writeGames(ctx); err != nil {
			return res, err
		}
	}
	if e.cfg.Pages != nil {
		if err := e.writePages(ctx); err != nil {
			return res, err
		}
	}
	if e.cfg.EmitterKeys != nil {
		var b []byte
		for _, k := range e.cfg.EmitterKeys {
			b = append(append(b, k...), '\n')
		}
		if err := e.writeIfChanged(ctx, EmitterKeysPath, b); err != nil {
			return res, fmt.Errorf("export: %w", err)
		}
	}
	if e.cfg.Witness != nil {
		for _, f := range []struct {
			name string
			data []byte
		}{{WitnessPolicyPath, e.cfg.Witness.Policy()}, {WitnessedPath, e.cfg.Witness.Witnessed()}} {
			if f.data == nil {
				continue
			}
			if err := e.writeIfChanged(ctx, f.name, f.data); err != nil {
				return res, fmt.Errorf("export: %w", err)
			}
		}
	}
	if !e.cfg.NoLog && !bytes.Equal(old, note) {
		if err := e.target.Write(ctx, "checkpoint", note); err != nil {
			return res, fmt.Errorf("export: %w", err)
		}
	}
	if err := e.saveState(); err != nil {
		return res, err
	}
	e.log.Debug("export: synced", "to", e.where(), "size", res.Size, "tiles", res.Tiles, "games", res.Games)
	return res, nil
}

// writeTiles writes the tiles a tree of newSize has and one of oldSize
// does not.
func (e *Exporter) writeTiles(ctx context.Context, oldSize, newSize uint64) (int, error) {
	tiles := merkle.NewTiles(oldSize, newSize)
	const chunk = 64
	for i := 0; i < len(tiles); i += chunk {
		part := tiles[i:min(i+chunk, len(tiles))]
		data, err := e.cfg.Log.ReadTiles(ctx, part)
		if err != nil {
			return i, fmt.Errorf("export: reading tiles: %w", err)
		}
		if len(data) != len(part) {
			return i, fmt.Errorf("export: the log reader returned %d tiles for %d", len(data), len(part))
		}
		for j, t := range part {
			d, err := TileAtWidth(t, data[j])
			if err != nil {
				return i + j, fmt.Errorf("export: %w", err)
			}
			if err := e.target.Write(ctx, t.Path(), d); err != nil {
				return i + j, fmt.Errorf("export: %w", err)
			}
			if t.IsFull() {
				// The partial versions are superseded: C2SP tlog-tiles lets
				// a log delete them once the full tile exists.
				if err := e.target.RemoveAll(ctx, t.Path()+".p"); err != nil {
					return i + j, fmt.Errorf("export: %w", err)
				}
			}
		}
	}
	return len(tiles), nil
}

// writeGames writes the games stored since the last Sync, and again those
// written before whose bundles were replaced at a witnessed checkpoint.
func (e *Exporter) writeGames(ctx context.Context) (int, error) {
	n := 0
	wcur, err := e.cfg.Bundles.WitnessedCursor()
	if err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	for e.state.WitnessedFrom < min(wcur, e.state.BundlesFrom) {
		refs, err := e.cfg.Bundles.List(ctx, e.state.WitnessedFrom, 256)
		if err != nil {
			return n, fmt.Errorf("export: listing bundles: %w", err)
		}
		done := true
		for _, r := range refs {
			if r.Index >= min(wcur, e.state.BundlesFrom) {
				break
			}
			if err := e.writeGame(ctx, r.Game); err != nil {
				return n, err
			}
			n++
			e.state.WitnessedFrom = r.Index + 1
			done = false
		}
		if done {
			break
		}
	}
	if e.state.WitnessedFrom < wcur {
		// The rest are new games: written below with their bundles as
		// they are now.
		e.state.WitnessedFrom = wcur
	}
	for {
		refs, err := e.cfg.Bundles.List(ctx, e.state.BundlesFrom, 256)
		if err != nil {
			return n, fmt.Errorf("export: listing bundles: %w", err)
		}
		if len(refs) == 0 {
			return n, nil
		}
		for _, r := range refs {
			if err := e.writeGame(ctx, r.Game); err != nil {
				return n, err
			}
			n++
			e.state.BundlesFrom = r.Index + 1
		}
	}
}

func (e *Exporter) writeGame(ctx context.Context, game string) error {
	bundle, err := e.cfg.Bundles.Bundle(ctx, game)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	dir := "games/" + game + "/"
	if err := e.target.Write(ctx, dir+"proof.json", bundle); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	proofs, err := TlogProofs(bundle)
	if err != nil {
		return fmt.Errorf("export: game %q: %w", game, err)
	}
	for i, p := range proofs {
		if err := e.target.Write(ctx, TlogProofPath(game, i), p); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	if e.cfg.Pages != nil {
		for _, x := range [][2]string{{"/games/" + game, "index.html"}, {"/games/" + game + "/check.py", "check.py"}} {
			b, err := e.render(ctx, x[0])
			if err != nil {
				return err
			}
			if err := e.target.Write(ctx, dir+x[1], b); err != nil {
				return fmt.Errorf("export: %w", err)
			}
		}
	}
	return nil
}

// writePages writes the pages that are not a game's: the auditor and the
// static files once per Exporter, the landing page and /stats whenever
// they changed. (The search and the player pages need a server: a static
// export has none.)
func (e *Exporter) writePages(ctx context.Context) error {
	files := map[string]string{"/stats": "stats/index.html", "/": "index.html"}
	if !e.staticDone {
		files["/auditor.html"] = "auditor.html"
		for name := range staticTypes {
			files["/static/"+name] = "static/" + name
		}
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		b, err := e.render(ctx, p)
		if err != nil {
			return err
		}
		if err := e.writeIfChanged(ctx, files[p], b); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	e.staticDone = true
	return nil
}

// render GETs path from the pages handler and returns the body of a 200.
func (e *Exporter) render(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, fmt.Errorf("export: %s: %w", path, err)
	}
	var rec recorder
	rec.h = http.Header{}
	e.cfg.Pages.ServeHTTP(&rec, req)
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	if rec.code != http.StatusOK {
		return nil, fmt.Errorf("export: GET %s: status %d: %s", path, rec.code, bytes.TrimSpace(rec.body.Bytes()))
	}
	return rec.body.Bytes(), nil
}

// A recorder is the http.ResponseWriter of render.
type recorder struct {
	h    http.Header
	code int
	body bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.h }
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.body.Write(b)
}

func (e *Exporter) loadState() error {
	b, err := os.ReadFile(e.cfg.StateFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("export: %w", err)
	default:
		var s exportState
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("export: %s: %w", ExportStateFile, err)
		}
		e.state = s
	}
	e.stateLoaded = true
	return nil
}

func (e *Exporter) saveState() error {
	b, err := json.Marshal(e.state)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if old, err := os.ReadFile(e.cfg.StateFile); err == nil && bytes.Equal(old, b) {
		return nil
	}
	if err := writeFile(e.cfg.StateFile, b); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// writeFile writes data to path whole: a temporary file in the same
// directory, renamed into place. Directories are created as needed.
func writeFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// writeIfChanged writes data to the file name unless it already holds it.
func (e *Exporter) writeIfChanged(ctx context.Context, name string, data []byte) error {
	h := sha256.Sum256(data)
	if e.cfg.Target != nil && e.written[name] == h {
		return nil // a directory is read every time: someone may have changed it
	}
	if old, err := e.target.Read(ctx, name); err != nil || !bytes.Equal(old, data) {
		if err := e.target.Write(ctx, name, data); err != nil {
			return err
		}
	}
	e.written[name] = h
	return nil
}

// where names what the Exporter writes, for errors and logs.
func (e *Exporter) where() string {
	if e.cfg.Dir != "" {
		return e.cfg.Dir
	}
	return fmt.Sprint(e.cfg.Target)
}

// ExportContentType returns the Content-Type the read API serves the
// exported file name with: what an ExportTarget that stores types (an
// object store) gives it.
func ExportContentType(name string) string {
	if f, ok := strings.CutPrefix(name, "static/"); ok {
		if ct, ok := staticTypes[f]; ok {
			return ct
		}
	}
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".json":
		return "application/json"
	case ".py":
		return "text/x-python; charset=utf-8"
	case ".tlog-proof":
		return ContentTypeTlogProof
	}
	return "text/plain; charset=utf-8" // checkpoint.witnessed, witness-policy, emitter-keys
}
