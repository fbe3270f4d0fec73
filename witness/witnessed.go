package witness

// This file is the log's side of witnessing that outlives a round: the
// latest witnessed checkpoint and the policy it is witnessed under, kept
// durably.

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

// Files of the directory given to OpenWitnessed, each readable with cat.
const (
	// WitnessedFile holds the latest witnessed checkpoint, as served.
	WitnessedFile = "checkpoint"
	// PolicyFile holds the witness policy (C2SP tlog-policy) it is
	// witnessed under, as served.
	PolicyFile = "policy"
)

// maxPolicyFile bounds a stored policy (merkle.ParsePolicy's own bound).
const maxPolicyFile = 1 << 20

// ErrNotWitnessed wraps the error of Witnessed.Put for a checkpoint that
// does not meet the policy's quorum or is not signed by the log.
var ErrNotWitnessed = errors.New("not a witnessed checkpoint of the log")

// A Witnessed keeps the latest witnessed checkpoint of one log, a
// checkpoint signed by the log's key whose cosignatures meet the witness
// policy's quorum, and that policy. It keeps both durably, each in one file
// rewritten atomically (write a temporary file, fsync it, rename it, fsync
// the directory, as the witness's own state), and in memory, where Latest
// returns the checkpoint with a channel closed when a newer one is kept. The
// log (Submitter) and a mirror re-serving the log's witnessed checkpoints
// both keep theirs in one.
//
// The witnessed checkpoint only grows: Put refuses a smaller one, and one of
// the same size with another root hash. Its methods are safe for concurrent
// use; one process should use a directory at a time.
type Witnessed struct {
	fs  vfs.FS
	dir string
	key note.Verifier

	mu     sync.Mutex // serializes Put and SetPolicy
	stored []byte     // the checkpoint in the file, under mu
	policy atomic.Pointer[policyText]
	cur    atomic.Pointer[witnessedNote]
}

type policyText struct {
	p    *merkle.Policy
	text []byte
}

type witnessedNote struct {
	note []byte // nil: none yet
	cp   merkle.Checkpoint
	next chan struct{}
}

