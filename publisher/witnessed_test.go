package publisher

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"html"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/verifier"
)

// memWitnessed is a WitnessedSource the test feeds: the checkpoints of a
// memSource, cosigned by test witnesses.
type memWitnessed struct {
	mu   sync.Mutex
	note []byte
	size uint64
	next chan struct{}
}

func newMemWitnessed() *memWitnessed { return &memWitnessed{next: make(chan struct{})} }

func (w *memWitnessed) Latest() ([]byte, merkle.Checkpoint, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.note, merkle.Checkpoint{Size: w.size}, w.next
}

// witness cosigns src's latest checkpoint with n test witnesses (set "w")
// and keeps it.
func (w *memWitnessed) witness(t *testing.T, src *memSource, n int) {
	t.Helper()
	note, size, _ := src.Latest()
	cp, err := merkle.ParseSignedCheckpoint(note)
	if err != nil {
		t.Fatal(err)
	}
	out := string(note)
	for i := range n {
		c, err := merkle.NewCosigner(witnessKey(t, i, "w"), func() time.Time { return time.Unix(1_800_000_000, 0) })
		if err != nil {
			t.Fatal(err)
		}
		line, err := c.Cosign(cp)
		if err != nil {
			t.Fatal(err)
		}
		out += string(line)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.note, w.size = []byte(out), size
	close(w.next)
	w.next = make(chan struct{})
}

// TestBundlerWitnessed: with a witnessed source, a game's bundle is first
// built at the latest signed checkpoint and announced; once a witnessed
// checkpoint covers it, it is built again at that checkpoint, replaces the
// first in the store (the witnessed cursor follows) and is announced again,
// and it verifies against the witness policy. A game that a witnessed
// checkpoint covers when it is first built is built at it at once, and
// announced once; so is every game after a Reset.
func TestBundlerWitnessed(t *testing.T) {
	ctx := context.Background()
	signer, emitterKey := testKey(t, testEmitter)
	src := newMemSource(t)
	store := openTestStore(t, t.TempDir())
	wit := newMemWitnessed()
	policy, err := merkle.ParsePolicy([]byte(policyOf(t, 2, "w")))
	if err != nil {
		t.Fatal(err)
	}
	run := func() (*Bundler, <-chan Announcement, func()) {
		ch := make(chan Announcement, 64)
		b, err := NewBundler(BundlerConfig{Source: src, Store: store, Witnessed: wit, Workers: 2, Batch: 2,
			Announce: func(ctx context.Context, a Announcement) error { ch <- a; return nil }})
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- b.Run(rctx) }()
		var once sync.Once
		stop := func() { once.Do(func() { cancel(); <-done }) }
		t.Cleanup(stop)
		return b, ch, stop
	}
	verifies := func(a Announcement, witnessed bool) {
		t.Helper()
		checkBundle(t, store, a, src.vkey, emitterKey)
		lk, _ := verifier.ParseLogKey(src.vkey)
		r := verifier.Verify(a.Bundle, verifier.Options{LogKey: lk, WitnessPolicy: policy})
		if got := r.Exit() == 0; got != witnessed {
			t.Errorf("bundle of %s (witnessed %v) with the witness policy: exit %d\n%s", a.Game, witnessed, r.Exit(), r.Text(verifier.English))
		}
	}

	ab := src.add(t, tavlarenaGame(t, signer, "witnessed-a", 6), anchoredGame(t, signer, "witnessed-b", 4))
	src.publish(t)
	b1, ch, stop := run()
	for _, want := range ab {
		got := nextAnnouncement(t, ch)
		if got.Game != want || got.Witnessed {
			t.Fatalf("first announcement %s (witnessed %v), want %s, not witnessed", got.Game, got.Witnessed, want)
		}
		verifies(got, false)
	}
	// A witnessed checkpoint (of a larger tree) covers both: built again,
	// replaced, announced again, in log order.
	c := src.add(t, perRollMatch(t, signer, "witnessed-c", 2))
	src.publish(t)
	if got := nextAnnouncement(t, ch); got.Game != c[0] || got.Witnessed {
		t.Fatalf("announcement %s (witnessed %v), want %s", got.Game, got.Witnessed, c[0])
	}
	wit.witness(t, src, 2)
	for _, want := range append(ab, c...) {
		got := nextAnnouncement(t, ch)
		if got.Game != want || !got.Witnessed || got.CheckpointSize != src.size {
			t.Fatalf("announcement %s (witnessed %v, at %d), want %s witnessed at %d", got.Game, got.Witnessed, got.CheckpointSize, want, src.size)
		}
		verifies(got, true)
	}
	if w, _ := store.WitnessedCursor(); w != src.size {
		t.Errorf("witnessed cursor %d, want %d", w, src.size)
	}
	if n := testutil.ToFloat64(b1.witnessed); n != 3 {
		t.Errorf("zarlog_bundles_witnessed_total = %v, want 3", n)
	}
	stop()

	// A game finished and witnessed while the Bundler was down: built at
	// the witnessed checkpoint at once, announced once.
	d := src.add(t, tavlarenaGame(t, signer, "witnessed-d", 3))
	src.publish(t)
	wit.witness(t, src, 2)
	_, ch, stop = run()
	got := nextAnnouncement(t, ch)
	if got.Game != d[0] || !got.Witnessed {
		t.Fatalf("announcement %s (witnessed %v), want %s witnessed", got.Game, got.Witnessed, d[0])
	}
	verifies(got, true)
	// A checkpoint that is not witnessed (one witness of the two): the
	// game stays at the signed one.
	e := src.add(t, tavlarenaGame(t, signer, "witnessed-e", 2))
	src.publish(t)
	if got := nextAnnouncement(t, ch); got.Game != e[0] || got.Witnessed {
		t.Fatalf("announcement %s (witnessed %v), want %s", got.Game, got.Witnessed, e[0])
	}
	stop()
	select {
	case a := <-ch:
		t.Errorf("an extra announcement of %s (witnessed %v)", a.Game, a.Witnessed)
	default:
	}

	// Reset: every game witnessed so far is built at the witnessed
	// checkpoint at once; e, which it does not cover, at the signed one.
	if err := store.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	_, ch, _ = run()
	for _, want := range append(append(append([]string{}, ab...), c...), d...) {
		got := nextAnnouncement(t, ch)
		if got.Game != want || !got.Witnessed {
			t.Fatalf("after Reset: %s (witnessed %v), want %s witnessed", got.Game, got.Witnessed, want)
		}
	}
	if got := nextAnnouncement(t, ch); got.Game != e[0] || got.Witnessed {
		t.Fatalf("after Reset: %s (witnessed %v), want %s not witnessed", got.Game, got.Witnessed, e[0])
	}
}

