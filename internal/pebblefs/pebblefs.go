// Package pebblefs adapts Pebble's file system for zarlog's stores (the
// ledger and the bundle store).
package pebblefs

import "github.com/cockroachdb/pebble/v2/vfs"

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
