package litewitness_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"testing"

	"github.com/zarlog/zarlog/internal/litewitness"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/witness"
)

// TestStart starts a litewitness for a log and has it cosign a checkpoint
// of that log through zarlog's witness client: its cosignature verifies
// with the verifier key Start returns.
func TestStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds litewitness: not in -short")
	}
	ctx := context.Background()
	skey, vkey, err := merkle.GenerateKey(rand.Reader, "litewitness-test.example/log")
	if err != nil {
		t.Fatal(err)
	}
	lw, err := litewitness.Start(ctx, litewitness.Config{Dir: t.TempDir(), Name: "litewitness-test.example/w", Logs: []string{vkey}})
	if err != nil {
		t.Fatal(err)
	}
	defer lw.Stop()
	v, err := merkle.NewCosignatureVerifier(lw.VerifierKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := witness.NewClient(lw.URL, v, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	b, err := merkle.NewBuilder(ctx, nil, merkle.State{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append([][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatal(err)
	}
	signer, err := merkle.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := merkle.Sign(merkle.Checkpoint{Origin: "litewitness-test.example/log", Size: b.Size(), Hash: b.Root()}, signer)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := c.AddCheckpoint(ctx, 0, nil, msg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := witness.MergeCosignatures(msg, lines)
	if err != nil {
		t.Fatal(err)
	}
	if cs, err := merkle.VerifyCosignatures(out, []*merkle.CosignatureVerifier{v}); err != nil || len(cs) != 1 {
		t.Fatalf("litewitness's cosignature: %v, %v", cs, err)
	}
}
