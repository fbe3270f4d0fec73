package follow

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/merkle"
)

// Kinds of evidence.
const (
	// KindFork: the log signed two checkpoints of the same size with
	// different roots. The two signed notes prove it by themselves.
	KindFork = "fork"
	// KindInconsistent: the log signed two checkpoints of different sizes
	// and the smaller is not a prefix of the larger. The proof is the
	// consistency proof between their sizes, built from the tiles of the
	// larger tree: the watcher's verified copy (ProofFromVerified, when the
	// refused checkpoint is the smaller) or the hash tiles served with the
	// refused larger checkpoint (ProofFromLog: by the log, or by the source
	// that showed it, such as a mirror). When RootAtSmaller is given, the
	// proof leads from it to the larger checkpoint's signed root, so
	// RootAtSmaller is that tree's root at the smaller size; it differs from
	// the smaller checkpoint's root, and the record proves the split view by
	// itself. Without it the tiles served did not even lead to their own
	// root, and the record is a lead: the log could not show that its
	// larger checkpoint extends the smaller one.
	KindInconsistent = "inconsistent"
	// KindEntries: the log's entry bundles, appended to the verified tree,
	// do not give the refused (larger) checkpoint's root, although the log's
	// hash tiles show it consistent with the verified one: the log serves
	// entries that do not match its tree. Detail names the first bundle that
	// differs from the log's own level-0 tile, when one can be found.
	KindEntries = "entries"
)

// Where an evidence record's proof comes from.
const (
	ProofFromVerified = "verified-tiles" // the watcher's copy, verified against its checkpoint
	ProofFromLog      = "log-tiles"      // the hash tiles served with the refused checkpoint
)

// maxEvidenceSize bounds an evidence file: two notes and a proof.
const maxEvidenceSize = 4*merkle.MaxNoteSize + 64*64

// An Evidence is the record a watcher keeps when it refuses a validly signed
// checkpoint: what it had verified, what it was shown, and why they cannot
// both be true. Both notes are verbatim, signatures included, so anyone
// holding the log's key can check the claim (CheckEvidence). It is written
// as indented JSON (Format) to a file of its own (WriteEvidence):
//
//	{"kind": "fork" | "inconsistent" | "entries", "origin": "…", "time": "…", "error": "…",
//	 "verified":    {"source": "URL", "size": N, "root": "base64", "checkpoint": "signed note"},
//	 "conflicting": {"source": "URL", "size": M, "root": "base64", "checkpoint": "signed note"},
//	 "proof": ["base64", …], "proofFrom": "verified-tiles" | "log-tiles",
//	 "rootAtSmaller": "base64", "detail": "…"}
type Evidence struct {
	Kind   string    `json:"kind"`
	Origin string    `json:"origin"`
	Time   time.Time `json:"time"`
	Error  string    `json:"error"`
	// Verified is the checkpoint the watcher had accepted; nil if it had
	// none yet (only for KindEntries).
	Verified *Observation `json:"verified"`
	// Conflicting is the checkpoint it refused.
	Conflicting Observation `json:"conflicting"`
	// Proof is the consistency proof from the smaller size to the larger
	// (empty for a fork), base64; ProofFrom says whose tiles built it.
	Proof     []string `json:"proof"`
	ProofFrom string   `json:"proofFrom,omitempty"`
	// RootAtSmaller (KindInconsistent) is the larger tree's root at the
	// smaller size, from the same tiles as the proof, when the proof leads
	// from it to the larger checkpoint's root.
	RootAtSmaller string `json:"rootAtSmaller,omitempty"`
	// Detail says more about what failed (KindEntries: the bundle).
	Detail string `json:"detail,omitempty"`
}

// An Observation is one signed checkpoint and where it was read.
type Observation struct {
	Source     string `json:"source"`
	Size       uint64 `json:"size"`
	Root       string `json:"root"`       // base64, as in the note
	Checkpoint string `json:"checkpoint"` // the signed note, verbatim
}

func observe(sc merkle.SignedCheckpoint, source string) Observation {
	return Observation{Source: source, Size: sc.Checkpoint.Size, Root: b64(sc.Checkpoint.Hash), Checkpoint: string(sc.Note)}
}

func b64(h merkle.Hash) string { return base64.StdEncoding.EncodeToString(h[:]) }

// A Refusal is the error a Follower returns for a validly signed checkpoint
// that cannot be true together with its verified copy. Evidence is the
// record to keep. Err says what failed: it wraps a *merkle.InconsistencyError
// for KindFork and KindInconsistent, and ErrEntries for KindEntries.
type Refusal struct {
	Evidence Evidence
	Err      error
}

