package witness

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/zarlog/zarlog/merkle"
)

// Evidence kinds.
const (
	// EvidenceFork: the log signed two checkpoints of the same size with
	// different root hashes. This alone proves that the log forked.
	EvidenceFork = "fork"
	// EvidenceProof: a checkpoint larger than the one the witness cosigned
	// came with a consistency proof that does not verify. The proof comes
	// from the submitter, so this is a lead, not a proof: the log's tiles
	// settle it (compute the proof between the two sizes from them).
	EvidenceProof = "proof"
)

// An Evidence is what the witness keeps when it refuses a validly signed
// checkpoint because it is inconsistent with the one it cosigned: a JSON file
// under "evidence/" in the data directory, named
// "<kind>-<origin hash, 16 hex>-<cosigned size>-<submitted size>-<submitted root, 16 hex>.json",
// written once per name (a repeated submission does not add a file). Both
// notes are verbatim, with their signatures, so anyone holding the log's
// verifier key can check the claim.
type Evidence struct {
	Kind      string    `json:"kind"`      // EvidenceFork or EvidenceProof
	Origin    string    `json:"origin"`    // the log
	Time      time.Time `json:"time"`      // when the witness refused the checkpoint
	Error     string    `json:"error"`     // why
	Cosigned  string    `json:"cosigned"`  // the checkpoint the witness had cosigned: text, log signatures, cosignature
	Submitted string    `json:"submitted"` // the checkpoint refused, as submitted
	Proof     []string  `json:"proof"`     // the consistency proof submitted, base64 hashes (empty for a fork)
}

// keepEvidence logs an inconsistency and writes its evidence file.
func (w *Witness) keepEvidence(l *logState, inc *merkle.InconsistencyError) {
	// The witness checks from its own checkpoint, which is never the larger:
	// Old is the one it cosigned.
	old, sub := inc.Old, inc.New
	kind := EvidenceProof
	if old.Checkpoint.Size == sub.Checkpoint.Size {
		kind = EvidenceFork
	}
	proof := make([]string, len(inc.Proof))
	for i, h := range inc.Proof {
		proof[i] = base64.StdEncoding.EncodeToString(h[:])
	}
	e := Evidence{
		Kind:      kind,
		Origin:    l.origin,
		Time:      w.clock().UTC(),
		Error:     inc.Error(),
		Cosigned:  string(old.Note),
		Submitted: string(sub.Note),
		Proof:     proof,
	}
	name := fmt.Sprintf("%s-%s-%d-%d-%s.json", kind, l.hash[:16], old.Checkpoint.Size, sub.Checkpoint.Size, hex.EncodeToString(sub.Checkpoint.Hash[:8]))
	w.metrics.evidence.WithLabelValues(l.origin, kind).Inc()
	attrs := []any{"origin", l.origin, "kind", kind, "cosigned_size", old.Checkpoint.Size, "submitted_size", sub.Checkpoint.Size, "err", inc.Error()}
	if kind == EvidenceFork {
		w.logger.Error("witness: FORK: the log signed two checkpoints of the same size with different roots; refused", attrs...)
	} else {
		w.logger.Warn("witness: consistency proof does not verify; refused", attrs...)
	}
	if w.evidence.Load() >= int64(w.maxEvidence) {
		w.logger.Error("witness: evidence file not written: limit reached", "limit", w.maxEvidence, "file", name)
		return
	}
	data, err := json.MarshalIndent(e, "", "\t")
	if err != nil {
		w.logger.Error("witness: encoding evidence", "err", err)
		return
	}
	wrote, err := w.store.putEvidence(name, append(data, '\n'))
	if err != nil {
		w.logger.Error("witness: writing evidence file", "file", name, "err", err)
		return
	}
	if wrote {
		w.evidence.Add(1)
		w.logger.Warn("witness: evidence kept", "file", w.store.fs.PathJoin(w.store.evid, name))
	}
}