// OpenWitnessed opens (creating dir, mode 0700, if needed) the store of the
// witnessed checkpoints of the log with key logKey under policy, the text
// of a C2SP tlog-policy that lists the log's key among its logs (as a log
// publishes it: serve.PolicyFor). policy nil means the one kept in dir by
// an earlier run (a mirror starting while its log is unreachable), or none:
// nothing is witnessed until SetPolicy. A stored checkpoint is loaded if it
// is signed by the log and meets the policy's quorum; one that does not
// (the policy has changed since) is ignored and replaced by the next Put. A
// stored checkpoint of another log (not signed by logKey at all) is an
// error, as is a file that cannot be read. fs nil means the operating
// system's file system.
func OpenWitnessed(fs vfs.FS, dir string, logKey note.Verifier, policy []byte) (*Witnessed, error) {
	if fs == nil {
		fs = vfs.Default
	}
	if logKey == nil {
		return nil, errors.New("witness: witnessed checkpoints: the log key is required")
	}
	w := &Witnessed{fs: fs, dir: dir, key: logKey}
	w.policy.Store(&policyText{})
	w.cur.Store(&witnessedNote{next: make(chan struct{})})
	if err := mkdirSynced(fs, dir); err != nil {
		return nil, fmt.Errorf("witness: creating %s: %w", dir, err)
	}
	for _, f := range []string{WitnessedFile, PolicyFile} {
		if err := fs.Remove(fs.PathJoin(dir, f+tmpSuffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("witness: removing a temporary file: %w", err)
		}
	}
	if policy == nil {
		kept, err := w.read(PolicyFile, maxPolicyFile)
		if err != nil {
			return nil, err
		}
		policy = kept
	}
	if policy != nil {
		pt, err := w.parsePolicy(policy)
		if err != nil {
			return nil, err
		}
		if err := w.keepPolicy(pt); err != nil {
			return nil, err
		}
	}
	data, err := w.read(WitnessedFile, merkle.MaxNoteSize)
	if err != nil || data == nil {
		return w, err
	}
	if _, err := merkle.Open(data, logKey); err != nil {
		return nil, fmt.Errorf("witness: the stored witnessed checkpoint %s is not %s's: %w", fs.PathJoin(dir, WitnessedFile), logKey.Name(), err)
	}
	w.stored = data
	if cp, err := w.check(data); err == nil {
		w.cur.Store(&witnessedNote{note: data, cp: cp, next: make(chan struct{})})
	} // else the policy changed (or there is none yet): not witnessed under this one
	return w, nil
}

// read returns a file of the directory, or nil if there is none.
func (w *Witnessed) read(name string, limit int) ([]byte, error) {
	f, err := w.fs.Open(w.fs.PathJoin(w.dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("witness: reading %s: %w", name, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("witness: reading %s: %w", name, err)
	}
	if len(data) > limit {
		return nil, fmt.Errorf("witness: the file %s is larger than %d bytes", name, limit)
	}
	return data, nil
}

// parsePolicy parses a policy that must list the log's key.
func (w *Witnessed) parsePolicy(text []byte) (*policyText, error) {
	p, err := merkle.ParsePolicy(text)
	if err != nil {
		return nil, fmt.Errorf("witness: the witness policy: %w", err)
	}
	for _, l := range p.Logs() {
		if l.Name() == w.key.Name() && l.KeyHash() == w.key.KeyHash() {
			return &policyText{p: p, text: bytes.Clone(text)}, nil
		}
	}
	return nil, fmt.Errorf("witness: the witness policy does not list the log %s+%08x", w.key.Name(), w.key.KeyHash())
}

// keepPolicy writes the policy to its file if it differs, and makes it the
// policy.
func (w *Witnessed) keepPolicy(pt *policyText) error {
	if old, err := w.read(PolicyFile, maxPolicyFile); err != nil || !bytes.Equal(old, pt.text) {
		if err := writeFileAtomic(w.fs, w.dir, PolicyFile, pt.text); err != nil {
			return fmt.Errorf("witness: keeping the witness policy: %w", err)
		}
	}
	w.policy.Store(pt)
	return nil
}

// check returns the checkpoint of signed if it is signed by the log and
// meets the policy's quorum.
func (w *Witnessed) check(signed []byte) (merkle.Checkpoint, error) {
	cp, err := merkle.Open(signed, w.key)
	if err != nil {
		return merkle.Checkpoint{}, fmt.Errorf("%w: %w", ErrNotWitnessed, err)
	}
	p := w.policy.Load().p
	if p == nil {
		return merkle.Checkpoint{}, fmt.Errorf("%w: no witness policy", ErrNotWitnessed)
	}
	if _, err := p.CheckWitnesses(signed); err != nil {
		return merkle.Checkpoint{}, fmt.Errorf("%w: %w", ErrNotWitnessed, err)
	}
	return cp, nil
}

// Latest returns the latest witnessed checkpoint note (nil if none yet), its
// checkpoint, and a channel closed when a newer one is kept or the policy
// changes.
func (w *Witnessed) Latest() (note []byte, cp merkle.Checkpoint, next <-chan struct{}) {
	c := w.cur.Load()
	return c.note, c.cp, c.next
}

// Policy returns the policy the checkpoints are witnessed under (nil: none
// yet).
func (w *Witnessed) Policy() *merkle.Policy { return w.policy.Load().p }

// PolicyText returns the policy's text as kept (nil: none yet).
func (w *Witnessed) PolicyText() []byte { return w.policy.Load().text }

// SetPolicy changes the policy the checkpoints are witnessed under (a
// mirror follows its log's), keeping its text durably first. It must list
// the log's key. The checkpoint kept stays the latest if it meets the new
// policy's quorum; otherwise none is witnessed until the next Put. Latest's
// channel is closed either way. The same policy again changes nothing.
func (w *Witnessed) SetPolicy(policy []byte) error {
	pt, err := w.parsePolicy(policy)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Equal(w.policy.Load().text, pt.text) {
		return nil
	}
	if err := w.keepPolicy(pt); err != nil {
		return err
	}
	cur := w.cur.Load()
	next := &witnessedNote{next: make(chan struct{})}
	if w.stored != nil {
		if cp, err := w.check(w.stored); err == nil {
			next.note, next.cp = w.stored, cp
		}
	}
	w.cur.Store(next)
	close(cur.next)
	return nil
}

// Put keeps signed as the latest witnessed checkpoint, durably, and then
// publishes it (Latest). It returns an error wrapping ErrNotWitnessed if
// signed is not signed by the log or does not meet the quorum, and an error
// if it is smaller than the latest one or of its size with another root
// hash. A checkpoint of the latest one's tree (newer cosignatures, say)
// replaces it. If the write fails the latest one stays, on disk and in
// memory.
func (w *Witnessed) Put(signed []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	cp, err := w.check(signed)
	if err != nil {
		return fmt.Errorf("witness: keeping a witnessed checkpoint: %w", err)
	}
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
	w.stored = bytes.Clone(signed)
	w.cur.Store(&witnessedNote{note: w.stored, cp: cp, next: make(chan struct{})})
	close(cur.next)
	return nil
}
