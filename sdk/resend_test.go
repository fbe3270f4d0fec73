package sdk_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// resends records the ids the client publishes again.
type resends struct {
	mu  sync.Mutex
	ids []string
}

func (r *resends) add(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, id)
}

func (r *resends) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ids)
}

// following is a stack option: the client follows its events often, and
// records its resends in r.
func following(r *resends) func(*sdk.Config) {
	return func(c *sdk.Config) {
		c.FollowInterval = 20 * time.Millisecond
		c.FollowAfter = 50 * time.Millisecond
		c.OnResend = r.add
	}
}

// truncateStream stops the server and the ingest, cuts the events
// stream's block file at the message of stream sequence from, so that it
// and every later message are gone (a truncated block file, as in Jepsen's
// NATS 2.12.1 analysis; what JetStream's lazy fsync leaves after a power
// loss looks the same), removes the stream's state file so that the server
// reads the blocks again, and starts the server and the ingest again. It
// returns the stream's last sequence after the restart.
func (s *stack) truncateStream(ctx context.Context, from uint64) uint64 {
	s.t.Helper()
	s.stopNATS()
	var blks []string
	var state string
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if filepath.Base(filepath.Dir(p)) == "msgs" && filepath.Base(filepath.Dir(filepath.Dir(p))) == "ZARLOG_EVENTS" {
			switch {
			case strings.HasSuffix(p, ".blk"):
				blks = append(blks, p)
			case d.Name() == "index.db":
				state = p
			}
		}
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	cut := false
	for _, p := range blks {
		b, err := os.ReadFile(p)
		if err != nil {
			s.t.Fatal(err)
		}
		// A record: its length (4 bytes, the high bit flags headers), its
		// sequence (8, the high bit flags a deleted one), then the rest.
		for o := 0; o+12 <= len(b); {
			rl := int(binary.LittleEndian.Uint32(b[o:]) &^ (1 << 31))
			seq := binary.LittleEndian.Uint64(b[o+4:]) &^ (1 << 63)
			if seq == from {
				if err := os.Truncate(p, int64(o)); err != nil {
					s.t.Fatal(err)
				}
				cut = true
				break
			}
			if rl <= 0 {
				break
			}
			o += rl
		}
	}
	if !cut {
		s.t.Fatalf("no stream message %d in the block files %v", from, blks)
	}
	if state != "" {
		if err := os.Remove(state); err != nil {
			s.t.Fatal(err)
		}
	}
	s.startNATS()
	return s.streamMessages(ctx)
}

// emptyStream stops the server and the ingest, truncates every block file
// of the events stream to nothing and removes its state file (the messages
// the ledger decided are deleted from the work queue, so their records
// are gone already: what the files held past them is lost), and starts
// the server and the ingest again. It returns the stream's last sequence
// after the restart: the stream no longer knows the sequences it gave.
func (s *stack) emptyStream(ctx context.Context) uint64 {
	s.t.Helper()
	s.stopNATS()
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if filepath.Base(filepath.Dir(p)) == "msgs" && filepath.Base(filepath.Dir(filepath.Dir(p))) == "ZARLOG_EVENTS" {
			switch {
			case strings.HasSuffix(p, ".blk"):
				return os.Truncate(p, 0)
			case d.Name() == "index.db":
				return os.Remove(p)
			}
		}
		return nil
	})
	if err != nil {
		s.t.Fatal(err)
	}
	s.startNATS()
	return s.streamMessages(ctx)
}

// holding returns a stack's sink option: while hold is set, each ingest
// started gets its sink behind a closed gate (the ledger admits and
// answers, but reads nothing), so that what is published stays in the
// stream until truncateStream restarts the ingest with hold cleared.
func holding(hold *atomic.Bool) func(ingest.Sink) ingest.Sink {
	return func(sk ingest.Sink) ingest.Sink {
		if hold.Load() {
			return &gate{Sink: sk, open: make(chan struct{})}
		}
		return sk
	}
}

// publishEach publishes evs one by one (each in a message of its own, so
// that a cut of the stream takes exactly the events past it) and returns
// their acks.
func publishEach(t *testing.T, ctx context.Context, c *sdk.Client, evs []sdk.Event) []sdk.Ack {
	t.Helper()
	acks := publishInOrder(t, ctx, c, evs)
	for i, ev := range evs {
		if acks[i].Events != 1 {
			t.Fatalf("%s went in a message of %d events", ev.ID, acks[i].Events)
		}
	}
	return acks
}

