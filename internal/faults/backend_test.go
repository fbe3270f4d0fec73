package faults_test

// The backend process of TestJepsen: the test binary run again with
// backendEnv set. It plays tavlarena games through the SDK against the
// NATS cluster, a few at a time, until its standard input closes, then
// finishes the games it has started and waits for every receipt. It
// prints one line per fact, for the test to record:
//
//	ack <unix ms> <event id> <base64 bytes>        the SDK's JetStream ack
//	receipt <unix ms> <event id> <index> <base64 checkpoint>
//	finished <unix ms> <game id>                    its reveal receipted
//	resend <unix ms> <event id>                     the SDK published it again
//	rejected <unix ms> <event id> <code>            the ledger refused it
//	failed <unix ms> <label> <error>                a game that stopped
//	done
//
// It publishes with the SDK, waits for receipts, and records: nothing
// else. What JetStream acknowledged and then lost (a truncated block
// file, a takeover past events the old primary never published to the
// bucket, messages a fenced primary acknowledged) the SDK publishes again
// by itself (docs/NATS.md §5, "Resending"), a game's later events after
// the lost one, and it holds an order refusal while an earlier event of
// its game is not logged. Any refusal of an acknowledged event fails the
// test.

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/sdk"
)

const (
	backendEnv  = "ZARLOG_FAULTS_BACKEND"
	emitterName = "jepsen"
	// askFor is how long one receipt request may take before the backend
	// asks again.
	askFor = 10 * time.Second
	// maxUnreceipted bounds the events published and not yet receipted: a
	// game waits past it, so the games go at the pace of the receipts.
	maxUnreceipted = 300
)

// backendConfig is what the test gives the backend process.
type backendConfig struct {
	NATS        string // the client URLs, comma-separated
	LogKey      string // the log's verifier key
	Concurrency int    // games at once
	Rolls       int    // rolls per game
}

// A held event: acknowledged, no receipt yet.
type held struct {
	ev   sdk.Event
	game string
}

type backend struct {
	client *sdk.Client
	out    *bufio.Writer
	outMu  sync.Mutex

	mu     sync.Mutex
	cond   *sync.Cond
	held   map[string]*held // by event id
	asking map[string]bool  // a receipt request is out
	queue  chan string
}

func (b *backend) print(format string, args ...any) {
	b.outMu.Lock()
	defer b.outMu.Unlock()
	fmt.Fprintf(b.out, format+"\n", args...)
	b.out.Flush()
}

func now() int64 { return time.Now().UnixMilli() }

