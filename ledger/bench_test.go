package ledger

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/zarlog/zarlog/internal/workload"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// Benchmarks run on the real file system (b.TempDir), with an fsync per
// group, the signer loop running at its default interval, and realistic
// events from package internal/workload: 256 interleaved games, 40 %
// tavlarena-v1 and 40 % anchored-v1 games of 60 rolls and moves (125 events,
// 3 of them signed), 20 % per-roll-v1 matches of 30 rolls (122 events, 62
// signed): about 300 bytes and 12 % signed on average. ZARLOG_BENCH_MIX
// names another mix (workload.ParseMix). Custom metrics: events/s, and for
// the disk and memory benchmarks B/event and heap-MiB. ZARLOG_BENCH_RULES=1
// makes the moves legal plays and has the rules engine check them (the
// production configuration), in BenchmarkAppend, BenchmarkAppendConcurrent
// and BenchmarkHumanWrites.

// A benchPool hands out a deterministic stream of events as inputs,
// generating more (with the timer stopped) when it runs out.
type benchPool struct {
	gen    *workload.Generator
	inputs []Input
}

func benchMix(b testing.TB) workload.Mix {
	name := os.Getenv("ZARLOG_BENCH_MIX")
	if name == "" {
		name = "mixed"
	}
	m, err := workload.ParseMix(name)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// benchRules reports whether ZARLOG_BENCH_RULES asks for the rules engine.
func benchRules() bool { return os.Getenv("ZARLOG_BENCH_RULES") != "" }

func newBenchGen(b testing.TB, seed uint64) *workload.Generator {
	g, err := workload.New(workload.Config{Seed: seed, Mix: benchMix(b), Moves: benchRules()})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

func newBenchPool(b *testing.B, name string) *benchPool {
	h := sha256.Sum256([]byte(name))
	return &benchPool{gen: newBenchGen(b, binary.BigEndian.Uint64(h[:]))}
}

// workloadInputs returns the inputs of n events of g.
func workloadInputs(b testing.TB, g *workload.Generator, n int) []Input {
	evs, err := g.Take(n)
	if err != nil {
		b.Fatal(err)
	}
	out := make([]Input, len(evs))
	for i, e := range evs {
		out[i] = Input{Emitter: e.Emitter, MsgID: e.ID, Data: e.Data}
	}
	return out
}

func (p *benchPool) take(b *testing.B, n int) []Input {
	if len(p.inputs) < n {
		b.StopTimer()
		p.inputs = append(p.inputs, workloadInputs(b, p.gen, max(n, 20_000))...)
		b.StartTimer()
	}
	out := p.inputs[:n]
	p.inputs = p.inputs[n:]
	return out
}

func leavesOf(in []Input) [][]byte {
	out := make([][]byte, len(in))
	for i := range in {
		out[i] = in[i].Data
	}
	return out
}

// benchLedger opens a ledger for the workload's emitters in dir.
func benchLedger(b *testing.B, dir string) *Ledger {
	k := benchKeys(b)
	g := newBenchGen(b, 0)
	cfg := Config{Dir: dir, Signer: k.signer, Verifier: k.verifier, Emitters: g.Keyring(), Beacons: workload.Beacons, Metrics: prometheus.NewRegistry()}
	if benchRules() {
		cfg.Moves = movecheck.Checker{}
	}
	l, err := Open(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

var (
	benchKeysOnce sync.Once
	benchKeysVal  *testKeys
)

func benchKeys(b testing.TB) *testKeys {
	benchKeysOnce.Do(func() { benchKeysVal = newTestKeys(b) })
	return benchKeysVal
}

// appendRaw appends leaves through the tree builder and Pebble only: no
// parsing, checks or projections. It must not run concurrently with Append.
func (l *Ledger) appendRaw(leaves [][]byte) error {
	s := l.seq
	batch := l.db.NewBatch()
	defer batch.Close()
	first := s.b.Size()
	tiles, err := s.b.Append(leaves)
	if err != nil {
		return err
	}
	if err := setTiles(batch, tiles, first); err != nil {
		return err
	}
	st, _ := s.b.State().MarshalBinary()
	batch.Set(keyState, st, nil)
	batch.Set(u64Key(prefixTime, first), marshalTime(l.now()), nil)
	if err := l.commit(batch, "raw append"); err != nil {
		return err
	}
	l.install(s.b.Size(), s.b.Root(), &s.stats, &s.rej.sum)
	return nil
}

// BenchmarkAppend measures appends with fsync at batch sizes 1, 100 and
// 1000 from one caller, in three modes: full (Append: parse, verify, dedup,
// state machine, projections, tree, Pebble), checked (the same with Parse
// and Verify done beforehand, outside the timer) and raw (leaves through the
// tree builder and Pebble only). The checked mode stops the timer around
// each call's checks, which costs tens of microseconds: its batch=1 figure
// is not meaningful. cpu-µs/event is the process's CPU time (every
// goroutine's: the committer's, Pebble's) while the timed calls ran, less
// noisy than the wall clock on a loaded machine.
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []string{"full", "checked", "raw"} {
		for _, batch := range []int{1, 100, 1000} {
			b.Run(fmt.Sprintf("%s/batch=%d", mode, batch), func(b *testing.B) {
				benchAppend(b, mode, batch)
			})
		}
	}
}

func benchAppend(b *testing.B, mode string, batch int) {
	l := benchLedger(b, b.TempDir())
	ctx := context.Background()
	pool := newBenchPool(b, fmt.Sprintf("bench-%s-%d", mode, batch))
	events := 0
	var cpu time.Duration // the process's CPU time in the timed parts
	run := func(in []Input) {
		switch mode {
		case "full":
			c0 := processCPU(b)
			out, err := l.Append(ctx, in)
			cpu += processCPU(b) - c0
			if err != nil {
				b.Error(err)
				return
			}
			for _, o := range out {
				if o.Result != Appended {
					b.Errorf("%+v %v", o, o.Reject)
					return
				}
			}
		case "checked":
			b.StopTimer()
			items := make([]item, len(in))
			l.checkAll(in, items)
			b.StartTimer()
			c0 := processCPU(b)
			if err := l.begin(); err != nil {
				b.Error(err)
				return
			}
			_, err := l.submit(ctx, items)
			l.appends.Done()
			cpu += processCPU(b) - c0
			if err != nil {
				b.Error(err)
			}
		case "raw":
			c0 := processCPU(b)
			if err := l.appendRaw(leavesOf(in)); err != nil {
				b.Error(err)
			}
			cpu += processCPU(b) - c0
		}
	}
	for b.Loop() {
		run(pool.take(b, batch))
		events += batch
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(events), "cpu-µs/event")
}

// concurrentWorkload is the events of BenchmarkAppendConcurrent, split by
// game among the callers so that each caller's events of a game are in
// order.
var (
	concurrentOnce sync.Once
	concurrentAll  []Input
)

const concurrentEvents = 200_000

// BenchmarkAppendConcurrent appends 200k events from many callers at once,
// each appending its share (whole games) in calls of batch events, on a
// fresh ledger per iteration: the sequencer groups the callers' calls into
// group commits while the callers' checks run in parallel. Run it with
// -benchtime=Nx.
func BenchmarkAppendConcurrent(b *testing.B) {
	concurrentOnce.Do(func() {
		concurrentAll = workloadInputs(b, newBenchGen(b, 9), concurrentEvents)
	})
	for _, tc := range []struct {
		mode           string
		callers, batch int
	}{{"full", 16, 1}, {"full", 64, 1}, {"full", 256, 1}, {"full", 16, 100}, {"full", 4, 1000}, {"checked", 4, 1000}, {"checked", 16, 100}} {
		b.Run(fmt.Sprintf("%s/callers=%d/batch=%d", tc.mode, tc.callers, tc.batch), func(b *testing.B) {
			shares := make([][]Input, tc.callers)
			for _, in := range concurrentAll {
				ev := parse(b, in.Data)
				h := sha256.Sum256([]byte(ev.Game))
				c := int(h[0]) % tc.callers
				shares[c] = append(shares[c], in)
			}
			ctx := context.Background()
			events, groups := 0, 0.0
			for b.Loop() {
				b.StopTimer()
				l := benchLedger(b, b.TempDir())
				// checked: Parse, Verify and the dedup hint run before
				// the timer (the hints are all taken on the empty log,
				// so most are too old to use: the sequencer looks the
				// ids up itself).
				var checked [][]item
				if tc.mode == "checked" {
					for _, share := range shares {
						items := make([]item, len(share))
						l.checkAll(share, items)
						checked = append(checked, items)
					}
				}
				b.StartTimer()
				var wg sync.WaitGroup
				for c, share := range shares {
					wg.Go(func() {
						for i := 0; i < len(share); i += tc.batch {
							j := min(i+tc.batch, len(share))
							var err error
							if tc.mode == "full" {
								_, err = l.Append(ctx, share[i:j])
							} else if err = l.begin(); err == nil {
								_, err = l.submit(ctx, checked[c][i:j])
								l.appends.Done()
							}
							if err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				groups += groupCount(b, l)
				l.Close()
				b.StartTimer()
				events += len(concurrentAll)
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(events)/groups, "events/group")
		})
	}
}

// BenchmarkSign measures signing a checkpoint after one leaf was appended:
// the consistency check from the stored tiles, the Ed25519 signature and
// the durable write (an fsync).
func BenchmarkSign(b *testing.B) {
	l := benchLedger(b, b.TempDir())
	pool := newBenchPool(b, "sign")
	if err := l.appendRaw(leavesOf(pool.take(b, 100_000))); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		if err := l.appendRaw(leavesOf(pool.take(b, 1))); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := l.Sign(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// bulkLoad appends n small raw leaves in batches of 64Ki.
func bulkLoad(b *testing.B, l *Ledger, n int) {
	leaf := make([]byte, 200)
	batch := make([][]byte, 0, 1<<16)
	for i := 0; i < n; {
		batch = batch[:0]
		for j := 0; j < 1<<16 && i < n; j++ {
			l := fmt.Appendf(nil, `{"i":%d,"pad":"%s"}`, i, leaf[:150])
			batch = append(batch, l)
			i++
		}
		if err := l.appendRaw(batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInclusionProof generates inclusion proofs for random leaves from
// the tiles in Pebble, in a tree of 1M leaves (10M with ZARLOG_SLOW=1),
// bulk-loaded with raw leaves.
func BenchmarkInclusionProof(b *testing.B) {
	sizes := []int{1_000_000}
	if os.Getenv("ZARLOG_SLOW") != "" {
		sizes = append(sizes, 10_000_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("leaves=%d", n), func(b *testing.B) {
			l := benchLedger(b, b.TempDir())
			bulkLoad(b, l, n)
			cp := mustSign(b, l)
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(1, 2))
			b.Run("inclusion", func(b *testing.B) {
				for b.Loop() {
					if _, err := l.InclusionProof(ctx, rng.Uint64N(cp.Size), cp.Size); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("game-multi-30", func(b *testing.B) {
				// A game's ~30 leaves, spread over a few thousand
				// leaves of interleaved games.
				idx := make([]uint64, 30)
				for b.Loop() {
					start := rng.Uint64N(cp.Size - 5000)
					for i := range idx {
						idx[i] = start + uint64(i)*150 + rng.Uint64N(100)
					}
					if _, _, err := l.ProveMulti(ctx, idx, cp.Size); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// appendLoop appends the pool's events to l in calls of 1000 for b.Loop,
// stops the timer, and returns the number of events appended.
func appendLoop(b *testing.B, l *Ledger, pool *benchPool) int {
	events := 0
	for b.Loop() {
		if _, err := l.Append(context.Background(), pool.take(b, 1000)); err != nil {
			b.Fatal(err)
		}
		events += 1000
	}
	b.StopTimer()
	return events
}

// BenchmarkDiskPerEvent appends realistic events in groups of 1000, then
// compacts the store and reports its size per event, and the share of the
// entry bundles, tiles and projections.
func BenchmarkDiskPerEvent(b *testing.B) {
	dir := b.TempDir()
	l := benchLedger(b, dir)
	ctx := context.Background()
	events := appendLoop(b, l, newBenchPool(b, "disk"))
	if err := l.db.Compact(ctx, []byte{0}, []byte{0xff}, true); err != nil {
		b.Fatal(err)
	}
	var total, tables int64
	filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			total += fi.Size()
			if strings.HasSuffix(path, ".sst") {
				tables += fi.Size()
			}
		}
		return nil
	})
	// The WAL and the memtable are a fixed cost (up to about twice
	// MemTableSize), not a cost per event: report the tables apart.
	b.ReportMetric(float64(total)/float64(events), "B/event")
	b.ReportMetric(float64(tables)/float64(events), "sst-B/event")
	for _, p := range []struct {
		name   string
		prefix byte
	}{{"bundles", prefixBundle}, {"pieces", prefixPiece}, {"tiles", prefixTile}, {"dedup", prefixDedup}, {"games", prefixGame}, {"live", prefixLive}, {"history", prefixHistory}} {
		n, _ := l.db.EstimateDiskUsage([]byte{p.prefix}, prefixEnd(p.prefix))
		b.ReportMetric(float64(n)/float64(events), p.name+"-B/event")
	}
	b.ReportMetric(float64(events), "events")
}

// BenchmarkWriteAmp appends realistic events in calls of 1000 and reports,
// from Pebble's metrics, the bytes per event of each kind of write: the
// write-ahead log, the flushes into L0, and the compactions (written, and
// read from the tables). Compaction is the part that grows with the log.
// Run it with -benchtime=1500x or more: over few events nothing compacts.
// With ZARLOG_PEBBLE_METRICS=1 it logs Pebble's metrics table too (per
// level: flushed, compacted and moved tables and bytes).
func BenchmarkWriteAmp(b *testing.B) {
	l := benchLedger(b, b.TempDir())
	events := appendLoop(b, l, newBenchPool(b, "write-amp"))
	m := l.db.Metrics()
	if os.Getenv("ZARLOG_PEBBLE_METRICS") != "" {
		b.Log("\n" + m.String())
	}
	var flushed, compacted, read uint64
	for _, lm := range m.Levels {
		flushed += lm.TableBytesFlushed
		compacted += lm.TableBytesCompacted
		read += lm.TableBytesRead
	}
	per := func(n uint64) float64 { return float64(n) / float64(events) }
	b.ReportMetric(per(m.WAL.BytesIn), "wal-B/event")
	b.ReportMetric(per(flushed), "flushed-B/event")
	b.ReportMetric(per(compacted), "compacted-B/event")
	b.ReportMetric(per(read), "compaction-read-B/event")
}

// BenchmarkHeap appends 1M realistic events (generated as it goes, in calls
// of 1000) and reports the live heap after 100k and after 1M events (and
// after 10M with ZARLOG_SLOW=1): it should not grow with the log. Run it
// with -benchtime=1x.
func BenchmarkHeap(b *testing.B) {
	l := benchLedger(b, b.TempDir())
	gen := newBenchGen(b, 3)
	ctx := context.Background()
	heap := func() float64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapInuse) / (1 << 20)
	}
	calls := 1000
	if os.Getenv("ZARLOG_SLOW") != "" {
		calls = 10_000 // 10M events, about 4 GB of log
	}
	start := time.Now()
	for b.Loop() {
		for i := 1; i <= calls; i++ {
			if _, err := l.Append(ctx, workloadInputs(b, gen, 1000)); err != nil {
				b.Fatal(err)
			}
			switch i {
			case 100:
				b.ReportMetric(heap(), "heap-MiB@100k")
			case 1000:
				b.ReportMetric(heap(), "heap-MiB@1M")
			case 10_000:
				b.ReportMetric(heap(), "heap-MiB@10M")
			}
		}
	}
	b.ReportMetric(time.Since(start).Seconds(), "s")
}

// groupCount returns the number of group commits l made, from its metrics.
func groupCount(b *testing.B, l *Ledger) float64 {
	m := &dto.Metric{}
	if err := l.met.groupSize.Write(m); err != nil {
		b.Fatal(err)
	}
	return float64(m.GetHistogram().GetSampleCount())
}

// BenchmarkRebuild appends 300k realistic events in calls of 1000, then
// times Rebuild, which replays the log into new projections, as Open does
// after an interrupted rebuild or an upgrade of the store format; it
// reports the replay's rate beside the append's.
func BenchmarkRebuild(b *testing.B) {
	l := benchLedger(b, b.TempDir())
	pool := newBenchPool(b, "rebuild")
	ctx := context.Background()
	const events = 300_000
	in := pool.take(b, events) // generated before the clock starts
	start := time.Now()
	for i := 0; i < events; i += 1000 {
		if _, err := l.Append(ctx, in[i:i+1000]); err != nil {
			b.Fatal(err)
		}
	}
	appendRate := events / time.Since(start).Seconds()
	b.ResetTimer()
	for b.Loop() {
		if err := l.Rebuild(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "rebuilt-events/s")
	b.ReportMetric(appendRate, "appended-events/s")
}

// BenchmarkDuplicates resends calls of 100 events logged long ago (the
// sequencer has forgotten their ids): a backend's window sent again after
// a reconnect. Each is answered Duplicate with its first index.
func BenchmarkDuplicates(b *testing.B) {
	l := benchLedger(b, b.TempDir())
	l.seq.maxIDs = 1 // before any Append: the sequencer is idle
	ctx := context.Background()
	g := newBenchGen(b, 7)
	logged := workloadInputs(b, g, 20_000)
	for i := 0; i < len(logged); i += 1000 {
		if _, err := l.Append(ctx, logged[i:i+1000]); err != nil {
			b.Fatal(err)
		}
	}
	n := 0
	for b.Loop() {
		i := (n * 100) % (len(logged) - 100)
		out, err := l.Append(ctx, logged[i:i+100])
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range out {
			if o.Result != Duplicate {
				b.Fatalf("%+v %v", o, o.Reject)
			}
		}
		n++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*100), "ns/event")
}

// BenchmarkMigrateDedup measures the upgrade of a format-3 store, whose
// dedup index was keyed by event id alone, to per-emitter keys: the time
// Open takes to move every record (migrateDedup), against a Rebuild of the
// same log in the same run (how formats 1 and 2 are upgraded). The
// workload's events have canonical ids, which format 3 did not index; the
// store is given a format-3 record for every one of them, as a log of
// backends' own ids would have: the worst case, a record per event.
// ZARLOG_MIGRATE_EVENTS sets the log's size (default 300,000).
func BenchmarkMigrateDedup(b *testing.B) {
	events := 300_000
	if s := os.Getenv("ZARLOG_MIGRATE_EVENTS"); s != "" {
		if _, err := fmt.Sscan(s, &events); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	l := benchLedger(b, dir)
	cfg := l.cfg
	pool := newBenchPool(b, "migrate")
	ctx := context.Background()
	in := pool.take(b, events)
	for i := 0; i < events; i += 1000 {
		if _, err := l.Append(ctx, in[i:min(i+1000, events)]); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	if err := l.Rebuild(ctx); err != nil {
		b.Fatal(err)
	}
	rebuild := time.Since(start)
	l.Close()
	var moved time.Duration
	for b.Loop() {
		b.StopTimer()
		db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{}})
		if err != nil {
			b.Fatal(err)
		}
		batch := db.NewBatch()
		batch.DeleteRange([]byte{prefixDedup}, prefixEnd(prefixDedup), nil)
		for i, x := range in {
			batch.Set(strKey(prefixDedupV3, x.MsgID), dedupRecord{Index: uint64(i), LeafHash: merkle.LeafHash(x.Data)}.marshal(), nil)
		}
		batch.Set(keyFormat, append([]byte{3}, cfg.Signer.Name()...), nil)
		if err := batch.Commit(pebble.Sync); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t := time.Now()
		cfg.Metrics = prometheus.NewRegistry()
		l, err := Open(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		moved += time.Since(t)
		b.StopTimer()
		if n := len(indexedKeys(b, l.db, prefixDedup)); n != events {
			b.Fatalf("%d records moved, want %d", n, events)
		}
		l.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(moved.Nanoseconds())/float64(b.N*events), "ns/record")
	b.ReportMetric(float64(rebuild.Nanoseconds())/float64(events), "rebuild-ns/event")
	b.ReportMetric(float64(events), "events")
}

// BenchmarkHumanWrites measures what the store writes, and what it costs
// in CPU, per event of the human pace (internal/bench.Human): many games in
// play, each group of the sequencer holding one event of each of 400
// different games, against the saturated pattern of 256 interleaved games
// in groups of 1000. The games are preloaded as Human preloads them: each
// whole game is made, its first k events (k uniform over its length)
// appended in calls of 2000. settle=1 then waits until Pebble's
// compactions have caught up before the measured groups (Human's window);
// settle=0 measures them at once. Each b.Loop iteration is one group.
// ZARLOG_HUMAN_GAMES sets the games in play (default 20,000; Human runs
// 50,000). How far each game is preloaded is drawn from a source seeded
// with ZARLOG_BENCH_PRELOAD_SEED (default 1), so runs preload the same
// events and compare. Metrics per event: the process's CPU (µs, Pebble's background
// work included), the batch bytes per key prefix (keys and values), the
// write-ahead log, flushed and compacted bytes, and the game states read
// back from Pebble (loads).
func BenchmarkHumanWrites(b *testing.B) {
	games := 20_000
	if s := os.Getenv("ZARLOG_HUMAN_GAMES"); s != "" {
		fmt.Sscan(s, &games)
	}
	// ZARLOG_BENCH_GROUP: the events of a human-pace group (400; the
	// zarlog bench's human pace appends about 230 at a time).
	humanGroup := 400
	if s := os.Getenv("ZARLOG_BENCH_GROUP"); s != "" {
		fmt.Sscan(s, &humanGroup)
	}
	b.Run("saturated", func(b *testing.B) { benchHumanWrites(b, 0, 1000, false) })
	for _, settle := range []bool{false, true} {
		b.Run(fmt.Sprintf("human/games=%d/settle=%v", games, settle), func(b *testing.B) { benchHumanWrites(b, games, humanGroup, settle) })
	}
}

func benchHumanWrites(b *testing.B, games, group int, settle bool) {
	ctx := context.Background()
	// ZARLOG_BENCH_RULES=1: moves are legal plays, checked by the rules
	// engine (the production configuration's game heads hold positions).
	rules := benchRules()
	// ZARLOG_BENCH_ROLLS: the games' rolls (8; the zarlog bench plays 60).
	rolls := 8
	if s := os.Getenv("ZARLOG_BENCH_ROLLS"); s != "" {
		fmt.Sscan(s, &rolls)
	}
	gen, err := workload.New(workload.Config{Seed: 7, Mix: benchMix(b), Rolls: rolls, Moves: rules})
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Dir: b.TempDir(), Signer: benchKeys(b).signer, Verifier: benchKeys(b).verifier, Emitters: gen.Keyring(), Beacons: workload.Beacons, Metrics: prometheus.NewRegistry()}
	if rules {
		cfg.Moves = movecheck.Checker{}
	}
	// ZARLOG_BENCH_CACHE_MIB bounds the game cache (Config.GameCacheBytes),
	// so that the games are read back from Pebble (loads/event).
	if s := os.Getenv("ZARLOG_BENCH_CACHE_MIB"); s != "" {
		var mib int64
		if _, err := fmt.Sscan(s, &mib); err != nil {
			b.Fatalf("ZARLOG_BENCH_CACHE_MIB %q: %v", s, err)
		}
		cfg.GameCacheBytes = mib << 20
	}
	// ZARLOG_BENCH_PEBBLE changes the default Pebble options:
	// "memtable=MiB,l0=N,lbase=MiB,newest=1,minlz=1" (any of them; newest:
	// Pebble's newest format, minlz: MinLZ instead of Snappy, which needs it).
	if spec := os.Getenv("ZARLOG_BENCH_PEBBLE"); spec != "" {
		o := pebbleOptions(&Config{}, slog.New(slog.DiscardHandler))
		o.FS = nil
		for _, kv := range strings.Split(spec, ",") {
			var name string
			var v int64
			if _, err := fmt.Sscanf(strings.Replace(kv, "=", " ", 1), "%s %d", &name, &v); err != nil {
				b.Fatalf("ZARLOG_BENCH_PEBBLE %q: %v", kv, err)
			}
			switch name {
			case "memtable":
				o.MemTableSize = uint64(v) << 20
			case "l0":
				o.L0CompactionThreshold = int(v)
			case "lbase":
				o.LBaseMaxBytes = v << 20
			case "newest": // Pebble's newest format (its table format v6 and later)
				o.FormatMajorVersion = pebble.FormatNewest
			case "minlz": // MinLZ instead of Snappy (needs newest)
				for i := range o.Levels {
					o.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.MinLZCompression }
				}
			default:
				b.Fatalf("ZARLOG_BENCH_PEBBLE: unknown %q", name)
			}
		}
		cfg.Pebble = o
	}
	// The bytes flushes and compactions write and read, by key prefix
	// (no sstable holds two: prefixSpans); moves rewrite nothing.
	if cfg.Pebble == nil {
		cfg.Pebble = pebbleOptions(&Config{}, slog.New(slog.DiscardHandler))
		cfg.Pebble.FS = nil
	}
	var (
		tablesMu                           sync.Mutex
		counting                           bool
		flushedBy, compWroteBy, compReadBy [256]uint64
	)
	prefixOf := func(t pebble.TableInfo) byte {
		if len(t.Smallest.UserKey) == 0 {
			return 0
		}
		return t.Smallest.UserKey[0]
	}
	cfg.Pebble.EventListener = &pebble.EventListener{
		FlushEnd: func(fi pebble.FlushInfo) {
			tablesMu.Lock()
			defer tablesMu.Unlock()
			if !counting || fi.Ingest {
				return
			}
			for _, t := range fi.Output {
				flushedBy[prefixOf(t)] += t.Size
			}
		},
		CompactionEnd: func(ci pebble.CompactionInfo) {
			tablesMu.Lock()
			defer tablesMu.Unlock()
			if !counting || ci.Err != nil || strings.Contains(ci.Reason, "move") || strings.Contains(ci.Reason, "delete-only") {
				return
			}
			for _, lv := range ci.Input {
				for _, t := range lv.Tables {
					compReadBy[prefixOf(t)] += t.Size
				}
			}
			for _, t := range ci.Output.Tables {
				compWroteBy[prefixOf(t)] += t.Size
			}
		},
	}
	l, err := Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	input := func(e workload.Event) Input { return Input{Emitter: e.Emitter, MsgID: e.ID, Data: e.Data} }
	appendAll := func(in []Input) {
		if _, err := l.Append(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	// The games in play, their first events preloaded: how many, from a
	// seeded source (ZARLOG_BENCH_PRELOAD_SEED), so that every run (and
	// both binaries of a pair) preloads the same events.
	var preloadSeed uint64 = 1
	if s := os.Getenv("ZARLOG_BENCH_PRELOAD_SEED"); s != "" {
		if _, err := fmt.Sscan(s, &preloadSeed); err != nil {
			b.Fatalf("ZARLOG_BENCH_PRELOAD_SEED %q: %v", s, err)
		}
	}
	pick := rand.New(rand.NewPCG(preloadSeed, 0))
	type slot struct{ evs []workload.Event }
	slots := make([]*slot, games)
	var pre []Input
	preloaded := 0
	for i := range slots {
		evs, err := gen.Game()
		if err != nil {
			b.Fatal(err)
		}
		k := pick.IntN(len(evs))
		for _, e := range evs[:k] {
			pre = append(pre, input(e))
		}
		if len(pre) >= 2000 {
			appendAll(pre)
			preloaded += len(pre)
			pre = pre[:0]
		}
		slots[i] = &slot{evs[k:]}
	}
	if len(pre) > 0 {
		appendAll(pre)
		preloaded += len(pre)
	}
	if settle {
		if err := l.WaitCompacted(ctx); err != nil {
			b.Fatal(err)
		}
	}
	// The groups, made beforehand.
	satGen, err := workload.New(workload.Config{Seed: 8, Mix: benchMix(b), Rolls: rolls, Moves: rules})
	if err != nil {
		b.Fatal(err)
	}
	sat := &benchPool{gen: satGen}
	next := 0
	take := func() []Input {
		if games == 0 {
			return sat.take(b, group)
		}
		in := make([]Input, 0, group)
		for len(in) < group {
			s := slots[next%len(slots)]
			next++
			if len(s.evs) == 0 {
				if s.evs, err = gen.Game(); err != nil {
					b.Fatal(err)
				}
			}
			in = append(in, input(s.evs[0]))
			s.evs = s.evs[1:]
		}
		return in
	}
	var kinds [256]uint64
	l.seq.onBatch = func(batch *pebble.Batch) {
		r := batch.Reader()
		for {
			_, k, v, ok, err := r.Next()
			if err != nil {
				panic(err)
			}
			if !ok {
				return
			}
			if len(k) > 0 {
				kinds[k[0]] += uint64(len(k) + len(v))
			}
		}
	}
	loads0 := l.seq.loads
	tablesMu.Lock()
	counting = true
	tablesMu.Unlock()
	m0 := l.db.Metrics()
	// ZARLOG_BENCH_WINDOW_PROFILE=F writes a CPU profile of the measured
	// groups alone (-test.cpuprofile holds the preload as well).
	if f := os.Getenv("ZARLOG_BENCH_WINDOW_PROFILE"); f != "" {
		w, err := os.Create(f)
		if err != nil {
			b.Fatal(err)
		}
		defer w.Close()
		if err := pprof.StartCPUProfile(w); err != nil {
			b.Fatal(err)
		}
	}
	cpu0 := processCPU(b)
	events := 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		in := take()
		b.StartTimer()
		appendAll(in)
		events += len(in)
	}
	b.StopTimer()
	if os.Getenv("ZARLOG_BENCH_WINDOW_PROFILE") != "" {
		pprof.StopCPUProfile()
	}
	cpu := processCPU(b) - cpu0
	m := l.db.Metrics()
	tablesMu.Lock()
	counting = false
	tablesMu.Unlock()
	per := func(n uint64) float64 { return float64(n) / float64(events) }
	var flushed, compacted, read uint64
	for i := range m.Levels {
		flushed += m.Levels[i].TableBytesFlushed - m0.Levels[i].TableBytesFlushed
		compacted += m.Levels[i].TableBytesCompacted - m0.Levels[i].TableBytesCompacted
		read += m.Levels[i].TableBytesRead - m0.Levels[i].TableBytesRead
	}
	b.ReportMetric(cpu.Seconds()*1e6/float64(events), "cpu-us/event")
	b.ReportMetric(per(m.WAL.BytesIn-m0.WAL.BytesIn), "wal-B/event")
	b.ReportMetric(per(flushed), "flushed-B/event")
	b.ReportMetric(per(compacted), "compacted-B/event")
	b.ReportMetric(per(read), "compaction-read-B/event")
	b.ReportMetric(per(l.seq.loads-loads0), "loads/event")
	b.ReportMetric(float64(preloaded), "preloaded")
	for _, p := range []struct {
		name   string
		prefix byte
	}{{"history", prefixHistory}, {"head", prefixGame}, {"live", prefixLive}, {"tiles", prefixTile}, {"pieces", prefixPiece}, {"bundles", prefixBundle}, {"dedup", prefixDedup}, {"finished", prefixFinished}, {"open", prefixOpen}, {"meta", prefixMeta}, {"time", prefixTime}} {
		b.ReportMetric(per(kinds[p.prefix]), p.name+"-B/event")
		if os.Getenv("ZARLOG_BENCH_TABLES") != "" {
			b.ReportMetric(per(flushedBy[p.prefix]), p.name+"-flushed-B/event")
			b.ReportMetric(per(compWroteBy[p.prefix]), p.name+"-compacted-B/event")
			b.ReportMetric(per(compReadBy[p.prefix]), p.name+"-compaction-read-B/event")
		}
	}
	if os.Getenv("ZARLOG_PEBBLE_METRICS") != "" {
		b.Log("\n" + m.String())
	}
	// What a game read back from Pebble costs once the window is over
	// (after a restart, or past the game cache, every game in play is one):
	// loadGame of up to 2,000 games in play, timed (loadgame-us, a game),
	// each checked against the state the sequencer keeps of it (its
	// history's counts and its live part). Append has returned: the
	// sequencer waits for a request and touches no state.
	if games > 0 {
		var ids []string
		for _, s := range slots {
			if len(s.evs) > 0 {
				ids = append(ids, s.evs[0].Game)
			}
			if len(ids) == 2000 {
				break
			}
		}
		var took time.Duration
		loaded, checked := 0, 0
		for _, id := range ids {
			t0 := time.Now()
			g, err := loadGame(l.db, id)
			took += time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			if g == nil {
				continue
			}
			loaded++
			c, _, ok := l.seq.games.get(id)
			if !ok {
				continue
			}
			lc, _ := c.AppendLive(nil)
			lg, _ := g.AppendLive(nil)
			if c.History() != g.History() || !bytes.Equal(lc, lg) {
				b.Fatalf("game %q: loaded %+v, cached %+v", id, g.History(), c.History())
			}
			checked++
		}
		if loaded > 0 {
			b.ReportMetric(float64(took.Microseconds())/float64(loaded), "loadgame-us")
			b.ReportMetric(float64(checked), "loadgame-checked")
		}
	}
}
