package ledger

import (
	"context"
	"testing"

	"github.com/zarlog/zarlog/merkle"
)

func TestSmoke(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	g := newStreamGen(t, e.k, "smoke", 1, 8)
	leaves := g.take(2000)
	appendAll(t, l, leaves, 37)
	cp := mustSign(t, l)
	if cp.Size != 2000 {
		t.Fatalf("size %d", cp.Size)
	}
	p, err := l.InclusionProof(context.Background(), 1234, cp.Size)
	if err != nil {
		t.Fatal(err)
	}
	if err := merkle.CheckInclusion(merkle.LeafHash(leaves[1234]), 1234, cp.Size, p, cp.Hash); err != nil {
		t.Fatal(err)
	}
	st, _ := l.Stats()
	t.Logf("stats: events %d games %d closed %v opening %d play %d", st.Events, st.Games, st.Closed, st.Opening.Rolls, st.Play.Rolls)
	before := dumpProjections(t, l)
	if err := l.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	diffDumps(t, before, dumpProjections(t, l))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = e.open()
	appendAll(t, l, g.take(500), 100)
	cp2 := mustSign(t, l)
	t.Log(cp2.Size)
}
