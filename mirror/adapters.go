package mirror

// The adapter between a follow.Store (the verified copy) and the
// publisher's interfaces: the store is a publisher.LogStore, served by a
// publisher.Source over its verified tree.

import (
	"github.com/zarlog/zarlog/follow"
	"github.com/zarlog/zarlog/publisher"
)

// NewSource returns the verified copy as the publisher reads it (the read
// API's LogReader, the Bundler's BundleSource, the pages' GameSource and
// StatsSource): the accepted checkpoint, the tiles of its tree only, and,
// for the pages, the proof bundles the mirror built into bundles (nil:
// none). The mirror builds the bundles of the games it has verified itself,
// at its own verified checkpoint.
func NewSource(st *follow.Store, bundles *publisher.Store) publisher.Source {
	return publisher.Source{Store: st, Tiles: st.Verified(), Bundles: bundles}
}
