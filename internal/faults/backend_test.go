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
//	resend <unix ms> <event id>                     published again
//	failed <unix ms> <label> <error>                a game that stopped
//	done
//
// Until the SDK resends by itself (issue 29), it does what a backend must:
// an event it holds no receipt for after resendAfter is published again,
// with its game's other unreceipted events before it, in order (an event
// JetStream acknowledged and the log then lost, or whose predecessor was
// lost and which was refused out-of-order); the ledger deduplicates.

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
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
	// resendAfter is how long the backend waits for an event's receipt
	// before it publishes it again.
	resendAfter = 4 * time.Second
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

// A held event: published, no receipt yet.
type held struct {
	ev       sdk.Event
	game     string
	seq      uint64
	since    time.Time // last published
	rejected string    // the last refusal's code, if any
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
	client, err := sdk.New(nc, sdk.Config{Emitter: emitterName, LogKey: logKey, AckTimeout: 2 * time.Second,
		RetryMin: 20 * time.Millisecond, RetryMax: time.Second})
	if err != nil {
		return err
	}
	defer client.Close()
	sb, err := sdk.NewBackend(client, sdk.GameConfig{Signer: signer})
	if err != nil {
		return err
	}
	b := &backend{client: client, out: bufio.NewWriter(os.Stdout), held: map[string]*held{}, asking: map[string]bool{},
		queue: make(chan string, 1<<16)}
	b.cond = sync.NewCond(&b.mu)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var workers sync.WaitGroup
	for range 32 {
		workers.Go(func() { b.receipts(ctx) })
	}
	go b.resender(ctx)

	// Play until stdin closes.
	stop := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
		}
		close(stop)
	}()
	var games sync.WaitGroup
	slots := make(chan struct{}, cfg.Concurrency)
	for i := 0; ; i++ {
		select {
		case <-stop:
		case slots <- struct{}{}:
			games.Go(func() {
				defer func() { <-slots }()
				label := fmt.Sprintf("jepsen-%d-%d", os.Getpid(), i)
				id, err := testlog.Tavlarena(ctx, sb, label, `{"variant":"portes"}`, cfg.Rolls, b.after)
				if err != nil {
					b.print("failed %d %s %s", now(), label, strings.ReplaceAll(err.Error(), "\n", " "))
					return
				}
				b.print("played %d %s", now(), id)
			})
			continue
		}
		break
	}
	games.Wait()
	// Every event receipted.
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
	b.held[id] = &held{ev: sdk.Event{ID: id, Data: leaf, OrderKey: game}, game: game, seq: seq, since: time.Now()}
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
		rctx, cancel := context.WithTimeout(ctx, resendAfter)
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
			if h.ev.ID == id && strings.HasSuffix(id, ":"+strconv.FormatUint(h.seq, 10)) && isReveal(h.ev.Data) {
				b.print("finished %d %s", now(), h.game)
			}
		case errors.As(err, &rej):
			h.rejected = rej.Code // the resender publishes it again, after its predecessors
		}
		b.mu.Unlock()
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

// resender publishes again, every second, the events held longer than
// resendAfter with no receipt request out, each game's in order.
func (b *backend) resender(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		b.mu.Lock()
		stale := map[string]bool{}
		for _, h := range b.held {
			if time.Since(h.since) >= resendAfter && !b.asking[h.ev.ID] {
				stale[h.game] = true
			}
		}
		var evs []*held
		for _, h := range b.held {
			if stale[h.game] && !b.asking[h.ev.ID] {
				evs = append(evs, h)
				h.since = time.Now()
			}
		}
		b.mu.Unlock()
		slices.SortFunc(evs, func(x, y *held) int {
			if c := strings.Compare(x.game, y.game); c != 0 {
				return c
			}
			return int(x.seq) - int(y.seq)
		})
		var pending []*sdk.Pending
		for _, h := range evs {
			p, err := b.client.PublishAsync(ctx, h.ev)
			if err != nil {
				continue
			}
			b.print("resend %d %s %s", now(), h.ev.ID, h.rejected)
			pending = append(pending, p)
		}
		for _, p := range pending {
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			p.Wait(wctx)
			cancel()
		}
		for _, h := range evs {
			b.queue <- h.ev.ID
		}
	}
}
