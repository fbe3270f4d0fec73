package serve

// The log in object storage (Config.Storage, `zarlog serve --storage`,
// docs/OPERATIONS.md "Running two nodes"): a storage.Node is the ledger's
// Config.Publish, the ledger is brought up to the bucket's log before
// anything serves it, and the ingest and the witnessing start only once
// the node holds the log's lock.

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/bucket"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/publisher"
	"github.com/zarlog/zarlog/storage"
	"github.com/zarlog/zarlog/witness"
)

// nodeIDFile is where a node keeps its id (storage.Config.NodeID): a
// restart on the same data directory is the same node, and takes its lock
// back at once.
func (c *Config) nodeIDFile() string { return filepath.Join(c.Dir, "node-id") }

// nodeID returns this data directory's node id, creating it on the first
// run: the host's name (as far as it is a valid id) and random letters.
func nodeID(cfg *Config) (string, error) {
	b, err := os.ReadFile(cfg.nodeIDFile())
	if err == nil {
		id := strings.TrimSpace(string(b))
		if err := storage.CheckNodeID(id); err != nil {
			return "", fmt.Errorf("serve: %s: %w", cfg.nodeIDFile(), err)
		}
		return id, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("serve: %w", err)
	}
	host, _ := os.Hostname()
	var clean []rune
	for _, c := range host {
		if len(clean) < 40 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			clean = append(clean, c)
		}
	}
	id := strings.ToLower(rand.Text()[:10])
	if len(clean) > 0 {
		id = string(clean) + "-" + id
	}
	if err := os.WriteFile(cfg.nodeIDFile(), []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("serve: %w", err)
	}
	return id, nil
}

// openStorage opens the bucket of cfg.Storage and makes the node.
func openStorage(ctx context.Context, cfg *Config, key *loadedKey, log *slog.Logger, reg prometheus.Registerer) (*storage.Node, bucket.Store, error) {
	b, err := bucket.Open(ctx, cfg.Storage, bucket.Config{})
	if err != nil {
		return nil, nil, fmt.Errorf("serve: --storage: %w", err)
	}
	id, err := nodeID(cfg)
	if err != nil {
		return nil, nil, err
	}
	n, err := storage.New(storage.Config{Bucket: b, LogKey: key.verifier, NodeID: id, Standby: cfg.Standby, Lease: cfg.Lease,
		Logger: log.With("component", "storage"), Registerer: reg})
	if err != nil {
		return nil, nil, fmt.Errorf("serve: %w", err)
	}
	return n, b, nil
}

// bucketExportState is where the bucket's exporter keeps its progress
// through this node's bundle store: locally, since another node's bundle
// store is listed in another order (a node that takes over writes every
// game once again).
func (c *Config) bucketExportState() string { return filepath.Join(c.Dir, "bucket-export.json") }

// bucketExportEvery is the least time between two exports to the bucket:
// the landing page and /stats change with every event.
const bucketExportEvery = time.Second

// A bucketTarget is the bucket as the exporter's target (the proof
// bundles, tlog-proofs, witnessed checkpoint, policy, emitter keys and
// pages beside the log that the storage node writes), each object with the
// type the read API serves it with.
type bucketTarget struct{ b bucket.Store }

func (t bucketTarget) Read(ctx context.Context, name string) ([]byte, error) {
	data, _, err := t.b.Get(ctx, name, "")
	if errors.Is(err, bucket.ErrNotFound) {
		return nil, fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	}
	return data, err
}

func (t bucketTarget) Write(ctx context.Context, name string, data []byte) error {
	cc := "no-cache" // a game's bundle is replaced by its witnessed one; pages change
	if strings.HasPrefix(name, "static/") {
		cc = "public, max-age=300"
	}
	_, err := t.b.Put(ctx, name, data, bucket.PutOptions{ContentType: publisher.ExportContentType(name), CacheControl: cc})
	return err
}

// RemoveAll is not needed: the exporter writes no tile to the bucket
// (NoLog).
func (t bucketTarget) RemoveAll(context.Context, string) error {
	return errors.New("serve: the bucket's exporter removes nothing")
}

func (t bucketTarget) String() string { return t.b.URL() }

