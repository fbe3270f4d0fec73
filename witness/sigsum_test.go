package witness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/internal/sigsumwitness"
	"github.com/zarlog/zarlog/merkle"
)

// TestSigsumWitness: zarlog's witness client against Sigsum's witness,
// sigsum-witness of sigsum-go v0.14.1 (an independent C2SP tlog-witness
// server, pinned by go.mod's tool directive), for a log whose origin is the
// one it requires (sigsum.org/v1/tree/ and the SHA-256 of the log's key).
// Checkpoints of growing size, with consistency proofs, are cosigned and
// the cosignatures verify as cosignature/v1; a stale old size gets its 409
// with its size (a *ConflictError); a wrong consistency proof, and a fork
// of the size it holds, are refused (422: ErrInconsistent); a checkpoint
// with a bad signature is refused (403: ErrForbidden); a log of any other
// origin is unknown to it (404: ErrUnknownLog), which is why a zarlog log
// must take the Sigsum origin to be cosigned by it; a Group following a
// tlog-policy gets the log's note cosigned after following a 409; and a
// restarted witness keeps its key and its size.
func TestSigsumWitness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds sigsum-witness: not in -short")
	}
	ctx := context.Background()
	skey, vkey, err := sigsumwitness.LogKey(testRand(21))
	if err != nil {
		t.Fatal(err)
	}
	l := newTestLogKey(t, skey, vkey, "main")
	if !strings.HasPrefix(l.origin, "sigsum.org/v1/tree/") {
		t.Fatalf("LogKey's origin %q", l.origin)
	}
	dir := t.TempDir()
	var logs bytes.Buffer
	sw, err := sigsumwitness.Start(ctx, sigsumwitness.Config{Dir: dir, Log: vkey, Rand: testRand(22), Out: &logs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sw.Stop()
		if t.Failed() {
			t.Logf("sigsum-witness said:\n%s", logs.String())
		}
	})
	wv, err := merkle.NewCosignatureVerifier(sw.VerifierKey)
	if err != nil {
		t.Fatal(err)
	}
	client, err := NewClient(sw.URL, wv, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	cosigned := func(msg, lines []byte) {
		t.Helper()
		merged, err := MergeCosignatures(msg, lines)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := merkle.VerifyCosignatures(merged, []*merkle.CosignatureVerifier{wv})
		if err != nil || len(cs) != 1 {
			t.Fatalf("sigsum-witness's cosignature: %v, %v\n%s", cs, err, merged)
		}
	}

	// Sizes 3, then 10 with a proof from 3.
	msg := l.grow(3)
	lines, err := client.AddCheckpoint(ctx, 0, nil, msg)
	if err != nil {
		t.Fatalf("size 3: %v", err)
	}
	cosigned(msg, lines)
	msg = l.grow(7)
	lines, err = client.AddCheckpoint(ctx, 3, l.proof(3), msg)
	if err != nil {
		t.Fatalf("size 10 from 3: %v", err)
	}
	cosigned(msg, lines)

	// A stale old size: 409 with its size.
	msg = l.grow(2)
	_, err = client.AddCheckpoint(ctx, 3, l.proofTo(3, 12), msg)
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Size != 10 || ce.RootMismatch {
		t.Fatalf("stale old size 3: %v (%+v), want a conflict at size 10", err, ce)
	}

	// A wrong consistency proof from its size: refused.
	bad := l.proofTo(10, 12)
	bad[0][0] ^= 1
	if _, err = client.AddCheckpoint(ctx, 10, bad, msg); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("a wrong proof: %v, want ErrInconsistent", err)
	}

	// A fork of size 10: the same key, other leaves. Refused with 422
	// (C2SP tlog-witness says 409), as litewitness does.
	fork := newTestLogKey(t, skey, vkey, "fork")
	forked := fork.grow(10)
	_, err = client.AddCheckpoint(ctx, 10, nil, forked)
	ce = nil
	switch {
	case errors.As(err, &ce) && ce.RootMismatch:
	case errors.Is(err, ErrInconsistent):
		t.Logf("sigsum-witness refuses a fork of its size with 422 (C2SP tlog-witness says 409): %v", err)
	default:
		t.Fatalf("a fork of size 10: %v (%+v), want a refusal", err, ce)
	}

	// A bad log signature: refused.
	tampered := bytes.Clone(msg)
	i := bytes.LastIndexByte(tampered, ' ') + 8
	tampered[i] ^= 'A' ^ 'B'
	if tampered[i] == msg[i] {
		t.Fatal("the tampered signature is the same")
	}
	if _, err = client.AddCheckpoint(ctx, 10, l.proofTo(10, 12), tampered); !errors.Is(err, ErrForbidden) {
		t.Fatalf("a bad signature: %v, want ErrForbidden", err)
	}

	// A log of another origin (any zarlog log not named as Sigsum names
	// logs): unknown to it.
	other := newTestLog(t, "zarlog.example/log", 23, "other")
	if _, err = client.AddCheckpoint(ctx, 0, nil, other.grow(3)); !errors.Is(err, ErrUnknownLog) {
		t.Fatalf("a log of origin %s: %v, want ErrUnknownLog", other.origin, err)
	}
	if _, err := sigsumwitness.Start(ctx, sigsumwitness.Config{Dir: t.TempDir(), Log: other.vkey}); err == nil ||
		!strings.Contains(err.Error(), "cosigns only the origin") {
		t.Fatalf("Start for origin %s: %v, want an error naming the origin it needs", other.origin, err)
	}

	// A Group from a policy: it follows the 409 (it claims 0).
	policy, err := merkle.ParsePolicy(fmt.Appendf(nil, "witness sigsum %s %s\nquorum sigsum\n", sw.VerifierKey, sw.URL))
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGroup(policy, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	msg = l.grow(5)
	out, err := g.Cosign(ctx, msg, TileProofs(l.tiles))
	if err != nil {
		t.Fatalf("Group.Cosign at size %d: %v", l.size(), err)
	}
	if cs, err := merkle.VerifyCosignatures(out, []*merkle.CosignatureVerifier{wv}); err != nil || len(cs) != 1 {
		t.Fatalf("the Group's note: %v, %v\n%s", cs, err, out)
	}

	// Restarted on its directory: the same key, the size it kept (its
	// state file is Sigsum's cosigned tree head).
	sw.Stop()
	state, err := os.ReadFile(sw.StateFile)
	if err != nil || !bytes.Contains(state, []byte("size=17\n")) {
		t.Fatalf("the state file: %v\n%s", err, state)
	}
	sw2, err := sigsumwitness.Start(ctx, sigsumwitness.Config{Dir: dir, Log: vkey, Out: &logs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw2.Stop() })
	if sw2.VerifierKey != sw.VerifierKey {
		t.Fatalf("restarted with key %s, was %s", sw2.VerifierKey, sw.VerifierKey)
	}
	client, err = NewClient(sw2.URL, wv, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.AddCheckpoint(ctx, 0, nil, l.notes[17])
	if ce = nil; !errors.As(err, &ce) || ce.Size != 17 {
		t.Fatalf("after a restart, from 0: %v (%+v), want a conflict at size 17", err, ce)
	}
}
