package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zarlog/zarlog/wire"
)

// StreamConfig configures the JetStream stream that holds events until the
// ledger has decided them. The stream is a work queue: a message leaves it
// when the ingest acknowledges (or terminates) it, so its size is the
// ledger's backlog, and its limits are the backlog's limits.
type StreamConfig struct {
	// Name of the stream. Zero means "ZARLOG_EVENTS".
	Name string
	// Replicas is the number of replicas (1, 3 or 5 on a cluster). Zero
	// means 1. With 1, a publish ack means the message was written to the
	// one server's file store (the OS page cache, see docs/NATS.md); with 3
	// or 5, that a quorum of servers has it.
	Replicas int
	// Duplicates is JetStream's duplicate window: a message whose
	// Nats-Msg-Id was seen within it is dropped (and acknowledged as a
	// duplicate). Zero means 30 s. Beyond the window the ledger's own dedup
	// by event id makes a resend exact; the window only saves work, and the
	// server keeps every id of the window in memory.
	Duplicates time.Duration
	// MaxMsgs and MaxBytes bound the backlog. Zero means DefaultMaxMsgs
	// messages and DefaultMaxBytes; a negative value means unlimited. When a
	// limit is reached the stream refuses new messages (discard policy
	// "new"): publishers get an error naming the limit (the SDK's
	// ErrBacklog), so nothing already acknowledged is ever dropped.
	// JetStream reserves MaxBytes of its store when the stream is created:
	// `zarlog serve` and `zarlog bench` size it from the embedded server's
	// store limit (Server.StreamBytes).
	MaxMsgs  int64
	MaxBytes int64
	// MaxAge, if positive, drops messages older than it, consumed or not:
	// an event the ledger has not decided by then is lost from the stream
	// (its publisher holds no receipt for it and must publish it again).
	// Zero means never.
	MaxAge time.Duration
	// MaxMsgSize is the largest message in bytes. Zero means 1 MiB (the
	// NATS default max_payload), which fits a multi-event message of many
	// events and any single event (wire.MaxEventSize).
	MaxMsgSize int32
}

// Defaults of StreamConfig's limits: the documented backlog past which
// publishers are refused (docs/NATS.md §6 "Backpressure").
const (
	DefaultMaxMsgs  = 1_000_000
	DefaultMaxBytes = 8 << 30
)

// ConsumerConfig configures the ingest's durable pull consumer.
type ConsumerConfig struct {
	// Name of the durable consumer. Zero means "zarlog-ledger".
	Name string
	// AckWait is how long the server waits for an acknowledgement before it
	// redelivers. Zero means 30 s. The ingest sends "in progress" while a
	// slow Append runs, so AckWait only matters when the ingest is gone.
	AckWait time.Duration
	// MaxAckPending bounds the messages delivered and not yet acknowledged:
	// when the ledger is slow, the server stops delivering and the backlog
	// stays in the stream, not in memory. Zero means 16384.
	MaxAckPending int
}

func (c StreamConfig) withDefaults() StreamConfig {
	if c.Name == "" {
		c.Name = "ZARLOG_EVENTS"
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.Duplicates == 0 {
		c.Duplicates = 30 * time.Second
	}
	if c.MaxMsgs == 0 {
		c.MaxMsgs = DefaultMaxMsgs
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.MaxMsgSize == 0 {
		c.MaxMsgSize = 1 << 20
	}
	return c
}

func (c ConsumerConfig) withDefaults() ConsumerConfig {
	if c.Name == "" {
		c.Name = "zarlog-ledger"
	}
	if c.AckWait == 0 {
		c.AckWait = 30 * time.Second
	}
	if c.MaxAckPending == 0 {
		c.MaxAckPending = 16384
	}
	return c
}

// jsStream returns the JetStream configuration of the events stream.
func (c StreamConfig) jsStream(subjects wire.Subjects) jetstream.StreamConfig {
	c = c.withDefaults()
	return jetstream.StreamConfig{
		Name:        c.Name,
		Description: "zarlog events awaiting the ledger (work queue)",
		Subjects:    []string{subjects.AdmittedWildcard()},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    c.Replicas,
		Duplicates:  c.Duplicates,
		MaxMsgs:     c.MaxMsgs,
		MaxBytes:    c.MaxBytes,
		MaxMsgSize:  c.MaxMsgSize,
		Discard:     jetstream.DiscardNew,
		MaxAge:      c.MaxAge, // 0 by default: never drop an unconsumed event for its age
		// An operator deleting a message would delete an event an emitter
		// was told was received.
		DenyDelete: true,
		DenyPurge:  true,
		// Default persist mode: a message is written to the file store
		// before the publish is acknowledged (docs/NATS.md).
		PersistMode: jetstream.DefaultPersistMode,
	}
}

// jsConsumer returns the JetStream configuration of the ingest's consumer.
func (c ConsumerConfig) jsConsumer(subjects wire.Subjects) jetstream.ConsumerConfig {
	c = c.withDefaults()
	return jetstream.ConsumerConfig{
		Durable:     c.Name,
		Description: "the zarlog ledger's ingest",
		// Every message of the stream: those of the admission's subject,
		// and those an older version's stream captured on the events
		// subject before its subjects were changed.
		FilterSubject: "",
		DeliverPolicy: jetstream.DeliverAllPolicy,
		// A work queue requires explicit acks: each message is acknowledged
		// (or terminated) once the batch holding it is durable.
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.AckWait,
		MaxDeliver:    -1, // the ingest, not the server, decides when to give up (never)
		MaxAckPending: c.MaxAckPending,
		ReplayPolicy:  jetstream.ReplayInstantPolicy,
	}
}

// ErrStreamConfig is wrapped when an existing stream cannot serve as the
// events stream (for example its retention policy is not work queue).
var ErrStreamConfig = errors.New("events stream misconfigured")

// EnsureStream creates the events stream, or updates the mutable settings of
// an existing one to cfg. It fails with ErrStreamConfig if an existing
// stream differs in a way that cannot be updated.
func EnsureStream(ctx context.Context, js jetstream.JetStream, subjects wire.Subjects, cfg StreamConfig) (jetstream.Stream, error) {
	want := cfg.jsStream(subjects)
	s, err := js.CreateOrUpdateStream(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("creating or updating stream %s: %w", want.Name, err)
	}
	got := s.CachedInfo().Config
	if got.Retention != jetstream.WorkQueuePolicy || got.Storage != jetstream.FileStorage ||
		got.Discard != jetstream.DiscardNew || got.Replicas != want.Replicas {
		return nil, fmt.Errorf("%w: stream %s has retention %s, storage %s, discard %s, %d replicas; want workqueue, file, new, %d",
			ErrStreamConfig, want.Name, got.Retention, got.Storage, got.Discard, got.Replicas, want.Replicas)
	}
	return s, nil
}

// ensureConsumer creates or updates the ingest's durable consumer.
func ensureConsumer(ctx context.Context, s jetstream.Stream, subjects wire.Subjects, cfg ConsumerConfig) (jetstream.Consumer, error) {
	want := cfg.jsConsumer(subjects)
	c, err := s.CreateOrUpdateConsumer(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("creating or updating consumer %s: %w", want.Durable, err)
	}
	return c, nil
}
