package ledger

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	sumnote "golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/merkle"
)

// copyTo imports a's leaves [from, to) into b, with a's append times, the
// root of a's tree at to, and note (nil: none).
func copyTo(t *testing.T, a, b *Ledger, from, to uint64, note []byte) error {
	t.Helper()
	ctx := context.Background()
	leaves, err := a.Leaves(ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	var times []AppendTime
	if to > from {
		if times, err = a.AppendTimes(ctx, from, to); err != nil {
			t.Fatal(err)
		}
	}
	root, err := merkle.RootHash(ctx, a.TileReader(), to)
	if err != nil {
		t.Fatal(err)
	}
	return b.Import(ctx, ImportBatch{Start: from, Leaves: leaves, Times: times, Root: root, Note: note})
}

// TestImportIdentity copies a log with duplicates, rejections, anchored-v1
// games (whose replay depends on the append times) and unfinished games
// into another ledger in runs of every size, some with their checkpoint
// and some without: the copy has the same tree, the same checkpoint, the
// same append time for every leaf and byte for byte the same projections;
// a Rebuild of the copy changes nothing.
func TestImportIdentity(t *testing.T) {
	ea, eb := newTestEnv(t), newTestEnv(t)
	eb.k = ea.k
	eb.cfg.Signer, eb.cfg.Verifier, eb.cfg.Emitters = ea.cfg.Signer, ea.cfg.Verifier, ea.cfg.Emitters
	a, b := ea.open(), eb.open()
	gen := newStreamGen(t, ea.k, "import", 29, 9)
	var in []Input
	for i := range 1800 {
		leaf := gen.next()
		in = append(in, inputs(t, leaf)...)
		if i%89 == 0 {
			in = append(in, inputs(t, leaf)...)
			in = append(in, Input{Emitter: emitterB, Data: leaf})
		}
	}
	var sizes []uint64
	var notes [][]byte
	for i, n := 0, 1; i < len(in); i, n = i+n, n%300+37 {
		mustAppend(t, a, in[i:min(i+n, len(in))])
		if n%3 != 0 {
			mustSign(t, a)
			note, cp, _ := a.Latest()
			sizes, notes = append(sizes, cp.Size), append(notes, note)
		}
	}
	final := mustSign(t, a)
	fnote, _, _ := a.Latest()
	sizes, notes = append(sizes, final.Size), append(notes, fnote)

	from := uint64(0)
	for i, size := range sizes {
		var note []byte
		if i%2 == 0 || i == len(sizes)-1 {
			note = notes[i]
		}
		if err := copyTo(t, a, b, from, size, note); err != nil {
			t.Fatalf("importing [%d, %d): %v", from, size, err)
		}
		from = size
	}
	bnote, bcp, _ := b.Latest()
	if !bytes.Equal(bnote, fnote) || bcp.Size != final.Size || bcp.Hash != final.Hash {
		t.Fatalf("the copy publishes %q, want %q", bnote, fnote)
	}
	if sn, _ := b.Signed(); !bytes.Equal(sn, fnote) {
		t.Fatalf("the copy's signed checkpoint is %q", sn)
	}
	ctx := context.Background()
	for i := uint64(0); i < final.Size; i++ {
		ta, err := a.AppendTime(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := b.AppendTime(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		if !ta.Equal(tb) {
			t.Fatalf("leaf %d: appended at %s, the copy says %s", i, ta, tb)
		}
	}
	want := dumpProjections(t, a)
	if len(want) < 100 {
		t.Fatalf("only %d projection records", len(want))
	}
	diffDumps(t, want, dumpProjections(t, b))
	if err := b.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	diffDumps(t, want, dumpProjections(t, b))

	// The copy goes on as the sequencer: its next checkpoint extends the
	// imported one.
	more := gen.take(40)
	appendAll(t, b, more, 7)
	cp := mustSign(t, b)
	proof, err := b.ConsistencyProof(ctx, final.Size, cp.Size)
	if err != nil {
		t.Fatal(err)
	}
	if err := merkle.CheckConsistency(final.Size, cp.Size, final.Hash, cp.Hash, proof); err != nil {
		t.Fatal(err)
	}
}

// TestImportRefuses: an import that does not continue the tree, whose
// leaves do not give its root, or whose checkpoint is not the log's tree,
// writes nothing.
func TestImportRefuses(t *testing.T) {
	ea, eb := newTestEnv(t), newTestEnv(t)
	eb.k = ea.k
	eb.cfg.Signer, eb.cfg.Verifier, eb.cfg.Emitters = ea.cfg.Signer, ea.cfg.Verifier, ea.cfg.Emitters
	a, b := ea.open(), eb.open()
	gen := newStreamGen(t, ea.k, "refuse", 3, 4)
	appendAll(t, a, gen.take(300), 50)
	cp := mustSign(t, a)
	note, _, _ := a.Latest()
	ctx := context.Background()
	leaves, _ := a.Leaves(ctx, 0, cp.Size)
	times, _ := a.AppendTimes(ctx, 0, cp.Size)

	skey, _, err := sumnote.GenerateKey(crand.Reader, cp.Origin) // another key of the same name
	if err != nil {
		t.Fatal(err)
	}
	osigner, err := sumnote.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	onote, err := merkle.Sign(cp, osigner)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(leaves[17])
	bad[len(bad)-2] ^= 1
	for _, c := range []struct {
		name string
		b    ImportBatch
		is   error
	}{
		{"not at the tree's size", ImportBatch{Start: 5, Leaves: leaves[5:], Times: times, Root: cp.Hash}, ErrRange},
		{"another root", ImportBatch{Leaves: leaves, Times: times, Root: merkle.LeafHash([]byte("x"))}, ErrTampered},
		{"a changed leaf", ImportBatch{Leaves: append(append(append([][]byte{}, leaves[:17]...), bad), leaves[18:]...), Times: times, Root: cp.Hash}, ErrTampered},
		{"a checkpoint of fewer leaves", ImportBatch{Leaves: leaves[:100], Times: times, Root: must(merkle.RootHash(ctx, a.TileReader(), 100)), Note: note}, ErrTampered},
		{"another key's checkpoint", ImportBatch{Leaves: leaves, Times: times, Root: cp.Hash, Note: onote}, merkle.ErrSignature},
		{"no append time", ImportBatch{Leaves: leaves, Root: cp.Hash}, ErrCorrupt},
		{"times out of order", ImportBatch{Leaves: leaves, Times: []AppendTime{times[0], times[0]}, Root: cp.Hash}, ErrCorrupt},
	} {
		err := b.Import(ctx, c.b)
		if !errors.Is(err, c.is) {
			t.Errorf("%s: %v, want %v", c.name, err, c.is)
		}
		if n, _ := b.Size(); n != 0 {
			t.Fatalf("%s: the tree has %d leaves after a refused import", c.name, n)
		}
	}
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.Import(ctx, ImportBatch{Leaves: leaves, Times: times, Root: cp.Hash, Note: note}); err != nil {
		t.Fatal(err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestPublishHook: with Config.Publish a checkpoint is published only once
// Publish accepts it, a refused one is offered again, ErrFenced stops the
// ledger, and a ledger reopened with Publish publishes nothing before the
// first round Publish accepts (its stored checkpoint may be one that never
// got there).
func TestPublishHook(t *testing.T) {
	e := newTestEnv(t)
	var (
		fail    error
		offered []merkle.Checkpoint
		tiles   int
	)
	e.cfg.Publish = func(ctx context.Context, c Commit) error {
		offered = append(offered, c.Checkpoint)
		old := uint64(0)
		if len(offered) > 1 {
			old = offered[len(offered)-2].Size
		}
		for _, tl := range merkle.NewTiles(old, c.Checkpoint.Size) {
			if _, err := c.ReadTile(ctx, tl); err != nil {
				return err
			}
			tiles++
		}
		if c.Checkpoint.Size > 0 {
			if ts, err := c.AppendTimes(ctx, 0, c.Checkpoint.Size); err != nil || len(ts) == 0 || ts[0].Index != 0 {
				t.Errorf("AppendTimes: %v, %v", ts, err)
			}
		}
		return fail
	}
	l := e.open()
	gen := newStreamGen(t, e.k, "publish", 5, 3)
	appendAll(t, l, gen.take(600), 100)
	fail = errors.New("the bucket is away")
	if _, err := l.Sign(context.Background()); err == nil {
		t.Fatal("Sign succeeded while Publish failed")
	}
	if n, _, _ := l.Latest(); n != nil {
		t.Fatal("a checkpoint Publish refused was published")
	}
	if n, cp := l.Signed(); n == nil || cp.Size != 600 {
		t.Fatalf("Signed: %d", cp.Size)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if _, err := l.WaitCovering(ctx, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitCovering: %v", err)
	}
	cancel()
	fail = nil
	cp := mustSign(t, l)
	if cp.Size != 600 || len(offered) != 2 || offered[1].Hash != offered[0].Hash {
		t.Fatalf("offered %v", offered)
	}
	if tiles == 0 {
		t.Fatal("no tile read")
	}
	// Reopened: the stored checkpoint is not published until Publish
	// takes it.
	appendAll(t, l, gen.take(10), 10)
	fail = errors.New("away again")
	l.Sign(context.Background())
	l.Close()
	fail = nil
	l2, err := Open(context.Background(), e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if n, _, _ := l2.Latest(); n != nil {
		t.Fatal("the reopened ledger published its stored checkpoint without Publish")
	}
	if cp := mustSign(t, l2); cp.Size != 610 {
		t.Fatalf("size %d", cp.Size)
	}
	// Fenced: the ledger stops.
	appendAll(t, l2, gen.take(3), 3)
	fail = ErrFenced
	if _, err := l2.Sign(context.Background()); !errors.Is(err, ErrStopped) || !errors.Is(err, ErrFenced) {
		t.Fatalf("Sign when fenced: %v", err)
	}
	select {
	case <-l2.Done():
	default:
		t.Fatal("the fenced ledger did not stop")
	}
}

// A recordingHandler keeps the log records written through it.
type recordingHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

// TestPublishNotSequencer: a Publish that says ErrNotSequencer (a standby)
// is expected, not a failure: the signing loop logs it once at Info, never
// as an error, does not count it in zarlog_ledger_publish_failures_total,
// and Close says so at Info too; the checkpoint is published once Publish
// takes it.
func TestPublishNotSequencer(t *testing.T) {
	e := newTestEnv(t)
	h := &recordingHandler{}
	reg := prometheus.NewRegistry()
	var standby atomic.Bool
	standby.Store(true)
	e.cfg.Logger, e.cfg.Metrics, e.cfg.CheckpointInterval = slog.New(h), reg, 5*time.Millisecond
	e.cfg.Publish = func(ctx context.Context, c Commit) error {
		if standby.Load() {
			return fmt.Errorf("storage: %w", ErrNotSequencer)
		}
		return nil
	}
	l, err := Open(context.Background(), e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	gen := newStreamGen(t, e.k, "standby", 2, 3)
	appendAll(t, l, gen.take(20), 10)
	time.Sleep(100 * time.Millisecond) // about 20 rounds
	if n, _, _ := l.Latest(); n != nil {
		t.Fatal("a checkpoint was published while Publish said ErrNotSequencer")
	}
	standby.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := l.WaitCovering(ctx, 19); err != nil {
		t.Fatalf("not published once Publish took it: %v", err)
	}
	standby.Store(true)
	appendAll(t, l, gen.take(5), 5)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if v := testutil.ToFloat64(l.met.publishFailures); v != 0 {
		t.Errorf("zarlog_ledger_publish_failures_total is %v", v)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	infos := 0
	for _, r := range h.records {
		if r.Level >= slog.LevelWarn {
			t.Errorf("logged at %v: %s", r.Level, r.Message)
		}
		if strings.Contains(r.Message, "does not sequence the log") {
			infos++
		}
	}
	if infos != 2 { // once in the loop, once at close
		t.Errorf("%d Info lines about not sequencing, want 2", infos)
	}
}
