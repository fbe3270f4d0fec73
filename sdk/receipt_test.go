package sdk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/verifier"
)

// chosenGame returns the events of a finished tavlarena-v1 game of emitter,
// each with the id its backend chose, prefix-<seq> (FORMATS.md §1.1 allows
// it), signed with the emitter's key.
func chosenGame(t testing.TB, emitter string, signer note.Signer, label, prefix string) []sdk.Event {
	t.Helper()
	c := testonly.Config{Scheme: events.Tavlarena, Variant: rules.Portes, Label: label, Emitter: emitter, MaxRolls: 6}
	p, err := testonly.Play(c)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]sdk.Event, len(p.Bodies))
	for i, body := range p.Bodies {
		h := c.Header(uint64(i))
		h.ID = fmt.Sprintf("%s-%d", prefix, i)
		var ev *events.Event
		if body.Type().Binding() {
			ev, err = events.NewSigned(h, body, signer)
		} else {
			ev, err = events.New(h, body)
		}
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := events.Format(ev)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = sdk.Event{ID: ev.ID, Data: leaf, OrderKey: ev.Game}
	}
	return out
}

// twoEmitters is a real ledger behind the NATS ingest, with two emitters,
// each its own NATS user with the permissions of docs/NATS.md §7 and an SDK
// client that knows the log's key.
type twoEmitters struct {
	ledger  *testlog.Ledger
	logKey  note.Verifier
	clients map[string]*sdk.Client
	signers map[string]note.Signer
}

