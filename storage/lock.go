package storage

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zarlog/zarlog/merkle"
)

// ErrMalformed is wrapped by the errors of ParseLock and ParseTimes.
var ErrMalformed = errors.New("malformed")

// LockKey is the lock object's key under the bucket's prefix.
const LockKey = "zarlog/lock"

// A Lock is the content of the lock object: which node sequences the log
// (Holder, in its Term), how long the others wait before they take over
// if it stops writing (Lease), and the latest checkpoint it published.
//
// Every write of the lock is a compare-and-swap (If-Match the ETag read)
// and changes its content (Renewal grows by one with every write, Term
// with every takeover), so its ETag changes with every write: a node whose
// write fails on the compare has lost the log. The checkpoint written
// here, after the tiles it covers and before anyone is told of it, is what
// the log has published: the public checkpoint object is a copy.
//
// The format is text, canonical (Format(Parse(b)) is b):
//
//	zarlog-lock v1
//	holder <node id>
//	term <n>
//	renewal <n>
//	lease <milliseconds>
//
//	<the signed checkpoint note>
type Lock struct {
	Holder  string
	Term    uint64
	Renewal uint64
	Lease   time.Duration // whole milliseconds, at least one
	Note    []byte        // the signed checkpoint
}

const lockHeader = "zarlog-lock v1\n"

// maxLockSize bounds a lock object.
const maxLockSize = 1024 + merkle.MaxNoteSize

// Format returns the lock object's bytes.
func (k Lock) Format() []byte {
	var b bytes.Buffer
	b.WriteString(lockHeader)
	fmt.Fprintf(&b, "holder %s\nterm %d\nrenewal %d\nlease %d\n\n", k.Holder, k.Term, k.Renewal, k.Lease.Milliseconds())
	b.Write(k.Note)
	return b.Bytes()
}

// ParseLock parses a lock object. It does not check the checkpoint's
// signature (merkle.Open with the log's key does).
func ParseLock(b []byte) (Lock, error) {
	var k Lock
	if len(b) > maxLockSize {
		return k, fmt.Errorf("lock: %d bytes, more than %d: %w", len(b), maxLockSize, ErrMalformed)
	}
	rest, ok := bytes.CutPrefix(b, []byte(lockHeader))
	if !ok {
		return k, fmt.Errorf("lock: no %q header: %w", strings.TrimSpace(lockHeader), ErrMalformed)
	}
	field := func(name string) (string, error) {
		line, after, ok := bytes.Cut(rest, []byte("\n"))
		v, ok2 := bytes.CutPrefix(line, []byte(name+" "))
		if !ok || !ok2 || len(v) == 0 {
			return "", fmt.Errorf("lock: no %q line: %w", name, ErrMalformed)
		}
		rest = after
		return string(v), nil
	}
	num := func(name string) (uint64, error) {
		v, err := field(name)
		if err != nil {
			return 0, err
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || strconv.FormatUint(n, 10) != v {
			return 0, fmt.Errorf("lock: %s %q is not a decimal number: %w", name, v, ErrMalformed)
		}
		return n, nil
	}
	var err error
	if k.Holder, err = field("holder"); err != nil {
		return Lock{}, err
	}
	if err := CheckNodeID(k.Holder); err != nil {
		return Lock{}, fmt.Errorf("lock: %w", err)
	}
	if k.Term, err = num("term"); err != nil {
		return Lock{}, err
	}
	if k.Renewal, err = num("renewal"); err != nil {
		return Lock{}, err
	}
	ms, err := num("lease")
	if err != nil {
		return Lock{}, err
	}
	if ms == 0 || ms > uint64(24*time.Hour/time.Millisecond) {
		return Lock{}, fmt.Errorf("lock: lease %d ms is out of range: %w", ms, ErrMalformed)
	}
	k.Lease = time.Duration(ms) * time.Millisecond
	note, ok := bytes.CutPrefix(rest, []byte("\n"))
	if !ok || len(note) == 0 {
		return Lock{}, fmt.Errorf("lock: no blank line before the checkpoint: %w", ErrMalformed)
	}
	k.Note = bytes.Clone(note)
	return k, nil
}

// CheckNodeID checks a node id: 1 to 64 of A-Z, a-z, 0-9, '.', '_', '-'.
func CheckNodeID(id string) error {
	if len(id) == 0 || len(id) > 64 {
		return fmt.Errorf("node id %q: 1 to 64 characters: %w", id, ErrMalformed)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("node id %q: only letters, digits, '.', '_' and '-': %w", id, ErrMalformed)
		}
	}
	return nil
}
