package audit

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zarlog/zarlog/follow"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/verifier"
)

// origin starts an origin with n finished games of the three schemes and
// waits for their bundles.
func origin(t *testing.T, n int) (*testlog.Origin, []string) {
	t.Helper()
	o := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	ids := o.Play(t, "audit", n, 12)
	o.WaitBundles(t, ids...)
	return o, ids
}

// once runs the auditor once on dir ("" for memory).
func once(t *testing.T, from, vkey, dir string, mod ...func(*RunConfig)) Summary {
	t.Helper()
	cfg := RunConfig{Config: Config{From: from, LogKey: vkey, Dir: dir, EvidenceDir: filepath.Join(t.TempDir(), "evidence"), BundleGrace: time.Nanosecond}, Once: true}
	for _, m := range mod {
		m(&cfg)
	}
	s, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("audit.Run: %v", err)
	}
	return s
}

// countProofs counts the requests of proof bundles through the origin.
func countProofs(o *testlog.Origin) *atomic.Int64 {
	var n atomic.Int64
	o.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/proof.json") {
			n.Add(1)
		}
		return false
	})
	return &n
}

// TestAuditOnce audits a real log whose games are all good, then audits
// it again from the same directory: nothing is verified twice.
func TestAuditOnce(t *testing.T) {
	o, ids := origin(t, 6)
	fetched := countProofs(o)
	dir := t.TempDir()
	s := once(t, o.URL, o.VKey, dir)
	if len(s.Problems) != 0 || s.Finished != uint64(len(ids)) {
		t.Fatalf("problems %v, %d finished games, want none and %d", s.Problems, s.Finished, len(ids))
	}
	if fetched.Load() != int64(len(ids)) {
		t.Fatalf("%d bundles fetched for %d games", fetched.Load(), len(ids))
	}
	more := o.Play(t, "more", 3, 8)
	o.WaitBundles(t, more...)
	s = once(t, o.URL, o.VKey, dir)
	if len(s.Problems) != 0 || s.Finished != uint64(len(ids)+len(more)) {
		t.Fatalf("second run: problems %v, %d finished", s.Problems, s.Finished)
	}
	if got := fetched.Load(); got != int64(len(ids)+len(more)) {
		t.Fatalf("the second run fetched %d bundles, want the %d new ones", got-int64(len(ids)), len(more))
	}
}

// mutate returns the bundle with f applied to its decoded JSON.
func mutate(t *testing.T, bundle []byte, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(bundle, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTamperedBundle: a malicious origin serves a changed bundle for one
// game; the auditor names the game and the check that fails.
func TestTamperedBundle(t *testing.T) {
	o, ids := origin(t, 3)
	victim := ids[0] // a tavlarena-v1 game
	other := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	other.Play(t, "elsewhere", 1, 4)
	forkNote := other.Sign(t)
	for _, tc := range []struct {
		name, check, kind string
		f                 func(m map[string]any)
		missing           bool
	}{
		{name: "flipped-die", kind: ProblemGame, check: verifier.CheckLogAgreement, f: func(m map[string]any) {
			d := m["rolls"].([]any)[2].(map[string]any)["dice"].([]any)
			d[0] = float64(int(d[0].(float64))%6 + 1)
		}},
		{name: "tampered-leaf", kind: ProblemGame, check: verifier.CheckLogInclusion, f: func(m map[string]any) {
			e := m["log"].(map[string]any)["entries"].([]any)[1].(map[string]any)
			e["leaf"] = strings.Replace(e["leaf"].(string), `"seat":0`, `"seat":1`, 1)
		}},
		{name: "swapped-checkpoint", kind: ProblemSplitView, check: "view-consistency", f: func(m map[string]any) {
			m["log"].(map[string]any)["checkpoint"] = string(forkNote)
		}},
		{name: "missing", kind: ProblemMissingBundle, check: "fetch", missing: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path != "/games/"+victim+"/proof.json" {
					return false
				}
				if tc.missing {
					http.NotFound(w, r)
					return true
				}
				b, err := o.Bundles.Bundle(r.Context(), victim)
				if err != nil {
					t.Error(err)
				}
				w.Write(mutate(t, b, tc.f))
				return true
			})
			defer o.SetHook(nil)
			s := once(t, o.URL, o.VKey, "")
			if len(s.Problems) != 1 {
				t.Fatalf("problems: %v, want one", s.Problems)
			}
			p := s.Problems[0]
			if p.Kind != tc.kind || p.Game != victim || p.Check != tc.check {
				t.Fatalf("problem %s, want kind %s, game %s, check %s", p, tc.kind, victim, tc.check)
			}
			if tc.kind == ProblemSplitView {
				data, err := os.ReadFile(p.Evidence)
				if err != nil {
					t.Fatal(err)
				}
				e, err := follow.ParseEvidence(data)
				if err != nil {
					t.Fatal(err)
				}
				if e.Conflicting.Checkpoint != string(forkNote) {
					t.Fatal("the evidence does not hold the bundle's checkpoint")
				}
			}
		})
	}
}

