package merkle

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
)

// Signature type identifiers of C2SP signed-note.
const (
	sigTypeEd25519   = 0x01 // a log's checkpoint signature
	sigTypeCosignV1  = 0x04 // a timestamped Ed25519 cosignature
	cosignatureLabel = "cosignature/v1\n"
	timestampSize    = 8
	maxTimestamp     = 1<<63 - 1
)

// keyID returns the signed-note key ID: the first four bytes of
// SHA-256(name ‖ "\n" ‖ type ‖ public key), big-endian.
func keyID(name string, typ byte, pub []byte) uint32 {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{'\n', typ})
	h.Write(pub)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// cosignedMessage returns the message a cosignature/v1 signs: the header
// line, the timestamp line and the checkpoint text.
func cosignedMessage(timestamp uint64, text []byte) []byte {
	m := make([]byte, 0, len(cosignatureLabel)+25+len(text))
	m = append(m, cosignatureLabel...)
	m = append(m, "time "...)
	m = strconv.AppendUint(m, timestamp, 10)
	m = append(m, '\n')
	return append(m, text...)
}

// GenerateCosignerKey returns a new witness key pair for C2SP
// tlog-cosignature/v1 (timestamped Ed25519, signature type 0x04). The signer
// key skey is an ordinary signed-note Ed25519 signer key
// ("PRIVATE+KEY+<name>+<hash>+<key>", as other witnesses store theirs); the
// verifier key vkey is the cosignature vkey, of type 0x04 with the key ID
// that cosignatures carry. name must be a valid key name, conventionally a
// schema-less URL identifying the witness.
func GenerateCosignerKey(rand io.Reader, name string) (skey, vkey string, err error) {
	skey, _, err = GenerateKey(rand, name)
	if err != nil {
		return "", "", err
	}
	c, err := parseCosignerKey(skey)
	if err != nil {
		return "", "", err
	}
	return skey, c.VerifierKey(), nil
}

// A Cosigner makes C2SP tlog-cosignature/v1 cosignatures: a witness's
// timestamped Ed25519 signature over "cosignature/v1\ntime <t>\n" followed by
// the checkpoint text. It implements note.Signer, so note.Sign can add its
// cosignature to a note. It is safe for concurrent use.
type Cosigner struct {
	name string
	id   uint32
	key  ed25519.PrivateKey
	now  func() time.Time
}

// NewCosigner returns the cosigner for a signer key made by
// GenerateCosignerKey (any signed-note Ed25519 signer key). now is the clock
// whose Unix seconds become each cosignature's timestamp.
func NewCosigner(skey string, now func() time.Time) (*Cosigner, error) {
	c, err := parseCosignerKey(skey)
	if err != nil {
		return nil, err
	}
	c.now = now
	return c, nil
}

// parseCosignerKey returns the Cosigner, without a clock, for skey.
func parseCosignerKey(skey string) (*Cosigner, error) {
	// The key is checked by note.NewSigner (format, type and key hash); its
	// seed is then taken from the same string.
	name, key, err := ed25519SignerKey(skey)
	if err != nil {
		return nil, err
	}
	pub := key.Public().(ed25519.PublicKey)
	return &Cosigner{name: name, id: keyID(name, sigTypeCosignV1, pub), key: key}, nil
}

// Name returns the cosigner's key name.
func (c *Cosigner) Name() string { return c.name }

// KeyHash returns the cosignature key ID.
func (c *Cosigner) KeyHash() uint32 { return c.id }

// VerifierKey returns the cosigner's verifier key, of signature type 0x04.
func (c *Cosigner) VerifierKey() string {
	return CosignatureVerifierKey(c.name, c.key.Public().(ed25519.PublicKey))
}

// CosignatureVerifierKey returns the C2SP tlog-cosignature/v1 verifier key
// of the witness named name with Ed25519 public key pub:
// "<name>+<key ID>+<base64(0x04 ‖ pub)>". It does not check the name (see
// NewCosignatureVerifier, which does).
func CosignatureVerifierKey(name string, pub ed25519.PublicKey) string {
	b := append([]byte{sigTypeCosignV1}, pub...)
	return fmt.Sprintf("%s+%08x+%s", name, keyID(name, sigTypeCosignV1, pub), base64.StdEncoding.EncodeToString(b))
}

// Sign returns the timestamped signature of a checkpoint text: the timestamp
// (Unix seconds, big-endian uint64) followed by the Ed25519 signature. It
// returns an error if the clock is before 1970-01-01T00:00:01Z.
func (c *Cosigner) Sign(text []byte) ([]byte, error) {
	t := c.now().Unix()
	if t <= 0 {
		return nil, fmt.Errorf("cosigning at Unix time %d: not after the epoch", t)
	}
	sig := make([]byte, 0, timestampSize+ed25519.SignatureSize)
	sig = binary.BigEndian.AppendUint64(sig, uint64(t))
	return append(sig, ed25519.Sign(c.key, cosignedMessage(uint64(t), text))...), nil
}

// Cosign returns the cosignature of checkpoint c as one signature line,
// "— <name> <base64(key ID ‖ timestamp ‖ signature)>\n": the body of a
// tlog-witness add-checkpoint response, which a log appends to its signed
// note.
func (c *Cosigner) Cosign(cp Checkpoint) ([]byte, error) {
	text, err := cp.Format()
	if err != nil {
		return nil, err
	}
	sig, err := c.Sign(text)
	if err != nil {
		return nil, err
	}
	raw := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(sig)), c.id)
	raw = append(raw, sig...)
	line := make([]byte, 0, 8+len(c.name)+base64.StdEncoding.EncodedLen(len(raw)))
	line = append(line, "— "...)
	line = append(line, c.name...)
	line = append(line, ' ')
	line = base64.StdEncoding.AppendEncode(line, raw)
	return append(line, '\n'), nil
}

