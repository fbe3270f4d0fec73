package mirror

// What a mirror keeps of its origin's witnessing and emitter keys, so that
// its pages check a game against what the origin's check it against.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/follow"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/publisher"
	"github.com/zarlog/zarlog/witness"
)

// maxKeysFile bounds the origin's /emitter-keys.
const maxKeysFile = 1 << 20

// A Witnessing is what a mirror keeps of its origin's witness policy,
// witnessed checkpoint and emitter keys, and serves again
// (publisher.WitnessReader; EmitterKeys for the API and the pages). Its
// methods are safe for concurrent use; poll is for one goroutine.
type Witnessing struct {
	dir   string
	src   *follow.Source
	f     *follow.Follower
	store *witness.Witnessed
	keys  atomic.Pointer[[]string] // nil: none known
	log   *slog.Logger
}

// newWitnessing opens what the mirror in dir kept of its origin's
// witnessing (DIR/witnessed/, DIR/emitter-keys).
func newWitnessing(dir string, key note.Verifier, src *follow.Source, f *follow.Follower, log *slog.Logger) (*Witnessing, error) {
	store, err := witness.OpenWitnessed(nil, filepath.Join(dir, "witnessed"), key, nil)
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	w := &Witnessing{dir: dir, src: src, f: f, store: store, log: log}
	b, err := os.ReadFile(w.keysFile())
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("mirror: %w", err)
	default:
		keys, err := publisher.ParseEmitterKeys(b)
		if err != nil {
			return nil, fmt.Errorf("mirror: %s: %w", w.keysFile(), err)
		}
		w.keys.Store(&keys)
	}
	return w, nil
}

func (w *Witnessing) keysFile() string { return filepath.Join(w.dir, publisher.EmitterKeysPath) }

// Witnessed returns the origin's latest witnessed checkpoint the mirror
// checked and kept, or nil.
func (w *Witnessing) Witnessed() []byte {
	n, _, _ := w.store.Latest()
	return n
}

// Policy returns the origin's witness policy as kept, or nil.
func (w *Witnessing) Policy() []byte { return w.store.PolicyText() }

// EmitterKeys returns the origin's emitter keys as kept, or nil.
func (w *Witnessing) EmitterKeys() []string {
	if k := w.keys.Load(); k != nil {
		return *k
	}
	return nil
}

// poll reads the origin's witness policy, witnessed checkpoint and emitter
// keys, and keeps what changed:
//
//   - the policy, if it lists the log's key (witness.Witnessed.SetPolicy);
//   - the witnessed checkpoint, if it is signed by the log, meets the
//     policy and is consistent with the verified copy (follow.Check); one
//     that is not consistent is a *follow.Refusal, returned with its
//     evidence;
//   - the emitter keys, if every line is a verifier key.
//
// A 404 keeps what the mirror has (an origin that never had witnesses
// serves none; one that lost them does not make the mirror forget). It
// returns what went wrong, joined.
func (w *Witnessing) poll(ctx context.Context) error {
	var errs []error
	b, err := w.src.Get(ctx, publisher.WitnessPolicyPath, 1<<20)
	switch {
	case errors.Is(err, merkle.ErrNotFound):
	case err != nil:
		errs = append(errs, fmt.Errorf("the origin's witness policy: %w", err))
	default:
		if err := w.store.SetPolicy(b); err != nil {
			errs = append(errs, fmt.Errorf("the origin's witness policy: %w", err))
		}
	}
	if w.store.Policy() != nil {
		if err := w.witnessed(ctx); err != nil {
			var ref *follow.Refusal
			if errors.As(err, &ref) {
				return err
			}
			errs = append(errs, err)
		}
	}
	b, err = w.src.Get(ctx, publisher.EmitterKeysPath, maxKeysFile)
	switch {
	case errors.Is(err, merkle.ErrNotFound):
	case err != nil:
		errs = append(errs, fmt.Errorf("the origin's emitter keys: %w", err))
	default:
		keys, err := publisher.ParseEmitterKeys(b)
		if err != nil {
			errs = append(errs, fmt.Errorf("the origin's emitter keys: %w", err))
			break
		}
		if old := w.keys.Load(); old != nil && slices.Equal(*old, keys) {
			break
		}
		if err := writeAtomic(w.keysFile(), b); err != nil {
			errs = append(errs, fmt.Errorf("keeping the origin's emitter keys: %w", err))
			break
		}
		w.keys.Store(&keys)
	}
	return errors.Join(errs...)
}

// witnessed reads the origin's witnessed checkpoint and keeps it if it is
// the log's, meets the policy and is consistent with the verified copy.
func (w *Witnessing) witnessed(ctx context.Context) error {
	n, err := w.src.Get(ctx, publisher.WitnessedPath, merkle.MaxNoteSize)
	if errors.Is(err, merkle.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("the origin's witnessed checkpoint: %w", err)
	}
	if cur, _, _ := w.store.Latest(); bytes.Equal(cur, n) {
		return nil
	}
	if _, err := w.store.Policy().CheckWitnesses(n); err != nil {
		return fmt.Errorf("the origin's witnessed checkpoint does not meet its policy: %w", err)
	}
	res, err := w.f.Check(ctx, n, w.src.URL(publisher.WitnessedPath), w.src)
	if err != nil {
		return err
	}
	if !res.Same && !res.Stale && !res.Consistent {
		return nil // nothing verified yet to check it against: the next poll
	}
	_, cur, _ := w.store.Latest()
	cp, err := w.f.Open(n)
	if err != nil {
		return err
	}
	if cp.Size < cur.Size {
		return nil // an older one (a cache): the mirror keeps its newer one
	}
	if err := w.store.Put(n); err != nil {
		return err
	}
	w.log.Debug("mirror: the origin's witnessed checkpoint kept", "size", cp.Size)
	return nil
}

// writeAtomic writes path so that after a crash it holds its old contents
// or data: a temporary file, fsynced, renamed over it, the directory
// fsynced.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
