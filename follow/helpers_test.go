package follow

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/publisher"
)

const testOrigin = "follow.zarlog.example/log"

// A memLog is an in-memory origin log: tiles kept as the ledger keeps them
// (one growing tile per level and index), signed with a deterministic key.
type memLog struct {
	t      testing.TB
	signer note.Signer
	vkey   string

	mu    sync.Mutex
	b     *merkle.Builder
	tiles map[[2]int64][]byte
	note  []byte
}

func newMemLog(t testing.TB) *memLog {
	t.Helper()
	s, vkey, err := testonly.Key(testOrigin)
	if err != nil {
		t.Fatal(err)
	}
	b, err := merkle.NewBuilder(context.Background(), nil, merkle.State{})
	if err != nil {
		t.Fatal(err)
	}
	return &memLog{t: t, signer: s, vkey: vkey, b: b, tiles: map[[2]int64][]byte{}}
}

func (m *memLog) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		d, ok := m.tiles[[2]int64{int64(t.Level), int64(t.Index)}]
		if !ok {
			return nil, fmt.Errorf("%s: %w", t, merkle.ErrNotFound)
		}
		out[i] = d
	}
	return out, nil
}

func (m *memLog) Checkpoint(ctx context.Context) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.note == nil {
		return nil, merkle.ErrNotFound
	}
	return m.note, nil
}

// add appends leaves (unsigned until sign).
func (m *memLog) add(leaves ...[]byte) {
	m.t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	tds, err := m.b.Append(leaves)
	if err != nil {
		m.t.Fatal(err)
	}
	for _, td := range tds {
		m.tiles[[2]int64{int64(td.Tile.Level), int64(td.Tile.Index)}] = td.Data
	}
}

// addN appends n filler leaves, labelled by their index and a history tag.
func (m *memLog) addN(n int, tag string) {
	m.t.Helper()
	leaves := make([][]byte, n)
	size := m.size()
	for i := range leaves {
		leaves[i] = fmt.Appendf(nil, "%s leaf %d %s", tag, size+uint64(i), strings.Repeat("x", int(size+uint64(i))%97))
	}
	m.add(leaves...)
}

func (m *memLog) size() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.b.Size()
}

// sign signs the current tree and publishes the checkpoint.
func (m *memLog) sign() []byte {
	m.t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := merkle.Sign(merkle.Checkpoint{Origin: testOrigin, Size: m.b.Size(), Hash: m.b.Root()}, m.signer)
	if err != nil {
		m.t.Fatal(err)
	}
	m.note = n
	return n
}

// tile returns the origin's tile tl at exactly its width.
func (m *memLog) tile(t testing.TB, tl merkle.Tile) []byte {
	t.Helper()
	d, err := m.ReadTiles(context.Background(), []merkle.Tile{tl})
	if err != nil {
		t.Fatal(err)
	}
	b, err := publisher.TileAtWidth(tl, d[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A server serves a LogReader with publisher.NewAPI, through an optional
// hook that may answer a request itself, and counts requests by path.
type server struct {
	*httptest.Server
	mu       sync.Mutex
	log      publisher.LogReader
	handlers map[publisher.LogReader]http.Handler
	hook     func(w http.ResponseWriter, r *http.Request) bool
	counts   map[string]int
	total    atomic.Int64
}

func serve(t testing.TB, l publisher.LogReader) *server {
	t.Helper()
	s := &server{counts: map[string]int{}, handlers: map[publisher.LogReader]http.Handler{}}
	s.setLog(t, l)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.counts[r.URL.Path]++
		hook := s.hook
		h := s.handler()
		s.mu.Unlock()
		s.total.Add(1)
		if hook != nil && hook(w, r) {
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// setLog makes the server serve l from now on (a log swapped under a
// mirror).
func (s *server) setLog(t testing.TB, l publisher.LogReader) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = l
	if _, ok := s.handlers[l]; ok {
		return
	}
	api, err := publisher.NewAPI(publisher.APIConfig{Log: l})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.Register(mux)
	s.handlers[l] = mux
}

// handler returns the handler of the log served; s.mu is held.
func (s *server) handler() http.Handler { return s.handlers[s.log] }

func (s *server) setHook(h func(w http.ResponseWriter, r *http.Request) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = h
}

// count returns how many times path was requested.
func (s *server) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[path]
}

// bundleFetches returns the requests of entry bundles by index.
func (s *server) bundleFetches() map[uint64]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[uint64]int{}
	for p, n := range s.counts {
		if t, err := merkle.ParseTilePath(strings.TrimPrefix(p, "/")); err == nil && t.IsEntries() {
			out[t.Index] += n
		}
	}
	return out
}

// A follower is a Follower on an in-memory store, with what the tests read.
type follower struct {
	*Follower
	fs    vfs.FS
	dir   string
	store *Store
	key   note.Verifier
	url   string
}

func newFollower(t testing.TB, url, vkey string, fs vfs.FS, opts ...func(*Config)) *follower {
	t.Helper()
	if fs == nil {
		fs = vfs.NewMem()
	}
	key, err := merkle.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	dir := "store"
	if fs == vfs.Default {
		dir = t.TempDir()
	}
	st, err := OpenStore(StoreConfig{Dir: dir, FS: fs, LogKey: key})
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewSource(SourceConfig{URL: url, RetryMin: 1, RetryMax: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Source: src, LogKey: key, Store: st, Concurrency: 4, Chunk: 4}
	for _, o := range opts {
		o(&cfg)
	}
	f, err := New(context.Background(), cfg)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	fl := &follower{Follower: f, fs: fs, dir: dir, store: st, key: key, url: url}
	t.Cleanup(func() { st.Close() })
	return fl
}

// sameTiles fails unless the follower's verified copy has exactly the
// origin's tiles and entry bundles for the tree of the given size.
func sameTiles(t testing.TB, m *memLog, st *Store, size uint64) {
	t.Helper()
	for _, td := range merkle.NewTiles(0, size) {
		want := m.tile(t, td)
		got, err := st.Verified().ReadTiles(context.Background(), []merkle.Tile{td})
		if err != nil {
			t.Fatalf("%s: %v", td, err)
		}
		g, err := publisher.TileAtWidth(td, got[0])
		if err != nil {
			t.Fatalf("%s: %v", td, err)
		}
		if !bytes.Equal(g, want) {
			t.Fatalf("%s differs from the origin's", td)
		}
	}
}
