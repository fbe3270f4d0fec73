package follow

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/merkle"
)

// TestFollowGrowing follows a log through sizes that start, fill and cross
// entry bundles and tiles of two levels, and checks after each step that the
// copy has the origin's checkpoint and exactly its tiles and bundles.
func TestFollowGrowing(t *testing.T) {
	ctx := context.Background()
	m := newMemLog(t)
	srv := serve(t, m)
	f := newFollower(t, srv.URL, m.vkey, nil)
	for _, n := range []int{1, 0, 254, 1, 1, 300, 255, 513, 1, 65536 - 1327 - 1, 2, 700} {
		m.addN(n, "a")
		want := m.sign()
		res, err := f.Update(ctx)
		if err != nil {
			t.Fatalf("size %d: %v", m.size(), err)
		}
		if res.Checkpoint.Size != m.size() {
			t.Fatalf("size %d: accepted size %d", m.size(), res.Checkpoint.Size)
		}
		if n > 0 != res.Accepted || n == 0 != res.Same {
			t.Fatalf("size %d: %+v after %d new leaves", m.size(), res, n)
		}
		note, _, src := f.store.Checkpoint()
		if !bytes.Equal(note, want) || src != srv.URL+"/checkpoint" {
			t.Fatalf("size %d: stored checkpoint from %q differs from the origin's", m.size(), src)
		}
		if st := f.store.State(); st.Size != m.size() {
			t.Fatalf("stored tree size %d, want %d", st.Size, m.size())
		}
	}
	sameTiles(t, m, f.store, m.size())
	leaves, err := f.store.Leaves(ctx, 65535, 65540)
	if err != nil || !bytes.HasPrefix(leaves[0], []byte("a leaf 65535 ")) {
		t.Fatalf("leaves: %q %v", leaves, err)
	}
	// Nothing beyond the verified tree is served.
	t0 := merkle.Tile{Level: 0, Index: m.size() / 256, Width: int(m.size()%256) + 1}
	if _, err := f.store.Verified().ReadTiles(ctx, []merkle.Tile{t0}); !errors.Is(err, merkle.ErrNotFound) {
		t.Fatalf("%s beyond the verified tree: %v", t0, err)
	}
}

// TestStateAt checks stateAt against the Builder's own state at every size
// up to 1100, read from tiles that have grown beyond that size.
func TestStateAt(t *testing.T) {
	ctx := context.Background()
	m := newMemLog(t)
	var states []merkle.State
	for range 1100 {
		states = append(states, m.b.State())
		m.addN(1, "s")
	}
	for size, want := range states {
		got, err := stateAt(ctx, m, uint64(size))
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if got.Size != want.Size || len(got.Range) != len(want.Range) {
			t.Fatalf("size %d: got %d hashes, want %d", size, len(got.Range), len(want.Range))
		}
		for i := range got.Range {
			if got.Range[i] != want.Range[i] {
				t.Fatalf("size %d: range hash %d differs", size, i)
			}
		}
	}
}

// twoLogs returns an origin of size na and a fork of it of size nb: the
// same key and the first common leaves, then other histories.
func twoLogs(t *testing.T, common, na, nb int) (a, b *memLog) {
	a, b = newMemLog(t), newMemLog(t)
	a.addN(common, "same")
	b.addN(common, "same")
	a.addN(na-common, "honest")
	b.addN(nb-common, "forked")
	return a, b
}

