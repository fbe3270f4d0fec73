package sdk

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
	"github.com/zarlog/zarlog/verifier"
)

// GameConfig configures a Backend. Every field's zero value is documented.
type GameConfig struct {
	// Signer signs the binding events (commit, end, reveal, roll-commit,
	// roll-reveal) with the backend's Ed25519 key; its Name is the emitter
	// id (docs/FORMATS.md §1.3). Required. A note.Signer from
	// golang.org/x/mod/sumdb/note is one.
	Signer events.Signer
	// Now is the clock: event times, anchored-v1 sealing times and anchor
	// rounds, and the local check that a token or beacon comes at the right
	// time. Nil means time.Now.
	Now func() time.Time
	// Rand is the source of seeds, game and roll ids and server-drawn second
	// numbers. Nil means crypto/rand.Reader. Anything else is for tests.
	Rand io.Reader
	// SkipCommitReceipt lets the first roll of a game go ahead without the
	// ledger's receipt for the game's commit. By default the first roll
	// (per-roll-v1: the first roll-commit) waits for it, so that the
	// commitment is provably logged before any die is known (docs/NATS.md
	// §3). Games of a device (NewDevice) publish nothing and never wait.
	SkipCommitReceipt bool
	// PublishSeatNames lets a game's settings carry "seatNames", the
	// players' display names that the pages show (docs/FORMATS.md §1.6).
	// Settings are part of the commit event, so the names go into the
	// public, append-only log for ever: no one can erase them
	// (docs/PRIVACY.md). False: a new game whose settings have the member
	// is refused (ErrSeatNames) before anything is made or published.
	// Games of a device (NewDevice) publish nothing and are not refused.
	PublishSeatNames bool
}

// Errors callers can branch on (with errors.Is).
var (
	// ErrRefused: the event the call would make is not allowed by its game's
	// history, so the SDK did not make it (the ledger would have rejected
	// it). The error also wraps the *events.RejectError: events.CodeOf gives
	// its code. Nothing changed.
	ErrRefused = errors.New("refused by the game's rules")
	// ErrNotAcknowledged: the call's event is made and is part of the game
	// (its snapshot holds it), but JetStream has not acknowledged it yet (the
	// ctx ended, or the Client was closed). The call's other results are
	// valid. Flush, or the game's next call, publishes it again (it is
	// deduplicated by id).
	ErrNotAcknowledged = errors.New("event made but not acknowledged yet")
	// ErrNotNow: the call does not fit the game's state (a second
	// contribution of a seat, a roll before the dice inputs are known, a
	// beacon before its round exists, …). Nothing changed.
	ErrNotNow = errors.New("not possible in the game's current state")
	// ErrLocal: a device's game has no ledger (no receipts).
	ErrLocal = errors.New("a device game is not logged")
	// ErrSeatNames: a new game's settings have "seatNames", the players'
	// display names, which would be public in the log for ever, and the
	// backend was not told to publish them (GameConfig.PublishSeatNames).
	// Nothing was made.
	ErrSeatNames = errors.New(`the settings' "seatNames" would put the players' display names into the public log for ever; GameConfig.PublishSeatNames allows it (docs/PRIVACY.md)`)
)

// A Backend makes the games of one emitter: it builds each event with
// package events, checks it against the game's history with events.Apply and
// the rules engine (package rules/movecheck) exactly as the ledger will,
// signs the binding ones, and publishes them through a Client with the game
// id as OrderKey. A Backend from NewDevice publishes nothing: its games run on
// a player's device (games against the computer, docs/SCHEMES.md §7).
//
// A Backend is safe for concurrent use; so is each game, whose calls are
// serialized (each waits for the previous one).
type Backend struct {
	client  *Client
	signer  events.Signer
	emitter string
	now     func() time.Time
	rand    io.Reader
	receipt bool
	names   bool // GameConfig.PublishSeatNames
}

