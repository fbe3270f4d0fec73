// Package sigsumwitness runs Sigsum's witness
// (sigsum.org/sigsum-go/cmd/sigsum-witness, pinned in go.mod as a tool), an
// independent implementation of C2SP tlog-witness with C2SP cosignature/v1
// cosignatures, beside a zarlog process: the tests' second third-party
// witness, after torchwood's litewitness (package litewitness).
//
// sigsum-witness v0.14.1 cosigns exactly one log, named by its Ed25519
// public key, and only checkpoints whose origin is the Sigsum origin of
// that key: "sigsum.org/v1/tree/" and the hex SHA-256 of the 32-byte
// public key (it answers 404 for any other origin). Its checkpoint parser
// also wants the log's key name to be the origin and no extension lines,
// which zarlog's checkpoints satisfy. A zarlog log can therefore be
// witnessed by it only if its origin is that name: LogKey makes such a
// key. A zarlog log with any other origin (the default, or a URL prefix as
// witness networks want) cannot be cosigned by sigsum-witness v0.14.1;
// docs/WITNESS.md says so.
//
// Start builds the command with the go command (package toolproc), writes
// the witness's key as an OpenSSH private key file and the log's as an
// OpenSSH public key, and runs the witness until Stop. Its state (the last cosigned tree head) is a file in
// Config.Dir, so a witness restarted on the same Dir keeps its size.
package sigsumwitness

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/internal/toolproc"
	"github.com/zarlog/zarlog/merkle"
)

// Version is the sigsum-witness go.mod pins.
const Version = "sigsum-go v0.14.1"

// Origin returns the only checkpoint origin a sigsum-witness accepts for
// the log of Ed25519 public key pub: "sigsum.org/v1/tree/" followed by the
// lower-case hex SHA-256 of pub.
func Origin(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return "sigsum.org/v1/tree/" + hex.EncodeToString(h[:])
}

// WitnessName returns the key name sigsum-witness gives its cosignature
// lines for the witness key pub: "sigsum.org/v1/witness/" followed by the
// lower-case hex SHA-256 of pub.
func WitnessName(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return "sigsum.org/v1/witness/" + hex.EncodeToString(h[:])
}

