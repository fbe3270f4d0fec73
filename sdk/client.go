// This file is the transport: a Client publishes event bytes on its
// emitter's subject (wire.Subjects.Events), without a Nats-Msg-Id (see
// message), retries until JetStream acknowledges (also across a NATS server restart),
// keeps a bounded window of messages in flight, packs events that queue up
// into multi-event messages (package wire), and waits for receipts. It
// neither builds nor checks events. docs/NATS.md says what each
// acknowledgement promises.

package sdk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/wire"
)

// DefaultWindow is Config.Window's default: how many NATS messages may
// await their JetStream ack at once.
const DefaultWindow = 32

// Config configures a Client. Every field's zero value is documented.
type Config struct {
	// Emitter is this backend's emitter id (wire.CheckEmitter). Required.
	Emitter string
	// Subjects is the subject scheme. Zero means root "zarlog".
	Subjects wire.Subjects
	// Window is how many NATS messages may await their JetStream ack at
	// once. Zero means 32. A small window makes events queue, and be packed
	// (MaxBatchEvents), sooner: fewer, larger messages cost the server much
	// less per event (docs/NATS.md §9).
	Window int
	// PartialFlights is how many messages may await their JetStream ack
	// when a message that is not full (MaxBatchEvents, MaxBatchBytes) is
	// ready to go: while that many are in flight, it waits, and packs the
	// events that queue meanwhile, until one of them is acknowledged or it
	// fills up (group commit, or Nagle's rule without a timer). So an event
	// published while nothing is in flight goes at once, alone; as the
	// rate grows, each message carries what queued during the previous
	// one's round trip, and an event waits at most that round trip more.
	// Full messages go as the Window allows. Zero (the default) or
	// negative means Window: every message goes as soon as the Window
	// allows (at a human pace nearly every event in a message of its own,
	// whose way through NATS costs as much as a full one's). 1 is group
	// commit; measured against the default it did not pay on a loaded
	// machine (docs/BENCHMARKS.md, issue 31, "third session").
	PartialFlights int
	// MaxBatchEvents is the most events packed into one NATS message when
	// events queue up faster than the window drains, or arrive while a
	// message lingers (Linger); 1 sends every event alone. Zero means 256: with a game's queued events
	// going together (Event.OrderKey), messages fill up under load, and
	// fewer, larger ones cost NATS less per event (docs/BENCHMARKS.md,
	// issue 17, fifth round).
	MaxBatchEvents int
	// MaxBatchBytes bounds a packed message's payload. Zero means 256 KiB;
	// it must stay below the stream's max message size (1 MiB by default).
	MaxBatchBytes int
	// Linger bounds how long a message that is not full (MaxBatchEvents,
	// MaxBatchBytes) waits for more events to pack when the queue runs dry,
	// even with nothing in flight; it waits only while the emitter's
	// recent rate predicts another event within a quarter of Linger and
	// before Linger has passed since its first event was taken for
	// sending (the events published in about the last 100 ms,
	// exponentially weighted, times the lesser of what is left and
	// Linger/4, at least one), and never Linger/4 past the last event
	// published. An event counts when the application publishes it
	// (PublishAsync accepts it), not when it is sent: one that waits for
	// the Window or behind its OrderKey's earlier event counts from its
	// publishing, and a copy the Client publishes again does not count.
	// So a quiet emitter's lone event goes at once (below about 4/Linger
	// events a second, 200 at the default, a message never waits: a
	// steady stream's count just after an event reaches what it takes at
	// 195 a second), and a busy emitter's
	// message waits at most Linger, going once what is left of it is
	// shorter than the expected gap to the next event, once the next
	// event is Linger/4 late, or once it is full. An event waits at most
	// Linger more than it would without. At a human pace, a few hundred to
	// a few thousand events a second an emitter, nearly every event would
	// otherwise go in a message of its own, whose way through NATS, the
	// stream's store, the acks, the deliveries, costs as much as a full
	// message's (docs/BENCHMARKS.md, issue 31, "The SDK's adaptive
	// linger", and "the per-message and per-receipt costs"). Zero means
	// DefaultLinger (20 ms); negative, never wait: a message goes as soon
	// as the Window (and PartialFlights) allows.
	Linger time.Duration
	// MaxQueued bounds events accepted and not yet acknowledged;
	// PublishAsync blocks when it is reached. Zero means 65536.
	MaxQueued int
	// AckTimeout is how long one attempt waits for JetStream's ack before
	// the message is sent again. Zero means 5 s.
	AckTimeout time.Duration
	// RetryMin and RetryMax bound the backoff between attempts. Zero means
	// 25 ms and 2 s.
	RetryMin, RetryMax time.Duration
	// OnRetry, if not nil, is called (from the Client's goroutines) with the
	// error of each failed attempt, for logs and metrics.
	OnRetry func(err error)
	// FollowInterval is how often the Client asks the ledger about the
	// events it holds: every event is held from PublishAsync until the
	// ledger reports it logged (a signed checkpoint covers it) or refused,
	// and published again if the stream lost it after acknowledging it
	// (follow.go; docs/NATS.md §5, "Resending"). Zero means
	// DefaultFollowInterval (500 ms): following is on by default, so that
	// an event nobody asks a receipt for is published again too if the
	// stream lost it. Negative turns following off: the Client then
	// forgets each event at its acknowledgement, and only Receipt
	// publishes a lost event again. Its cost is a request per
	// FollowInterval about the messages due (up to 256 each, answered
	// from the ingest's records of the messages it decided), and, for the
	// events of a message the ledger cannot confirm whole (a refusal, a
	// loss), a status request about them and one lookup per event
	// (docs/NATS.md §5, "Following per message"; docs/BENCHMARKS.md gives
	// the CPU per event with it on and off).
	FollowInterval time.Duration
	// FollowAfter is how long after its acknowledgement an event is first
	// asked about (by then a checkpoint covers it, unless the ledger is
	// behind), and the least time between two resends of one event (it
	// doubles with each resend, up to a minute). Zero means 1 s.
	FollowAfter time.Duration
	// MaxHeld and MaxHeldBytes bound the events held and their bytes:
	// PublishAsync waits when either is reached (one event is always
	// held), so a ledger that stops answering stops its publishers here,
	// not in their memory. Zero means 1,048,576 events and 256 MiB.
	// MaxHeldBytes counts the events' bytes; each held event also costs
	// 448 B of the Client's own records (its entry and held record, made
	// as one object: heldEntry) and keeps the context it was published
	// with until it is logged, so at the default MaxHeld a ledger that
	// stops answering holds up to ~450 MiB besides MaxHeldBytes.
	MaxHeld      int
	MaxHeldBytes int
	// OrderSettle is how long an out-of-order or unknown-game refusal
	// must stand before the Client takes it as final, once it refused a
	// copy published after every earlier event of the order key was
	// logged: a primary fenced by a takeover answers from its own state
	// until it learns that it lost the log (docs/NATS.md §5). Zero means
	// 10 s.
	OrderSettle time.Duration
	// OnResend, if not nil, is called with the id of every event the
	// Client publishes again (for logs and metrics).
	OnResend func(id string)
	// OnRejected, if not nil, is called once for every held event that the
	// ledger reports refused (a game's calls learn of refusals through
	// their receipts too).
	OnRejected func(*RejectedError)
	// LogKey is the log's verifier key (merkle.NewVerifier of the vkey
	// `zarlog serve` prints): every receipt's checkpoint signature is
	// checked against it (Receipt.SignatureChecked). Nil means the Client
	// still checks every receipt's inclusion proof of the event's bytes
	// against its checkpoint's root, but not the signature on that root:
	// check such a receipt with CheckReceipt before relying on it.
	LogKey note.Verifier
}

