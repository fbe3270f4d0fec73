package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zarlog/zarlog/bucket"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
)

// Run follows the bucket until this node takes the lock (Leading is
// closed; it logs "took over the log"), then renews the lock until ctx
// ends (nil) or another node takes it (an error wrapping ledger.ErrFenced;
// Lost is closed, and the ledger's next Publish fails the same way). A
// non-standby node that finds no log in the bucket takes the lock at once:
// its first checkpoint creates the log. Call Prepare first.
func (n *Node) Run(ctx context.Context) error {
	if n.l == nil {
		return errors.New("storage: Run before Prepare")
	}
	if err := n.follow(ctx); err != nil {
		return err
	}
	return n.renew(ctx)
}

// follow reads the lock every Lease/8, imports each new checkpoint, and
// returns once this node holds the lock (or ctx ends).
func (n *Node) follow(ctx context.Context) error {
	var (
		etag    string
		k       Lock
		cp      merkle.Checkpoint
		changed = time.Now() // when the lock last changed, as far as this node saw
		lease   = n.cfg.Lease
		first   = true
		errLog  logLimiter
		behind  bool // the last checkpoint read is not imported yet
	)
	poll := max(n.cfg.Lease/8, 10*time.Millisecond)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		t.Reset(poll)
		nk, ncp, netag, err := n.readLock(ctx, etag)
		switch {
		case errors.Is(err, bucket.ErrNotModified):
		case errors.Is(err, bucket.ErrNotFound):
			if !n.cfg.Standby {
				n.log.Info("storage: the bucket has no log: this node creates it", "bucket", n.URL())
				return n.lead(ctx, Lock{}, "", 0, 0)
			}
			if errLog.ok(time.Minute) {
				n.log.Info("storage: the bucket has no log yet; a standby waits for the primary to create it", "bucket", n.URL())
			}
			continue
		case err != nil:
			n.m.errors.WithLabelValues("follow").Inc()
			if errLog.ok(30 * time.Second) {
				n.log.Warn("storage: reading the lock", "err", err)
			}
			continue
		default:
			if first && nk.Holder == n.cfg.NodeID {
				// This node held the log before it restarted: nobody
				// else sequences it, take it back at once.
				n.log.Info("storage: this node held the log before it restarted; taking it back", "term", nk.Term)
				if err := n.takeover(ctx, nk, ncp, netag, 0); err == nil {
					return nil
				} else if ctx.Err() != nil {
					return nil
				}
			}
			k, cp, etag, changed, lease, behind = nk, ncp, netag, time.Now(), nk.Lease, true
			n.m.term.Set(float64(k.Term))
			n.m.bucketSize.Set(float64(cp.Size))
		}
		first = false
		if etag == "" {
			continue
		}
		if behind {
			if err := n.catchUp(ctx, k.Note, cp); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				n.m.errors.WithLabelValues("follow").Inc()
				if errLog.ok(10 * time.Second) {
					n.log.Error("storage: following the bucket: the checkpoint could not be imported", "size", cp.Size, "err", err)
				}
				if errors.Is(err, ledger.ErrStopped) || errors.Is(err, ErrDiverged) {
					return fmt.Errorf("storage: following %s: %w", n.URL(), err)
				}
				continue
			}
			behind = false
		}
		if waited := time.Since(changed); waited >= lease {
			n.log.Warn("storage: the lease lapsed: the holder has not written the lock", "holder", k.Holder, "term", k.Term, "for", waited.Round(time.Millisecond))
			if err := n.takeover(ctx, k, cp, etag, waited); err == nil {
				return nil
			} else if ctx.Err() != nil {
				return nil
			} else if !errors.Is(err, bucket.ErrPrecondition) {
				n.log.Warn("storage: taking over", "err", err)
			}
			// Someone wrote the lock meanwhile: read it again.
			etag = ""
		}
	}
}

