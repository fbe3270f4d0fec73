package events

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zarlog/zarlog/events/dice"
)

// A Status is where a game is in its life (FORMATS.md §1.4).
type Status string

// Game statuses: open → ended → verified | failed. A per-roll-v1 match goes
// from open straight to verified at its end, or to failed at the first
// roll-reveal that does not match (and stays failed).
const (
	StatusOpen     Status = "open"
	StatusEnded    Status = "ended" // per-game schemes: end logged, seed not yet revealed
	StatusVerified Status = "verified"
	StatusFailed   Status = "failed"
)

// A BeaconVerifier verifies the beacons of one pinned drand chain offline.
// *drand.Chain (package events/drand) is one. Implementations must be safe
// for concurrent use and deterministic.
type BeaconVerifier interface {
	// Verify checks the beacon signature of round and returns its
	// randomness, SHA-256(sig).
	Verify(round uint64, sig []byte) (randomness [32]byte, err error)
	// RoundTime returns the time at which round is emitted.
	RoundTime(round uint64) time.Time
	// ExistedAt reports whether round had been emitted at time t.
	ExistedAt(round uint64, t time.Time) bool
}

// BeaconsOf adapts a chain lookup such as drand.ChainByHash to Env.Beacons.
func BeaconsOf[C BeaconVerifier](lookup func(chainHash [32]byte) (C, bool)) func([32]byte) (BeaconVerifier, bool) {
	return func(h [32]byte) (BeaconVerifier, bool) {
		c, ok := lookup(h)
		if !ok {
			return nil, false
		}
		return c, true
	}
}

// A MoveInput is what a MoveChecker is asked about: a move event and the
// game it belongs to (a FlowChecker is also asked about rolls and ends with
// the same input, Move zero).
type MoveInput struct {
	Scheme   Scheme
	Settings []byte    // canonical JSON of the commit's settings
	Position []byte    // the checker's position after the game's previous move (with a FlowChecker: roll or move); nil before the first
	Starter  int       // per-game schemes: the seat that won the opening, or -1 before (for a roll: by the rolls before it); -1 under per-roll-v1
	Roll     dice.Roll // the roll the move plays, or the roll checked (per-roll-v1: N is the roll's index in the match, Kind is "")
	Move     Move
	// Decoded is what a DecodingChecker returned beside Position, or nil
	// (the state was read back from storage, or the checker returned
	// none). A checker must use it only when it can tell that it is its
	// own decoding of exactly these bytes, and parse Position otherwise.
	Decoded any
}

// MaxPosition is the largest position, in bytes, a MoveChecker may return.
const MaxPosition = 4096

// A MoveChecker validates move events against the rules of the game's
// variant (the rules engine implements it). It must be pure and
// deterministic: the ledger replays a game's moves to rebuild its state.
type MoveChecker interface {
	// CheckMove returns the position after in.Move, or an error saying
	// which rule the move breaks. The position is stored in the game's
	// state (at most MaxPosition bytes) and passed back with the next move.
	// Apply keeps the returned slice itself, not a copy: the checker must
	// not modify it afterwards (nor one it got in MoveInput.Position).
	CheckMove(in MoveInput) (position []byte, err error)
}

// A FlowChecker is a MoveChecker that also follows the rolls and the end of
// games whose moves are logged (GameSettings.MovesLogged), so that Apply
// can require each played roll's move event before the next roll and
// before a finished end, and check the result against the final position.
// The rules engine's adapter (package rules/movecheck) is one. Like a
// MoveChecker it must be pure and deterministic. Apply calls its methods
// only for games whose moves are logged, and CheckMove for every move.
type FlowChecker interface {
	MoveChecker
	// CheckRoll returns the position after in.Roll (in.Move is zero;
	// per-roll-v1: at the roll's reveal; kept without a copy, as
	// CheckMove's) and whether the roll is played:
	// then its move event is owed (Game.MoveOwed) until it is logged. An
	// error refuses the roll with CodeNotAllowedNow (the game is already
	// over on the board).
	CheckRoll(in MoveInput) (position []byte, played bool, err error)
	// CheckEnd checks an end whose result is finished against the game's
	// position (in.Roll and in.Move are zero). An error refuses the end
	// with CodeWrongResult.
	CheckEnd(in MoveInput, end End) error
}

// A DecodingChecker is a FlowChecker that also returns each position it
// returns in a decoded form of its own, so that it need not parse, at the
// game's next roll, move or end, the text it has just written. Apply keeps
// that form beside Game.Position (it is not stored, nor counted in
// Game.Size: a state read back from storage has none) and passes it back in
// MoveInput.Decoded. The positions and the verdicts must be exactly those
// of CheckRoll and CheckMove, with or without in.Decoded.
type DecodingChecker interface {
	FlowChecker
	// CheckRollDecoded is CheckRoll, also returning the position decoded.
	CheckRollDecoded(in MoveInput) (position []byte, decoded any, played bool, err error)
	// CheckMoveDecoded is CheckMove, also returning the position decoded.
	CheckMoveDecoded(in MoveInput) (position []byte, decoded any, err error)
}