// publishInOrder publishes evs one by one and returns their acks. An event
// may share its message with a copy of an earlier event of its game that
// the client is publishing again at the same time (a game's run goes in
// one message).
func publishInOrder(t *testing.T, ctx context.Context, c *sdk.Client, evs []sdk.Event) []sdk.Ack {
	t.Helper()
	acks := make([]sdk.Ack, len(evs))
	for i, ev := range evs {
		var err error
		if acks[i], err = c.Publish(ctx, ev); err != nil {
			t.Fatalf("publishing %s: %v", ev.ID, err)
		}
	}
	return acks
}

// TestResendLost: JetStream acknowledged events and then lost them before
// the ledger read them: the stream's block file is cut (as Jepsen did to
// NATS 2.12.1) at the last event of game a, taking with it the first half
// of game b, commit included, all published while the ingest was stopped.
// The second half of b is published after the restart, so the ledger
// refuses it (unknown-game) until the lost half is sent again. ReceiptOf
// with each event's original ack returns a checked receipt for every
// event, none a refusal: the client saw from the ledger's answers (no
// record, and its cursor past the stream's end or past the lost message)
// that the stream lost the events, and published them again, each with its
// game's later events. Only lost events and the later events of their game
// are sent again, and both games' bundles verify.
func TestResendLost(t *testing.T) {
	ctx := testCtx(t)
	var r resends
	var hold atomic.Bool
	hold.Store(true)
	s := newStack(t, stackOpts{config: following(&r), sink: holding(&hold)})
	a := chosenGame(t, emitter, s.signer, "resend-a", "resend-a")
	b := chosenGame(t, emitter, s.signer, "resend-b", "resend-b")
	k := len(b) / 2
	acksA := publishEach(t, ctx, s.client, a)
	acksB := publishEach(t, ctx, s.client, b[:k])
	cut := acksA[len(a)-1].Seq
	hold.Store(false)
	if last := s.truncateStream(ctx, cut); last != cut-1 {
		t.Fatalf("after the cut at %d the stream ends at %d", cut, last)
	}
	acksB = append(acksB, publishInOrder(t, ctx, s.client, b[k:])...) // the follower may be sending b's lost half again meanwhile
	lost := []string{a[len(a)-1].ID}
	for _, ev := range b[:k] {
		lost = append(lost, ev.ID)
	}
	may := slices.Clone(lost)
	for _, ev := range b[k:] {
		may = append(may, ev.ID)
	}

	var wg sync.WaitGroup
	for _, g := range []struct {
		evs  []sdk.Event
		acks []sdk.Ack
	}{{a, acksA}, {b, acksB}} {
		for i, ev := range g.evs {
			wg.Go(func() {
				rc, err := s.client.ReceiptOf(ctx, ev, g.acks[i])
				if err != nil {
					t.Errorf("receipt of %s: %v", ev.ID, err)
					return
				}
				if !rc.SignatureChecked {
					t.Errorf("receipt of %s: signature not checked", ev.ID)
				}
			})
		}
	}
	wg.Wait()
	s.verifyBundle(ctx, a[0].OrderKey)
	s.verifyBundle(ctx, b[0].OrderKey)
	got := r.list()
	for _, id := range lost {
		if !slices.Contains(got, id) {
			t.Errorf("lost event %s was not published again (resent %v)", id, got)
		}
	}
	count := map[string]int{}
	for _, id := range got {
		count[id]++
		if !slices.Contains(may, id) {
			t.Errorf("event %s was published again, but the stream had not lost it nor an event before it in its game", id)
		}
	}
	for id, n := range count {
		if n > 2 {
			t.Errorf("event %s published again %d times", id, n)
		}
	}
	if err := s.client.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	st := s.client.FollowStats()
	t.Logf("resent %v", got)
	t.Logf("lost %d events; %d copies published again (%d distinct events; %d may be); follow stats %+v", len(lost), len(got), len(count), len(may), st)
	if st.Resent != uint64(len(got)) {
		t.Errorf("FollowStats.Resent %d, OnResend called %d times", st.Resent, len(got))
	}
	if st.Held != 0 || st.HeldBytes != 0 || st.Rejected != 0 {
		t.Errorf("after WaitLogged: %+v", st)
	}
}

