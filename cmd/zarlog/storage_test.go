package main

// The log in object storage, end to end: built `zarlog serve --storage`
// nodes (a primary and a standby) on versitygw and one nats-server, a
// backend playing games, the primary killed with SIGKILL; a node restored
// from the bucket alone; the bucket read by tessera's client over HTTP
// (docs/OPERATIONS.md "Running two nodes", "Restoring from the bucket").

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/bucket"
	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/storage"
	"github.com/zarlog/zarlog/verifier"
	"github.com/zarlog/zarlog/wire"
)

// startNATS runs a nats-server with JetStream in the test process (the
// nodes' shared NATS: it outlives every zarlog serve) and returns its URL.
func startNATS(t *testing.T) string {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// A bucketRig is what the storage tests share: versitygw with bucket
// "zarlog", a nats-server, the log's key file, an emitter and its
// --emitters file, and the arguments every node takes.
type bucketRig struct {
	t        *testing.T
	bin      string
	dir      string
	s3       *testonly.S3Server
	natsURL  string
	keyFile  string
	vkey     string
	verifier note.Verifier
	signer   note.Signer // the emitter's
	emitters string
	storage  string
}

func newBucketRig(t *testing.T, bin string) *bucketRig {
	t.Helper()
	r := &bucketRig{t: t, bin: bin, dir: t.TempDir(), storage: "s3://zarlog/log"}
	r.s3 = testonly.StartVersitygw(t, "zarlog")
	r.s3.Setenv(t) // the nodes take the endpoint and credentials from the environment
	r.natsURL = startNATS(t)
	r.keyFile = filepath.Join(r.dir, "log.key")
	stdout, stderr, code := runBin(t, r.dir, bin, "keygen", "--origin", "storage.zarlog.example/log", "--out", r.keyFile)
	if code != 0 {
		t.Fatalf("keygen: %s", stderr)
	}
	r.vkey = strings.TrimSpace(stdout)
	var err error
	if r.verifier, err = merkle.NewVerifier(r.vkey); err != nil {
		t.Fatal(err)
	}
	var line string
	r.signer, _, line, _ = emitterKey(t, bin, r.dir, "tavla-east")
	r.emitters = filepath.Join(r.dir, "emitters")
	if err := os.WriteFile(r.emitters, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return r
}

// args returns a node's command line on data directory data.
func (r *bucketRig) args(data string, extra ...string) []string {
	return append([]string{"--data", data, "--key", r.keyFile, "--emitters", r.emitters, "--storage", r.storage,
		"--nats", r.natsURL, "--http", "127.0.0.1:0", "--admin", "off", "--checkpoint-interval", "50ms"}, extra...)
}

// lock reads the bucket's lock and its checkpoint.
func (r *bucketRig) lock(ctx context.Context) (storage.Lock, merkle.Checkpoint) {
	r.t.Helper()
	b, err := bucket.Open(ctx, r.storage, bucket.Config{})
	if err != nil {
		r.t.Fatal(err)
	}
	data, _, err := b.Get(ctx, storage.LockKey, "")
	if err != nil {
		r.t.Fatal(err)
	}
	k, err := storage.ParseLock(data)
	if err != nil {
		r.t.Fatal(err)
	}
	cp, err := merkle.Open(k.Note, r.verifier)
	if err != nil {
		r.t.Fatal(err)
	}
	return k, cp
}

// checkpoint returns the checkpoint a node serves.
func (r *bucketRig) checkpoint(p *serveProc) (merkle.Checkpoint, []byte, bool) {
	code, body := p.get("/checkpoint")
	if code != 200 {
		return merkle.Checkpoint{}, nil, false
	}
	cp, err := merkle.Open(body, r.verifier)
	if err != nil {
		r.t.Fatalf("the checkpoint %s serves: %v", p.base(), err)
	}
	return cp, body, true
}

// leader reports whether a node says (zarlog_storage_leader) it holds the
// lock.
func leader(p *serveProc) bool {
	code, body := p.get("/metrics")
	return code == 200 && bytes.Contains(body, []byte("\nzarlog_storage_leader 1\n"))
}

// A storageReceipt is a receipt the backend obtained, with the event's
// bytes and when.
type storageReceipt struct {
	id         string
	leaf       []byte
	index      uint64
	checkpoint []byte
	at         time.Time
}

// A gamer plays games through the SDK and waits for each event's receipt
// before the game goes on. It has no code of its own for an event that
// JetStream acknowledged and the log never got (the primary that took it
// from the stream died before the bucket had its checkpoint, so the node
// that took over never saw it): the SDK publishes such events again by
// itself (docs/NATS.md §5), and counts them (OnResend).
type gamer struct {
	t      *testing.T
	client *sdk.Client
	b      *sdk.Backend
	stop   chan struct{}
	wg     sync.WaitGroup

	mu       sync.Mutex
	receipts []storageReceipt
	finished map[string]uint64 // game id → its last seq
	resent   int               // events the SDK published again
	games    int
}

func newGamer(t *testing.T, natsURL string, signer note.Signer) *gamer {
	t.Helper()
	nc, err := sdk.Dial(natsURL, signer.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	g := &gamer{t: t, stop: make(chan struct{}), finished: map[string]uint64{}}
	c, err := sdk.New(nc, sdk.Config{Emitter: signer.Name(), AckTimeout: time.Second, RetryMin: 5 * time.Millisecond, RetryMax: 200 * time.Millisecond,
		OnResend: func(string) {
			g.mu.Lock()
			g.resent++
			g.mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b, err := sdk.NewBackend(c, sdk.GameConfig{Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	g.client, g.b = c, b
	return g
}

// after is the games' testlog.After: it returns once the event is
// receipted (or ctx ends).
func (g *gamer) after(ctx context.Context) testlog.After {
	return func(game string, seq uint64, leaf []byte) {
		ev := sdk.Event{ID: fmt.Sprintf("%s:%d", game, seq), Data: leaf}
		r, err := g.client.Receipt(ctx, ev)
		if err != nil {
			if ctx.Err() == nil {
				g.t.Errorf("the receipt of %s: %v", ev.ID, err)
			}
			return
		}
		g.mu.Lock()
		g.receipts = append(g.receipts, storageReceipt{id: ev.ID, leaf: leaf, index: r.Index, checkpoint: r.Checkpoint, at: time.Now()})
		g.mu.Unlock()
	}
}

// play starts n players, each playing games one after another until
// finish is called.
func (g *gamer) play(ctx context.Context, label string, n int) {
	after := g.after(ctx)
	for i := range n {
		g.wg.Go(func() {
			for k := 0; ; k++ {
				select {
				case <-g.stop:
					return
				default:
				}
				id, err := testlog.Tavlarena(ctx, g.b, fmt.Sprintf("%s-%d-%d", label, i, k), `{"variant":"portes"}`, 10, after)
				if err != nil {
					if ctx.Err() == nil {
						g.t.Errorf("a game: %v", err)
					}
					return
				}
				g.mu.Lock()
				g.games++
				g.mu.Unlock()
				g.record(ctx, id)
			}
		})
	}
}

// record notes a finished game's last seq (from its receipted events).
func (g *gamer) record(ctx context.Context, id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	last := uint64(0)
	for _, r := range g.receipts {
		if game, seq, ok := strings.Cut(r.id, ":"); ok && game == id {
			if s, err := strconv.ParseUint(seq, 10, 64); err == nil && s > last {
				last = s
			}
		}
	}
	g.finished[id] = last
}

// finish stops the players after their current games and waits for them.
func (g *gamer) finish() {
	close(g.stop)
	g.wg.Wait()
}

// count returns how many receipts the gamer has.
func (g *gamer) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.receipts)
}

// firstReceiptAfter returns when the first receipt obtained after t0
// under a checkpoint larger than size came, if one has.
func (g *gamer) firstReceiptAfter(t0 time.Time, size uint64, v note.Verifier) (time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range g.receipts {
		if r.at.Before(t0) {
			continue
		}
		if cp, err := merkle.Open(r.checkpoint, v); err == nil && cp.Size > size {
			return r.at, true
		}
	}
	return time.Time{}, false
}

// checkLog checks the final log lg against what the gamer saw: every
// receipted event is in it once, at its receipt's index, with its bytes;
// every event of every finished game is in it once; no two checkpoints
// It returns the receipted events missing from the log (lost) and the
// events in it more than once (duplicated).
func (g *gamer) checkLog(t *testing.T, lg *testonly.Log) (lost, duplicated int) {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	count := map[string]int{}
	index := map[string]uint64{}
	for i, e := range lg.Entries {
		ev, err := events.Parse(e)
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		count[ev.ID]++
		index[ev.ID] = uint64(i)
	}
	for id, n := range count {
		if n != 1 {
			duplicated++
			t.Errorf("event %s is in the log %d times", id, n)
		}
	}
	for _, r := range g.receipts {
		i, ok := index[r.id]
		switch {
		case !ok:
			lost++
			t.Errorf("the receipted event %s is not in the final log", r.id)
		case i != r.index:
			t.Errorf("the receipt of %s says index %d; the log has it at %d", r.id, r.index, i)
		case !bytes.Equal(lg.Entries[i], r.leaf):
			t.Errorf("the log's entry %d is not the bytes of the receipted event %s", i, r.id)
		}
	}
	for id, last := range g.finished {
		for seq := uint64(0); seq <= last; seq++ {
			if n := count[fmt.Sprintf("%s:%d", id, seq)]; n != 1 {
				if n == 0 {
					lost++
				}
				t.Errorf("event %s:%d of a finished game is in the log %d times", id, seq, n)
			}
		}
	}
	return lost, duplicated
}

// checkpoints returns the distinct checkpoints of the receipts, checking
// that no two of one size differ.
func (g *gamer) checkpoints(t *testing.T, v note.Verifier) [][]byte {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	bySize := map[uint64][]byte{}
	for _, r := range g.receipts {
		cp, err := merkle.Open(r.checkpoint, v)
		if err != nil {
			t.Fatalf("the checkpoint of the receipt of %s: %v", r.id, err)
		}
		if old, ok := bySize[cp.Size]; ok && !bytes.Equal(old, r.checkpoint) {
			t.Errorf("two checkpoints of size %d differ:\n%s\n%s", cp.Size, old, r.checkpoint)
		}
		bySize[cp.Size] = r.checkpoint
	}
	var out [][]byte
	for _, n := range bySize {
		out = append(out, n)
	}
	return out
}

// median returns the median of ds (sorted in place).
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	if len(ds) == 0 {
		return 0
	}
	return ds[len(ds)/2]
}

// TestServeTakeover runs a primary and a standby `zarlog serve --storage`
// on versitygw and one nats-server, with a backend playing games (each
// event kept until its receipt, and published again when none comes),
// and kills the primary with SIGKILL several times (3; 10 with
// ZARLOG_SLOW=1): each time the standby takes over, and the killed node
// is started again on its data directory as the new standby. It reports
// the takeover times from the kill (without asserting them: the machine
// is shared): to the standby holding the lock, to its first checkpoint
// beyond the dead primary's last, and to the backend's first receipt under
// it. It asserts that every receipted event is in the final log once, at
// its index, with its bytes, and every finished game's events too; that
// every checkpoint of a receipt is consistent with the final one and no
// two of one size differ; that the final log read by tessera's client from
// the bucket over HTTP is the one the primary serves; and that every
// finished game's bundle verifies.
func TestServeTakeover(t *testing.T) {
	bin, _ := tools(t)
	runs := 3
	if os.Getenv("ZARLOG_SLOW") == "1" {
		runs = 10
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(runs)*time.Minute+2*time.Minute)
	defer cancel()
	r := newBucketRig(t, bin)
	dirs := []string{filepath.Join(r.dir, "a"), filepath.Join(r.dir, "b")}
	p := startServe(t, bin, r.args(dirs[0])...)
	if p.lines["storage"] != r.storage+"/" || !strings.Contains(p.lines["node"], " primary ") || p.lines["vkey"] != r.vkey {
		t.Fatalf("the primary printed %v", p.lines)
	}
	q := startServe(t, bin, r.args(dirs[1], "--standby")...)
	if !strings.Contains(q.lines["node"], " standby ") {
		t.Fatalf("the standby printed %v", q.lines)
	}
	g := newGamer(t, r.natsURL, r.signer)
	g.play(ctx, "takeover", 6)
	defer func() {
		select {
		case <-g.stop:
		default:
			close(g.stop)
		}
	}()

	var toLead, toCheckpoint, toReceipt []time.Duration
	progress := func(n int) {
		t.Helper()
		for g.count() < n {
			if ctx.Err() != nil {
				t.Fatalf("only %d receipts, waiting for %d", g.count(), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	seen := [][]byte{} // checkpoints read from the nodes and the bucket
	for run := range runs {
		progress(g.count() + 150)
		if !leader(p) || leader(q) {
			t.Fatalf("run %d: the primary is not the leader, or the standby is", run)
		}
		p.cmd.Process.Kill()
		t0 := time.Now()
		if code := p.wait(); code != -1 {
			t.Fatalf("run %d: the primary exited with %d, not killed", run, code)
		}
		// The killed node (a standby that took over, after the first run)
		// logged no error: a standby's waiting is not one.
		for _, line := range strings.Split(p.stderr.String(), "\n") {
			if strings.Contains(line, "level=ERROR") {
				t.Errorf("run %d: the killed node logged an error: %s", run, line)
			}
		}
		k, killed := r.lock(ctx)
		seen = append(seen, k.Note)
		var tl, tc time.Time
		for tl.IsZero() || tc.IsZero() {
			if ctx.Err() != nil {
				t.Fatalf("run %d: the standby did not take over (leader %t)\n%s", run, !tl.IsZero(), q.stderr)
			}
			if tl.IsZero() && leader(q) {
				tl = time.Now()
			}
			if cp, body, ok := r.checkpoint(q); ok && cp.Size > killed.Size && tc.IsZero() {
				tc = time.Now()
				seen = append(seen, body)
			}
			time.Sleep(10 * time.Millisecond)
		}
		var tr time.Time
		for {
			var ok bool
			if tr, ok = g.firstReceiptAfter(t0, killed.Size, r.verifier); ok {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("run %d: no receipt after the takeover", run)
			}
			time.Sleep(10 * time.Millisecond)
		}
		nk, _ := r.lock(ctx)
		if nk.Term != k.Term+1 || nk.Holder == k.Holder {
			t.Fatalf("run %d: the lock went from %s term %d to %s term %d", run, k.Holder, k.Term, nk.Holder, nk.Term)
		}
		toLead, toCheckpoint, toReceipt = append(toLead, tl.Sub(t0)), append(toCheckpoint, tc.Sub(t0)), append(toReceipt, tr.Sub(t0))
		t.Logf("run %d: killed the primary at size %d (term %d); the standby held the lock after %v, signed its first checkpoint after %v, the first receipt came after %v",
			run, killed.Size, k.Term, tl.Sub(t0).Round(time.Millisecond), tc.Sub(t0).Round(time.Millisecond), tr.Sub(t0).Round(time.Millisecond))
		// The killed node comes back on its data directory as the standby.
		dirs[0], dirs[1] = dirs[1], dirs[0]
		p, q = q, startServe(t, bin, r.args(dirs[1], "--standby")...)
	}
	progress(g.count() + 50)
	g.finish()
	if t.Failed() {
		t.FailNow()
	}

	// The final log, from the primary and from the bucket.
	earlier := append(g.checkpoints(t, r.verifier), seen...)
	lg, err := testonly.Fetch(ctx, p.base()+"/", nil, r.vkey, earlier...)
	if err != nil {
		t.Fatalf("the primary's log: %v", err)
	}
	lost, duplicated := g.checkLog(t, lg)
	blg := r.fetchBucket(ctx, lg.Note)
	if !bytes.Equal(blg.Note, lg.Note) || len(blg.Entries) != len(lg.Entries) {
		t.Fatalf("the bucket's checkpoint is not the primary's:\n%s\n%s", blg.Note, lg.Note)
	}
	for i := range lg.Entries {
		if !bytes.Equal(lg.Entries[i], blg.Entries[i]) {
			t.Fatalf("entry %d differs between the bucket and the primary", i)
		}
	}
	r.checkBundles(ctx, p, g)
	r.checkBucketFiles(ctx, g, nil)
	t.Logf("%d takeovers (lease %v): to the lock median %v max %v; to the first checkpoint median %v max %v; to the first receipt median %v max %v",
		runs, storage.DefaultLease, median(toLead).Round(time.Millisecond), slices.Max(toLead).Round(time.Millisecond),
		median(toCheckpoint).Round(time.Millisecond), slices.Max(toCheckpoint).Round(time.Millisecond),
		median(toReceipt).Round(time.Millisecond), slices.Max(toReceipt).Round(time.Millisecond))
	t.Logf("%d games, %d events receipted, %d events the SDK published again, %d entries in the final log, %d receipted events lost, %d duplicated, %d checkpoints checked consistent",
		g.games, g.count(), g.resent, len(lg.Entries), lost, duplicated, len(earlier))
}

// fetchBucket reads the log from the bucket's HTTP endpoint (made public
// for reading) with tessera's client, checking it is consistent with the
// earlier checkpoints.
func (r *bucketRig) fetchBucket(ctx context.Context, earlier ...[]byte) *testonly.Log {
	r.t.Helper()
	base := r.s3.PublicURL(r.t, "zarlog") + "log/"
	lg, err := testonly.Fetch(ctx, base, nil, r.vkey, earlier...)
	if err != nil {
		r.t.Fatalf("the log in the bucket (%s): %v", base, err)
	}
	return lg
}

// checkBundles checks that every finished game of g has a bundle at p
// that verifies.
func (r *bucketRig) checkBundles(ctx context.Context, p *serveProc, g *gamer) {
	r.t.Helper()
	logKey, err := verifier.ParseLogKey(r.vkey)
	if err != nil {
		r.t.Fatal(err)
	}
	g.mu.Lock()
	pending := map[string]bool{}
	for id := range g.finished {
		pending[id] = true
	}
	g.mu.Unlock()
	for len(pending) > 0 {
		for id := range pending {
			code, bundle := p.get("/games/" + id + "/proof.json")
			if code != 200 {
				continue
			}
			if rep := verifier.Verify(bundle, verifier.Options{LogKey: logKey}); rep.Exit() != 0 {
				r.t.Fatalf("the bundle of %s: %s", id, rep.Text(verifier.English))
			}
			delete(pending, id)
		}
		select {
		case <-ctx.Done():
			r.t.Fatalf("%d finished games have no bundle", len(pending))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestServeRestoreFromBucket is docs/OPERATIONS.md "Restoring from the
// bucket": a primary `zarlog serve --storage` with a witness (a zarlog
// witness, through --witness-policy) is killed with SIGKILL and its data
// directory deleted; a node started on a new, empty data directory with
// only the log's key, the bucket and NATS takes the log over and continues
// it. Its checkpoints are consistent with every one the old primary
// published (its receipts', its witnessed one), the witness, which
// cosigned the old primary's, cosigns the new node's next checkpoint,
// every receipted event is in the final log once with its bytes, and
// every finished game's bundle, of either node, verifies on the new node.
func TestServeRestoreFromBucket(t *testing.T) {
	bin, _ := tools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := newBucketRig(t, bin)

	// The witness, which knows the log's key.
	logs := filepath.Join(r.dir, "logs")
	if err := os.WriteFile(logs, []byte("log "+r.vkey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wlines, _ := startWitness(t, bin, "--data", filepath.Join(r.dir, "witness"), "--http", "127.0.0.1:0", "--config", logs, "--init", "--name", "witness.example/zarlog")
	policyFile := filepath.Join(r.dir, "witness.policy")
	policy := fmt.Sprintf("witness W %s %s\nquorum W\n", wlines["vkey"][0], strings.TrimSuffix(wlines["add-checkpoint"][0], "/add-checkpoint"))
	if err := os.WriteFile(policyFile, []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	extra := []string{"--witness-policy", policyFile, "--witness-interval", "1s", "--witness-timeout", "3s", "--lease", "3s"}

	old := filepath.Join(r.dir, "old")
	p := startServe(t, bin, r.args(old, extra...)...)
	code, served := p.get("/witness-policy")
	if code != 200 {
		t.Fatalf("/witness-policy: %d", code)
	}
	pol, err := merkle.ParsePolicy(served)
	if err != nil {
		t.Fatal(err)
	}
	// witnessed waits until node n serves a witnessed checkpoint of more
	// than size leaves, meeting the policy, and returns it.
	witnessed := func(n *serveProc, size uint64) ([]byte, merkle.Checkpoint) {
		t.Helper()
		for {
			if code, body := n.get("/checkpoint.witnessed"); code == 200 {
				cp, _, err := pol.Open(body)
				if err != nil {
					t.Fatalf("%s/checkpoint.witnessed does not meet the policy: %v\n%s", n.base(), err, body)
				}
				if cp.Size > size {
					return body, cp
				}
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s serves no witnessed checkpoint of more than %d leaves", n.base(), size)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}

	g := newGamer(t, r.natsURL, r.signer)
	g.play(ctx, "restore", 4)
	defer func() {
		select {
		case <-g.stop:
		default:
			close(g.stop)
		}
	}()
	for g.count() < 150 {
		if ctx.Err() != nil {
			t.Fatalf("only %d receipts", g.count())
		}
		time.Sleep(20 * time.Millisecond)
	}
	w1, wcp1 := witnessed(p, 0)

	// The machine is lost: the process killed, its disk gone.
	p.cmd.Process.Kill()
	if code := p.wait(); code != -1 {
		t.Fatalf("the primary exited with %d, not killed", code)
	}
	k, killed := r.lock(ctx)
	if err := os.RemoveAll(old); err != nil {
		t.Fatal(err)
	}
	receiptsBefore := g.count()

	// A new machine: an empty data directory, the key, the bucket, NATS.
	fresh := filepath.Join(r.dir, "new")
	n := startServe(t, bin, r.args(fresh, extra...)...)
	if strings.Fields(n.lines["node"])[0] == k.Holder || n.lines["vkey"] != r.vkey {
		t.Fatalf("the new node printed %v; the lock was %s's", n.lines, k.Holder)
	}
	// Before it holds the lock it serves the bucket's log.
	if cp, _, ok := r.checkpoint(n); !ok || cp.Size != killed.Size {
		t.Fatalf("the new node serves a checkpoint of %d leaves (%t), the bucket has %d", cp.Size, ok, killed.Size)
	}
	// It serves the old primary's witnessed checkpoint, copied from the
	// bucket, before it holds the lock (the lease is 3 s).
	for {
		wasLeader := leader(n)
		if code, body := n.get("/checkpoint.witnessed"); code == 200 {
			cp, _, err := pol.Open(body)
			if err != nil || wasLeader || cp.Size > killed.Size {
				t.Fatalf("the new node's first witnessed checkpoint (size %d, leader %t): %v", cp.Size, wasLeader, err)
			}
			break
		}
		if wasLeader || ctx.Err() != nil {
			t.Fatal("the new node served no witnessed checkpoint from the bucket before it took the lock")
		}
		time.Sleep(20 * time.Millisecond)
	}
	w2, wcp2 := witnessed(n, killed.Size)
	if nk, _ := r.lock(ctx); nk.Term != k.Term+1 || nk.Holder != strings.Fields(n.lines["node"])[0] {
		t.Fatalf("the lock is %s's, term %d; was %s's, term %d", nk.Holder, nk.Term, k.Holder, k.Term)
	}
	for g.count() < receiptsBefore+100 {
		if ctx.Err() != nil {
			t.Fatalf("only %d receipts after the restore", g.count()-receiptsBefore)
		}
		time.Sleep(20 * time.Millisecond)
	}
	g.finish()
	if t.Failed() {
		t.FailNow()
	}
	earlier := append(g.checkpoints(t, r.verifier), w1, w2, k.Note)
	lg, err := testonly.Fetch(ctx, n.base()+"/", nil, r.vkey, earlier...)
	if err != nil {
		t.Fatalf("the restored log: %v", err)
	}
	lost, duplicated := g.checkLog(t, lg)
	r.checkBundles(ctx, n, g)
	r.checkBucketFiles(ctx, g, pol)
	t.Logf("the old primary's witnessed checkpoint: %d leaves, the bucket's at the kill: %d, the new node's first witnessed: %d, the final log: %d; %d receipts before the restore, %d after, %d events published again, %d lost, %d duplicated",
		wcp1.Size, killed.Size, wcp2.Size, len(lg.Entries), receiptsBefore, g.count()-receiptsBefore, g.resent, lost, duplicated)
}

// checkBucketFiles checks what the primary writes to the bucket beside the
// log, read over the bucket's public HTTP endpoint: every finished game's
// proof bundle (it verifies, against the witness policy pol if not nil)
// and its page, the landing page with its type, the emitter keys, and with
// pol the policy and a witnessed checkpoint meeting it.
func (r *bucketRig) checkBucketFiles(ctx context.Context, g *gamer, pol *merkle.Policy) {
	r.t.Helper()
	base := r.s3.PublicURL(r.t, "zarlog") + "log/"
	get := func(name string) (int, string, []byte) {
		r.t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+name, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			r.t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			r.t.Fatal(err)
		}
		return resp.StatusCode, resp.Header.Get("Content-Type"), b
	}
	logKey, err := verifier.ParseLogKey(r.vkey)
	if err != nil {
		r.t.Fatal(err)
	}
	g.mu.Lock()
	pending := map[string]bool{}
	for id := range g.finished {
		pending[id] = true
	}
	g.mu.Unlock()
	opts := verifier.Options{LogKey: logKey, WitnessPolicy: pol}
	for len(pending) > 0 {
		for id := range pending {
			code, _, bundle := get("games/" + id + "/proof.json")
			if code != 200 {
				continue
			}
			rep := verifier.Verify(bundle, opts)
			if rep.Exit() != 0 {
				if pol != nil {
					continue // not at a witnessed checkpoint yet
				}
				r.t.Fatalf("the bucket's bundle of %s: %s", id, rep.Text(verifier.English))
			}
			if code, ct, _ := get("games/" + id + "/index.html"); code != 200 {
				continue // written after the bundle
			} else if !strings.HasPrefix(ct, "text/html") {
				r.t.Fatalf("the bucket's page of game %s is served as %s", id, ct)
			}
			delete(pending, id)
		}
		select {
		case <-ctx.Done():
			r.t.Fatalf("%d finished games have no bundle in the bucket that verifies", len(pending))
		case <-time.After(200 * time.Millisecond):
		}
	}
	if code, ct, _ := get("index.html"); code != 200 || !strings.HasPrefix(ct, "text/html") {
		r.t.Fatalf("the bucket's index.html: %d %s", code, ct)
	}
	if code, _, keys := get("emitter-keys"); code != 200 || !strings.HasPrefix(string(keys), "tavla-east+") {
		r.t.Fatalf("the bucket's emitter-keys: %d %q", code, keys)
	}
	if pol != nil {
		if code, _, b := get("witness-policy"); code != 200 || !strings.HasPrefix(string(b), "log "+r.vkey+"\n") {
			r.t.Fatalf("the bucket's witness-policy: %d %q", code, b)
		}
		code, _, b := get("checkpoint.witnessed")
		if code != 200 {
			r.t.Fatalf("the bucket's checkpoint.witnessed: %d", code)
		}
		if _, _, err := pol.Open(b); err != nil {
			r.t.Fatalf("the bucket's checkpoint.witnessed does not meet the policy: %v", err)
		}
	}
}

// TestServePausedPrimary: the primary is paused (SIGSTOP) past its lease,
// the standby takes the log over and logs the events that come meanwhile;
// the old primary, continued (SIGCONT), answers no receipt or status
// request from its outdated ledger until it finds its lock taken and
// exits: every answer to requests about the events the new primary logged
// is the new primary's (logged, or a receipt) or the old one's
// "unavailable" (docs/OPERATIONS.md §10, "A primary that cannot renew
// stops serving receipts"; docs/FAULTS.md §4, run 11).
func TestServePausedPrimary(t *testing.T) {
	bin, _ := tools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r := newBucketRig(t, bin)
	const lease = 3 * time.Second
	p := startServe(t, bin, r.args(filepath.Join(r.dir, "a"), "--lease", lease.String())...)
	q := startServe(t, bin, r.args(filepath.Join(r.dir, "b"), "--standby", "--lease", lease.String())...)
	g := newGamer(t, r.natsURL, r.signer)
	g.play(ctx, "paused", 4)
	defer func() {
		select {
		case <-g.stop:
		default:
			close(g.stop)
		}
	}()
	for g.count() < 100 {
		if ctx.Err() != nil {
			t.Fatalf("only %d receipts before the pause", g.count())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !leader(p) || leader(q) {
		t.Fatal("the primary is not the leader, or the standby is")
	}
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	paused, killed := r.lock(ctx)
	for !leader(q) {
		if ctx.Err() != nil {
			t.Fatalf("the standby did not take over\n%s", q.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	took := time.Since(t0)
	// Events the new primary logged: its own receipts.
	var ids []string
	for len(ids) < 12 {
		if ctx.Err() != nil {
			t.Fatalf("only %d receipts from the new primary", len(ids))
		}
		time.Sleep(50 * time.Millisecond)
		ids = ids[:0]
		g.mu.Lock()
		for _, rc := range g.receipts {
			if cp, err := merkle.Open(rc.checkpoint, r.verifier); err == nil && rc.at.After(t0) && cp.Size > killed.Size {
				ids = append(ids, rc.id)
			}
		}
		g.mu.Unlock()
	}
	ids = ids[:12]
	t.Logf("the standby took over %v after the pause (lock term %d); %v after it, asking about %d events it logged",
		took.Round(time.Millisecond), paused.Term, time.Since(t0).Round(time.Millisecond), len(ids))

	// Ask, from before the old primary continues until after it exits:
	// requests the queue group gives the paused node wait for it.
	nc, err := sdk.Dial(r.natsURL, r.signer.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var queries []wire.StatusQuery
	for _, id := range ids {
		queries = append(queries, wire.StatusQuery{ID: id})
	}
	statusReq, err := wire.MarshalStatusRequest(wire.StatusRequest{V: wire.ReceiptStateVersion, Events: queries})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu                          sync.Mutex
		fromNew, unavailable, stale int
		staleSample                 string
	)
	judge := func(data []byte) {
		mu.Lock()
		defer mu.Unlock()
		if rep, err := wire.ParseStatusReply(data); err == nil {
			switch {
			case rep.Status == wire.StatusError && rep.Code == "unavailable":
				unavailable++
				return
			case rep.Status == wire.StatusOK:
				for _, e := range rep.Events {
					if e.Status != wire.EventLogged && e.Status != wire.EventAppended {
						stale++
						staleSample = fmt.Sprintf("status %s of %s", e.Status, e.ID)
						return
					}
				}
				fromNew++
				return
			}
		}
		if rep, err := wire.ParseReceiptReply(data); err == nil {
			switch {
			case rep.Status == wire.StatusError && rep.Code == "unavailable":
				unavailable++
				return
			case rep.Status == wire.StatusOK:
				fromNew++
				return
			}
		}
		stale++
		staleSample = string(data)
	}
	stopAsking := make(chan struct{})
	var asking sync.WaitGroup
	for w := range 8 {
		asking.Go(func() {
			for k := 0; ; k++ {
				select {
				case <-stopAsking:
					return
				default:
				}
				req := statusReq
				if w%2 == 1 {
					req, _ = wire.MarshalReceiptRequest(wire.ReceiptRequest{ID: ids[k%len(ids)], V: wire.ReceiptStateVersion})
				}
				rctx, rcancel := context.WithTimeout(ctx, 20*time.Second)
				m, err := nc.RequestWithContext(rctx, wire.Subjects{}.Receipts(r.signer.Name()), req)
				rcancel()
				if err == nil {
					judge(m.Data)
				}
			}
		})
	}
	time.Sleep(time.Second) // requests reach the paused node and wait
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	code := p.wait()
	close(stopAsking)
	asking.Wait()
	if code != 1 || !strings.Contains(p.stderr.String(), "LOST THE LEASE") {
		t.Errorf("the old primary exited with %d, want 1 after losing the lease:\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "not ingesting and not answering receipt or status requests") {
		t.Errorf("the old primary did not log that it held its ingest back:\n%s", p.stderr)
	}
	t.Logf("answers while the old primary ran: %d from the new primary, %d unavailable (the old one), %d stale", fromNew, unavailable, stale)
	if stale > 0 {
		t.Errorf("%d answers from an outdated ledger, e.g. %s", stale, staleSample)
	}
	if unavailable == 0 {
		t.Error("no request reached the old primary: the test saw nothing of it")
	}
	g.finish()
}
