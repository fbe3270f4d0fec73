package mirror

// The adapters between a follow.Store (the verified copy) and the
// publisher's interfaces: the read API's LogReader, the Bundler's
// BundleSource, the pages' GameSource and StatsSource.

import (
	"context"
	"errors"
	"fmt"

	"github.com/zarlog/zarlog/internal/follow"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/publisher"
)

// A LogReader is the verified copy as the publisher's LogReader: the
// accepted checkpoint, and the tiles of its tree only.
type LogReader struct{ S *follow.Store }

// ReadTiles implements merkle.TileReader over the verified tree.
func (r LogReader) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	return r.S.Verified().ReadTiles(ctx, tiles)
}

// Checkpoint implements publisher.LogReader.
func (r LogReader) Checkpoint(ctx context.Context) ([]byte, error) {
	n, _, _ := r.S.Checkpoint()
	if n == nil {
		return nil, fmt.Errorf("no checkpoint verified yet: %w", merkle.ErrNotFound)
	}
	return n, nil
}

// A BundleSource is the verified copy as the publisher's BundleSource: the
// mirror builds the proof bundles of the games it has verified itself, at
// its own verified checkpoint.
type BundleSource struct{ S *follow.Store }

// ReadTiles implements merkle.TileReader over the verified tree.
func (b BundleSource) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	return b.S.Verified().ReadTiles(ctx, tiles)
}

// Latest implements publisher.BundleSource.
func (b BundleSource) Latest() ([]byte, uint64, <-chan struct{}) {
	n, cp, next := b.S.Latest()
	return n, cp.Size, next
}

// Finished implements publisher.BundleSource: the projected finished games.
func (b BundleSource) Finished(ctx context.Context, from uint64, limit int) ([]publisher.FinishedGame, error) {
	fs, err := b.S.Finished(ctx, from, limit)
	out := make([]publisher.FinishedGame, len(fs))
	for i, f := range fs {
		out[i] = publisher.FinishedGame{Index: f.Index, Game: f.Game}
	}
	return out, err
}

// GameLeaves implements publisher.BundleSource.
func (b BundleSource) GameLeaves(ctx context.Context, game string) ([]publisher.IndexedLeaf, error) {
	g, err := b.S.Game(ctx, game)
	if err != nil {
		return nil, err
	}
	leaves, err := b.S.LeavesAt(ctx, g.Leaves)
	if err != nil {
		return nil, err
	}
	out := make([]publisher.IndexedLeaf, len(leaves))
	for i, l := range leaves {
		out[i] = publisher.IndexedLeaf{Index: g.Leaves[i], Leaf: l}
	}
	return out, nil
}

// A Games is the pages' GameSource: a game's bundle from the mirror's
// bundle store, else its verified events so far.
type Games struct {
	S       *follow.Store
	Bundles *publisher.Store
}

// Game implements publisher.GameSource.
func (g Games) Game(ctx context.Context, id string) (publisher.Game, error) {
	b, err := g.Bundles.Bundle(ctx, id)
	if err == nil {
		return publisher.Game{Status: publisher.GameFinished, Bundle: b}, nil
	}
	if !errors.Is(err, publisher.ErrNoBundle) {
		return publisher.Game{}, err
	}
	st, err := g.S.Game(ctx, id)
	if errors.Is(err, follow.ErrNotFound) {
		return publisher.Game{}, fmt.Errorf("game %q: %w", id, publisher.ErrNoGame)
	}
	if err != nil {
		return publisher.Game{}, err
	}
	leaves, err := g.S.LeavesAt(ctx, st.Leaves)
	if err != nil {
		return publisher.Game{}, err
	}
	return publisher.Game{Status: publisher.GameInPlay, Events: leaves}, nil
}

// A Stats is the pages' StatsSource over the projection's counters.
type Stats struct{ S *follow.Store }

// Stats implements publisher.StatsSource.
func (s Stats) Stats(ctx context.Context) (publisher.Stats, error) {
	st := s.S.Stats()
	return publisher.Stats{
		Opening: st.Opening,
		Play:    st.Play,
		Games:   st.Games,
		LogSize: st.Leaves,
	}, nil
}
