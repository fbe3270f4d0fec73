package mirror

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/storage/posix"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/follow"
	"github.com/zarlog/zarlog/merkle"
)

// TestTessera: the mirror follows a log written by another tlog-tiles
// implementation, Tessera's POSIX driver, served by http.FileServer, and
// ends with Tessera's checkpoint and exactly its tiles and entry bundles —
// also after Tessera has grown the log and deleted partial tiles that are
// full now.
func TestTessera(t *testing.T) {
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
	root := t.TempDir()
	driver, err := posix.New(ctx, posix.Config{Path: root})
	if err != nil {
		t.Fatal(err)
	}
	opts := tessera.NewAppendOptions().WithCheckpointSigner(signer).WithBatching(256, 10*time.Millisecond).WithCheckpointInterval(100 * time.Millisecond)
	app, shutdown, reader, err := tessera.NewAppender(ctx, driver, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(context.Background())
	await := tessera.NewPublicationAwaiter(ctx, reader.ReadCheckpoint, 10*time.Millisecond)
	// add appends n entries of varied sizes and returns the checkpoint that
	// publishes the last.
	n := 0
	add := func(count int) []byte {
		var fs []tessera.IndexFuture
		for range count {
			fs = append(fs, app.Add(ctx, tessera.NewEntry(fmt.Appendf(nil, "tessera entry %d %s", n, bytes.Repeat([]byte{'z'}, n%300)))))
			n++
		}
		var cp []byte
		for _, f := range fs {
			if _, cp, err = await.Await(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
		return cp
	}
	want := add(700)
	srv := httptest.NewServer(http.FileServer(http.Dir(root)))
	defer srv.Close()

	m := start(t, srv.URL, vkey, t.TempDir())
	for round, count := range []int{0, 1200} {
		if count > 0 {
			want = add(count)
		}
		cp, err := merkle.ParseSignedCheckpoint(want)
		if err != nil || cp.Size != uint64(n) {
			t.Fatalf("Tessera's checkpoint of size %d for %d entries: %v", cp.Size, n, err)
		}
		size := cp.Size
		m.wait(t, fmt.Sprintf("size %d", size), func(res follow.Result, err error, _ map[string]bool) bool {
			return err == nil && res.Checkpoint.Size == size
		})
		if got := get(t, m.URL+"/checkpoint"); !bytes.Equal(got, want) {
			t.Fatalf("round %d: the mirror serves\n%s\nTessera's checkpoint is\n%s", round, got, want)
		}
		for _, tile := range merkle.NewTiles(0, size) {
			if a, b := get(t, m.URL+"/"+tile.Path()), get(t, srv.URL+"/"+tile.Path()); !bytes.Equal(a, b) {
				t.Fatalf("round %d: %s differs from Tessera's", round, tile)
			}
		}
		t.Logf("round %d: %d entries, %d tiles and bundles identical", round, size, len(merkle.NewTiles(0, size)))
	}
}