// TestSplitViewSources: the log's /checkpoint is swapped for a fork's, and an
// extra source serves a fork's checkpoint; both are caught with evidence.
func TestSplitViewSources(t *testing.T) {
	a := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	b := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	ids := a.Play(t, "common", 2, 6)
	b.Play(t, "common", 2, 6)
	ids = append(ids, a.Play(t, "honest", 1, 6)...)
	a.WaitBundles(t, ids...)
	b.Play(t, "forked", 2, 6)
	dir := t.TempDir()
	evidence := filepath.Join(t.TempDir(), "evidence")
	withEvidence := func(c *RunConfig) { c.EvidenceDir = evidence }
	if s := once(t, a.URL, a.VKey, dir, withEvidence); len(s.Problems) != 0 {
		t.Fatalf("the honest log: %v", s.Problems)
	}
	// An extra source (a mirror, say) shows the fork.
	s := once(t, a.URL, a.VKey, dir, withEvidence, func(c *RunConfig) { c.Also = []string{b.URL} })
	if len(s.Problems) != 1 || s.Problems[0].Kind != ProblemSplitView || s.Problems[0].Source != b.URL+"/checkpoint" {
		t.Fatalf("with a forked extra source: %v", s.Problems)
	}
	// The log itself now shows the fork, grown by a game (the same two
	// checkpoints seen again from another source are the same evidence).
	b.Play(t, "forked-more", 1, 6)
	a.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		b.Handler().ServeHTTP(w, r)
		return true
	})
	s = once(t, a.URL, a.VKey, dir, withEvidence)
	if len(s.Problems) != 2 || s.Problems[1].Kind != ProblemSplitView || s.Problems[1].Source != a.URL+"/checkpoint" {
		t.Fatalf("with a forked log: %v", s.Problems)
	}
	files, _ := filepath.Glob(filepath.Join(evidence, "*.json"))
	if len(files) != 2 {
		t.Fatalf("evidence files %v", files)
	}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		e, err := follow.ParseEvidence(data)
		if err != nil {
			t.Fatal(err)
		}
		key, _ := verifier.ParseLogKey(a.VKey)
		if _, err := follow.CheckEvidence(e, key); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
}

// TestFollowMode runs the auditor in follow mode while games finish, and
// checks its health turns red at the first problem.
func TestFollowMode(t *testing.T) {
	o, ids := origin(t, 2)
	found := make(chan Problem, 4)
	ctx := context.Background()
	a, err := New(ctx, Config{From: o.URL, LogKey: o.VKey, BundleGrace: time.Hour, Found: func(p Problem) { found <- p }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if n, err := a.Pass(ctx, false); err != nil || n != 0 {
		t.Fatalf("Pass: %d undecided, %v", n, err)
	}
	if err := a.Health(ctx); err != nil {
		t.Fatalf("health: %v", err)
	}
	// A game finishes whose bundle the log does not serve yet: undecided
	// within the grace period.
	o.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/proof.json") && !strings.Contains(r.URL.Path, ids[0]) && !strings.Contains(r.URL.Path, ids[1]) {
			http.NotFound(w, r)
			return true
		}
		return false
	})
	late := o.Play(t, "late", 1, 6)
	o.WaitBundles(t, late...)
	if n, err := a.Pass(ctx, false); err != nil || n != 1 {
		t.Fatalf("Pass with a missing bundle: %d undecided, %v", n, err)
	}
	o.SetHook(nil)
	if n, err := a.Pass(ctx, false); err != nil || n != 0 {
		t.Fatalf("Pass once it is served: %d undecided, %v", n, err)
	}
	if err := a.Health(ctx); err != nil {
		t.Fatalf("health: %v", err)
	}
	// A failed game: the origin serves a bundle with a changed die.
	bad := o.Play(t, "bad", 1, 6)
	o.WaitBundles(t, bad...)
	o.SetHook(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/games/"+bad[0]+"/proof.json" {
			return false
		}
		b, _ := o.Bundles.Bundle(r.Context(), bad[0])
		w.Write(mutate(t, b, func(m map[string]any) {
			d := m["rolls"].([]any)[0].(map[string]any)["dice"].([]any)
			d[1] = float64(int(d[1].(float64))%6 + 1)
		}))
		return true
	})
	if _, err := a.Pass(ctx, false); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-found:
		if p.Game != bad[0] {
			t.Fatalf("problem %s", p)
		}
	default:
		t.Fatal("no problem reported")
	}
	if err := a.Health(ctx); err == nil || !strings.Contains(err.Error(), bad[0]) {
		t.Fatalf("health after a problem: %v", err)
	}
}