// TestResendFollowing: the follower alone (no Receipt call) publishes the
// lost events again: a backend that publishes and never asks for receipts
// loses nothing the stream acknowledged. WaitLogged returns once every
// event is logged.
func TestResendFollowing(t *testing.T) {
	ctx := testCtx(t)
	var r resends
	var hold atomic.Bool
	hold.Store(true)
	s := newStack(t, stackOpts{config: following(&r), sink: holding(&hold)})
	g := chosenGame(t, emitter, s.signer, "resend-follow", "resend-follow")
	acks := publishEach(t, ctx, s.client, g)
	last := len(g) - 1
	hold.Store(false)
	s.truncateStream(ctx, acks[last-1].Seq)
	if err := s.client.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	s.verifyBundle(ctx, g[0].OrderKey)
	got := r.list()
	want := []string{g[last-1].ID, g[last].ID}
	slices.Sort(want)
	// Each lost event is published again, and no other; an event at most
	// twice, as in TestResendLost. (With the SDK's adaptive linger on, 3
	// runs of 160 under -race on one loaded CPU published the last event
	// twice, the second copy a duplicate, which the ledger does not log again;
	// 0 of 160 with the linger off. Not understood yet: issue 31's notes.)
	count := map[string]int{}
	for _, id := range got {
		count[id]++
	}
	distinct := slices.Sorted(maps.Keys(count))
	if !slices.Equal(distinct, want) {
		t.Errorf("published again %v, want each of %v", got, want)
	}
	for id, n := range count {
		if n > 2 {
			t.Errorf("event %s published again %d times", id, n)
		}
	}
	if st := s.client.FollowStats(); st.Logged != uint64(len(g)) || st.Held != 0 {
		t.Errorf("follow stats %+v: want %d logged, none held", st, len(g))
	}
}

