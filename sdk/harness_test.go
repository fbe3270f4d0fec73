package sdk_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/verifier"
)

const emitter = "tavla-east"

// rng is a deterministic source of the backend's "crypto" randomness.
type rng struct{ r *rand.ChaCha8 }

func newRand(label string) *rng { return &rng{rand.NewChaCha8(testonly.Label32("sdk-test/" + label))} }

func (r *rng) Read(p []byte) (int, error) { return r.r.Read(p) }

// A stack is an embedded nats-server, an ingest into the ledger, and an
// SDK backend connected over TCP, all torn down at the end of the test.
type stack struct {
	t       testing.TB
	dir     string
	port    int
	srv     *ingest.Server
	ledger  *testlog.Ledger
	clock   *testlog.Clock
	signer  note.Signer
	vkey    string
	nc      *nats.Conn
	client  *sdk.Client
	backend *sdk.Backend

	stopIngest func()
	sink       func(ingest.Sink) ingest.Sink
	info       time.Duration
	retries    chan error // every failed publish attempt of the client
}

type stackOpts struct {
	start       time.Time // the clock's start; zero means 2026-11-30T10:00:00Z
	skipReceipt bool
	ackTimeout  time.Duration
	// config, if not nil, adjusts the client's Config.
	config func(*sdk.Config)
	// sink, if not nil, wraps the ledger as the ingest's sink.
	sink func(ingest.Sink) ingest.Sink
	// infoInterval is the ingest's InfoInterval; zero means none.
	infoInterval time.Duration
}

func newStack(t testing.TB, o stackOpts) *stack {
	t.Helper()
	signer, vkey, err := testonly.Key(emitter)
	if err != nil {
		t.Fatal(err)
	}
	if o.start.IsZero() {
		o.start = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	}
	s := &stack{t: t, dir: t.TempDir(), port: -1, clock: testlog.NewClock(o.start), signer: signer, vkey: vkey,
		retries: make(chan error, 1024), sink: o.sink, info: o.infoInterval}
	s.ledger = testlog.OpenLedger(t, testlog.LedgerConfig{EmitterKeys: []string{vkey}, Now: s.clock.Now})
	s.startNATS()
	s.nc, err = sdk.Dial(s.srv.ClientURL(), emitter)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.nc.Close)
	ack := o.ackTimeout
	if ack == 0 {
		ack = 2 * time.Second
	}
	logKey, err := verifier.ParseLogKey(s.ledger.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	cfg := sdk.Config{Emitter: emitter, AckTimeout: ack, RetryMin: time.Millisecond, RetryMax: 50 * time.Millisecond, LogKey: logKey,
		OnRetry: func(err error) {
			select {
			case s.retries <- err:
			default:
			}
		}}
	if o.config != nil {
		o.config(&cfg)
	}
	s.client, err = sdk.New(s.nc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.client.Close)
	s.backend, err = sdk.NewBackend(s.client, sdk.GameConfig{Signer: signer, Now: s.clock.Now, Rand: newRand(t.Name()), SkipCommitReceipt: o.skipReceipt})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// startNATS starts the embedded server (on the stack's port once it has
// one) and an ingest into the ledger.
func (s *stack) startNATS() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

// start starts the server and the ingest (from any goroutine).
func (s *stack) start() error {
	t := s.t
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := ingest.StartServer(ctx, ingest.ServerConfig{StoreDir: s.dir, Port: s.port, InsecureNoAuth: true})
	if err != nil {
		return err
	}
	s.srv = srv
	if s.port == -1 {
		s.port = srv.Addr().(*net.TCPAddr).Port
	}
	t.Cleanup(srv.Shutdown)
	return s.startIngest()
}

// startIngest starts an ingest into the ledger on the running server
// (again, after stopIngest).
func (s *stack) startIngest() error {
	t := s.t
	nc, err := s.srv.Connect()
	if err != nil {
		return err
	}
	info := s.info
	if info == 0 {
		info = -1
	}
	cfg := s.ledger.Ingest(ingest.Config{RetryMin: time.Millisecond, RetryMax: 50 * time.Millisecond, InfoInterval: info})
	if s.sink != nil {
		cfg.Sink = s.sink(cfg.Sink)
	}
	in, err := ingest.New(nc, cfg)
	if err != nil {
		nc.Close()
		return err
	}
	ictx, icancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- in.Run(ictx) }()
	var once sync.Once
	s.stopIngest = func() {
		once.Do(func() {
			icancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("ingest Run returned %v", err)
			}
			nc.Close()
		})
	}
	t.Cleanup(s.stopIngest)
	return nil
}

// stopNATS stops the ingest and the server (startNATS starts them again
// on the same port and store).
func (s *stack) stopNATS() {
	s.stopIngest()
	s.srv.Shutdown()
}