// TestBackendChild is the backend process; it skips unless TestJepsen
// started it.
func TestBackendChild(t *testing.T) {
	raw := os.Getenv(backendEnv)
	if raw == "" {
		t.Skip("the backend process of TestJepsen")
	}
	var cfg backendConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatal(err)
	}
	if err := runBackend(cfg); err != nil {
		fmt.Printf("failed %d backend %v\n", now(), err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runBackend(cfg backendConfig) error {
	signer, _, err := testonly.Key(emitterName)
	if err != nil {
		return err
	}
	logKey, err := note.NewVerifier(cfg.LogKey)
	if err != nil {
		return err
	}
	nc, err := sdk.Dial(cfg.NATS, emitterName, nats.PingInterval(2*time.Second), nats.MaxPingsOutstanding(2))
	if err != nil {
		return err
	}
	defer nc.Close()
	var b *backend
	// The Client follows its events (500 ms, as docs/NATS.md §5
	// suggests): it holds each until the ledger reports it logged, which
	// is what lets it hold a game's later events while an earlier one is
	// lost.
	client, err := sdk.New(nc, sdk.Config{Emitter: emitterName, LogKey: logKey, AckTimeout: 2 * time.Second,
		RetryMin: 20 * time.Millisecond, RetryMax: time.Second, FollowInterval: 500 * time.Millisecond,
		OnResend: func(id string) { b.print("resend %d %s", now(), id) }})
	if err != nil {
		return err
	}
	defer client.Close()
	sb, err := sdk.NewBackend(client, sdk.GameConfig{Signer: signer})
	if err != nil {
		return err
	}
	b = &backend{client: client, out: bufio.NewWriter(os.Stdout), held: map[string]*held{}, asking: map[string]bool{},
		queue: make(chan string, 1<<16)}
	b.cond = sync.NewCond(&b.mu)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var workers sync.WaitGroup
	for range 32 {
		workers.Go(func() { b.receipts(ctx) })
	}

	// Play until stdin closes.
	stop := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
		}
		close(stop)
	}()
	var games sync.WaitGroup
	play := func(label string) {
		id, err := testlog.Tavlarena(ctx, sb, label, `{"variant":"portes"}`, cfg.Rolls, b.after)
		if err != nil {
			b.print("failed %d %s %s", now(), label, strings.ReplaceAll(err.Error(), "\n", " "))
			return
		}
		b.print("played %d %s", now(), id)
	}
	slots := make(chan struct{}, cfg.Concurrency)
	for i := 0; ; i++ {
		select {
		case <-stop:
		case slots <- struct{}{}:
			games.Go(func() {
				defer func() { <-slots }()
				play(fmt.Sprintf("jepsen-%d-%d", os.Getpid(), i))
			})
			continue
		}
		break
	}
	// Every game finished, every event receipted.
	for {
		b.mu.Lock()
		n := len(b.held)
		b.mu.Unlock()
		if n == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	games.Wait()
	b.mu.Lock()
	for len(b.held) > 0 {
		b.cond.Wait()
	}
	b.mu.Unlock()
	b.print("done")
	return nil
}

// after records an acknowledged event and holds it until its receipt;
// past maxUnreceipted it waits.
func (b *backend) after(game string, seq uint64, leaf []byte) {
	id := fmt.Sprintf("%s:%d", game, seq)
	if leaf == nil {
		b.print("failed %d %s no bytes recorded", now(), id)
		return
	}
	b.print("ack %d %s %s", now(), id, base64.StdEncoding.EncodeToString(leaf))
	b.mu.Lock()
	b.held[id] = &held{ev: sdk.Event{ID: id, Data: leaf, OrderKey: game}, game: game}
	for len(b.held) > maxUnreceipted {
		b.cond.Wait()
	}
	b.mu.Unlock()
	b.queue <- id
}

// receipts asks for the receipts of queued events.
func (b *backend) receipts(ctx context.Context) {
	for {
		var id string
		select {
		case id = <-b.queue:
		case <-ctx.Done():
			return
		}
		b.mu.Lock()
		h := b.held[id]
		if h == nil || b.asking[id] {
			b.mu.Unlock()
			continue
		}
		b.asking[id] = true
		b.mu.Unlock()
		rctx, cancel := context.WithTimeout(ctx, askFor)
		r, err := b.client.Receipt(rctx, h.ev)
		cancel()
		b.mu.Lock()
		delete(b.asking, id)
		var rej *sdk.RejectedError
		switch {
		case err == nil:
			delete(b.held, id)
			b.cond.Broadcast()
			b.print("receipt %d %s %d %s", now(), id, r.Index, base64.StdEncoding.EncodeToString(r.Checkpoint))
			if isReveal(h.ev.Data) {
				b.print("finished %d %s", now(), h.game)
			}
		case errors.As(err, &rej):
			delete(b.held, id)
			b.cond.Broadcast()
			b.print("rejected %d %s %s", now(), id, rej.Code)
		}
		b.mu.Unlock()
		if err != nil && rej == nil {
			b.queue <- id // ask again
		}
	}
}

// isReveal says whether an event is a game's reveal (its last).
func isReveal(leaf []byte) bool {
	var ev struct {
		Type string `json:"type"`
	}
	json.Unmarshal(leaf, &ev)
	return ev.Type == "reveal"
}