// NewBackend returns a Backend publishing through c, whose emitter must be
// the signer's name.
func NewBackend(c *Client, cfg GameConfig) (*Backend, error) {
	if c == nil {
		return nil, errors.New("sdk: NewBackend: nil Client")
	}
	b, err := newBackend(cfg)
	if err != nil {
		return nil, err
	}
	if b.emitter != c.cfg.Emitter {
		return nil, fmt.Errorf("sdk: the signer is emitter %q's, the Client publishes as %q", b.emitter, c.cfg.Emitter)
	}
	b.client = c
	b.receipt = !cfg.SkipCommitReceipt
	return b, nil
}

// NewDevice returns a Backend that publishes nothing: its games run entirely
// on a player's device, against the computer, with the same schemes and the
// same events, and end in the same dice-proof-v1 evidence file (Evidence).
// Every game's settings must say "opponent": "computer", so that the
// verifier says what such a file means: the dice did not change after the
// game started, but whoever held the device could have looked at them in
// advance. The signer's key signs the events as a backend's would (any
// Ed25519 key will do: the evidence file does not carry the signatures).
func NewDevice(cfg GameConfig) (*Backend, error) {
	return newBackend(cfg)
}

func newBackend(cfg GameConfig) (*Backend, error) {
	if cfg.Signer == nil {
		return nil, errors.New("sdk: GameConfig.Signer is nil")
	}
	if !events.ValidEmitter(cfg.Signer.Name()) {
		return nil, fmt.Errorf("sdk: signer name %q is not an emitter id", cfg.Signer.Name())
	}
	b := &Backend{signer: cfg.Signer, emitter: cfg.Signer.Name(), now: cfg.Now, rand: cfg.Rand, names: cfg.PublishSeatNames}
	if b.now == nil {
		b.now = time.Now
	}
	if b.rand == nil {
		b.rand = rand.Reader
	}
	return b, nil
}

// Emitter returns the backend's emitter id.
func (b *Backend) Emitter() string { return b.emitter }

// Local reports whether the backend is a device (NewDevice): its games are
// not published.
func (b *Backend) Local() bool { return b.client == nil }

// draw32 draws 32 bytes from the backend's randomness.
func (b *Backend) draw32(what string) ([32]byte, error) {
	var x [32]byte
	if _, err := io.ReadFull(b.rand, x[:]); err != nil {
		return x, fmt.Errorf("sdk: drawing %s: %w", what, err)
	}
	return x, nil
}

