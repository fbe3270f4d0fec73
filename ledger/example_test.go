package ledger_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
)

// Example appends an emitter's event, signs a checkpoint over it and proves
// its inclusion, as the publisher does for a receipt.
func Example() {
	ctx := context.Background()
	rng := rand.NewChaCha8([32]byte{})
	logKey, logVkey, _ := merkle.GenerateKey(rng, "zarlog.example/log") // zarlog keygen --origin
	emKey, emVkey, _ := merkle.GenerateKey(rng, "tavla-east")           // zarlog keygen --emitter
	signer, _ := merkle.NewSigner(logKey)
	verifier, _ := merkle.NewVerifier(logVkey)
	keyring, _ := events.NewKeyring(emVkey)

	l, err := ledger.Open(ctx, ledger.Config{
		Dir: "data", FS: vfs.NewMem(), // a directory on disk in production
		Signer: signer, Verifier: verifier, Emitters: keyring,
		CheckpointInterval: -1, // sign by hand here; the default signs every 100 ms
	})
	if err != nil {
		panic(err)
	}
	defer l.Close()

	// The emitter opens a per-roll-v1 match (a commit is signed).
	em, _ := note.NewSigner(emKey)
	ev, _ := events.NewSigned(events.Header{
		Scheme: events.PerRoll, Game: "00112233-4455-6677-8899-aabbccddeeff", Emitter: "tavla-east",
		Time: time.Date(2026, 11, 30, 10, 37, 31, 0, time.UTC),
	}, events.PerRollCommit{Settings: []byte(`{"variant":"portes"}`)}, em)
	leaf, _ := events.Format(ev)

	out, err := l.Append(ctx, []ledger.Input{{Emitter: "tavla-east", MsgID: ev.ID, Data: leaf}})
	if err != nil {
		panic(err)
	}
	fmt.Println(out[0].ID, out[0].Result, "at", out[0].Index)

	// Again: the same bytes are the same event.
	out, _ = l.Append(ctx, []ledger.Input{{Emitter: "tavla-east", Data: leaf}})
	fmt.Println(out[0].Result, "at", out[0].Index)

	if _, err := l.Sign(ctx); err != nil {
		panic(err)
	}
	signed, err := l.WaitCovering(ctx, out[0].Index)
	if err != nil {
		panic(err)
	}
	cp, _ := merkle.Open(signed, verifier)
	proof, _ := l.InclusionProof(ctx, out[0].Index, cp.Size)
	err = merkle.CheckInclusion(merkle.LeafHash(leaf), out[0].Index, cp.Size, proof, cp.Hash)
	fmt.Println("checkpoint size", cp.Size, "proof verifies:", err == nil)
	// Output:
	// 00112233-4455-6677-8899-aabbccddeeff:0 appended at 0
	// duplicate at 0
	// checkpoint size 1 proof verifies: true
}
