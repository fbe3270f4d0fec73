package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/bucket"
	"github.com/zarlog/zarlog/follow"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
)

// Errors of a Node.
var (
	// ErrDiverged is returned by Prepare when the ledger holds leaves that
	// are not the bucket's log (a sequencer that died before publishing
	// them, and whose place another took): the caller moves the ledger
	// aside and opens an empty one, which Prepare fills from the bucket.
	ErrDiverged = errors.New("the local ledger has leaves the bucket's log does not have")
	// ErrNotLeader is returned by Publish on a node that does not hold
	// the lock: nothing is published. It matches ledger.ErrNotSequencer,
	// so that the ledger logs it as expected, not as a failure.
	ErrNotLeader error = notLeader{}
)

type notLeader struct{}

func (notLeader) Error() string        { return "this node does not hold the log's lock" }
func (notLeader) Is(target error) bool { return target == ledger.ErrNotSequencer }

// DefaultLease is Config.Lease's default.
const DefaultLease = 6 * time.Second

// Config configures a Node. Bucket, LogKey and NodeID are required.
type Config struct {
	// Bucket is where the log is kept.
	Bucket bucket.Store
	// LogKey verifies the log's checkpoints.
	LogKey note.Verifier
	// NodeID names this node in the lock (CheckNodeID). A node that finds
	// its own id in the lock when it starts (a restart) takes the lock
	// back at once; any other waits for the lease to lapse.
	NodeID string
	// Standby: never create the log in an empty bucket; wait for a
	// primary's. (Either kind takes the lock over when it lapses.)
	Standby bool
	// Lease is how long the lock may go unwritten before another node
	// takes it over; the holder renews it every Lease/4. Zero means
	// DefaultLease.
	Lease time.Duration
	// Concurrency is how many objects are read or written at once. Zero
	// means 16.
	Concurrency int
	// Logger receives the node's logs. Nil discards them.
	Logger *slog.Logger
	// Registerer receives the node's metrics (zarlog_storage_*). Nil:
	// they are not registered.
	Registerer prometheus.Registerer
	// Now is the clock of Fresh: when each write of the lock was sent, and
	// how long ago that is. Nil means time.Now, whose readings carry Go's
	// monotonic clock (a change of the wall clock does not move them).
	Now func() time.Time
}

// A Node keeps one ledger's log in a bucket, as its sequencer or as a
// standby. Create it with New, give its Publish to the ledger's
// Config.Publish, then call Prepare with the ledger and Run.
type Node struct {
	cfg Config
	log *slog.Logger
	m   *metrics
	src *follow.Source

	l *ledger.Ledger // set by Prepare

	mu       sync.Mutex // guards the leader's state and serializes lock writes
	leader   bool
	lock     Lock   // the lock as last written or read
	etag     string // its ETag
	size     uint64 // the tree size of the lock's checkpoint: tiles written up to it
	pubNote  []byte // the public checkpoint object as last written or read
	pubEtag  string
	lastPut  time.Time // when this node sent its last successful write of the lock
	lostErr  error
	leading  chan struct{}
	lost     chan struct{}
	lostOnce sync.Once

	// Fresh's state, read without mu (a commit holds mu while it writes
	// the tiles): holding mirrors leader, and freshUntil is when (by
	// cfg.Now, in nanoseconds after base) the last successful write of
	// the lock stops making this node fresh; 0 before the first.
	base       time.Time
	holding    atomic.Bool
	freshUntil atomic.Int64
}

