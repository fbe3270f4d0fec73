package merkle_test

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/zarlog/zarlog/merkle"
)

// A mapStore keeps one growing tile per (level, index), as the ledger's
// Pebble keys do.
type mapStore map[[2]int64][]byte

func (m mapStore) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		d, ok := m[[2]int64{int64(t.Level), int64(t.Index)}]
		if !ok {
			return nil, fmt.Errorf("%s: %w", t.Path(), merkle.ErrNotFound)
		}
		out[i] = d
	}
	return out, nil
}

// Example shows the writer's loop (append, store tiles and state together,
// sign) and a reader proving and checking an entry.
func Example() {
	ctx := context.Background()
	store := mapStore{}
	skey, vkey, err := merkle.GenerateKey(rand.NewChaCha8([32]byte{}), "zarlog.example/log")
	if err != nil {
		panic(err)
	}
	signer, _ := merkle.NewSigner(skey)

	b, err := merkle.NewBuilder(ctx, store, merkle.State{})
	if err != nil {
		panic(err)
	}
	var persisted []byte
	for batch := range 3 {
		var leaves [][]byte
		for i := range 100 {
			leaves = append(leaves, fmt.Appendf(nil, `{"batch":%d,"i":%d}`, batch, i))
		}
		tiles, err := b.Append(leaves)
		if err != nil {
			panic(err)
		}
		// One atomic write: the tiles under (level, index), and the state.
		for _, td := range tiles {
			store[[2]int64{int64(td.Tile.Level), int64(td.Tile.Index)}] = td.Data
		}
		persisted, _ = b.State().MarshalBinary()
		fmt.Println("batch", batch, "wrote", len(tiles), "tiles")
	}
	note, err := merkle.Sign(merkle.Checkpoint{Origin: "zarlog.example/log", Size: b.Size(), Hash: b.Root()}, signer)
	if err != nil {
		panic(err)
	}

	// After a restart the writer continues from the persisted state.
	var st merkle.State
	if err := st.UnmarshalBinary(persisted); err != nil {
		panic(err)
	}
	if _, err := merkle.NewBuilder(ctx, store, st); err != nil {
		panic(err)
	}

	// A reader trusts only the log's vkey.
	verifier, _ := merkle.NewVerifier(vkey)
	cp, err := merkle.Open(note, verifier)
	if err != nil {
		panic(err)
	}
	entries, _ := merkle.ReadEntries(ctx, store, 142, 143, cp.Size)
	proof, _ := merkle.InclusionProof(ctx, store, 142, cp.Size)
	err = merkle.CheckInclusion(merkle.LeafHash(entries[0]), 142, cp.Size, proof, cp.Hash)
	fmt.Printf("%s is leaf 142 of %d: %v\n", entries[0], cp.Size, err == nil)
	// Output:
	// batch 0 wrote 2 tiles
	// batch 1 wrote 2 tiles
	// batch 2 wrote 5 tiles
	// {"batch":1,"i":42} is leaf 142 of 300: true
}
