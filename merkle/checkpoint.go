package merkle

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
)

// MaxNoteSize is the largest signed note (a checkpoint with its signatures
// and cosignatures) that Open, VerifyCosignatures, Policy and ParseTlogProof
// accept: room for a checkpoint with a few extension lines and well over the
// 16 signatures C2SP signed-note requires verifiers to accept.
const MaxNoteSize = 64 << 10

// A Checkpoint is the body of a C2SP tlog-checkpoint
// (https://c2sp.org/tlog-checkpoint): the log's origin, the tree size and
// the root hash, and optional extension lines (without their newlines).
type Checkpoint struct {
	Origin     string
	Size       uint64
	Hash       Hash
	Extensions []string
}

// Format returns the checkpoint's note text: origin, size, base64 root hash
// and extension lines, each ending in a newline. It returns an error wrapping
// ErrMalformed if the origin or an extension line is empty, not UTF-8, or
// holds a control character (a newline included).
func (c Checkpoint) Format() ([]byte, error) {
	if err := checkLine("origin", c.Origin); err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(c.Origin)+80)
	b = append(b, c.Origin...)
	b = append(b, '\n')
	b = strconv.AppendUint(b, c.Size, 10)
	b = append(b, '\n')
	b = base64.StdEncoding.AppendEncode(b, c.Hash[:])
	b = append(b, '\n')
	for i, e := range c.Extensions {
		if err := checkLine(fmt.Sprintf("extension line %d", i), e); err != nil {
			return nil, err
		}
		b = append(b, e...)
		b = append(b, '\n')
	}
	return b, nil
}

// checkLine reports whether s can be one line of a note text.
func checkLine(what, s string) error {
	if s == "" {
		return fmt.Errorf("checkpoint %s is empty: %w", what, ErrMalformed)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("checkpoint %s is not UTF-8: %w", what, ErrMalformed)
	}
	for _, r := range s {
		if r < 0x20 {
			return fmt.Errorf("checkpoint %s holds control character %U: %w", what, r, ErrMalformed)
		}
	}
	return nil
}

// ParseCheckpoint parses a checkpoint's note text (without signatures). It
// is strict: the text ends in a newline; the origin and extension lines are
// non-empty UTF-8 without control characters; the size is decimal without
// leading zeros; the root hash is canonical base64 of 32 bytes. Anything else
// is an error wrapping ErrMalformed. For every text it accepts, Format gives
// the text back.
func ParseCheckpoint(text []byte) (Checkpoint, error) {
	if len(text) > MaxNoteSize {
		return Checkpoint{}, fmt.Errorf("checkpoint of %d bytes is larger than %d: %w", len(text), MaxNoteSize, ErrMalformed)
	}
	if len(text) == 0 || text[len(text)-1] != '\n' {
		return Checkpoint{}, fmt.Errorf("checkpoint does not end in a newline: %w", ErrMalformed)
	}
	lines := strings.Split(string(text[:len(text)-1]), "\n")
	if len(lines) < 3 {
		return Checkpoint{}, fmt.Errorf("checkpoint has %d lines, want at least 3: %w", len(lines), ErrMalformed)
	}
	var c Checkpoint
	if err := checkLine("origin", lines[0]); err != nil {
		return Checkpoint{}, err
	}
	c.Origin = lines[0]
	size, ok := parseUint64(lines[1])
	if !ok {
		return Checkpoint{}, fmt.Errorf("checkpoint size %q is not a decimal without leading zeros: %w", truncate(lines[1]), ErrMalformed)
	}
	c.Size = size
	h, ok := parseHash(lines[2])
	if !ok {
		return Checkpoint{}, fmt.Errorf("checkpoint root hash %q is not canonical base64 of 32 bytes: %w", truncate(lines[2]), ErrMalformed)
	}
	c.Hash = h
	for i, e := range lines[3:] {
		if err := checkLine(fmt.Sprintf("extension line %d", i), e); err != nil {
			return Checkpoint{}, err
		}
	}
	if len(lines) > 3 {
		c.Extensions = lines[3:]
	}
	return c, nil
}

// truncate shortens s for an error message.
func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// parseUint64 parses a decimal without sign or leading zeros.
func parseUint64(s string) (uint64, bool) {
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

// parseHash parses the canonical base64 of a 32-byte hash.
func parseHash(s string) (Hash, bool) {
	var h Hash
	if len(s) != base64.StdEncoding.EncodedLen(HashSize) {
		return h, false
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != HashSize {
		return h, false
	}
	return Hash(b), true
}

// GenerateKey returns a new Ed25519 signer key (skey, secret) and verifier
// key (vkey, public) for a log whose checkpoints have the given origin, in
// the signed-note key formats: "PRIVATE+KEY+<origin>+<hash>+<key>" and
// "<origin>+<hash>+<key>". The origin must be a valid key name: non-empty
// UTF-8 without spaces or "+".
func GenerateKey(rand io.Reader, origin string) (skey, vkey string, err error) {
	if !isKeyName(origin) {
		return "", "", fmt.Errorf("origin %q is not a valid key name (no spaces or +): %w", truncate(origin), ErrMalformed)
	}
	skey, vkey, err = note.GenerateKey(rand, origin)
	if err != nil {
		return "", "", fmt.Errorf("generating key for %q: %w", origin, err)
	}
	return skey, vkey, nil
}

// isKeyName reports whether name is a valid signed-note key name.
func isKeyName(name string) bool {
	return name != "" && utf8.ValidString(name) && strings.IndexFunc(name, unicode.IsSpace) < 0 && !strings.Contains(name, "+")
}

// VerifierKey returns the verifier key (vkey) of an Ed25519 signer key made
// by GenerateKey, for commands that hold the signer key and print the vkey.
func VerifierKey(skey string) (string, error) {
	name, key, err := ed25519SignerKey(skey)
	if err != nil {
		return "", err
	}
	return note.NewEd25519VerifierKey(name, key.Public().(ed25519.PublicKey))
}

// NewSigner returns the checkpoint signer for an Ed25519 signer key made by
// GenerateKey.
func NewSigner(skey string) (note.Signer, error) {
	s, err := note.NewSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("parsing signer key: %w: %w", ErrMalformed, err)
	}
	return s, nil
}

// NewVerifier returns the checkpoint verifier for an Ed25519 verifier key
// ("<origin>+<hash>+<key>", signature type 0x01). Keys of other types are an
// error.
func NewVerifier(vkey string) (note.Verifier, error) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("parsing verifier key %q: %w: %w", truncate(vkey), ErrMalformed, err)
	}
	return v, nil
}