// An Env is what the ledger knows about an event beyond its bytes.
type Env struct {
	// Emitter is the emitter the transport authenticated (the NATS
	// subject's emitter token). It must equal the event's emitter.
	Emitter string
	// Now is the ledger's time when it appends the event. An anchored-v1
	// commit is refused if its anchor round existed at Now+ClockSkew or
	// its sealedAt is after Now+ClockSkew. The ledger must store its append
	// time of every commit and pass it again when it replays the log.
	Now time.Time
	// ClockSkew is how far the ledger's clock may be behind true time, in
	// the checks above: a round due within ClockSkew after Now counts as
	// already public, and a sealedAt up to ClockSkew after Now is accepted.
	// Negative means zero.
	ClockSkew time.Duration
	// SkipClockChecks skips the checks against Now. It is for auditors
	// replaying a log, who do not know when the ledger appended each
	// event; the ledger never sets it.
	SkipClockChecks bool
	// Index is the log index the event gets; it is recorded in
	// Game.Leaves.
	Index uint64
	// Beacons returns the verifier of a pinned drand chain by its chain
	// hash (see BeaconsOf). Nil means no chain is pinned: anchored-v1
	// commits are refused with CodeUnknownChain.
	Beacons func(chainHash [32]byte) (BeaconVerifier, bool)
	// Moves checks move events against the rules. Nil means moves are
	// checked only structurally: the move names a logged roll (per-roll-v1:
	// a revealed one) that is played (not an opening tie, nor the opening
	// roll under turkish-reroll), and moves come one per roll in roll order.
	// If it is a FlowChecker, games whose moves are logged also get their
	// rolls and their end checked, and a played roll's move is required
	// before the next roll and a finished end (FORMATS.md §1.4).
	Moves MoveChecker

	// grow is set by Next: the new state may append into spare capacity of
	// the old one's slices.
	grow bool
}

// A RollStage is how far a per-roll-v1 roll has got.
type RollStage uint8

// Roll stages.
const (
	RollCommitted RollStage = 1 + iota // roll-commit logged
	RollSeconded                       // roll-second logged
	RollRevealed                       // roll-reveal logged
)

// A RollRecord is one roll of a per-roll-v1 match: the evidence of
// DICE.md §5 for it.
type RollRecord struct {
	RollID     dice.UUID
	Commitment [32]byte
	Second     [32]byte   // from RollSeconded
	SecondFrom SecondFrom // from RollSeconded
	Seed       [32]byte   // from RollRevealed
	Dice       dice.Dice  // from RollRevealed: the dice as logged
	Stage      RollStage
}

// A FailCheck names the check a revealed seed failed.
type FailCheck string

// Failed checks.
const (
	FailCommitment  FailCheck = "commitment"  // tavlarena-v1 commitment, or a per-roll-v1 roll's commitment
	FailFingerprint FailCheck = "fingerprint" // anchored-v1 fingerprint
	FailRoll        FailCheck = "roll"        // a logged roll differs from the dice the seed gives
)

// A Failure is the first mismatch found when a seed was revealed.
type Failure struct {
	Seq        uint64    // the reveal or roll-reveal that showed it
	Check      FailCheck //
	N          uint32    // the roll: n (per-game) or the roll's index in the match (per-roll-v1)
	RollID     dice.UUID // per-roll-v1 only
	Committed  [32]byte  // FailCommitment, FailFingerprint: the committed value
	Recomputed [32]byte  // FailCommitment, FailFingerprint: the value the seed gives
	Logged     dice.Dice // FailRoll: the dice in the log
	Rolled     dice.Dice // FailRoll: the dice the seed gives
}

func (f *Failure) String() string {
	switch f.Check {
	case FailRoll:
		if f.RollID != (dice.UUID{}) {
			return fmt.Sprintf("roll %d (rollId %s): logged %v, the seed gives %v", f.N, f.RollID, f.Logged, f.Rolled)
		}
		return fmt.Sprintf("roll %d: logged %v, the seed gives %v", f.N, f.Logged, f.Rolled)
	case FailCommitment, FailFingerprint:
		what := string(f.Check)
		if f.RollID != (dice.UUID{}) {
			what = fmt.Sprintf("roll %d (rollId %s) commitment", f.N, f.RollID)
		}
		return fmt.Sprintf("%s: committed %x, the seed gives %x", what, f.Committed, f.Recomputed)
	}
	return fmt.Sprintf("check %q failed", f.Check)
}

