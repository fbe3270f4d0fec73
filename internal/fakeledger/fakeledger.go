// Package fakeledger is an in-memory zarlog ledger for the tests of the
// emitter SDK and of `zarlog emit`, until they can use the real one. It
// implements ingest.Sink, ingest.Locator and ingest.CheckpointWaiter as the
// ledger does: every event is parsed (events.Parse), its emitter and
// signature checked (events.Verify), applied to its game (events.Apply with
// the ledger's clock, the pinned drand chains and the rules engine), then
// appended to an RFC 6962 tree (merkle.Builder) whose checkpoint is signed
// after every Submit; refused events go to a rejected list with their code.
// It also builds proof bundles (publisher.BuildBundle) for the verifier.
//
// It is test support, not part of zarlog's contract: no durability (unless
// Config.File is set, which only adds the cost of an fsync per Submit).
package fakeledger

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/publisher"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// Config configures a Ledger. Every field's zero value is documented.
type Config struct {
	// EmitterKeys are the emitters' signed-note verifier keys (the
	// configured emitters). Required.
	EmitterKeys []string
	// Origin is the log's origin. Zero means "fake.zarlog.example/log".
	Origin string
	// Now is the ledger's clock. Nil means time.Now.
	Now func() time.Time
	// Rand draws the log's key. Nil means crypto/rand.
	Rand io.Reader
	// File, if not nil, receives every appended event with one fsync per
	// Submit (the cost of a durable ledger, for benchmarks).
	File *os.File
}

// A Rejection is one refused submission.
type Rejection struct {
	EventID string
	Emitter string
	ingest.Refusal
}

// A Ledger is the in-memory ledger. It is safe for concurrent use.
type Ledger struct {
	cfg     Config
	keyring *events.Keyring
	signer  note.Signer
	vkey    string

	mu         sync.Mutex
	builder    *merkle.Builder
	tiles      map[[2]int64][]byte
	leaves     [][]byte
	index      map[string]uint64
	games      map[string]*events.Game
	gameLeaves map[string][]uint64
	rejected   []Rejection
	rejIndex   map[string]ingest.Refusal
	checkpoint []byte
	size       uint64
	submits    int
	changed    chan struct{} // closed and replaced on every Submit
}

