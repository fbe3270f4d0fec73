package merkle

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"

	"golang.org/x/mod/sumdb/note"
)

// tlogProofHeader is the first line of a C2SP tlog-proof@v1 file.
const tlogProofHeader = "c2sp.org/tlog-proof@v1"

// maxProofHashes is the length of the longest inclusion proof, in a tree of
// 2^64−1 leaves.
const maxProofHashes = 64

// A TlogProof is a C2SP tlog-proof@v1 (https://c2sp.org/tlog-proof): the
// offline-verifiable proof that one entry is in a log, made of optional
// opaque extra data, the entry's index, its inclusion proof and the signed
// checkpoint (with any cosignatures) that the proof leads to. zarlog puts the
// leaf itself in Extra (docs/FORMATS.md §3).
type TlogProof struct {
	Extra      []byte // opaque, unauthenticated; empty means no extra line
	Index      uint64
	Proof      []Hash // from the leaf's sibling up to the root's child
	Checkpoint []byte // the signed checkpoint note, verbatim
}

// Format returns the tlog-proof@v1 text of p. It returns an error wrapping
// ErrMalformed if the checkpoint is not a well-formed signed checkpoint note
// or the proof is longer than 64 hashes.
func (p TlogProof) Format() ([]byte, error) {
	if len(p.Proof) > maxProofHashes {
		return nil, fmt.Errorf("tlog-proof with %d proof hashes, more than %d: %w", len(p.Proof), maxProofHashes, ErrMalformed)
	}
	if err := checkCheckpointNote(p.Checkpoint); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 64+base64.StdEncoding.EncodedLen(len(p.Extra))+45*len(p.Proof)+len(p.Checkpoint))
	b = append(b, tlogProofHeader+"\n"...)
	if len(p.Extra) > 0 {
		b = append(b, "extra "...)
		b = base64.StdEncoding.AppendEncode(b, p.Extra)
		b = append(b, '\n')
	}
	b = append(b, "index "...)
	b = strconv.AppendUint(b, p.Index, 10)
	b = append(b, '\n')
	for _, h := range p.Proof {
		b = base64.StdEncoding.AppendEncode(b, h[:])
		b = append(b, '\n')
	}
	b = append(b, '\n')
	return append(b, p.Checkpoint...), nil
}

// checkCheckpointNote checks that msg is a signed note whose text is a
// checkpoint, without verifying signatures.
func checkCheckpointNote(msg []byte) error {
	text, _, err := splitNote(msg)
	if err != nil {
		return fmt.Errorf("tlog-proof checkpoint: %w", err)
	}
	if _, err := ParseCheckpoint(text); err != nil {
		return fmt.Errorf("tlog-proof checkpoint: %w", err)
	}
	return nil
}

// ParseTlogProof parses a tlog-proof@v1 file. It is strict: the header line,
// an optional "extra" line with non-empty canonical base64, "index" with a
// decimal without leading zeros, at most 64 hash lines of canonical base64,
// an empty line, and a well-formed signed checkpoint note (its signatures are
// not verified here; see CheckTlogProof). Anything else is an error wrapping
// ErrMalformed. For every file it accepts, Format gives the file back.
func ParseTlogProof(b []byte) (TlogProof, error) {
	if len(b) > MaxNoteSize+4096 {
		return TlogProof{}, fmt.Errorf("tlog-proof of %d bytes is too large: %w", len(b), ErrMalformed)
	}
	line := func() ([]byte, bool) {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil, false
		}
		l := b[:i]
		b = b[i+1:]
		return l, true
	}
	var p TlogProof
	if l, ok := line(); !ok || string(l) != tlogProofHeader {
		return TlogProof{}, fmt.Errorf("tlog-proof does not start with %q: %w", tlogProofHeader, ErrMalformed)
	}
	l, ok := line()
	if ok {
		if rest, isExtra := bytes.CutPrefix(l, []byte("extra ")); isExtra {
			extra, err := base64.StdEncoding.Strict().DecodeString(string(rest))
			if err != nil || len(extra) == 0 || base64.StdEncoding.EncodeToString(extra) != string(rest) {
				return TlogProof{}, fmt.Errorf("tlog-proof extra line is not non-empty canonical base64: %w", ErrMalformed)
			}
			p.Extra = extra
			l, ok = line()
		}
	}
	idx, isIndex := bytes.CutPrefix(l, []byte("index "))
	if !ok || !isIndex {
		return TlogProof{}, fmt.Errorf("tlog-proof has no index line: %w", ErrMalformed)
	}
	n, valid := parseUint64(string(idx))
	if !valid {
		return TlogProof{}, fmt.Errorf("tlog-proof index %q is not a decimal without leading zeros: %w", truncate(string(idx)), ErrMalformed)
	}
	p.Index = n
	for {
		l, ok := line()
		if !ok {
			return TlogProof{}, fmt.Errorf("tlog-proof has no empty line before its checkpoint: %w", ErrMalformed)
		}
		if len(l) == 0 {
			break
		}
		if len(p.Proof) == maxProofHashes {
			return TlogProof{}, fmt.Errorf("tlog-proof has more than %d proof hashes: %w", maxProofHashes, ErrMalformed)
		}
		h, ok := parseHash(string(l))
		if !ok {
			return TlogProof{}, fmt.Errorf("tlog-proof hash %d is not canonical base64 of 32 bytes: %w", len(p.Proof), ErrMalformed)
		}
		p.Proof = append(p.Proof, h)
	}
	if err := checkCheckpointNote(b); err != nil {
		return TlogProof{}, err
	}
	p.Checkpoint = bytes.Clone(b)
	return p, nil
}

// CheckTlogProof checks a tlog-proof for the leaf with the given leaf hash:
// that its checkpoint is signed by the log key v (see Open) and that its
// inclusion proof leads from the leaf at p.Index to the checkpoint's root. It
// returns the checkpoint. Witness cosignatures are the caller's policy: see
// VerifyCosignatures and Policy.
func CheckTlogProof(p TlogProof, leafHash Hash, v note.Verifier) (Checkpoint, error) {
	c, err := Open(p.Checkpoint, v)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("tlog-proof of leaf %d: %w", p.Index, err)
	}
	if err := CheckInclusion(leafHash, p.Index, c.Size, p.Proof, c.Hash); err != nil {
		return Checkpoint{}, fmt.Errorf("tlog-proof: %w", err)
	}
	return c, nil
}
