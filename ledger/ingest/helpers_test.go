package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/wire"
)

// testEvent is the event format of these tests: JSON with an id, the
// emitter, a game and a per-game sequence number. The fake sink rejects
// events with "bad": true.
type testEvent struct {
	Bad     bool   `json:"bad,omitempty"`
	Emitter string `json:"emitter"`
	Game    string `json:"game"`
	ID      string `json:"id"`
	Seq     int    `json:"seq"`
}

func makeEvent(emitter, game string, seq int) (id string, data []byte) {
	id = game + ":" + strconv.Itoa(seq)
	b, err := json.Marshal(testEvent{Emitter: emitter, Game: game, ID: id, Seq: seq})
	if err != nil {
		panic(err)
	}
	return id, b
}

// fakeSink is an in-memory ledger with the Sink, Locator and
// CheckpointWaiter contracts. Its state outlives the Ingesters that use it,
// as the ledger's outlives a restart of the ingest.
type fakeSink struct {
	mu       sync.Mutex
	log      [][]byte
	index    map[string]uint64
	rejected []rejection
	rejIndex map[string]ledger.Outcome
	// order holds, for every input submitted, in order, the position at
	// which its bytes were first submitted: a session that starts over
	// from the ack floor goes back in it once.
	order    []int
	firstPos map[string]int
	calls    int
	locates  int           // calls of Locate
	sizes    []int         // events per successful Submit
	changed  chan struct{} // closed and replaced on every change

	// failBefore fails the next n Submits with nothing applied;
	// failAfter fails the next n Submits after applying them (an ambiguous
	// failure: "failed but persisted").
	failBefore, failAfter int
	// gate, if not nil, makes Submit wait for a value (or ctx) first;
	// entered receives a value each time a Submit is waiting on it.
	gate    chan struct{}
	entered chan struct{}
	// file, if not nil, receives every appended event, with one fsync per
	// Submit (the benchmark's durable fake).
	file *os.File

	// checkpoint size published so far (CheckpointWaiter), of the tree
	// of the log's leaves.
	tree testonly.MemTree
	size uint64
	// lie makes InclusionProof prove another leaf; proofErr makes it fail.
	lie      bool
	proofErr error
	sizeCh   chan struct{}
	outcome  map[ledger.Result]int
}

// A rejection is what the fake's rejected store keeps.
type rejection struct {
	Emitter, MsgID string
	Code, Reason   string
}

func newFakeSink() *fakeSink {
	return &fakeSink{
		index:    map[string]uint64{},
		rejIndex: map[string]ledger.Outcome{},
		firstPos: map[string]int{},
		changed:  make(chan struct{}),
		sizeCh:   make(chan struct{}),
		outcome:  map[ledger.Result]int{},
	}
}

func (f *fakeSink) Append(ctx context.Context, subs []ledger.Input) ([]ledger.Outcome, error) {
	f.mu.Lock()
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		select {
		case f.entered <- struct{}{}:
		default:
		}
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.failBefore > 0 {
		f.failBefore--
		return nil, errors.New("injected failure before commit")
	}
	outs := make([]ledger.Outcome, len(subs))
	var buf bytes.Buffer
	for i, s := range subs {
		key := s.Emitter + "\x00" + string(s.Data)
		if _, seen := f.firstPos[key]; !seen {
			f.firstPos[key] = len(f.order)
		}
		f.order = append(f.order, f.firstPos[key])
		outs[i] = f.decide(subs[i])
		if outs[i].Result == ledger.Appended && f.file != nil {
			buf.Write(subs[i].Data)
			buf.WriteByte('\n')
		}
		f.outcome[outs[i].Result]++
	}
	if f.file != nil {
		if _, err := f.file.Write(buf.Bytes()); err != nil {
			return nil, err
		}
		if err := f.file.Sync(); err != nil {
			return nil, err
		}
	}
	f.sizes = append(f.sizes, len(subs))
	close(f.changed)
	f.changed = make(chan struct{})
	if f.failAfter > 0 {
		f.failAfter--
		return nil, errors.New("injected failure after commit")
	}
	return outs, nil
}