// A Game is the state of one game (or per-roll-v1 match) after the events
// applied so far: everything the ledger needs to judge the next event and
// everything a proof needs. It is a value: Apply returns a new Game and never
// modifies the one it was given, and callers must not modify a Game either.
// Fields that do not belong to the game's scheme are zero.
type Game struct {
	ID          string
	Scheme      Scheme
	Emitter     string // the emitter that committed; only it may append
	Status      Status
	Closed      bool     // the game's last event is logged: nothing more is accepted
	Leaves      []uint64 // Leaves[seq] is the log index of event seq (Env.Index)
	CommittedAt time.Time
	Settings    []byte       // canonical JSON of the commit's settings
	Opening     dice.Opening // per-game schemes

	// tavlarena-v1
	Commitment    [32]byte
	Seats         [2]dice.UUID
	Contributed   [2]bool // also anchored-v1: the seat's token is logged
	Contributions [2][32]byte

	// anchored-v1
	MatchID     string
	GameNo      uint32
	Fingerprint [32]byte
	SealedAt    time.Time
	Anchor      AnchorRef
	Tokens      [2]string
	Beacon      *Beacon

	// per-game schemes
	Rolls []dice.Roll

	// per-roll-v1
	RollRecords []RollRecord // the revealed rolls, in order
	Pending     *RollRecord  // the roll committed but not yet revealed

	// MovesLogged is GameSettings.MovesLogged of the commit's settings.
	MovesLogged bool
	Moves       []Move
	Position    []byte // the MoveChecker's position after the last move (with a FlowChecker: or roll)
	// decoded is what a DecodingChecker returned beside Position (or nil),
	// set together with it by setPosition, and handed back to the checker
	// (MoveInput.Decoded). Not stored: a state read back has none.
	decoded any
	// cut is what a cut state (Cut) keeps of the history its slices leave
	// out at their front, or nil in a full state. Not stored, nor counted
	// in Size (MemSize counts it).
	cut *cutPart
	// MoveOwed reports whether the game's last roll is played and its move
	// event is not logged yet (games whose moves are logged, with a
	// FlowChecker only). No roll, and no finished end, may come until it is.
	MoveOwed bool

	End     *End
	Seed    *[32]byte // per-game schemes, once revealed
	Failure *Failure  // the first mismatch, when Status is StatusFailed
}

// NextSeq returns the seq of the game's next event.
func (g *Game) NextSeq() uint64 { return uint64(g.base().Leaves + len(g.Leaves)) }

// Starter returns the seat that won the opening, or -1 if no opening roll
// has decided it (always -1 under per-roll-v1).
func (g *Game) Starter() int {
	if !g.Scheme.PerGame() {
		return -1
	}
	s := g.sequence()
	return s.Starter()
}

// sequence returns the dice.Sequence after the game's rolls, which were
// checked when they were applied.
func (g *Game) sequence() dice.Sequence { return g.sequenceOf(g.Rolls) }

// appendTo appends e to a copy of s, or, for Next (grow), to s itself:
// into its spare capacity, beyond the elements any state holding s sees.
func appendTo[S ~[]E, E any](grow bool, s S, e E) S {
	if grow {
		return append(s, e)
	}
	return append(slices.Clip(s), e)
}

// Next is Apply for a caller that keeps only the latest state of a game, as
// the ledger's sequencer does: it returns what Apply returns, but may store
// the new leaf index, roll, move or revealed roll in spare capacity of g's
// slices, beyond their lengths, instead of copying the slices. g itself
// still never changes, and a refused event leaves nothing behind that
// matters; but two states made from the same g by successful calls of Next
// share that capacity, and the second overwrites the last element of the
// first. So after a successful Next, apply the game's next event to the
// state it returned, never to g again. A game's history then costs amortized
// constant time per event instead of time proportional to its length.
func Next(g *Game, ev *Event, env Env) (*Game, error) {
	env.grow = true
	return apply(nil, g, ev, env)
}

// NextInto is Next, but writes the new state into *dst instead of a new
// Game (unless ev is a commit) and returns it: for a caller that keeps only
// the latest state of a game and recycles a state that a later one has
// replaced and that nothing refers to any more, as the ledger's sequencer
// does. dst nil is Next; dst must not be g. After an error, *dst holds
// garbage.
func NextInto(dst, g *Game, ev *Event, env Env) (*Game, error) {
	if dst != nil && dst == g {
		return nil, errors.New("apply: NextInto's state is the one it applies to")
	}
	env.grow = true
	return apply(dst, g, ev, env)
}

