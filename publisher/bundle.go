// This file builds proof bundles: the dice-proof-v1 evidence of a finished
// game plus a log member with every event leaf of the game, their inclusion
// proofs sharing one table of hashes, and the signed checkpoint they lead to
// (docs/FORMATS.md §3; the evidence fields are docs/SCHEMES.md §7). It also
// writes each leaf's proof as a C2SP tlog-proof@v1
// (https://c2sp.org/tlog-proof). Everything here is pure apart from the
// merkle.TileReader it reads proofs through.

package publisher

import (
	"context"
	"errors"
	"fmt"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/verifier"
)

// An IndexedLeaf is one leaf of the log and its index.
type IndexedLeaf struct {
	Index uint64
	Leaf  []byte
}

// ErrNotProvable is wrapped by BuildBundle's errors about its input: leaves
// that are not one finished game's events in log order, or a checkpoint
// that does not cover them. Errors reading tiles wrap what the TileReader
// returned (merkle.ErrNotFound, say) instead.
var ErrNotProvable = errors.New("cannot build a proof bundle")

// BuildBundle returns the proof bundle of one finished game: leaves are all
// of the game's events (seq 0 to its final event: the reveal, or the end of
// a per-roll-v1 match) with their log indices, in log order, and
// signedCheckpoint is a signed checkpoint note whose tree contains them all.
// The inclusion proofs are read through r (one ReadTiles call) for the
// checkpoint's tree size.
//
// The result is canonical JSON (docs/SCHEMES.md §1), so the same game,
// checkpoint and log always give the same bytes. Before returning it,
// BuildBundle verifies it as zarlog-verify does without keys: every proof
// must lead to the checkpoint's root and the leaves must replay to the
// game. The dice checks may fail — the bundle of a game whose reveal did
// not match its commitment is the evidence of that — but a bundle whose
// log checks fail is never returned.
//
// BuildBundle does not verify the checkpoint's signature: the caller
// (the publisher of its own log) gives a checkpoint it trusts.
func BuildBundle(ctx context.Context, r merkle.TileReader, leaves []IndexedLeaf, signedCheckpoint []byte) ([]byte, error) {
	cp, err := merkle.ParseSignedCheckpoint(signedCheckpoint)
	if err != nil {
		return nil, fmt.Errorf("%w: checkpoint: %w", ErrNotProvable, err)
	}
	if len(leaves) == 0 {
		return nil, fmt.Errorf("%w: no leaves", ErrNotProvable)
	}
	indices := make([]uint64, len(leaves))
	for i, l := range leaves {
		if i > 0 && l.Index <= leaves[i-1].Index {
			return nil, fmt.Errorf("%w: leaf %d has index %d, not after %d: leaves must be in log order", ErrNotProvable, i, l.Index, leaves[i-1].Index)
		}
		if l.Index >= cp.Size {
			return nil, fmt.Errorf("%w: leaf %d has index %d, but the checkpoint's tree has %d leaves", ErrNotProvable, i, l.Index, cp.Size)
		}
		indices[i] = l.Index
	}
	g, err := replay(leaves)
	if err != nil {
		return nil, err
	}
	ev, err := verifier.EvidenceOf(g)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotProvable, err)
	}
	hashes, proofs, err := merkle.ProveMulti(ctx, r, indices, cp.Size)
	if err != nil {
		return nil, fmt.Errorf("building the bundle of game %q: %w", g.ID, err)
	}
	l := &verifier.Log{Checkpoint: signedCheckpoint, Tree: cp, Hashes: hashes, Entries: make([]verifier.LogEntry, len(leaves))}
	for i, x := range leaves {
		l.Entries[i] = verifier.LogEntry{Index: x.Index, Leaf: x.Leaf, Proof: proofs[i]}
	}
	ev.Log = l
	b, err := verifier.Format(ev)
	if err != nil {
		return nil, fmt.Errorf("%w: game %q: %w", ErrNotProvable, g.ID, err)
	}
	if err := selfCheck(b); err != nil {
		return nil, fmt.Errorf("%w: game %q: %w", ErrNotProvable, g.ID, err)
	}
	return b, nil
}

// replay applies the leaves' events as the verifier does (no clock checks;
// beacons against the pinned drand chains) and returns the closed game.
func replay(leaves []IndexedLeaf) (*events.Game, error) {
	beacons := events.BeaconsOf(drand.ChainByHash)
	var g *events.Game
	for i, l := range leaves {
		ev, err := events.Parse(l.Leaf)
		if err != nil {
			return nil, fmt.Errorf("%w: leaf %d (index %d): %w", ErrNotProvable, i, l.Index, err)
		}
		if g != nil && ev.Game != g.ID {
			return nil, fmt.Errorf("%w: leaf %d (index %d) is an event of game %q, not %q", ErrNotProvable, i, l.Index, ev.Game, g.ID)
		}
		ng, err := events.Apply(g, ev, events.Env{Emitter: ev.Emitter, Index: l.Index, SkipClockChecks: true, Beacons: beacons})
		if err != nil {
			return nil, fmt.Errorf("%w: leaf %d (index %d, seq %d): %w", ErrNotProvable, i, l.Index, ev.Seq, err)
		}
		g = ng
	}
	if !g.Closed {
		return nil, fmt.Errorf("%w: game %q is not over (%d events, status %s)", ErrNotProvable, g.ID, len(leaves), g.Status)
	}
	return g, nil
}

// selfCheck verifies a built bundle without keys: its log checks must pass.
func selfCheck(bundle []byte) error {
	rep := verifier.Verify(bundle, verifier.Options{})
	for _, name := range []string{verifier.CheckFormat, verifier.CheckLogInclusion, verifier.CheckLogOrder, verifier.CheckLogAgreement} {
		if c, ok := rep.Check(name); !ok || c.Status != verifier.Pass {
			return fmt.Errorf("the built bundle fails its own %s check: %s", name, c.Detail)
		}
	}
	return nil
}

// TlogProofs returns, for each log entry of a proof bundle in order (entry
// i is the game's event seq i), its inclusion proof as a C2SP
// tlog-proof@v1 file: the leaf itself in the extra line, so that each file
// is self-contained, the leaf's index, its proof and the bundle's signed
// checkpoint. It reads nothing but the bundle. zarlog-verify checks such a
// file with --log-key.
func TlogProofs(bundle []byte) ([][]byte, error) {
	ev, err := verifier.Parse(bundle)
	if err != nil {
		return nil, fmt.Errorf("tlog-proofs: %w", err)
	}
	if ev.Log == nil {
		return nil, errors.New("tlog-proofs: the file has no log member: it is not a proof bundle")
	}
	out := make([][]byte, len(ev.Log.Entries))
	for i, e := range ev.Log.Entries {
		p := merkle.TlogProof{Extra: e.Leaf, Index: e.Index, Proof: make([]merkle.Hash, len(e.Proof)), Checkpoint: ev.Log.Checkpoint}
		for j, k := range e.Proof {
			p.Proof[j] = ev.Log.Hashes[k]
		}
		b, err := p.Format()
		if err != nil {
			return nil, fmt.Errorf("tlog-proofs: entry %d (index %d): %w", i, e.Index, err)
		}
		out[i] = b
	}
	return out, nil
}