// Sign returns the signed note of the checkpoint c, signed by s. The
// checkpoint's origin must be the key's name.
func Sign(c Checkpoint, s note.Signer) ([]byte, error) {
	if c.Origin != s.Name() {
		return nil, fmt.Errorf("signing checkpoint of origin %q with key %q: %w", truncate(c.Origin), s.Name(), ErrSignature)
	}
	text, err := c.Format()
	if err != nil {
		return nil, err
	}
	msg, err := note.Sign(&note.Note{Text: string(text)}, s)
	if err != nil {
		return nil, fmt.Errorf("signing checkpoint of size %d: %w", c.Size, err)
	}
	return msg, nil
}

// Open verifies that msg is a checkpoint note signed by the log key v, and
// returns the checkpoint. The checkpoint's origin must be v's name.
// Signatures by other keys (cosignatures) are ignored here; see
// VerifyCosignatures. Errors wrap ErrMalformed for a note or checkpoint that
// does not parse (or is larger than MaxNoteSize) and ErrSignature for a note
// without a valid signature by v, or with an invalid one.
func Open(msg []byte, v note.Verifier) (Checkpoint, error) {
	n, err := openNote(msg, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("opening checkpoint with key %s: %w", v.Name(), err)
	}
	c, err := ParseCheckpoint([]byte(n.Text))
	if err != nil {
		return Checkpoint{}, err
	}
	if c.Origin != v.Name() {
		return Checkpoint{}, fmt.Errorf("checkpoint origin %q is not the name of its key %q: %w", truncate(c.Origin), v.Name(), ErrSignature)
	}
	return c, nil
}

// openNote opens a signed note, mapping note's errors onto the sentinels.
func openNote(msg []byte, known note.Verifiers) (*note.Note, error) {
	if len(msg) > MaxNoteSize {
		return nil, fmt.Errorf("note of %d bytes is larger than %d: %w", len(msg), MaxNoteSize, ErrMalformed)
	}
	n, err := note.Open(msg, known)
	if err == nil {
		return n, nil
	}
	var unverified *note.UnverifiedNoteError
	var invalid *note.InvalidSignatureError
	switch {
	case errors.As(err, &unverified):
		return nil, fmt.Errorf("no signature by a known key: %w: %w", ErrSignature, err)
	case errors.As(err, &invalid):
		return nil, fmt.Errorf("%w: %w", ErrSignature, err)
	default:
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
}

// splitNote checks the signed-note syntax of msg without verifying any
// signature and returns its text (ending in a newline) and signature block.
func splitNote(msg []byte) (text, sigs []byte, err error) {
	if len(msg) > MaxNoteSize {
		return nil, nil, fmt.Errorf("note of %d bytes is larger than %d: %w", len(msg), MaxNoteSize, ErrMalformed)
	}
	if !utf8.Valid(msg) {
		return nil, nil, fmt.Errorf("note is not UTF-8: %w", ErrMalformed)
	}
	for _, c := range msg {
		if c < 0x20 && c != '\n' {
			return nil, nil, fmt.Errorf("note holds control character %#02x: %w", c, ErrMalformed)
		}
	}
	split := bytes.LastIndex(msg, []byte("\n\n"))
	if split < 0 {
		return nil, nil, fmt.Errorf("note has no blank line before its signatures: %w", ErrMalformed)
	}
	text, sigs = msg[:split+1], msg[split+2:]
	if len(sigs) == 0 || sigs[len(sigs)-1] != '\n' {
		return nil, nil, fmt.Errorf("note has no signature lines: %w", ErrMalformed)
	}
	for rest := sigs; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		line := rest[:i]
		rest = rest[i+1:]
		body, ok := bytes.CutPrefix(line, []byte("— "))
		name, b64, ok2 := strings.Cut(string(body), " ")
		if !ok || !ok2 || !isKeyName(name) {
			return nil, nil, fmt.Errorf("note signature line %q is not \"— <name> <signature>\": %w", truncate(string(line)), ErrMalformed)
		}
		if sig, err := base64.StdEncoding.DecodeString(b64); err != nil || len(sig) < 5 {
			return nil, nil, fmt.Errorf("note signature by %q is not base64 of at least 5 bytes: %w", name, ErrMalformed)
		}
	}
	return text, sigs, nil
}