// TestResendElsewhere: an event published by another process (another
// Client here, whose ack the asking Client does not have) and lost: Receipt without its ack, on a client that does
// not follow its events, learns the stream's last sequence from the first
// answer, sees the ledger read past it without the event, and publishes
// the event itself, once.
func TestResendElsewhere(t *testing.T) {
	ctx := testCtx(t)
	var r resends
	// The ingest reads the stream's state every 100 ms: a receipt
	// request held for an event past the stream's end is answered once
	// the ledger has read the stream to its end.
	var hold atomic.Bool
	hold.Store(true)
	s := newStack(t, stackOpts{infoInterval: 100 * time.Millisecond, sink: holding(&hold), config: func(c *sdk.Config) {
		c.FollowInterval = -1
		c.OnResend = r.add
	}})
	g := chosenGame(t, emitter, s.signer, "resend-elsewhere", "resend-elsewhere")
	other, err := sdk.New(s.nc, sdk.Config{Emitter: emitter, FollowInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	pa, err := other.Publish(ctx, g[0])
	other.Close()
	if err != nil {
		t.Fatal(err)
	}
	hold.Store(false)
	if last := s.truncateStream(ctx, pa.Seq); last != pa.Seq-1 {
		t.Fatalf("after the cut the stream ends at %d", last)
	}
	rc, err := s.client.Receipt(ctx, g[0])
	if err != nil {
		t.Fatalf("receipt of the lost commit: %v", err)
	}
	if rc.Index != 0 || !rc.SignatureChecked {
		t.Errorf("receipt at index %d, signature checked %v", rc.Index, rc.SignatureChecked)
	}
	if got := s.streamMessages(ctx); got != pa.Seq {
		t.Errorf("the stream's last sequence is %d, want %d: one copy published", got, pa.Seq)
	}
	if st := s.client.FollowStats(); st.Held != 0 || st.Resent != 1 {
		t.Errorf("a client that does not follow: %+v, want nothing held and one copy published again", st)
	}
	if got := r.list(); !slices.Equal(got, []string{g[0].ID}) {
		t.Errorf("published again %v", got)
	}
}

// A gate holds the ingest's sink until it is opened: a ledger that is
// behind the stream, but answers.
type gate struct {
	ingest.Sink
	open chan struct{}
}

func (g *gate) Append(ctx context.Context, in []ledger.Input) ([]ledger.Outcome, error) {
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Sink.Append(ctx, in)
}

// TestNoResendWhenBehind: a ledger that answers but has not read the
// events yet (its sink held) is asked about them many times, and nothing
// is published again; neither by the follower nor by a Receipt whose
// context ends while the ledger is behind. Once the ledger goes on, every
// event gets its receipt, and still nothing was sent twice.
func TestNoResendWhenBehind(t *testing.T) {
	ctx := testCtx(t)
	var r resends
	g := &gate{open: make(chan struct{})}
	s := newStack(t, stackOpts{config: following(&r), sink: func(sk ingest.Sink) ingest.Sink {
		g.Sink = sk
		return g
	}})
	evs := chosenGame(t, emitter, s.signer, "resend-behind", "resend-behind")
	acks := publishEach(t, ctx, s.client, evs)
	// Until the follower has asked about every event in many rounds (and
	// the ledger has answered), and a Receipt has waited.
	rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err := s.client.ReceiptOf(rctx, evs[len(evs)-1], acks[len(evs)-1])
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("receipt while the ledger is behind: %v", err)
	}
	for s.client.FollowStats().Requests < 20 {
		time.Sleep(10 * time.Millisecond)
	}
	if got := r.list(); len(got) != 0 {
		t.Fatalf("published again while the ledger was behind: %v", got)
	}
	close(g.open)
	for i, ev := range evs {
		if _, err := s.client.ReceiptOf(ctx, ev, acks[i]); err != nil {
			t.Fatalf("receipt of %s: %v", ev.ID, err)
		}
	}
	if err := s.client.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	st := s.client.FollowStats()
	t.Logf("follow stats %+v", st)
	if got := r.list(); len(got) != 0 || st.Resent != 0 {
		t.Errorf("published again %v (Resent %d)", got, st.Resent)
	}
	if got := s.streamMessages(ctx); got != acks[len(acks)-1].Seq {
		t.Errorf("the stream's last sequence is %d, want %d: nothing published twice", got, acks[len(acks)-1].Seq)
	}
}

// TestResendAnswers: a copy of an event the ledger already logged gets the
// event's receipt, at the same index, not a refusal; a copy of an event
// the ledger refused gets the same refusal.
func TestResendAnswers(t *testing.T) {
	ctx := testCtx(t)
	s := newStack(t, stackOpts{})
	g := chosenGame(t, emitter, s.signer, "resend-answers", "resend-answers")
	logged := g[0]
	other := chosenGame(t, emitter, s.signer, "resend-refused", "resend-refused")
	refused := sdk.Event{ID: other[1].ID, Data: other[1].Data} // its commit is never sent: unknown-game, no order key
	var first []error
	var idx []uint64
	for copyN := range 2 {
		ack, err := s.client.Publish(ctx, logged)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := s.client.ReceiptOf(ctx, logged, ack)
		if err != nil {
			t.Fatalf("copy %d of a logged event: %v", copyN, err)
		}
		idx = append(idx, rc.Index)
	}
	if idx[0] != idx[1] {
		t.Errorf("the copies of a logged event got indexes %v", idx)
	}
	for range 2 {
		ack, err := s.client.Publish(ctx, refused)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.client.ReceiptOf(ctx, refused, ack)
		var rej *sdk.RejectedError
		if !errors.As(err, &rej) {
			t.Fatalf("copy of a refused event: %v", err)
		}
		first = append(first, rej)
	}
	r0, r1 := first[0].(*sdk.RejectedError), first[1].(*sdk.RejectedError)
	if r0.Code != "unknown-game" || r0.Code != r1.Code || r0.Reason != r1.Reason {
		t.Errorf("the copies of a refused event got %q (%s) and %q (%s)", r0.Code, r0.Reason, r1.Code, r1.Reason)
	}
}

// nodeEvent is an event as tools/resend.mjs reads it.
type nodeEvent struct {
	ID       string `json:"id"`
	Data     []byte `json:"data"`
	OrderKey string `json:"orderKey"`
	Seq      uint64 `json:"seq,omitempty"`
}

// runResendTool runs sdk/js/tools/resend.mjs in mode on evs against the
// stack's server and decodes what it prints into out.
func runResendTool(t *testing.T, node string, s *stack, mode string, evs []nodeEvent, out any) {
	t.Helper()
	raw, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), mode+".json")
	if err := os.WriteFile(in, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join("js", "tools", "resend.mjs"), "--nats", s.srv.ClientURL(), "--emitter", emitter,
		"--log-key", s.ledger.VerifierKey(), mode, in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node tools/resend.mjs %s: %v\n%s", mode, err, stderr.String())
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("node tools/resend.mjs %s printed %s: %v", mode, b, err)
	}
}

