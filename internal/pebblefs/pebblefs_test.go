package pebblefs

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestNoPrealloc: a Pebble store on NoPrealloc(vfs.Default) with a large
// memtable takes the room its data needs, not the memtable's size, and
// reads back what it wrote. On a tmpfs (where fallocate allocates, as on
// ext4; mounted when the test runs as root) Pebble's own file system is
// shown to take the memtable's size.
func TestNoPrealloc(t *testing.T) {
	root := t.TempDir()
	tmpfs := syscall.Mount("tmpfs", root, "tmpfs", 0, "size=256m") == nil
	if tmpfs {
		t.Cleanup(func() { syscall.Unmount(root, syscall.MNT_DETACH) })
	}
	for i, tc := range []struct {
		name     string
		fs       vfs.FS
		min, max int64 // bytes allocated on disk (0: no bound)
	}{{"no prealloc", NoPrealloc(vfs.Default), 0, 1 << 20}, {"pebble's default", vfs.Default, 32 << 20, 0}} {
		if tc.min > 0 && !tmpfs {
			continue
		}
		dir := filepath.Join(root, fmt.Sprint(i))
		db, err := pebble.Open(dir, &pebble.Options{FS: tc.fs, MemTableSize: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		for k := range 100 {
			if err := db.Set(fmt.Appendf(nil, "k%d", k), []byte("v"), pebble.Sync); err != nil {
				t.Fatal(err)
			}
		}
		used := allocated(t, dir)
		if v, closer, err := db.Get([]byte("k99")); err != nil || string(v) != "v" {
			t.Errorf("%s: read back %q, %v", tc.name, v, err)
		} else {
			closer.Close()
		}
		db.Close()
		t.Logf("%s: %d bytes allocated", tc.name, used)
		if tc.max > 0 && used > tc.max {
			t.Errorf("%s: %d bytes allocated for 100 keys, want at most %d", tc.name, used, tc.max)
		}
		if used < tc.min {
			t.Errorf("%s: %d bytes allocated, want the preallocated WAL (at least %d)", tc.name, used, tc.min)
		}
	}
}

// allocated sums the blocks allocated to the files under dir.
func allocated(t *testing.T, dir string) int64 {
	var n int64
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}
