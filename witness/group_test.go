package witness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/merkle"
)

// A switchable serves a handler, or 503 while down.
type switchable struct {
	h    http.Handler
	down atomic.Bool
	hits atomic.Int64
}

func (s *switchable) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	s.hits.Add(1)
	if s.down.Load() {
		http.Error(rw, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	s.h.ServeHTTP(rw, r)
}

// TestGroup runs a log's checkpoints through a 2-of-3 policy of real
// witnesses over HTTP: first contact, growth with proofs, a log that lost
// track of the witnesses' sizes (409 and retry), witnesses down and back.
func TestGroup(t *testing.T) {
	ctx := context.Background()
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	var sw []*switchable
	policy := "log " + a.vkey + "\n"
	for i := range 3 {
		skey, _, err := merkle.GenerateCosignerKey(testRand(byte(50+i)), fmt.Sprintf("witness.example/w%d", i))
		if err != nil {
			t.Fatal(err)
		}
		w, err := New(ctx, Config{Dir: "/w", FS: vfs.NewMem(), Logs: []note.Verifier{a.verifier()}, Key: skey, Clock: testClock})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		s := &switchable{h: w.Handler()}
		srv := httptest.NewServer(s)
		t.Cleanup(srv.Close)
		sw = append(sw, s)
		policy += fmt.Sprintf("witness W%d %s %s\n", i, w.VerifierKey(), srv.URL)
	}
	// A fourth witness without a URL is listed but not asked.
	offKey, _ := testWitnessKey(t, "witness.example/offline", 60)
	offC, _ := merkle.NewCosigner(offKey, testClock)
	policy += "witness OFF " + offC.VerifierKey() + "\ngroup G 2 W0 W1 W2 OFF\nquorum G\n"
	p, err := merkle.ParsePolicy([]byte(policy))
	if err != nil {
		t.Fatal(err)
	}
	newGroup := func() *Group {
		g, err := NewGroup(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Clients()) != 3 {
			t.Fatalf("group asks %d witnesses, want 3", len(g.Clients()))
		}
		return g
	}
	g := newGroup()
	cosign := func(g *Group, cp []byte, wantCosigs int, wantErr bool) []byte {
		t.Helper()
		out, err := g.Cosign(ctx, cp, TileProofs(a.tiles))
		if wantErr != (err != nil) {
			t.Fatalf("size %d: Cosign error %v, want error %v", a.size(), err, wantErr)
		}
		if wantErr && !errors.Is(err, merkle.ErrSignature) {
			t.Fatalf("quorum error %v does not wrap merkle.ErrSignature", err)
		}
		cs, verr := merkle.VerifyCosignatures(out, p.Witnesses())
		if verr != nil || len(cs) != wantCosigs {
			t.Fatalf("size %d: %d cosignatures (%v), want %d", a.size(), len(cs), verr, wantCosigs)
		}
		if _, err := merkle.Open(out, a.verifier()); err != nil {
			t.Fatal(err)
		}
		if !wantErr {
			if _, _, err := p.Open(out); err != nil {
				t.Fatalf("policy does not accept the cosigned checkpoint: %v", err)
			}
		}
		return out
	}
	cosign(g, a.grow(5), 3, false) // first contact: old size 0
	cosign(g, a.grow(4), 3, false) // 5 → 9 with proofs
	g = newGroup()
	before := sw[0].hits.Load()
	cosign(g, a.grow(3), 3, false) // sizes forgotten: 409, then 9 → 12
	if n := sw[0].hits.Load() - before; n != 2 {
		t.Errorf("a new group asked w0 %d times, want 2 (a 409, then from its size)", n)
	}
	sw[2].down.Store(true)
	cosign(g, a.grow(3), 2, false) // 2 of 3 is the quorum
	sw[1].down.Store(true)
	out, err := g.Cosign(ctx, a.grow(3), TileProofs(a.tiles))
	if err == nil || !strings.Contains(err.Error(), "witness.example/w1") || !strings.Contains(err.Error(), "witness.example/w2") {
		t.Fatalf("with two witnesses down: %v", err)
	}
	if cs, _ := merkle.VerifyCosignatures(out, p.Witnesses()); len(cs) != 1 {
		t.Fatalf("with two witnesses down the note has %d cosignatures", len(cs))
	}
	// Back up: w1 missed 18, w2 missed 15 and 18; each is asked from the
	// size it has.
	sw[1].down.Store(false)
	sw[2].down.Store(false)
	hits := sw[2].hits.Load()
	cosign(g, a.grow(2), 3, false)
	if n := sw[2].hits.Load() - hits; n != 1 {
		t.Errorf("w2 was asked %d times, want once (the group knew its size)", n)
	}
	// An old checkpoint the witnesses have gone past: the log went back,
	// an inconsistency.
	if _, err := g.Cosign(ctx, a.notes[5], TileProofs(a.tiles)); !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), "larger than the checkpoint's 5") {
		t.Fatalf("old checkpoint: %v", err)
	}
}

// TestGroupNoneQuorum: a policy without witnesses returns the note as is.
func TestGroupNoneQuorum(t *testing.T) {
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	p, err := merkle.ParsePolicy([]byte("log " + a.vkey + "\nquorum none\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGroup(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	cp := a.grow(2)
	out, err := g.Cosign(context.Background(), cp, TileProofs(a.tiles))
	if err != nil || string(out) != string(cp) {
		t.Fatalf("Cosign = %q, %v", out, err)
	}
	if _, err := g.Cosign(context.Background(), []byte("nope"), TileProofs(a.tiles)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Cosign of a non-note: %v", err)
	}
}
