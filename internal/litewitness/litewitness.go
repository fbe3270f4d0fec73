// Package litewitness runs torchwood's litewitness
// (filippo.io/torchwood/cmd/litewitness, pinned in go.mod as a tool), an
// independent implementation of C2SP tlog-witness, beside a zarlog process:
// the demo's second witness and the tests' third-party one. torchwood's
// witness is an internal package of its module, so it cannot run in
// process: Start builds the command with the go command (go tool -n, from
// the build cache after the first time), holds its key in an in-process
// ssh-agent as litewitness wants, adds the logs with torchwood's
// witnessctl, and runs it until Stop.
package litewitness

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/mod/sumdb/note"
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

	cmd  *exec.Cmd
	ln   net.Listener
	done chan error
	once sync.Once
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
		cmd := exec.CommandContext(ctx, "go", "tool", "-n", tool)
		cmd.Dir = cfg.GoDir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("litewitness: building %s with the go command: %w: %s", tool, err, strings.TrimSpace(stderr.String()))
		}
		bins[tool] = strings.TrimSpace(string(out))
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
	w := &Witness{done: make(chan error, 1)}
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
		probe, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			w.ln.Close()
			return nil, fmt.Errorf("litewitness: %w", err)
		}
		addr = probe.Addr().String()
		probe.Close()
	}
	w.cmd = exec.Command(bins["litewitness"], "-db", db, "-name", cfg.Name, "-key", ssh.FingerprintSHA256(sshPub),
		"-ssh-agent", w.ln.Addr().String(), "-listen", addr)
	out := cfg.Log
	if out == nil {
		out = io.Discard
	}
	w.cmd.Stdout, w.cmd.Stderr = out, out
	if err := w.cmd.Start(); err != nil {
		w.ln.Close()
		return nil, fmt.Errorf("litewitness: %w", err)
	}
	go func() { w.done <- w.cmd.Wait() }()
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		select {
		case err := <-w.done:
			w.ln.Close()
			return nil, fmt.Errorf("litewitness exited at start: %v", err)
		default:
		}
		if time.Since(start) > 30*time.Second || ctx.Err() != nil {
			w.Stop()
			return nil, fmt.Errorf("litewitness does not listen on %s", addr)
		}
	}
	w.URL = "http://" + addr
	h := sha256.Sum256(append([]byte(cfg.Name+"\n\x04"), pub...))
	w.VerifierKey = cfg.Name + "+" + hex.EncodeToString(h[:4]) + "+" + base64.StdEncoding.EncodeToString(append([]byte{0x04}, pub...))
	return w, nil
}

// Stop stops the litewitness (SIGKILL: it keeps its state in SQLite,
// committed before it answers) and its ssh-agent.
func (w *Witness) Stop() error {
	w.once.Do(func() {
		if w.cmd.Process != nil {
			w.cmd.Process.Kill()
		}
		<-w.done
		w.ln.Close()
	})
	return nil
}