// Apply returns the state of game g after ev, or an error if ev may not
// follow g's history; g is nil for a game with no events yet. It never
// modifies g. A *RejectError means the event is refused (FORMATS.md §1.5);
// any other error is a fault of the caller or of env (a state for another
// game, a MoveChecker that misbehaves) and says nothing about the event.
//
// A reveal or roll-reveal whose seed does not give the committed value or
// the logged dice is not refused: it is applied and the game's status
// becomes StatusFailed, with the first mismatch in Game.Failure.
//
// g may be a cut state (Game.Cut): then an error wrapping ErrCut means
// that the event's checks need history g leaves out, and says nothing
// about the event either; apply it to g.Uncut's full state.
//
// Apply does not see event ids: refusing an id already in the log is the
// ledger's job (CodeDuplicateID), and it must look the id up before calling
// Apply, since a repeated event would otherwise be refused as out of order.
func Apply(g *Game, ev *Event, env Env) (*Game, error) {
	return apply(nil, g, ev, env)
}

// apply is Apply, writing the new state into dst if it is not nil (and ev
// is not a commit).
func apply(dst, g *Game, ev *Event, env Env) (*Game, error) {
	if ev == nil || ev.Body == nil || ev.Body.Type() != ev.Type || !ev.Body.fits(ev.Scheme) {
		return nil, errors.New("apply: not a parsed event")
	}
	if env.Emitter != ev.Emitter {
		return nil, reject(CodeWrongEmitter, "emitter", "%q, but the event came from emitter %q", ev.Emitter, env.Emitter)
	}
	if ev.Type == TypeCommit {
		if g != nil {
			return nil, reject(CodeGameExists, "game", "game %q already exists (committed by %s, %d events)", g.ID, g.Emitter, g.NextSeq())
		}
		if ev.Seq != 0 {
			return nil, reject(CodeOutOfOrder, "seq", "%d, but a commit is the game's event 0", ev.Seq)
		}
		return commit(ev, env)
	}
	if g == nil {
		return nil, reject(CodeUnknownGame, "game", "no commit for game %q: a game's first event must be its commit", ev.Game)
	}
	if g.ID != ev.Game {
		return nil, fmt.Errorf("apply: the state of game %q was given for an event of game %q", g.ID, ev.Game)
	}
	if g.Emitter != ev.Emitter {
		return nil, reject(CodeForeignGame, "emitter", "%q, but game %q was committed by %q", ev.Emitter, g.ID, g.Emitter)
	}
	if g.Scheme != ev.Scheme {
		return nil, reject(CodeWrongScheme, "scheme", "%s, but game %q is %s", ev.Scheme, g.ID, g.Scheme)
	}
	if g.Closed {
		return nil, reject(CodeGameClosed, "type", "%s after the game's last event (seq %d)", ev.Type, g.NextSeq()-1)
	}
	if ev.Seq != g.NextSeq() {
		return nil, reject(CodeOutOfOrder, "seq", "%d, want %d", ev.Seq, g.NextSeq())
	}
	if g.Scheme.PerGame() && g.End != nil && ev.Type != TypeReveal {
		return nil, reject(CodeNotAllowedNow, "type", "%s after the end (seq %d): only the reveal may follow", ev.Type, g.NextSeq()-1)
	}
	ng := dst
	if ng == nil {
		ng = new(Game)
	}
	*ng = *g
	ng.Leaves = appendTo(env.grow, g.Leaves, env.Index)
	var err error
	switch b := ev.Body.(type) {
	case Contribution:
		err = ng.contribute(b.Seat, func() { ng.Contributions[b.Seat] = b.Contribution })
	case TokenContribution:
		if err = tokenInTime(ng, env); err == nil {
			err = ng.contribute(b.Seat, func() { ng.Tokens[b.Seat] = b.Token })
		}
	case Beacon:
		err = ng.beacon(b, env)
	case Roll:
		err = ng.roll(b, env)
	case Move:
		err = ng.move(b, env)
	case End:
		err = ng.end(b, env)
	case Reveal:
		err = ng.reveal(b, ev.Seq)
	case RollCommit:
		err = ng.rollCommit(b)
	case RollSecond:
		err = ng.rollSecond(b)
	case RollReveal:
		err = ng.rollReveal(b, ev.Seq, env)
	default:
		err = fmt.Errorf("apply: unexpected body %T", ev.Body)
	}
	if err != nil {
		return nil, err
	}
	return ng, nil
}

