package mirror

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zarlog/zarlog/follow"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/publisher"
	"github.com/zarlog/zarlog/verifier"
)

// A running is a mirror started by start.
type running struct {
	URL  string
	dir  string
	stop func() error

	mu        sync.Mutex
	cond      *sync.Cond
	last      follow.Result
	lastErr   error
	bundled   map[string]bool
	witnessed map[string]bool // games whose bundle is at a witnessed checkpoint
}

// start runs a mirror of the origin at from in dir until the test ends.
func start(t *testing.T, from, vkey, dir string) *running {
	t.Helper()
	return startWith(t, from, vkey, dir, nil)
}

// startWith is start with a witness policy (nil: none).
func startWith(t *testing.T, from, vkey, dir string, policy []byte) *running {
	t.Helper()
	r := &running{dir: dir, bundled: map[string]bool{}, witnessed: map[string]bool{}}
	r.cond = sync.NewCond(&r.mu)
	ready := make(chan Info, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cfg := Config{From: from, LogKey: vkey, Dir: dir, HTTPAddr: "127.0.0.1:0", Poll: 5 * time.Millisecond, Concurrency: 4, Chunk: 4, WitnessPolicy: policy,
		Ready: func(i Info) { ready <- i },
		Updated: func(res follow.Result, err error) {
			r.mu.Lock()
			r.last, r.lastErr = res, err
			r.cond.Broadcast()
			r.mu.Unlock()
		},
		Bundled: func(a publisher.Announcement) {
			r.mu.Lock()
			r.bundled[a.Game] = true
			r.witnessed[a.Game] = a.Witnessed
			r.cond.Broadcast()
			r.mu.Unlock()
		}}
	go func() { done <- Run(ctx, cfg) }()
	select {
	case i := <-ready:
		r.URL = i.HTTP
	case err := <-done:
		cancel()
		t.Fatalf("mirror.Run: %v", err)
	}
	var once sync.Once
	var runErr error
	r.stop = func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
			r.mu.Lock()
			r.cond.Broadcast()
			r.mu.Unlock()
		})
		return runErr
	}
	t.Cleanup(func() { r.stop() })
	return r
}

// wait waits until cond holds of the last poll's result and the bundles
// built, or fails after a minute.
func (r *running) wait(t *testing.T, what string, cond func(res follow.Result, err error, bundled map[string]bool) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		r.cond.Broadcast()
		r.mu.Unlock()
	})
	defer stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for !cond(r.last, r.lastErr, r.bundled) {
		if ctx.Err() != nil {
			t.Fatalf("waiting for %s: last poll %+v, %v", what, r.last, r.lastErr)
		}
		r.cond.Wait()
	}
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, b)
	}
	return b
}

