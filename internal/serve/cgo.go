//go:build cgo

package serve

// cgoBuild: Pebble allocates its block cache and memtables with C's malloc,
// outside the Go heap (MemoryTerm.Outside).
const cgoBuild = true
