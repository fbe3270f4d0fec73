package faults

// The outside checker: it knows the log only as C2SP tlog-tiles and signed
// notes, through golang.org/x/mod's tlog and note packages, never through
// zarlog's own merkle package, so a bug there cannot hide itself here.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// A Checkpoint is a C2SP checkpoint whose signature by the log's key was
// checked.
type Checkpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
	Note   []byte // the signed note as served
}

// ParseCheckpoint opens a signed checkpoint note with the log's verifier.
func ParseCheckpoint(msg []byte, v note.Verifier) (Checkpoint, error) {
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("faults: checkpoint: %w", err)
	}
	lines := strings.SplitN(n.Text, "\n", 4)
	if len(lines) < 4 {
		return Checkpoint{}, errors.New("faults: checkpoint: fewer than three lines")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return Checkpoint{}, fmt.Errorf("faults: checkpoint: bad size %q", lines[1])
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		return Checkpoint{}, fmt.Errorf("faults: checkpoint: bad root %q", lines[2])
	}
	return Checkpoint{Origin: lines[0], Size: size, Root: tlog.Hash(root), Note: bytes.Clone(msg)}, nil
}

// A Log is a whole log: its checkpoint and every entry, whose tree has the
// checkpoint's root.
type Log struct {
	Checkpoint Checkpoint
	Entries    [][]byte
	hashes     []tlog.Hash // tlog's stored hashes of the entries
}

// NewLog builds the tree of entries and checks that its root is the
// checkpoint's.
func NewLog(cp Checkpoint, entries [][]byte) (*Log, error) {
	if int64(len(entries)) != cp.Size {
		return nil, fmt.Errorf("faults: %d entries for a checkpoint of size %d", len(entries), cp.Size)
	}
	l := &Log{Checkpoint: cp, Entries: entries}
	for i, e := range entries {
		hs, err := tlog.StoredHashes(int64(i), e, l)
		if err != nil {
			return nil, fmt.Errorf("faults: entry %d: %w", i, err)
		}
		l.hashes = append(l.hashes, hs...)
	}
	root, err := l.TreeHash(cp.Size)
	if err != nil {
		return nil, err
	}
	if root != cp.Root {
		return nil, fmt.Errorf("faults: the entries' tree has root %v, the checkpoint says %v", root, cp.Root)
	}
	return l, nil
}

// ReadHashes is tlog.HashReader over the stored hashes built so far.
func (l *Log) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(l.hashes)) {
			return nil, fmt.Errorf("faults: no stored hash %d", x)
		}
		out[i] = l.hashes[x]
	}
	return out, nil
}

// TreeHash returns the root of the tree of the first n entries.
func (l *Log) TreeHash(n int64) (tlog.Hash, error) {
	if n < 0 || n > int64(len(l.Entries)) {
		return tlog.Hash{}, fmt.Errorf("faults: no tree of size %d in a log of %d", n, len(l.Entries))
	}
	return tlog.TreeHash(n, l)
}

// Consistent checks that a checkpoint is consistent with the log: a
// consistency proof from tlog.ProveTree checked by tlog.CheckTree (the
// proof is built from the log's own hashes, so this says that the
// checkpoint's root is the root of the log's first Size entries).
func (l *Log) Consistent(cp Checkpoint) error {
	if cp.Size > l.Checkpoint.Size {
		return fmt.Errorf("size %d is beyond the final log's %d", cp.Size, l.Checkpoint.Size)
	}
	if cp.Size == 0 {
		return nil
	}
	proof, err := tlog.ProveTree(l.Checkpoint.Size, cp.Size, l)
	if err != nil {
		return err
	}
	if err := tlog.CheckTree(proof, l.Checkpoint.Size, l.Checkpoint.Root, cp.Size, cp.Root); err != nil {
		return fmt.Errorf("size %d root %v: %w", cp.Size, cp.Root, err)
	}
	return nil
}

// EntryPath is the C2SP tlog-tiles path of entry bundle n, partial with w
// entries if w is not zero.
func EntryPath(n int64, w int) string {
	s := fmt.Sprintf("%03d", n%1000)
	for n /= 1000; n > 0; n /= 1000 {
		s = fmt.Sprintf("x%03d/%s", n%1000, s)
	}
	p := "tile/entries/" + s
	if w != 0 {
		p += ".p/" + strconv.Itoa(w)
	}
	return p
}

// FetchLog reads a whole log from a tlog-tiles server at base (ending in
// "/"): its checkpoint, checked with v, and every entry bundle it covers.
func FetchLog(ctx context.Context, c *http.Client, base string, v note.Verifier) (*Log, error) {
	get := func(path string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("faults: GET %s: %s", path, resp.Status)
		}
		return b, nil
	}
	msg, err := get("checkpoint")
	if err != nil {
		return nil, err
	}
	cp, err := ParseCheckpoint(msg, v)
	if err != nil {
		return nil, err
	}
	var entries [][]byte
	for n := int64(0); n*256 < cp.Size; n++ {
		w := 0
		if left := cp.Size - n*256; left < 256 {
			w = int(left)
		}
		b, err := get(EntryPath(n, w))
		if err != nil {
			return nil, err
		}
		want := 256
		if w != 0 {
			want = w
		}
		es, err := splitBundle(b)
		if err != nil || len(es) != want {
			return nil, fmt.Errorf("faults: entry bundle %d: %d entries, want %d (%v)", n, len(es), want, err)
		}
		entries = append(entries, es...)
	}
	return NewLog(cp, entries)
}

