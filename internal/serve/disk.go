package serve

import (
	"fmt"
	"syscall"
)

// minFree is the free space below which the service is not ready: a
// filesystem this full refuses the next group commit or stream write.
// It is the smaller of 16 MiB and 5% of the filesystem.
func minFree(size uint64) uint64 { return min(16<<20, size/20) }

// diskRoom returns an error if the filesystem holding dir has less room
// than minFree.
func diskRoom(dir string) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return nil // nothing to say; the writes themselves will report
	}
	size, free := st.Blocks*uint64(st.Bsize), st.Bavail*uint64(st.Bsize)
	if free < minFree(size) {
		return fmt.Errorf("the filesystem of %s has %d bytes free of %d: new events cannot be stored", dir, free, size)
	}
	return nil
}
