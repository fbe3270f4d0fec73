package follow

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// The tests that play real games on a real ledger (internal/testlog) are in
// package follow_test: testlog imports internal/serve, which imports
// storage, which imports follow. These names give them the package's test
// helpers.

// TestFollower is a follower of the tests (helpers_test.go).
type TestFollower = follower

// NewTestFollower is newFollower.
func NewTestFollower(t testing.TB, url, vkey string, fs vfs.FS) *TestFollower {
	return newFollower(t, url, vkey, fs)
}

// Store is the follower's store.
func (f *follower) Store() *Store { return f.store }

// TestLog is an in-memory origin log (helpers_test.go).
type TestLog = memLog

// NewTestLog is newMemLog.
func NewTestLog(t testing.TB) *TestLog { return newMemLog(t) }

// Add appends leaves.
func (m *memLog) Add(leaves ...[]byte) { m.add(leaves...) }

// Sign signs a checkpoint of the whole log.
func (m *memLog) Sign() []byte { return m.sign() }

// VKey is the log's verifier key.
func (m *memLog) VKey() string { return m.vkey }

// Serve serves the log over HTTP and returns its URL.
func (m *memLog) Serve(t testing.TB) string { return serve(t, m).URL }