// TestNodeResend: the Node SDK's receipt() resends as the Go SDK's does,
// with the same rule on the same wire members. A game published with
// zarlog-emitter, its last two events lost when the stream's block file
// is cut (TestResendLost); a new Node process asks for every receipt in
// order, the second to last with its ack, the last without (it learns the
// bound from the ledger's first answer): every receipt is checked against
// the log's key, exactly the two lost events are published again, once
// each, and the game's bundle verifies.
func TestNodeResend(t *testing.T) {
	node := nodeSDK(t)
	ctx := testCtx(t)
	var hold atomic.Bool
	hold.Store(true)
	s := newStack(t, stackOpts{infoInterval: 100 * time.Millisecond, sink: holding(&hold)})
	g := chosenGame(t, emitter, s.signer, "resend-node", "resend-node")
	evs := make([]nodeEvent, len(g))
	for i, ev := range g {
		evs[i] = nodeEvent{ID: ev.ID, Data: ev.Data, OrderKey: ev.OrderKey}
	}
	var acks []struct {
		ID  string `json:"id"`
		Seq uint64 `json:"seq"`
	}
	runResendTool(t, node, s, "publish", evs, &acks)
	if len(acks) != len(g) {
		t.Fatalf("node published %d of %d events", len(acks), len(g))
	}
	for i := range evs {
		evs[i].Seq = acks[i].Seq
	}
	last := len(g) - 1
	evs[last].Seq = 0 // asked without its ack
	hold.Store(false)
	if got := s.truncateStream(ctx, acks[last-1].Seq); got != acks[last-1].Seq-1 {
		t.Fatalf("after the cut the stream ends at %d", got)
	}
	var out struct {
		Receipts []struct {
			ID               string `json:"id"`
			Index            uint64 `json:"index"`
			SignatureChecked bool   `json:"signatureChecked"`
		} `json:"receipts"`
		Resent []string `json:"resent"`
	}
	runResendTool(t, node, s, "receipts", evs, &out)
	if len(out.Receipts) != len(g) {
		t.Fatalf("node got %d receipts for %d events", len(out.Receipts), len(g))
	}
	for i, r := range out.Receipts {
		if r.ID != g[i].ID || r.Index != uint64(i) || !r.SignatureChecked {
			t.Errorf("receipt %d: %+v", i, r)
		}
	}
	if want := []string{g[last-1].ID, g[last].ID}; !slices.Equal(out.Resent, want) {
		t.Errorf("node published again %v, want %v", out.Resent, want)
	}
	t.Logf("node: %d receipts, published again %v", len(out.Receipts), out.Resent)
	s.verifyBundle(ctx, g[0].OrderKey)
}

// TestNodeFollowing: the Node SDK's Client follows its events by default,
// as the Go Client does (TestResendFollowing): a Node process publishes a
// game, the stream loses its last two events after acknowledging them (its
// block file cut), and the same process, which asks no receipt, publishes
// exactly those two again, in their order, and waitLogged resolves with
// every event reported logged; the game's bundle verifies.
func TestNodeFollowing(t *testing.T) {
	node := nodeSDK(t)
	ctx := testCtx(t)
	var hold atomic.Bool
	hold.Store(true)
	s := newStack(t, stackOpts{infoInterval: 100 * time.Millisecond, sink: holding(&hold)})
	g := chosenGame(t, emitter, s.signer, "follow-node", "follow-node")
	evs := make([]nodeEvent, len(g))
	for i, ev := range g {
		evs[i] = nodeEvent{ID: ev.ID, Data: ev.Data, OrderKey: ev.OrderKey}
	}
	raw, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "follow.json")
	if err := os.WriteFile(in, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, filepath.Join("js", "tools", "resend.mjs"), "--nats", s.srv.ClientURL(), "--emitter", emitter,
		"--log-key", s.ledger.VerifierKey(), "follow", in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	next := func(out any) {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("node tools/resend.mjs follow ended: %v\n%s", lines.Err(), stderr.String())
		}
		if err := json.Unmarshal(lines.Bytes(), out); err != nil {
			t.Fatalf("node tools/resend.mjs follow printed %s: %v", lines.Bytes(), err)
		}
	}
	var acks []struct {
		ID  string `json:"id"`
		Seq uint64 `json:"seq"`
	}
	next(&acks)
	if len(acks) != len(g) {
		t.Fatalf("node published %d of %d events", len(acks), len(g))
	}
	last := len(g) - 1
	hold.Store(false)
	if got := s.truncateStream(ctx, acks[last-1].Seq); got != acks[last-1].Seq-1 {
		t.Fatalf("after the cut the stream ends at %d", got)
	}
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Resent []string `json:"resent"`
		Stats  struct {
			Held      int    `json:"held"`
			Logged    uint64 `json:"logged"`
			Rejected  uint64 `json:"rejected"`
			Resent    uint64 `json:"resent"`
			Requests  uint64 `json:"requests"`
			ByMessage uint64 `json:"byMessage"`
		} `json:"stats"`
	}
	next(&out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node tools/resend.mjs follow: %v\n%s", err, stderr.String())
	}
	if want := []string{g[last-1].ID, g[last].ID}; !slices.Equal(out.Resent, want) {
		t.Errorf("node published again %v, want %v", out.Resent, want)
	}
	if st := out.Stats; st.Logged != uint64(len(g)) || st.Held != 0 || st.Rejected != 0 || st.Resent != 2 || st.Requests == 0 {
		t.Errorf("node follow stats %+v: want %d logged, none held or refused, 2 resent", st, len(g))
	}
	// The events the stream kept are confirmed by their messages (the
	// lost ones, found lost by id, may be confirmed either way).
	if st := out.Stats; st.ByMessage < uint64(len(g)-2) {
		t.Errorf("node follow stats %+v: want at least %d logged by their message", st, len(g)-2)
	}
	t.Logf("node: published again %v; follow stats %+v", out.Resent, out.Stats)
	s.verifyBundle(ctx, g[0].OrderKey)
}

