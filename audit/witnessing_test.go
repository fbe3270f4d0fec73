package audit

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/verifier"
)

// A fakeClock is the auditor's clock in these tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestAuditWitnessed: a log whose games are all witnessed passes an audit
// with its own published policy and with the auditor's copy of it.
func TestAuditWitnessed(t *testing.T) {
	o := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir(), Witnesses: 2})
	ids := o.Play(t, "audit-witnessed", 4, 10)
	o.WaitWitnessed(t, ids...)
	for _, policy := range [][]byte{nil, o.Policy} {
		s := once(t, o.URL, o.VKey, "", func(c *RunConfig) { c.WitnessPolicy = policy })
		if len(s.Problems) != 0 || s.Finished != uint64(len(ids)) {
			t.Errorf("own policy %v: problems %v, %d finished, want none and %d", policy != nil, s.Problems, s.Finished, len(ids))
		}
	}
}

// TestAuditNotWitnessed: games whose bundles are not witnessed yet are
// undecided within the witness grace, not problems; past it, each is a
// problem, and so is the log's witnessed checkpoint that stayed behind the
// log. A witness refusing the log's checkpoint as inconsistent (a fork of
// the log shown to it) stops the witnessing: the log's Submitter reports
// it in its health, and the auditor reports the witnessed checkpoint that
// no longer moves, naming each witness with its cosignature's time.
func TestAuditNotWitnessed(t *testing.T) {
	ctx := context.Background()
	o := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir(), Witnesses: 2, WitnessInterval: 50 * time.Millisecond})
	first := o.Play(t, "audit-first", 2, 8)
	o.WaitWitnessed(t, first...)

	// A fork of the log (another history under the same key: the same
	// first games, then others), larger than the log, shown to witness 1:
	// it cosigns it, and refuses the log's next checkpoints as
	// inconsistent with it.
	fork := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	fork.Play(t, "audit-first", 2, 8)
	fork.Play(t, "fork", 6, 10)
	fnote := fork.Sign(t)
	fcp, err := merkle.ParseSignedCheckpoint(fnote)
	if err != nil {
		t.Fatal(err)
	}
	_, wcp, _ := o.Witnessed.Latest()
	proof, err := merkle.ConsistencyProof(ctx, fork.L.TileReader(), wcp.Size, fcp.Size)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Witnesses[1].AddCheckpoint(ctx, wcp.Size, proof, fnote); err != nil {
		t.Fatalf("witness 1 refused the fork, which extends what it cosigned: %v", err)
	}
	late := o.Play(t, "audit-late", 2, 8)
	o.WaitBundles(t, late...)
	waitHealth(t, o)

	// An auditor with the log's published policy follows the log's
	// /checkpoint, so it sees the late games; one with its own copy of the
	// policy follows the witnessed checkpoints, so it does not, and sees
	// only the witnessed checkpoint that stopped.
	for _, own := range []bool{false, true} {
		// The clock starts now: the witnesses' cosignatures carry the time.
		clock := &fakeClock{t: time.Now()}
		cfg := Config{From: o.URL, LogKey: o.VKey, BundleGrace: time.Hour, Now: clock.Now}
		wantGames := len(late)
		if own {
			cfg.WitnessPolicy, wantGames = o.Policy, 0
		}
		a, err := New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if n, err := a.Pass(ctx, false); err != nil || n != 0 || a.waiting != wantGames {
			t.Fatalf("own policy %v, first pass: %d undecided, %d waiting for the witnesses, %v; want the %d games not witnessed", own, n, a.waiting, err, wantGames)
		}
		if ps, _ := a.Problems(); len(ps) != 0 {
			t.Fatalf("own policy %v: problems within the grace: %v", own, ps)
		}
		clock.Advance(DefaultWitnessGrace + time.Second)
		if n, err := a.Pass(ctx, false); err != nil || n != 0 {
			t.Fatalf("own policy %v, past the grace: %d undecided, %v", own, n, err)
		}
		ps, err := a.Problems()
		if err != nil {
			t.Fatal(err)
		}
		var games, witnessing int
		for _, p := range ps {
			switch {
			case p.Kind == ProblemGame && p.Check == verifier.CheckLogWitnesses:
				games++
			case p.Kind == ProblemWitnessing && strings.Contains(p.Detail, "stopped cosigning") && strings.Contains(p.Detail, "w1.witness.example"):
				witnessing++
			default:
				t.Errorf("own policy %v: unexpected problem %s", own, p)
			}
		}
		if games != wantGames || witnessing != 1 {
			t.Errorf("own policy %v: %d games not witnessed (want %d), %d witnessing problems (want 1): %v", own, games, wantGames, witnessing, ps)
		}
		if err := a.Health(ctx); err == nil {
			t.Errorf("own policy %v: the auditor is healthy with problems", own)
		}
	}
}

// waitHealth waits until the origin's Submitter reports a witness refusing
// the log's checkpoint as inconsistent.
func waitHealth(t *testing.T, o *testlog.Origin) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); o.Submitter.Health() == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the origin's witnessing reports no refusal: %+v", o.Submitter.Status())
		}
	}
	if err := o.Submitter.Health(); !strings.Contains(err.Error(), "w1.witness.example") {
		t.Errorf("the origin's witnessing health: %v", err)
	}
}