// New returns a Node for cfg. It does not touch the network.
func New(cfg Config) (*Node, error) {
	if cfg.Bucket == nil || cfg.LogKey == nil {
		return nil, errors.New("storage: Bucket and LogKey are required")
	}
	if err := CheckNodeID(cfg.NodeID); err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	cfg.Lease = cfg.Lease.Round(time.Millisecond)
	if cfg.Lease < time.Millisecond {
		cfg.Lease = time.Millisecond
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 16
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n := &Node{cfg: cfg, log: log, leading: make(chan struct{}), lost: make(chan struct{}), base: cfg.Now()}
	m, err := newMetrics(cfg.Registerer, func() float64 {
		if n.Fresh() {
			return 1
		}
		return 0
	})
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	n.m = m
	src, err := follow.NewSource(follow.SourceConfig{URL: cfg.Bucket.URL(), Attempts: 4, RetryMin: 50 * time.Millisecond, RetryMax: time.Second,
		Get: func(ctx context.Context, path string) ([]byte, error) {
			b, _, err := cfg.Bucket.Get(ctx, path, "")
			if errors.Is(err, bucket.ErrNotFound) {
				return nil, fmt.Errorf("%w: %w", merkle.ErrNotFound, err)
			}
			return b, err
		}})
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	n.src = src
	return n, nil
}

// ID returns the node's id in the lock.
func (n *Node) ID() string { return n.cfg.NodeID }

// URL names the bucket: s3://BUCKET/PREFIX/.
func (n *Node) URL() string { return n.cfg.Bucket.URL() }

// Leading returns a channel closed once this node holds the lock.
func (n *Node) Leading() <-chan struct{} { return n.leading }

// Lost returns a channel closed when this node has lost the lock it held
// (LostErr says to whom).
func (n *Node) Lost() <-chan struct{} { return n.lost }

// LostErr returns why the node lost the lock, wrapping ledger.ErrFenced,
// or nil.
func (n *Node) LostErr() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lostErr
}

// IsLeader reports whether this node holds the lock.
func (n *Node) IsLeader() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.leader
}

// Fresh reports whether this node holds the log's lock and sent its last
// successful write of it (a renewal, a checkpoint's commit, the takeover)
// less than half its Lease ago, by Config.Now. While it is fresh, no other
// node has taken the log over, so what this node answers from its ledger
// is the log's state; `zarlog serve` ingests and answers receipt and
// status requests only while it is (package ingest's Config.Hold, Hold).
//
// Why: another node takes the log over only by writing the lock If-Match
// the ETag it read, and only once the lock has not changed for the Lease
// by its own clock since it saw it change (Run). This node's write, sent
// at t and acknowledged, was applied after t; a takeover that succeeds
// after it must match its ETag or a later one, so the other node read the
// lock after t and then waited the whole Lease: it cannot write before
// t + Lease (with clocks of the same rate). Half the lease is kept for
// what that leaves out: the other node's clock running faster than this
// one's (up to twice as fast), and the time between this check and the
// reply or append it allows. Lease/2 also leaves room for the renewals,
// sent every Lease/4, to keep a node fresh through a slow write or two.
//
// What it cannot cover: a pause of this process between Fresh and the
// reply it allows longer than the rest of the half lease, and a pause of
// the whole machine that stops its monotonic clock (a suspended virtual
// machine: Linux's CLOCK_MONOTONIC does not count a suspend). Such a node
// can still never publish a checkpoint (every publication is a
// compare-and-swap on the lock); it could answer from its outdated state
// until its next write of the lock fails.
func (n *Node) Fresh() bool {
	return n.holding.Load() && n.cfg.Now().Sub(n.base) < time.Duration(n.freshUntil.Load())
}

// Hold returns nil while the node is Fresh, and otherwise an error saying
// why it is not (package ingest's Config.Hold).
func (n *Node) Hold() error {
	if !n.holding.Load() {
		return ErrNotLeader
	}
	until := time.Duration(n.freshUntil.Load())
	if until == 0 {
		return errors.New("this node has not written the log's lock yet")
	}
	if ago := n.cfg.Now().Sub(n.base) - (until - n.cfg.Lease/2); ago >= n.cfg.Lease/2 {
		return fmt.Errorf("this node's last successful write of the log's lock was sent %v ago, half its lease of %v or more: another node may take the log over",
			ago.Round(time.Millisecond), n.cfg.Lease)
	}
	return nil
}