// splitBundle splits an entry bundle: each entry a big-endian uint16
// length and its bytes.
func splitBundle(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 2 {
			return out, errors.New("a truncated length")
		}
		n := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+n {
			return out, errors.New("a truncated entry")
		}
		out = append(out, b[2:2+n])
		b = b[2+n:]
	}
	return out, nil
}

// A Receipt is what a backend was given for one event: the event's
// emitter, id and bytes, and the index and checkpoint of its receipt.
type Receipt struct {
	Emitter, ID string
	Leaf        []byte
	Index       int64
	Checkpoint  []byte
}

// A Result is what Check found.
type Result struct {
	Entries     int // in the final log
	Receipted   int // distinct events receipted
	Lost        int // receipted, and not in the final log with its bytes at its index
	Duplicated  int // events (emitter and id) more than once in the final log
	Checkpoints int // distinct signed checkpoints checked
	Forks       int // sizes with two different roots, and checkpoints inconsistent with the final one
	Problems    []string
}

// OK says whether nothing was lost, doubled or forked.
func (r Result) OK() bool { return len(r.Problems) == 0 }

// eventKey returns an entry's emitter and id (the ledger's dedup key).
func eventKey(entry []byte) (string, error) {
	var ev struct {
		Emitter string `json:"emitter"`
		ID      string `json:"id"`
	}
	if err := json.Unmarshal(entry, &ev); err != nil {
		return "", err
	}
	if ev.Emitter == "" || ev.ID == "" {
		return "", errors.New("no emitter or id")
	}
	return ev.Emitter + " " + ev.ID, nil
}

// maxProblems bounds the problems a Result lists (they are all counted).
const maxProblems = 50

// Check checks the final log against every receipt and every checkpoint
// note seen during a run (by anyone: both nodes, the bucket, the
// receipts). The final log's own checkpoint is one of them.
func Check(l *Log, v note.Verifier, receipts []Receipt, notes [][]byte) Result {
	r := Result{Entries: len(l.Entries)}
	problem := func(format string, args ...any) {
		if len(r.Problems) < maxProblems {
			r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
		}
	}
	// Every event once.
	where := map[string]int64{}
	for i, e := range l.Entries {
		k, err := eventKey(e)
		if err != nil {
			problem("entry %d: %v", i, err)
			continue
		}
		if j, ok := where[k]; ok {
			r.Duplicated++
			problem("event %q is in the log at %d and at %d", k, j, i)
			continue
		}
		where[k] = int64(i)
	}
	// Every receipted event in the final log, with its bytes, at the index
	// of its receipt.
	seen := map[string]bool{}
	for _, rc := range receipts {
		notes = append(notes, rc.Checkpoint)
		k := rc.Emitter + " " + rc.ID
		if seen[k] {
			continue
		}
		seen[k] = true
		r.Receipted++
		i, ok := where[k]
		switch {
		case !ok:
			r.Lost++
			problem("event %q was receipted at index %d and is not in the final log", k, rc.Index)
		case i != rc.Index:
			r.Lost++
			problem("event %q was receipted at index %d and is at %d in the final log", k, rc.Index, i)
		case !bytes.Equal(l.Entries[i], rc.Leaf):
			r.Lost++
			problem("event %q at %d has other bytes in the final log than those receipted", k, i)
		}
	}
	// Every checkpoint signed, consistent with the final one, and one root
	// per size.
	notes = append(notes, l.Checkpoint.Note)
	roots := map[int64][]tlog.Hash{}
	done := map[string]bool{}
	for _, n := range notes {
		if done[string(n)] {
			continue
		}
		done[string(n)] = true
		cp, err := ParseCheckpoint(n, v)
		if err != nil {
			problem("a checkpoint seen: %v", err)
			continue
		}
		if cp.Origin != l.Checkpoint.Origin {
			problem("a checkpoint of origin %q, the log's is %q", cp.Origin, l.Checkpoint.Origin)
		}
		if !slices.Contains(roots[cp.Size], cp.Root) {
			roots[cp.Size] = append(roots[cp.Size], cp.Root)
			r.Checkpoints++
			if err := l.Consistent(cp); err != nil {
				r.Forks++
				problem("a checkpoint inconsistent with the final one: %v", err)
			}
		}
	}
	for size, rs := range roots {
		if len(rs) > 1 {
			r.Forks++
			problem("%d checkpoints of size %d with different roots: %v", len(rs), size, rs)
		}
	}
	return r
}
