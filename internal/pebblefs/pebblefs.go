// Package pebblefs adapts Pebble for zarlog's stores: a file system without
// preallocated write-ahead logs (the ledger and every other store), and the
// options and logger of the stores other than the ledger.
package pebblefs

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// NoPrealloc returns fs with files that ignore Preallocate. Pebble
// preallocates every write-ahead log at 110% of its MemTableSize (it was
// 70 MiB for the ledger's 64 MiB memtable, so that a log of a few events
// took 72 MB of disk), and a full disk was found only once a preallocated
// file ran out. Without it a WAL takes the room it holds, and a write to a
// full disk fails at once, in the commit that needs the room. Appends cost
// the same (BenchmarkAppend, measured in the same run).
func NoPrealloc(fs vfs.FS) vfs.FS { return noPrealloc{fs} }

type noPrealloc struct{ vfs.FS }

func (fs noPrealloc) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return wrap(fs.FS.Create(name, c))
}

func (fs noPrealloc) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return wrap(fs.FS.OpenReadWrite(name, c, opts...))
}

func (fs noPrealloc) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return wrap(fs.FS.ReuseForWrite(oldname, newname, c))
}

func wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return file{f}, nil
}

type file struct{ vfs.File }

func (file) Preallocate(offset, length int64) error { return nil }

// Options returns the Pebble options of one of zarlog's stores other than
// the ledger (the bundle store, a watcher's copy, the auditor's state):
// the memtable and cache sizes given, fs (vfs.Default when nil) without
// preallocation, and Logger(log, name). The ledger has options of its own:
// it recovers a failed commit instead of exiting.
func Options(fs vfs.FS, log *slog.Logger, name string, memTable uint64, cache int64) *pebble.Options {
	if fs == nil {
		fs = vfs.Default
	}
	return &pebble.Options{MemTableSize: memTable, CacheSize: cache, FS: NoPrealloc(fs), Logger: Logger(log, name)}
}

// Logger returns the Pebble logger of a store named name: its information
// at debug level, its errors at error level, and a fatal error (Pebble
// cannot go on, and nothing can recover a panic in its goroutines) as one
// error line and one line on standard error, then exit status 1: a restart
// recovers, from the store's last durable batch.
func Logger(log *slog.Logger, name string) pebble.Logger {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return logger{log, name}
}

type logger struct {
	log  *slog.Logger
	name string
}

func (l logger) Infof(format string, args ...any) {
	l.log.Debug(l.name + ": pebble: " + fmt.Sprintf(format, args...))
}

func (l logger) Errorf(format string, args ...any) {
	l.log.Error(l.name + ": pebble: " + fmt.Sprintf(format, args...))
}

func (l logger) Fatalf(format string, args ...any) {
	msg := l.name + " failed: " + fmt.Sprintf(format, args...)
	l.log.Error(msg)
	fmt.Fprintln(os.Stderr, "zarlog: fatal:", msg)
	os.Exit(1)
}
