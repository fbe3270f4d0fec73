package serve_test

import (
	"github.com/zarlog/zarlog/internal/serve"

	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/verifier"
	"github.com/zarlog/zarlog/wire"
)

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRestore is the backup the README describes: of a stopped service's
// data directory only the key and ledger/ are kept. A service started on
// them (with and without --rebuild of the projections) serves the same log,
// consistent with the checkpoints published before, rebuilds every game's
// bundle, and takes new games.
func TestRestore(t *testing.T) {
	ctx := testCtx(t)
	signer, vkey, err := testonly.Key(emitter)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := start(t, serve.Config{Dir: dir, EmitterKeys: []string{vkey}, CheckpointInterval: 20 * time.Millisecond})
	b, _, _ := backend(t, r.info.NATS, signer, time.Now)
	var ids []string
	for _, label := range []string{"restore-1", "restore-2"} {
		id, err := testlog.Tavlarena(ctx, b, label, `{"moves":"logged","variant":"portes"}`, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	id, err := testlog.PerRoll(ctx, b, "restore-3", `{"variant":"fevga"}`, 6, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, id)
	before, err := testonly.Fetch(ctx, r.info.HTTP+"/", nil, r.info.VerifierKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	logKey, err := verifier.ParseLogKey(r.info.VerifierKey)
	if err != nil {
		t.Fatal(err)
	}
	emitterKeys, err := verifier.ParseEmitterKeys(vkey)
	if err != nil {
		t.Fatal(err)
	}

	for _, rebuild := range []bool{false, true} {
		restored := t.TempDir()
		copyTree(t, filepath.Join(dir, "log.key"), filepath.Join(restored, "log.key"))
		copyTree(t, filepath.Join(dir, "ledger"), filepath.Join(restored, "ledger"))
		r2 := start(t, serve.Config{Dir: restored, EmitterKeys: []string{vkey}, CheckpointInterval: 20 * time.Millisecond, Rebuild: rebuild})
		if r2.info.VerifierKey != r.info.VerifierKey || r2.info.KeyCreated {
			t.Fatalf("rebuild %t: restored key %+v", rebuild, r2.info)
		}
		b2, _, nc := backend(t, r2.info.NATS, signer, time.Now)
		// Bundles are stored in the order the games finished: once the new
		// game's is announced, every old game's is stored too.
		proofs := make(chan *nats.Msg, 16)
		sub, err := nc.ChanSubscribe(wire.Subjects{}.Proofs(emitter), proofs)
		if err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		newID, err := testlog.Tavlarena(ctx, b2, "after-restore", `{"variant":"tavla"}`, 6, nil)
		if err != nil {
			t.Fatalf("rebuild %t: a game after the restore: %v", rebuild, err)
		}
		after, err := testonly.Fetch(ctx, r2.info.HTTP+"/", nil, r2.info.VerifierKey, before.Note)
		if err != nil {
			t.Fatalf("rebuild %t: the restored log: %v", rebuild, err)
		}
		for i, e := range before.Entries {
			if !bytes.Equal(e, after.Entries[i]) {
				t.Fatalf("rebuild %t: entry %d changed", rebuild, i)
			}
		}
	wait:
		for {
			select {
			case m := <-proofs:
				if m.Header.Get(wire.HeaderGame) == newID {
					break wait
				}
			case <-ctx.Done():
				t.Fatalf("rebuild %t: the new game's bundle was not announced", rebuild)
			}
		}
		sub.Unsubscribe()
		for _, id := range append(ids, newID) {
			code, bundle := r2.get("/games/" + id + "/proof.json")
			if code != 200 {
				t.Fatalf("rebuild %t: proof.json of %s: %d", rebuild, id, code)
			}
			if rep := verifier.Verify(bundle, verifier.Options{LogKey: logKey, EmitterKeys: emitterKeys}); rep.Exit() != 0 {
				t.Fatalf("rebuild %t: the rebuilt bundle of %s: %s", rebuild, id, rep.Text(verifier.English))
			}
		}
		if err := r2.stop(); err != nil {
			t.Fatal(err)
		}
	}
}
