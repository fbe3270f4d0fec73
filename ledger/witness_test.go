package ledger

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/zarlog/zarlog/merkle"
)

// fakeWitness cosigns with one witness key, checking the consistency proof
// from the last checkpoint it cosigned, as a tlog-witness does.
type fakeWitness struct {
	t        testing.TB
	cosigner *merkle.Cosigner
	verifier *merkle.CosignatureVerifier
	logKey   *testKeys
	now      time.Time

	mu      sync.Mutex
	calls   int
	fail    error
	other   bool // return a cosigned note of another checkpoint
	partial bool // return the cosigned note with a quorum error (merkle.ErrSignature)
	last    merkle.Checkpoint
}

func newFakeWitness(t testing.TB, k *testKeys) *fakeWitness {
	skey, vkey, err := merkle.GenerateCosignerKey(rand.NewChaCha8([32]byte{9}), "witness.test")
	if err != nil {
		t.Fatal(err)
	}
	w := &fakeWitness{t: t, logKey: k, now: testStart}
	if w.cosigner, err = merkle.NewCosigner(skey, func() time.Time { return w.now }); err != nil {
		t.Fatal(err)
	}
	if w.verifier, err = merkle.NewCosignatureVerifier(vkey); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *fakeWitness) Cosign(ctx context.Context, signed []byte, proofs ConsistencyProver) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls++
	w.now = w.now.Add(time.Second)
	if w.fail != nil {
		return nil, w.fail
	}
	cp, err := merkle.Open(signed, w.logKey.verifier)
	if err != nil {
		return nil, err
	}
	if w.last.Size > 0 {
		p, err := proofs.ConsistencyProof(ctx, w.last.Size, cp.Size)
		if err != nil {
			return nil, err
		}
		if err := merkle.CheckConsistency(w.last.Size, cp.Size, w.last.Hash, cp.Hash, p); err != nil {
			return nil, err
		}
	}
	w.last = cp
	if w.other {
		cp.Size++
		signed, _ = merkle.Sign(cp, w.logKey.signer)
	}
	line, err := w.cosigner.Cosign(cp)
	if err != nil {
		return nil, err
	}
	out := append(append([]byte(nil), signed...), line...)
	if w.partial {
		return out, fmt.Errorf("1 of 2 witnesses: %w", merkle.ErrSignature)
	}
	return out, nil
}

func cosigners(t testing.TB, w *fakeWitness, note []byte) int {
	t.Helper()
	cs, err := merkle.VerifyCosignatures(note, []*merkle.CosignatureVerifier{w.verifier})
	if err != nil {
		t.Fatal(err)
	}
	return len(cs)
}

// TestWitness has checkpoints cosigned: the published and stored note
// carries the cosignature; a failing witness, or one that returns another
// checkpoint, leaves the log's signature alone; an idle log is re-signed and
// cosigned again after ResignInterval.
func TestWitness(t *testing.T) {
	e := newTestEnv(t)
	w := newFakeWitness(t, e.k)
	e.cfg.Witness = w
	e.cfg.ResignInterval = time.Hour
	l := e.open()
	ctx := context.Background()
	gen := newStreamGen(t, e.k, "witness", 23, 3)

	appendAll(t, l, gen.take(20), 20)
	n, err := l.Sign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cosigners(t, w, n) != 1 {
		t.Fatalf("published note has no cosignature:\n%s", n)
	}
	// What is stored is what was published.
	l.Close()
	l = e.open()
	if stored, _, _ := l.Latest(); !bytes.Equal(stored, n) {
		t.Errorf("stored note differs from the published one")
	}

	w.fail = errors.New("witness down")
	appendAll(t, l, gen.take(5), 5)
	n, err = l.Sign(ctx)
	if err != nil || cosigners(t, w, n) != 0 || !strings.Contains(string(n), "\n25\n") {
		t.Fatalf("with the witness down: %v\n%s", err, n)
	}
	w.fail = nil
	w.other = true
	appendAll(t, l, gen.take(5), 5)
	if n, err = l.Sign(ctx); err != nil || cosigners(t, w, n) != 0 {
		t.Fatalf("a witness returning another checkpoint: %v\n%s", err, n)
	}
	w.other = false
	// The policy's quorum not met: the cosignatures gathered are published.
	w.partial = true
	appendAll(t, l, gen.take(5), 5)
	if n, err = l.Sign(ctx); err != nil || cosigners(t, w, n) != 1 {
		t.Fatalf("a quorum not met: %v, want the gathered cosignature published\n%s", err, n)
	}
	w.partial = false

	// Idle: nothing is re-signed before ResignInterval; after it, the
	// same checkpoint is cosigned again and published.
	calls := w.calls
	if _, err := l.Sign(ctx); err != nil || w.calls != calls {
		t.Fatalf("idle Sign before ResignInterval called the witness: %d → %d, %v", calls, w.calls, err)
	}
	_, _, next := l.Latest()
	e.clock.mu.Lock()
	e.clock.t = e.clock.t.Add(2 * time.Hour)
	e.clock.mu.Unlock()
	n2, err := l.Sign(ctx)
	if err != nil || w.calls != calls+1 || cosigners(t, w, n2) != 1 {
		t.Fatalf("idle re-sign: %v, witness calls %d → %d\n%s", err, calls, w.calls, n2)
	}
	select {
	case <-next:
	default:
		t.Error("the re-signed, newly cosigned checkpoint was not published")
	}
}

// TestMetrics checks the counters on a registry after appends and a
// rejection.
func TestMetrics(t *testing.T) {
	e := newTestEnv(t)
	reg := prometheus.NewRegistry()
	e.cfg.Metrics = reg
	l := e.open()
	leaves := newStreamGen(t, e.k, "metrics", 29, 2).take(30)
	appendAll(t, l, leaves, 10)
	mustAppend(t, l, inputs(t, leaves[0]))
	mustAppend(t, l, []Input{{Emitter: emitterA, Data: []byte("x")}})
	mustSign(t, l)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			name := f.GetName()
			for _, lp := range m.GetLabel() {
				name += "/" + lp.GetValue()
			}
			got[name] = value(m)
		}
	}
	for name, want := range map[string]float64{
		"zarlog_ledger_appended_total":           30,
		"zarlog_ledger_duplicates_total":         1,
		"zarlog_ledger_rejected_total/malformed": 1,
		"zarlog_ledger_rejected_total/too-large": 0,
		"zarlog_ledger_tree_size":                30,
		"zarlog_ledger_checkpoint_size":          30,
		"zarlog_ledger_group_inputs":             5, // observations
		"zarlog_ledger_stopped":                  0,
	} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
	// A second ledger on the same registry is refused, not silently merged.
	e2 := newTestEnv(t)
	e2.cfg.Metrics = reg
	if _, err := Open(context.Background(), e2.cfg); err == nil {
		t.Error("a second ledger registered its metrics on the same registry")
	}
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return -1
}
