package serve

// The ledger as the publisher reads it (the ledger is a
// publisher.LogStore). The ingest needs no adapter: the ledger is its Sink,
// Locator and CheckpointWaiter, in the ledger's own vocabulary; and the
// ledger's Witness is a *witness.Group itself.

import (
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/publisher"
)

// NewSource returns the ledger as the publisher reads it (the read API's
// LogReader, the pages' GameSource and StatsSource, the Bundler's
// BundleSource): its durable tiles and, for the pages, the proof bundles in
// bundles (nil: none).
func NewSource(l *ledger.Ledger, bundles *publisher.Store) publisher.Source {
	return publisher.Source{Store: l, Tiles: l.TileReader(), Bundles: bundles}
}

// NewBundleSource returns the ledger as the Bundler's
// publisher.BundleSource: NewSource without a bundle store.
func NewBundleSource(l *ledger.Ledger) publisher.Source { return NewSource(l, nil) }