func TestRefusals(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		common, a int // leaves in common, size of the verified log
		b         int // size of the forked log shown next
		kind      string
		proofFrom string
		proven    bool
		splitView bool
	}{
		{name: "fork-same-size", common: 300, a: 600, b: 600, kind: KindFork, proven: true, splitView: true},
		{name: "smaller-other-root", common: 300, a: 600, b: 400, kind: KindInconsistent, proofFrom: ProofFromVerified, proven: true, splitView: true},
		{name: "larger-other-history", common: 300, a: 600, b: 900, kind: KindInconsistent, proofFrom: ProofFromLog, proven: true, splitView: true},
		{name: "larger-fork-from-empty-prefix", common: 0, a: 1, b: 2, kind: KindInconsistent, proofFrom: ProofFromLog, proven: true, splitView: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := twoLogs(t, tc.common, tc.a, tc.b)
			verified := a.sign()
			forked := b.sign()
			srv := serve(t, a)
			f := newFollower(t, srv.URL, a.vkey, nil)
			if _, err := f.Update(ctx); err != nil {
				t.Fatal(err)
			}
			srv.setLog(t, b)
			_, err := f.Update(ctx)
			var ref *Refusal
			if !errors.As(err, &ref) {
				t.Fatalf("Update of the fork: %v, want a *Refusal", err)
			}
			e := ref.Evidence
			if e.Kind != tc.kind || e.ProofFrom != tc.proofFrom || ref.SplitView() != tc.splitView {
				t.Fatalf("evidence kind %q from %q (split view %v), want %q from %q", e.Kind, e.ProofFrom, ref.SplitView(), tc.kind, tc.proofFrom)
			}
			var inc *merkle.InconsistencyError
			if !errors.As(err, &inc) {
				t.Fatalf("the refusal does not wrap an InconsistencyError: %v", err)
			}
			if e.Verified == nil || e.Verified.Checkpoint != string(verified) || e.Conflicting.Checkpoint != string(forked) {
				t.Fatal("the evidence does not hold both signed checkpoints verbatim")
			}
			// The copy still serves the verified checkpoint, its stored tree
			// went back to it, and it follows the honest log again.
			note, _, _ := f.store.Checkpoint()
			if !bytes.Equal(note, verified) || f.store.State().Size != uint64(tc.a) {
				t.Fatalf("after the refusal: checkpoint changed or stored size %d", f.store.State().Size)
			}
			// The record is a file that parses and checks.
			data, err := e.Format()
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := ParseEvidence(data)
			if err != nil {
				t.Fatalf("ParseEvidence: %v\n%s", err, data)
			}
			proven, err := CheckEvidence(parsed, f.key)
			if err != nil || proven != tc.proven {
				t.Fatalf("CheckEvidence: proven %v, %v; want proven %v", proven, err, tc.proven)
			}
			srv.setLog(t, a)
			a.addN(10, "honest")
			a.sign()
			if res, err := f.Update(ctx); err != nil || !res.Accepted {
				t.Fatalf("following the honest log after the refusal: %+v %v", res, err)
			}
			sameTiles(t, a, f.store, a.size())
		})
	}
}

// TestBadEntries: the log serves a tampered entry bundle with its true
// tiles; the follower refuses the checkpoint and names the bundle.
func TestBadEntries(t *testing.T) {
	ctx := context.Background()
	m := newMemLog(t)
	m.addN(300, "a")
	m.sign()
	srv := serve(t, m)
	now := time.Unix(1_800_000_000, 0)
	f := newFollower(t, srv.URL, m.vkey, nil, func(c *Config) { c.Now = func() time.Time { return now } })
	if _, err := f.Update(ctx); err != nil {
		t.Fatal(err)
	}
	m.addN(600, "a")
	m.sign()
	srv.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/tile/entries/002" {
			return false
		}
		entries, _ := merkle.ParseBundle(m.tile(t, merkle.Tile{Level: merkle.EntriesLevel, Index: 2, Width: 256}))
		entries[7] = []byte("a leaf that is not in the tree")
		b, _ := merkle.FormatBundle(entries)
		w.Write(b)
		return true
	})
	_, err := f.Update(ctx)
	var ref *Refusal
	if !errors.As(err, &ref) || !errors.Is(err, ErrEntries) || ref.SplitView() {
		t.Fatalf("Update: %v, want a refusal of kind entries", err)
	}
	if want := "entry 519 of tile/entries/002 hashes to"; !strings.Contains(ref.Evidence.Detail, want) {
		t.Fatalf("detail %q does not say %q", ref.Evidence.Detail, want)
	}
	if f.store.State().Size != 300 {
		t.Fatalf("stored size %d after the refusal, want 300", f.store.State().Size)
	}
	srv.setHook(nil)
	// The same checkpoint is refused again without a fetch for RefuseFor,
	// then fetched again.
	fetched := srv.count("/tile/entries/002")
	if _, err := f.Update(ctx); !errors.As(err, &ref) || srv.count("/tile/entries/002") != fetched {
		t.Fatalf("the same checkpoint within RefuseFor: %v, %d fetches of its bundle, want the refusal and none", err, srv.count("/tile/entries/002")-fetched)
	}
	now = now.Add(RefuseFor)
	if res, err := f.Update(ctx); err != nil || !res.Accepted {
		t.Fatalf("after the log is fixed: %+v %v", res, err)
	}
}

