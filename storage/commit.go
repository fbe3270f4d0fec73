package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zarlog/zarlog/bucket"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
)

// Cache-Control of the objects: tiles and bundles never change at their
// path; the checkpoint does all the time.
const (
	immutable = "public, max-age=31536000, immutable"
	noCache   = "no-cache"
)

// Publish makes the ledger's checkpoint c durable in the bucket (the
// package doc's steps 1–3); it is the ledger's Config.Publish. It returns
// ErrNotLeader on a node that does not hold the lock, and an error
// wrapping ledger.ErrFenced once another node has taken it.
func (n *Node) Publish(ctx context.Context, c ledger.Commit) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.lostErr != nil {
		return n.lostErr
	}
	if !n.leader {
		return ErrNotLeader
	}
	if n.etag == "" {
		n.lock.Term = 1 // the log's first lock
	}
	start := time.Now()
	size := c.Checkpoint.Size
	if size < n.size {
		return fmt.Errorf("storage: the checkpoint of size %d is smaller than the bucket's, %d", size, n.size)
	}
	if size > n.size || n.etag == "" {
		if err := n.putTiles(ctx, c, n.size, size); err != nil {
			n.m.errors.WithLabelValues("commit").Inc()
			if errors.Is(err, ledger.ErrFenced) {
				return n.lose(err)
			}
			return err
		}
	}
	if !bytes.Equal(n.lock.Note, c.Note) || n.etag == "" {
		k := n.lock
		k.Holder, k.Note, k.Lease = n.cfg.NodeID, c.Note, n.cfg.Lease
		k.Renewal++
		if err := n.writeLock(ctx, k); err != nil {
			n.m.errors.WithLabelValues("commit").Inc()
			return err
		}
		n.size = size
	}
	if !bytes.Equal(n.pubNote, c.Note) {
		if err := n.putCheckpoint(ctx, c.Note, size); err != nil {
			n.m.errors.WithLabelValues("commit").Inc()
			return err
		}
	}
	n.m.putSeconds.Observe(time.Since(start).Seconds())
	return nil
}