// LogKey returns a new log key whose origin is Origin of its public key,
// the only kind of log a sigsum-witness cosigns: the Ed25519 signer key
// (skey, as DIR/log.key holds it) and verifier key (vkey) in the
// signed-note formats of merkle.GenerateKey. Nil rand means crypto/rand.
func LogKey(r io.Reader) (skey, vkey string, err error) {
	if r == nil {
		r = rand.Reader
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(r, seed); err != nil {
		return "", "", fmt.Errorf("sigsumwitness: the log key: %w", err)
	}
	pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	name := Origin(pub)
	vkey, err = note.NewEd25519VerifierKey(name, pub)
	if err != nil {
		return "", "", fmt.Errorf("sigsumwitness: the log key: %w", err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return "", "", fmt.Errorf("sigsumwitness: the log key: %w", err)
	}
	skey = fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", name, v.KeyHash(), base64.StdEncoding.EncodeToString(append([]byte{0x01}, seed...)))
	// The signer key must be the verifier key's: a round trip through
	// the note package says so.
	if s, err := note.NewSigner(skey); err != nil || s.KeyHash() != v.KeyHash() {
		return "", "", fmt.Errorf("sigsumwitness: the log key's signer key differs from its verifier key (%v)", err)
	}
	return skey, vkey, nil
}

// Config configures a sigsum-witness. Dir and Log are required.
type Config struct {
	// Dir holds its key files and its state file.
	Dir string
	// Log is the verifier key of the one log it witnesses; its name must
	// be Origin of its public key (LogKey).
	Log string
	// Addr is the listen address. Zero means a free port of 127.0.0.1.
	Addr string
	// Rand is the source of its key. Nil means crypto/rand.
	Rand io.Reader
	// GoDir is the directory the go command runs in: inside zarlog's
	// module, whose go.mod pins the tool. Zero means the current one.
	GoDir string
	// Out receives sigsum-witness's own logs. Nil discards them.
	Out io.Writer
}

// A Witness is a running sigsum-witness.
type Witness struct {
	// URL is its submission prefix (the add-checkpoint URL without
	// /add-checkpoint).
	URL string
	// Name is its key name (WitnessName of its key).
	Name string
	// VerifierKey is its cosignature/v1 verifier key, named Name.
	VerifierKey string
	// StateFile is where it keeps the last tree head it cosigned (a
	// Sigsum cosigned tree head, in Sigsum's ASCII format).
	StateFile string

	proc *toolproc.Proc
}

// Start builds and starts a sigsum-witness for the log cfg.Log and returns
// once it listens. It fails if the log's origin is not the one
// sigsum-witness requires, if the go command cannot build it (no go
// command, or not in zarlog's module) or if it does not start within 30 s.
// A Dir used before keeps its key and its state.
func Start(ctx context.Context, cfg Config) (*Witness, error) {
	if cfg.Dir == "" || cfg.Log == "" {
		return nil, errors.New("sigsumwitness: Dir and Log are required")
	}
	logPub, err := ed25519Key(cfg.Log)
	if err != nil {
		return nil, fmt.Errorf("sigsumwitness: the log key %q: %w", cfg.Log, err)
	}
	if name, _, _ := strings.Cut(cfg.Log, "+"); name != Origin(logPub) {
		return nil, fmt.Errorf("sigsumwitness: the log's origin is %q: sigsum-witness cosigns only the origin %q (sigsum.org/v1/tree/ and the SHA-256 of its key)", name, Origin(logPub))
	}
	bin, err := toolproc.Path(ctx, cfg.GoDir, "sigsum-witness")
	if err != nil {
		return nil, fmt.Errorf("sigsumwitness: %w", err)
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("sigsumwitness: %w", err)
	}
	keyFile := filepath.Join(cfg.Dir, "witness.key")
	pub, err := loadOrCreateKey(keyFile, cfg.Rand)
	if err != nil {
		return nil, err
	}
	logSSH, err := ssh.NewPublicKey(logPub)
	if err != nil {
		return nil, fmt.Errorf("sigsumwitness: %w", err)
	}
	logFile := filepath.Join(cfg.Dir, "log.pub")
	if err := os.WriteFile(logFile, ssh.MarshalAuthorizedKey(logSSH), 0o644); err != nil {
		return nil, fmt.Errorf("sigsumwitness: %w", err)
	}
	addr := cfg.Addr
	if addr == "" {
		if addr, err = toolproc.FreeAddr(); err != nil {
			return nil, fmt.Errorf("sigsumwitness: %w", err)
		}
	}
	w := &Witness{StateFile: filepath.Join(cfg.Dir, "state")}
	args := []string{"--signing-key", keyFile, "--log-key", logFile, "--state-file", w.StateFile, addr}
	if w.proc, err = toolproc.Start(ctx, bin, args, cfg.Out, addr); err != nil {
		return nil, fmt.Errorf("sigsumwitness: %w", err)
	}
	w.URL = "http://" + addr
	w.Name = WitnessName(pub)
	w.VerifierKey = merkle.CosignatureVerifierKey(w.Name, pub)
	return w, nil
}

// Stop stops the sigsum-witness (SIGKILL: it replaces its state file
// atomically before it answers).
func (w *Witness) Stop() error {
	w.proc.Stop()
	return nil
}

// loadOrCreateKey returns the public key of the OpenSSH private key in
// file, creating the file (mode 0600) with a new key if it does not exist.
func loadOrCreateKey(file string, r io.Reader) (ed25519.PublicKey, error) {
	if b, err := os.ReadFile(file); err == nil {
		k, err := ssh.ParseRawPrivateKey(b)
		if err != nil {
			return nil, fmt.Errorf("sigsumwitness: the witness key %s: %w", file, err)
		}
		priv, ok := k.(*ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("sigsumwitness: the witness key %s is not an Ed25519 key", file)
		}
		return priv.Public().(ed25519.PublicKey), nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("sigsumwitness: %w", err)
	}
	if r == nil {
		r = rand.Reader
	}
	pub, priv, err := ed25519.GenerateKey(r)
	if err != nil {
		return nil, fmt.Errorf("sigsumwitness: its key: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, fmt.Errorf("sigsumwitness: its key: %w", err)
	}
	if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
		return nil, fmt.Errorf("sigsumwitness: %w", err)
	}
	return pub, nil
}

// ed25519Key returns the public key of a signed-note Ed25519 verifier key
// (signature type 0x01), whose form and key hash note.NewVerifier checks.
func ed25519Key(vkey string) (ed25519.PublicKey, error) {
	if _, err := note.NewVerifier(vkey); err != nil {
		return nil, err
	}
	parts := strings.SplitN(vkey, "+", 3)
	b, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(b) != 1+ed25519.PublicKeySize || b[0] != 0x01 {
		return nil, errors.New("not an Ed25519 key of type 0x01")
	}
	return ed25519.PublicKey(b[1:]), nil
}
