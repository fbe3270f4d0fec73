// Package witness implements a transparency log witness: the C2SP
// tlog-witness add-checkpoint protocol (https://c2sp.org/tlog-witness) with
// timestamped Ed25519 cosignatures (C2SP tlog-cosignature/v1,
// https://c2sp.org/tlog-cosignature), on both sides.
//
// The server side is a Witness: it is configured with the logs it witnesses
// (their origins and checkpoint keys, read from C2SP tlog-policy "log" lines
// by ParseLogs), verifies each submitted checkpoint's signature and its
// consistency with the latest checkpoint it cosigned for that log, stores the
// new checkpoint durably, and only then returns its cosignature. It never
// cosigns a checkpoint smaller than, or inconsistent with, one it cosigned
// before; a checkpoint of the same size with another root hash is a fork, and
// the witness keeps both signed checkpoints as evidence (see Evidence).
// Handler serves add-checkpoint, the monitoring checkpoint URL and /healthz.
//
// The client side is what a log uses: Client.AddCheckpoint makes one
// add-checkpoint request and returns the verified cosignature or a typed
// error (a *ConflictError carries the witness's size), and Group asks all the
// witnesses of a C2SP tlog-policy for their cosignatures, follows their 409
// answers, and merges the cosignatures into the log's signed checkpoint.
//
// ServeConfig and Serve run a witness as the "zarlog witness" command does.
package witness

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/merkle"
)

// Errors of add-checkpoint, on both sides. The Witness returns errors wrapping
// them, and Handler answers with the HTTP status the specification gives each;
// the Client returns a *StatusError that wraps the one matching the status it
// received. Callers branch with errors.Is.
var (
	// ErrMalformed: the request does not parse, its checkpoint note is
	// malformed, or the old size is larger than the checkpoint's (400 Bad
	// Request).
	ErrMalformed = errors.New("malformed add-checkpoint request")
	// ErrUnknownLog: the witness is not configured for the checkpoint's origin
	// (404 Not Found).
	ErrUnknownLog = errors.New("unknown log")
	// ErrForbidden: the checkpoint has no valid signature by a key the witness
	// trusts for its origin, or one by such a key that does not verify (403
	// Forbidden).
	ErrForbidden = errors.New("checkpoint is not signed by the log")
	// ErrConflict: the old size is not the size of the latest checkpoint the
	// witness cosigned for the log (409 Conflict). The error is a
	// *ConflictError, which carries that size.
	ErrConflict = errors.New("old size is not the witness's latest cosigned size")
	// ErrInconsistent: the consistency proof does not verify, a proof is given
	// where none is allowed, or a checkpoint of size zero does not have the
	// empty tree's root (422 Unprocessable Entity). A checkpoint of the
	// witness's size with another root hash is inconsistent too, but C2SP
	// tlog-witness answers it 409 Conflict: its error is a *ConflictError
	// with RootMismatch set that also wraps ErrInconsistent.
	ErrInconsistent = errors.New("checkpoint is not consistent with the witness's")
)

// A ConflictError is the witness's answer to an add-checkpoint request whose
// old size is not the size of the latest checkpoint it cosigned for the log:
// Size is that size (0 if it never cosigned one). A log retries with a
// consistency proof from Size (see Group).
//
// RootMismatch reports the other 409 of C2SP tlog-witness: the old size and
// the checkpoint's size are the witness's size, but the root hash is not the
// one it cosigned (a fork, recorded as evidence). Retrying from Size cannot
// help then. A client tells the two apart by comparing Size with the old
// size it sent: Client.AddCheckpoint sets RootMismatch when they are equal
// and the checkpoint is of that size.
type ConflictError struct {
	Size         uint64
	RootMismatch bool
}

func (e *ConflictError) Error() string {
	if e.RootMismatch {
		return fmt.Sprintf("the witness cosigned a checkpoint of size %d with another root hash", e.Size)
	}
	return fmt.Sprintf("the witness's latest cosigned checkpoint has size %d", e.Size)
}

// Unwrap returns ErrConflict, and for a root mismatch ErrInconsistent too.
func (e *ConflictError) Unwrap() []error {
	if e.RootMismatch {
		return []error{ErrConflict, ErrInconsistent}
	}
	return []error{ErrConflict}
}

// MaxProofLines is the largest number of consistency proof lines an
// add-checkpoint request may hold.
const MaxProofLines = 63