// openLedgerOnBucket opens the ledger with node as its Publish and brings
// it up to the bucket's log. A ledger with leaves the bucket's log does not
// have (this node sequenced them and died before publishing them, and
// another took its place) is moved aside, to DIR/ledger.diverged-<time>,
// and the log is read again from the bucket into a new one.
func openLedgerOnBucket(ctx context.Context, cfg *Config, lcfg ledger.Config, node *storage.Node, log *slog.Logger) (*ledger.Ledger, error) {
	lcfg.Publish = node.Publish
	reg := lcfg.Metrics
	for attempt := 0; ; attempt++ {
		// The ledger's metrics are taken back if it is closed here, so
		// that the ledger opened after it can register its own.
		undo := &undoRegisterer{r: reg}
		if reg != nil {
			lcfg.Metrics = undo
		}
		l, err := ledger.Open(ctx, lcfg)
		if err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		start := time.Now()
		err = node.Prepare(ctx, l)
		if err == nil {
			size, _ := l.Size()
			log.Info("the ledger holds the bucket's log", "bucket", node.URL(), "size", size, "took", time.Since(start).Round(time.Millisecond))
			return l, nil
		}
		l.Close()
		undo.undo()
		if !errors.Is(err, storage.ErrDiverged) || attempt > 0 {
			return nil, fmt.Errorf("serve: %w", err)
		}
		aside := cfg.ledgerDir() + ".diverged-" + time.Now().UTC().Format("20060102T150405Z")
		log.Warn("the ledger has leaves the bucket's log does not have: it is moved aside and the log read again from the bucket",
			"err", err, "moved_to", aside)
		if err := os.Rename(cfg.ledgerDir(), aside); err != nil {
			return nil, fmt.Errorf("serve: moving the diverged ledger aside: %w", err)
		}
	}
}

// An undoRegisterer registers collectors with r and can unregister them
// all again.
type undoRegisterer struct {
	r  prometheus.Registerer
	cs []prometheus.Collector
}

func (u *undoRegisterer) Register(c prometheus.Collector) error {
	if err := u.r.Register(c); err != nil {
		return err
	}
	u.cs = append(u.cs, c)
	return nil
}

func (u *undoRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := u.Register(c); err != nil {
			panic(err)
		}
	}
}

func (u *undoRegisterer) Unregister(c prometheus.Collector) bool { return u.r.Unregister(c) }

// undo unregisters every collector registered through u.
func (u *undoRegisterer) undo() {
	for _, c := range u.cs {
		u.r.Unregister(c)
	}
	u.cs = nil
}

// copyWitnessed keeps the bucket's checkpoint.witnessed (the primary's,
// exported there) in this node's witnessed store while it follows the
// bucket, until it holds the lock (then its own witnessing keeps it): a
// standby serves the witnessed checkpoint and builds witnessed bundles as
// the primary does, and a node that takes over has it from its first
// second. A checkpoint is kept only once the ledger holds its tree with
// its root, and if it meets the policy (witness.Witnessed.Put).
func copyWitnessed(ctx context.Context, b bucket.Store, l *ledger.Ledger, store *witness.Witnessed, logKey note.Verifier, leading <-chan struct{}, log *slog.Logger) {
	t := time.NewTimer(0)
	defer t.Stop()
	var etag string // of the object last dealt with
	for {
		select {
		case <-ctx.Done():
			return
		case <-leading:
			return
		case <-t.C:
		}
		t.Reset(time.Second)
		data, et, err := b.Get(ctx, publisher.WitnessedPath, etag)
		if errors.Is(err, bucket.ErrNotModified) || errors.Is(err, bucket.ErrNotFound) {
			continue
		}
		if err != nil {
			log.Debug("reading the bucket's witnessed checkpoint", "err", err)
			continue
		}
		cp, err := merkle.Open(data, logKey)
		if err != nil {
			log.Warn("the bucket's witnessed checkpoint is not the log's", "err", err)
			etag = et
			continue
		}
		if size, err := l.Size(); err != nil || size < cp.Size {
			continue // not imported yet: read it again
		}
		etag = et
		if cur, ccp, _ := store.Latest(); bytes.Equal(cur, data) || ccp.Size > cp.Size {
			continue
		}
		root, err := merkle.RootHash(ctx, l.TileReader(), cp.Size)
		if err != nil || root != cp.Hash {
			log.Warn("the bucket's witnessed checkpoint is not this node's log", "size", cp.Size, "err", err)
			continue
		}
		if err := store.Put(data); err != nil {
			log.Warn("keeping the bucket's witnessed checkpoint", "err", err)
			continue
		}
		log.Debug("the bucket's witnessed checkpoint kept", "size", cp.Size)
	}
}
