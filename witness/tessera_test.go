package witness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/storage/posix"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/merkle"
)

// TestTesseraWitnessClient: a log written by Tessera v1.0.4 (its POSIX
// driver), configured with `zarlog witness` as its one required witness,
// gets every checkpoint cosigned through Tessera's own witness client (a
// third-party implementation of C2SP tlog-witness, pinned by go.mod). The
// second session starts from a checkpoint the witness has never seen, so
// Tessera's client meets our 409 (the witness's size, text/x.tlog.size)
// and must follow it.
func TestTesseraWitnessClient(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	skey, vkey, err := note.GenerateKey(nil, "tessera.example/log")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}

	// The witness.
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	if err := os.WriteFile(logs, []byte("log "+vkey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithCancel(ctx)
	ready := make(chan Info, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(wctx, ServeConfig{Dir: filepath.Join(dir, "w"), Addr: "127.0.0.1:0", LogsFile: logs,
			Init: true, Name: "witness.example/w1", Ready: func(i Info) { ready <- i }})
	}()
	defer func() { wcancel(); <-done }()
	var wi Info
	select {
	case wi = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	wv, err := merkle.NewCosignatureVerifier(wi.VerifierKey)
	if err != nil {
		t.Fatal(err)
	}
	policy := fmt.Sprintf("witness w1 %s %s\nquorum w1\n", wi.VerifierKey, strings.TrimSuffix(wi.AddCheckpointURL, "/add-checkpoint"))
	group, err := tessera.NewWitnessGroupFromPolicy([]byte(policy))
	if err != nil {
		t.Fatal(err)
	}

	root := t.TempDir()
	session := func(withWitness bool, entries int) []byte {
		sctx, scancel := context.WithCancel(ctx)
		defer scancel()
		driver, err := posix.New(sctx, posix.Config{Path: root})
		if err != nil {
			t.Fatal(err)
		}
		opts := tessera.NewAppendOptions().WithCheckpointSigner(signer).WithBatching(64, 10*time.Millisecond).WithCheckpointInterval(100 * time.Millisecond)
		if withWitness {
			opts = opts.WithWitnesses(group, &tessera.WitnessOptions{Timeout: 10 * time.Second})
		}
		app, shutdown, reader, err := tessera.NewAppender(sctx, driver, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer shutdown(context.Background())
		await := tessera.NewPublicationAwaiter(sctx, reader.ReadCheckpoint, 10*time.Millisecond)
		var cp []byte
		for i := range entries {
			if _, cp, err = await.Await(sctx, app.Add(sctx, tessera.NewEntry(fmt.Appendf(nil, "entry %d", i)))); err != nil {
				t.Fatal(err)
			}
		}
		return cp
	}
	// A first session without the witness: a checkpoint the witness never saw.
	session(false, 5)
	// Then with it: every published checkpoint carries its cosignature.
	cp := session(true, 20)
	n, err := note.Open(cp, note.VerifierList(wv))
	if err != nil {
		t.Fatalf("Tessera's checkpoint has no valid cosignature of zarlog's witness: %v\n%s", err, cp)
	}
	c, err := merkle.ParseCheckpoint([]byte(n.Text))
	if err != nil || c.Size < 25 {
		t.Fatalf("checkpoint %+v, %v", c, err)
	}
}
