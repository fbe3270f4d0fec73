package publisher

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/merkle"
)

// storeGames is a GameSource over a bundle store (finished games only).
type storeGames struct{ s *Store }

func (g storeGames) Game(ctx context.Context, id string) (Game, error) {
	b, err := g.s.Bundle(ctx, id)
	if err != nil {
		return Game{}, ErrNoGame
	}
	return Game{Status: GameFinished, Bundle: b}, nil
}

// TestExport exports a log with a finished game, serves the directory with
// http.FileServer and reads it with tessera's client; then the log grows
// past tile boundaries and a second Sync brings the directory up to date:
// the new checkpoint is consistent with the first, the full tiles replaced
// their partial versions, and the game's files and pages are served.
func TestExport(t *testing.T) {
	ctx := context.Background()
	signer, _ := testKey(t, testEmitter)
	l := &apiLog{memLog: newMemLog(t)}
	g := l.interleave(t, fillerLeaf, 2, tavlarenaGame(t, signer, "export", 6))[0]
	for l.builder.Size() < 300 {
		l.append(t, fillerLeaf(int(l.builder.Size())))
	}
	first := l.sign(t)
	bundle, err := BuildBundle(ctx, l, g, first)
	if err != nil {
		t.Fatal(err)
	}
	id := gameIDOf(t, g[0].Leaf)
	store := openTestStore(t, t.TempDir())
	if err := store.Add(ctx, g[len(g)-1].Index+1, []StoredBundle{{Index: g[len(g)-1].Index, Game: id, Bundle: bundle}}); err != nil {
		t.Fatal(err)
	}
	pages, err := NewPages(Config{Games: storeGames{store}, LogKey: l.vkey})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	pages.Register(mux)
	dir := t.TempDir()
	exp, err := NewExporter(ExportConfig{Dir: dir, Log: l, Bundles: store, Pages: mux})
	if err != nil {
		t.Fatal(err)
	}
	res, err := exp.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.OldSize != 0 || res.Size != 300 || res.Tiles != len(merkle.NewTiles(0, 300)) || res.Games != 1 {
		t.Errorf("first Sync: %+v", res)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	check := func(size int, earlier ...[]byte) {
		t.Helper()
		got, err := testonly.Fetch(ctx, srv.URL+"/", srv.Client(), l.vkey, earlier...)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Entries) != size {
			t.Fatalf("%d entries, want %d", len(got.Entries), size)
		}
		all, err := merkle.ReadEntries(ctx, l, 0, uint64(size), uint64(size))
		if err != nil {
			t.Fatal(err)
		}
		for i := range all {
			if !bytes.Equal(got.Entries[i], all[i]) {
				t.Fatalf("exported entry %d differs", i)
			}
		}
	}
	check(300)

	files := map[string][]byte{
		"/games/" + id + "/proof.json":          bundle,
		"/games/" + id + "/proofs/0.tlog-proof": nil,
		"/games/" + id + "/check.py":            nil,
		"/games/" + id + "/":                    nil,
		"/auditor.html":                         nil,
		"/static/verify.js":                     nil,
		"/stats/":                               nil,
	}
	for p, want := range files {
		resp, err := srv.Client().Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || b.Len() == 0 || (want != nil && !bytes.Equal(b.Bytes(), want)) {
			t.Errorf("GET %s from the export: %d, %d bytes", p, resp.StatusCode, b.Len())
		}
		if strings.HasSuffix(p, "/") && !strings.Contains(b.String(), "<html") {
			t.Errorf("GET %s is not a page", p)
		}
	}

	// Nothing new: nothing written.
	if res, err := exp.Sync(ctx); err != nil || res.Tiles != 0 || res.Games != 0 {
		t.Errorf("Sync without a new checkpoint: %+v, %v", res, err)
	}

	// Grow past the end of entry bundle 1 and tile 0/001, and export again
	// with a new Exporter (its progress is in the directory).
	for l.builder.Size() < 600 {
		l.append(t, fillerLeaf(int(l.builder.Size())))
	}
	l.sign(t)
	exp, err = NewExporter(ExportConfig{Dir: dir, Log: l, Bundles: store, Pages: mux})
	if err != nil {
		t.Fatal(err)
	}
	res, err = exp.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.OldSize != 300 || res.Size != 600 || res.Tiles != len(merkle.NewTiles(300, 600)) || res.Games != 0 {
		t.Errorf("second Sync: %+v", res)
	}
	check(600, first)
	for _, p := range []string{"tile/0/001.p", "tile/entries/001.p"} {
		if _, err := os.Stat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s still exists after the full tile was written: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tile/0/002.p/88")); err != nil {
		t.Errorf("the new partial tile: %v", err)
	}
	// No temporary file is left behind.
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})

	// Another log's export directory is refused.
	other := &apiLog{memLog: newMemLog(t)}
	other.append(t, []byte("x"))
	o, _ := testKey(t, "other.example/log")
	n, err := merkle.Sign(merkle.Checkpoint{Origin: "other.example/log", Size: 1, Hash: merkle.LeafHash([]byte("x"))}, o)
	if err != nil {
		t.Fatal(err)
	}
	other.note = n
	exp, err = NewExporter(ExportConfig{Dir: dir, Log: other})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exp.Sync(ctx); err == nil || !strings.Contains(err.Error(), "other.example/log") {
		t.Errorf("exporting another log into the directory: %v", err)
	}
}

