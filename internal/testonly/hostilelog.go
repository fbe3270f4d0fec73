package testonly

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/merkle"
)

// A Lie is how a HostileLog lies about its tree.
type Lie int

// The lies of a HostileLog.
const (
	// LieNone: the checkpoint, the hash tiles and the entry bundles agree;
	// only the size is absurd (2^40 leaves of 65,535 bytes).
	LieNone Lie = iota
	// LieOversizeBundles: every entry bundle is 20 MB of entries, more than
	// the 256 × (2 + 65,535) bytes the format allows, sent without a
	// Content-Length.
	LieOversizeBundles
	// LieBundles: the hash tiles agree with the checkpoint, the entry
	// bundles hold another entry than the tiles' leaves.
	LieBundles
	// LieTiles: the hash tiles and the bundles agree with each other, not
	// with the checkpoint's root.
	LieTiles
)

func (l Lie) String() string {
	switch l {
	case LieNone:
		return "consistent"
	case LieOversizeBundles:
		return "oversize-bundles"
	case LieBundles:
		return "bundles-not-tiles"
	case LieTiles:
		return "tiles-not-checkpoint"
	}
	return "lie-" + strconv.Itoa(int(l))
}

// A HostileLog is an http.Handler serving a C2SP tlog-tiles log that a
// hostile operator could sign: a validly signed checkpoint of any size (up
// to 2^64−1) over a tree whose leaves are all one entry of 65,535 bytes, so
// that every hash tile at a level is the same hashes and the root of any
// size takes 64 hashes to compute; every entry bundle it serves is full
// (16.8 MB). It lies in the way its Lie says. It computes its hashes with
// crypto/sha256 (RFC 6962), not with package merkle.
type HostileLog struct {
	size  uint64
	lie   Lie
	note  []byte
	vkey  string
	level [9][sha256.Size]byte // the hash of a full subtree of 256^L leaves: the tiles' hashes at level L

	bundle    []byte // a full bundle of the bundles' entry
	bundles   atomic.Int64
	bytesSent atomic.Int64

	mu       sync.Mutex
	requests map[string]int
}

// NewHostileLog returns a hostile log of origin and size, signed with the
// deterministic key Key(origin) returns.
func NewHostileLog(origin string, size uint64, lie Lie) (*HostileLog, error) {
	signer, vkey, err := Key(origin)
	if err != nil {
		return nil, err
	}
	return newHostileLog(signer, vkey, origin, size, lie)
}

func newHostileLog(signer note.Signer, vkey, origin string, size uint64, lie Lie) (*HostileLog, error) {
	a, b := noise("a", merkle.MaxEntrySize), noise("b", merkle.MaxEntrySize)
	h := &HostileLog{size: size, lie: lie, vkey: vkey, requests: map[string]int{}}
	tiles, bundle, root := a, a, a // the entry behind each
	switch lie {
	case LieBundles:
		bundle = b
	case LieTiles:
		tiles, bundle = b, b
	}
	h.level = levels(tiles)
	n := merkle.TileWidth
	if lie == LieOversizeBundles {
		n = 20 << 20 / (2 + merkle.MaxEntrySize)
	}
	for range n {
		h.bundle = binary.BigEndian.AppendUint16(h.bundle, uint16(len(bundle)))
		h.bundle = append(h.bundle, bundle...)
	}
	var err error
	h.note, err = merkle.Sign(merkle.Checkpoint{Origin: origin, Size: size, Hash: rootOf(root, size)}, signer)
	if err != nil {
		return nil, err
	}
	return h, nil
}

// noise returns n bytes that do not compress (SHA-256 in counter mode), so
// that a store's bytes on disk are the bytes it was sent.
func noise(label string, n int) []byte {
	out := make([]byte, 0, n+sha256.Size)
	for i := 0; len(out) < n; i++ {
		s := sha256.Sum256(fmt.Appendf(nil, "%s %d", label, i))
		out = append(out, s[:]...)
	}
	return out[:n]
}

func leafHash(e []byte) [sha256.Size]byte {
	return sha256.Sum256(append([]byte{0}, e...))
}

func nodeHash(l, r [sha256.Size]byte) [sha256.Size]byte {
	return sha256.Sum256(append(append([]byte{1}, l[:]...), r[:]...))
}

// perfect returns the roots of the perfect trees of 2^k copies of entry,
// for k in [0, 64).
func perfect(entry []byte) [64][sha256.Size]byte {
	var p [64][sha256.Size]byte
	p[0] = leafHash(entry)
	for k := 1; k < 64; k++ {
		p[k] = nodeHash(p[k-1], p[k-1])
	}
	return p
}

func levels(entry []byte) [9][sha256.Size]byte {
	p := perfect(entry)
	var l [9][sha256.Size]byte
	for i := range 8 {
		l[i] = p[8*i]
	}
	return l
}

// rootOf returns the RFC 6962 root of size copies of entry.
func rootOf(entry []byte, size uint64) [sha256.Size]byte {
	if size == 0 {
		return sha256.Sum256(nil)
	}
	p := perfect(entry)
	var h [sha256.Size]byte
	have := false
	for k := range 64 {
		if size&(1<<k) == 0 {
			continue
		}
		if !have {
			h, have = p[k], true
		} else {
			h = nodeHash(p[k], h)
		}
	}
	return h
}

// VKey returns the log's verifier key.
func (h *HostileLog) VKey() string { return h.vkey }

// Checkpoint returns the signed checkpoint it serves.
func (h *HostileLog) Checkpoint() []byte { return h.note }

// Served returns how many entry bundles it served and their bytes.
func (h *HostileLog) Served() (bundles, bytes int64) { return h.bundles.Load(), h.bytesSent.Load() }

// Requests returns how many requests each kind of path had: "checkpoint",
// "tile", "entries", "other".
func (h *HostileLog) Requests() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for k, v := range h.requests {
		out[k] = v
	}
	return out
}

func (h *HostileLog) count(kind string) {
	h.mu.Lock()
	h.requests[kind]++
	h.mu.Unlock()
}

// ServeHTTP serves /checkpoint, /tile/L/N[.p/W] and /tile/entries/N[.p/W]
// under any prefix; anything else is 404.
func (h *HostileLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if strings.HasSuffix(p, "/checkpoint") {
		h.count("checkpoint")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(h.note)
		return
	}
	i := strings.Index(p, "/tile/")
	if i < 0 {
		h.count("other")
		http.NotFound(w, r)
		return
	}
	t, err := merkle.ParseTilePath(p[i+1:])
	if err != nil || t.Level > 8 {
		h.count("other")
		http.NotFound(w, r)
		return
	}
	if t.IsEntries() {
		h.count("entries")
		data := h.bundle
		if h.lie != LieOversizeBundles {
			data = data[:t.Width*(2+merkle.MaxEntrySize)]
		}
		h.bundles.Add(1)
		h.bytesSent.Add(int64(len(data)))
		if h.lie == LieOversizeBundles {
			// No Content-Length: the client must stop reading by itself.
			for len(data) > 0 {
				n := min(len(data), 1<<20)
				if _, err := w.Write(data[:n]); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				data = data[n:]
			}
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data)
		return
	}
	h.count("tile")
	out := make([]byte, 0, t.Width*sha256.Size)
	for range t.Width {
		out = append(out, h.level[t.Level][:]...)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.Write(out)
}

// String names the log for a test's name.
func (h *HostileLog) String() string { return fmt.Sprintf("%s/size=%d", h.lie, h.size) }