func commit(ev *Event, env Env) (*Game, error) {
	g := &Game{
		ID:          ev.Game,
		Scheme:      ev.Scheme,
		Emitter:     ev.Emitter,
		Status:      StatusOpen,
		Leaves:      []uint64{env.Index},
		CommittedAt: env.Now.UTC(),
	}
	switch b := ev.Body.(type) {
	case TavlarenaCommit:
		g.Commitment, g.Seats, g.Settings = b.Commitment, b.Seats, b.Settings
	case AnchoredCommit:
		if err := checkAnchor(b, env); err != nil {
			return nil, err
		}
		g.MatchID, g.GameNo, g.Fingerprint, g.SealedAt, g.Anchor, g.Settings = b.MatchID, b.GameNo, b.Fingerprint, b.SealedAt, b.Anchor, b.Settings
	case PerRollCommit:
		g.Settings = b.Settings
	}
	gs, err := ParseSettings(g.Settings)
	if err != nil {
		return nil, err
	}
	g.MovesLogged = gs.MovesLogged
	if g.Scheme.PerGame() {
		g.Opening = gs.Opening
	}
	return g, nil
}

// flow returns the FlowChecker that follows g, or nil: g's moves are not
// logged, or env has none.
func (g *Game) flow(env Env) FlowChecker {
	if !g.MovesLogged {
		return nil
	}
	fc, _ := env.Moves.(FlowChecker)
	return fc
}

// setPosition stores a checker's position and its decoded form (nil if it
// gave none).
func (g *Game) setPosition(pos []byte, decoded any) error {
	if len(pos) > MaxPosition {
		return fmt.Errorf("apply: the move checker returned a %d-byte position, the limit is %d", len(pos), MaxPosition)
	}
	g.Position, g.decoded = nil, nil
	if len(pos) > 0 {
		g.Position = pos[:len(pos):len(pos)] // kept, not copied (MoveChecker)
		g.decoded = decoded
	}
	return nil
}

// checkRoll asks g's FlowChecker, if any, about roll r, which the game's
// history allows: the position after it, and whether its move is owed.
func (g *Game) checkRoll(r dice.Roll, env Env) error {
	fc := g.flow(env)
	if fc == nil {
		return nil
	}
	in := MoveInput{Scheme: g.Scheme, Settings: g.Settings, Position: g.Position, Decoded: g.decoded, Starter: g.Starter(), Roll: r}
	var (
		pos     []byte
		decoded any
		played  bool
		err     error
	)
	if dc, ok := fc.(DecodingChecker); ok {
		pos, decoded, played, err = dc.CheckRollDecoded(in)
	} else {
		pos, played, err = fc.CheckRoll(in)
	}
	if err != nil {
		return &RejectError{Code: CodeNotAllowedNow, Field: "type", Msg: fmt.Sprintf("roll %d: %s", r.N, err.Error()), Err: err}
	}
	if err := g.setPosition(pos, decoded); err != nil {
		return err
	}
	g.MoveOwed = played
	return nil
}

// owed refuses what may not come while a played roll waits for its move.
func (g *Game) owed(what string) error {
	if !g.MoveOwed {
		return nil
	}
	return reject(CodeMoveOwed, "type", "%s, but roll %d is played and its move event is not logged yet: the moves of this game are logged (settings \"moves\": %q)",
		what, g.lastRoll(), MovesLogged)
}

// lastRoll returns the number of the game's last roll (per-roll-v1: its
// index in the match).
func (g *Game) lastRoll() uint32 {
	if g.Scheme.PerGame() {
		return g.Rolls[len(g.Rolls)-1].N
	}
	return uint32(g.nRecords() - 1)
}

func checkAnchor(b AnchoredCommit, env Env) error {
	var c BeaconVerifier
	ok := false
	if env.Beacons != nil {
		c, ok = env.Beacons(b.Anchor.Chain)
	}
	if !ok {
		return reject(CodeUnknownChain, "body.anchor.chain", "drand chain %x is not pinned by this log", b.Anchor.Chain)
	}
	if rt := c.RoundTime(b.Anchor.Round); !rt.After(b.SealedAt) {
		return reject(CodeRoundAlreadyExisted, "body.anchor.round", "round %d (at %s) is not later than sealedAt %s",
			b.Anchor.Round, rt.UTC().Format(TimeLayout), b.SealedAt.Format(TimeLayout))
	}
	if env.SkipClockChecks {
		return nil
	}
	if env.Now.IsZero() {
		return errors.New("apply anchored-v1 commit: Env.Now is zero")
	}
	limit := env.Now.Add(max(env.ClockSkew, 0))
	if b.SealedAt.After(limit) {
		return reject(CodeSealedInFuture, "body.sealedAt", "%s is after the ledger's time %s (+ %v allowed skew)",
			b.SealedAt.Format(TimeLayout), env.Now.UTC().Format(TimeLayout), max(env.ClockSkew, 0))
	}
	if c.ExistedAt(b.Anchor.Round, limit) {
		return reject(CodeRoundAlreadyExisted, "body.anchor.round", "round %d (at %s) already existed when the commit was appended at %s (+ %v margin)",
			b.Anchor.Round, c.RoundTime(b.Anchor.Round).UTC().Format(TimeLayout), env.Now.UTC().Format(TimeLayout), max(env.ClockSkew, 0))
	}
	return nil
}

