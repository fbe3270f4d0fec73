package witness

// This file is the log's side of witnessing that outlives a round: the
// latest witnessed checkpoint, kept durably.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/merkle"
)

// WitnessedFile is the name of the file, in the directory given to
// OpenWitnessed, that holds the latest witnessed checkpoint: the note as
// served, readable with cat.
const WitnessedFile = "checkpoint"

// ErrNotWitnessed wraps the error of Witnessed.Put for a checkpoint that
// does not meet the policy's quorum or is not signed by the log.
var ErrNotWitnessed = errors.New("not a witnessed checkpoint of the log")

// A Witnessed keeps the latest witnessed checkpoint of one log: a
// checkpoint signed by the log's key whose cosignatures meet the witness
// policy's quorum. It keeps it durably, in one file rewritten atomically
// (write a temporary file, fsync it, rename it, fsync the directory, as the
// witness's own state), and in memory, where Latest returns it with a
// channel closed when a newer one is kept. The log (Submitter) and a mirror
// re-serving the log's witnessed checkpoints both keep theirs in one.
//
// The witnessed checkpoint only grows: Put refuses a smaller one, and one of
// the same size with another root hash. Its methods are safe for concurrent
// use; one process should use a directory at a time.
type Witnessed struct {
	fs     vfs.FS
	dir    string
	key    note.Verifier
	policy *merkle.Policy

	mu  sync.Mutex // serializes Put
	cur atomic.Pointer[witnessedNote]
}

type witnessedNote struct {
	note []byte // nil: none yet
	cp   merkle.Checkpoint
	next chan struct{}
}

// OpenWitnessed opens (creating dir, mode 0700, if needed) the store of the
// witnessed checkpoints of the log with key logKey under policy. A stored
// checkpoint is loaded if it is signed by the log and meets the policy's
// quorum; one that does not (the policy has changed since) is ignored and
// replaced by the next Put. A stored checkpoint of another log (a file not
// signed by logKey at all) is an error, as is a file that cannot be read.
// fs nil means the operating system's file system.
func OpenWitnessed(fs vfs.FS, dir string, logKey note.Verifier, policy *merkle.Policy) (*Witnessed, error) {
	if fs == nil {
		fs = vfs.Default
	}
	if logKey == nil || policy == nil {
		return nil, errors.New("witness: witnessed checkpoints: the log key and the policy are required")
	}
	w := &Witnessed{fs: fs, dir: dir, key: logKey, policy: policy}
	w.cur.Store(&witnessedNote{next: make(chan struct{})})
	if err := mkdirSynced(fs, dir); err != nil {
		return nil, fmt.Errorf("witness: creating %s: %w", dir, err)
	}
	if err := fs.Remove(fs.PathJoin(dir, WitnessedFile+tmpSuffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("witness: removing a temporary file: %w", err)
	}
	data, err := w.read()
	if err != nil || data == nil {
		return w, err
	}
	if _, err := merkle.Open(data, logKey); err != nil {
		return nil, fmt.Errorf("witness: the stored witnessed checkpoint %s is not %s's: %w", fs.PathJoin(dir, WitnessedFile), logKey.Name(), err)
	}
	cp, err := w.check(data)
	if err != nil {
		return w, nil // the policy changed: not witnessed under this one
	}
	w.cur.Store(&witnessedNote{note: data, cp: cp, next: make(chan struct{})})
	return w, nil
}

// read returns the stored file, or nil if there is none.
func (w *Witnessed) read() ([]byte, error) {
	f, err := w.fs.Open(w.fs.PathJoin(w.dir, WitnessedFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("witness: reading the witnessed checkpoint: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, merkle.MaxNoteSize+1))
	if err != nil {
		return nil, fmt.Errorf("witness: reading the witnessed checkpoint: %w", err)
	}
	if len(data) > merkle.MaxNoteSize {
		return nil, fmt.Errorf("witness: the witnessed checkpoint file is larger than %d bytes", merkle.MaxNoteSize)
	}
	return data, nil
}

// check returns the checkpoint of signed if it is signed by the log and
// meets the policy's quorum.
func (w *Witnessed) check(signed []byte) (merkle.Checkpoint, error) {
	cp, err := merkle.Open(signed, w.key)
	if err != nil {
		return merkle.Checkpoint{}, fmt.Errorf("%w: %w", ErrNotWitnessed, err)
	}
	if _, err := w.policy.CheckWitnesses(signed); err != nil {
		return merkle.Checkpoint{}, fmt.Errorf("%w: %w", ErrNotWitnessed, err)
	}
	return cp, nil
}

// Latest returns the latest witnessed checkpoint note (nil if none yet), its
// checkpoint, and a channel closed when a newer one is kept.
func (w *Witnessed) Latest() (note []byte, cp merkle.Checkpoint, next <-chan struct{}) {
	c := w.cur.Load()
	return c.note, c.cp, c.next
}

// Policy returns the policy the checkpoints are witnessed under.
func (w *Witnessed) Policy() *merkle.Policy { return w.policy }

// Put keeps signed as the latest witnessed checkpoint, durably, and then
// publishes it (Latest). It returns an error wrapping ErrNotWitnessed if
// signed is not signed by the log or does not meet the quorum, and an error
// if it is smaller than the latest one or of its size with another root
// hash. A checkpoint of the latest one's tree (newer cosignatures, say)
// replaces it. If the write fails the latest one stays, on disk and in
// memory.
func (w *Witnessed) Put(signed []byte) error {
	cp, err := w.check(signed)
	if err != nil {
		return fmt.Errorf("witness: keeping a witnessed checkpoint: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := w.cur.Load()
	if cur.note != nil {
		switch {
		case cp.Size < cur.cp.Size:
			return fmt.Errorf("witness: keeping a witnessed checkpoint: size %d is smaller than the latest's %d", cp.Size, cur.cp.Size)
		case cp.Size == cur.cp.Size && cp.Hash != cur.cp.Hash:
			return fmt.Errorf("witness: keeping a witnessed checkpoint: size %d has another root hash than the latest's", cp.Size)
		case bytes.Equal(signed, cur.note):
			return nil
		}
	}
	if err := writeFileAtomic(w.fs, w.dir, WitnessedFile, signed); err != nil {
		return fmt.Errorf("witness: keeping the witnessed checkpoint of size %d: %w", cp.Size, err)
	}
	w.cur.Store(&witnessedNote{note: bytes.Clone(signed), cp: cp, next: make(chan struct{})})
	close(cur.next)
	return nil
}