func (c Config) withDefaults() Config {
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	switch {
	case c.Linger == 0:
		c.Linger = DefaultLinger
	case c.Linger < 0:
		c.Linger = 0 // never wait
	}
	if c.PartialFlights <= 0 || c.PartialFlights > c.Window {
		c.PartialFlights = c.Window
	}
	if c.MaxBatchEvents == 0 {
		c.MaxBatchEvents = 256
	}
	if c.MaxBatchBytes == 0 {
		c.MaxBatchBytes = 256 << 10
	}
	if c.MaxQueued == 0 {
		c.MaxQueued = 65536
	}
	if c.AckTimeout == 0 {
		c.AckTimeout = 5 * time.Second
	}
	if c.RetryMin == 0 {
		c.RetryMin = 25 * time.Millisecond
	}
	if c.RetryMax == 0 {
		c.RetryMax = 2 * time.Second
	}
	if c.FollowInterval == 0 {
		c.FollowInterval = DefaultFollowInterval
	}
	if c.FollowAfter == 0 {
		c.FollowAfter = time.Second
	}
	if c.MaxHeld == 0 {
		c.MaxHeld = 1 << 20
	}
	if c.OrderSettle == 0 {
		c.OrderSettle = 10 * time.Second
	}
	if c.MaxHeldBytes == 0 {
		c.MaxHeldBytes = 256 << 20
	}
	return c
}

// DefaultFollowInterval is Config.FollowInterval's default: the Client
// follows its events unless told not to.
const DefaultFollowInterval = 500 * time.Millisecond

// Errors callers can branch on.
var (
	// ErrInvalidEvent: the event cannot be sent (bad id, empty, too large,
	// or contains a newline).
	ErrInvalidEvent = errors.New("invalid event")
	// ErrClosed: the Client was closed before the event was acknowledged;
	// it may or may not have reached the stream (publishing it again is
	// safe: the ledger deduplicates it by id).
	ErrClosed = errors.New("sdk client closed")
	// ErrPredecessor: an earlier event with the same OrderKey failed, so
	// this one was not sent (sending it could put it before its
	// predecessor).
	ErrPredecessor = errors.New("an earlier event with the same order key failed")
	// ErrBacklog: the log's stream refused the message because its backlog
	// is at its bound (docs/NATS.md §6 "Backpressure"): the ledger is behind
	// the publishers. The event is not in the stream; publish it again
	// later (a game's next call, or Flush, does), or shed load. It comes
	// wrapped in a *PublishError whose message names the limit.
	ErrBacklog = errors.New("the log's backlog is full")
)