// tokenInTime refuses an anchored-v1 token appended when the anchor round
// already existed (at Now+ClockSkew). A token chosen after the beacon is
// public would let a player who works with the server pick the dice: the
// server knows the seed, so the pair could try tokens until the rolls suit
// them. Logging both tokens before the round exists closes that gap.
func tokenInTime(g *Game, env Env) error {
	if env.SkipClockChecks {
		return nil
	}
	if env.Now.IsZero() {
		return errors.New("apply anchored-v1 token: Env.Now is zero")
	}
	var c BeaconVerifier
	ok := false
	if env.Beacons != nil {
		c, ok = env.Beacons(g.Anchor.Chain)
	}
	if !ok {
		return reject(CodeUnknownChain, "body.token", "drand chain %x of the commit is not pinned by this log", g.Anchor.Chain)
	}
	limit := env.Now.Add(max(env.ClockSkew, 0))
	if c.ExistedAt(g.Anchor.Round, limit) {
		return reject(CodeRoundAlreadyExisted, "body.token", "token appended at %s, but anchor round %d (at %s) was already public (+ %v margin): tokens must be logged before the beacon exists",
			env.Now.UTC().Format(TimeLayout), g.Anchor.Round, c.RoundTime(g.Anchor.Round).UTC().Format(TimeLayout), max(env.ClockSkew, 0))
	}
	return nil
}

func (g *Game) contribute(seat int, set func()) error {
	if seat != 0 && seat != 1 {
		return reject(CodeMalformed, "body.seat", "%d is not 0 or 1", seat)
	}
	if g.Contributed[seat] {
		return reject(CodeNotAllowedNow, "body.seat", "seat %d has already contributed", seat)
	}
	g.Contributed[seat] = true
	set()
	return nil
}

func (g *Game) beacon(b Beacon, env Env) error {
	if g.Beacon != nil {
		return reject(CodeNotAllowedNow, "type", "the game's beacon is already logged")
	}
	if b.Chain != g.Anchor.Chain {
		return reject(CodeBadBeacon, "body.chain", "%x, but the commit named chain %x", b.Chain, g.Anchor.Chain)
	}
	if b.Round != g.Anchor.Round {
		return reject(CodeBadBeacon, "body.round", "%d, but the commit named round %d", b.Round, g.Anchor.Round)
	}
	var c BeaconVerifier
	ok := false
	if env.Beacons != nil {
		c, ok = env.Beacons(b.Chain)
	}
	if !ok {
		return reject(CodeUnknownChain, "body.chain", "drand chain %x is not pinned by this log", b.Chain)
	}
	r, err := c.Verify(b.Round, b.Signature)
	if err != nil {
		return &RejectError{Code: CodeBadBeacon, Field: "body.signature", Msg: fmt.Sprintf("round %d: %v", b.Round, err), Err: err}
	}
	if r != b.Randomness {
		return reject(CodeBadBeacon, "body.randomness", "%x, but the signature gives %x", b.Randomness, r)
	}
	if rt := c.RoundTime(b.Round); !rt.After(g.SealedAt) {
		return reject(CodeRoundAlreadyExisted, "body.round", "round %d (at %s) is not later than sealedAt %s",
			b.Round, rt.UTC().Format(TimeLayout), g.SealedAt.Format(TimeLayout))
	}
	g.Beacon = &b
	return nil
}

func (g *Game) roll(b Roll, env Env) error {
	for seat, ok := range g.Contributed {
		if !ok {
			return reject(CodeNotAllowedNow, "type", "roll before both contributions (seat %d has not contributed)", seat)
		}
	}
	if g.Scheme == Anchored && g.Beacon == nil {
		return reject(CodeNotAllowedNow, "type", "roll before the beacon of round %d", g.Anchor.Round)
	}
	if g.MoveOwed { // owed's message is formatted only when it is needed
		if err := g.owed(fmt.Sprintf("roll %d", b.N)); err != nil {
			return err
		}
	}
	r := dice.Roll{N: b.N, Dice: b.Dice, Kind: b.Kind}
	seq := g.sequence()
	if err := seq.Next(r); err != nil {
		return &RejectError{Code: CodeBadSequence, Field: "body", Msg: err.Error(), Err: err}
	}
	if err := g.checkRoll(r, env); err != nil {
		return err
	}
	g.Rolls = appendTo(env.grow, g.Rolls, r)
	return nil
}