// TestStoreUpgrade: Upgrade replaces stored bundles only, within the
// cursors, and moves the witnessed cursor; AddWitnessed needs the cursors
// equal.
func TestStoreUpgrade(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t, t.TempDir())
	f := testFixture(t)
	tav, anc := f.games[f.ids["tavlarena-v1"]].Bundle, f.games[f.ids["anchored-v1"]].Bundle
	if err := s.Add(ctx, 10, []StoredBundle{{Index: 3, Game: "g3", Bundle: tav}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		next    uint64
		bundles []StoredBundle
	}{
		{"past the cursor", 11, nil},
		{"a game without a bundle", 10, []StoredBundle{{Index: 4, Game: "g4", Bundle: tav}}},
		{"another game at that index", 10, []StoredBundle{{Index: 3, Game: "g4", Bundle: tav}}},
		{"at or past next", 3, []StoredBundle{{Index: 3, Game: "g3", Bundle: anc}}},
	} {
		if err := s.Upgrade(ctx, tc.next, tc.bundles); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if err := s.AddWitnessed(ctx, 20, nil); err == nil {
		t.Error("AddWitnessed with the witnessed cursor behind the cursor was accepted")
	}
	if err := s.Upgrade(ctx, 10, []StoredBundle{{Index: 3, Game: "g3", Bundle: anc}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.Bundle(ctx, "g3"); string(b) != string(anc) {
		t.Error("the upgraded bundle is not the stored one")
	}
	if w, _ := s.WitnessedCursor(); w != 10 {
		t.Errorf("witnessed cursor %d", w)
	}
	if err := s.AddWitnessed(ctx, 20, []StoredBundle{{Index: 12, Game: "g12", Bundle: tav}}); err != nil {
		t.Fatal(err)
	}
	if w, _ := s.WitnessedCursor(); w != 20 {
		t.Errorf("witnessed cursor %d after AddWitnessed", w)
	}
}

// staticWitness is a WitnessReader of fixed bytes.
type staticWitness struct{ note, policy []byte }

func (w staticWitness) Witnessed() []byte { return w.note }
func (w staticWitness) Policy() []byte    { return w.policy }

// TestExportWitnessed: a game exported with its first bundle is written
// again once the store's bundle is replaced by the witnessed one (and only
// then); checkpoint.witnessed and witness-policy are written as served.
func TestExportWitnessed(t *testing.T) {
	ctx := context.Background()
	signer, _ := testKey(t, testEmitter)
	l := &apiLog{memLog: newMemLog(t)}
	g := l.interleave(t, fillerLeaf, 2, tavlarenaGame(t, signer, "export-witnessed", 4))[0]
	note := l.sign(t)
	first, err := BuildBundle(ctx, l, g, note)
	if err != nil {
		t.Fatal(err)
	}
	policy, witnessed := witnessBundle(t, first, 2)
	id, last := gameIDOf(t, g[0].Leaf), g[len(g)-1].Index
	store := openTestStore(t, t.TempDir())
	if err := store.Add(ctx, last+1, []StoredBundle{{Index: last, Game: id, Bundle: first}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w := staticWitness{policy: []byte(policy)}
	exp, err := NewExporter(ExportConfig{Dir: dir, Log: l, Bundles: store, Witness: &w})
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		return b
	}
	if res, err := exp.Sync(ctx); err != nil || res.Games != 1 {
		t.Fatalf("first Sync: %+v, %v", res, err)
	}
	if !bytes.Equal(read("games/"+id+"/proof.json"), first) || read(WitnessedPath) != nil || string(read(WitnessPolicyPath)) != policy {
		t.Fatal("the first export")
	}
	if res, err := exp.Sync(ctx); err != nil || res.Games != 0 {
		t.Fatalf("a Sync with nothing new wrote %d games (%v)", res.Games, err)
	}
	if err := store.Upgrade(ctx, last+1, []StoredBundle{{Index: last, Game: id, Bundle: witnessed}}); err != nil {
		t.Fatal(err)
	}
	var b struct{ Log struct{ Checkpoint string } }
	if err := json.Unmarshal(witnessed, &b); err != nil {
		t.Fatal(err)
	}
	w.note = []byte(b.Log.Checkpoint)
	if res, err := exp.Sync(ctx); err != nil || res.Games != 1 {
		t.Fatalf("the Sync after the upgrade: %+v, %v", res, err)
	}
	if !bytes.Equal(read("games/"+id+"/proof.json"), witnessed) || !bytes.Equal(read(WitnessedPath), w.note) {
		t.Error("the witnessed bundle or checkpoint was not exported")
	}
	// A new Exporter on the directory (its state file) writes nothing again.
	exp2, err := NewExporter(ExportConfig{Dir: dir, Log: l, Bundles: store, Witness: &w})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := exp2.Sync(ctx); err != nil || res.Games != 0 {
		t.Errorf("a restarted exporter wrote %d games (%v)", res.Games, err)
	}
}

// TestStatementWitnessed: a game page's statement is made with the log's
// witness policy: a witnessed bundle's says how many witnesses cosigned, a
// bundle not yet witnessed says so, and neither says that no policy was
// given (which only a page of a log without witnesses says).
func TestStatementWitnessed(t *testing.T) {
	f := testFixture(t)
	id, other := f.ids["tavlarena-v1"], f.ids["anchored-v1"]
	policy, witnessed := witnessBundle(t, f.games[id].Bundle, 2)
	games := memGames{id: {Status: GameFinished, Bundle: witnessed}, other: f.games[other]}
	cat := verifier.MessageCatalog()
	for _, c := range []struct {
		name, game string
		w          WitnessReader
		says, not  []string
	}{
		{"witnessed", id, staticWitness{policy: []byte(policy)}, []string{cat["StBundleWitnessed"].Format(verifier.English, 2)},
			[]string{cat["StBundleNoWitness"].In(verifier.English), cat["StBundleNotWitnessed"].In(verifier.English)}},
		{"not yet witnessed", other, staticWitness{policy: []byte(policy)}, []string{cat["StBundleNotWitnessed"].In(verifier.English)},
			[]string{cat["StBundleNoWitness"].In(verifier.English), cat["SuFailNote"].In(verifier.English)}},
		{"a log without witnesses", other, nil, []string{cat["StBundleNoWitness"].In(verifier.English)}, nil},
	} {
		p, err := NewPages(Config{Games: games, LogKey: f.vkey, Witness: c.w})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		p.Register(mux)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", "/games/"+c.game, nil))
		// The statement: from the proves list to the end of its section
		// (the page also carries the whole catalog, for the browser).
		page := rec.Body.String()
		i := strings.Index(page, "<h3>"+pageWords["StatementHeading"].In(verifier.English)+"</h3>")
		if i < 0 {
			t.Fatalf("%s: the page has no statement", c.name)
		}
		page = page[i:]
		if i := strings.Index(page, `<p class="hint">`); i >= 0 {
			page = page[:i]
		}
		page = html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(page, ""))
		for _, s := range c.says {
			if !strings.Contains(page, s) {
				t.Errorf("%s: the page does not say %q", c.name, s)
			}
		}
		for _, s := range c.not {
			if strings.Contains(page, s) {
				t.Errorf("%s: the page says %q", c.name, s)
			}
		}
	}
}

// FuzzParseEmitterKeys: never panics; every key it returns is a verifier
// key, and the keys written back one per line parse to the same keys.
func FuzzParseEmitterKeys(f *testing.F) {
	f.Add([]byte("# the platforms\ntavla-east+7a509b4f+AdsgKqrZ11Fp8db91zYF63Fcl7WQx9ioqeu9I0+eMVjn\n\n"))
	f.Add([]byte("not a key\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, err := ParseEmitterKeys(b)
		if err != nil {
			return
		}
		var out []byte
		for _, k := range keys {
			out = append(append(out, k...), '\n')
		}
		again, err := ParseEmitterKeys(out)
		if err != nil || len(again) != len(keys) {
			t.Fatalf("%q: written back %q: %v", keys, again, err)
		}
	})
}
