// Package litewitness runs torchwood's litewitness
// (filippo.io/torchwood/cmd/litewitness, pinned in go.mod as a tool), an
// independent implementation of C2SP tlog-witness, beside a zarlog process:
// the demo's second witness and the tests' third-party one. torchwood's
// witness is an internal package of its module, so it cannot run in
// process: Start builds the command with the go command (package
// toolproc), holds its key in an in-process ssh-agent as litewitness
// wants, adds the logs with torchwood's witnessctl, and runs it until Stop.
package litewitness

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/internal/toolproc"
	"github.com/zarlog/zarlog/merkle"
)

// Version is the litewitness go.mod pins.
const Version = "torchwood v0.6.1"

// Config configures a litewitness. Dir and Name are required.
type Config struct {
	// Dir holds its SQLite database and the ssh-agent's socket (its path
	// must be short enough for a Unix socket: a temporary directory is).
	Dir string
	// Name is the witness's key name, a schema-less URL.
	Name string
	// Logs are the verifier keys of the logs it witnesses (their key names
	// are the logs' origins).
	Logs []string
	// Addr is the listen address. Zero means a free port of 127.0.0.1.
	Addr string
	// Rand is the source of its key. Nil means crypto/rand.
	Rand io.Reader
	// GoDir is the directory the go command runs in: inside zarlog's
	// module, whose go.mod pins the tool. Zero means the current one.
	GoDir string
	// Log receives litewitness's own logs. Nil discards them.
	Log io.Writer
}

// A Witness is a running litewitness.
type Witness struct {
	// URL is its submission prefix (the add-checkpoint URL without
	// /add-checkpoint).
	URL string
	// VerifierKey is its cosignature/v1 verifier key.
	VerifierKey string

	proc *toolproc.Proc
	ln   net.Listener
}

// Start builds and starts a litewitness and returns once it listens. It
// fails if the go command cannot build it (no go command, or not in
// zarlog's module) or it does not start within 30 s.
func Start(ctx context.Context, cfg Config) (*Witness, error) {
	if cfg.Dir == "" || cfg.Name == "" {
		return nil, errors.New("litewitness: Dir and Name are required")
	}
	bins := map[string]string{}
	for _, tool := range []string{"litewitness", "witnessctl"} {
		bin, err := toolproc.Path(ctx, cfg.GoDir, tool)
		if err != nil {
			return nil, fmt.Errorf("litewitness: %w", err)
		}
		bins[tool] = bin
	}
	r := cfg.Rand
	if r == nil {
		r = rand.Reader
	}
	pub, priv, err := ed25519.GenerateKey(r)
	if err != nil {
		return nil, fmt.Errorf("litewitness: its key: %w", err)
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("litewitness: %w", err)
	}
	db := filepath.Join(cfg.Dir, "litewitness.db")
	for _, vkey := range cfg.Logs {
		v, err := note.NewVerifier(vkey)
		if err != nil {
			return nil, fmt.Errorf("litewitness: log key %q: %w", vkey, err)
		}
		for _, args := range [][]string{{"add-log", "-db", db, "-origin", v.Name()}, {"add-key", "-db", db, "-origin", v.Name(), "-key", vkey}} {
			if out, err := exec.CommandContext(ctx, bins["witnessctl"], args...).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("litewitness: witnessctl %s: %w: %s", args[0], err, bytes.TrimSpace(out))
			}
		}
	}
	w := &Witness{}
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		return nil, fmt.Errorf("litewitness: %w", err)
	}
	if w.ln, err = net.Listen("unix", filepath.Join(cfg.Dir, "agent.sock")); err != nil {
		return nil, fmt.Errorf("litewitness: the ssh-agent: %w", err)
	}
	go func() {
		for {
			c, err := w.ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); agent.ServeAgent(keyring, c) }()
		}
	}()
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		w.ln.Close()
		return nil, fmt.Errorf("litewitness: %w", err)
	}
	addr := cfg.Addr
	if addr == "" {
		if addr, err = toolproc.FreeAddr(); err != nil {
			w.ln.Close()
			return nil, fmt.Errorf("litewitness: %w", err)
		}
	}
	args := []string{"-db", db, "-name", cfg.Name, "-key", ssh.FingerprintSHA256(sshPub),
		"-ssh-agent", w.ln.Addr().String(), "-listen", addr}
	if w.proc, err = toolproc.Start(ctx, bins["litewitness"], args, cfg.Log, addr); err != nil {
		w.ln.Close()
		return nil, fmt.Errorf("litewitness: %w", err)
	}
	w.URL = "http://" + addr
	w.VerifierKey = merkle.CosignatureVerifierKey(cfg.Name, pub)
	return w, nil
}

// Stop stops the litewitness (SIGKILL: it keeps its state in SQLite,
// committed before it answers) and its ssh-agent.
func (w *Witness) Stop() error {
	w.proc.Stop()
	w.ln.Close()
	return nil
}