// Config configures a Witness.
type Config struct {
	// Dir is the witness's data directory: "checkpoints/" holds the latest
	// cosigned checkpoint of each log (one file per log, named by the hex
	// SHA-256 of the origin, as in the monitoring URL), "evidence/" the
	// evidence files, "LOCK" keeps a second witness off the directory. It is
	// created if needed. Required.
	Dir string
	// FS is the file system Dir is on. Zero: the operating system's
	// (vfs.Default). Tests use vfs.NewCrashableMem to simulate crashes.
	FS vfs.FS
	// Logs are the checkpoint keys of the logs the witness witnesses, as
	// returned by ParseLogs: Ed25519 verifiers whose name is the log's origin.
	// A log may have several keys (a key rotation); a checkpoint signed by any
	// of them is accepted. At least one.
	Logs []note.Verifier
	// Key is the witness's signer key, as made by merkle.GenerateCosignerKey
	// ("PRIVATE+KEY+<name>+<hash>+<key>"). Required.
	Key string
	// Clock gives the time of each cosignature (to the second) and of each
	// evidence record. Zero: time.Now.
	Clock func() time.Time
	// Logger receives the witness's log lines: a fork or a refused proof at
	// Error and Warn, every cosignature at Debug. Zero: nothing is logged.
	Logger *slog.Logger
	// Registerer is where the witness's metrics are registered. Zero: they
	// are not registered (they are still kept).
	Registerer prometheus.Registerer
	// MaxEvidence is the largest number of evidence files the witness keeps;
	// evidence beyond it is only logged. Zero: 1000.
	MaxEvidence int
}

// A Witness cosigns the checkpoints of the logs it is configured for,
// keeping for each log the latest checkpoint it cosigned. Its state is
// durable: AddCheckpoint returns a cosignature only after the new state is
// on disk (written to a temporary file, synced, renamed over the old one and
// the directory synced), so a witness that crashes and restarts never
// forgets a size it cosigned.
//
// A Witness is safe for concurrent use. Requests for the same log are
// serialized: the check of the old size and the update of the state are
// atomic, so of two concurrent requests from the same old size one wins and
// the other gets a *ConflictError. Requests for different logs proceed in
// parallel.
//
// Shutdown order: stop the HTTP server (http.Server.Shutdown waits for the
// requests in flight, which finish their writes), then Close.
type Witness struct {
	cosigner    *merkle.Cosigner
	clock       func() time.Time
	logger      *slog.Logger
	logs        map[string]*logState // by origin; not modified after New
	byHash      map[string]*logState // by hex SHA-256 of the origin
	store       *store
	metrics     *metrics
	maxEvidence int
	evidence    atomic.Int64 // evidence files in the directory
	failed      atomic.Bool  // the last write failed: unhealthy
	closed      atomic.Bool
}

// A logState is what the witness knows of one log.
type logState struct {
	origin string
	hash   string         // hex SHA-256 of the origin
	keys   note.Verifiers // the log's checkpoint keys
	nkeys  int
	mu     sync.Mutex // held from the check of the old size to the update
	latest atomic.Pointer[cosigned]
}

// A cosigned is the latest checkpoint the witness cosigned for a log.
type cosigned struct {
	checkpoint merkle.Checkpoint
	note       []byte // the checkpoint, the log's verified signatures and the cosignature
}

