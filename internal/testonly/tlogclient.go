// This file (formerly package tlogtest) reads a C2SP tlog-tiles log over HTTP the way a third
// party does, with github.com/transparency-dev/tessera/client, and checks
// everything it reads: the checkpoint's signature, an inclusion proof of
// every entry built from the log's tiles, and consistency proofs from
// earlier checkpoints. It is test support for zarlog's read API, its static
// export and `zarlog serve`: an independent client must accept what they
// serve.
package testonly

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/transparency-dev/formats/log"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/client"
	"golang.org/x/mod/sumdb/note"
)

// A Log is what Fetch read and checked.
type Log struct {
	Checkpoint *log.Checkpoint
	Note       []byte   // the checkpoint note as served
	Entries    [][]byte // every entry of the checkpoint's tree, in order
}

// Fetch reads the log whose tlog-tiles prefix is base (a URL ending in
// "/") with hc (nil: http.DefaultClient): the checkpoint, verified with the
// log's verifier key vkey; every entry bundle of its tree; the inclusion
// proof of every entry (in a tree of more than 2048 leaves: of the first
// and last 256 and every 97th), built by tessera's ProofBuilder from the
// served tiles and verified against the checkpoint's root; and for each earlier
// checkpoint note (verified with vkey too) the consistency proof to the
// current one. Any failure is an error.
func Fetch(ctx context.Context, base string, hc *http.Client, vkey string, earlier ...[]byte) (*Log, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	f, err := client.NewHTTPFetcher(u, hc)
	if err != nil {
		return nil, err
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, err
	}
	cp, raw, _, err := client.FetchCheckpoint(ctx, f.ReadCheckpoint, v, v.Name())
	if err != nil {
		return nil, fmt.Errorf("fetching the checkpoint: %w", err)
	}
	out := &Log{Checkpoint: cp, Note: raw}
	pb, err := client.NewProofBuilder(ctx, cp.Size, f.ReadTile)
	if err != nil {
		return nil, err
	}
	for b := uint64(0); b*256 < cp.Size; b++ {
		eb, err := client.GetEntryBundle(ctx, f.ReadEntryBundle, b, cp.Size)
		if err != nil {
			return nil, fmt.Errorf("entry bundle %d: %w", b, err)
		}
		want := min(cp.Size-b*256, 256)
		if uint64(len(eb.Entries)) != want {
			return nil, fmt.Errorf("entry bundle %d has %d entries, want %d", b, len(eb.Entries), want)
		}
		out.Entries = append(out.Entries, eb.Entries...)
	}
	for i, e := range out.Entries {
		if !sampled(uint64(i), cp.Size) {
			continue
		}
		p, err := pb.InclusionProof(ctx, uint64(i))
		if err != nil {
			return nil, fmt.Errorf("inclusion proof of entry %d: %w", i, err)
		}
		if err := proof.VerifyInclusion(rfc6962.DefaultHasher, uint64(i), cp.Size, rfc6962.DefaultHasher.HashLeaf(e), p, cp.Hash); err != nil {
			return nil, fmt.Errorf("entry %d of %d: %w", i, cp.Size, err)
		}
	}
	for _, n := range earlier {
		old, _, _, err := log.ParseCheckpoint(n, v.Name(), v)
		if err != nil {
			return nil, fmt.Errorf("an earlier checkpoint: %w", err)
		}
		if old.Size == 0 {
			continue
		}
		if old.Size > cp.Size {
			return nil, fmt.Errorf("an earlier checkpoint has size %d, the log's %d", old.Size, cp.Size)
		}
		p, err := pb.ConsistencyProof(ctx, old.Size, cp.Size)
		if err != nil {
			return nil, fmt.Errorf("consistency proof %d → %d: %w", old.Size, cp.Size, err)
		}
		if err := proof.VerifyConsistency(rfc6962.DefaultHasher, old.Size, cp.Size, p, old.Hash, cp.Hash); err != nil {
			return nil, fmt.Errorf("consistency %d → %d: %w", old.Size, cp.Size, err)
		}
	}
	return out, nil
}

// sampled reports whether Fetch checks the inclusion of entry i of a tree
// of the given size.
func sampled(i, size uint64) bool {
	return size <= 2048 || i < 256 || i >= size-256 || i%97 == 0
}