// ErrEntries is wrapped by a Refusal whose checkpoint the log's entries do
// not reproduce.
var ErrEntries = errors.New("the log's entries do not give the checkpoint's root")

func (r *Refusal) Error() string {
	return fmt.Sprintf("refused checkpoint of size %d from %s (%s): %s", r.Evidence.Conflicting.Size, r.Evidence.Conflicting.Source, r.Evidence.Kind, r.Err)
}

func (r *Refusal) Unwrap() error { return r.Err }

// SplitView reports whether the refusal proves or indicates that the log
// shows different histories (KindFork, KindInconsistent), as opposed to
// serving entries that do not match its tree (KindEntries).
func (r *Refusal) SplitView() bool {
	return r.Evidence.Kind == KindFork || r.Evidence.Kind == KindInconsistent
}

// Format returns the evidence as indented JSON ending in a newline.
func (e *Evidence) Format() ([]byte, error) {
	b, err := json.MarshalIndent(e, "", "\t")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseEvidence parses an evidence file strictly: known members only, one
// JSON value, a known kind, base64 hashes of 32 bytes, signed checkpoint
// notes whose sizes and roots are the ones written beside them. It checks no
// signature: see CheckEvidence. Errors wrap merkle.ErrMalformed.
func ParseEvidence(b []byte) (*Evidence, error) {
	if len(b) > maxEvidenceSize {
		return nil, fmt.Errorf("evidence file of %d bytes is larger than %d: %w", len(b), maxEvidenceSize, merkle.ErrMalformed)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var e Evidence
	if err := d.Decode(&e); err != nil {
		return nil, fmt.Errorf("evidence file: %w: %w", merkle.ErrMalformed, err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("evidence file: data after the JSON value: %w", merkle.ErrMalformed)
	}
	bad := func(format string, args ...any) (*Evidence, error) {
		return nil, fmt.Errorf("evidence file: "+format+": %w", append(args, merkle.ErrMalformed)...)
	}
	switch e.Kind {
	case KindFork, KindInconsistent, KindEntries:
	default:
		return bad("kind %q", e.Kind)
	}
	switch e.ProofFrom {
	case "", ProofFromVerified, ProofFromLog:
	default:
		return bad("proofFrom %q", e.ProofFrom)
	}
	if e.Verified == nil && e.Kind != KindEntries {
		return bad("a %s record without the verified checkpoint", e.Kind)
	}
	for _, o := range []*Observation{e.Verified, &e.Conflicting} {
		if o == nil {
			continue
		}
		cp, err := merkle.ParseSignedCheckpoint([]byte(o.Checkpoint))
		if err != nil {
			return bad("checkpoint from %q: %w", o.Source, err)
		}
		if cp.Size != o.Size || b64(cp.Hash) != o.Root {
			return bad("the checkpoint from %q has size %d and root %s, not %d and %s", o.Source, cp.Size, b64(cp.Hash), o.Size, o.Root)
		}
		if cp.Origin != e.Origin {
			return bad("the checkpoint from %q has origin %q, not %q", o.Source, cp.Origin, e.Origin)
		}
	}
	if len(e.Proof) > 64 {
		return bad("a proof of %d hashes", len(e.Proof))
	}
	for i, p := range e.Proof {
		if _, err := parseB64Hash(p); err != nil {
			return bad("proof[%d]: %w", i, err)
		}
	}
	if e.RootAtSmaller != "" {
		if _, err := parseB64Hash(e.RootAtSmaller); err != nil {
			return bad("rootAtSmaller: %w", err)
		}
	}
	return &e, nil
}

func parseB64Hash(s string) (merkle.Hash, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != merkle.HashSize {
		return merkle.Hash{}, fmt.Errorf("%q is not base64 of 32 bytes", s)
	}
	return merkle.Hash(b), nil
}

// CheckEvidence checks an evidence record with the log's key: both notes
// must be signed by it, and the claim must hold. It reports whether the
// record proves the log signed two incompatible checkpoints (a fork; an
// inconsistency shown with the watcher's verified copy) rather than only
// pointing at one (a consistency proof from the log's tiles that fails,
// entries that do not match). An error means the record does not show what
// it says: a signature that does not verify, a fork whose roots are equal, a
// proof that does verify.
func CheckEvidence(e *Evidence, key note.Verifier) (proven bool, err error) {
	open := func(o *Observation) (merkle.SignedCheckpoint, error) {
		cp, err := merkle.Open([]byte(o.Checkpoint), key)
		if err != nil {
			return merkle.SignedCheckpoint{}, fmt.Errorf("the checkpoint from %q: %w", o.Source, err)
		}
		if cp.Size != o.Size || b64(cp.Hash) != o.Root {
			return merkle.SignedCheckpoint{}, fmt.Errorf("the checkpoint from %q is not the size and root written beside it", o.Source)
		}
		return merkle.SignedCheckpoint{Checkpoint: cp, Note: []byte(o.Checkpoint)}, nil
	}
	c, err := open(&e.Conflicting)
	if err != nil {
		return false, err
	}
	if e.Verified == nil {
		if e.Kind != KindEntries {
			return false, fmt.Errorf("a %s record without the verified checkpoint", e.Kind)
		}
		return false, nil
	}
	v, err := open(e.Verified)
	if err != nil {
		return false, err
	}
	proof := make([]merkle.Hash, len(e.Proof))
	for i, p := range e.Proof {
		if proof[i], err = parseB64Hash(p); err != nil {
			return false, fmt.Errorf("proof[%d]: %w", i, err)
		}
	}
	vc, cc := v.Checkpoint, c.Checkpoint
	switch e.Kind {
	case KindFork:
		if vc.Size != cc.Size || vc.Hash == cc.Hash {
			return false, fmt.Errorf("not a fork: sizes %d and %d, roots %s and %s", vc.Size, cc.Size, b64(vc.Hash), b64(cc.Hash))
		}
		return true, nil
	case KindInconsistent:
		if vc.Size == cc.Size {
			return false, fmt.Errorf("an inconsistency between checkpoints of the same size %d: that is a fork", vc.Size)
		}
		small, large := v, c
		if cc.Size < vc.Size {
			small, large = c, v
		}
		sc, lc := small.Checkpoint, large.Checkpoint
		if e.RootAtSmaller != "" {
			at, err := parseB64Hash(e.RootAtSmaller)
			if err != nil {
				return false, fmt.Errorf("rootAtSmaller: %w", err)
			}
			if err := merkle.CheckConsistency(sc.Size, lc.Size, at, lc.Hash, proof); err != nil {
				return false, fmt.Errorf("the proof does not lead from rootAtSmaller to the root of size %d: %w", lc.Size, err)
			}
			if at == sc.Hash {
				return false, fmt.Errorf("the checkpoint of size %d has the larger tree's root at that size: consistent", sc.Size)
			}
			return true, nil
		}
		if merkle.CheckSignedConsistency(small, large, proof) == nil {
			return false, fmt.Errorf("the proof from size %d to %d verifies: consistent", sc.Size, lc.Size)
		}
		return false, nil
	case KindEntries:
		return false, nil
	}
	return false, fmt.Errorf("unknown kind %q", e.Kind)
}

// EvidenceName returns the file name WriteEvidence gives a record:
// "<kind>-<origin hash, 16 hex>-<verified size>-<conflicting size>-<conflicting root, 16 hex>.json".
func EvidenceName(e *Evidence) string {
	oh := sha256.Sum256([]byte(e.Origin))
	var vs uint64
	if e.Verified != nil {
		vs = e.Verified.Size
	}
	root, _ := base64.StdEncoding.DecodeString(e.Conflicting.Root)
	if len(root) > 8 {
		root = root[:8]
	}
	return fmt.Sprintf("%s-%s-%d-%d-%s.json", e.Kind, hex.EncodeToString(oh[:8]), vs, e.Conflicting.Size, hex.EncodeToString(root))
}

// WriteEvidence writes the record to dir (created with mode 0700 if
// missing) under EvidenceName, durably: a temporary file, fsynced, renamed,
// and the directory fsynced. A file of that name already there is left as
// it is (wrote is false): the same refusal seen again adds nothing.
func WriteEvidence(dir string, e *Evidence) (path string, wrote bool, err error) {
	data, err := e.Format()
	if err != nil {
		return "", false, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, fmt.Errorf("follow: evidence directory: %w", err)
	}
	path = filepath.Join(dir, EvidenceName(e))
	if _, err := os.Lstat(path); err == nil {
		return path, false, nil
	}
	f, err := os.CreateTemp(dir, ".evidence-*")
	if err != nil {
		return "", false, fmt.Errorf("follow: writing evidence: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return "", false, fmt.Errorf("follow: writing evidence %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return path, true, nil
}
