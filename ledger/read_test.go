package ledger

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// TestReadAPI reads games, leaves, tiles and proofs back and checks them
// against a signed checkpoint.
func TestReadAPI(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	ctx := context.Background()
	leaves := newStreamGen(t, e.k, "read", 11, 4).take(1000)
	appendAll(t, l, leaves, 50)
	cp := mustSign(t, l)

	got, err := l.Leaves(ctx, 0, cp.Size)
	if err != nil || len(got) != len(leaves) {
		t.Fatalf("Leaves: %d, %v", len(got), err)
	}
	for i := range leaves {
		if !bytes.Equal(got[i], leaves[i]) {
			t.Fatalf("leaf %d differs", i)
		}
	}
	if _, err := l.Leaves(ctx, 0, cp.Size+1); !errors.Is(err, ErrRange) {
		t.Errorf("Leaves past the end: %v", err)
	}

	// Every game: its leaves hold its events in seq order, and their
	// multi-proof verifies.
	games := map[string]bool{}
	for _, leaf := range leaves {
		games[parse(t, leaf).Game] = true
	}
	for id := range games {
		g, err := l.Game(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := l.LeavesAt(ctx, g.Leaves)
		if err != nil {
			t.Fatal(err)
		}
		hashes := make([]merkle.Hash, len(evs))
		for seq, leaf := range evs {
			ev := parse(t, leaf)
			if ev.Game != id || ev.Seq != uint64(seq) {
				t.Fatalf("game %s: leaf %d is %s seq %d", id, g.Leaves[seq], ev.Game, ev.Seq)
			}
			hashes[seq] = merkle.LeafHash(leaf)
		}
		table, proofs, err := l.ProveMulti(ctx, g.Leaves, cp.Size)
		if err != nil {
			t.Fatal(err)
		}
		if err := merkle.CheckMulti(hashes, g.Leaves, table, proofs, cp.Size, cp.Hash); err != nil {
			t.Errorf("game %s: %v", id, err)
		}
	}
	if _, err := l.Game(ctx, "no-such-game"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown game: %v", err)
	}

	for _, i := range []uint64{0, 1, 255, 256, 511, 999} {
		p, err := l.InclusionProof(ctx, i, cp.Size)
		if err != nil {
			t.Fatal(err)
		}
		if err := merkle.CheckInclusion(merkle.LeafHash(leaves[i]), i, cp.Size, p, cp.Hash); err != nil {
			t.Errorf("leaf %d: %v", i, err)
		}
		// Asked again, from the tiles' nodes the Ledger keeps: the same.
		if again, err := l.InclusionProof(ctx, i, cp.Size); err != nil || !slices.Equal(again, p) {
			t.Errorf("leaf %d asked again: %x, %v; want %x", i, again, err, p)
		}
		at, err := l.AppendTime(ctx, i)
		if err != nil || at.Before(testStart) {
			t.Errorf("append time of %d: %v %v", i, at, err)
		}
	}
	if _, err := l.InclusionProof(ctx, 0, cp.Size+1); !errors.Is(err, ErrRange) {
		t.Errorf("proof in a tree larger than the log: %v", err)
	}

	// Tiles: each exact width, as a tlog-tiles client asks for it.
	for _, tile := range merkle.NewTiles(0, cp.Size) {
		d, err := l.ReadTile(ctx, tile)
		if err != nil {
			t.Fatalf("%s: %v", tile.Path(), err)
		}
		if tile.IsEntries() {
			es, err := merkle.ParseBundle(d)
			if err != nil || len(es) != tile.Width {
				t.Errorf("%s: %d entries, %v", tile.Path(), len(es), err)
			}
		} else if len(d) != tile.Width*merkle.HashSize {
			t.Errorf("%s: %d bytes", tile.Path(), len(d))
		}
	}
	for _, tile := range []merkle.Tile{
		{Level: 0, Index: 3, Width: 233}, // 3·256+233 = 1001 > 1000
		{Level: 0, Index: 4, Width: 1},   // beyond
		{Level: 1, Index: 0, Width: 4},   // 4·256 > 1000
		{Level: merkle.EntriesLevel, Index: 9, Width: 1},
	} {
		if _, err := l.ReadTile(ctx, tile); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", tile.Path(), err)
		}
	}
	if d, err := l.ReadTile(ctx, merkle.Tile{Level: 0, Index: 3, Width: 232}); err != nil || len(d) != 232*32 {
		t.Errorf("the last partial tile: %d bytes, %v", len(d), err)
	}

	// Finished games, by pages.
	var all []events.FinishedGame
	for from := uint64(0); ; {
		page, err := l.Finished(ctx, from, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		all = append(all, page...)
		from = page[len(page)-1].Index + 1
	}
	st, _ := l.Stats()
	if uint64(len(all)) != st.Finished || len(all) == 0 {
		t.Errorf("%d finished games listed, stats say %d", len(all), st.Finished)
	}
	for _, f := range all {
		g, err := l.Game(ctx, f.Game)
		if err != nil || !g.Closed || g.Leaves[len(g.Leaves)-1] != f.Index || g.Status != f.Status {
			t.Errorf("finished %+v: game %+v, %v", f, g, err)
		}
	}
}