// New returns an empty ledger with a new log key.
func New(cfg Config) (*Ledger, error) {
	if cfg.Origin == "" {
		cfg.Origin = "fake.zarlog.example/log"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	kr, err := events.NewKeyring(cfg.EmitterKeys...)
	if err != nil {
		return nil, fmt.Errorf("fakeledger: %w", err)
	}
	skey, vkey, err := merkle.GenerateKey(cfg.Rand, cfg.Origin)
	if err != nil {
		return nil, fmt.Errorf("fakeledger: %w", err)
	}
	signer, err := merkle.NewSigner(skey)
	if err != nil {
		return nil, fmt.Errorf("fakeledger: %w", err)
	}
	b, err := merkle.NewBuilder(context.Background(), nil, merkle.State{})
	if err != nil {
		return nil, fmt.Errorf("fakeledger: %w", err)
	}
	return &Ledger{
		cfg: cfg, keyring: kr, signer: signer, vkey: vkey, builder: b,
		tiles: map[[2]int64][]byte{}, index: map[string]uint64{}, games: map[string]*events.Game{},
		gameLeaves: map[string][]uint64{}, rejIndex: map[string]ingest.Refusal{}, changed: make(chan struct{}),
	}, nil
}

// VerifierKey returns the log's verifier key (zarlog-verify --log-key).
func (l *Ledger) VerifierKey() string { return l.vkey }

// Submit implements ingest.Sink.
func (l *Ledger) Submit(ctx context.Context, subs []ingest.Submission) ([]ingest.Outcome, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	outs := make([]ingest.Outcome, len(subs))
	var added [][]byte
	for i, s := range subs {
		outs[i] = l.decide(s, &added)
	}
	if len(added) > 0 {
		tds, err := l.builder.Append(added)
		if err != nil {
			return nil, fmt.Errorf("fakeledger: appending: %w", err)
		}
		for _, td := range tds {
			l.tiles[[2]int64{int64(td.Tile.Level), int64(td.Tile.Index)}] = td.Data
		}
		if l.cfg.File != nil {
			if _, err := l.cfg.File.Write(bytes.Join(added, []byte("\n"))); err != nil {
				return nil, err
			}
			if err := l.cfg.File.Sync(); err != nil {
				return nil, err
			}
		}
		cp, err := merkle.Sign(merkle.Checkpoint{Origin: l.cfg.Origin, Size: l.builder.Size(), Hash: l.builder.Root()}, l.signer)
		if err != nil {
			return nil, fmt.Errorf("fakeledger: signing: %w", err)
		}
		l.checkpoint, l.size = cp, l.builder.Size()
	}
	l.submits++
	close(l.changed)
	l.changed = make(chan struct{})
	return outs, nil
}

// decide judges one submission (l.mu held) and appends it to added if it is
// appended.
func (l *Ledger) decide(s ingest.Submission, added *[][]byte) ingest.Outcome {
	reject := func(id, code, reason string) ingest.Outcome {
		r := ingest.Refusal{Code: code, Reason: reason}
		l.rejected = append(l.rejected, Rejection{EventID: id, Emitter: s.Emitter, Refusal: r})
		if id != "" {
			l.rejIndex[id] = r
		}
		return ingest.Outcome{Kind: ingest.Rejected, EventID: id, Refusal: r}
	}
	if s.Refused != nil {
		return reject("", s.Refused.Code, s.Refused.Reason)
	}
	ev, err := events.Parse(s.Event)
	if err != nil {
		// Name the event if its id can be read at all, so that a receipt
		// request learns of the rejection.
		var h struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(s.Event, &h) != nil || !events.ValidEventID(h.ID) {
			h.ID = ""
		}
		return reject(h.ID, codeOf(err), err.Error())
	}
	if s.MsgID != "" && s.MsgID != ev.ID {
		return reject(ev.ID, "msg-id-mismatch", fmt.Sprintf("Nats-Msg-Id %q is not the event id %q", s.MsgID, ev.ID))
	}
	if i, ok := l.index[ev.ID]; ok {
		if bytes.Equal(l.leaves[i], s.Event) {
			return ingest.Outcome{Kind: ingest.Duplicate, Index: i, EventID: ev.ID}
		}
		return reject(ev.ID, string(events.CodeDuplicateID), fmt.Sprintf("id %s is at index %d with other bytes", ev.ID, i))
	}
	if err := events.Verify(ev, l.keyring); err != nil {
		return reject(ev.ID, codeOf(err), err.Error())
	}
	idx := uint64(len(l.leaves))
	env := events.Env{Emitter: s.Emitter, Now: l.cfg.Now(), Index: idx,
		Beacons: events.BeaconsOf(drand.ChainByHash), Moves: movecheck.Checker{}}
	g, err := events.Apply(l.games[ev.Game], ev, env)
	if err != nil {
		return reject(ev.ID, codeOf(err), err.Error())
	}
	leaf := bytes.Clone(s.Event)
	l.leaves = append(l.leaves, leaf)
	l.index[ev.ID] = idx
	l.games[ev.Game] = g
	l.gameLeaves[ev.Game] = append(l.gameLeaves[ev.Game], idx)
	*added = append(*added, leaf)
	return ingest.Outcome{Kind: ingest.Appended, Index: idx, EventID: ev.ID}
}

func codeOf(err error) string {
	if c, ok := events.CodeOf(err); ok {
		return string(c)
	}
	return "internal"
}

// Locate implements ingest.Locator.
func (l *Ledger) Locate(ctx context.Context, id string) (ingest.Outcome, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i, ok := l.index[id]; ok {
		return ingest.Outcome{Kind: ingest.Appended, Index: i, EventID: id}, nil
	}
	if r, ok := l.rejIndex[id]; ok {
		return ingest.Outcome{Kind: ingest.Rejected, EventID: id, Refusal: r}, nil
	}
	return ingest.Outcome{}, fmt.Errorf("fakeledger: %s: %w", id, ingest.ErrNotFound)
}

// WaitCovering implements ingest.CheckpointWaiter.
func (l *Ledger) WaitCovering(ctx context.Context, index uint64) ([]byte, error) {
	for {
		l.mu.Lock()
		size, cp, ch := l.size, l.checkpoint, l.changed
		l.mu.Unlock()
		if size > index {
			return cp, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// ReadTiles implements merkle.TileReader.
func (l *Ledger) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		d, ok := l.tiles[[2]int64{int64(t.Level), int64(t.Index)}]
		if !ok {
			return nil, fmt.Errorf("%s: %w", t.Path(), merkle.ErrNotFound)
		}
		out[i] = d
	}
	return out, nil
}

// Len returns the number of leaves.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.leaves)
}

// Leaves returns the leaves in log order.
func (l *Ledger) Leaves() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]byte(nil), l.leaves...)
}

// Game returns a game's state, or nil.
func (l *Ledger) Game(id string) *events.Game {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.games[id]
}

// Rejected returns the rejections so far.
func (l *Ledger) Rejected() []Rejection {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Rejection(nil), l.rejected...)
}

// WaitUntil waits until cond (called with the ledger locked, so it must not
// call the Ledger's methods) holds for the ledger's leaves and rejections,
// or ctx ends.
func (l *Ledger) WaitUntil(ctx context.Context, cond func(leaves [][]byte, rejected []Rejection) bool) error {
	for {
		l.mu.Lock()
		ok, ch := cond(l.leaves, l.rejected), l.changed
		l.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitGame waits until the game exists and cond holds for its state, or
// ctx ends.
func (l *Ledger) WaitGame(ctx context.Context, id string, cond func(*events.Game) bool) (*events.Game, error) {
	for {
		l.mu.Lock()
		g, ch := l.games[id], l.changed
		l.mu.Unlock()
		if g != nil && cond(g) {
			return g, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// ErrNoGame is returned by Bundle for a game the ledger does not have.
var ErrNoGame = errors.New("fakeledger: no such game")

// Bundle returns the proof bundle of a closed game at the current
// checkpoint.
func (l *Ledger) Bundle(ctx context.Context, game string) ([]byte, error) {
	l.mu.Lock()
	idx, ok := l.gameLeaves[game]
	var leaves []publisher.IndexedLeaf
	for _, i := range idx {
		leaves = append(leaves, publisher.IndexedLeaf{Index: i, Leaf: l.leaves[i]})
	}
	cp := l.checkpoint
	l.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoGame, game)
	}
	return publisher.BuildBundle(ctx, l, leaves, cp)
}
