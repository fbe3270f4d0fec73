package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/transparency-dev/tessera"
	"github.com/transparency-dev/tessera/storage/posix"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/merkle"
)

// A TesseraConfig configures a Tessera measurement. Every field's zero value
// is documented.
type TesseraConfig struct {
	// Dir is the log's directory, which must be empty or absent. Required.
	Dir string
	// BatchSize and BatchMaxAge are Tessera's batching (WithBatching): a
	// batch is sequenced once it holds BatchSize entries or its first entry
	// is BatchMaxAge old. Zero means Tessera's defaults,
	// tessera.DefaultBatchMaxSize (256) and tessera.DefaultBatchMaxAge
	// (250 ms).
	BatchSize   uint
	BatchMaxAge time.Duration
	// CheckpointInterval is how often a checkpoint is published
	// (WithCheckpointInterval). Zero means 100 ms, the POSIX driver's
	// minimum and the ledger's default.
	CheckpointInterval time.Duration
	// NoAntispam turns off the in-memory antispam (deduplication of
	// recently added entries, WithAntispam with
	// tessera.DefaultAntispamInMemorySize entries), which is on by default:
	// the ledger deduplicates too.
	NoAntispam bool
	// Adders is the number of goroutines calling Add, each adding an equal
	// share of the entries. Zero means 2.
	Adders int
	// Progress, if not nil, is called with the number of entries
	// sequenced so far, as their indices come back.
	Progress func(done int)
}

// Tessera appends leaves to a new Tessera log on the POSIX driver in
// cfg.Dir, and returns when every entry is integrated and a published
// checkpoint covers them all. Elapsed runs from the first Add until then.
func Tessera(ctx context.Context, cfg TesseraConfig, leaves [][]byte) (Result, error) {
	if cfg.Dir == "" {
		return Result{}, errors.New("bench: TesseraConfig.Dir is empty")
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = tessera.DefaultBatchMaxSize
	}
	if cfg.BatchMaxAge == 0 {
		cfg.BatchMaxAge = tessera.DefaultBatchMaxAge
	}
	if cfg.CheckpointInterval == 0 {
		cfg.CheckpointInterval = 100 * time.Millisecond
	}
	if cfg.Adders <= 0 {
		cfg.Adders = 2
	}
	signer, verifier, err := logKey("tessera.bench.zarlog.example/log")
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	driver, err := posix.New(ctx, posix.Config{Path: cfg.Dir})
	if err != nil {
		return Result{}, fmt.Errorf("bench: tessera posix driver: %w", err)
	}
	opts := tessera.NewAppendOptions().
		WithCheckpointSigner(signer).
		WithCheckpointInterval(cfg.CheckpointInterval).
		WithBatching(cfg.BatchSize, cfg.BatchMaxAge).
		// Enough for every entry in flight: Tessera pushes back beyond it.
		WithPushback(uint(max(len(leaves), tessera.DefaultPushbackMaxOutstanding)))
	if !cfg.NoAntispam {
		opts.WithAntispam(tessera.DefaultAntispamInMemorySize, nil)
	}
	appender, shutdown, reader, err := tessera.NewAppender(ctx, driver, opts)
	if err != nil {
		return Result{}, fmt.Errorf("bench: tessera appender: %w", err)
	}

	startCPU, start := cpuTime(), time.Now()
	futures := make([]tessera.IndexFuture, len(leaves))
	var wg sync.WaitGroup
	per := (len(leaves) + cfg.Adders - 1) / cfg.Adders
	for a := range cfg.Adders {
		lo, hi := min(a*per, len(leaves)), min((a+1)*per, len(leaves))
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				futures[i] = appender.Add(ctx, tessera.NewEntry(leaves[i]))
			}
		})
	}
	wg.Wait()
	var last uint64
	for i, f := range futures {
		idx, err := f()
		if err != nil {
			return Result{}, fmt.Errorf("bench: tessera entry %d: %w", i, err)
		}
		if idx.IsDup {
			return Result{}, fmt.Errorf("bench: tessera entry %d is a duplicate of %d", i, idx.Index)
		}
		last = max(last, idx.Index)
		if cfg.Progress != nil && (i%1024 == 1023 || i == len(futures)-1) {
			cfg.Progress(i + 1)
		}
	}
	size, err := waitCheckpoint(ctx, reader, verifier, last+1)
	if err != nil {
		return Result{}, err
	}
	elapsed := time.Since(start)
	if size != uint64(len(leaves)) {
		return Result{}, fmt.Errorf("bench: tessera checkpoint of size %d after %d entries", size, len(leaves))
	}
	if err := shutdown(ctx); err != nil {
		return Result{}, fmt.Errorf("bench: tessera shutdown: %w", err)
	}
	res := Result{Name: fmt.Sprintf("tessera-posix-batch%d", cfg.BatchSize), Events: len(leaves), Elapsed: elapsed}
	res.cpuMetrics(startCPU)
	return res, nil
}

// waitCheckpoint polls the log's published checkpoint until it covers size
// entries, and returns its size. Tessera's PublicationAwaiter polls the same
// way; the period here is short so that polling adds little to Elapsed.
func waitCheckpoint(ctx context.Context, r tessera.LogReader, v note.Verifier, size uint64) (uint64, error) {
	for {
		raw, err := r.ReadCheckpoint(ctx)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("bench: reading tessera's checkpoint: %w", err)
		}
		if err == nil {
			cp, err := merkle.Open(raw, v)
			if err != nil {
				return 0, fmt.Errorf("bench: tessera's checkpoint: %w", err)
			}
			if cp.Size >= size {
				return cp.Size, nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}