// setLeader records whether this node holds the lock. n.mu is held.
func (n *Node) setLeader(on bool) {
	n.leader = on
	n.holding.Store(on)
	if !on {
		n.freshUntil.Store(0)
	}
}

// readLock reads and parses the lock, and verifies its checkpoint.
func (n *Node) readLock(ctx context.Context, ifNoneMatch string) (Lock, merkle.Checkpoint, string, error) {
	b, etag, err := n.cfg.Bucket.Get(ctx, LockKey, ifNoneMatch)
	if err != nil {
		return Lock{}, merkle.Checkpoint{}, "", err
	}
	k, err := ParseLock(b)
	if err != nil {
		return Lock{}, merkle.Checkpoint{}, "", fmt.Errorf("storage: %s%s: %w", n.URL(), LockKey, err)
	}
	cp, err := merkle.Open(k.Note, n.cfg.LogKey)
	if err != nil {
		return Lock{}, merkle.Checkpoint{}, "", fmt.Errorf("storage: the checkpoint in %s%s: %w", n.URL(), LockKey, err)
	}
	return k, cp, etag, nil
}

// Prepare brings ledger l up to the bucket's log: it reads the lock and
// imports the leaves the bucket has and l lacks, verified, so that l
// publishes the bucket's checkpoint. It returns ErrDiverged if l has leaves
// that are not the bucket's (see ErrDiverged) — unless this node holds the
// lock, when they are leaves it appended and will publish. An empty bucket
// leaves l as it is: the first checkpoint this node publishes as the
// primary creates the log there.
func (n *Node) Prepare(ctx context.Context, l *ledger.Ledger) error {
	n.l = l
	k, cp, _, err := n.readLock(ctx, "")
	switch {
	case errors.Is(err, bucket.ErrNotFound):
		n.log.Info("storage: the bucket has no log yet", "bucket", n.URL())
		return nil
	case err != nil:
		return err
	}
	size, err := l.Size()
	if err != nil {
		return err
	}
	if size > cp.Size {
		if k.Holder != n.cfg.NodeID {
			return fmt.Errorf("storage: %w: the ledger has %d leaves, the bucket's checkpoint %d, and the log is %s's",
				ErrDiverged, size, cp.Size, k.Holder)
		}
		root, err := merkle.RootHash(ctx, l.TileReader(), cp.Size)
		if err != nil {
			return fmt.Errorf("storage: the ledger's root at %d: %w", cp.Size, err)
		}
		if root != cp.Hash {
			return fmt.Errorf("storage: %w: the ledger's tree at %d is not the bucket's", ErrDiverged, cp.Size)
		}
		n.log.Info("storage: the ledger has leaves beyond the bucket's checkpoint; this node held the log and publishes them",
			"ledger_size", size, "bucket_size", cp.Size)
		return nil
	}
	if err := n.catchUp(ctx, k.Note, cp); err != nil {
		if errors.Is(err, ledger.ErrTampered) {
			return fmt.Errorf("storage: %w: %w", ErrDiverged, err)
		}
		return err
	}
	return nil
}