func (g *Game) move(b Move, env Env) error {
	in := MoveInput{Scheme: g.Scheme, Settings: g.Settings, Position: g.Position, Decoded: g.decoded, Starter: -1, Move: b}
	if g.Scheme.PerGame() {
		if uint64(b.N) >= uint64(g.nRolls()) {
			return reject(CodeNotAllowedNow, "body.n", "move of roll %d, but %d rolls are logged", b.N, g.nRolls())
		}
		if int(b.N) < g.base().Rolls {
			return fmt.Errorf("move of roll %d: %w", b.N, ErrCut)
		}
		r := g.Rolls[int(b.N)-g.base().Rolls]
		switch {
		case r.Kind == dice.KindOpening && r.Dice.IsDouble():
			return reject(CodeIllegalMove, "body.n", "roll %d is an opening tie (%v): it is rolled again, not played", b.N, r.Dice)
		case r.Kind == dice.KindOpening && g.Opening == dice.OpeningTurkishReroll:
			return reject(CodeIllegalMove, "body.n", "roll %d is the opening under turkish-reroll: the starter plays the re-roll", b.N)
		}
		in.Roll, in.Starter = r, g.Starter()
	} else {
		if uint64(b.N) >= uint64(g.nRecords()) {
			return reject(CodeNotAllowedNow, "body.n", "move of roll %d, but %d rolls are revealed", b.N, g.nRecords())
		}
		if int(b.N) < g.base().Records {
			return fmt.Errorf("move of roll %d: %w", b.N, ErrCut)
		}
		in.Roll = dice.Roll{N: b.N, Dice: g.RollRecords[int(b.N)-g.base().Records].Dice}
	}
	if k := len(g.Moves); g.nMoves() > 0 && b.N <= g.Moves[k-1].N { // a cut state holds the last move
		return reject(CodeIllegalMove, "body.n", "roll %d, but roll %d is already played: one move per roll, in roll order", b.N, g.Moves[k-1].N)
	}
	if env.Moves != nil {
		var (
			pos     []byte
			decoded any
			err     error
		)
		if dc, ok := env.Moves.(DecodingChecker); ok {
			pos, decoded, err = dc.CheckMoveDecoded(in)
		} else {
			pos, err = env.Moves.CheckMove(in)
		}
		if err != nil {
			return &RejectError{Code: CodeIllegalMove, Field: "body.play", Msg: err.Error(), Err: err}
		}
		if err := g.setPosition(pos, decoded); err != nil {
			return err
		}
	}
	g.MoveOwed = false
	g.Moves = appendTo(env.grow, g.Moves, b)
	return nil
}

func (g *Game) end(b End, env Env) error {
	if !g.Scheme.PerGame() && g.Pending != nil {
		return reject(CodeNotAllowedNow, "type", "end while roll %s is pending", g.Pending.RollID)
	}
	if b.Result == Finished {
		if err := g.owed("a finished end"); err != nil {
			return err
		}
		if fc := g.flow(env); fc != nil {
			in := MoveInput{Scheme: g.Scheme, Settings: g.Settings, Position: g.Position, Decoded: g.decoded, Starter: g.Starter()}
			if err := fc.CheckEnd(in, b); err != nil {
				return &RejectError{Code: CodeWrongResult, Field: "body", Msg: err.Error(), Err: err}
			}
		}
	}
	if g.Scheme.PerGame() {
		g.Status = StatusEnded
	} else {
		g.Closed = true
		if g.Status != StatusFailed {
			g.Status = StatusVerified
		}
	}
	g.End = &b
	return nil
}

func (g *Game) reveal(b Reveal, seq uint64) error {
	if g.End == nil {
		return reject(CodeNotAllowedNow, "type", "reveal before the end")
	}
	seed := b.Seed
	g.Seed = &seed
	g.Closed = true
	g.Status = StatusVerified
	if f := g.Recheck(seed); f != nil {
		f.Seq = seq
		g.Status, g.Failure = StatusFailed, f
	}
	return nil
}

// Recheck recomputes a per-game scheme's commitment (tavlarena-v1) or
// fingerprint (anchored-v1) from seed, then every logged roll, and returns
// the first mismatch, or nil if all agree. Failure.Seq is left zero. g may
// be a cut state (Cut), which keeps the dice of the rolls it leaves out.
func (g *Game) Recheck(seed [32]byte) *Failure {
	var roller dice.Roller
	switch g.Scheme {
	case Tavlarena:
		id, _ := parseUUID(g.ID)
		sh, _ := dice.SettingsHash(g.Settings)
		if c := dice.TavlarenaCommitment(id, sh, g.Seats, seed); c != g.Commitment {
			return &Failure{Check: FailCommitment, Committed: g.Commitment, Recomputed: c}
		}
		roller = dice.NewTavlarena(seed, id, g.Contributions)
	case Anchored:
		if fp := dice.Fingerprint(seed); fp != g.Fingerprint {
			return &Failure{Check: FailFingerprint, Committed: g.Fingerprint, Recomputed: fp}
		}
		a := dice.Anchor{Chain: g.Anchor.Chain, Round: g.Anchor.Round}
		if g.Beacon != nil {
			a.Randomness = g.Beacon.Randomness
		}
		roller = dice.NewAnchored(seed, dice.AnchoredBinding(g.MatchID, g.GameNo, g.Tokens, a))
	default:
		return nil
	}
	if g.cut != nil {
		for i, p := range g.cut.dice { // roll i (Cut)
			if d, logged := roller.Roll(uint32(i)), unpackDice(p); d != logged {
				return &Failure{Check: FailRoll, N: uint32(i), Logged: logged, Rolled: d}
			}
		}
	}
	for _, r := range g.Rolls {
		if d := roller.Roll(r.N); d != r.Dice {
			return &Failure{Check: FailRoll, N: r.N, Logged: r.Dice, Rolled: d}
		}
	}
	return nil
}