// takeover takes the lock k (whose ETag is etag and checkpoint cp) over:
// the ledger must hold cp's tree, then the lock is written with the next
// term, If-Match etag.
func (n *Node) takeover(ctx context.Context, k Lock, cp merkle.Checkpoint, etag string, waited time.Duration) error {
	start := time.Now()
	size, err := n.l.Size()
	if err != nil {
		return err
	}
	if size > cp.Size {
		// Only this node's own leaves, after a restart (Prepare checked
		// them): its first Publish writes them.
		root, err := merkle.RootHash(ctx, n.l.TileReader(), cp.Size)
		if err != nil || root != cp.Hash {
			return fmt.Errorf("storage: the ledger's tree at %d is not the lock's checkpoint's (%v): %w", cp.Size, err, ErrDiverged)
		}
	} else {
		if err := n.catchUp(ctx, k.Note, cp); err != nil {
			return fmt.Errorf("storage: bringing the ledger to the lock's checkpoint of size %d: %w", cp.Size, err)
		}
		if pub, _, _ := n.l.Latest(); !bytes.Equal(pub, k.Note) {
			return fmt.Errorf("storage: the ledger publishes another checkpoint than the lock's, of size %d", cp.Size)
		}
	}
	nk := Lock{Holder: n.cfg.NodeID, Term: k.Term + 1, Renewal: k.Renewal + 1, Lease: n.cfg.Lease, Note: k.Note}
	return n.lead(ctx, nk, etag, cp.Size, waited+time.Since(start))
}

// lead writes the lock k as this node's (If-Match etag; none: the log's
// first lock, written by the first Publish) and makes this node the
// leader.
func (n *Node) lead(ctx context.Context, k Lock, etag string, size uint64, took time.Duration) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.etag, n.size = etag, size
	if etag == "" {
		k.Term = 1 // the log's first lock, written by the first Publish
		n.lock = k
	}
	if etag != "" {
		if err := n.writeLock(ctx, k); err != nil {
			return err // bucket.ErrPrecondition: another node wrote it first
		}
		// The public checkpoint: the lock's, if the last holder died
		// before writing it.
		cur, cetag, err := n.cfg.Bucket.Get(ctx, "checkpoint", "")
		switch {
		case err == nil:
			n.pubNote, n.pubEtag = cur, cetag
		case !errors.Is(err, bucket.ErrNotFound):
			n.log.Warn("storage: reading the public checkpoint", "err", err)
		}
		if !bytes.Equal(n.pubNote, k.Note) {
			if err := n.putCheckpoint(ctx, k.Note, size); err != nil {
				n.log.Warn("storage: writing the public checkpoint after taking over", "err", err)
			}
		}
	}
	n.setLeader(true)
	n.m.leader.Set(1)
	n.m.term.Set(float64(k.Term))
	if etag != "" {
		n.m.takeovers.Inc()
		n.m.takeoverSec.Set(took.Seconds())
		n.log.Warn("storage: took over the log: this node is now the primary", "node", n.cfg.NodeID, "term", k.Term, "size", size, "after", took.Round(time.Millisecond))
	} else {
		n.log.Info("storage: this node is the primary", "node", n.cfg.NodeID, "term", k.Term)
	}
	close(n.leading)
	return nil
}

// renew rewrites the lock every Lease/4 when nothing was published since,
// until ctx ends or the lock is lost. It counts from when the last write
// was sent, and looks every Lease/16, so that a renewal is sent at most
// 5/16 of the lease after the last: with Fresh's half lease, a node stays
// fresh through writes that take up to 3/16 of the lease (1.1 s of the
// default 6 s) each.
func (n *Node) renew(ctx context.Context) error {
	every := max(n.cfg.Lease/4, 5*time.Millisecond)
	t := time.NewTicker(every / 4)
	defer t.Stop()
	var errLog logLimiter
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-n.lost:
			return n.LostErr()
		case <-t.C:
		}
		n.mu.Lock()
		var err error
		if n.etag != "" && time.Since(n.lastPut) >= every {
			k := n.lock
			k.Renewal++
			err = n.writeLock(ctx, k)
		}
		lost := n.lostErr
		n.mu.Unlock()
		if lost != nil {
			return lost
		}
		if err != nil {
			n.m.errors.WithLabelValues("renew").Inc()
			if errLog.ok(10 * time.Second) {
				n.log.Warn("storage: renewing the lease", "err", err)
			}
		}
	}
}

// A logLimiter says whether a repeated log line may be written again.
type logLimiter struct{ last time.Time }

func (l *logLimiter) ok(every time.Duration) bool {
	if time.Since(l.last) < every {
		return false
	}
	l.last = time.Now()
	return true
}
