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
//	refused <unix ms> <event id> <code>             refused out-of-order or unknown-game
//	resent <unix ms> <event id>                     published again by the backend
//	failed <unix ms> <label> <error>                a game that stopped
//	done
//
// It has no resending of its own: what JetStream acknowledged and then
// lost (a truncated block file, a takeover past events the old primary
// never published to the bucket) the SDK publishes again by itself
// (docs/NATS.md §5, "Resending"), and the backend only asks for receipts.

import (
	"bufio"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
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
	// keepAlive is how long without a receipt, events waiting, before
	// the backend starts one more game to keep the stream moving.
	keepAlive = 3 * time.Second
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
	seq  uint64
	ack  sdk.Ack // of the backend's own copy, once it sent one again
}

type backend struct {
	client *sdk.Client
	out    *bufio.Writer
	outMu  sync.Mutex

	mu          sync.Mutex
	cond        *sync.Cond
	held        map[string]*held // by event id
	lastReceipt time.Time
	resentGame  map[string]time.Time
	asking      map[string]bool // a receipt request is out
	queue       chan string
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
	client, err := sdk.New(nc, sdk.Config{Emitter: emitterName, LogKey: logKey, AckTimeout: 2 * time.Second,
		RetryMin: 20 * time.Millisecond, RetryMax: time.Second,
		OnResend: func(id string) { b.print("resend %d %s", now(), id) }})
	if err != nil {
		return err
	}
	defer client.Close()
	sb, err := sdk.NewBackend(client, sdk.GameConfig{Signer: signer})
	if err != nil {
		return err
	}
	b = &backend{client: client, out: bufio.NewWriter(os.Stdout), held: map[string]*held{}, resentGame: map[string]time.Time{}, asking: map[string]bool{},
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
	// Keep the stream moving: when events wait and no receipt has come
	// for keepAlive, one more game starts (at most two such at once). A
	// ledger learns that an event is lost only once its stream cursor
	// passes the event's sequence; on a quiet stream whose messages
	// another ingest acknowledged (a fenced primary's) it does not, and
	// the SDK would wait for ever (docs/FAULTS.md §4).
	extraCtx, stopExtra := context.WithCancel(ctx)
	var extra sync.WaitGroup
	extra.Go(func() {
		slots := make(chan struct{}, 2)
		for n := 0; ; n++ {
			select {
			case <-extraCtx.Done():
				return
			case <-time.After(keepAlive):
			}
			b.mu.Lock()
			stuck := len(b.held) > 0 && time.Since(b.lastReceipt) >= keepAlive
			b.mu.Unlock()
			if !stuck {
				continue
			}
			select {
			case slots <- struct{}{}:
				b.print("keepalive %d", now())
				games.Go(func() {
					defer func() { <-slots }()
					play(fmt.Sprintf("jepsen-%d-extra-%d", os.Getpid(), n))
				})
			default:
			}
		}
	})
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
	stopExtra()
	extra.Wait()
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
	b.held[id] = &held{ev: sdk.Event{ID: id, Data: leaf, OrderKey: game}, game: game, seq: seq}
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
		b.mu.Lock()
		ack := h.ack
		b.mu.Unlock()
		r, err := b.client.ReceiptOf(rctx, h.ev, ack)
		cancel()
		b.mu.Lock()
		delete(b.asking, id)
		var rej *sdk.RejectedError
		switch {
		case err == nil:
			delete(b.held, id)
			b.lastReceipt = time.Now()
			b.cond.Broadcast()
			b.print("receipt %d %s %d %s", now(), id, r.Index, base64.StdEncoding.EncodeToString(r.Checkpoint))
			if isReveal(h.ev.Data) {
				b.print("finished %d %s", now(), h.game)
			}
		case errors.As(err, &rej) && (rej.Code == "out-of-order" || rej.Code == "unknown-game"):
			// Its predecessor was lost (a takeover), and the SDK returned
			// the refusal before it found that out: the backend sends the
			// game's unreceipted events again, in order (docs/FAULTS.md §4).
			b.print("refused %d %s %s", now(), id, rej.Code)
		case errors.As(err, &rej):
			delete(b.held, id)
			b.cond.Broadcast()
			b.print("rejected %d %s %s", now(), id, rej.Code)
		}
		b.mu.Unlock()
		switch {
		case rej != nil && (rej.Code == "out-of-order" || rej.Code == "unknown-game"):
			b.resendGame(ctx, h.game)
		case err != nil && rej == nil:
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

// resendGame publishes again, in order, every event of game that has no
// receipt, at most once a second per game, and asks for their receipts.
func (b *backend) resendGame(ctx context.Context, game string) {
	b.mu.Lock()
	if time.Since(b.resentGame[game]) < time.Second {
		b.mu.Unlock()
		time.Sleep(time.Second)
		b.mu.Lock()
	}
	b.resentGame[game] = time.Now()
	var evs []*held
	for _, h := range b.held {
		if h.game == game {
			evs = append(evs, h)
		}
	}
	b.mu.Unlock()
	slices.SortFunc(evs, func(x, y *held) int { return cmp.Compare(x.seq, y.seq) })
	pending := map[*held]*sdk.Pending{}
	for _, h := range evs {
		p, err := b.client.PublishAsync(ctx, h.ev)
		if err != nil {
			continue
		}
		b.print("resent %d %s", now(), h.ev.ID)
		pending[h] = p
	}
	for h, p := range pending {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		ack, err := p.Wait(wctx)
		cancel()
		if err == nil {
			b.mu.Lock()
			h.ack = ack
			b.mu.Unlock()
		}
	}
	for _, h := range evs {
		b.queue <- h.ev.ID
	}
}
