package merkle

import (
	"fmt"
)

// A SignedCheckpoint is a checkpoint together with the signed note it was
// opened from, verbatim (signatures and cosignatures included): what a
// verifier or auditor keeps as evidence of what the log said.
type SignedCheckpoint struct {
	Checkpoint Checkpoint
	Note       []byte
}

// An InconsistencyError is the evidence that a log signed two checkpoints
// that cannot both be true: two trees of the same size with different roots,
// or a consistency proof from the smaller to the larger that does not verify.
// Old is the smaller (or, at equal sizes, the first) checkpoint. Proof is the
// consistency proof that failed, empty for equal sizes. An auditor writes all
// of it to its evidence file: with both signed notes anyone holding the log's
// key can check the claim.
type InconsistencyError struct {
	Old, New SignedCheckpoint
	Proof    []Hash
	Err      error // why the check failed; wraps ErrProof
}

func (e *InconsistencyError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("log %q signed inconsistent checkpoints of sizes %d and %d",
			truncate(e.Old.Checkpoint.Origin), e.Old.Checkpoint.Size, e.New.Checkpoint.Size)
	}
	return fmt.Sprintf("log %q signed inconsistent checkpoints of sizes %d and %d: %s",
		truncate(e.Old.Checkpoint.Origin), e.Old.Checkpoint.Size, e.New.Checkpoint.Size, e.Err.Error())
}

func (e *InconsistencyError) Unwrap() error { return e.Err }

// CheckSignedConsistency checks that two checkpoints of the same log are
// consistent, given the consistency proof between their sizes (from the
// smaller to the larger; the order of a and b does not matter, and for
// equal sizes proof is ignored). It returns an
// *InconsistencyError if they are not, and a plain error if their origins
// differ. It does not verify the notes' signatures: open them first.
func CheckSignedConsistency(a, b SignedCheckpoint, proof []Hash) error {
	if a.Checkpoint.Origin != b.Checkpoint.Origin {
		return fmt.Errorf("checking consistency of checkpoints of different logs %q and %q", truncate(a.Checkpoint.Origin), truncate(b.Checkpoint.Origin))
	}
	if a.Checkpoint.Size > b.Checkpoint.Size {
		a, b = b, a
	}
	ca, cb := a.Checkpoint, b.Checkpoint
	if ca.Size == cb.Size {
		proof = nil // equal sizes need equal roots; a proof is irrelevant
	}
	if err := CheckConsistency(ca.Size, cb.Size, ca.Hash, cb.Hash, proof); err != nil {
		return &InconsistencyError{Old: a, New: b, Proof: proof, Err: err}
	}
	return nil
}