// catchUp imports the bucket's leaves up to cp (whose signed note is
// signed) into the ledger, in runs of at most catchUpBundles entry
// bundles, each checked against cp (its root, or a root at its end proved
// consistent with cp's by the bucket's tiles), and publishes cp.
func (n *Node) catchUp(ctx context.Context, signed []byte, cp merkle.Checkpoint) error {
	l := n.l
	for {
		size, err := l.Size()
		if err != nil {
			return err
		}
		if size > cp.Size {
			return fmt.Errorf("storage: the ledger has %d leaves, more than the bucket's checkpoint %d: %w", size, cp.Size, ErrDiverged)
		}
		if size == cp.Size {
			if pub, _, _ := l.Latest(); bytes.Equal(pub, signed) {
				return nil
			}
			return l.Import(ctx, ledger.ImportBatch{Start: size, Root: cp.Hash, Note: signed})
		}
		end := min(cp.Size, (size/merkle.TileWidth+catchUpBundles)*merkle.TileWidth)
		leaves, times, err := n.fetch(ctx, size, end, cp.Size)
		if err != nil {
			return err
		}
		b := ledger.ImportBatch{Start: size, Leaves: leaves, Times: times}
		if end == cp.Size {
			b.Root, b.Note = cp.Hash, signed
		} else {
			r, err := merkle.RootHash(ctx, n.src, end)
			if err != nil {
				return fmt.Errorf("storage: the bucket's root at %d: %w", end, err)
			}
			proof, err := merkle.ConsistencyProof(ctx, n.src, end, cp.Size)
			if err != nil {
				return fmt.Errorf("storage: the bucket's consistency proof from %d to %d: %w", end, cp.Size, err)
			}
			if err := merkle.CheckConsistency(end, cp.Size, r, cp.Hash, proof); err != nil {
				return fmt.Errorf("storage: the bucket's tiles at %d are not those of its checkpoint of size %d: %w", end, cp.Size, err)
			}
			b.Root = r
		}
		start := time.Now()
		if err := l.Import(ctx, b); err != nil {
			return fmt.Errorf("storage: importing leaves %d to %d from the bucket: %w", size, end, err)
		}
		n.m.imported.Add(float64(end - size))
		n.log.Debug("storage: imported from the bucket", "from", size, "to", end, "of", cp.Size, "took", time.Since(start))
	}
}

// catchUpBundles is how many entry bundles one Import takes.
const catchUpBundles = 64

// fetch reads the leaves [start, end) of the bucket's tree of size size,
// with their append times.
func (n *Node) fetch(ctx context.Context, start, end, size uint64) ([][]byte, []ledger.AppendTime, error) {
	first, last := start/merkle.TileWidth, (end-1)/merkle.TileWidth
	type res struct {
		entries [][]byte
		times   []ledger.AppendTime
		err     error
	}
	out := make([]res, last-first+1)
	sem := make(chan struct{}, n.cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range out {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			t, _ := merkle.TileAt(merkle.EntriesLevel, first+uint64(i), size)
			e, _, err := n.src.Bundle(ctx, t)
			if err != nil {
				out[i].err = fmt.Errorf("storage: %w", err)
				return
			}
			ts, err := n.times(ctx, t)
			out[i] = res{e, ts, err}
		})
	}
	wg.Wait()
	var leaves [][]byte
	var times []ledger.AppendTime
	for i, r := range out {
		if r.err != nil {
			return nil, nil, r.err
		}
		b := first + uint64(i)
		lo, hi := b*merkle.TileWidth, b*merkle.TileWidth+uint64(len(r.entries))
		from, to := max(lo, start), min(hi, end)
		leaves = append(leaves, r.entries[from-lo:to-lo]...)
		for _, t := range r.times {
			if t.Index < to {
				times = append(times, t)
			}
		}
	}
	// Times before start but the last are not needed.
	for len(times) > 1 && times[1].Index <= start {
		times = times[1:]
	}
	return leaves, times, nil
}

// times reads the append times of entry bundle t, from its own width's
// object or, if that is gone, the full bundle's.
func (n *Node) times(ctx context.Context, t merkle.Tile) ([]ledger.AppendTime, error) {
	b, _, err := n.cfg.Bucket.Get(ctx, TimesPath(t), "")
	pt := t
	if errors.Is(err, bucket.ErrNotFound) && !t.IsFull() {
		pt.Width = merkle.TileWidth
		b, _, err = n.cfg.Bucket.Get(ctx, TimesPath(pt), "")
	}
	if err != nil {
		return nil, fmt.Errorf("storage: the append times of %s: %w", t.Path(), err)
	}
	ts, err := ParseTimes(pt, b)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	end := t.Index*merkle.TileWidth + uint64(t.Width)
	for len(ts) > 0 && ts[len(ts)-1].Index >= end {
		ts = ts[:len(ts)-1]
	}
	return ts, nil
}