// TestResumeFollows: a backend restarted from a game's Snapshot follows
// the events the snapshot says were acknowledged. The stream lost two of
// them (its block file cut) after the first backend's process was gone:
// the resumed game's Client publishes exactly those two again, WaitLogged
// returns, and the game plays on to a bundle that verifies.
func TestResumeFollows(t *testing.T) {
	ctx := testCtx(t)
	var hold atomic.Bool
	hold.Store(true)
	s := newStack(t, stackOpts{skipReceipt: true, sink: holding(&hold)})
	g, err := s.backend.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats("resume-follows"), Settings: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	cut := s.streamMessages(ctx) + 1
	for seat := range 2 {
		if err := g.Contribute(ctx, seat, testonly.Label32(fmt.Sprint("resume-follows", seat))); err != nil {
			t.Fatal(err)
		}
		if err := g.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := g.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.client.Close() // the first backend's process is gone
	hold.Store(false)
	if got := s.truncateStream(ctx, cut); got != cut-1 {
		t.Fatalf("after the cut at %d the stream ends at %d", cut, got)
	}

	var r resends
	nc, err := sdk.Dial(s.srv.ClientURL(), emitter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	cfg := sdk.Config{Emitter: emitter, RetryMin: time.Millisecond, RetryMax: 50 * time.Millisecond}
	following(&r)(&cfg)
	c, err := sdk.New(nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b, err := sdk.NewBackend(c, sdk.GameConfig{Signer: s.signer, Now: s.clock.Now, Rand: newRand("resume-follows"), SkipCommitReceipt: true})
	if err != nil {
		t.Fatal(err)
	}
	g2, err := b.ResumeTavlarena(snap)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{g.ID() + ":1", g.ID() + ":2"}
	if got := r.list(); !slices.Equal(got, want) {
		t.Errorf("published again %v, want %v", got, want)
	}
	play(t, ctx, g2, "resume-follows", 4)
	s.verifyBundle(ctx, g2.ID())
	t.Logf("follow stats %+v", c.FollowStats())
}

// TestReceiptVersion2Ledger: a ledger of receipt protocol version 2 (a
// fake answering as wire.ParseReceiptRequest of that version did) refuses
// a batched request (version 5) as a bad request with its own reply, and a
// request of version 3 as a bad request naming the version; the Client
// asks with version 3, then version 2 from then on, gets the receipt's answer (a refusal
// here), and a following Client stops following (ErrFollowUnsupported)
// when its status request is refused too.
func TestReceiptVersion2Ledger(t *testing.T) {
	srv := startServer(t)
	nc := dial(t, srv, emitter)
	var mu sync.Mutex
	var versions []int
	sub, err := nc.Subscribe(wire.Subjects{}.Receipts(emitter), func(m *nats.Msg) {
		var q struct {
			V int `json:"v"`
		}
		json.Unmarshal(m.Data, &q)
		// A status request (version 3) or a message status request; a
		// batched receipt request (version 5) is asked for receipts.
		status := bytes.Contains(m.Data, []byte(`"events"`)) && q.V != wire.ReceiptBatchVersion || bytes.Contains(m.Data, []byte(`"messages"`))
		if !status {
			mu.Lock()
			versions = append(versions, q.V)
			mu.Unlock()
		}
		p := wire.ReceiptReply{Status: wire.StatusError, Code: "bad-request"}
		switch {
		case status || q.V == wire.ReceiptBatchVersion:
			p.Reason = `malformed zarlog wire message: json: unknown field "events"` // or "messages"
		case q.V == wire.ReceiptStateVersion:
			p.Reason = "malformed zarlog wire message: receipt protocol version 3 is not 2 (or absent, version 1)"
		default:
			p = wire.ReceiptReply{ID: "g:0", Status: wire.StatusRejected, Code: "bad-signature", Reason: "no", V: q.V}
		}
		b, err := wire.MarshalReceiptReply(p)
		if err != nil {
			t.Error(err)
			return
		}
		m.Respond(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	createStream(t, nc, 0)
	var retries []error
	c := newClient(t, nc, sdk.Config{Emitter: emitter, FollowInterval: 10 * time.Millisecond, FollowAfter: time.Millisecond,
		OnRetry: func(err error) {
			mu.Lock()
			retries = append(retries, err)
			mu.Unlock()
		}})
	ctx := testContext(t)
	ev := sdk.Event{ID: "g:0", Data: []byte(`{"x":1}`)}
	if _, err := c.Publish(ctx, ev); err != nil {
		t.Fatal(err)
	}
	_, err = c.Receipt(ctx, ev)
	var rej *sdk.RejectedError
	if !errors.As(err, &rej) || rej.Code != "bad-signature" {
		t.Fatalf("receipt from a version-2 ledger: %v", err)
	}
	mu.Lock()
	if !slices.Equal(versions, []int{wire.ReceiptBatchVersion, wire.ReceiptStateVersion, wire.ReceiptProofVersion}) {
		t.Errorf("receipt requests asked with versions %v, want 5, 3, then 2", versions)
	}
	mu.Unlock()
	// The follower's status request is refused too: it stops, holding
	// nothing.
	for {
		mu.Lock()
		unsupported := slices.ContainsFunc(retries, func(e error) bool { return errors.Is(e, sdk.ErrFollowUnsupported) })
		mu.Unlock()
		if unsupported {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("following went on against a version-2 ledger: %v", retries)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if st := c.FollowStats(); st.Held != 0 {
		t.Errorf("a Client that stopped following holds %+v", st)
	}
}

// TestResendReusedSequences: the stream gives sequences again, as Jepsen
// saw JetStream do after truncated block files (docs/FAULTS.md §4, run 5:
// several events acknowledged at one stream sequence). The ledger has
// decided and logged the first half of a game; the stream's block files
// are then emptied and its state file removed (the messages the ledger
// decided were deleted from the work queue already), so the stream starts
// its sequences again, and the second half, published after the restart,
// is acknowledged at sequences the stream gave the first half. The rule
// compares sequences, and it may conclude wrongly in the harmless
// direction only: the ledger's new session starts its cursor below the
// first half's sequences, so for an event of the first half the follower
// has not seen logged yet it answers "no record from that message" with a
// stream that ends below it, and the Client publishes it again, a needless
// copy that the ledger answers as the duplicate it is (its index, its
// receipt). Every receipt comes at its event's index, each event is in the
// log once, the game's bundle verifies, and no event is sent more than
// twice.
func TestResendReusedSequences(t *testing.T) {
	ctx := testCtx(t)
	var r resends
	s := newStack(t, stackOpts{config: following(&r), infoInterval: 100 * time.Millisecond})
	g := chosenGame(t, emitter, s.signer, "resend-reused", "resend-reused")
	k := len(g) / 2
	acks := publishEach(t, ctx, s.client, g[:k])
	for i, ev := range g[:k] {
		if _, err := s.client.ReceiptOf(ctx, ev, acks[i]); err != nil {
			t.Fatalf("receipt of %s: %v", ev.ID, err)
		}
	}
	high := acks[k-1].Seq
	if last := s.emptyStream(ctx); last >= high {
		t.Fatalf("after the block files were emptied the stream ends at %d, not below %d", last, high)
	}
	acks = append(acks, publishInOrder(t, ctx, s.client, g[k:])...)
	reused := 0
	for _, a := range acks[k:] {
		if a.Seq <= high {
			reused++
		}
	}
	if reused == 0 {
		t.Fatalf("no sequence given again: the second half acknowledged at %v, the first half up to %d", acks[k:], high)
	}
	for i, ev := range g {
		rc, err := s.client.ReceiptOf(ctx, ev, acks[i])
		if err != nil {
			t.Fatalf("receipt of %s: %v", ev.ID, err)
		}
		if rc.Index != uint64(i) {
			t.Errorf("receipt of %s at index %d, want %d", ev.ID, rc.Index, i)
		}
	}
	if err := s.client.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	s.verifyBundle(ctx, g[0].OrderKey)
	got := r.list()
	count := map[string]int{}
	for _, id := range got {
		if count[id]++; count[id] > 2 {
			t.Errorf("%s published again %d times", id, count[id])
		}
	}
	st := s.client.FollowStats()
	t.Logf("%d of %d events acknowledged at a sequence given before (the first half up to %d, the second at %v); %d copies published again: %v; follow stats %+v",
		reused, len(g)-k, high, seqs(acks[k:]), len(got), got, st)
	if st.Rejected != 0 || st.Held != 0 {
		t.Errorf("follow stats %+v", st)
	}
}

func seqs(acks []sdk.Ack) []uint64 {
	var out []uint64
	for _, a := range acks {
		out = append(out, a.Seq)
	}
	return out
}

// publishAsync publishes evs at once (a game's run after its first event
// goes in one message) and returns their acks.
func publishAsync(t *testing.T, ctx context.Context, c *sdk.Client, evs []sdk.Event) []sdk.Ack {
	t.Helper()
	ps := make([]*sdk.Pending, len(evs))
	for i, ev := range evs {
		var err error
		if ps[i], err = c.PublishAsync(ctx, ev); err != nil {
			t.Fatalf("publishing %s: %v", ev.ID, err)
		}
	}
	acks := make([]sdk.Ack, len(evs))
	for i, p := range ps {
		var err error
		if acks[i], err = p.Wait(ctx); err != nil {
			t.Fatalf("publishing %s: %v", evs[i].ID, err)
		}
	}
	return acks
}

// TestFollowByMessage: the follower confirms the events of a message by
// one question about the message (wire.MessageStatusRequest: its stream
// sequence and payload's SHA-256), not about each event: every event of a
// game published in two messages is reported logged by its message. A
// message of several events that the stream lost after acknowledging it
// is found lost all the same (the ledger has no record of it, and has
// decided past it): its events are asked about by id, found lost, and
// published again, exactly those, and the game's bundle verifies.
func TestFollowByMessage(t *testing.T) {
	ctx := testCtx(t)
	var r resends
	var hold atomic.Bool
	s := newStack(t, stackOpts{config: following(&r), sink: holding(&hold)})

	g := chosenGame(t, emitter, s.signer, "by-message", "by-message")
	acks := publishAsync(t, ctx, s.client, g)
	if acks[len(g)-1].Events < 2 {
		t.Fatalf("the game's last event went in a message of %d events", acks[len(g)-1].Events)
	}
	if err := s.client.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	if st := s.client.FollowStats(); st.Logged != uint64(len(g)) || st.ByMessage != uint64(len(g)) || st.Held != 0 || st.Resent != 0 {
		t.Errorf("follow stats %+v: want all %d logged by their message, none resent", st, len(g))
	}

	// A message of several events lost by the stream.
	hold.Store(true)
	s.stopIngest()
	if err := s.startIngest(); err != nil {
		t.Fatal(err)
	}
	g2 := chosenGame(t, emitter, s.signer, "by-message-lost", "by-message-lost")
	acks = publishAsync(t, ctx, s.client, g2)
	lost := acks[len(g2)-1]
	if lost.Events < 2 {
		t.Fatalf("the game's last event went in a message of %d events", lost.Events)
	}
	var want []string
	for i, a := range acks {
		if a.Seq == lost.Seq {
			want = append(want, g2[i].ID)
		}
	}
	hold.Store(false)
	s.truncateStream(ctx, lost.Seq)
	if err := s.client.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	s.verifyBundle(ctx, g2[0].OrderKey)
	got := r.list()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("published again %v, want the lost message's %v", got, want)
	}
	if st := s.client.FollowStats(); st.Logged != uint64(len(g)+len(g2)) || st.Held != 0 {
		t.Errorf("follow stats %+v: want %d logged, none held", st, len(g)+len(g2))
	}
}

// TestMaxHeld: at Config.MaxHeld events held, PublishAsync waits until
// the ledger reports one logged (a drop makes room and wakes it).
func TestMaxHeld(t *testing.T) {
	ctx := testCtx(t)
	var r resends
	var hold atomic.Bool
	hold.Store(true)
	s := newStack(t, stackOpts{config: func(c *sdk.Config) { following(&r)(c); c.MaxHeld = 2 }, sink: holding(&hold)})
	g := chosenGame(t, emitter, s.signer, "max-held", "max-held")
	publishAsync(t, ctx, s.client, g[:2])
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := s.client.PublishAsync(short, g[2])
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a third event with two held and MaxHeld 2: %v, want it to wait", err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := s.client.PublishAsync(ctx, g[2])
		waited <- err
	}()
	select {
	case err := <-waited:
		t.Fatalf("published with two held: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	hold.Store(false)
	s.stopIngest()
	if err := s.startIngest(); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("once the held events are logged: %v", err)
	}
	if err := s.client.WaitLogged(ctx); err != nil {
		t.Fatal(err)
	}
	if st := s.client.FollowStats(); st.Logged != 3 || st.Held != 0 {
		t.Errorf("follow stats %+v: want 3 logged, none held", st)
	}
}