// newUUID draws a random version-4 UUID.
func (b *Backend) newUUID(what string) (dice.UUID, error) {
	var u dice.UUID
	if _, err := io.ReadFull(b.rand, u[:]); err != nil {
		return u, fmt.Errorf("sdk: drawing %s: %w", what, err)
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u, nil
}

// checkSettings checks a new game's settings as the ledger will, and that a
// device's game is declared a game against the computer.
func (b *Backend) checkSettings(settings []byte) (events.GameSettings, error) {
	gs, err := events.ParseSettings(settings)
	if err != nil {
		return gs, fmt.Errorf("sdk: settings: %w: %w", ErrRefused, err)
	}
	if b.Local() && gs.Opponent != verifier.OpponentComputer {
		return gs, fmt.Errorf(`sdk: a device game's settings must say "opponent": "computer" (they say %q)`, gs.Opponent)
	}
	if !b.Local() && !b.names && hasMember(settings, "seatNames") {
		return gs, fmt.Errorf("sdk: settings: %w", ErrSeatNames)
	}
	return gs, nil
}

// hasMember reports whether settings, a JSON object, has the member name.
func hasMember(settings []byte, name string) bool {
	if settings == nil {
		return false
	}
	v, err := cjson.Decode(settings)
	if err != nil {
		return false // ParseSettings has refused it already
	}
	o, ok := v.(cjson.Object)
	if !ok {
		return false
	}
	_, ok = o.Get(name)
	return ok
}

// liveEnv is the environment in which the SDK checks a new event: the
// backend's clock stands for the ledger's, with no skew.
func (b *Backend) liveEnv(seq uint64) events.Env {
	return events.Env{Emitter: b.emitter, Now: b.now(), Index: seq,
		Beacons: events.BeaconsOf(drand.ChainByHash), Moves: movecheck.Checker{}}
}

// replayEnv is the environment in which a snapshot's events are applied
// again: they were checked against the clock when they were made.
func (b *Backend) replayEnv(seq uint64) events.Env {
	return events.Env{Emitter: b.emitter, SkipClockChecks: true, Index: seq,
		Beacons: events.BeaconsOf(drand.ChainByHash), Moves: movecheck.Checker{}}
}

// game is what every scheme's game has: its events, its state as the ledger
// will see it, and its secrets.
type game struct {
	b      *Backend
	lock   chan struct{} // one token: the call in progress
	id     string
	scheme events.Scheme
	gs     events.GameSettings

	first   events.Body // the commit's body: set before the game is returned, never changed
	st      *events.Game
	evs     []*events.Event
	leaves  [][]byte // the canonical bytes of evs
	acked   int      // leaves[:acked] are acknowledged by JetStream (all of them on a device)
	receipt *Receipt // the commit's receipt, once obtained

	// Secrets (in the snapshot; never logged).
	seed *[32]byte    // per-game schemes: the game's seed; per-roll-v1: the pending roll's
	held [2]*[32]byte // tavlarena-v1: contributions received and withheld

	roller dice.Roller // per-game schemes, once the dice inputs are logged
}

func newGame(b *Backend, scheme events.Scheme, id string, gs events.GameSettings) *game {
	return &game{b: b, lock: make(chan struct{}, 1), id: id, scheme: scheme, gs: gs}
}

// acquire waits for the game's previous call to finish, or for ctx.
func (g *game) acquire(ctx context.Context) error {
	select {
	case g.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *game) release() { <-g.lock }

// record makes the game's next event of body, checks it against the game's
// history and appends it to the game. It publishes nothing.
func (g *game) record(body events.Body) (*events.Event, error) {
	seq := uint64(len(g.evs))
	h := events.Header{Scheme: g.scheme, Game: g.id, Seq: seq, Emitter: g.b.emitter, Time: g.b.now()}
	var ev *events.Event
	var err error
	if t := body.Type(); t.Binding() || t == events.TypeCommit {
		ev, err = events.NewSigned(h, body, g.b.signer) // canonical settings, signature
	} else {
		// The envelope New would make; Format below checks it as Parse
		// does (New would check it once more).
		ev = &events.Event{V: events.Version, ID: g.id + ":" + strconv.FormatUint(seq, 10), Type: t, Scheme: g.scheme,
			Game: g.id, Seq: seq, Emitter: g.b.emitter, Time: h.Time.UTC().Truncate(time.Millisecond), Body: body}
	}
	var leaf []byte
	if err == nil {
		leaf, err = events.Format(ev)
	}
	if err != nil {
		return nil, fmt.Errorf("sdk: game %s: making the %s event: %w: %w", g.id, body.Type(), ErrRefused, err)
	}
	st, err := events.Apply(g.st, ev, g.b.liveEnv(seq))
	if err != nil {
		if _, ok := events.CodeOf(err); ok {
			return nil, fmt.Errorf("sdk: game %s: %s event %d: %w: %w", g.id, body.Type(), seq, ErrRefused, err)
		}
		return nil, fmt.Errorf("sdk: game %s: %s event %d: %w", g.id, body.Type(), seq, err)
	}
	if seq == 0 {
		g.first = ev.Body
	}
	g.st, g.evs, g.leaves = st, append(g.evs, ev), append(g.leaves, leaf)
	if g.b.Local() {
		g.acked = len(g.leaves)
	}
	return ev, nil
}

// flush publishes the events JetStream has not acknowledged yet, in order,
// and waits for their acks.
func (g *game) flush(ctx context.Context) error {
	for g.acked < len(g.leaves) {
		start := g.acked
		pending := make([]*Pending, 0, len(g.leaves)-start)
		var perr error
		for _, leaf := range g.leaves[start:] {
			ev := g.evs[start+len(pending)]
			p, err := g.b.client.PublishAsync(ctx, Event{ID: ev.ID, Data: leaf, OrderKey: g.id})
			if err != nil {
				perr = err
				break
			}
			pending = append(pending, p)
		}
		retry := false
		for _, p := range pending {
			_, err := p.Wait(ctx)
			if err != nil {
				// An attempt abandoned by an earlier call may still be in
				// flight for this game; its end fails what queued behind
				// it. Send again.
				if errors.Is(err, ErrPredecessor) && ctx.Err() == nil {
					retry = true
					break
				}
				return fmt.Errorf("sdk: game %s: publishing event %s: %w", g.id, g.evs[g.acked].ID, err)
			}
			g.acked++
		}
		if perr != nil && !retry {
			return fmt.Errorf("sdk: game %s: publishing event %s: %w", g.id, g.evs[g.acked].ID, perr)
		}
	}
	return nil
}

// emit records events and publishes them. An error wrapping
// ErrNotAcknowledged means the events are recorded and not yet acknowledged;
// any other error means nothing changed.
func (g *game) emit(ctx context.Context, bodies ...events.Body) error {
	if err := g.flush(ctx); err != nil {
		return err
	}
	st, n := g.st, len(g.evs)
	for _, body := range bodies {
		if _, err := g.record(body); err != nil {
			// Forget what this call recorded: it was never published, and
			// Apply never modifies the state it is given.
			g.st, g.evs, g.leaves, g.acked = st, g.evs[:n], g.leaves[:n], min(g.acked, n)
			return err
		}
	}
	return g.publishRecorded(ctx)
}

// publishRecorded publishes what record made.
func (g *game) publishRecorded(ctx context.Context) error {
	if err := g.flush(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrNotAcknowledged, err)
	}
	return nil
}

// needReceipt waits for the commit's receipt before the first roll, unless
// the backend skips it.
func (g *game) needReceipt(ctx context.Context) error {
	if !g.b.receipt || g.b.Local() || g.receipt != nil {
		return nil
	}
	_, err := g.commitReceipt(ctx)
	return err
}

func (g *game) commitReceipt(ctx context.Context) (Receipt, error) {
	if g.receipt != nil {
		return *g.receipt, nil
	}
	if g.b.Local() {
		return Receipt{}, fmt.Errorf("sdk: game %s: %w", g.id, ErrLocal)
	}
	if err := g.flush(ctx); err != nil {
		return Receipt{}, err
	}
	r, err := g.b.client.Receipt(ctx, Event{ID: g.evs[0].ID, Data: g.leaves[0]})
	if err != nil {
		return Receipt{}, fmt.Errorf("sdk: game %s: receipt of the commit: %w", g.id, err)
	}
	g.receipt = &r
	return r, nil
}

// ID returns the game id (per-roll-v1: the match id).
func (g *game) ID() string { return g.id }

// Scheme returns the game's dice scheme.
func (g *game) Scheme() events.Scheme { return g.scheme }

// State returns the game's state after its events, as the ledger computes
// it (events.Apply). It is a value: do not modify it. Game.Leaves holds event
// seqs, not log indices, since the SDK does not know those.
func (g *game) State(ctx context.Context) (*events.Game, error) {
	if err := g.acquire(ctx); err != nil {
		return nil, err
	}
	defer g.release()
	return g.st, nil
}

// Leaves returns the canonical bytes of every event of the game so far, in
// seq order (the log's leaves, once logged).
func (g *game) Leaves(ctx context.Context) ([][]byte, error) {
	if err := g.acquire(ctx); err != nil {
		return nil, err
	}
	defer g.release()
	return append([][]byte(nil), g.leaves...), nil
}

// Unacknowledged returns the number of the game's events JetStream has not
// acknowledged yet (always 0 on a device).
func (g *game) Unacknowledged(ctx context.Context) (int, error) {
	if err := g.acquire(ctx); err != nil {
		return 0, err
	}
	defer g.release()
	return len(g.leaves) - g.acked, nil
}

// Flush publishes every event of the game that JetStream has not
// acknowledged yet (after an ErrNotAcknowledged, or after Resume), in order,
// and waits for the acks.
func (g *game) Flush(ctx context.Context) error {
	if err := g.acquire(ctx); err != nil {
		return err
	}
	defer g.release()
	return g.flush(ctx)
}

// CommitReceipt returns the ledger's receipt for the game's commit: a
// tlog-proof of the commit's bytes, its leaf index, inclusion proof and a
// signed checkpoint covering it (docs/NATS.md §5), asking the ledger if the
// game does not hold it yet. Hand it to the players' apps before the first
// roll (Receipt.Format is the file): it proves that the commitment was
// logged before any die was known (they check it with CheckReceipt, or the
// JavaScript package's checkReceipt). Unless the backend skips it
// (GameConfig.SkipCommitReceipt), the first roll waits for it anyway. A
// *RejectedError means the ledger refused the commit: the game cannot go on.
func (g *game) CommitReceipt(ctx context.Context) (Receipt, error) {
	if err := g.acquire(ctx); err != nil {
		return Receipt{}, err
	}
	defer g.release()
	return g.commitReceipt(ctx)
}

// Receipt waits for the ledger's receipt of the game's event seq (which
// must exist), after publishing what is not acknowledged yet.
func (g *game) Receipt(ctx context.Context, seq uint64) (Receipt, error) {
	if err := g.acquire(ctx); err != nil {
		return Receipt{}, err
	}
	if seq >= uint64(len(g.evs)) {
		g.release()
		return Receipt{}, fmt.Errorf("sdk: game %s has %d events, no seq %d", g.id, len(g.evs), seq)
	}
	if g.b.Local() {
		g.release()
		return Receipt{}, fmt.Errorf("sdk: game %s: %w", g.id, ErrLocal)
	}
	if seq == 0 && g.receipt != nil {
		g.release()
		return *g.receipt, nil
	}
	err := g.flush(ctx)
	ev := Event{ID: g.evs[seq].ID, Data: g.leaves[seq]}
	g.release() // the receipt may take a while; let the game go on meanwhile
	if err != nil {
		return Receipt{}, err
	}
	return g.b.client.Receipt(ctx, ev)
}

// Evidence returns the game's dice-proof-v1 evidence file (docs/SCHEMES.md
// §7), canonical JSON, once the game is closed (the reveal; a per-roll-v1
// match's end): what a player downloads and zarlog-verify checks. A
// device's game gives exactly the file a backend's would.
func (g *game) Evidence(ctx context.Context) ([]byte, error) {
	if err := g.acquire(ctx); err != nil {
		return nil, err
	}
	defer g.release()
	if g.st == nil || !g.st.Closed {
		return nil, fmt.Errorf("sdk: game %s: %w: the evidence file exists once the game is closed", g.id, ErrNotNow)
	}
	ev, err := verifier.EvidenceOf(g.st)
	if err != nil {
		return nil, fmt.Errorf("sdk: game %s: %w", g.id, err)
	}
	return verifier.Format(ev)
}

// String names the game without its secrets.
func (g *game) String() string { return fmt.Sprintf("%s game %s", g.scheme, g.id) }

// GoString names the game without its secrets.
func (g *game) GoString() string { return g.String() }

// LogValue names the game in log/slog records without its secrets.
func (g *game) LogValue() slog.Value {
	return slog.GroupValue(slog.String("scheme", string(g.scheme)), slog.String("game", g.id))
}

// End logs the game's end (per-roll-v1: the match's). A finished end of a
// game whose moves are logged must name the winner and points the board gives
// (BoardEnd); resigned and abandoned ends may come at any time.
func (g *game) End(ctx context.Context, end events.End) error {
	if err := g.acquire(ctx); err != nil {
		return err
	}
	defer g.release()
	return g.emit(ctx, end)
}

// BoardEnd returns, for a game whose moves are logged, the finished end the
// board gives once the game is over on it (per-roll-v1: the match's last
// game): the winner and the result's multiplier (1, 2 or 3; a plakoto draw
// has no winner and 0 points). In backgammon with the doubling cube, multiply
// the points by the cube's value. It returns false while the game is not over
// or its moves are not logged.
func (g *game) BoardEnd(ctx context.Context) (events.End, bool, error) {
	if err := g.acquire(ctx); err != nil {
		return events.End{}, false, err
	}
	defer g.release()
	if g.st == nil || !g.st.MovesLogged || g.st.Position == nil {
		return events.End{}, false, nil
	}
	s, err := movecheck.ParseState(g.st.Position)
	if err != nil || s.Phase != movecheck.PhaseOver {
		return events.End{}, false, err
	}
	r, ok := rules.Outcome(s.Variant, s.Position)
	if !ok {
		return events.End{}, false, nil
	}
	if r.Draw() {
		return events.End{Result: events.Finished, Winner: events.NoWinner}, true, nil
	}
	return events.End{Result: events.Finished, Winner: r.Winner, Points: uint32(r.Multiplier)}, true, nil
}

// Move logs the checker play of the roll that waits for one, by seat. In a
// game whose moves are logged ("moves": "logged") the play may be written in
// any spelling the rules engine reads (docs/RULES.md §5): the SDK checks it
// against the position with the rules engine and logs its canonical text,
// which it returns; an illegal play is refused with ErrRefused and the
// *rules.IllegalMoveError naming the rule. In other games the play is logged
// as given, once per played roll, by the seat that plays it.
func (g *game) Move(ctx context.Context, seat int, play string) (events.Move, error) {
	if err := g.acquire(ctx); err != nil {
		return events.Move{}, err
	}
	defer g.release()
	m, err := g.move(seat, play)
	if err != nil {
		return events.Move{}, err
	}
	return m, g.emit(ctx, m)
}

func (g *game) move(seat int, play string) (events.Move, error) {
	if g.st == nil {
		return events.Move{}, fmt.Errorf("sdk: game %s: %w: no roll yet", g.id, ErrNotNow)
	}
	if g.st.MovesLogged {
		s, err := movecheck.ParseState(g.st.Position)
		if err != nil || s.Phase != movecheck.PhasePlay {
			return events.Move{}, fmt.Errorf("sdk: game %s: %w: no roll waits for a move", g.id, ErrNotNow)
		}
		if seat != s.Seat {
			return events.Move{}, fmt.Errorf("sdk: game %s: %w: roll %d (%d-%d) is seat %d's to play, not seat %d's",
				g.id, ErrNotNow, s.N, s.Dice[0], s.Dice[1], s.Seat, seat)
		}
		canon, err := rules.CanonicalPlay(s.Variant, s.Position, seat, s.Dice, play)
		if err != nil {
			return events.Move{}, fmt.Errorf("sdk: game %s: move %q of seat %d with %d-%d (roll %d): %w: %w",
				g.id, play, seat, s.Dice[0], s.Dice[1], s.N, ErrRefused, err)
		}
		return events.Move{N: s.N, Play: canon, Seat: seat}, nil
	}
	if g.scheme.PerGame() {
		if len(g.st.Rolls) == 0 {
			return events.Move{}, fmt.Errorf("sdk: game %s: %w: no roll yet", g.id, ErrNotNow)
		}
		n := len(g.st.Rolls) - 1
		if plays, _ := rollSeats(g.st.Opening, g.st.Rolls); plays != seat {
			return events.Move{}, fmt.Errorf("sdk: game %s: %w: roll %d is played by seat %d, not seat %d", g.id, ErrNotNow, n, plays, seat)
		}
		return events.Move{N: uint32(n), Play: play, Seat: seat}, nil
	}
	if len(g.st.RollRecords) == 0 {
		return events.Move{}, fmt.Errorf("sdk: game %s: %w: no roll revealed yet", g.id, ErrNotNow)
	}
	return events.Move{N: uint32(len(g.st.RollRecords) - 1), Play: play, Seat: seat}, nil
}

// rollSeats returns the seat that plays the last of rolls (-1 if nobody
// does: an opening tie, or the deciding opening roll under turkish-reroll)
// and the seat that rolls next (-1 while the opening is undecided: both).
// Once the opening has decided the starter, the played rolls alternate from
// the starter: under western the deciding opening roll is the starter's
// first play, under turkish-reroll the re-roll is (docs/SCHEMES.md §5).
func rollSeats(o dice.Opening, rolls []dice.Roll) (plays, next int) {
	starter, played := -1, 0
	plays = -1
	for _, r := range rolls {
		plays = -1
		switch r.Kind {
		case dice.KindOpening:
			if r.Dice[0] == r.Dice[1] {
				continue
			}
			starter = 0
			if r.Dice[1] > r.Dice[0] {
				starter = 1
			}
			if o == dice.OpeningTurkishReroll {
				continue
			}
		}
		if starter < 0 {
			continue // not a valid sequence; the state machine refuses it
		}
		plays = starter
		if played%2 == 1 {
			plays = 1 - starter
		}
		played++
	}
	switch {
	case plays >= 0:
		next = 1 - plays
	default:
		next = starter // the re-roll's seat, or -1 during the opening
	}
	return plays, next
}

// A PerGame is a game of one of the per-game schemes, a *TavlarenaGame or
// an *AnchoredGame, once its seed is fixed: the calls of play, for code that
// plays either scheme the same way.
type PerGame interface {
	ID() string
	State(ctx context.Context) (*events.Game, error)
	Roll(ctx context.Context) (Rolled, error)
	Move(ctx context.Context, seat int, play string) (events.Move, error)
	BoardEnd(ctx context.Context) (events.End, bool, error)
	End(ctx context.Context, end events.End) error
	Reveal(ctx context.Context) error
}

var (
	_ PerGame = (*TavlarenaGame)(nil)
	_ PerGame = (*AnchoredGame)(nil)
)

// A Rolled is one roll of a per-game scheme, as Roll returns it.
type Rolled struct {
	N    uint32    // the roll's number in the game, from 0
	Dice dice.Dice // in an opening roll, Dice[0] is seat 0's die, Dice[1] seat 1's
	Kind dice.Kind // opening, reroll or turn
	// Seat is the seat that plays this roll, or -1 if nobody does: an
	// opening tie (rolled again), or under turkish-reroll the deciding
	// opening roll (the starter rolls again).
	Seat int
	// Next is the seat that rolls next, or -1 while the opening is not
	// decided (both seats roll one die each).
	Next int
	// Starter is the seat that won the opening, or -1 while it is not
	// decided.
	Starter int
}

// roll logs the game's next roll: the dice the seed and the other inputs
// give for roll n, with the kind the sequence rules expect.
func (g *game) roll(ctx context.Context) (Rolled, error) {
	if err := g.acquire(ctx); err != nil {
		return Rolled{}, err
	}
	defer g.release()
	if g.roller == nil {
		what := "both contributions"
		if g.scheme == events.Anchored {
			what = "both tokens and the beacon"
		}
		return Rolled{}, fmt.Errorf("sdk: game %s: %w: no roll before %s are logged", g.id, ErrNotNow, what)
	}
	if err := g.flush(ctx); err != nil {
		return Rolled{}, err
	}
	if err := g.needReceipt(ctx); err != nil {
		return Rolled{}, err
	}
	seq := dice.NewSequence(g.st.Opening)
	for _, r := range g.st.Rolls {
		if err := seq.Next(r); err != nil {
			return Rolled{}, fmt.Errorf("sdk: game %s: replaying the rolls: %w", g.id, err)
		}
	}
	n := uint32(len(g.st.Rolls))
	r := events.Roll{N: n, Dice: g.roller.Roll(n), Kind: seq.WantKind()}
	if _, err := g.record(r); err != nil {
		return Rolled{}, err
	}
	plays, next := rollSeats(g.st.Opening, g.st.Rolls)
	out := Rolled{N: n, Dice: r.Dice, Kind: r.Kind, Seat: plays, Next: next, Starter: g.st.Starter()}
	return out, g.publishRecorded(ctx)
}

// reveal logs the seed: the game's last event, after its end.
func (g *game) reveal(ctx context.Context) error {
	if err := g.acquire(ctx); err != nil {
		return err
	}
	defer g.release()
	if err := g.emit(ctx, events.Reveal{Seed: *g.seed}); err != nil {
		return err
	}
	if g.st.Status != events.StatusVerified {
		// The SDK computed every value from the seed: a mismatch is a bug.
		return fmt.Errorf("sdk: game %s: the reveal left the game %s: %s", g.id, g.st.Status, g.st.Failure)
	}
	return nil
}
