// Package ingest moves zarlog events from NATS JetStream into the ledger.
//
// Game backends (emitters) publish events on wire.Subjects.Events (see
// package wire and docs/NATS.md). A JetStream work-queue stream captures
// them; an Ingester reads them with a durable pull consumer, hands them in
// batches to a Sink (the ledger), and acknowledges a message only after the
// Sink has made the outcome of every event in it durable: appended at a leaf
// index, a duplicate of one, or rejected with a reason. Rejections are
// terminated on the stream with their reason and announced on
// wire.Subjects.Rejected. Emitters ask for receipts (leaf index and a signed
// checkpoint covering it) on wire.Subjects.Receipts.
//
// The Ingester submits events strictly in stream order, also across
// restarts, redeliveries and messages lost in transit: at the start of each
// consumer session it resets the consumer to its ack floor, so every
// unacknowledged message is delivered again in order, and when the consumer
// delivers a message while earlier ones are still outstanding it reads those
// directly from the stream first. Because the Sink is idempotent per event,
// everything it has already decided is answered as a duplicate, and an
// acknowledged event is in the ledger exactly once.
//
// The package also runs the embedded nats-server (StartServer) and connects
// to an external NATS deployment (Dial).
package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/wire"
)

// DefaultLinger is the Linger `zarlog serve` runs with: at a human pace
// (a few hundred events a second, one or two per message) it cut the CPU
// per event by about a third in `zarlog bench --pace human`
// (docs/BENCHMARKS.md, issue 31), for at most 20 ms more per group.
const DefaultLinger = 20 * time.Millisecond

// Config configures an Ingester. Every field's zero value is documented.
type Config struct {
	// Sink receives the events. Required.
	Sink Sink
	// Locator and Checkpoints serve receipts. If either is nil, receipt
	// requests are answered with status "error", code "unavailable".
	Locator     Locator
	Checkpoints CheckpointWaiter

	// Subjects is the subject scheme. Zero means root "zarlog".
	Subjects wire.Subjects
	// Stream and Consumer configure JetStream; see their fields.
	Stream   StreamConfig
	Consumer ConsumerConfig

	// MaxBatch is the most events handed to one Append (whole messages are
	// never split, so a batch may exceed it by one message's events). Zero
	// means 8192. The Ingester takes whatever has arrived, up to MaxBatch,
	// while the previous Append runs: batches grow when the sink is slow.
	MaxBatch int
	// Linger is how long a batch of fewer than LingerEvents events waits
	// for more messages before it is handed to Append: at a low rate, a
	// group (one Pebble batch, one fsync, the partial tiles rewritten)
	// then carries more events, for a latency of at most Linger. Zero
	// means no waiting; `zarlog serve` uses DefaultLinger.
	Linger time.Duration
	// LingerEvents is the batch size from which a batch does not linger.
	// Zero means 256.
	LingerEvents int
	// MaxBatchBytes is the most bytes of messages handed to one Append
	// (a batch may exceed it by one message). Zero means 16 MiB.
	MaxBatchBytes int
	// Prefetch is how many messages the consumer asks the server for ahead
	// of need. Zero means 2048. It must not exceed Consumer.MaxAckPending.
	Prefetch int
	// PrefetchBytes bounds the bytes of messages held ahead of need: those
	// the client library buffers, and those waiting for a batch, each at
	// most this much. Zero means 32 MiB. With MaxBatchBytes it bounds the
	// ingest's memory whatever the messages' sizes (2,048 messages of the
	// largest, 1 MiB, would be 2 GiB).
	PrefetchBytes int

	// RetryMin and RetryMax bound the backoff between failed Append calls
	// and between consumer sessions. Zero means 50 ms and 5 s.
	RetryMin, RetryMax time.Duration
	// ReceiptMaxWait caps how long a receipt request may wait. Zero means
	// 30 s.
	ReceiptMaxWait time.Duration
	// MaxReceiptRequests bounds the receipt requests held at once, all
	// emitters together, and MaxReceiptRequestsPerEmitter those of one
	// emitter: a request past either is answered at once with code "busy",
	// naming the emitter and the limit, and counted in
	// zarlog_ingest_limit_refusals_total. An emitter at its limit delays
	// only its own receipts; the total bounds the memory of held requests
	// (a goroutine and a waiter each, about 4 KiB) whatever the number of
	// emitters. Zero means DefaultMaxReceiptRequests and
	// DefaultMaxReceiptRequestsPerEmitter.
	MaxReceiptRequests           int
	MaxReceiptRequestsPerEmitter int
	// BacklogBytesPerEmitter and BacklogMessagesPerEmitter bound what one
	// emitter may have in the stream undecided (the admission,
	// admission.go): past either, its publish is refused at once as the
	// stream refuses one when its own bounds are reached, naming the
	// emitter and the limit. Zero means DefaultBacklogBytesPerEmitter and
	// DefaultBacklogMessagesPerEmitter, each at most a quarter of the
	// stream's bound.
	BacklogBytesPerEmitter    int64
	BacklogMessagesPerEmitter int64
	// RateBytesPerEmitter and RateMessagesPerEmitter bound how fast one
	// emitter may publish, in bytes and messages a second, with a burst of
	// two seconds' worth (the admission): past either, its publish is
	// refused at once ("maximum rate exceeded", which the SDK sends again
	// after its backoff), naming the emitter and the limit, so that one
	// emitter cannot take the ledger's whole capacity. Zero means
	// DefaultRateBytesPerEmitter and DefaultRateMessagesPerEmitter;
	// negative means no limit.
	RateBytesPerEmitter    int64
	RateMessagesPerEmitter int64
	// RefusedBytesPerEmitter bounds what an emitter may go on publishing
	// while its messages are refused (by its backlog or its rate): bytes
	// a second, each refused message counted as at least 512 bytes, with a
	// burst of eight seconds' worth. The SDK backs off after a refusal
	// (RetryMin to RetryMax for each message of its window) and stays
	// under it by far; an emitter past it ignores its refusals. It is
	// disconnected (Disconnect), and for a penalty (2 s, doubled at each
	// repeat within a minute, up to a minute) each message it sends is
	// refused at once, as over its rate, and disconnects it again: what
	// it costs the service is then its reconnections. Counted in
	// zarlog_ingest_limit_refusals_total with limit
	// "refused-bytes-per-emitter" and in zarlog_ingest_disconnects_total.
	// Zero means DefaultRefusedBytesPerEmitter; negative means no limit.
	RefusedBytesPerEmitter int64
	// Disconnect, if not nil, closes every connection of an emitter and
	// says how many (the embedded server's Server.DisconnectEmitter).
	// Nil means an emitter past RefusedBytesPerEmitter is only refused:
	// with an external NATS, the network in front of it must bound what
	// one connection sends.
	Disconnect func(emitter string) (int, error)
	// InfoInterval is how often the consumer's and the stream's state are
	// read, for the lag metrics and Health. Zero means 2 s; negative
	// disables it (Health then cannot see a stall).
	InfoInterval time.Duration
	// StallAfter is how long messages may wait with none decided before
	// Health reports the ingest stalled. Zero means 10 s.
	StallAfter time.Duration
	// Now is the clock of Health. Nil means time.Now.
	Now func() time.Time

	// Hold, if not nil, says whether this node may ingest and answer
	// receipt and status requests now: nil yes; an error no, and why.
	// `zarlog serve --storage` gives package storage's Node.Hold: a node
	// that has not renewed its lease on the log for half of it may have
	// been replaced by another, and its ledger's state be outdated
	// (docs/FAULTS.md §4, run 11). While it holds:
	//   - no consumer session runs and none starts. A session in progress
	//     ends within HoldPoll, and at the latest before it appends its
	//     next batch or acknowledges one it appended, acknowledging and
	//     naking nothing of it: JetStream delivers every message it was
	//     given and did not acknowledge again, to whichever ingest pulls
	//     from the shared consumer, once AckWait has passed or at once
	//     when a session starts (it resets the consumer to its ack floor);
	//     an ingest that reads past such a message first reads it from
	//     the stream.
	//   - receipt and status requests are answered with status "error",
	//     code "unavailable" and Hold's reason, which the SDK asks again
	//     after its backoff (a queue group: the next request may go to
	//     the node that holds the lease); a reply made before Hold closed
	//     and not yet sent is replaced by that one.
	// Each is counted in zarlog_ingest_held_back_total. Nil never holds.
	Hold func() error
	// HoldPoll is how often a session looks at Hold while no batch comes,
	// and a held ingest whether it may start again. Zero means 100 ms.
	HoldPoll time.Duration

	// Logger receives the Ingester's logs. Nil means discard.
	Logger *slog.Logger
	// Registerer receives the Ingester's metrics. Nil means none.
	Registerer prometheus.Registerer
}

