package ledger

import (
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// pebbleMemory is a Prometheus collector of the memory Pebble holds
// outside the Go heap's accounting of the ledger's own structures: its
// block cache, its memtables (zombie ones included: a memtable an
// iterator still reads after its flush), its file cache and its open
// iterators and snapshots (docs/OPERATIONS.md §9 "Memory"). It reads
// db.Metrics at each scrape, and nothing once the ledger is closed.
type pebbleMemory struct {
	mu sync.RWMutex
	db *pebble.DB // nil before Open and after Close

	blockCache, blockCacheMax       *prometheus.Desc
	memtable, memtables             *prometheus.Desc
	zombieMemtable, zombieMemtables *prometheus.Desc
	fileCache, fileCacheTables      *prometheus.Desc
	iterators, snapshots            *prometheus.Desc
	cacheMax                        int64
}

func newPebbleMemory(cacheMax int64) *pebbleMemory {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("zarlog_ledger_pebble_"+name, help, nil, nil)
	}
	return &pebbleMemory{
		cacheMax:        cacheMax,
		blockCache:      d("block_cache_bytes", "Bytes in Pebble's block cache."),
		blockCacheMax:   d("block_cache_max_bytes", "The block cache's capacity (Pebble's CacheSize)."),
		memtable:        d("memtable_bytes", "Bytes allocated by Pebble's memtables and large batches, zombie ones included."),
		memtables:       d("memtables", "Pebble's memtables, zombie ones included."),
		zombieMemtable:  d("zombie_memtable_bytes", "Bytes of memtables flushed but still referenced (by an iterator)."),
		zombieMemtables: d("zombie_memtables", "Memtables flushed but still referenced (by an iterator)."),
		fileCache:       d("file_cache_bytes", "Bytes of Pebble's cache of open sstable readers."),
		fileCacheTables: d("file_cache_tables", "Open sstable readers in Pebble's file cache."),
		iterators:       d("table_iterators", "Open sstable iterators."),
		snapshots:       d("snapshots", "Open Pebble snapshots (the ledger's read views)."),
	}
}

func (p *pebbleMemory) set(db *pebble.DB) {
	p.mu.Lock()
	p.db = db
	p.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (p *pebbleMemory) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{p.blockCache, p.blockCacheMax, p.memtable, p.memtables, p.zombieMemtable, p.zombieMemtables,
		p.fileCache, p.fileCacheTables, p.iterators, p.snapshots} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (p *pebbleMemory) Collect(ch chan<- prometheus.Metric) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.db == nil {
		return
	}
	m := p.db.Metrics()
	g := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	g(p.blockCache, float64(m.BlockCache.Size))
	g(p.blockCacheMax, float64(p.cacheMax))
	g(p.memtable, float64(m.MemTable.Size))
	g(p.memtables, float64(m.MemTable.Count))
	g(p.zombieMemtable, float64(int64(m.MemTable.ZombieSize))) // Pebble v2.1.7 lets it wrap below zero for a moment
	g(p.zombieMemtables, float64(m.MemTable.ZombieCount))
	g(p.fileCache, float64(m.FileCache.Size))
	g(p.fileCacheTables, float64(m.FileCache.TableCount))
	g(p.iterators, float64(m.TableIters))
	g(p.snapshots, float64(m.Snapshots.Count))
}