// New opens the witness's state in cfg.Dir (creating it if needed), loads
// the latest cosigned checkpoint of each configured log, and returns the
// Witness. It fails if another Witness holds the directory or a stored
// checkpoint does not parse. Shut down by stopping the HTTP server first,
// then calling Close, which releases the directory.
func New(ctx context.Context, cfg Config) (*Witness, error) {
	if cfg.Dir == "" {
		return nil, errors.New("witness: no data directory")
	}
	if len(cfg.Logs) == 0 {
		return nil, errors.New("witness: no logs configured")
	}
	clock := cfg.Clock
	if clock == nil {
		clock = time.Now
	}
	cosigner, err := merkle.NewCosigner(cfg.Key, clock)
	if err != nil {
		return nil, fmt.Errorf("witness key: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	w := &Witness{
		cosigner:    cosigner,
		clock:       clock,
		logger:      logger,
		logs:        map[string]*logState{},
		byHash:      map[string]*logState{},
		metrics:     newMetrics(),
		maxEvidence: cfg.MaxEvidence,
	}
	if w.maxEvidence == 0 {
		w.maxEvidence = 1000
	}
	keys := map[string][]note.Verifier{}
	for _, v := range cfg.Logs {
		keys[v.Name()] = append(keys[v.Name()], v)
	}
	for origin, vs := range keys {
		sum := sha256.Sum256([]byte(origin))
		l := &logState{origin: origin, hash: hex.EncodeToString(sum[:]), keys: note.VerifierList(vs...), nkeys: len(vs)}
		w.logs[origin] = l
		w.byHash[l.hash] = l
	}
	fs := cfg.FS
	if fs == nil {
		fs = vfs.Default
	}
	if w.store, err = openStore(fs, cfg.Dir); err != nil {
		return nil, err
	}
	n, err := w.store.countEvidence()
	if err != nil {
		w.store.close()
		return nil, err
	}
	w.evidence.Store(int64(n))
	for _, l := range w.logs {
		if err := w.load(l); err != nil {
			w.store.close()
			return nil, err
		}
	}
	if cfg.Registerer != nil {
		if err := w.metrics.register(cfg.Registerer); err != nil {
			w.store.close()
			return nil, fmt.Errorf("witness: registering metrics: %w", err)
		}
	}
	return w, nil
}

// load reads a log's latest cosigned checkpoint from the store.
func (w *Witness) load(l *logState) error {
	data, err := w.store.get(l.hash)
	if err != nil || data == nil {
		return err
	}
	text, err := noteText(data)
	if err != nil {
		return fmt.Errorf("witness: stored checkpoint of %q: %w", l.origin, err)
	}
	cp, err := merkle.ParseCheckpoint(text)
	if err != nil {
		return fmt.Errorf("witness: stored checkpoint of %q: %w", l.origin, err)
	}
	if cp.Origin != l.origin {
		return fmt.Errorf("witness: stored checkpoint %s has origin %q, want %q", l.hash, cp.Origin, l.origin)
	}
	l.latest.Store(&cosigned{checkpoint: cp, note: data})
	w.metrics.size.WithLabelValues(l.origin).Set(float64(cp.Size))
	return nil
}

// Close releases the data directory. Requests after Close fail.
func (w *Witness) Close() error {
	if w.closed.Swap(true) {
		return nil
	}
	return w.store.close()
}

// VerifierKey returns the witness's cosignature verifier key (signature type
// 0x04), which logs and verifiers list in their policies.
func (w *Witness) VerifierKey() string { return w.cosigner.VerifierKey() }

// Origins returns the origins of the logs the witness is configured for,
// mapped to the hex SHA-256 that names them in the monitoring URL
// "<origin hash>/checkpoint".
func (w *Witness) Origins() map[string]string {
	m := make(map[string]string, len(w.logs))
	for o, l := range w.logs {
		m[o] = l.hash
	}
	return m
}

// Checkpoint returns the latest checkpoint the witness cosigned for the log
// with the given origin: the checkpoint text, the log's signatures that the
// witness verified and the witness's cosignature. It returns nil if the
// witness never cosigned a checkpoint of that log, and an error wrapping
// ErrUnknownLog if it is not configured for it.
func (w *Witness) Checkpoint(origin string) ([]byte, error) {
	l, ok := w.logs[origin]
	if !ok {
		return nil, fmt.Errorf("origin %q: %w", origin, ErrUnknownLog)
	}
	if c := l.latest.Load(); c != nil {
		return bytes.Clone(c.note), nil
	}
	return nil, nil
}

// Healthy reports whether the witness is open and its last state write, if
// any failed, has since been followed by a successful one.
func (w *Witness) Healthy() bool { return !w.closed.Load() && !w.failed.Load() }

// AddCheckpoint is add-checkpoint: it checks the signed checkpoint and the
// consistency proof from oldSize, in the order C2SP tlog-witness gives,
// stores the checkpoint durably as the latest for its log, and returns the
// witness's cosignature as one note signature line ("— <name> <base64>\n"),
// to be appended to the signed checkpoint.
//
// Errors wrap ErrMalformed, ErrUnknownLog, ErrForbidden, ErrConflict (as a
// *ConflictError) or ErrInconsistent. A consistency failure against a
// checkpoint the witness cosigned is also recorded as Evidence. Any other
// error (the state could not be written, ctx was done before the write) means
// that nothing was cosigned or stored.
func (w *Witness) AddCheckpoint(ctx context.Context, oldSize uint64, proof []merkle.Hash, signedCheckpoint []byte) ([]byte, error) {
	if w.closed.Load() {
		return nil, errors.New("witness is closed")
	}
	if len(proof) > MaxProofLines {
		return nil, fmt.Errorf("consistency proof of %d hashes, at most %d: %w", len(proof), MaxProofLines, ErrMalformed)
	}
	text, err := noteText(signedCheckpoint)
	if err != nil {
		return nil, err
	}
	cp, err := merkle.ParseCheckpoint(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	l, ok := w.logs[cp.Origin]
	if !ok {
		return nil, fmt.Errorf("checkpoint origin %q: %w", truncate(cp.Origin), ErrUnknownLog)
	}
	n, err := note.Open(signedCheckpoint, l.keys)
	if err != nil {
		var invalid *note.InvalidSignatureError
		if errors.As(err, &invalid) {
			return nil, fmt.Errorf("checkpoint of %q size %d: signature by %s+%08x does not verify: %w", l.origin, cp.Size, invalid.Name, invalid.Hash, ErrForbidden)
		}
		return nil, fmt.Errorf("checkpoint of %q size %d: no signature by the log's %d key(s): %w", l.origin, cp.Size, l.nkeys, ErrForbidden)
	}
	if oldSize > cp.Size {
		return nil, fmt.Errorf("old size %d is larger than the checkpoint size %d: %w", oldSize, cp.Size, ErrMalformed)
	}
	return w.add(ctx, l, oldSize, proof, merkle.SignedCheckpoint{Checkpoint: cp, Note: signedCheckpoint}, n.Sigs)
}

// add checks the checkpoint against the log's state and cosigns it, holding
// the log's lock.
func (w *Witness) add(ctx context.Context, l *logState, oldSize uint64, proof []merkle.Hash, sc merkle.SignedCheckpoint, logSigs []note.Signature) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cp := sc.Checkpoint
	cur := l.latest.Load()
	var curSize uint64
	if cur != nil {
		curSize = cur.checkpoint.Size
	}
	if oldSize != curSize {
		return nil, fmt.Errorf("checkpoint of %q size %d from old size %d: %w", l.origin, cp.Size, oldSize, &ConflictError{Size: curSize})
	}
	switch {
	case cp.Size == 0 && cp.Hash != merkle.EmptyRoot():
		return nil, fmt.Errorf("checkpoint of %q size 0 does not have the empty tree's root: %w", l.origin, ErrInconsistent)
	case oldSize == 0 && len(proof) > 0:
		return nil, fmt.Errorf("checkpoint of %q size %d from old size 0 with a proof of %d hashes, want none: %w", l.origin, cp.Size, len(proof), ErrInconsistent)
	}
	if cur != nil && oldSize > 0 {
		// At equal sizes this compares the roots and ignores the proof, so
		// a fork is recorded whatever proof came with it.
		old := merkle.SignedCheckpoint{Checkpoint: cur.checkpoint, Note: cur.note}
		if err := merkle.CheckSignedConsistency(old, sc, proof); err != nil {
			var inc *merkle.InconsistencyError
			if errors.As(err, &inc) {
				w.keepEvidence(l, inc)
			}
			if oldSize == cp.Size {
				// The same size, another root: C2SP tlog-witness answers
				// 409 Conflict with the witness's size.
				return nil, fmt.Errorf("checkpoint of %q size %d: %w: %w", l.origin, cp.Size, &ConflictError{Size: curSize, RootMismatch: true}, err)
			}
			return nil, fmt.Errorf("%w: %w", ErrInconsistent, err)
		}
	}
	if oldSize == cp.Size && len(proof) > 0 {
		return nil, fmt.Errorf("checkpoint of %q size %d from the same size with a proof of %d hashes, want none: %w", l.origin, cp.Size, len(proof), ErrInconsistent)
	}
	line, err := w.cosigner.Cosign(cp)
	if err != nil {
		return nil, fmt.Errorf("cosigning checkpoint of %q size %d: %w", l.origin, cp.Size, err)
	}
	text, err := cp.Format()
	if err != nil {
		return nil, err
	}
	stored := make([]byte, 0, len(text)+1+len(line)+len(logSigs)*128)
	stored = append(append(stored, text...), '\n')
	for _, s := range logSigs {
		stored = fmt.Appendf(stored, "— %s %s\n", s.Name, s.Base64)
	}
	stored = append(stored, line...)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("checkpoint of %q size %d not stored: %w", l.origin, cp.Size, err)
	}
	if err := w.store.put(l.hash, stored); err != nil {
		w.failed.Store(true)
		w.metrics.writeErrors.Inc()
		w.logger.Error("witness: storing checkpoint failed; not cosigned", "origin", l.origin, "size", cp.Size, "err", err)
		return nil, fmt.Errorf("storing checkpoint of %q size %d: %w", l.origin, cp.Size, err)
	}
	w.failed.Store(false)
	l.latest.Store(&cosigned{checkpoint: cp, note: stored})
	w.metrics.size.WithLabelValues(l.origin).Set(float64(cp.Size))
	w.logger.Debug("witness: cosigned", "origin", l.origin, "size", cp.Size, "old", oldSize)
	return line, nil
}

// noteText returns the text of a signed note after checking its syntax (not
// its signatures). Errors wrap ErrMalformed.
func noteText(msg []byte) ([]byte, error) {
	if len(msg) > merkle.MaxNoteSize {
		return nil, fmt.Errorf("checkpoint note of %d bytes is larger than %d: %w", len(msg), merkle.MaxNoteSize, ErrMalformed)
	}
	// With no known keys, a well-formed note opens to an UnverifiedNoteError
	// holding its text.
	_, err := note.Open(msg, note.VerifierList())
	var unverified *note.UnverifiedNoteError
	if !errors.As(err, &unverified) {
		return nil, fmt.Errorf("checkpoint is not a signed note: %w", ErrMalformed)
	}
	return []byte(unverified.Note.Text), nil
}

// truncate shortens s for an error message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
