package witness_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/witness"
)

// tiles keeps one growing tile per (level, index), as a log's store does.
type tiles map[[2]int64][]byte

func (m tiles) ReadTiles(ctx context.Context, ts []merkle.Tile) ([][]byte, error) {
	out := make([][]byte, len(ts))
	for i, t := range ts {
		d, ok := m[[2]int64{int64(t.Level), int64(t.Index)}]
		if !ok {
			return nil, merkle.ErrNotFound
		}
		out[i] = d
	}
	return out, nil
}

// Example shows a log asking its witnesses, listed in a tlog-policy, to
// cosign each new checkpoint, as the ledger does after signing one.
func Example() {
	ctx := context.Background()
	now := func() time.Time { return time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC) }

	// The log: a key and a tree whose tiles it stores.
	skey, vkey, _ := merkle.GenerateKey(rand.NewChaCha8([32]byte{1}), "zarlog.example/log")
	signer, _ := merkle.NewSigner(skey)
	logVerifier, _ := merkle.NewVerifier(vkey)
	store := tiles{}
	b, _ := merkle.NewBuilder(ctx, nil, merkle.State{})

	// A witness configured for the log, served over HTTP.
	wkey, _, _ := merkle.GenerateCosignerKey(rand.NewChaCha8([32]byte{2}), "witness.example/w1")
	w, err := witness.New(ctx, witness.Config{Dir: "/witness", FS: vfs.NewMem(), Logs: []note.Verifier{logVerifier}, Key: wkey, Clock: now})
	if err != nil {
		panic(err)
	}
	defer w.Close()
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()

	// The log's policy: its key, the witness with its URL, the quorum.
	policy, err := merkle.ParsePolicy([]byte("log " + vkey + "\nwitness W1 " + w.VerifierKey() + " " + srv.URL + "\nquorum W1\n"))
	if err != nil {
		panic(err)
	}
	group, err := witness.NewGroup(policy, srv.Client())
	if err != nil {
		panic(err)
	}

	for batch := range 3 {
		tds, _ := b.Append([][]byte{fmt.Appendf(nil, "entry %d", batch)})
		for _, td := range tds {
			store[[2]int64{int64(td.Tile.Level), int64(td.Tile.Index)}] = td.Data
		}
		signed, _ := merkle.Sign(merkle.Checkpoint{Origin: "zarlog.example/log", Size: b.Size(), Hash: b.Root()}, signer)
		cosigned, err := group.Cosign(ctx, signed, witness.TileProofs(store))
		if err != nil {
			panic(err)
		}
		cp, cosigs, err := policy.Open(cosigned)
		fmt.Println("size", cp.Size, "cosigned by", cosigs[0].Name, "at", cosigs[0].Timestamp.Format(time.TimeOnly), err)
	}
	// Output:
	// size 1 cosigned by witness.example/w1 at 10:00:00 <nil>
	// size 2 cosigned by witness.example/w1 at 10:00:00 <nil>
	// size 3 cosigned by witness.example/w1 at 10:00:00 <nil>
}
