package testlog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/serve"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/publisher"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// ledgerOrigin is the origin of the test ledgers' logs.
const ledgerOrigin = "test.zarlog.example/log"

// LedgerConfig configures a test ledger. Every field's zero value is documented.
type LedgerConfig struct {
	// EmitterKeys are the emitters' verifier keys. Nil: none.
	EmitterKeys []string
	// Now is the ledger's clock. Nil means time.Now.
	Now func() time.Time
}

// A Ledger is an open ledger with a deterministic log key (testonly.Key of
// ledgerOrigin), signing a checkpoint every few milliseconds.
type Ledger struct {
	L    *ledger.Ledger
	vkey string
}

// OpenLedger opens a new ledger in a temporary directory; it is closed when the
// test ends (after the cleanups registered later, such as the ingest's).
func OpenLedger(t testing.TB, cfg LedgerConfig) *Ledger {
	t.Helper()
	kr, err := events.NewKeyring(cfg.EmitterKeys...)
	if err != nil {
		t.Fatal(err)
	}
	s, vkey, err := testonly.Key(ledgerOrigin)
	if err != nil {
		t.Fatal(err)
	}
	v, err := merkle.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(context.Background(), ledger.Config{Dir: t.TempDir(), Signer: s, Verifier: v, Emitters: kr,
		Moves: movecheck.Checker{}, Now: cfg.Now, CheckpointInterval: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return &Ledger{L: l, vkey: vkey}
}

// Ingest returns cfg with the ledger as its Sink, Locator and Checkpoints.
func (l *Ledger) Ingest(cfg ingest.Config) ingest.Config {
	cfg.Sink, cfg.Locator, cfg.Checkpoints = l.L, l.L, l.L
	return cfg
}

// VerifierKey returns the log's verifier key.
func (l *Ledger) VerifierKey() string { return l.vkey }

// Len returns the number of leaves in the log.
func (l *Ledger) Len() int {
	n, err := l.L.Size()
	if err != nil {
		panic(err)
	}
	return int(n)
}

// Game returns a game's state, or nil if the log has none of its events.
func (l *Ledger) Game(id string) *events.Game {
	g, err := l.L.Game(context.Background(), id)
	if err != nil {
		return nil
	}
	return g
}

// Rejected returns the rejected store's records (the first 10,000).
func (l *Ledger) Rejected() []ledger.Rejection {
	r, err := l.L.Rejected(context.Background(), 0, 10000)
	if err != nil {
		panic(err)
	}
	return r
}

// WaitGame waits until the game exists and cond holds for its state, or
// ctx ends. It wakes up at each published checkpoint, which follows every
// append.
func (l *Ledger) WaitGame(ctx context.Context, id string, cond func(*events.Game) bool) (*events.Game, error) {
	for {
		_, _, next := l.L.Latest()
		if g, err := l.L.Game(ctx, id); err == nil && cond(g) {
			return g, nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-l.L.Done():
			return nil, l.L.Err()
		}
	}
}

// Bundle returns the proof bundle of a finished game at a checkpoint that
// covers it.
func (l *Ledger) Bundle(ctx context.Context, game string) ([]byte, error) {
	src := serve.NewBundleSource(l.L)
	leaves, err := src.GameLeaves(ctx, game)
	if err != nil {
		return nil, fmt.Errorf("game %s: %w", game, err)
	}
	note, err := l.L.WaitCovering(ctx, leaves[len(leaves)-1].Index)
	if err != nil {
		return nil, err
	}
	return publisher.BuildBundle(ctx, src, leaves, note)
}