// TestMirrorUnderLoad follows a ledger while games are appended to it from
// two goroutines and the ledger signs a checkpoint every 20 ms; at the end
// the mirror serves the origin's checkpoint and exactly its tiles and entry
// bundles, an independent tlog-tiles client accepts it, and the mirror's
// own proof bundles verify.
func TestMirrorUnderLoad(t *testing.T) {
	o := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir(), CheckpointInterval: 20 * time.Millisecond})
	m := start(t, o.URL, o.VKey, t.TempDir())
	var ids []string
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := range 2 {
		label := []string{"load-a", "load-b"}[w]
		gids, games := o.Games(t, label, 6, 40)
		mu.Lock()
		ids = append(ids, gids...)
		mu.Unlock()
		wg.Go(func() {
			for _, leaf := range testlog.Interleave(games) {
				o.Append(t, [][]byte{leaf}, 1)
			}
		})
	}
	wg.Wait()
	want := o.Sign(t)
	cp, err := merkle.ParseSignedCheckpoint(want)
	if err != nil {
		t.Fatal(err)
	}
	m.wait(t, "the final checkpoint", func(res follow.Result, err error, _ map[string]bool) bool {
		return err == nil && res.Checkpoint.Size == cp.Size
	})
	if got := get(t, m.URL+"/checkpoint"); !bytes.Equal(got, want) {
		t.Fatalf("the mirror serves checkpoint\n%s\nthe origin\n%s", got, want)
	}
	for _, tile := range merkle.NewTiles(0, cp.Size) {
		if a, b := get(t, m.URL+"/"+tile.Path()), get(t, o.URL+"/"+tile.Path()); !bytes.Equal(a, b) {
			t.Fatalf("%s differs", tile)
		}
	}
	t.Logf("%d leaves, %d tiles and bundles identical", cp.Size, len(merkle.NewTiles(0, cp.Size)))
	if _, err := testonly.Fetch(context.Background(), m.URL+"/", nil, o.VKey, want); err != nil {
		t.Fatalf("an independent client reading the mirror: %v", err)
	}
	m.wait(t, "the mirror's bundles", func(_ follow.Result, _ error, bundled map[string]bool) bool {
		for _, id := range ids {
			if !bundled[id] {
				return false
			}
		}
		return true
	})
	key, _ := verifier.ParseLogKey(o.VKey)
	for _, id := range ids {
		b := get(t, m.URL+"/games/"+id+"/proof.json")
		if rep := verifier.Verify(b, verifier.Options{LogKey: key}); rep.Exit() != 0 {
			t.Fatalf("the mirror's bundle of %s: failed %v", id, rep.Failed())
		}
		get(t, m.URL+"/games/"+id)
	}
	get(t, m.URL+"/stats")
}

// TestMirrorRefusesFork: the origin is swapped for a second ledger with the
// same key and another history; the mirror refuses its checkpoint, keeps
// serving the verified one, writes the evidence and turns /healthz red.
func TestMirrorRefusesFork(t *testing.T) {
	a := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	b := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	a.Play(t, "common", 2, 10)
	b.Play(t, "common", 2, 10)
	a.Play(t, "honest", 2, 10)
	verified := a.Sign(t)
	b.Play(t, "forked", 3, 10)
	var forked bool
	var mu sync.Mutex
	a.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		if forked {
			b.Handler().ServeHTTP(w, r)
			return true
		}
		return false
	})
	dir := t.TempDir()
	m := start(t, a.URL, a.VKey, dir)
	m.wait(t, "the honest checkpoint", func(res follow.Result, err error, _ map[string]bool) bool { return res.Accepted })
	mu.Lock()
	forked = true
	mu.Unlock()
	m.wait(t, "the refusal", func(res follow.Result, err error, _ map[string]bool) bool {
		var ref *follow.Refusal
		return errors.As(err, &ref)
	})
	if got := get(t, m.URL+"/checkpoint"); !bytes.Equal(got, verified) {
		t.Fatal("the mirror does not serve the verified checkpoint after the refusal")
	}
	resp, err := http.Get(m.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/healthz: %s after a refusal", resp.Status)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "evidence", "inconsistent-*.json"))
	if len(files) != 1 {
		t.Fatalf("evidence files: %v", files)
	}
	data, _ := os.ReadFile(files[0])
	e, err := follow.ParseEvidence(data)
	if err != nil {
		t.Fatal(err)
	}
	if e.Verified.Checkpoint != string(verified) || e.ProofFrom != follow.ProofFromLog {
		t.Fatalf("evidence: %+v", e)
	}
}