func (g *Game) rollCommit(b RollCommit) error {
	if g.Pending != nil {
		return reject(CodeNotAllowedNow, "type", "roll-commit while roll %s is pending", g.Pending.RollID)
	}
	if g.MoveOwed {
		if err := g.owed(fmt.Sprintf("roll-commit of roll %d", g.nRecords())); err != nil {
			return err
		}
	}
	if g.cut != nil && slices.Contains(g.cut.ids, idKey(b.RollID)) {
		return fmt.Errorf("roll-commit of roll id %s: %w", b.RollID, ErrCut) // which roll, if any, has it
	}
	for i, r := range g.RollRecords {
		if r.RollID == b.RollID {
			return reject(CodeDuplicateRollID, "body.rollId", "%s is already roll %d of this match", b.RollID, g.base().Records+i)
		}
	}
	if g.nRecords() >= maxU32 {
		return reject(CodeNotAllowedNow, "type", "the match has %d rolls, the limit", g.nRecords())
	}
	g.Pending = &RollRecord{RollID: b.RollID, Commitment: b.Commitment, Stage: RollCommitted}
	return nil
}

// pending returns a copy of the pending roll if it is the one named and
// at stage want.
func (g *Game) pending(typ Type, id dice.UUID, want RollStage) (RollRecord, error) {
	if g.Pending == nil {
		return RollRecord{}, reject(CodeNotAllowedNow, "type", "%s, but no roll is pending", typ)
	}
	if g.Pending.RollID != id {
		return RollRecord{}, reject(CodeWrongRoll, "body.rollId", "%s, but the pending roll is %s", id, g.Pending.RollID)
	}
	if g.Pending.Stage != want {
		if want == RollCommitted {
			return RollRecord{}, reject(CodeNotAllowedNow, "type", "roll %s already has its second number", id)
		}
		return RollRecord{}, reject(CodeNotAllowedNow, "type", "roll %s has no second number yet", id)
	}
	return *g.Pending, nil
}

func (g *Game) rollSecond(b RollSecond) error {
	r, err := g.pending(TypeRollSecond, b.RollID, RollCommitted)
	if err != nil {
		return err
	}
	r.Second, r.SecondFrom, r.Stage = b.Second, b.SecondFrom, RollSeconded
	g.Pending = &r
	return nil
}

func (g *Game) rollReveal(b RollReveal, seq uint64, env Env) error {
	r, err := g.pending(TypeRollReveal, b.RollID, RollSeconded)
	if err != nil {
		return err
	}
	r.Seed, r.Dice, r.Stage = b.Seed, b.Dice, RollRevealed
	n := uint32(g.nRecords())
	if err := g.checkRoll(dice.Roll{N: n, Dice: r.Dice}, env); err != nil {
		return err
	}
	g.RollRecords = appendTo(env.grow, g.RollRecords, r)
	g.Pending = nil
	if f := RecheckRoll(g.ID, n, r); f != nil && g.Failure == nil {
		f.Seq = seq
		g.Status, g.Failure = StatusFailed, f
	}
	return nil
}

// RecheckRoll recomputes revealed per-roll-v1 roll n of match matchID (a
// UUID): its commitment from its seed, then its dice. It returns the
// mismatch, or nil. Failure.Seq is left zero.
func RecheckRoll(matchID string, n uint32, r RollRecord) *Failure {
	if c := dice.Fingerprint(r.Seed); c != r.Commitment {
		return &Failure{Check: FailCommitment, N: n, RollID: r.RollID, Committed: r.Commitment, Recomputed: c}
	}
	m, _ := parseUUID(matchID)
	if d := dice.NewPerRoll(r.Seed, m, r.RollID, r.Second).Roll(0); d != r.Dice {
		return &Failure{Check: FailRoll, N: n, RollID: r.RollID, Logged: r.Dice, Rolled: d}
	}
	return nil
}