// A CosignatureVerifier verifies one witness's cosignature/v1 cosignatures.
// It implements note.Verifier. It is safe for concurrent use.
type CosignatureVerifier struct {
	name string
	id   uint32
	key  ed25519.PublicKey
}

// NewCosignatureVerifier returns the verifier for a cosignature verifier key
// "<name>+<hash>+<base64(0x04 ‖ public key)>". Keys of other types (a log's
// 0x01 key, ML-DSA-44 cosignatures) are an error.
func NewCosignatureVerifier(vkey string) (*CosignatureVerifier, error) {
	name, id, typ, pub, err := parseVerifierKey(vkey)
	if err != nil {
		return nil, err
	}
	if typ != sigTypeCosignV1 || len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("verifier key %q is of type %#02x with %d key bytes, want a cosignature/v1 key (0x04, 32 bytes): %w", truncate(vkey), typ, len(pub), ErrMalformed)
	}
	return &CosignatureVerifier{name: name, id: id, key: ed25519.PublicKey(pub)}, nil
}

// parseVerifierKey splits a vkey and checks its key ID.
func parseVerifierKey(vkey string) (name string, id uint32, typ byte, pub []byte, err error) {
	name, rest, _ := strings.Cut(vkey, "+")
	hash16, key64, _ := strings.Cut(rest, "+")
	h, err1 := strconv.ParseUint(hash16, 16, 32)
	key, err2 := base64.StdEncoding.Strict().DecodeString(key64)
	if len(hash16) != 8 || err1 != nil || err2 != nil || !isKeyName(name) || len(key) < 2 {
		return "", 0, 0, nil, fmt.Errorf("verifier key %q is not <name>+<8 hex>+<base64 key>: %w", truncate(vkey), ErrMalformed)
	}
	if keyID(name, key[0], key[1:]) != uint32(h) {
		return "", 0, 0, nil, fmt.Errorf("verifier key %q has the wrong key ID: %w", truncate(vkey), ErrMalformed)
	}
	return name, uint32(h), key[0], key[1:], nil
}

// Name returns the witness's key name.
func (v *CosignatureVerifier) Name() string { return v.name }

// KeyHash returns the cosignature key ID.
func (v *CosignatureVerifier) KeyHash() uint32 { return v.id }

// Verify reports whether sig is a valid cosignature/v1 (timestamp ‖
// Ed25519 signature) of the checkpoint text msg.
func (v *CosignatureVerifier) Verify(msg, sig []byte) bool {
	if len(sig) != timestampSize+ed25519.SignatureSize {
		return false
	}
	t := binary.BigEndian.Uint64(sig)
	if t > maxTimestamp {
		return false
	}
	return ed25519.Verify(v.key, cosignedMessage(t, msg), sig[timestampSize:])
}

// A Cosignature is a witness's verified cosignature of a checkpoint.
type Cosignature struct {
	Name      string    // the witness's key name
	KeyHash   uint32    // its key ID
	Timestamp time.Time // when the witness cosigned, to the second (UTC)
}

// VerifyCosignatures returns the valid cosignatures in the signed note msg
// by the given witnesses, in the note's order. Signatures by other keys (the
// log's, unknown witnesses') are ignored; a signature by one of the witnesses
// that does not verify is an error wrapping ErrSignature, as C2SP signed-note
// says a client should reject such a note. A note that no witness cosigned
// gives no cosignatures and no error. VerifyCosignatures does not check the
// log's signature: Open the checkpoint first.
func VerifyCosignatures(msg []byte, witnesses []*CosignatureVerifier) ([]Cosignature, error) {
	vs := make([]note.Verifier, len(witnesses))
	for i, w := range witnesses {
		vs[i] = w
	}
	if _, _, err := splitNote(msg); err != nil {
		return nil, err
	}
	n, err := note.Open(msg, note.VerifierList(vs...))
	if err != nil {
		if _, ok := err.(*note.UnverifiedNoteError); ok {
			return nil, nil
		}
		if _, ok := err.(*note.InvalidSignatureError); ok {
			return nil, fmt.Errorf("verifying cosignatures: %w: %w", ErrSignature, err)
		}
		return nil, fmt.Errorf("verifying cosignatures: %w: %w", ErrMalformed, err)
	}
	out := make([]Cosignature, 0, len(n.Sigs))
	for _, s := range n.Sigs {
		raw, err := base64.StdEncoding.DecodeString(s.Base64)
		if err != nil || len(raw) != 4+timestampSize+ed25519.SignatureSize {
			return nil, fmt.Errorf("cosignature by %s: malformed after verifying: %w", s.Name, ErrMalformed)
		}
		t := binary.BigEndian.Uint64(raw[4:])
		out = append(out, Cosignature{Name: s.Name, KeyHash: s.Hash, Timestamp: time.Unix(int64(t), 0).UTC()})
	}
	return out, nil
}

// ed25519SignerKey returns the name and private key of a signed-note Ed25519
// signer key, checked by note.NewSigner (format, type and key hash).
func ed25519SignerKey(skey string) (string, ed25519.PrivateKey, error) {
	s, err := NewSigner(skey)
	if err != nil {
		return "", nil, err
	}
	// "PRIVATE+KEY+<name>+<hash>+<base64 key>": the key may itself hold "+".
	parts := strings.SplitN(skey, "+", 5)
	raw, err := base64.StdEncoding.DecodeString(parts[len(parts)-1])
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != sigTypeEd25519 {
		return "", nil, fmt.Errorf("parsing signer key: not an Ed25519 key: %w", ErrMalformed)
	}
	return s.Name(), ed25519.NewKeyFromSeed(raw[1:]), nil
}
