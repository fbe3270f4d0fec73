package witness

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/merkle"
)

// MaxRequestSize is the largest add-checkpoint request body: the old size
// line, MaxProofLines proof lines and a checkpoint note of at most
// merkle.MaxNoteSize bytes.
const MaxRequestSize = len("old 18446744073709551615\n") + MaxProofLines*45 + 1 + merkle.MaxNoteSize

// A Request is the body of a C2SP tlog-witness add-checkpoint request.
type Request struct {
	// OldSize is the size of the checkpoint the submitter believes the
	// witness cosigned last (0 if none).
	OldSize uint64
	// Proof is the RFC 6962 consistency proof from OldSize to the
	// checkpoint's size: at most MaxProofLines hashes, empty if OldSize is 0
	// or the checkpoint's size.
	Proof []merkle.Hash
	// Checkpoint is the signed checkpoint note, verbatim.
	Checkpoint []byte
}

// ParseRequest parses an add-checkpoint request body: "old <size>\n", where
// the size is a decimal without leading zeros, then up to MaxProofLines lines
// each holding a hash in canonical standard base64, an empty line, and the
// signed checkpoint note, which is kept verbatim (its syntax and signatures
// are the Witness's to check). Anything else, or a body larger than
// MaxRequestSize, is an error wrapping ErrMalformed. For every body it
// accepts, Format gives the body back.
func ParseRequest(body []byte) (Request, error) {
	if len(body) > MaxRequestSize {
		return Request{}, fmt.Errorf("request of %d bytes is larger than %d: %w", len(body), MaxRequestSize, ErrMalformed)
	}
	line, rest, ok := bytes.Cut(body, []byte("\n"))
	if !ok {
		return Request{}, fmt.Errorf("request has no old size line: %w", ErrMalformed)
	}
	num, ok := bytes.CutPrefix(line, []byte("old "))
	if !ok {
		return Request{}, fmt.Errorf("request's first line %q is not \"old <size>\": %w", truncate(string(line)), ErrMalformed)
	}
	old, ok := parseDecimal(string(num))
	if !ok {
		return Request{}, fmt.Errorf("old size %q is not a decimal without leading zeros: %w", truncate(string(num)), ErrMalformed)
	}
	r := Request{OldSize: old}
	for {
		line, rest, ok = bytes.Cut(rest, []byte("\n"))
		if !ok {
			return Request{}, fmt.Errorf("request has no empty line after %d proof lines: %w", len(r.Proof), ErrMalformed)
		}
		if len(line) == 0 {
			break
		}
		if len(r.Proof) == MaxProofLines {
			return Request{}, fmt.Errorf("request has more than %d proof lines: %w", MaxProofLines, ErrMalformed)
		}
		h, ok := parseHash(line)
		if !ok {
			return Request{}, fmt.Errorf("proof line %d %q is not a hash in canonical base64: %w", len(r.Proof)+1, truncate(string(line)), ErrMalformed)
		}
		r.Proof = append(r.Proof, h)
	}
	if len(rest) == 0 {
		return Request{}, fmt.Errorf("request has no checkpoint: %w", ErrMalformed)
	}
	r.Checkpoint = rest
	return r, nil
}

// Format returns the request body. It returns an error wrapping ErrMalformed
// if the proof has more than MaxProofLines hashes or the checkpoint is empty.
func (r Request) Format() ([]byte, error) {
	if len(r.Proof) > MaxProofLines {
		return nil, fmt.Errorf("consistency proof of %d hashes, at most %d: %w", len(r.Proof), MaxProofLines, ErrMalformed)
	}
	if len(r.Checkpoint) == 0 {
		return nil, fmt.Errorf("request has no checkpoint: %w", ErrMalformed)
	}
	b := make([]byte, 0, 32+45*len(r.Proof)+len(r.Checkpoint))
	b = append(b, "old "...)
	b = strconv.AppendUint(b, r.OldSize, 10)
	b = append(b, '\n')
	for _, h := range r.Proof {
		b = base64.StdEncoding.AppendEncode(b, h[:])
		b = append(b, '\n')
	}
	b = append(b, '\n')
	return append(b, r.Checkpoint...), nil
}

// parseDecimal parses a decimal without sign or leading zeros.
func parseDecimal(s string) (uint64, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// parseHash parses the canonical standard base64 of a hash.
func parseHash(b []byte) (merkle.Hash, bool) {
	var h merkle.Hash
	if len(b) != base64.StdEncoding.EncodedLen(merkle.HashSize) {
		return h, false
	}
	var buf [merkle.HashSize + 1]byte // 44 characters can decode to 33 bytes
	n, err := base64.StdEncoding.Strict().Decode(buf[:], b)
	if err != nil || n != merkle.HashSize {
		return h, false
	}
	copy(h[:], buf[:n])
	return h, true
}

// ParseLogs parses the witness's configuration file: the logs it witnesses,
// as C2SP tlog-policy lines (https://c2sp.org/tlog-policy)
//
//	log <vkey> [<url>]
//
// where vkey is the log's Ed25519 checkpoint verifier key (signature type
// 0x01) whose key name is the log's origin. A log may be listed with several
// keys (a key rotation). The file may be a whole tlog-policy file: its
// witness, group and quorum lines, which concern verifiers, are checked and
// ignored, and a file without a quorum line is read as if it ended with
// "quorum none". It is an error, wrapping merkle.ErrMalformed, if the file
// is not a valid policy or lists no log.
func ParseLogs(text []byte) ([]note.Verifier, error) {
	hasQuorum := false
	for _, line := range strings.Split(string(text), "\n") {
		f := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' })
		hasQuorum = hasQuorum || len(f) > 0 && f[0] == "quorum"
	}
	if !hasQuorum {
		// A line of its own, after a final newline or not.
		text = append(append(bytes.Clone(text), '\n'), "quorum none\n"...)
	}
	p, err := merkle.ParsePolicy(text)
	if err != nil {
		return nil, fmt.Errorf("witness configuration: %w", err)
	}
	logs := p.Logs()
	if len(logs) == 0 {
		return nil, fmt.Errorf("witness configuration lists no log: %w", merkle.ErrMalformed)
	}
	return logs, nil
}
