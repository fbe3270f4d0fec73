package witness

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A store keeps the witness's durable state as files: one per log under
// checkpoints/, holding the latest cosigned checkpoint note, and the
// evidence files under evidence/.
//
// Why files and not a database: the state is a few hundred bytes per log,
// written once per add-checkpoint and read once at startup; each file is
// exactly what the monitoring URL serves, so an operator can read it with
// cat. A write is atomic and durable by the classic sequence (write a
// temporary file, fsync it, rename it over the old one, fsync the directory),
// and a failed write is an ordinary error: the request fails and the witness
// keeps serving, where Pebble treats a failed WAL write as fatal. The cost is
// two fsyncs per cosignature and no group commit across logs, which a witness
// of rarely active logs does not need (see BenchmarkAddCheckpoint).
//
// The file system is a vfs.FS so tests can crash it (vfs.NewCrashableMem).
type store struct {
	fs   vfs.FS
	dir  string
	cps  string // checkpoints directory
	evid string // evidence directory
	lock io.Closer
}

const tmpSuffix = ".tmp"

// openStore creates the directories if needed, takes the lock and removes
// temporary files a crash left behind.
func openStore(fs vfs.FS, dir string) (*store, error) {
	s := &store{fs: fs, dir: dir, cps: fs.PathJoin(dir, "checkpoints"), evid: fs.PathJoin(dir, "evidence")}
	if err := mkdirSynced(fs, dir); err != nil {
		return nil, fmt.Errorf("witness: creating data directory: %w", err)
	}
	lock, err := fs.Lock(fs.PathJoin(dir, "LOCK"))
	if err != nil {
		return nil, fmt.Errorf("witness: locking data directory %s (is another witness running on it?): %w", dir, err)
	}
	s.lock = lock
	for _, d := range []string{s.cps, s.evid} {
		if err := mkdirSynced(fs, d); err != nil {
			s.close()
			return nil, fmt.Errorf("witness: creating %s: %w", d, err)
		}
	}
	for _, d := range []string{s.cps, s.evid} {
		names, err := fs.List(d)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("witness: listing %s: %w", d, err)
		}
		for _, n := range names {
			if strings.HasSuffix(n, tmpSuffix) {
				if err := fs.Remove(fs.PathJoin(d, n)); err != nil {
					s.close()
					return nil, fmt.Errorf("witness: removing temporary file: %w", err)
				}
			}
		}
	}
	return s, nil
}

func (s *store) close() error { return s.lock.Close() }

// get returns the stored checkpoint of the log with the given origin hash, or
// nil if there is none.
func (s *store) get(hash string) ([]byte, error) {
	f, err := s.fs.Open(s.fs.PathJoin(s.cps, hash))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("witness: reading checkpoint %s: %w", hash, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStoredSize+1))
	if err != nil {
		return nil, fmt.Errorf("witness: reading checkpoint %s: %w", hash, err)
	}
	if len(data) > maxStoredSize {
		return nil, fmt.Errorf("witness: checkpoint file %s is larger than %d bytes", hash, maxStoredSize)
	}
	return data, nil
}

// maxStoredSize bounds what get reads: a stored checkpoint is a checkpoint
// note with the log's signatures and one cosignature.
const maxStoredSize = 128 << 10

// put replaces the stored checkpoint of a log, durably.
func (s *store) put(hash string, data []byte) error {
	return writeFileAtomic(s.fs, s.cps, hash, data)
}

// putEvidence writes an evidence file unless one of that name exists, and
// reports whether it wrote it.
func (s *store) putEvidence(name string, data []byte) (bool, error) {
	if _, err := s.fs.Stat(s.fs.PathJoin(s.evid, name)); err == nil {
		return false, nil
	}
	return true, writeFileAtomic(s.fs, s.evid, name, data)
}

// countEvidence returns the number of evidence files.
func (s *store) countEvidence() (int, error) {
	names, err := s.fs.List(s.evid)
	if err != nil {
		return 0, fmt.Errorf("witness: listing %s: %w", s.evid, err)
	}
	return len(names), nil
}

// writeFileAtomic writes dir/name so that after a crash it holds either its
// old contents or data, and data once it returns: it writes and syncs a
// temporary file, renames it over name and syncs the directory.
func writeFileAtomic(fs vfs.FS, dir, name string, data []byte) error {
	tmp := fs.PathJoin(dir, name+tmpSuffix)
	f, err := fs.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return fmt.Errorf("creating %s: %w", tmp, err)
	}
	// A copy: pebble's in-memory file system scrambles written buffers
	// when built with invariants (as under -race), against io.Writer's rule.
	_, err = f.Write(bytes.Clone(data))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fs.Remove(tmp)
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := fs.Rename(tmp, fs.PathJoin(dir, name)); err != nil {
		fs.Remove(tmp)
		return fmt.Errorf("renaming %s: %w", tmp, err)
	}
	return syncDir(fs, dir)
}

// mkdirSynced creates dir and its missing parents, durably: each directory
// created is synced into its parent.
func mkdirSynced(fs vfs.FS, dir string) error {
	if _, err := fs.Stat(dir); err == nil {
		return nil
	}
	parent := fs.PathDir(dir)
	if parent != dir {
		if err := mkdirSynced(fs, parent); err != nil {
			return err
		}
	}
	if err := fs.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return syncDir(fs, parent)
}

// syncDir fsyncs a directory, making the entries created or renamed in it
// durable.
func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("opening directory %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}