func newTwoEmitters(t *testing.T, names ...string) *twoEmitters {
	t.Helper()
	te := &twoEmitters{clients: map[string]*sdk.Client{}, signers: map[string]note.Signer{}}
	var vkeys []string
	var access []ingest.EmitterAccess
	for _, n := range names {
		s, vkey, err := testonly.Key(n)
		if err != nil {
			t.Fatal(err)
		}
		te.signers[n] = s
		vkeys = append(vkeys, vkey)
		access = append(access, ingest.EmitterAccess{Emitter: n, Password: n + "-secret"})
	}
	te.ledger = testlog.OpenLedger(t, testlog.LedgerConfig{EmitterKeys: vkeys})
	var err error
	if te.logKey, err = verifier.ParseLogKey(te.ledger.VerifierKey()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := ingest.StartServer(ctx, ingest.ServerConfig{StoreDir: t.TempDir(), Port: -1, Emitters: access})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	inc, err := srv.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(inc.Close)
	in, err := ingest.New(inc, te.ledger.Ingest(ingest.Config{RetryMin: time.Millisecond, RetryMax: 50 * time.Millisecond, InfoInterval: -1}))
	if err != nil {
		t.Fatal(err)
	}
	ictx, icancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- in.Run(ictx) }()
	t.Cleanup(func() { icancel(); <-done })
	for _, a := range access {
		nc, err := sdk.Dial(srv.ClientURL(), a.Emitter, nats.UserInfo(a.Emitter, a.Password))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		c, err := sdk.New(nc, sdk.Config{Emitter: a.Emitter, LogKey: te.logKey, RetryMin: time.Millisecond, RetryMax: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		te.clients[a.Emitter] = c
	}
	return te
}

// publish publishes an emitter's events in order and returns the receipt
// of each, which the client checked.
func (te *twoEmitters) publish(t *testing.T, ctx context.Context, emitter string, evs []sdk.Event) []sdk.Receipt {
	t.Helper()
	c := te.clients[emitter]
	out := make([]sdk.Receipt, len(evs))
	for i, ev := range evs {
		ack, err := c.Publish(ctx, ev)
		if err != nil {
			t.Fatalf("%s publishing %s: %v", emitter, ev.ID, err)
		}
		if out[i], err = c.ReceiptOf(ctx, ev, ack); err != nil {
			t.Fatalf("%s's receipt of %s: %v", emitter, ev.ID, err)
		}
	}
	return out
}

// TestChosenIDs: two emitters whose backends choose their event ids, through
// the NATS ingest and a real ledger. The attacker (mallory) read the victim's
// id pattern (order-7-<seq>) from the public tiles and logged her own valid
// game under the victim's next ids first. Both emitters' games are logged
// whole, and every receipt each one holds proves its own bytes: CheckReceipt
// with its own event's bytes and the log's key passes, and the SDK checked it
// already (SignatureChecked). A receipt for another event's index —
// mallory's receipt of order-7-3 — does not prove alice's order-7-3:
// CheckReceipt with alice's bytes fails, and so does the SDK when mallory
// asks for a receipt of alice's bytes under that id. The receipt files are
// what zarlog-verify checks.
func TestChosenIDs(t *testing.T) {
	ctx := testCtx(t)
	te := newTwoEmitters(t, "alice", "mallory")
	victim := chosenGame(t, "alice", te.signers["alice"], "chosen-alice", "order-7")
	attack := chosenGame(t, "mallory", te.signers["mallory"], "chosen-mallory", "order-7")
	if len(attack) < len(victim)/2 {
		t.Fatalf("the attacker's game has %d events, the victim's %d", len(attack), len(victim))
	}

	mine := te.publish(t, ctx, "mallory", attack)
	theirs := te.publish(t, ctx, "alice", victim)
	for _, g := range []struct {
		name     string
		evs      []sdk.Event
		receipts []sdk.Receipt
	}{{"alice", victim, theirs}, {"mallory", attack, mine}} {
		for i, r := range g.receipts {
			ev := g.evs[i]
			if !r.SignatureChecked || r.EventID != ev.ID || !bytes.Equal(r.Extra, ev.Data) {
				t.Errorf("%s's receipt of %s: signature checked %t, id %s", g.name, ev.ID, r.SignatureChecked, r.EventID)
			}
			if _, err := sdk.CheckReceipt(r, ev.Data, te.logKey); err != nil {
				t.Errorf("%s's receipt of %s does not prove its bytes: %v", g.name, ev.ID, err)
			}
			leaves, err := te.ledger.L.LeavesAt(ctx, []uint64{r.Index})
			if err != nil || !bytes.Equal(leaves[0], ev.Data) {
				t.Errorf("%s's %s: leaf %d holds other bytes: %v", g.name, ev.ID, r.Index, err)
			}
			// The file: parsed back, it is the same receipt, and
			// zarlog-verify's check of it passes with the log's key.
			b, err := r.Format()
			if err != nil {
				t.Fatal(err)
			}
			back, err := sdk.ParseReceipt(b)
			if err != nil || back.EventID != ev.ID || back.Index != r.Index {
				t.Errorf("%s's receipt of %s read back: %+v, %v", g.name, ev.ID, back.EventID, err)
			}
			if rep := verifier.VerifyTlogProof(b, verifier.Options{LogKey: te.logKey}); rep.Exit() != 0 {
				t.Errorf("zarlog-verify of %s's receipt of %s: %s", g.name, ev.ID, rep.Text(verifier.English))
			}
		}
	}
	if n := te.ledger.Len(); n != len(victim)+len(attack) {
		t.Errorf("the log has %d leaves, the games %d events", n, len(victim)+len(attack))
	}
	if r := te.ledger.Rejected(); len(r) != 0 {
		t.Errorf("rejections: %+v", r)
	}

	// A receipt for another event's index proves nothing about this one.
	for k := range min(len(victim), len(attack)) {
		if victim[k].ID != attack[k].ID {
			t.Fatalf("event %d: ids %s and %s", k, victim[k].ID, attack[k].ID)
		}
		if _, err := sdk.CheckReceipt(mine[k], victim[k].Data, te.logKey); !errors.Is(err, sdk.ErrBadReceipt) {
			t.Errorf("mallory's receipt of %s checked against alice's bytes: %v, want ErrBadReceipt", attack[k].ID, err)
		}
		// A receipt without the leaf in it (a bare tlog-proof) fails on
		// the proof itself.
		bare := mine[k]
		bare.Extra = nil
		if _, err := sdk.CheckReceipt(bare, victim[k].Data, te.logKey); !errors.Is(err, merkle.ErrProof) {
			t.Errorf("mallory's bare receipt of %s checked against alice's bytes: %v, want ErrProof", attack[k].ID, err)
		}
	}
	// Another log's key (even of the same origin), a changed checkpoint, no
	// key at all: the signature does not check.
	_, otherVkey, err := merkle.GenerateKey(mrand.NewChaCha8(testonly.Label32("another log key")), te.logKey.Name())
	if err != nil {
		t.Fatal(err)
	}
	other, err := merkle.NewVerifier(otherVkey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sdk.CheckReceipt(theirs[0], victim[0].Data, other); !errors.Is(err, merkle.ErrSignature) {
		t.Errorf("a receipt checked with another key of the same origin: %v, want ErrSignature", err)
	}
	changed := theirs[0]
	changed.Checkpoint = bytes.Replace(bytes.Clone(changed.Checkpoint), []byte("\n"), []byte("\nx"), 1)
	if _, err := sdk.CheckReceipt(changed, victim[0].Data, te.logKey); !errors.Is(err, sdk.ErrBadReceipt) {
		t.Errorf("a receipt with a changed checkpoint: %v, want ErrBadReceipt", err)
	}
	if _, err := sdk.CheckReceipt(theirs[0], victim[0].Data, nil); !errors.Is(err, sdk.ErrBadReceipt) {
		t.Errorf("a receipt checked without a key: %v, want ErrBadReceipt", err)
	}

	// Mallory asking for a receipt of alice's bytes under the shared id
	// gets her own event's, which the SDK refuses to hand out.
	if _, err := te.clients["mallory"].Receipt(ctx, victim[2]); !errors.Is(err, sdk.ErrBadReceipt) {
		t.Errorf("mallory's receipt of alice's bytes: %v, want ErrBadReceipt", err)
	}
	// Mallory replaying alice's bytes on her own subject: the same bytes
	// are the same event, alice's (its emitter member says so), answered
	// as a duplicate of alice's leaf. Whatever mallory is told proves
	// alice's event at alice's index; nothing becomes mallory's.
	m := sdk.Event{ID: victim[4].ID, Data: victim[4].Data}
	ack, err := te.clients["mallory"].Publish(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := te.clients["mallory"].ReceiptOf(ctx, m, ack); err == nil && (r.Index != theirs[4].Index || !bytes.Equal(r.Extra, victim[4].Data)) {
		t.Errorf("mallory's replay of alice's %s: a receipt of leaf %d", m.ID, r.Index)
	}
	if n := te.ledger.Len(); n != len(victim)+len(attack) {
		t.Errorf("the replay appended: the log has %d leaves", n)
	}
	if r, err := te.clients["alice"].Receipt(ctx, victim[4]); err != nil || r.Index != theirs[4].Index {
		t.Errorf("alice's receipt of %s after mallory's copy: %+v, %v", victim[4].ID, r.Index, err)
	}
}

// TestTorchwoodVerifyProof: torchwood's VerifyProof (filippo.io/torchwood
// v0.10.0, with a policy of the log's key alone) accepts the receipts the
// SDK returns as C2SP tlog-proofs of their events, and refuses one checked
// against another event's bytes. torchwood v0.10.0 needs Go 1.27, so its
// check is the module internal/interop/torchwood, built here with
// GOTOOLCHAIN=go1.27.3 (the go command fetches that toolchain through the
// module proxy once).
func TestTorchwoodVerifyProof(t *testing.T) {
	if testing.Short() {
		t.Skip("builds torchwood v0.10.0 with Go 1.27: not in -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build torchwood")
	}
	_, file, _, _ := runtime.Caller(0)
	mod := filepath.Join(filepath.Dir(file), "..", "internal", "interop", "torchwood")
	dir := t.TempDir()
	bin := filepath.Join(dir, "torchwood-verify")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	build.Dir = mod
	build.Env = append(os.Environ(), "GOTOOLCHAIN=go1.27.3", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building internal/interop/torchwood with Go 1.27.3: %v\n%s", err, out)
	}

	vkey, leaves, proofs := gameReceipts(t, "torchwood", dir)
	args := []string{vkey}
	var want []string
	for seq := range leaves {
		args = append(args, leaves[seq], proofs[seq])
		want = append(want, "ok")
		if seq > 0 { // the receipt checked against the previous event's bytes
			args = append(args, leaves[seq-1], proofs[seq])
			want = append(want, "fail")
		}
	}
	out, err := exec.Command(bin, args...).Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("torchwood-verify printed %d lines for %d proofs:\n%s", len(got), len(want), out)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("proof %d: torchwood says %q, want %s", i, got[i], want[i])
		}
	}
	t.Logf("torchwood's VerifyProof accepted %d receipts and refused %d checked against another event", len(leaves), len(leaves)-1)
}

// gameReceipts plays a game through the SDK, writes each event's bytes and
// the SDK's receipt of it to dir, and returns the log's key and the files'
// names by seq.
func gameReceipts(t *testing.T, label, dir string) (vkey string, leaves, proofs []string) {
	t.Helper()
	ctx := testCtx(t)
	s := newStack(t, stackOpts{})
	g, err := s.backend.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats(label), Settings: []byte(`{"variant":"portes"}`)})
	if err != nil {
		t.Fatal(err)
	}
	g.Contribute(ctx, 0, testonly.Label32(label+"0"))
	if err := g.Contribute(ctx, 1, testonly.Label32(label+"1")); err != nil {
		t.Fatal(err)
	}
	play(t, ctx, g, label, 4)
	evs, err := g.Leaves(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for seq, leaf := range evs {
		r, err := g.Receipt(ctx, uint64(seq))
		if err != nil {
			t.Fatal(err)
		}
		b, err := r.Format()
		if err != nil {
			t.Fatal(err)
		}
		proofs = append(proofs, filepath.Join(dir, fmt.Sprintf("%d.tlog-proof", seq)))
		leaves = append(leaves, filepath.Join(dir, fmt.Sprintf("%d.leaf", seq)))
		if err := os.WriteFile(proofs[seq], b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(leaves[seq], leaf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s.ledger.VerifierKey(), leaves, proofs
}

// TestJSCheckReceipt: the JavaScript package's checkReceipt (what a
// player's app runs) accepts the receipts the SDK returns, alone and with
// the app's copy of the event, and refuses each one with another event's
// bytes.
func TestJSCheckReceipt(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	pkg := filepath.Join(filepath.Dir(file), "..", "verifier", "js")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(pkg, "node_modules", "@noble", "curves", "package.json"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node or the JavaScript package's dependencies are missing (.ci/deps installs them): %v", err)
		}
		t.Skipf("node or the JavaScript package's dependencies are missing (run .ci/deps): %v", err)
	}
	dir := t.TempDir()
	vkey, leaves, proofs := gameReceipts(t, "js", dir)
	script := `
import { readFileSync } from "node:fs";
import { checkReceipt } from "` + filepath.ToSlash(filepath.Join(pkg, "src", "index.js")) + `";
const [vkey, ...files] = process.argv.slice(1);
for (let i = 0; i < files.length; i += 2) {
  const leaf = readFileSync(files[i]), proof = readFileSync(files[i + 1], "utf8");
  const r = await checkReceipt(proof, vkey, undefined, leaf);
  console.log(r.ok ? "ok" : "fail " + r.message.id);
}
`
	args := []string{"--input-type=module", "-e", script, vkey}
	var want []string
	for seq := range leaves {
		args = append(args, leaves[seq], proofs[seq])
		want = append(want, "ok")
		if seq > 0 {
			args = append(args, leaves[seq-1], proofs[seq])
			want = append(want, "fail InTlogLeafDiffers")
		}
	}
	out, err := exec.Command(node, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("checkReceipt on the SDK's receipts:\n%s\nwant\n%s", out, strings.Join(want, "\n"))
	}
}

// TestReceiptSize measures a receipt's bytes as a tlog-proof file in logs
// of a thousand, a million and a billion leaves (the inclusion proof of the
// first leaf, the longest: ⌈log2 size⌉ hashes), for a game's commit (the
// receipt a backend waits for) and a roll, under a checkpoint signed by the
// log alone with an origin of the usual length: the figures of
// docs/FORMATS.md §4. Each witness's cosignature on the checkpoint adds a
// line of about 140 bytes.
func TestReceiptSize(t *testing.T) {
	signer, _, err := testonly.Key("log.example.com/log")
	if err != nil {
		t.Fatal(err)
	}
	emitterKey, _, err := testonly.Key("tavla-east")
	if err != nil {
		t.Fatal(err)
	}
	c := testonly.Config{Scheme: events.Tavlarena, Variant: rules.Portes, Label: "size", MaxRolls: 4}
	p, err := testonly.Play(c)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := testonly.Events(c, p.Bodies, emitterKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf := func(ev *events.Event) []byte {
		b, err := events.Format(ev)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var roll []byte
	for _, ev := range evs {
		if ev.Type == events.TypeRoll {
			roll = leaf(ev)
			break
		}
	}
	commit := leaf(evs[0])
	for _, tc := range []struct {
		size uint64
		max  int // bytes, for the commit
	}{{1_000, 1500}, {1_000_000, 2000}, {1_000_000_000, 2500}} {
		note, err := merkle.Sign(merkle.Checkpoint{Origin: signer.Name(), Size: tc.size, Hash: merkle.Hash{1}}, signer)
		if err != nil {
			t.Fatal(err)
		}
		hashes := 0
		for n := tc.size - 1; n > 0; n >>= 1 {
			hashes++
		}
		for _, l := range []struct {
			name string
			leaf []byte
		}{{"commit", commit}, {"roll", roll}} {
			r := sdk.Receipt{TlogProof: merkle.TlogProof{Extra: l.leaf, Index: tc.size / 2, Proof: make([]merkle.Hash, hashes), Checkpoint: note}}
			b, err := r.Format()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d leaves, %s: %d bytes (the event %d, %d proof hashes %d, the checkpoint %d)", tc.size, l.name, len(b), len(l.leaf), hashes, 45*hashes, len(note))
			if len(b) > tc.max {
				t.Errorf("a receipt of a %s in a log of %d leaves is %d bytes, more than %d", l.name, tc.size, len(b), tc.max)
			}
		}
	}
}