// A PublishError is a permanent refusal by NATS or JetStream (the message is
// too large, for example). Transient failures are retried, never returned.
type PublishError struct{ Err error }

func (e *PublishError) Error() string { return "publishing: " + e.Err.Error() }
func (e *PublishError) Unwrap() error { return e.Err }

// An Event is one event to publish.
type Event struct {
	// ID is the event's id (docs/FORMATS.md §1.1), by which the ledger
	// deduplicates.
	ID string
	// Data is the event's canonical bytes. The Client keeps the slice until
	// the event is acknowledged; do not modify it meanwhile.
	Data []byte
	// OrderKey, if not empty, orders events: an event is sent only after
	// JetStream acknowledged the previous event accepted with the same key,
	// or after it in the same message (a message is stored whole or not at
	// all). Use the game id, so that a retry can never put a game's events
	// out of order. The events of a key that queued up behind an
	// unacknowledged one go together once it is acknowledged, as many as
	// one message takes; events with different keys (or none) travel
	// concurrently.
	OrderKey string
}

// An Ack is JetStream's acknowledgement of the message that carried an
// event. It means the stream has the event (on one server: written to its
// file store; on a replicated stream: on a quorum), not that the ledger
// does: for that, ask for a Receipt.
type Ack struct {
	Stream string
	// Seq is the stream sequence of the message carrying the event.
	Seq uint64
	// Duplicate reports that JetStream already had that message (same
	// Nats-Msg-Id within its duplicate window). The Client sets no
	// Nats-Msg-Id, so it is always false for its own messages.
	Duplicate bool
	// Events is the number of events in that message.
	Events int
}

// A Pending is the future result of PublishAsync.
//
// Its channel (Done) is made only when someone asks for it before the
// result is known: a Pending whose result is known by then gives a channel
// closed already, shared by all, so an event whose caller looks only after
// its acknowledgement (a message's events are acknowledged together) costs
// no channel (docs/BENCHMARKS.md, issue 31, tenth session).
type Pending struct {
	mu    sync.Mutex
	done  chan struct{} // made by Done before the result is known, closed when it is
	known bool          // the result is set
	ack   Ack
	err   error
}

// closedDone is the channel Done returns once the result is known (it is
// closed before anyone can receive from it, and never written).
var closedDone = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// Done is closed when the result is known.
func (p *Pending) Done() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		if p.known {
			return closedDone
		}
		p.done = make(chan struct{})
	}
	return p.done
}

// Result returns the result; call it after Done is closed.
func (p *Pending) Result() (Ack, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ack, p.err
}

// Wait waits for the result or the end of ctx. Ending ctx does not stop the
// publication (the ctx given to PublishAsync does).
func (p *Pending) Wait(ctx context.Context) (Ack, error) {
	select {
	case <-p.Done():
		return p.Result()
	case <-ctx.Done():
		return Ack{}, ctx.Err()
	}
}