func TestStaleAndSignature(t *testing.T) {
	ctx := context.Background()
	m := newMemLog(t)
	m.addN(100, "a")
	old := m.sign()
	m.addN(100, "a")
	srv := serve(t, m)
	f := newFollower(t, srv.URL, m.vkey, nil)
	m.sign()
	if _, err := f.Update(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := f.Advance(ctx, old, "an old copy")
	if err != nil || !res.Stale || res.Checkpoint.Size != 200 {
		t.Fatalf("an older consistent checkpoint: %+v %v", res, err)
	}
	other := newMemLog(t)
	var err2 error
	if other.signer, _, err2 = testonly.Key("other.example/log"); err2 != nil {
		t.Fatal(err2)
	}
	other.addN(300, "x")
	forged, err := merkle.Sign(merkle.Checkpoint{Origin: "other.example/log", Size: 300, Hash: other.b.Root()}, other.signer)
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string][]byte{"other key": forged, "garbage": []byte("not a note"), "unsigned": []byte(testOrigin + "\n1\n" + strings.Repeat("A", 43) + "=\n")} {
		if _, err := f.Advance(ctx, n, name); !errors.Is(err, merkle.ErrSignature) && !errors.Is(err, merkle.ErrMalformed) {
			t.Fatalf("%s: %v, want a signature error", name, err)
		}
	}
	if _, cp, _ := f.store.Checkpoint(); cp.Size != 200 {
		t.Fatalf("accepted size %d", cp.Size)
	}
}

// TestResume interrupts a catch-up with a log that stops serving bundles,
// reopens the store as a restarted process does, and checks that the
// second run fetches only what the first did not store.
func TestResume(t *testing.T) {
	ctx := context.Background()
	m := newMemLog(t)
	m.addN(256*40+17, "a")
	m.sign()
	srv := serve(t, m)
	fs := vfs.NewMem()
	f := newFollower(t, srv.URL, m.vkey, fs)
	srv.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, "/tile/entries/") && srv.total.Load() > 20 {
			http.Error(w, "gone", http.StatusNotFound)
			return true
		}
		return false
	})
	if _, err := f.Update(ctx); !errors.Is(err, merkle.ErrNotFound) {
		t.Fatalf("Update with a log that stops: %v", err)
	}
	stored := f.store.State().Size
	if note, _, _ := f.store.Checkpoint(); note != nil || stored == 0 || stored%256 != 0 {
		t.Fatalf("after the interruption: checkpoint %q, %d leaves stored", note, stored)
	}
	first := srv.bundleFetches()
	f.store.Close()
	srv.setHook(nil)
	g := newFollower(t, srv.URL, m.vkey, fs)
	res, err := g.Update(ctx)
	if err != nil || !res.Accepted {
		t.Fatalf("resumed Update: %+v %v", res, err)
	}
	if res.Bundles != 41-int(stored/256) {
		t.Fatalf("the resumed run fetched %d bundles, want %d (%d leaves were stored)", res.Bundles, 41-stored/256, stored)
	}
	twice := 0
	for i, n := range srv.bundleFetches() {
		if n > 1 && first[i] > 0 {
			twice++
		}
	}
	t.Logf("stored %d leaves before the interruption; %d of 41 bundles fetched twice", stored, twice)
	sameTiles(t, m, g.store, m.size())
}

// TestPendingCovers: leaves fetched for a checkpoint that could not be
// finished cover a smaller checkpoint shown next, which is accepted without
// fetching anything.
func TestPendingCovers(t *testing.T) {
	ctx := context.Background()
	m := newMemLog(t)
	m.addN(1000, "a")
	mid := m.sign()
	m.addN(3000, "a")
	m.sign()
	srv := serve(t, m)
	f := newFollower(t, srv.URL, m.vkey, nil)
	srv.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/tile/entries/014" {
			http.Error(w, "no", http.StatusForbidden)
			return true
		}
		return false
	})
	if _, err := f.Update(ctx); !errors.Is(err, ErrFetch) {
		t.Fatalf("Update: %v", err)
	}
	if f.store.State().Size < 1000 {
		t.Fatalf("stored %d leaves", f.store.State().Size)
	}
	before := srv.total.Load()
	res, err := f.Advance(ctx, mid, "mid")
	if err != nil || !res.Accepted || res.Bundles != 0 || srv.total.Load() != before {
		t.Fatalf("Advance to a covered checkpoint: %+v %v, %d requests", res, err, srv.total.Load()-before)
	}
	srv.setHook(nil)
	if res, err := f.Update(ctx); err != nil || !res.Accepted {
		t.Fatalf("%+v %v", res, err)
	}
	sameTiles(t, m, f.store, m.size())
}

