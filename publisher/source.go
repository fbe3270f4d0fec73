package publisher

// This file adapts a store of the log to the publisher's interfaces. The
// ledger (package ledger) and a watcher's verified copy (follow)
// are both a LogStore, and a Source over either is what zarlog serve and
// zarlog mirror publish.

import (
	"context"
	"errors"
	"fmt"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// A LogStore is a store of the log and of its projection: the games'
// states, the finished-games index and the roll statistics. Its methods are
// safe for concurrent use and never retry on the caller's behalf.
type LogStore interface {
	// Latest returns the latest signed checkpoint note, verbatim (nil if
	// none yet), its checkpoint, and a channel that is closed when the
	// store changes next.
	Latest() (note []byte, cp merkle.Checkpoint, next <-chan struct{})
	// Finished returns up to limit entries of the finished-games index
	// whose final event has a leaf index ≥ from, in log order. A game may
	// be listed before a checkpoint covers its final event.
	Finished(ctx context.Context, from uint64, limit int) ([]events.FinishedGame, error)
	// Game returns the state of a game after its events in the store, or an
	// error wrapping merkle.ErrNotFound if the store has no event of it.
	Game(ctx context.Context, id string) (*events.Game, error)
	// LeavesAt returns the leaves at the given indices, in the order given.
	LeavesAt(ctx context.Context, indices []uint64) ([][]byte, error)
	// Tally returns the projection's counters and the number of leaves
	// they were counted over.
	Tally() (t events.Tally, leaves uint64, err error)
}

// A Source is a LogStore as the publisher reads it: the read API's
// LogReader, the Bundler's BundleSource, and the pages' GameSource and
// StatsSource.
type Source struct {
	// Store is the log; required.
	Store LogStore
	// Tiles reads the tiles of the tree of every checkpoint Store.Latest
	// returns; required. Which tiles a store serves is its own: all the
	// ledger's durable ones, only the verified tree's from a mirror.
	Tiles merkle.TileReader
	// Bundles, for the GameSource, holds the finished games' proof bundles:
	// a game with a bundle is served as finished, any other from its
	// events so far. Nil: every game from its events.
	Bundles *Store
}

// ReadTiles implements merkle.TileReader with s.Tiles.
func (s Source) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	return s.Tiles.ReadTiles(ctx, tiles)
}

// Checkpoint implements LogReader.
func (s Source) Checkpoint(ctx context.Context) ([]byte, error) {
	note, _, _ := s.Store.Latest()
	if note == nil {
		return nil, fmt.Errorf("no checkpoint yet: %w", merkle.ErrNotFound)
	}
	return note, nil
}

// Latest implements BundleSource.
func (s Source) Latest() ([]byte, uint64, <-chan struct{}) {
	note, cp, next := s.Store.Latest()
	return note, cp.Size, next
}

// Finished implements BundleSource.
func (s Source) Finished(ctx context.Context, from uint64, limit int) ([]events.FinishedGame, error) {
	return s.Store.Finished(ctx, from, limit)
}

// GameLeaves implements BundleSource.
func (s Source) GameLeaves(ctx context.Context, game string) ([]IndexedLeaf, error) {
	g, err := s.Store.Game(ctx, game)
	if err != nil {
		return nil, err
	}
	leaves, err := s.Store.LeavesAt(ctx, g.Leaves)
	if err != nil {
		return nil, err
	}
	out := make([]IndexedLeaf, len(leaves))
	for i, l := range leaves {
		out[i] = IndexedLeaf{Index: g.Leaves[i], Leaf: l}
	}
	return out, nil
}

// Game implements GameSource: a finished game's bundle from s.Bundles,
// else the game's events so far.
func (s Source) Game(ctx context.Context, id string) (Game, error) {
	if s.Bundles != nil {
		b, err := s.Bundles.Bundle(ctx, id)
		if err == nil {
			return Game{Status: GameFinished, Bundle: b}, nil
		}
		if !errors.Is(err, ErrNoBundle) {
			return Game{}, err
		}
	}
	st, err := s.Store.Game(ctx, id)
	if errors.Is(err, merkle.ErrNotFound) {
		return Game{}, fmt.Errorf("game %q: %w", id, ErrNoGame)
	}
	if err != nil {
		return Game{}, err
	}
	leaves, err := s.Store.LeavesAt(ctx, st.Leaves)
	if err != nil {
		return Game{}, err
	}
	return Game{Status: GameInPlay, Events: leaves}, nil
}

// Stats implements StatsSource with the store's tally.
func (s Source) Stats(ctx context.Context) (Stats, error) {
	t, leaves, err := s.Store.Tally()
	if err != nil {
		return Stats{}, err
	}
	return Stats{Opening: t.Opening, Play: t.Play, Games: t.Games, LogSize: leaves}, nil
}
