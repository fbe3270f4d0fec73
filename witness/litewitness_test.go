package witness

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/zarlog/zarlog/merkle"
)

// TestLitewitness: zarlog's witness client against torchwood's litewitness
// v0.6.1 (an independent C2SP tlog-witness server, pinned by go.mod's tool
// directive), its key held by an in-process ssh-agent as litewitness wants.
// Checkpoints of growing size, with consistency proofs, are cosigned and the
// cosignatures verify as cosignature/v1; a stale old size gets litewitness's
// 409 with its size, which the client reads as a *ConflictError; a fork of
// the witnessed size is refused (litewitness v0.6.1 with a 422, where the
// spec says 409); and a Group following a
// tlog-policy gets the log's note cosigned from a size litewitness has
// never seen.
func TestLitewitness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds litewitness: not in -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build litewitness")
	}
	dir := t.TempDir()
	build := exec.Command(goTool, "build", "-o", dir, "filippo.io/torchwood/cmd/litewitness", "filippo.io/torchwood/cmd/witnessctl")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building litewitness v0.6.1: %v\n%s", err, out)
	}

	// The witness key, in an ssh-agent.
	seed := sha256.Sum256([]byte("litewitness test key"))
	priv := ed25519.NewKeyFromSeed(seed[:])
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); agent.ServeAgent(keyring, c) }()
		}
	}()
	sshPub, err := ssh.NewPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	const name = "witness.example/lite"
	pub := priv.Public().(ed25519.PublicKey)
	h := sha256.Sum256(append([]byte(name+"\n\x04"), pub...))
	wv, err := merkle.NewCosignatureVerifier(name + "+" + hex.EncodeToString(h[:4]) + "+" + base64.StdEncoding.EncodeToString(append([]byte{0x04}, pub...)))
	if err != nil {
		t.Fatal(err)
	}

	l := newTestLog(t, "zarlog.example/lite-log", 7, "main")
	db := filepath.Join(dir, "litewitness.db")
	for _, args := range [][]string{{"add-log", "-db", db, "-origin", l.origin}, {"add-key", "-db", db, "-origin", l.origin, "-key", l.vkey}} {
		if out, err := exec.Command(filepath.Join(dir, "witnessctl"), args...).CombinedOutput(); err != nil {
			t.Fatalf("witnessctl %v: %v\n%s", args, err, out)
		}
	}
	probe, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := probe.Addr().String()
	probe.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lw := exec.CommandContext(ctx, filepath.Join(dir, "litewitness"), "-db", db, "-name", name, "-key", ssh.FingerprintSHA256(sshPub),
		"-ssh-agent", sock, "-listen", addr)
	var logs strings.Builder
	lw.Stdout, lw.Stderr = &logs, &logs
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("litewitness said:\n%s", logs.String())
		}
	})
	if err := lw.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); lw.Wait() }()
	prefix := "http://" + addr
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("litewitness does not listen on %s", addr)
		}
	}

	client, err := NewClient(prefix, wv, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	cosigned := func(msg, lines []byte) {
		t.Helper()
		merged, err := MergeCosignatures(msg, lines)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := merkle.VerifyCosignatures(merged, []*merkle.CosignatureVerifier{wv})
		if err != nil || len(cs) != 1 {
			t.Fatalf("litewitness's cosignature: %v, %v", cs, err)
		}
	}
	// Sizes 3, then 10 with a proof from 3.
	msg := l.grow(3)
	lines, err := client.AddCheckpoint(ctx, 0, nil, msg)
	if err != nil {
		t.Fatalf("size 3: %v", err)
	}
	cosigned(msg, lines)
	msg = l.grow(7)
	lines, err = client.AddCheckpoint(ctx, 3, l.proof(3), msg)
	if err != nil {
		t.Fatalf("size 10 from 3: %v", err)
	}
	cosigned(msg, lines)

	// A stale old size: 409 with litewitness's size.
	msg = l.grow(2)
	_, err = client.AddCheckpoint(ctx, 3, l.proofTo(3, 12), msg)
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Size != 10 || ce.RootMismatch {
		t.Fatalf("stale old size 3: %v (%+v), want a conflict at size 10", err, ce)
	}

	// A fork of size 10: the same log key, other leaves. C2SP tlog-witness
	// answers it with a 409 (zarlog's witness does: RootMismatch);
	// litewitness v0.6.1 answers 422, "bad consistency proof", which the
	// client reports as ErrInconsistent. Either way it is refused, and
	// said to be a conflict of roots, not a transport error.
	fork := newTestLog(t, l.origin, 7, "fork")
	forked := fork.grow(10)
	_, err = client.AddCheckpoint(ctx, 10, nil, forked)
	ce = nil
	switch {
	case errors.As(err, &ce) && ce.RootMismatch:
	case errors.Is(err, ErrInconsistent):
		t.Logf("litewitness refuses a fork of its size with 422 (C2SP tlog-witness says 409): %v", err)
	default:
		t.Fatalf("a fork of size 10: %v (%+v), want a refusal", err, ce)
	}

	// A Group from a policy: it follows litewitness's 409 (we claim 0).
	policy, err := merkle.ParsePolicy(fmt.Appendf(nil, "witness lite %s %s\nquorum lite\n", wvKey(t, name, pub), prefix))
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGroup(policy, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	msg = l.grow(5)
	out, err := g.Cosign(ctx, msg, TileProofs(l.tiles))
	if err != nil {
		t.Fatalf("Group.Cosign at size %d: %v", l.size(), err)
	}
	if cs, err := merkle.VerifyCosignatures(out, []*merkle.CosignatureVerifier{wv}); err != nil || len(cs) != 1 {
		t.Fatalf("the Group's note: %v, %v\n%s", cs, err, out)
	}
}

// wvKey is the cosignature/v1 verifier key of name and pub.
func wvKey(t *testing.T, name string, pub ed25519.PublicKey) string {
	t.Helper()
	h := sha256.Sum256(append([]byte(name+"\n\x04"), pub...))
	return name + "+" + hex.EncodeToString(h[:4]) + "+" + base64.StdEncoding.EncodeToString(append([]byte{0x04}, pub...))
}