// decide is the fake ledger's judgement of one submission (f.mu held).
func (f *fakeSink) decide(s ledger.Input) ledger.Outcome {
	reject := func(id, code, reason string) ledger.Outcome {
		f.rejected = append(f.rejected, rejection{Emitter: s.Emitter, MsgID: s.MsgID, Code: code, Reason: reason})
		o := ledger.Outcome{Result: ledger.Rejected, RecordID: id, Reject: &events.RejectError{Code: events.Code(code), Msg: reason}}
		if id != "" {
			f.rejIndex[id] = o
		}
		return o
	}
	if s.Refuse != nil {
		return reject("", string(s.Refuse.Code), s.Refuse.Msg)
	}
	var e testEvent
	dec := json.NewDecoder(bytes.NewReader(s.Data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return reject("", "malformed", err.Error())
	}
	if wire.CheckEventID(e.ID) != nil {
		return reject("", "bad-id", fmt.Sprintf("id %q", e.ID))
	}
	if s.MsgID != "" && s.MsgID != e.ID {
		return reject(e.ID, "msg-id-mismatch", fmt.Sprintf("Nats-Msg-Id %q is not the event id %q", s.MsgID, e.ID))
	}
	if e.Emitter != s.Emitter {
		return reject(e.ID, "emitter-mismatch", fmt.Sprintf("event of %q published by %q", e.Emitter, s.Emitter))
	}
	if i, ok := f.index[e.ID]; ok {
		if bytes.Equal(f.log[i], s.Data) {
			return ledger.Outcome{Result: ledger.Duplicate, Index: i, ID: e.ID}
		}
		return reject(e.ID, "id-reused", fmt.Sprintf("id %s is at index %d with other bytes", e.ID, i))
	}
	if e.Bad {
		return reject(e.ID, "bad-event", "the event says it is bad")
	}
	i := uint64(len(f.log))
	f.log = append(f.log, bytes.Clone(s.Data))
	f.tree.Add(s.Data)
	f.index[e.ID] = i
	return ledger.Outcome{Result: ledger.Appended, Index: i, ID: e.ID}
}

// waitLen waits until the log holds at least n events.
func (f *fakeSink) waitLen(t testing.TB, ctx context.Context, n int) {
	t.Helper()
	f.waitUntil(t, ctx, func() bool { return len(f.log) >= n }, fmt.Sprintf("%d events in the log", n))
}

// waitUntil waits until cond (called with f.mu held) holds.
func (f *fakeSink) waitUntil(t testing.TB, ctx context.Context, cond func() bool, what string) {
	t.Helper()
	for {
		f.mu.Lock()
		ok, ch := cond(), f.changed
		n := len(f.log)
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v (log has %d)", what, ctx.Err(), n)
		}
	}
}

func (f *fakeSink) Locate(ctx context.Context, emitter, id string) (ledger.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.locates++
	if i, ok := f.index[id]; ok {
		return ledger.Outcome{Result: ledger.Appended, Index: i, ID: id}, nil
	}
	if o, ok := f.rejIndex[id]; ok {
		return o, nil
	}
	return ledger.Outcome{}, fmt.Errorf("locating %s: %w", id, ledger.ErrNotFound)
}

// publishCheckpoint makes checkpoints of size n available.
func (f *fakeSink) publishCheckpoint(n uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.size = n
	close(f.sizeCh)
	f.sizeCh = make(chan struct{})
}

func (f *fakeSink) WaitCovering(ctx context.Context, index uint64) ([]byte, error) {
	for {
		f.mu.Lock()
		size, ch := f.size, f.sizeCh
		f.mu.Unlock()
		if size > index {
			return f.tree.Checkpoint("test.example/log", min(size, f.tree.Size()))
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (f *fakeSink) InclusionProof(ctx context.Context, index, size uint64) ([]merkle.Hash, error) {
	f.mu.Lock()
	lie, fail := f.lie, f.proofErr
	f.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	if lie && size > 1 {
		index = (index + 1) % size // the proof of another leaf
	}
	return f.tree.InclusionProof(index, size)
}

// checkExactlyOnce checks that the log holds exactly the events with ids,
// once each, and that each game's events are in order.
func (f *fakeSink) checkExactlyOnce(t testing.TB, ids []string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.log) != len(ids) {
		t.Errorf("log has %d events, want %d", len(f.log), len(ids))
	}
	for _, id := range ids {
		if _, ok := f.index[id]; !ok {
			t.Errorf("event %s is not in the log", id)
		}
	}
	last := map[string]int{}
	for i, b := range f.log {
		var e testEvent
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("log entry %d: %v", i, err)
		}
		if f.index[e.ID] != uint64(i) {
			t.Errorf("event %s at %d but indexed at %d", e.ID, i, f.index[e.ID])
		}
		if p, ok := last[e.Game]; ok && e.Seq != p+1 || !ok && e.Seq != 0 {
			t.Errorf("game %s: seq %d at index %d follows %d", e.Game, e.Seq, i, p)
		}
		last[e.Game] = e.Seq
	}
}

// restarts returns how many times the sink saw the inputs go back in the
// order they were first submitted in, instead of forward: once per
// consumer session that started over from the ack floor, never within one.
func (f *fakeSink) restarts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for i := 1; i < len(f.order); i++ {
		if f.order[i] <= f.order[i-1] {
			n++
		}
	}
	return n
}