// A memTarget is an ExportTarget in memory that counts its reads and
// writes.
type memTarget struct {
	files         map[string][]byte
	reads, writes int
}

func (m *memTarget) Read(_ context.Context, name string) ([]byte, error) {
	m.reads++
	b, ok := m.files[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	return b, nil
}

func (m *memTarget) Write(_ context.Context, name string, data []byte) error {
	m.writes++
	m.files[name] = bytes.Clone(data)
	return nil
}

func (m *memTarget) RemoveAll(_ context.Context, name string) error {
	for k := range m.files {
		if k == name || strings.HasPrefix(k, name+"/") {
			delete(m.files, k)
		}
	}
	return nil
}

// TestExportTarget: an Exporter writing to a Target with NoLog (what serve
// --storage writes to the bucket beside the log that package storage
// writes) writes the game's proof bundle, tlog-proofs and pages, the
// emitter keys and the landing page, but no checkpoint and no tile; keeps
// its progress in its local StateFile; and a second Sync with nothing new
// writes nothing and reads nothing.
func TestExportTarget(t *testing.T) {
	ctx := context.Background()
	signer, _ := testKey(t, testEmitter)
	l := &apiLog{memLog: newMemLog(t)}
	g := l.interleave(t, fillerLeaf, 2, tavlarenaGame(t, signer, "target", 6))[0]
	cp := l.sign(t)
	bundle, err := BuildBundle(ctx, l, g, cp)
	if err != nil {
		t.Fatal(err)
	}
	id := gameIDOf(t, g[0].Leaf)
	store := openTestStore(t, t.TempDir())
	if err := store.Add(ctx, g[len(g)-1].Index+1, []StoredBundle{{Index: g[len(g)-1].Index, Game: id, Bundle: bundle}}); err != nil {
		t.Fatal(err)
	}
	pages, err := NewPages(Config{Games: storeGames{store}, LogKey: l.vkey})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	pages.Register(mux)
	if _, err := NewExporter(ExportConfig{Target: &memTarget{}, Log: l}); err == nil {
		t.Fatal("a Target without a StateFile was taken")
	}
	m := &memTarget{files: map[string][]byte{}}
	state := filepath.Join(t.TempDir(), "state.json")
	exp, err := NewExporter(ExportConfig{Target: m, StateFile: state, NoLog: true, Log: l, Bundles: store, Pages: mux, EmitterKeys: []string{"k1"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := exp.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Games != 1 || res.Tiles != 0 {
		t.Errorf("Sync: %+v", res)
	}
	if !bytes.Equal(m.files["games/"+id+"/proof.json"], bundle) {
		t.Error("the game's bundle was not written")
	}
	for _, name := range []string{"games/" + id + "/index.html", "games/" + id + "/check.py", TlogProofPath(id, 0), "index.html", "stats/index.html", "auditor.html", EmitterKeysPath} {
		if len(m.files[name]) == 0 {
			t.Errorf("%s was not written", name)
		}
	}
	for name := range m.files {
		if name == "checkpoint" || strings.HasPrefix(name, "tile/") {
			t.Errorf("%s was written with NoLog", name)
		}
	}
	if _, err := os.Stat(state); err != nil {
		t.Fatalf("the state file: %v", err)
	}
	m.reads, m.writes = 0, 0
	if res, err := exp.Sync(ctx); err != nil || res.Games != 0 {
		t.Fatalf("second Sync: %+v, %v", res, err)
	}
	if m.reads != 0 || m.writes != 0 {
		t.Errorf("a Sync with nothing new read %d and wrote %d files", m.reads, m.writes)
	}
}
