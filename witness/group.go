package witness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/zarlog/zarlog/merkle"
)

// TileProofs returns the consistency prover that computes proofs from the
// log's tiles (merkle.TileProver): r must have the tiles of every size a
// proof is asked to, those of the checkpoint being cosigned.
func TileProofs(r merkle.TileReader) merkle.ConsistencyProver { return merkle.TileProver(r) }

// maxConflicts is how many 409 answers in a row Group.Cosign follows for one
// witness and one checkpoint: one is the normal case of a size unknown to the
// group (a first request, a restart, a reply lost after the witness stored
// the checkpoint); another log instance racing this one may cause a second.
const maxConflicts = 2

// A Group asks the witnesses of a C2SP tlog-policy to cosign a log's
// checkpoints and merges their cosignatures. It remembers, for each witness
// and origin, the size the witness last cosigned, so that a request carries
// the right consistency proof; after a restart it relearns the sizes from the
// witnesses' 409 answers.
//
// Who retries: Client.AddCheckpoint never retries. Cosign follows a 409 with
// a new request from the witness's size (at most maxConflicts times per
// witness), since that is the protocol. It does not retry transport errors,
// 5xx or refusals: the log calls Cosign again for its next checkpoint, and a
// witness that missed one is simply asked from the size it has.
//
// A Group is safe for concurrent use, but a log should cosign its
// checkpoints in order, one at a time: the witnesses accept them in order only.
type Group struct {
	policy  *merkle.Policy
	clients []*Client

	mu    sync.Mutex
	sizes map[groupKey]uint64 // the size each witness last cosigned, per origin
}

type groupKey struct {
	witness int
	origin  string
}

// NewGroup returns the group of the policy's witnesses that have a URL (the
// optional last item of a witness line, the witness's submission prefix);
// witnesses without a URL are not asked, but their cosignatures, if already
// on a checkpoint, still count for the policy. hc is passed to NewClient.
// A *Group is the ledger's Witness (ledger.Config.Witness).
func NewGroup(policy *merkle.Policy, hc *http.Client) (*Group, error) {
	g := &Group{policy: policy, sizes: map[groupKey]uint64{}}
	urls := policy.WitnessURLs()
	for i, v := range policy.Witnesses() {
		if urls[i] == "" {
			continue
		}
		c, err := NewClient(urls[i], v, hc)
		if err != nil {
			return nil, err
		}
		g.clients = append(g.clients, c)
	}
	return g, nil
}

// Clients returns the clients of the witnesses the group asks.
func (g *Group) Clients() []*Client { return append([]*Client(nil), g.clients...) }

// Cosign asks every witness of the group, concurrently, to cosign the signed
// checkpoint msg, with the consistency proofs from proofs, and returns msg
// with the cosignatures it got appended (see MergeCosignatures). It returns when every witness has answered or failed;
// give ctx a deadline, which bounds how long a slow witness delays the log.
//
// If the cosignatures meet the policy's quorum the error is nil. Otherwise
// the error wraps merkle.ErrSignature and says which witnesses failed and why
// (joined); the returned note still holds the cosignatures that were
// gathered, for a caller that publishes anyway.
func (g *Group) Cosign(ctx context.Context, msg []byte, proofs merkle.ConsistencyProver) ([]byte, error) {
	text, err := noteText(msg)
	if err != nil {
		return nil, err
	}
	cp, err := merkle.ParseCheckpoint(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	lines := make([][]byte, len(g.clients))
	errs := make([]error, len(g.clients))
	var wg sync.WaitGroup
	for i := range g.clients {
		wg.Go(func() { lines[i], errs[i] = g.ask(ctx, i, cp, msg, proofs) })
	}
	wg.Wait()
	out, err := MergeCosignatures(msg, lines...)
	if err != nil {
		return nil, err
	}
	if _, err := g.policy.CheckWitnesses(out); err != nil {
		return out, errors.Join(append([]error{err}, errs...)...)
	}
	return out, nil
}

// ask gets one witness's cosignature, following its 409 answers.
func (g *Group) ask(ctx context.Context, i int, cp merkle.Checkpoint, msg []byte, proofs merkle.ConsistencyProver) ([]byte, error) {
	c := g.clients[i]
	k := groupKey{i, cp.Origin}
	g.mu.Lock()
	old := g.sizes[k]
	g.mu.Unlock()
	for conflicts := 0; ; conflicts++ {
		if old > cp.Size {
			return nil, fmt.Errorf("witness %s has cosigned size %d of %q, larger than %d", c.Name(), old, cp.Origin, cp.Size)
		}
		var proof []merkle.Hash
		if old > 0 && old < cp.Size {
			p, err := proofs.ConsistencyProof(ctx, old, cp.Size)
			if err != nil {
				return nil, fmt.Errorf("witness %s: consistency proof from %d to %d: %w", c.Name(), old, cp.Size, err)
			}
			proof = p
		}
		lines, err := c.AddCheckpoint(ctx, old, proof, msg)
		var conflict *ConflictError
		if errors.As(err, &conflict) && !conflict.RootMismatch && conflicts < maxConflicts {
			old = conflict.Size
			g.setSize(k, old)
			continue
		}
		if err != nil {
			return nil, err
		}
		g.setSize(k, cp.Size)
		return lines, nil
	}
}

func (g *Group) setSize(k groupKey, size uint64) {
	g.mu.Lock()
	g.sizes[k] = size
	g.mu.Unlock()
}