// startServer starts an embedded server on a random port in a temporary
// directory, shut down at the end of the test.
func startServer(t testing.TB, cfg ServerConfig) *Server {
	t.Helper()
	if cfg.StoreDir == "" {
		cfg.StoreDir = t.TempDir()
	}
	if cfg.Port == 0 {
		cfg.Port = -1
	}
	if cfg.MaxStore == 0 {
		// Whatever the disk's free space: a test stream of DefaultMaxBytes
		// fails on every machine, not only on a nearly full disk
		// (testStreamBytes).
		cfg.MaxStore = 1 << 30
	}
	if len(cfg.Emitters) == 0 {
		// The tests of the ingest's mechanics connect as anyone; the
		// tests of authentication (auth_test.go) list their emitters.
		cfg.InsecureNoAuth = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := StartServer(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func connect(t testing.TB, s *Server) *nats.Conn {
	t.Helper()
	nc, err := s.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// runIngest runs an Ingester until the test ends (or the returned stop is
// called), and fails the test if Run returns anything but the end of its
// context.
func runIngest(t testing.TB, in *Ingester) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- in.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Run returned %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func newIngester(t testing.TB, nc *nats.Conn, cfg Config) *Ingester {
	t.Helper()
	if cfg.RetryMin == 0 {
		cfg.RetryMin = time.Millisecond
		cfg.RetryMax = 50 * time.Millisecond
	}
	if cfg.InfoInterval == 0 {
		cfg.InfoInterval = -1
	}
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	cfg.Stream = testStream(cfg.Stream)
	in, err := New(nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// testStreamBytes is the MaxBytes of the tests' events streams that do not
// set one (testStream), in place of DefaultMaxBytes: JetStream reserves a
// stream's MaxBytes of its store when it creates the stream, and refuses
// one it cannot reserve ("insufficient storage resources"), so the tests'
// 8 GiB streams failed on a disk with less than about 11 GB free (4d8ad5e
// sized the bench's by Server.StreamBytes). 256 MiB holds what any test
// publishes many times over, and a quarter of it is still
// DefaultBacklogBytesPerEmitter, so the admission's default budget is the
// one the tests always had.
const testStreamBytes = 256 << 20

// testStream returns cfg with MaxBytes testStreamBytes if it sets none.
func testStream(cfg StreamConfig) StreamConfig {
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = testStreamBytes
	}
	return cfg
}

// ensureStream creates the events stream, as a running ingest would (of
// testStreamBytes unless cfg sets MaxBytes, as newIngester's).
func ensureStream(t testing.TB, nc *nats.Conn, cfg StreamConfig) {
	t.Helper()
	cfg = testStream(cfg)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := EnsureStream(ctx, js, wire.Subjects{}, cfg); err != nil {
		t.Fatal(err)
	}
}

// streamState returns the events stream's state.
func streamState(t testing.TB, nc *nats.Conn, name string) jetstream.StreamState {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State
}

// testLogger logs through t.Log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// admitOnly runs the admission of an Ingester on nc, and nothing else,
// until the test ends: what lets emitters publish into the stream while no
// ingest consumes it (a backlog built before the ingest starts). Its
// backlog counts are never released, so tests keep within its defaults.
func admitOnly(t testing.TB, nc *nats.Conn) {
	t.Helper()
	in := newIngester(t, nc, Config{Sink: newFakeSink()})
	ctx, cancel := context.WithCancel(context.Background())
	stop, err := in.adm.run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); stop() })
}