// TestMirrorWitnessed: the mirror of an origin whose checkpoints two
// witnesses cosign re-serves the origin's witness policy, its latest
// witnessed checkpoint and its emitter keys, and builds each game's bundle
// again at the witnessed checkpoint. So every input of a game page's
// verdict (the bundle, the policy, the emitter keys, the log key) is the
// origin's, byte for byte, and so is the page itself: the mirror's pages
// say what the origin's say. Restarted while the origin is down, it still
// serves them, kept in its directory.
func TestMirrorWitnessed(t *testing.T) {
	if follow.WitnessedPath != publisher.WitnessedPath {
		t.Fatalf("follow reads %s, the publisher serves %s", follow.WitnessedPath, publisher.WitnessedPath)
	}
	o := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir(), Witnesses: 2})
	ids := o.Play(t, "mirror-witnessed", 4, 12)
	o.WaitWitnessed(t, ids...)
	dir := t.TempDir()
	m := start(t, o.URL, o.VKey, dir)
	m.wait(t, "the witnessed bundles", func(_ follow.Result, _ error, _ map[string]bool) bool {
		for _, id := range ids {
			if !m.witnessed[id] {
				return false
			}
		}
		return true
	})
	served := map[string][]byte{}
	for _, path := range []string{publisher.WitnessPolicyPath, publisher.EmitterKeysPath, publisher.WitnessedPath} {
		want := get(t, o.URL+"/"+path)
		if got := get(t, m.URL+"/"+path); !bytes.Equal(got, want) {
			t.Errorf("the mirror's /%s:\n%s\nthe origin's:\n%s", path, got, want)
		}
		served[path] = want
	}
	policy, err := merkle.ParsePolicy(served[publisher.WitnessPolicyPath])
	if err != nil {
		t.Fatal(err)
	}
	key, _ := verifier.ParseLogKey(o.VKey)
	emitters, err := verifier.ParseEmitterKeys(string(bytes.TrimSpace(served[publisher.EmitterKeysPath])))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		b := get(t, m.URL+"/games/"+id+"/proof.json")
		if !bytes.Equal(b, get(t, o.URL+"/games/"+id+"/proof.json")) {
			t.Errorf("the mirror's bundle of %s is not the origin's", id)
		}
		if rep := verifier.Verify(b, verifier.Options{LogKey: key, WitnessPolicy: policy, EmitterKeys: emitters}); rep.Exit() != 0 {
			t.Errorf("the mirror's bundle of %s with the policy and the keys: failed %v", id, rep.Failed())
		}
		if page, opage := get(t, m.URL+"/games/"+id), get(t, o.URL+"/games/"+id); !bytes.Equal(page, opage) {
			t.Errorf("the mirror's page of %s is not the origin's", id)
		}
	}

	// Restarted with the origin down: what it kept.
	if err := m.stop(); err != nil {
		t.Fatal(err)
	}
	o.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return true
	})
	m2 := start(t, o.URL, o.VKey, dir)
	for path, want := range served {
		if got := get(t, m2.URL+"/"+path); !bytes.Equal(got, want) {
			t.Errorf("restarted with the origin down, the mirror's /%s is not the origin's", path)
		}
	}
	if page, err := os.ReadFile(filepath.Join(dir, publisher.EmitterKeysPath)); err != nil || !bytes.Equal(page, served[publisher.EmitterKeysPath]) {
		t.Errorf("DIR/emitter-keys: %v", err)
	}
}

// TestMirrorWithPolicy: a mirror given the origin's witness policy accepts
// only witnessed checkpoints; the origin's /checkpoint carries the log's
// signature alone, so the mirror follows /checkpoint.witnessed.
func TestMirrorWithPolicy(t *testing.T) {
	o := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir(), Witnesses: 2})
	ids := o.Play(t, "mirror-policy", 3, 8)
	o.WaitWitnessed(t, ids...)
	_, wcp, _ := o.Witnessed.Latest()
	m := startWith(t, o.URL, o.VKey, t.TempDir(), o.Policy)
	m.wait(t, "the witnessed checkpoint", func(res follow.Result, err error, _ map[string]bool) bool {
		return err == nil && res.Checkpoint.Size == wcp.Size
	})
	got := get(t, m.URL+"/checkpoint")
	p, err := merkle.ParsePolicy(o.Policy)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Open(got); err != nil {
		t.Errorf("the mirror's checkpoint does not meet the policy: %v\n%s", err, got)
	}
}