// streamMessages returns how many messages the events stream has ever
// stored (its last sequence).
func (s *stack) streamMessages(ctx context.Context) uint64 {
	s.t.Helper()
	nc, err := s.srv.Connect()
	if err != nil {
		s.t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		s.t.Fatal(err)
	}
	st, err := js.Stream(ctx, "ZARLOG_EVENTS")
	if err != nil {
		s.t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	return info.State.LastSeq
}

// verifyBundle builds the game's proof bundle from the ledger and
// checks it with the verifier and every key; it returns the report.
func (s *stack) verifyBundle(ctx context.Context, game string) *verifier.Report {
	s.t.Helper()
	s.waitClosed(ctx, game)
	bundle, err := s.ledger.Bundle(ctx, game)
	if err != nil {
		s.t.Fatal(err)
	}
	logKey, err := verifier.ParseLogKey(s.ledger.VerifierKey())
	if err != nil {
		s.t.Fatal(err)
	}
	ek, err := verifier.ParseEmitterKeys(s.vkey)
	if err != nil {
		s.t.Fatal(err)
	}
	r := verifier.Verify(bundle, verifier.Options{LogKey: logKey, EmitterKeys: ek})
	if r.Exit() != 0 {
		s.t.Fatalf("bundle of %s: exit %d, failed %v\n%s", game, r.Exit(), r.Failed(), r.Text(verifier.English))
	}
	return r
}

// waitClosed waits until the ledger holds the game closed.
func (s *stack) waitClosed(ctx context.Context, game string) *events.Game {
	s.t.Helper()
	g, err := s.ledger.WaitGame(ctx, game, func(g *events.Game) bool { return g.Closed })
	if err != nil {
		s.t.Fatalf("game %s not closed in the ledger: %v (rejections %v)", game, err, s.ledger.Rejected())
	}
	return g
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// play plays a per-game scheme's game from its first roll: with logged
// moves, every played roll gets a move chosen by rules.Choose until the game
// is over on the board (then a finished end); otherwise maxRolls rolls with
// "-" moves and a resignation. It returns the rolls.
func play(t testing.TB, ctx context.Context, g sdk.PerGame, seed string, maxRolls int) []sdk.Rolled {
	t.Helper()
	return playWith(t, ctx, g, seed, maxRolls, nil)
}

// playWith is play with a hook called after each roll (and its move) with
// the roll's number. It plays on from the game's current roll; the rolls it
// returns are the ones it made.
func playWith(t testing.TB, ctx context.Context, g sdk.PerGame, seed string, maxRolls int, after func(n uint32)) []sdk.Rolled {
	t.Helper()
	strategy := rand.New(rand.NewChaCha8(testonly.Label32("strategy/" + seed)))
	st, err := g.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rolls []sdk.Rolled
	n0 := uint32(len(st.Rolls))
	for {
		if st.MovesLogged {
			if end, over, err := g.BoardEnd(ctx); err != nil {
				t.Fatal(err)
			} else if over {
				if err := g.End(ctx, end); err != nil {
					t.Fatal(err)
				}
				break
			}
		} else if int(n0)+len(rolls) >= maxRolls {
			if err := g.End(ctx, events.End{Result: events.Resigned, Winner: 1, Points: 1}); err != nil {
				t.Fatal(err)
			}
			break
		}
		r, err := g.Roll(ctx)
		if err != nil {
			t.Fatalf("roll %d: %v", len(rolls), err)
		}
		if r.N != n0+uint32(len(rolls)) {
			t.Fatalf("roll %d has n %d", n0+uint32(len(rolls)), r.N)
		}
		rolls = append(rolls, r)
		if r.Seat < 0 {
			if after != nil {
				after(r.N)
			}
			continue
		}
		playStr := "-"
		if st.MovesLogged {
			if st, err = g.State(ctx); err != nil {
				t.Fatal(err)
			}
			ms, err := movecheck.ParseState(st.Position)
			if err != nil {
				t.Fatal(err)
			}
			if ms.Phase != movecheck.PhasePlay || ms.Seat != r.Seat || ms.N != r.N {
				t.Fatalf("roll %d: the SDK says seat %d plays, the rules engine %+v", r.N, r.Seat, ms)
			}
			playStr = rules.FormatPlay(rules.Choose(ms.Variant, ms.Position, r.Seat, ms.Dice, strategy))
		}
		m, err := g.Move(ctx, r.Seat, playStr)
		if err != nil {
			t.Fatalf("move of roll %d: %v", r.N, err)
		}
		if m.N != r.N || m.Seat != r.Seat {
			t.Fatalf("move %+v for roll %+v", m, r)
		}
		if after != nil {
			after(r.N)
		}
	}
	if err := g.Reveal(ctx); err != nil {
		t.Fatal(err)
	}
	return rolls
}

// checkRolls checks the rolls the SDK returned against the sequence rules
// and the dice the scheme gives (recomputed here from the logged game).
func checkRolls(t testing.TB, rolls []sdk.Rolled, g *events.Game) {
	t.Helper()
	if len(rolls) != len(g.Rolls) {
		t.Fatalf("%d rolls returned, %d logged", len(rolls), len(g.Rolls))
	}
	seq := dice.NewSequence(g.Opening)
	for i, r := range rolls {
		lr := g.Rolls[i]
		if r.N != lr.N || r.Dice != lr.Dice || r.Kind != lr.Kind {
			t.Fatalf("roll %d returned %+v, logged %+v", i, r, lr)
		}
		if err := seq.Next(lr); err != nil {
			t.Fatal(err)
		}
	}
	if f := g.Recheck(*g.Seed); f != nil {
		t.Fatalf("the logged game does not recheck: %s", f)
	}
}