// settle sets the result and closes the channel if Done made one. It is
// called once.
func (p *Pending) settle(ack Ack, err error) {
	p.mu.Lock()
	p.ack, p.err, p.known = ack, err, true
	ch := p.done
	p.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// A Client publishes one emitter's events. It is safe for concurrent use.
type Client struct {
	cfg Config
	nc  *nats.Conn
	js  jetstream.JetStream
	// subject is the emitter's events subject (wire.Subjects.Events),
	// made once.
	subject string

	admit  chan struct{} // one token per accepted, unresolved event
	queue  chan *entry   // ready to send; capacity MaxQueued, so sends never block
	window chan struct{} // one token per NATS message in flight
	landed chan struct{} // signalled (capacity 1) when a flight ends
	closed chan struct{}
	wg     sync.WaitGroup
	// life ends when the Client is closed: the context of the copies the
	// follower publishes.
	life context.Context
	stop context.CancelFunc
	// follow holds the events until the ledger has them (follow.go).
	follow *follower
	// receiptV is the receipt protocol version the Client asks with:
	// wire.ReceiptBatchVersion, or wire.ReceiptStateVersion once a ledger
	// that predates it refused a batched request, or
	// wire.ReceiptProofVersion once a ledger of that version refused
	// version 3.
	receiptV atomic.Int32
	// batcher queues the receipt requests of version
	// wire.ReceiptBatchVersion (receipts.go).
	batcher receiptBatcher
	// notes are the checkpoint notes whose signature the Client checked
	// (check).
	notes checkedNotes

	// reconnected is closed (and replaced) each time the connection has
	// reconnected: a receipt request in flight then is asked again at once
	// (the server that held it may have died with it).
	reconnMu    sync.Mutex
	reconnected chan struct{}

	mu        sync.Mutex
	tails     map[string]*entry // last unresolved event per order key
	unsettled int               // accepted, unresolved events
	idle      []chan struct{}   // Flush waiters
	isClosed  bool
	// linger is the adaptive linger's record of the emitter's events
	// (Config.Linger): each counted when the application publishes it
	// (publish), whether it goes at once, waits for the Window, or is
	// parked behind its order key's earlier event; the sender asks it
	// whether a message waits.
	linger lingerer
	// nap is how the sender, while a message lingers, sleeps through the
	// events queued meanwhile instead of waking for each (enqueue, napper).
	nap napper
}

// A napper lets the sender sleep while a message lingers without waking for
// every event queued meanwhile (at a human pace, every event would cost the
// emitter a goroutine hand-off, a timer's reset and a decision): the
// queue's events and bytes are counted as they are queued (enqueue) and
// taken (took), and a sleeping sender is kicked only once they could fill
// the message it packs (wantEvents, wantBytes: what the message has room
// for; zero while the sender is not sleeping).
type napper struct {
	events, bytes         atomic.Int64 // queued: events, and their size in a message (each with its separator)
	wantEvents, wantBytes atomic.Int64
	kick                  chan struct{} // capacity 1
	// closedWakes counts the naps the Client's closing ended (one at
	// most: the sender then sends what it packed; TestCloseWhileNapping).
	closedWakes atomic.Int64
}

// enqueue queues the run headed by e for the sender and kicks the sender
// if it sleeps on a message that the queue could now fill. It never
// blocks (the queue's capacity is MaxQueued); the caller holds mu, so that
// Close drains what was queued.
func (c *Client) enqueue(e *entry) {
	n, size := runSize(e)
	c.nap.events.Add(int64(n))
	c.nap.bytes.Add(int64(1 + size))
	c.queue <- e
	c.nap.maybeKick()
}

// took counts the run headed by e out of the queue (the sender took it).
func (c *Client) took(e *entry) {
	n, size := runSize(e)
	c.nap.events.Add(-int64(n))
	c.nap.bytes.Add(-int64(1 + size))
}

// maybeKick wakes the sleeping sender if the queue could fill its message.
func (n *napper) maybeKick() {
	we := n.wantEvents.Load()
	if we == 0 || n.events.Load() < we && n.bytes.Load() < n.wantBytes.Load() {
		return
	}
	select {
	case n.kick <- struct{}{}:
	default: // kicked already
	}
}

// An entry is one accepted event.
type entry struct {
	// p is the event's Pending, which PublishAsync returns: in the entry,
	// one allocation for both.
	p    Pending
	ev   Event
	ctx  context.Context
	next *entry // successor with the same order key, parked (guarded by Client.mu)
	// run is the next member of the run e belongs to (release): events of
	// one order key queued together, to go in one message in order. Set
	// before the run is queued, then only read (by the sender).
	run *entry
	// settled is set when p is (guarded by Client.mu): a flag, not a
	// receive on p.done, which would touch the channel once more.
	settled bool
	// h is the event's held record (nil when following is off).
	h *held
	// tail is set while e is its order key's last unresolved event
	// (Client.tails names it; guarded by Client.mu).
	tail bool
}

// A heldEntry is a new event's entry and the held record the follower
// keeps of it (Client.hold), made in one allocation: the record outlives
// the entry (until the ledger reports the event logged), and the two are
// made for every event published while following is on.
type heldEntry struct {
	entry
	held held
}

// New returns a Client publishing on nc as cfg.Emitter. nc should reconnect
// forever and use the inbox prefix "_INBOX.<emitter>" (Dial does both).
// Close the Client before nc.
func New(nc *nats.Conn, cfg Config) (*Client, error) {
	if err := wire.CheckEmitter(cfg.Emitter); err != nil {
		return nil, fmt.Errorf("sdk: %w", err)
	}
	if err := cfg.Subjects.Check(); err != nil {
		return nil, fmt.Errorf("sdk: %w", err)
	}
	cfg = cfg.withDefaults()
	if cfg.Window < 1 || cfg.MaxBatchEvents < 1 || cfg.MaxBatchEvents > wire.MaxBatchEvents ||
		cfg.MaxQueued < 1 || cfg.MaxBatchBytes < wire.MaxEventSize {
		return nil, fmt.Errorf("sdk: Window %d, MaxBatchEvents %d (≤ %d), MaxQueued %d must be positive and MaxBatchBytes %d ≥ %d",
			cfg.Window, cfg.MaxBatchEvents, wire.MaxBatchEvents, cfg.MaxQueued, cfg.MaxBatchBytes, wire.MaxEventSize)
	}
	if cfg.FollowAfter < 0 || cfg.MaxHeld < 1 || cfg.MaxHeldBytes < 1 {
		return nil, fmt.Errorf("sdk: FollowAfter %v, MaxHeld %d and MaxHeldBytes %d must be positive", cfg.FollowAfter, cfg.MaxHeld, cfg.MaxHeldBytes)
	}
	js, err := jetstream.New(nc,
		jetstream.WithPublishAsyncTimeout(cfg.AckTimeout),
		jetstream.WithPublishAsyncMaxPending(cfg.Window+1))
	if err != nil {
		return nil, fmt.Errorf("sdk: %w", err)
	}
	c := &Client{
		cfg:     cfg,
		nc:      nc,
		js:      js,
		subject: cfg.Subjects.Events(cfg.Emitter),
		admit:   make(chan struct{}, cfg.MaxQueued),
		queue:   make(chan *entry, cfg.MaxQueued),
		window:  make(chan struct{}, cfg.Window),
		landed:  make(chan struct{}, 1),
		closed:  make(chan struct{}),
		tails:   map[string]*entry{},
		linger:  lingerer{bound: cfg.Linger},
		nap:     napper{kick: make(chan struct{}, 1)},

		reconnected: make(chan struct{}),
		follow:      newFollower(cfg.FollowInterval < 0),
	}
	c.life, c.stop = context.WithCancel(context.Background())
	c.receiptV.Store(wire.ReceiptBatchVersion)
	c.wg.Go(c.sender)
	c.wg.Go(c.watchReconnects)
	if cfg.FollowInterval > 0 {
		c.wg.Go(c.followLoop)
	}
	return c, nil
}

// reconnectPoll is how often the Client looks at the connection's
// reconnect count.
const reconnectPoll = 50 * time.Millisecond

// watchReconnects closes c.reconnected each time nc's reconnect count
// grows. (Polling, because nc's reconnect handler belongs to its owner.)
func (c *Client) watchReconnects() {
	t := time.NewTicker(reconnectPoll)
	defer t.Stop()
	last := c.nc.Stats().Reconnects
	for {
		select {
		case <-c.closed:
			return
		case <-t.C:
		}
		if n := c.nc.Stats().Reconnects; n != last {
			last = n
			c.reconnMu.Lock()
			close(c.reconnected)
			c.reconnected = make(chan struct{})
			c.reconnMu.Unlock()
		}
	}
}

// reconnects returns a channel closed at the connection's next reconnect.
func (c *Client) reconnects() <-chan struct{} {
	c.reconnMu.Lock()
	defer c.reconnMu.Unlock()
	return c.reconnected
}

// Dial connects to NATS for emitter: it reconnects forever, buffers
// publishes while disconnected, and uses the inbox prefix
// "_INBOX.<emitter>" that the permissions of docs/NATS.md allow. opts are
// applied last (credentials, TLS).
func Dial(url, emitter string, opts ...nats.Option) (*nats.Conn, error) {
	if err := wire.CheckEmitter(emitter); err != nil {
		return nil, fmt.Errorf("sdk: %w", err)
	}
	o := []nats.Option{
		nats.Name("zarlog-emitter-" + emitter),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(100 * time.Millisecond),
		nats.CustomInboxPrefix(wire.InboxPrefix(emitter)),
	}
	nc, err := nats.Connect(url, append(o, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("sdk: connecting to NATS: %w", err)
	}
	return nc, nil
}

// Publish publishes ev and waits until JetStream acknowledges it, retrying
// as long as ctx allows. An error after ctx ended means the outcome is
// unknown; publishing the same event again is safe.
func (c *Client) Publish(ctx context.Context, ev Event) (Ack, error) {
	p, err := c.PublishAsync(ctx, ev)
	if err != nil {
		return Ack{}, err
	}
	return p.Wait(ctx)
}

// PublishAsync accepts ev for publication and returns at once, unless
// MaxQueued events are already unacknowledged, or MaxHeld events (or
// MaxHeldBytes) are held without the ledger having reported them logged:
// then it waits for room or the end of ctx. The event is retried until
// JetStream acknowledges it, the Client is closed, or ctx ends: then the
// Pending fails with ctx's error (once the Client notices: before the event
// is sent, or after the attempt in flight, within AckTimeout) and the
// outcome is unknown. Once acknowledged, the event is held until the ledger
// reports it logged or refused, and published again if the stream loses it
// (unless a negative Config.FollowInterval turned following off).
func (c *Client) PublishAsync(ctx context.Context, ev Event) (*Pending, error) {
	if err := wire.CheckEventID(ev.ID); err != nil {
		return nil, fmt.Errorf("sdk: %w: %w", ErrInvalidEvent, err)
	}
	if err := wire.CheckBatchable(ev.Data); err != nil {
		return nil, fmt.Errorf("sdk: %w: event %s: %w", ErrInvalidEvent, ev.ID, err)
	}
	if err := c.reserve(ctx, len(ev.Data)); err != nil {
		return nil, err
	}
	return c.publish(ctx, ev, nil)
}

// publish accepts a checked event: a new one (h nil: it is held now,
// unless following is off), or a copy of the held event h, which the
// caller has counted in h.copies.
func (c *Client) publish(ctx context.Context, ev Event, h *held) (*Pending, error) {
	select {
	case c.admit <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, ErrClosed
	}
	var e *entry
	var spare *held // the record hold fills if it holds ev anew
	if h == nil && c.cfg.FollowInterval > 0 {
		he := &heldEntry{}
		e, spare = &he.entry, &he.held
	} else {
		e = &entry{}
	}
	e.ev, e.ctx, e.h = ev, ctx, h
	c.mu.Lock()
	if c.isClosed {
		c.mu.Unlock()
		<-c.admit
		return nil, ErrClosed
	}
	if h == nil {
		e.h = c.hold(ev, spare)
		if c.linger.bound > 0 {
			c.linger.arrived(time.Now(), 1) // published now; a copy (h) is not
		}
	}
	c.unsettled++
	if k := ev.OrderKey; k != "" {
		if t := c.tails[k]; t != nil {
			t.next = e // parked until t is acknowledged
			t.tail, e.tail = false, true
			c.tails[k] = e
			c.mu.Unlock()
			return &e.p, nil
		}
		c.tails[k] = e
		e.tail = true
	}
	c.enqueue(e) // never blocks (capacity MaxQueued); under mu so Close drains it
	c.mu.Unlock()
	return &e.p, nil
}

// resolve settles e and releases or fails its parked successor.
func (c *Client) resolve(e *entry, ack Ack, err error) {
	c.mu.Lock()
	settled, next := c.settleLocked(e, ack, err, nil)
	c.mu.Unlock()
	if !settled {
		return
	}
	<-c.admit
	if next != nil {
		c.failSuccessor(next, e, err)
	}
}

// acknowledged settles the events of one acknowledged message: resolve for
// each, under one lock.
//
// m, if not nil, is the message by which the held events are followed
// from now on: attached in the same hold of the follower's lock as each
// acknowledgement (copyAcked), so that no round sees an event acknowledged
// and not yet followed by its message (and asks about it by id).
func (c *Client) acknowledged(items []*entry, ack Ack, m *sentMsg) {
	var failed []*entry // successors failed because the Client closed
	released := 0
	c.mu.Lock()
	for _, e := range items {
		settled, next := c.settleLocked(e, ack, nil, m)
		if settled {
			released++
		}
		if next != nil {
			failed = append(failed, e, next)
		}
	}
	c.mu.Unlock()
	for range released {
		<-c.admit
	}
	for i := 0; i < len(failed); i += 2 {
		c.failSuccessor(failed[i+1], failed[i], ErrClosed)
	}
}

// settleLocked settles e, unless it is settled already, and releases its
// parked successor to the queue; it returns whether it settled e and the
// successor to fail (when e failed or the Client is closed), if any. m,
// if not nil, is the acknowledged message that carried e (acknowledged).
// The caller holds mu and, if e was settled, releases one admission.
func (c *Client) settleLocked(e *entry, ack Ack, err error, m *sentMsg) (settled bool, fail *entry) {
	if e.settled {
		return false, nil
	}
	e.settled = true
	e.p.settle(ack, err)
	if e.h != nil {
		if err == nil {
			c.copyAcked(e.h, ack.Seq, m)
		} else {
			c.copyFailed(e.h)
		}
	}
	next := e.next
	e.next = nil
	if e.tail {
		e.tail = false
		delete(c.tails, e.ev.OrderKey)
	}
	c.unsettled--
	if c.unsettled == 0 {
		for _, ch := range c.idle {
			close(ch)
		}
		c.idle = nil
	}
	if next == nil {
		return true, nil
	}
	if err == nil && !c.isClosed {
		c.enqueue(c.release(next)) // never blocks; under mu so Close drains it; the linger counted it when published
		return true, nil
	}
	return true, next
}

// release makes a run of head, whose predecessor JetStream has just
// acknowledged, and of the events parked behind it, as many as one message
// takes (MaxBatchEvents, MaxBatchBytes); it returns head. The run goes in
// one message, in order, so a retry cannot reorder it: the message is
// stored whole or not at all. The rest stays parked behind the run's last
// member. Without it a game's events would travel one per acknowledgement:
// under load, one event per game per round trip. The caller holds mu.
func (c *Client) release(head *entry) *entry {
	n, size := 1, len(head.ev.Data)
	for e := head; e.next != nil && n < c.cfg.MaxBatchEvents && size+1+len(e.next.ev.Data) <= c.cfg.MaxBatchBytes; n++ {
		size += 1 + len(e.next.ev.Data)
		e.run, e.next = e.next, nil
		e = e.run
	}
	return head
}

// runSize returns the number of events of the run headed by e, and its
// size in a message (the events and the separators between them).
func runSize(e *entry) (n, size int) {
	for n, size = 1, len(e.ev.Data); e.run != nil; n++ {
		e = e.run
		size += 1 + len(e.ev.Data)
	}
	return n, size
}

// take appends the members of the run headed by e to items, up to the
// first whose ctx has ended: that one fails with its ctx's error and the
// members after it with ErrPredecessor (sent without it, they could land
// before it).
func (c *Client) take(items []*entry, e *entry) []*entry {
	for ; e != nil; e = e.run {
		if err := e.ctx.Err(); err != nil {
			c.resolve(e, Ack{}, err)
			for f := e.run; f != nil; f = f.run {
				c.failSuccessor(f, e, err)
			}
			return items
		}
		items = append(items, e)
	}
	return items
}

// failRun fails every member of the run headed by e with err.
func (c *Client) failRun(e *entry, err error) {
	for ; e != nil; e = e.run {
		c.resolve(e, Ack{}, err)
	}
}

// failSuccessor fails next, parked behind e, which failed with err (or
// succeeded after the Client closed: err is then ErrClosed).
func (c *Client) failSuccessor(next, e *entry, err error) {
	if err == nil {
		err = ErrClosed
	}
	c.resolve(next, Ack{}, fmt.Errorf("sdk: event %s: %w (%s: %w)", next.ev.ID, ErrPredecessor, e.ev.ID, err))
}

// Flush waits until every event accepted so far is settled (acknowledged
// or failed), or ctx ends.
func (c *Client) Flush(ctx context.Context) error {
	c.mu.Lock()
	if c.unsettled == 0 {
		c.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	c.idle = append(c.idle, ch)
	c.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the Client: events not yet acknowledged fail with ErrClosed
// (they may still reach the stream), and the events held are no longer
// followed (WaitLogged first waits for them). It does not close the
// connection.
func (c *Client) Close() {
	c.mu.Lock()
	if c.isClosed {
		c.mu.Unlock()
		return
	}
	c.isClosed = true
	c.mu.Unlock()
	close(c.closed)
	c.stop()
	c.wg.Wait()
	// Fail what is queued or parked.
	for {
		select {
		case e := <-c.queue:
			c.failRun(e, ErrClosed)
		default:
			return
		}
	}
}

// sender packs queued runs (an event, or a run of one order key's events:
// release) into messages and starts a flight per message, at most Window
// at once; a message that is not full waits while PartialFlights others
// fly, or while the emitter's recent rate predicts another event within
// its Linger (lingerer), packing what queues meanwhile. A run is never
// split: one that does not fit in the message being packed starts the
// next one (it fits alone, by release's bounds). An event whose ctx has
// ended before it is sent fails (take).
func (c *Client) sender() {
	var carry *entry
	var linger *time.Timer // c.linger's wait, reset at each dry moment
	if c.cfg.Linger > 0 {
		linger = time.NewTimer(time.Hour)
		linger.Stop()
		defer linger.Stop()
	}
	now := time.Now
	defer func() {
		if carry != nil {
			c.failRun(carry, ErrClosed)
		}
	}()
	// packing is the array the message being packed grows in, kept from
	// message to message: a message's items are copied out of it when it
	// goes, one allocation a message rather than one at each doubling.
	var packing []*entry
	for {
		select {
		case c.window <- struct{}{}:
		case <-c.closed:
			return
		}
		items := packing[:0]
		if carry != nil {
			items, carry = c.take(items, carry), nil
		}
		for len(items) == 0 {
			select {
			case e := <-c.queue:
				c.took(e)
				items = c.take(items, e)
			case <-c.closed:
				return
			}
		}
		var first time.Time // when the message's first event was taken
		if linger != nil {
			first = now()
		}
		size := len(items) - 1
		for _, e := range items {
			size += len(e.ev.Data)
		}
	pack:
		for len(items) < c.cfg.MaxBatchEvents {
			var e *entry
			select {
			case e = <-c.queue:
				c.took(e)
			default:
				// The queue is dry and the message not full: it waits
				// while the emitter's rate predicts another event within
				// the linger, or while PartialFlights others fly.
				var lingerC <-chan time.Time
				var w, nap time.Duration
				if linger != nil {
					c.mu.Lock()
					t := now()
					if w = c.linger.wait(t, first); w > 0 {
						nap = c.linger.nap(t, first, w)
					}
					c.mu.Unlock()
				}
				var landed <-chan struct{}
				if len(c.window)-1 >= c.cfg.PartialFlights {
					landed = c.landed
				}
				if w <= 0 && landed == nil {
					break pack
				}
				if landed == nil && nap > 0 {
					// Only the linger holds the message: sleep through
					// the events published meanwhile (napOn).
					linger.Reset(nap)
					closed := !c.napOn(linger.C, len(items), size)
					linger.Stop()
					if closed {
						break pack // as below: the message goes, and fails with ErrClosed
					}
					continue // take what queued meanwhile, and decide again
				}
				if w > 0 {
					linger.Reset(w)
					lingerC = linger.C
				}
				select {
				case e = <-c.queue:
					c.took(e)
				case <-lingerC:
					continue // decide again: the bound has passed
				case <-landed:
					continue // count them again
				case <-c.closed:
					break pack
				}
				if linger != nil {
					linger.Stop()
				}
			}
			n, rs := runSize(e)
			if len(items)+n > c.cfg.MaxBatchEvents || size+1+rs > c.cfg.MaxBatchBytes {
				carry = e
				break pack
			}
			k := len(items)
			items = c.take(items, e)
			for _, e := range items[k:] {
				size += 1 + len(e.ev.Data)
			}
		}
		if linger != nil {
			linger.Stop()
		}
		packing = items
		items = slices.Clone(items)
		clear(packing) // the entries are the flight's now
		msg := c.message(items)
		c.wg.Go(func() {
			defer func() {
				<-c.window
				select {
				case c.landed <- struct{}{}:
				default: // the sender will count the flights anyway
				}
			}()
			c.fly(msg, items)
		})
	}
}

// napOn sleeps, while the message being packed (items events, of size
// bytes) lingers, until wake fires, the queue could fill the message, or
// the Client is closed (it then returns false). The events published
// meanwhile do not wake it as
// long as the message has room for all of them; the sender takes them
// after. (lingerer.nap ends the sleep before an event's arrival could end
// the linger's wait; the sender decides again as it ends, by the same
// rule.)
func (c *Client) napOn(wake <-chan time.Time, items, size int) (open bool) {
	n := &c.nap
	n.wantBytes.Store(int64(c.cfg.MaxBatchBytes - size))
	n.wantEvents.Store(int64(c.cfg.MaxBatchEvents - items))
	n.maybeKick() // an event queued since the sender looked
	open = true
	select {
	case <-wake:
	case <-n.kick:
	case <-c.closed:
		open = false
		n.closedWakes.Add(1)
	}
	n.wantEvents.Store(0)
	select {
	case <-n.kick: // a kick that came as it woke
	default:
	}
	return open
}

// message builds the NATS message carrying items. It sets no Nats-Msg-Id:
// JetStream deduplicates that header across the whole stream, whichever
// subject a message came on, so another emitter that learnt or guessed an
// id could publish junk under it first and make JetStream drop this
// emitter's real event as a "duplicate". Without the header nothing another
// emitter sends can match this emitter's messages; a resent message reaches
// the ledger, which deduplicates by event id exactly (docs/SECURITY.md).
func (c *Client) message(items []*entry) *nats.Msg {
	m := &nats.Msg{Subject: c.subject} // a lone event's message has no header
	if len(items) == 1 {
		m.Data = items[0].ev.Data
		return m
	}
	events := make([][]byte, len(items))
	size := len(items) - 1
	for i, e := range items {
		events[i] = e.ev.Data
		size += len(e.ev.Data)
	}
	payload, err := wire.AppendBatch(make([]byte, 0, size), events)
	if err != nil {
		panic(fmt.Sprintf("sdk: packing %d checked events: %v", len(items), err)) // checked in PublishAsync
	}
	m.Data = payload
	m.Header = nats.Header{wire.HeaderEvents: []string{strconv.Itoa(len(items))}}
	return m
}

// fly publishes msg until JetStream acknowledges it, every item's ctx has
// ended, or the Client is closed.
func (c *Client) fly(msg *nats.Msg, items []*entry) {
	backoff := c.cfg.RetryMin
	for {
		live := 0
		for _, e := range items {
			if err := e.ctx.Err(); err != nil {
				c.resolve(e, Ack{}, err)
			} else {
				live++
			}
		}
		if live == 0 {
			return
		}
		fut, err := c.js.PublishMsgAsync(msg)
		if err == nil {
			select {
			case pa := <-fut.Ok():
				var m *sentMsg
				if !pa.Duplicate {
					m = c.newSentMsg(pa.Sequence, msg.Data, len(items))
				}
				c.acknowledged(items, Ack{Stream: pa.Stream, Seq: pa.Sequence, Duplicate: pa.Duplicate, Events: len(items)}, m)
				c.followMessage(m)
				return
			case err = <-fut.Err():
			case <-c.closed:
				err = ErrClosed
			}
		}
		if errors.Is(err, ErrClosed) {
			for _, e := range items {
				c.resolve(e, Ack{}, ErrClosed)
			}
			return
		}
		if backlog(err) {
			err = fmt.Errorf("%w (the stream refused the message: %w)", ErrBacklog, err)
		}
		if permanent(err) {
			for _, e := range items {
				c.resolve(e, Ack{}, &PublishError{Err: err})
			}
			return
		}
		if c.cfg.OnRetry != nil {
			c.cfg.OnRetry(err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-c.closed:
			t.Stop()
			for _, e := range items {
				c.resolve(e, Ack{}, ErrClosed)
			}
			return
		}
		backoff = min(2*backoff, c.cfg.RetryMax)
	}
}

// backlog reports whether err is the stream refusing a message at one of
// its limits (discard policy "new").
func backlog(err error) bool {
	var api *jetstream.APIError
	if !errors.As(err, &api) {
		return false
	}
	d := api.Description
	return api.ErrorCode == jetstream.ErrorCode(10077) && (strings.Contains(d, "maximum messages") || strings.Contains(d, "maximum bytes"))
}

// permanent reports whether err will not go away by sending again (soon).
func permanent(err error) bool {
	if errors.Is(err, ErrBacklog) {
		return true
	}
	var api *jetstream.APIError
	if errors.As(err, &api) {
		return api.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum
	}
	return errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, nats.ErrBadSubject) ||
		errors.Is(err, nats.ErrConnectionClosed) ||
		errors.Is(err, nats.ErrHeadersNotSupported)
}