// TestTransient: a log answering 503 now and then, and deleting partial
// bundles once full (as Tessera does), is followed all the same.
func TestTransient(t *testing.T) {
	ctx := context.Background()
	m := newMemLog(t)
	m.addN(700, "a")
	srv := serve(t, m)
	f := newFollower(t, srv.URL, m.vkey, nil)
	var n atomic.Int64
	srv.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if n.Add(1)%3 == 0 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return true
		}
		if tl, err := merkle.ParseTilePath(strings.TrimPrefix(r.URL.Path, "/")); err == nil && !tl.IsFull() {
			if now, ok := merkle.TileAt(tl.Level, tl.Index, m.size()); ok && now.IsFull() {
				http.Error(w, "partial tiles are gone once full", http.StatusNotFound)
				return true
			}
		}
		return false
	})
	m.addN(600, "a")
	// Bundle 2 is full now: its partial form 002.p/188 of the tree of size
	// 700 is gone, and the follower reads the full one.
	if res, err := f.Advance(ctx, mustSign(t, m, 700), "old"); err != nil || !res.Accepted {
		t.Fatalf("%+v %v", res, err)
	}
	if srv.count("/tile/entries/002.p/188") == 0 || srv.count("/tile/entries/002") == 0 {
		t.Fatal("the partial bundle was not asked for, or the full one not after it")
	}
	m.sign()
	if res, err := f.Update(ctx); err != nil || !res.Accepted {
		t.Fatalf("%+v %v", res, err)
	}
	sameTiles(t, m, f.store, m.size())
}

func mustSign(t *testing.T, m *memLog, size uint64) []byte {
	t.Helper()
	root, err := merkle.RootHash(context.Background(), m, size)
	if err != nil {
		t.Fatal(err)
	}
	n, err := merkle.Sign(merkle.Checkpoint{Origin: testOrigin, Size: size, Hash: root}, m.signer)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPolicy: with a witness policy, a larger checkpoint without the quorum
// is not accepted, and the same checkpoint cosigned is.
func TestPolicy(t *testing.T) {
	ctx := context.Background()
	m := newMemLog(t)
	m.addN(300, "a")
	plain := m.sign()
	wskey, wvkey, err := merkle.GenerateCosignerKey(rand.NewChaCha8([32]byte{3}), "witness.example/w")
	if err != nil {
		t.Fatal(err)
	}
	policy, err := merkle.ParsePolicy([]byte("log " + m.vkey + "\nwitness w " + wvkey + "\nquorum w\n"))
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, m)
	f := newFollower(t, srv.URL, m.vkey, nil, func(c *Config) { c.Policy = policy })
	if _, err := f.Update(ctx); !errors.Is(err, ErrQuorum) {
		t.Fatalf("an uncosigned checkpoint: %v", err)
	}
	if srv.count("/tile/entries/000") != 0 {
		t.Fatal("the entries of a checkpoint without the quorum were fetched")
	}
	w, err := merkle.NewCosigner(wskey, func() time.Time { return time.Unix(1_800_000_000, 0) })
	if err != nil {
		t.Fatal(err)
	}
	cp, _ := merkle.ParseSignedCheckpoint(plain)
	line, err := w.Cosign(cp)
	if err != nil {
		t.Fatal(err)
	}
	cosigned := append(bytes.Clone(plain), line...)
	if res, err := f.Advance(ctx, cosigned, "cosigned"); err != nil || !res.Accepted {
		t.Fatalf("the cosigned checkpoint: %+v %v", res, err)
	}
	// The uncosigned note of the same tree is still checked (same root).
	if res, err := f.Advance(ctx, plain, "plain"); err != nil || !res.Same {
		t.Fatalf("the uncosigned note of the accepted tree: %+v %v", res, err)
	}
	if n, _, _ := f.store.Checkpoint(); !bytes.Equal(n, cosigned) {
		t.Fatal("the cosigned note was replaced by one without the quorum")
	}
}

// TestLead: a larger checkpoint of another history, served with hash tiles
// that do not lead to its own root, gives a record that points at the split
// view without proving it by itself.
func TestLead(t *testing.T) {
	ctx := context.Background()
	a, b := twoLogs(t, 300, 600, 900)
	a.sign()
	b.sign()
	srv := serve(t, a)
	f := newFollower(t, srv.URL, a.vkey, nil)
	if _, err := f.Update(ctx); err != nil {
		t.Fatal(err)
	}
	srv.setLog(t, b)
	srv.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		tl, err := merkle.ParseTilePath(strings.TrimPrefix(r.URL.Path, "/"))
		if err != nil || tl.IsEntries() {
			return false
		}
		w.Write(make([]byte, tl.Width*merkle.HashSize)) // zero hashes
		return true
	})
	_, err := f.Update(ctx)
	var ref *Refusal
	if !errors.As(err, &ref) || ref.Evidence.Kind != KindInconsistent || ref.Evidence.RootAtSmaller != "" {
		t.Fatalf("Update: %v", err)
	}
	if proven, err := CheckEvidence(&ref.Evidence, f.key); proven || err != nil {
		t.Fatalf("CheckEvidence: proven %v, %v; want a lead", proven, err)
	}
}