func (c Config) withDefaults() Config {
	c.Stream = c.Stream.withDefaults()
	c.Consumer = c.Consumer.withDefaults()
	if c.MaxBatch == 0 {
		c.MaxBatch = 8192
	}
	if c.LingerEvents == 0 {
		c.LingerEvents = 256
	}
	if c.Prefetch == 0 {
		c.Prefetch = min(2048, c.Consumer.MaxAckPending)
	}
	if c.MaxBatchBytes == 0 {
		c.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if c.PrefetchBytes == 0 {
		c.PrefetchBytes = DefaultPrefetchBytes
	}
	if c.RetryMin == 0 {
		c.RetryMin = 50 * time.Millisecond
	}
	if c.RetryMax == 0 {
		c.RetryMax = 5 * time.Second
	}
	if c.ReceiptMaxWait == 0 {
		c.ReceiptMaxWait = 30 * time.Second
	}
	if c.MaxReceiptRequests == 0 {
		c.MaxReceiptRequests = DefaultMaxReceiptRequests
	}
	if c.MaxReceiptRequestsPerEmitter == 0 {
		c.MaxReceiptRequestsPerEmitter = DefaultMaxReceiptRequestsPerEmitter
	}
	c.MaxReceiptRequestsPerEmitter = min(c.MaxReceiptRequestsPerEmitter, c.MaxReceiptRequests)
	// By default an emitter may fill at most a quarter of the stream, so
	// one at its limit leaves the others room.
	st := c.Stream.withDefaults()
	if c.BacklogBytesPerEmitter == 0 {
		c.BacklogBytesPerEmitter = DefaultBacklogBytesPerEmitter
		if st.MaxBytes > 0 {
			c.BacklogBytesPerEmitter = max(1, min(c.BacklogBytesPerEmitter, st.MaxBytes/4))
		}
	}
	if c.BacklogMessagesPerEmitter == 0 {
		c.BacklogMessagesPerEmitter = DefaultBacklogMessagesPerEmitter
		if st.MaxMsgs > 0 {
			c.BacklogMessagesPerEmitter = max(1, min(c.BacklogMessagesPerEmitter, st.MaxMsgs/4))
		}
	}
	if c.RateBytesPerEmitter == 0 {
		c.RateBytesPerEmitter = DefaultRateBytesPerEmitter
	}
	if c.RateMessagesPerEmitter == 0 {
		c.RateMessagesPerEmitter = DefaultRateMessagesPerEmitter
	}
	if c.RefusedBytesPerEmitter == 0 {
		c.RefusedBytesPerEmitter = DefaultRefusedBytesPerEmitter
	}
	if c.InfoInterval == 0 {
		c.InfoInterval = 2 * time.Second
	}
	if c.StallAfter == 0 {
		c.StallAfter = 10 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.HoldPoll == 0 {
		c.HoldPoll = 100 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Defaults of Config's per-emitter budgets (docs/OPERATIONS.md §9 says what
// they are sized for).
const (
	// DefaultMaxReceiptRequestsPerEmitter: a platform's receipt requests
	// are held from its event's publication until a checkpoint covers it,
	// about 0.2 s; 4,096 held is 20,000 requests a second, or every game
	// of a platform starting within one 20 s wait of the SDK while the
	// ledger stands still.
	DefaultMaxReceiptRequestsPerEmitter = 4096
	// DefaultMaxReceiptRequests: four emitters at their limit, 64 MiB of
	// held requests.
	DefaultMaxReceiptRequests = 16384
)

// Defaults of the bytes the ingest holds (Config.MaxBatchBytes,
// Config.PrefetchBytes).
const (
	DefaultMaxBatchBytes = 16 << 20
	DefaultPrefetchBytes = 32 << 20
)

// pullHeartbeat is the idle heartbeat the ingest's pull requests ask the
// server for: a session that receives neither a message nor a heartbeat
// for twice this long while it waits for one ends (nats.go's
// ErrNoHeartbeat) and starts again, pulling anew. That is how a pull
// request that never reached the server, or that nats.go never sent, is
// asked again. nats.go's Messages iterator (v1.55 and v1.56) skips a
// refill while the goroutine that sends its pull requests has not yet
// cleared its "pull in progress" flag; if the messages of that pull are
// all taken by then, no later message comes to check again, and the
// iterator waits for messages nobody asked for. With Prefetch 1 every
// message is such a case: on a loaded machine the ingest then stood still
// until nats.go's default heartbeat, 15 s, had been missed twice, and
// TestGoneBelowFirst timed out after 20 s in CI. 2 s bounds that at 4 s,
// for one small message every 2 s while the ingest waits (TestLostPull).
const pullHeartbeat = 2 * time.Second

// An Ingester consumes the events stream into a Sink. Create it with New and
// run it with Run.
type Ingester struct {
	cfg     Config
	nc      *nats.Conn
	js      jetstream.JetStream
	log     *slog.Logger
	m       *metrics
	waiters waiters
	// refusedLog rate-limits the log lines of refused receipt requests,
	// busyLog those of requests over an emitter's budget.
	refusedLog, busyLog rateLog
	// held counts the receipt requests held, by emitter.
	held budget
	// adm admits the emitters' messages into the stream.
	adm    *admission
	health health

	// decided is the session's cursor, for receipts that name the stream
	// sequence of their message: every sequence below it is decided.
	// moved is closed and replaced each time it is stored (setDecided):
	// requests wait on it for the ingest to reach their message.
	decided atomic.Uint64
	movedMu sync.Mutex
	moved   chan struct{}
	// last caches the stream's last sequence for the StreamState of
	// receipt replies (streamState).
	last lastSeq
	// msgs are the records of the latest messages decided, for message
	// status requests (messages.go).
	msgs *msgRecords

	rejLogMu   sync.Mutex
	rejTokens  float64
	rejRefill  time.Time
	rejSkipped int

	// noReset skips the consumer reset at session start (tests of the
	// gap-filling path, which is what older servers get).
	noReset bool
	// afterSubmit, if set, is called after each successful Submit, before
	// anything is acknowledged; if it returns an error, the batch is left
	// unacknowledged and the session ends with it (tests use it to simulate
	// a crash between the durable commit and the acks).
	afterSubmit func() error
	// syncAck makes the final acknowledgement of each batch wait for the
	// server's confirmation, and afterAck is then called with its stream
	// sequence (tests use them to observe the server's state exactly).
	syncAck  bool
	afterAck func(seq uint64)
}

// New returns an Ingester that uses nc, which must stay open while Run
// runs. Use a connection that reconnects forever (Dial and Server.Connect
// return one). New does not touch the network.
func New(nc *nats.Conn, cfg Config) (*Ingester, error) {
	if cfg.Sink == nil {
		return nil, errors.New("ingest: Config.Sink is nil")
	}
	if err := cfg.Subjects.Check(); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	cfg = cfg.withDefaults()
	if cfg.MaxBatch < 1 || cfg.Prefetch < 1 || cfg.Consumer.MaxAckPending < 1 {
		return nil, fmt.Errorf("ingest: MaxBatch %d, Prefetch %d and MaxAckPending %d must be positive",
			cfg.MaxBatch, cfg.Prefetch, cfg.Consumer.MaxAckPending)
	}
	if cfg.Prefetch > cfg.Consumer.MaxAckPending {
		return nil, fmt.Errorf("ingest: Prefetch %d exceeds MaxAckPending %d", cfg.Prefetch, cfg.Consumer.MaxAckPending)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	in := &Ingester{cfg: cfg, nc: nc, js: js, log: cfg.Logger, m: m, waiters: waiters{m: map[waiterKey][]chan ledger.Outcome{}}, msgs: newMsgRecords(MessageRecords),
		held: budget{by: map[string]int{}, max: cfg.MaxReceiptRequestsPerEmitter, total: cfg.MaxReceiptRequests}}
	in.adm = newAdmission(in)
	in.moved = make(chan struct{})
	in.health.now = cfg.Now
	in.health.sessionSince = cfg.Now()
	in.rejTokens, in.rejRefill = rejectLogBurst, cfg.Now()
	return in, nil
}

// Run consumes until ctx ends, then returns ctx's error (after the Append in
// progress, if any, has returned). Errors from NATS or the sink are logged
// and retried with backoff; Run returns early only if the receipts
// subscription cannot be made or the connection is closed for good.
// Messages fetched but not acknowledged when Run returns are delivered
// again to the next Run. Run must not be called concurrently with itself on
// one Ingester, nor on two Ingesters sharing a consumer.
//
// Shutdown order: cancel Run's ctx and wait for Run to return, then close
// the connection, then (embedded mode) shut the server down, then close the
// ledger.
func (in *Ingester) Run(ctx context.Context) error {
	sub, err := in.serveReceipts(ctx)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	stopAdmission, err := in.adm.run(ctx)
	if err != nil {
		return err
	}
	defer stopAdmission()

	backoff := in.cfg.RetryMin
	for {
		if !in.waitServing(ctx) {
			return ctx.Err()
		}
		start := time.Now()
		err := in.session(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		in.health.sessionFailed(err)
		if in.nc.IsClosed() {
			return fmt.Errorf("ingest: the NATS connection is closed: %w", err)
		}
		if errors.Is(err, errHeld) {
			backoff = in.cfg.RetryMin
			continue // waitServing logs it
		}
		if time.Since(start) > in.cfg.RetryMax {
			backoff = in.cfg.RetryMin
		}
		in.log.Warn("ingest session ended; restarting", "err", err, "backoff", backoff)
		if !wait(ctx, backoff) {
			return ctx.Err()
		}
		backoff = min(2*backoff, in.cfg.RetryMax)
	}
}

// errHeld ends a consumer session when Config.Hold closes.
var errHeld = errors.New("held")

// hold is Config.Hold, or nil without one.
func (in *Ingester) hold() error {
	if in.cfg.Hold == nil {
		return nil
	}
	return in.cfg.Hold()
}

// heldErr returns the error that ends a session when Hold says err.
func heldErr(err error) error {
	return fmt.Errorf("%w: this node may not ingest now: %w", errHeld, err)
}

// waitServing waits until Hold is open, logging when it closes and opens
// again; false if ctx ended first.
func (in *Ingester) waitServing(ctx context.Context) bool {
	err := in.hold()
	if err == nil {
		return true
	}
	in.log.Warn("not ingesting and not answering receipt or status requests: this node may not serve the log now", "reason", err)
	in.health.sessionFailed(heldErr(err))
	t := time.NewTicker(in.cfg.HoldPoll)
	defer t.Stop()
	since := time.Now()
	for err != nil {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		err = in.hold()
	}
	in.log.Info("ingesting and answering receipt and status requests again", "held_for", time.Since(since).Round(time.Millisecond))
	return true
}

// session sets up the stream and consumer, resets the consumer to its ack
// floor and consumes until an error or the end of ctx.
func (in *Ingester) session(ctx context.Context) error {
	in.m.sessions.Inc()
	stream, err := EnsureStream(ctx, in.js, in.cfg.Subjects, in.cfg.Stream)
	if err != nil {
		return err
	}
	cons, err := ensureConsumer(ctx, stream, in.cfg.Subjects, in.cfg.Consumer)
	if err != nil {
		return err
	}
	next, err := in.startSeq(ctx, stream, cons)
	if err != nil {
		return err
	}
	it, err := cons.Messages(jetstream.PullMaxMessagesWithBytesLimit(in.cfg.Prefetch, in.cfg.PrefetchBytes),
		jetstream.PullHeartbeat(pullHeartbeat))
	if err != nil {
		return fmt.Errorf("starting to pull from consumer %s: %w", in.cfg.Consumer.Name, err)
	}
	sctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	in.health.sessionStarted()
	var sessionErr error
	defer func() {
		cancel()
		it.Stop()
		wg.Wait()
		in.health.sessionEnded(sessionErr)
	}()

	msgs := make(chan jetstream.Msg, in.cfg.Prefetch)
	waiting := newByteGate(in.cfg.PrefetchBytes) // the bytes of msgs
	defer waiting.close()
	errc := make(chan error, 1)
	wg.Go(func() {
		for {
			m, err := it.Next(jetstream.NextContext(sctx))
			if err != nil {
				errc <- err
				return
			}
			if !waiting.take(len(m.Data())) {
				return
			}
			select {
			case msgs <- m:
			case <-sctx.Done():
				return
			}
		}
	})
	// ends carries the stream's first and last sequences as the poller
	// last read them: on a quiet stream they are what moves the cursor
	// past messages that are gone without reaching this ingest.
	ends := make(chan streamEnds, 1)
	if in.cfg.InfoInterval > 0 {
		wg.Go(func() { in.pollInfo(sctx, stream, cons, ends) })
	}
	in.log.Info("ingest session started", "stream", in.cfg.Stream.Name, "consumer", in.cfg.Consumer.Name, "next", next)

	st := &sessionState{stream: stream, next: next}
	in.msgs.reset() // made from this session's decisions only
	in.setDecided(next)
	var holdTick <-chan time.Time
	if in.cfg.Hold != nil {
		t := time.NewTicker(in.cfg.HoldPoll)
		defer t.Stop()
		holdTick = t.C
	}
	for {
		var first jetstream.Msg
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-holdTick:
			if err := in.hold(); err != nil {
				sessionErr = heldErr(err)
				return sessionErr
			}
			continue
		case err := <-errc:
			sessionErr = fmt.Errorf("pulling from consumer %s: %w", in.cfg.Consumer.Name, err)
			return sessionErr
		case e := <-ends:
			in.atEnds(st, e)
			continue
		case first = <-msgs:
		}
		batch := []jetstream.Msg{first}
		events, size := eventCount(first), len(first.Data())
	drain:
		for events < in.cfg.MaxBatch && size < in.cfg.MaxBatchBytes {
			select {
			case m := <-msgs:
				batch = append(batch, m)
				events += eventCount(m)
				size += len(m.Data())
			default:
				break drain
			}
		}
		if in.cfg.Linger > 0 && events < in.cfg.LingerEvents {
			timer := time.NewTimer(in.cfg.Linger)
		linger:
			for events < in.cfg.LingerEvents && size < in.cfg.MaxBatchBytes {
				select {
				case m := <-msgs:
					batch = append(batch, m)
					events += eventCount(m)
					size += len(m.Data())
				case <-timer.C:
					break linger
				case <-ctx.Done():
					timer.Stop()
					return ctx.Err()
				}
			}
			timer.Stop()
		}
		waiting.give(size)
		in.m.inflight.Set(float64(len(batch) + len(msgs)))
		if err := in.hold(); err != nil {
			in.m.heldBack.WithLabelValues("batch").Inc()
			sessionErr = heldErr(err)
			return sessionErr
		}
		if err := in.process(ctx, st, batch); err != nil {
			sessionErr = err
			return err
		}
		in.health.progressed()
	}
}

// eventCount is the number of events a message claims to carry (1 unless
// it has a valid wire.HeaderEvents).
func eventCount(m jetstream.Msg) int {
	if c := m.Headers().Get(wire.HeaderEvents); c != "" {
		if n, err := wire.ParseCount(c); err == nil {
			return n
		}
	}
	return 1
}

// startSeq resets the consumer to its ack floor (so that everything not yet
// acknowledged is delivered again, in order) and returns the first stream
// sequence the session expects.
func (in *Ingester) startSeq(ctx context.Context, stream jetstream.Stream, cons jetstream.Consumer) (uint64, error) {
	var next uint64
	if !in.noReset {
		resp, err := in.js.ResetConsumer(ctx, in.cfg.Stream.Name, in.cfg.Consumer.Name)
		if err != nil {
			in.log.Warn("consumer reset failed (server older than 2.14?); unacknowledged messages will be read from the stream",
				"consumer", in.cfg.Consumer.Name, "err", err)
		} else {
			next = resp.ResetSeq
		}
	}
	if next == 0 {
		info, err := cons.Info(ctx)
		if err != nil {
			return 0, fmt.Errorf("reading consumer %s: %w", in.cfg.Consumer.Name, err)
		}
		next = info.AckFloor.Stream + 1
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading stream %s: %w", in.cfg.Stream.Name, err)
	}
	return max(next, info.State.FirstSeq), nil
}

// streamEnds are the stream's first and last sequences, as one read of its
// state saw them, and the ingest's cursor read before it.
type streamEnds struct{ first, last, decided uint64 }

// pollInfo reads the consumer's and the stream's state every InfoInterval,
// for the metrics and Health, and hands the stream's ends to the session
// (ends: the latest read replaces one the session has not taken yet).
func (in *Ingester) pollInfo(ctx context.Context, stream jetstream.Stream, cons jetstream.Consumer, ends chan streamEnds) {
	t := time.NewTicker(in.cfg.InfoInterval)
	defer t.Stop()
	for {
		at := time.Now()
		decided := in.decided.Load()
		info, err := cons.Info(ctx)
		var si *jetstream.StreamInfo
		if err == nil {
			in.m.streamPending.Set(float64(info.NumPending))
			in.m.ackPending.Set(float64(info.NumAckPending))
			si, err = stream.Info(ctx)
		}
		if ctx.Err() != nil {
			return
		}
		if si != nil {
			in.last.set(si.State.LastSeq, at)
			in.wakeWaiters()
			select {
			case <-ends:
			default:
			}
			ends <- streamEnds{first: si.State.FirstSeq, last: si.State.LastSeq, decided: decided} // the only sender: never blocks
		}
		in.health.polled(info, si, err)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// atEnds acts on the stream's ends as the poller read them, between two
// batches. Messages below the stream's first sequence are gone from it:
// acknowledged by another ingest on the shared consumer (a fenced old
// primary that woke up and decided a batch it held, into a ledger that is
// then moved aside), or removed by the stream's limits. They can never
// reach this ingest, so its cursor passes them, and the receipts of their
// events answer with a cursor past them at once: their emitters publish
// them again (docs/NATS.md §5, "Resending"). Without this the cursor moved
// past them only when a later message came, and on a quiet stream whose
// emitters wait for those receipts none came (docs/FAULTS.md §4, run 5).
// A message below the first sequence that the consumer had delivered to
// this ingest before is then acknowledged without being decided (it is
// below the cursor, as a redelivery is): it is gone from the stream all
// the same, and its emitter publishes it again.
//
// A last sequence below the cursor says the stream lost messages it had
// acknowledged and that this ledger had decided (a truncated block file on
// the node that leads it): the stream gives their sequences again to the
// next messages. The cursor stays: those messages are below it and are not
// decided (a delivered one is acknowledged as a redelivery is), and their
// emitters, told that the cursor is past their sequence without a record,
// publish them again until a copy gets a sequence above it (docs/NATS.md §5, "Sequences given
// twice"). It is logged, once per last sequence seen.
func (in *Ingester) atEnds(st *sessionState, e streamEnds) {
	if e.first > st.next {
		in.log.Info("messages below the stream's first sequence are gone without reaching this ingest (acknowledged by another ingest, or removed by the stream's limits): the cursor passes them; their emitters publish them again",
			"from", st.next, "to", e.first)
		in.m.gone.Add(float64(e.first - st.next))
		st.next = e.first
		in.setDecided(st.next)
	}
	// The cursor read before the stream's state: the session's may have
	// moved past the last sequence read since, as messages came.
	if e.last+1 < e.decided && e.last != st.rewound {
		st.rewound = e.last
		in.m.rewinds.Inc()
		in.log.Warn("the stream's last sequence is below the ingest's cursor: the stream lost messages it had acknowledged, and gives their sequences again; messages at those sequences are below the cursor and not decided: their emitters publish them again",
			"last", e.last, "cursor", e.decided)
	}
}

// sessionState is what one consumer session knows.
type sessionState struct {
	stream jetstream.Stream
	// next is the lowest stream sequence not yet decided: every message
	// below it is durably decided by the sink (or gone from the stream).
	next uint64
	// subs, items and inputs are the last batch's slices, cleared (no
	// message or payload kept alive), for the next batch to fill instead
	// of allocating its own (process, submit).
	subs   []submission
	items  []item
	inputs []ledger.Input
	// rewound is the stream's last sequence when it was last seen below
	// the cursor (atEnds).
	rewound uint64
}

// An item is one NATS message of a batch.
type item struct {
	msg     jetstream.Msg // nil if read directly from the stream
	seq     uint64        // stream sequence
	first   int           // its submissions are subs[first : first+n]
	n       int
	ackOnly bool // already decided: acknowledge, do not submit
	// emitter and size are the message's, for its emitter's backlog.
	emitter string
	size    int
	// sum is the SHA-256 of its payload, for its record (msgRecords).
	sum wire.Hash
}

// process submits one batch of messages and acknowledges them. It returns
// an error only if the session must restart (nothing of the batch is then
// acknowledged, and everything is delivered again in order).
func (in *Ingester) process(ctx context.Context, st *sessionState, batch []jetstream.Msg) error {
	next := st.next
	subs, items := st.subs[:0], st.items[:0]
	for _, m := range batch {
		meta, err := m.Metadata()
		if err != nil {
			// Not a JetStream delivery; cannot happen on a pull consumer.
			in.log.Error("ignoring a message without JetStream metadata", "subject", m.Subject(), "err", err)
			continue
		}
		s := meta.Sequence.Stream
		in.m.streamPending.Set(float64(meta.NumPending))
		if s < next {
			in.m.redelivered.Inc()
			items = append(items, item{msg: m, seq: s, ackOnly: true})
			continue
		}
		for q := next; q < s; q++ {
			raw, err := st.stream.GetMsg(ctx, q)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue // acknowledged and removed earlier
			}
			if err != nil {
				return fmt.Errorf("reading stream message %d to fill the gap before %d: %w", q, s, err)
			}
			in.m.gapFilled.Inc()
			items = append(items, in.split(&subs, raw.Subject, raw.Header, raw.Data, q, nil))
		}
		items = append(items, in.split(&subs, m.Subject(), m.Headers(), m.Data(), s, m))
		next = s + 1
	}

	var outs []ledger.Outcome
	if len(subs) > 0 {
		var err error
		if outs, err = in.submit(ctx, st, subs, items); err != nil {
			return err
		}
		if in.afterSubmit != nil {
			if err := in.afterSubmit(); err != nil {
				return err
			}
		}
		// Appended, and Hold closed meanwhile: this node's ledger may
		// not be the log's any more. Acknowledged, the messages would be
		// gone from the stream for the node that holds the lease; not
		// acknowledged, they are delivered again (to this node's next
		// session as duplicates, if it still holds the lease).
		if err := in.hold(); err != nil {
			in.m.heldBack.WithLabelValues("batch").Inc()
			return heldErr(err)
		}
	}
	if len(subs) > 0 {
		in.msgs.put(items, outs) // before the cursor moves past them
	}
	in.acknowledge(ctx, items, outs)
	for _, it := range items {
		if !it.ackOnly {
			in.adm.release(it.emitter, it.size)
		}
	}
	st.next = next
	// The outcomes first: a receipt request waiting for the cursor to
	// move then finds its event's outcome without a lookup (receiptOf).
	in.report(len(items), subs, outs)
	in.setDecided(next)
	st.keep(subs, items)
	return nil
}

// maxKept bounds the submissions a session keeps for its next batch (a
// batch of MaxBatch events holds that many; a larger one's are dropped).
const maxKept = 1 << 14

// keep clears the batch's slices and keeps them for the next one, unless
// they grew past maxKept.
func (st *sessionState) keep(subs []submission, items []item) {
	if cap(subs) > maxKept || cap(items) > maxKept {
		st.subs, st.items, st.inputs = nil, nil, nil
		return
	}
	clear(subs)
	clear(items)
	clear(st.inputs)
	st.subs, st.items, st.inputs = subs[:0], items[:0], st.inputs[:0]
}

// split appends the submissions of one message to subs. Their data is the
// message's payload, which nothing reuses (nats.go gives every delivered or
// fetched message a buffer of its own): it goes to the ledger Owned.
func (in *Ingester) split(subs *[]submission, subject string, h nats.Header, data []byte, seq uint64, m jetstream.Msg) item {
	it := item{msg: m, seq: seq, first: len(*subs), size: len(data), sum: payloadSum(data)}
	emitter, err := in.cfg.Subjects.EmitterOf("admitted", subject)
	if err != nil {
		// A message the stream captured before the admission (an older
		// version's subject).
		emitter, err = in.cfg.Subjects.EmitterOf("events", subject)
	}
	it.emitter = emitter
	if err == nil {
		if cerr := wire.CheckEmitter(emitter); cerr != nil {
			// Named as the emitter published it.
			err = fmt.Errorf("subject %q: %w", in.cfg.Subjects.Events(emitter), cerr)
		}
	}
	var refused *events.RejectError
	if err != nil {
		refused = &events.RejectError{Code: CodeBadSubject, Msg: err.Error()}
	}
	if c := h.Get(wire.HeaderEvents); c != "" && refused == nil {
		parts, err := wire.SplitBatch(c, data)
		if err != nil {
			refused = &events.RejectError{Code: CodeBadBatch, Msg: err.Error()}
		} else {
			for i, p := range parts {
				*subs = append(*subs, submission{Input: ledger.Input{Emitter: emitter, Data: p, Owned: true}, seq: seq, part: i})
			}
			it.n = len(parts)
			return it
		}
	}
	*subs = append(*subs, submission{Input: ledger.Input{Emitter: emitter, MsgID: h.Get(wire.HeaderMsgID), Data: data, Refuse: refused, Owned: true}, seq: seq})
	it.n = 1
	return it
}

// submit calls the sink until it succeeds or ctx ends, keeping the
// messages' acknowledgement deadlines alive meanwhile.
func (in *Ingester) submit(ctx context.Context, st *sessionState, subs []submission, items []item) ([]ledger.Outcome, error) {
	stop := in.keepAlive(items)
	defer stop()
	inputs := st.inputs[:0]
	for i := range subs {
		inputs = append(inputs, subs[i].Input)
	}
	st.inputs = inputs // the sink keeps no input past its call (Sink)
	backoff := in.cfg.RetryMin
	for attempt := 1; ; attempt++ {
		if err := in.hold(); err != nil {
			in.m.heldBack.WithLabelValues("batch").Inc()
			return nil, heldErr(err)
		}
		start := time.Now()
		outs, err := in.cfg.Sink.Append(ctx, inputs)
		if err == nil {
			err = checkOutcomes(inputs, outs)
		}
		if err == nil {
			in.m.submitSeconds.Observe(time.Since(start).Seconds())
			in.health.submitOK()
			return outs, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		in.health.submitFailed(err)
		in.m.submitErrors.Inc()
		in.log.Warn("sink submit failed; retrying the batch", "attempt", attempt, "events", len(subs),
			"first_seq", subs[0].seq, "err", err, "backoff", backoff)
		if !wait(ctx, backoff) {
			return nil, ctx.Err()
		}
		backoff = min(2*backoff, in.cfg.RetryMax)
	}
}

func checkOutcomes(in []ledger.Input, outs []ledger.Outcome) error {
	if len(outs) != len(in) {
		return fmt.Errorf("sink returned %d outcomes for %d inputs", len(outs), len(in))
	}
	for i, o := range outs {
		switch o.Result {
		case ledger.Appended, ledger.Duplicate, ledger.Rejected:
		default:
			return fmt.Errorf("sink returned result %v for input %d", o.Result, i)
		}
	}
	return nil
}

// keepAlive tells the server, every third of AckWait, that the batch's
// messages are still being worked on, until the returned stop is called.
func (in *Ingester) keepAlive(items []item) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(in.cfg.Consumer.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				for _, it := range items {
					if it.msg != nil {
						_ = it.msg.InProgress()
					}
				}
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// acknowledge acknowledges every delivered message of the batch, or
// terminates it with the reason if all its events were rejected. Messages
// read directly from the stream (gap fills) have no acknowledgement
// subject: they are delivered again after AckWait and then acknowledged
// without being resubmitted. Lost acknowledgements are harmless the same
// way, and after a restart the sink answers the resubmitted events as
// duplicates.
func (in *Ingester) acknowledge(ctx context.Context, items []item, outs []ledger.Outcome) {
	var last *item
	for i := range items {
		if it := &items[i]; it.msg != nil && (last == nil || it.seq > last.seq) {
			last = it
		}
	}
	for i := range items {
		it := &items[i]
		if it.msg == nil {
			continue
		}
		body := "+ACK"
		if !it.ackOnly && it.n > 0 && allRejected(outs[it.first:it.first+it.n]) {
			code, why := refusal(outs[it.first])
			reason := code + ": " + why
			if it.n > 1 {
				reason = fmt.Sprintf("all %d events rejected; first: %s", it.n, reason)
			}
			body = "+TERM " + truncate(reason, 1024)
		}
		var err error
		switch {
		case in.syncAck && it == last:
			// Wait for the server: acks are processed in order, so every
			// earlier one has been processed too.
			_, err = in.nc.RequestWithContext(ctx, it.msg.Reply(), []byte(body))
		case body == "+ACK":
			err = it.msg.Ack()
		default:
			err = it.msg.TermWithReason(strings.TrimPrefix(body, "+TERM "))
		}
		if err != nil {
			in.log.Warn("acknowledging failed; the message will be delivered again", "seq", it.seq, "err", err)
			continue
		}
		if in.afterAck != nil && it == last {
			in.afterAck(last.seq)
		}
	}
}

func allRejected(outs []ledger.Outcome) bool {
	for _, o := range outs {
		if o.Result != ledger.Rejected {
			return false
		}
	}
	return true
}

// report counts outcomes, announces rejections and wakes receipt waiters.
func (in *Ingester) report(messages int, subs []submission, outs []ledger.Outcome) {
	in.m.batchMessages.Observe(float64(messages))
	in.m.batchEvents.Observe(float64(len(subs)))
	n := map[ledger.Result]int{}
	for i, o := range outs {
		n[o.Result]++
		if o.Result == ledger.Rejected {
			in.announce(subs[i], o)
			in.logRejection(subs[i], o)
		}
		if id := eventID(o); id != "" {
			in.waiters.notify(subs[i].Emitter, id, o)
		}
	}
	for _, r := range results {
		if n[r] > 0 {
			in.m.outcomes.WithLabelValues(r.String()).Add(float64(n[r]))
		}
	}
}

// results are the outcomes counted by zarlog_ingest_outcomes_total.
var results = []ledger.Result{ledger.Appended, ledger.Duplicate, ledger.Rejected}

// logRejection logs one line per rejected event (emitter, id, code,
// reason), at most rejectLogRate lines a second with bursts of
// rejectLogBurst; the lines held back are counted in the next line.
func (in *Ingester) logRejection(s submission, o ledger.Outcome) {
	now := in.cfg.Now()
	in.rejLogMu.Lock()
	in.rejTokens = min(rejectLogBurst, in.rejTokens+now.Sub(in.rejRefill).Seconds()*rejectLogRate)
	in.rejRefill = now
	if in.rejTokens < 1 {
		in.rejSkipped++
		in.rejLogMu.Unlock()
		return
	}
	in.rejTokens--
	skipped := in.rejSkipped
	in.rejSkipped = 0
	in.rejLogMu.Unlock()
	code, reason := refusal(o)
	args := []any{"emitter", truncate(s.Emitter, 64), "id", truncate(eventID(o), 160), "code", code,
		"reason", truncate(reason, 512), "seq", s.seq}
	if skipped > 0 {
		args = append(args, "rejections_not_logged_before", skipped)
	}
	in.log.Info("event rejected", args...)
}

// The rate of rejection log lines.
const (
	rejectLogRate  = 20  // lines a second
	rejectLogBurst = 100 // lines at once
)

// announce publishes a rejection on the emitter's rejected subject. It is
// best effort: the durable record is the ledger's rejected store, which
// receipts also consult.
func (in *Ingester) announce(s submission, o ledger.Outcome) {
	if wire.CheckEmitter(s.Emitter) != nil {
		return // no subject to announce on
	}
	sum := sha256.Sum256(s.Data)
	code, reason := refusal(o)
	r := wire.Rejection{
		Code:   code,
		ID:     eventID(o),
		MsgID:  s.MsgID,
		Part:   s.part,
		Reason: truncate(reason, wire.MaxReasonLength),
		Seq:    s.seq,
		SHA256: hex.EncodeToString(sum[:]),
	}
	if wire.CheckEventID(r.ID) != nil {
		r.ID = ""
	}
	if len(r.MsgID) > 256 {
		r.MsgID = ""
	}
	b, err := wire.MarshalRejection(r)
	if err == nil {
		err = in.nc.Publish(in.cfg.Subjects.Rejected(s.Emitter), b)
	}
	if err != nil {
		in.m.announceErrors.Inc()
		in.log.Warn("announcing a rejection failed", "emitter", s.Emitter, "seq", s.seq, "code", code, "err", err)
	}
}

// truncate cuts s to at most n bytes without leaving a split UTF-8
// sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// wait waits for d or the end of ctx, and reports whether d passed.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// A byteGate bounds the bytes of the messages waiting between the puller
// and the batches: take waits until n bytes fit (a message larger than the
// whole bound passes alone).
type byteGate struct {
	mu     sync.Mutex
	cond   *sync.Cond
	held   int
	max    int
	closed bool
}

func newByteGate(max int) *byteGate {
	g := &byteGate{max: max}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// take waits until n more bytes fit and takes them; false once closed.
func (g *byteGate) take(n int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for !g.closed && g.held > 0 && g.held+n > g.max {
		g.cond.Wait()
	}
	g.held += n
	return !g.closed
}

func (g *byteGate) give(n int) {
	g.mu.Lock()
	g.held -= n
	g.mu.Unlock()
	g.cond.Broadcast()
}

func (g *byteGate) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.cond.Broadcast()
}