// putTiles writes the tiles, entry bundles and append times that a tree of
// newSize has and one of oldSize has not, in parallel. n.mu is held.
func (n *Node) putTiles(ctx context.Context, c ledger.Commit, oldSize, newSize uint64) error {
	tiles := merkle.NewTiles(oldSize, newSize)
	type job struct {
		key, kind string
		tile      merkle.Tile
	}
	var jobs []job
	for _, t := range tiles {
		jobs = append(jobs, job{t.Path(), "tile", t})
		if t.IsEntries() {
			jobs = append(jobs, job{TimesPath(t), "times", t})
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, n.cfg.Concurrency)
	var wg sync.WaitGroup
	for i, j := range jobs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			errs[i] = ctx.Err()
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			var data []byte
			var err error
			if j.kind == "tile" {
				data, err = c.ReadTile(ctx, j.tile)
			} else {
				var ts []ledger.AppendTime
				first := j.tile.Index * merkle.TileWidth
				if ts, err = c.AppendTimes(ctx, first, first+uint64(j.tile.Width)); err == nil {
					data = FormatTimes(ts)
				}
			}
			if err == nil {
				err = n.putImmutable(ctx, j.key, data)
			}
			if err == nil {
				n.m.puts.WithLabelValues(j.kind).Inc()
			} else {
				cancel()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("storage: writing the tiles from %d to %d: %w", oldSize, newSize, err)
	}
	return nil
}

// putImmutable creates an object that never changes at its key. If it
// exists with the same bytes (a write retried), that is success; with
// other bytes it is what an earlier sequencer wrote beyond its last
// checkpoint (no checkpoint of the lock covers it, or this node would not
// be writing it): it is replaced, If-Match its ETag, so that a sequencer
// that lost the lock and still writes never replaces this one's.
func (n *Node) putImmutable(ctx context.Context, key string, data []byte) error {
	_, err := n.cfg.Bucket.Put(ctx, key, data, bucket.PutOptions{IfNoneMatch: true, ContentType: "application/octet-stream", CacheControl: immutable})
	if !errors.Is(err, bucket.ErrPrecondition) {
		return err
	}
	old, etag, err := n.cfg.Bucket.Get(ctx, key, "")
	if err != nil {
		return err
	}
	if bytes.Equal(old, data) {
		return nil
	}
	// Only the lock's holder may replace it. A node that lost the lock
	// without knowing yet (cut off or paused past its lease, then back)
	// would otherwise replace what the new holder wrote and its
	// checkpoints cover: its If-Match names the ETag it just read, which
	// is the new holder's. The lock is read after the object, and a new
	// holder writes the lock before any object, so an object it wrote is
	// seen here with its lock (TestZombieReplacesNothing; the Jepsen test
	// found a standby that could no longer restore the bucket's log).
	if err := n.stillHolds(ctx, key); err != nil {
		return err
	}
	n.log.Warn("storage: replacing an object an earlier sequencer wrote beyond its last checkpoint", "key", key)
	n.m.replaced.Inc()
	_, err = n.cfg.Bucket.Put(ctx, key, data, bucket.PutOptions{IfMatch: etag, ContentType: "application/octet-stream", CacheControl: immutable})
	return err
}

// stillHolds reads the lock and returns an error wrapping ledger.ErrFenced
// unless this node still holds it, in the term it last wrote. key names
// the object it was about to replace. n.mu is held (by the caller of
// putTiles, whose jobs call it).
func (n *Node) stillHolds(ctx context.Context, key string) error {
	cur, _, err := n.cfg.Bucket.Get(ctx, LockKey, "")
	if err != nil {
		return fmt.Errorf("storage: reading the lock before replacing %s: %w", key, err)
	}
	k, err := ParseLock(cur)
	if err != nil {
		return fmt.Errorf("storage: %s%s: %w", n.URL(), LockKey, err)
	}
	if k.Holder != n.cfg.NodeID || k.Term != n.lock.Term {
		return fmt.Errorf("storage: lost the lease: %s differs from this node's, and the lock %s%s is held by %s (term %d), not this node %s (term %d): %w",
			key, n.URL(), LockKey, k.Holder, k.Term, n.cfg.NodeID, n.lock.Term, ledger.ErrFenced)
	}
	return nil
}

// writeLock writes k as the new lock, If-Match the lock this node last
// wrote or read (or, with no ETag, If-None-Match: the log's first lock).
// If the compare fails and the lock is not this node's own write (a reply
// lost on the way back), another node has written it: the error wraps
// bucket.ErrPrecondition, and for a holder (lose) the node has lost the
// log. n.mu is held.
func (n *Node) writeLock(ctx context.Context, k Lock) error {
	err := n.putLock(ctx, k)
	if errors.Is(err, bucket.ErrPrecondition) && n.leader {
		return n.lose(fmt.Errorf("storage: lost the lease: %w: %w", err, ledger.ErrFenced))
	}
	return err
}

func (n *Node) putLock(ctx context.Context, k Lock) error {
	o := bucket.PutOptions{IfMatch: n.etag, IfNoneMatch: n.etag == "", ContentType: "text/plain; charset=utf-8", CacheControl: noCache}
	data := k.Format()
	sent, sentAt := time.Now(), n.cfg.Now()
	etag, err := n.cfg.Bucket.Put(ctx, LockKey, data, o)
	if errors.Is(err, bucket.ErrPrecondition) {
		cur, cetag, gerr := n.cfg.Bucket.Get(ctx, LockKey, "")
		if gerr == nil && bytes.Equal(cur, data) {
			etag, err = cetag, nil // this very write, whose reply was lost
		} else {
			held := "another node"
			if ck, perr := ParseLock(cur); gerr == nil && perr == nil {
				held = fmt.Sprintf("%s (term %d)", ck.Holder, ck.Term)
			}
			return fmt.Errorf("the lock %s%s is held by %s, not this node %s (term %d): %w",
				n.URL(), LockKey, held, n.cfg.NodeID, k.Term, bucket.ErrPrecondition)
		}
	}
	if err != nil {
		return fmt.Errorf("storage: writing the lock: %w", err)
	}
	n.lock, n.etag, n.lastPut = k, etag, sent
	// Fresh from when the write was sent: it was applied after that.
	n.freshUntil.Store(max(1, int64(sentAt.Sub(n.base)+n.cfg.Lease/2)))
	n.m.puts.WithLabelValues("lock").Inc()
	n.m.term.Set(float64(k.Term))
	if cp, err := merkle.Open(k.Note, n.cfg.LogKey); err == nil {
		n.m.bucketSize.Set(float64(cp.Size))
	}
	return nil
}

// lose records that the node lost the lock. n.mu is held.
func (n *Node) lose(err error) error {
	if n.lostErr == nil {
		n.lostErr = err
		n.setLeader(false)
		n.m.leader.Set(0)
		n.m.lost.Inc()
		n.log.Error("storage: LOST THE LEASE: another node sequences the log; this node publishes nothing more and stops", "err", err)
		n.lostOnce.Do(func() { close(n.lost) })
	}
	return n.lostErr
}

// putCheckpoint writes the public checkpoint object: If-Match its last
// ETag, so that a node that lost the lock never puts an older checkpoint
// over a newer one. n.mu is held.
func (n *Node) putCheckpoint(ctx context.Context, note []byte, size uint64) error {
	for range 3 {
		o := bucket.PutOptions{IfMatch: n.pubEtag, IfNoneMatch: n.pubEtag == "", ContentType: "text/plain; charset=utf-8", CacheControl: noCache}
		etag, err := n.cfg.Bucket.Put(ctx, "checkpoint", note, o)
		if err == nil {
			n.pubNote, n.pubEtag = note, etag
			n.m.puts.WithLabelValues("checkpoint").Inc()
			return nil
		}
		if !errors.Is(err, bucket.ErrPrecondition) {
			return fmt.Errorf("storage: writing the checkpoint: %w", err)
		}
		cur, cetag, gerr := n.cfg.Bucket.Get(ctx, "checkpoint", "")
		switch {
		case errors.Is(gerr, bucket.ErrNotFound):
			n.pubNote, n.pubEtag = nil, ""
			continue
		case gerr != nil:
			return fmt.Errorf("storage: reading the checkpoint: %w", gerr)
		}
		if bytes.Equal(cur, note) {
			n.pubNote, n.pubEtag = cur, cetag
			return nil
		}
		cp, perr := merkle.Open(cur, n.cfg.LogKey)
		if perr == nil && cp.Size > size {
			return n.lose(fmt.Errorf("storage: the bucket's checkpoint has %d leaves, more than this node's %d: %w", cp.Size, size, ledger.ErrFenced))
		}
		// An older one (a sequencer that lost the lock after its last
		// lock write), or not a checkpoint: replaced.
		n.pubNote, n.pubEtag = cur, cetag
	}
	return fmt.Errorf("storage: writing the checkpoint: the object kept changing")
}
