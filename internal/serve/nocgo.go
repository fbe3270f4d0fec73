//go:build !cgo

package serve

// cgoBuild: without cgo, Pebble's block cache and memtables are in the Go
// heap (MemoryTerm.Outside).
const cgoBuild = false
