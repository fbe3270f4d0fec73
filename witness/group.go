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

// A WitnessResult is how one witness answered in a Round.
type WitnessResult struct {
	// Name is the witness's key name.
	Name string
	// Requests is how many add-checkpoint requests were made to it: one,
	// or more when it answered 409 and was asked again from its size.
	Requests int
	// Err is nil if the witness cosigned. Otherwise it says why not; it
	// wraps ErrInconsistent when the witness refused the checkpoint as
	// inconsistent with one it cosigned before (a 422, a 409 at its own size
	// with another root, or a witness ahead of the checkpoint: see
	// AheadError).
	Err error
}

// A RoundResult is what Group.Round gathered for one checkpoint.
type RoundResult struct {
	// Note is the checkpoint sent, with the cosignatures gathered appended
	// (see MergeCosignatures).
	Note []byte
	// Witnesses has one result per witness asked, in the order of Clients.
	Witnesses []WitnessResult
	// Quorum is nil if the cosignatures in Note meet the policy's quorum,
	// and otherwise an error wrapping merkle.ErrSignature that says how
	// many witnesses cosigned.
	Quorum error
}

// An AheadError is a witness that has cosigned a larger checkpoint of the
// log than the one it is asked to cosign: the log has gone back (restored
// from an old backup, say) or another instance signs with its key. No
// witness cosigns a smaller tree, so this is an inconsistency: it wraps
// ErrInconsistent.
type AheadError struct {
	Witness string // the witness's key name
	Origin  string // the log's origin
	Size    uint64 // the size the witness cosigned
	Asked   uint64 // the size of the checkpoint it was asked to cosign
}

func (e *AheadError) Error() string {
	return fmt.Sprintf("witness %s has cosigned size %d of %q, larger than the checkpoint's %d", e.Witness, e.Size, e.Origin, e.Asked)
}

// Unwrap returns ErrInconsistent.
func (e *AheadError) Unwrap() error { return ErrInconsistent }

// Cosign asks every witness of the group, concurrently, to cosign the signed
// checkpoint msg, with the consistency proofs from proofs, and returns msg
// with the cosignatures it got appended (see MergeCosignatures). It returns when every witness has answered or failed;
// give ctx a deadline, which bounds how long a slow witness delays the caller.
//
// If the cosignatures meet the policy's quorum the error is nil. Otherwise
// the error wraps merkle.ErrSignature and says which witnesses failed and why
// (joined); the returned note still holds the cosignatures that were
// gathered, for a caller that publishes anyway. Round says the same per
// witness.
func (g *Group) Cosign(ctx context.Context, msg []byte, proofs merkle.ConsistencyProver) ([]byte, error) {
	r, err := g.Round(ctx, msg, proofs)
	if err != nil {
		return nil, err
	}
	if r.Quorum != nil {
		errs := []error{r.Quorum}
		for _, w := range r.Witnesses {
			errs = append(errs, w.Err)
		}
		return r.Note, errors.Join(errs...)
	}
	return r.Note, nil
}

// Round is Cosign with each witness's answer: it asks every witness of the
// group, concurrently, and returns what they answered and the checkpoint
// with the cosignatures gathered. Its error is non-nil only if msg is not a
// signed checkpoint note (ErrMalformed) or the cosignatures cannot be
// merged into it; a witness's failure is in its WitnessResult and a quorum
// not met in RoundResult.Quorum.
func (g *Group) Round(ctx context.Context, msg []byte, proofs merkle.ConsistencyProver) (RoundResult, error) {
	text, err := noteText(msg)
	if err != nil {
		return RoundResult{}, err
	}
	cp, err := merkle.ParseCheckpoint(text)
	if err != nil {
		return RoundResult{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	lines := make([][]byte, len(g.clients))
	res := make([]WitnessResult, len(g.clients))
	var wg sync.WaitGroup
	for i := range g.clients {
		wg.Go(func() {
			res[i].Name = g.clients[i].Name()
			lines[i], res[i].Requests, res[i].Err = g.ask(ctx, i, cp, msg, proofs)
		})
	}
	wg.Wait()
	out, err := MergeCosignatures(msg, lines...)
	if err != nil {
		return RoundResult{}, err
	}
	_, qerr := g.policy.CheckWitnesses(out)
	return RoundResult{Note: out, Witnesses: res, Quorum: qerr}, nil
}

// Seed tells the group the sizes its witnesses have cosigned, from a
// checkpoint note the log kept (the latest one witnessed, say): every
// witness whose valid cosignature is on signed, and whose size the group
// does not know yet, is taken to have cosigned its size. Its first request
// then carries a consistency proof from that size instead of old size 0,
// which would be answered 409 and asked again. A wrong guess costs only
// that: the witness's 409 corrects it.
func (g *Group) Seed(signed []byte) {
	text, err := noteText(signed)
	if err != nil {
		return
	}
	cp, err := merkle.ParseCheckpoint(text)
	if err != nil {
		return
	}
	for i, c := range g.clients {
		if cs, err := merkle.VerifyCosignatures(signed, []*merkle.CosignatureVerifier{c.v}); err != nil || len(cs) == 0 {
			continue
		}
		k := groupKey{i, cp.Origin}
		g.mu.Lock()
		if _, ok := g.sizes[k]; !ok {
			g.sizes[k] = cp.Size
		}
		g.mu.Unlock()
	}
}

// ask gets one witness's cosignature, following its 409 answers, and
// returns how many requests it made.
func (g *Group) ask(ctx context.Context, i int, cp merkle.Checkpoint, msg []byte, proofs merkle.ConsistencyProver) ([]byte, int, error) {
	c := g.clients[i]
	k := groupKey{i, cp.Origin}
	g.mu.Lock()
	old := g.sizes[k]
	g.mu.Unlock()
	requests := 0
	for conflicts := 0; ; conflicts++ {
		if old > cp.Size {
			return nil, requests, &AheadError{Witness: c.Name(), Origin: cp.Origin, Size: old, Asked: cp.Size}
		}
		var proof []merkle.Hash
		if old > 0 && old < cp.Size {
			p, err := proofs.ConsistencyProof(ctx, old, cp.Size)
			if err != nil {
				return nil, requests, fmt.Errorf("witness %s: consistency proof from %d to %d: %w", c.Name(), old, cp.Size, err)
			}
			proof = p
		}
		requests++
		lines, err := c.AddCheckpoint(ctx, old, proof, msg)
		var conflict *ConflictError
		if errors.As(err, &conflict) && !conflict.RootMismatch && conflicts < maxConflicts {
			old = conflict.Size
			g.setSize(k, old)
			continue
		}
		if err != nil {
			return nil, requests, err
		}
		g.setSize(k, cp.Size)
		return lines, requests, nil
	}
}

func (g *Group) setSize(k groupKey, size uint64) {
	g.mu.Lock()
	g.sizes[k] = size
	g.mu.Unlock()
}
