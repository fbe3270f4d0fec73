package sdk_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/sdk"
)

// benchSink is a fake durable ledger: it appends every event to a file with
// one fsync per Submit, accepts everything, and serves receipts from an
// in-memory tree with a placeholder signature (as the transport benchmark's
// sink in ledger/ingest, plus the receipts).
type benchSink struct {
	f     *os.File
	buf   []byte
	mu    sync.Mutex
	index map[string]uint64
	next  uint64
	grown chan struct{}
	tree  testonly.MemTree
}

func (s *benchSink) Append(ctx context.Context, subs []ledger.Input) ([]ledger.Outcome, error) {
	s.buf = s.buf[:0]
	for _, sub := range subs {
		s.buf = append(append(s.buf, sub.Data...), '\n')
	}
	if _, err := s.f.Write(s.buf); err != nil {
		return nil, err
	}
	if err := s.f.Sync(); err != nil {
		return nil, err
	}
	outs := make([]ledger.Outcome, len(subs))
	s.mu.Lock()
	for i, sub := range subs {
		id := eventID(sub.Data)
		if j, ok := s.index[id]; ok {
			outs[i] = ledger.Outcome{Result: ledger.Duplicate, Index: j, ID: id}
			continue
		}
		s.index[id] = s.next
		s.tree.Add(sub.Data)
		outs[i] = ledger.Outcome{Result: ledger.Appended, Index: s.next, ID: id}
		s.next++
	}
	close(s.grown)
	s.grown = make(chan struct{})
	s.mu.Unlock()
	return outs, nil
}

// eventID reads the envelope's id: the last "id" member of canonical event
// JSON (the body, which may hold any member, comes first).
func eventID(e []byte) string {
	i := bytes.LastIndex(e, []byte(`,"id":"`))
	if i < 0 {
		return ""
	}
	rest := e[i+7:]
	return string(rest[:bytes.IndexByte(rest, '"')])
}

func (s *benchSink) Locate(ctx context.Context, emitter, id string) (ledger.Outcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.index[id]; ok {
		return ledger.Outcome{Result: ledger.Appended, Index: i, ID: id}, nil
	}
	return ledger.Outcome{}, ledger.ErrNotFound
}

func (s *benchSink) InclusionProof(ctx context.Context, index, size uint64) ([]merkle.Hash, error) {
	return s.tree.InclusionProof(index, size)
}

func (s *benchSink) WaitCovering(ctx context.Context, index uint64) ([]byte, error) {
	for {
		s.mu.Lock()
		n, ch := s.next, s.grown
		s.mu.Unlock()
		if n > index {
			return s.tree.Checkpoint("bench.example/log", n)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// BenchmarkGames measures the SDK end to end: many concurrent tavlarena-v1
// games (commit, two contributions, 40 rolls with a move each, end, reveal:
// 85 events) played through one Client over TCP to the embedded server, the
// ingest, and a sink that fsyncs every batch. Each game's calls wait for
// their JetStream acks; with receipt=true the first roll also waits for the
// commit's receipt. One iteration plays one game per goroutine. Compare
// events/s with BenchmarkEndToEnd in ledger/ingest (transport only). With
// follow=true the Client follows its events (FollowInterval 500 ms): the
// ratio is what holding every event until the ledger reports it logged,
// and asking about it, costs.
func BenchmarkGames(b *testing.B) {
	for _, bc := range []struct {
		games   int
		receipt bool
		follow  bool
	}{{64, false, false}, {512, false, false}, {512, false, true}, {512, true, false}, {2048, false, false}} {
		b.Run(fmt.Sprintf("games=%d/receipt=%t/follow=%t", bc.games, bc.receipt, bc.follow), func(b *testing.B) { benchGames(b, bc.games, bc.receipt, bc.follow) })
	}
}

func benchGames(b *testing.B, games int, receipt, follow bool) {
	ctx := context.Background()
	f, err := os.Create(filepath.Join(b.TempDir(), "log"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sink := &benchSink{f: f, index: map[string]uint64{}, grown: make(chan struct{})}
	srv, err := ingest.StartServer(ctx, ingest.ServerConfig{StoreDir: b.TempDir(), Port: -1, InsecureNoAuth: true})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown()
	inc, err := srv.Connect()
	if err != nil {
		b.Fatal(err)
	}
	defer inc.Close()
	in, err := ingest.New(inc, ingest.Config{Sink: sink, Locator: sink, Checkpoints: sink, InfoInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	ictx, cancel := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- in.Run(ictx) }()
	defer func() { cancel(); <-ran }()

	signer, _, err := testonly.Key(emitter)
	if err != nil {
		b.Fatal(err)
	}
	nc, err := sdk.Dial(srv.ClientURL(), emitter)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	cfg := sdk.Config{Emitter: emitter}
	if follow {
		cfg.FollowInterval = 500 * time.Millisecond
	}
	client, err := sdk.New(nc, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	backend, err := sdk.NewBackend(client, sdk.GameConfig{Signer: signer, SkipCommitReceipt: !receipt})
	if err != nil {
		b.Fatal(err)
	}

	const rolls = 40
	playOne := func(i int) (int, error) {
		g, err := backend.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats(fmt.Sprint(i)), Settings: []byte(`{"variant":"portes"}`)})
		if err != nil {
			return 0, err
		}
		var c [32]byte
		g.Contribute(ctx, 0, c)
		if err := g.Contribute(ctx, 1, c); err != nil {
			return 0, err
		}
		for range rolls {
			r, err := g.Roll(ctx)
			if err != nil {
				return 0, err
			}
			if r.Seat >= 0 {
				if _, err := g.Move(ctx, r.Seat, "-"); err != nil {
					return 0, err
				}
			}
		}
		if err := g.End(ctx, events.End{Result: events.Resigned, Winner: 0, Points: 1}); err != nil {
			return 0, err
		}
		if err := g.Reveal(ctx); err != nil {
			return 0, err
		}
		leaves, err := g.Leaves(ctx)
		return len(leaves), err
	}

	total := 0
	start := time.Now()
	for b.Loop() {
		var wg sync.WaitGroup
		counts := make([]int, games)
		errs := make([]error, games)
		for i := range games {
			wg.Go(func() { counts[i], errs[i] = playOne(i) })
		}
		wg.Wait()
		for i := range games {
			if errs[i] != nil {
				b.Fatal(errs[i])
			}
			total += counts[i]
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(total)/elapsed.Seconds(), "events/s")
	if follow {
		st := client.FollowStats()
		b.ReportMetric(float64(st.Requests), "status-requests")
		b.ReportMetric(float64(st.Resent), "resent")
	}
	b.ReportMetric(float64(total)/float64(b.N*games), "events/game")
}
