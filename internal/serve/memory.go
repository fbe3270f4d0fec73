package serve

// The memory `zarlog serve` may hold at its budgets (docs/OPERATIONS.md §9,
// "Memory"): a sum of named terms, each bounded by a budget of bytes or a
// count of things of bounded size, whatever the emitters send, and a
// headroom. The sum is the documented bound of the process's resident
// memory; the terms but the headroom are the Go runtime's soft memory
// limit (cmd/zarlog: --memory-limit), so that the collector keeps the
// heap's garbage within the bound instead of letting it double the live
// heap.

import (
	"fmt"
	"strings"

	"github.com/zarlog/zarlog/internal/httpserve"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/ledger/ingest"
)

// A MemoryTerm is one named part of MemoryBudget.
type MemoryTerm struct {
	// Name says what is held; Flag is the flag that sizes it ("" for a
	// fixed default).
	Name, Flag string
	Bytes      int64
	// Outside is true for memory the Go runtime does not count in its
	// heap: Pebble's block cache and memtables when the binary is built
	// with cgo (Pebble then allocates them with C's malloc).
	Outside bool
	// Headroom marks the last term: room past the Go runtime's soft
	// limit, not part of it.
	Headroom bool
}

// Fixed terms of MemoryBudget, measured rather than configured (the
// ranges are TestServeRSS's heap profiles at the default budgets).
const (
	// MemoryRuntime is the process idle: the binary, the Go runtime, the
	// goroutines of the listeners (54 MiB resident measured idle).
	MemoryRuntime = 64 << 20
	// MemoryPebbleWork is what Pebble's flushes and compactions allocate
	// while they run (sstable writers, compression buffers, the
	// compaction's iterators): 100–160 MiB in the profiles of a flood of
	// 60 KB states.
	MemoryPebbleWork = 160 << 20
	// MemoryNATS is the embedded nats-server: its clients' buffers, the
	// stream's cached message blocks, the consumer's state (10–25 MiB in
	// the profiles, the messages' bytes being bounded by the ingest's
	// prefetch and the stream's file store).
	MemoryNATS = 64 << 20
	// MemoryReceiptRequest is the memory of one held receipt request (a
	// goroutine and a waiter).
	MemoryReceiptRequest = 4 << 10
	// MemoryGroupFactor: a group in progress holds its messages' bytes
	// (ledger.DefaultMaxBatchBytes), their decoded events and states, and
	// the Pebble batch that writes them (entries, states, tiles): about
	// four times the batch's bytes.
	MemoryGroupFactor = 4
	// MemoryRecentLookup is one of the ledger's latest appended events
	// kept for status lookups (ledger.RecentLookups): its emitter and id
	// (at most 64 and wire.MaxIDLength, 128 bytes), its leaf index, its
	// slots in a map and a ring.
	MemoryRecentLookup = 256
	// MemoryHTTPConn is what one open HTTP connection of the public
	// listener may hold: its buffers and headers (httpserve's 16 KiB),
	// a response being written.
	MemoryHTTPConn = 32 << 10
)

// MemoryHeadroomPercent is the headroom over the sum of the terms: the
// Go runtime's memory limit is soft (the heap grows past it while a
// collection runs, and when collecting would take more than half the
// CPU), and the process holds memory the runtime does not count (the
// stacks of threads in system calls, C's allocator in a cgo build).
const MemoryHeadroomPercent = 25

// MemoryBudget returns the terms of what the service may hold with cfg's
// budgets (zero fields meaning their defaults), the headroom last.
func MemoryBudget(cfg Config) []MemoryTerm {
	or := func(v, def int64) int64 {
		if v > 0 {
			return v
		}
		return def
	}
	cache := or(cfg.GameCacheBytes, ledger.DefaultGameCacheBytes)
	receipts := or(int64(cfg.ReceiptRequests), ingest.DefaultMaxReceiptRequests)
	terms := []MemoryTerm{
		{Name: "game states kept decoded", Flag: "--game-cache-bytes", Bytes: cache},
		{Name: "the ledger's Pebble block cache", Bytes: ledger.DefaultPebbleCacheBytes, Outside: cgoBuild},
		{Name: fmt.Sprintf("the ledger's Pebble memtables (%d of %d MiB)", ledger.PebbleMemtables, ledger.DefaultMemTableBytes>>20),
			Bytes: ledger.PebbleMemtables * ledger.DefaultMemTableBytes, Outside: cgoBuild},
		{Name: "Pebble's flushes and compactions", Bytes: MemoryPebbleWork},
		{Name: fmt.Sprintf("the latest %s appended events' ids, for status lookups (%d B each)", commas(ledger.RecentLookups), MemoryRecentLookup),
			Bytes: ledger.RecentLookups * MemoryRecentLookup},
		{Name: fmt.Sprintf("the records of the latest %s messages decided, for message status requests (%d B each)", commas(ingest.MessageRecords), ingest.MessageRecordBytes),
			Bytes: int64(ingest.MessageRecords * ingest.MessageRecordBytes)},
		{Name: fmt.Sprintf("the interior nodes of the latest %d tiles read for inclusion proofs (%d KiB each)", ledger.ProofCacheTiles, ledger.ProofCacheTileBytes>>10),
			Bytes: ledger.ProofCacheTiles * ledger.ProofCacheTileBytes},
		{Name: "the bundle store's Pebble (cache and memtables)", Bytes: 16<<20 + ledger.PebbleMemtables*(4<<20), Outside: cgoBuild},
		{Name: fmt.Sprintf("a group in progress (%d × its %d MiB of messages)", MemoryGroupFactor, ledger.DefaultMaxBatchBytes>>20),
			Bytes: MemoryGroupFactor * ledger.DefaultMaxBatchBytes},
		{Name: "the ingest's prefetched messages (the client's buffer and the next batch)", Bytes: 2 * ingest.DefaultPrefetchBytes},
		{Name: fmt.Sprintf("receipt requests held (%d KiB each)", MemoryReceiptRequest>>10), Flag: "--receipt-requests", Bytes: receipts * MemoryReceiptRequest},
		{Name: fmt.Sprintf("HTTP connections (%d KiB each)", MemoryHTTPConn>>10), Bytes: httpserve.DefaultMaxConns * MemoryHTTPConn},
		{Name: "the embedded nats-server", Bytes: MemoryNATS},
		{Name: "the process idle", Bytes: MemoryRuntime},
	}
	var sum int64
	for _, t := range terms {
		sum += t.Bytes
	}
	return append(terms, MemoryTerm{Name: fmt.Sprintf("headroom past the Go runtime's soft limit (%d %%)", MemoryHeadroomPercent),
		Bytes: sum * MemoryHeadroomPercent / 100, Headroom: true})
}

// CgoBuild reports whether this binary was built with cgo: Pebble's block
// cache and memtables are then C's malloc, whose per-thread arenas hold
// more than Pebble counts, outside the bound's measurement (it is measured
// on the shipped, CGO_ENABLED=0 build: docs/OPERATIONS.md §9 "Memory").
func CgoBuild() bool { return cgoBuild }

// MemoryBound is the sum of terms: the documented bound of the process's
// resident memory.
func MemoryBound(terms []MemoryTerm) int64 {
	var sum int64
	for _, t := range terms {
		sum += t.Bytes
	}
	return sum
}

// GoMemoryLimit is the soft memory limit for the Go runtime that keeps
// the process within MemoryBound(terms): the sum of the terms but the
// headroom and what the runtime does not count (MemoryTerm.Outside).
func GoMemoryLimit(terms []MemoryTerm) int64 {
	var sum int64
	for _, t := range terms {
		if !t.Outside && !t.Headroom {
			sum += t.Bytes
		}
	}
	return sum
}

// FormatMemoryBudget writes the terms one a line, in MiB, with their sum.
func FormatMemoryBudget(terms []MemoryTerm) string {
	var b strings.Builder
	for _, t := range terms {
		fmt.Fprintf(&b, "%6d MiB  %s", t.Bytes>>20, t.Name)
		if t.Flag != "" {
			fmt.Fprintf(&b, " (%s)", t.Flag)
		}
		if t.Outside {
			b.WriteString(" [outside the Go heap: cgo]")
		}
		if t.Headroom {
			b.WriteString(" [not in the Go limit]")
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%6d MiB  the bound\n", MemoryBound(terms)>>20)
	return b.String()
}

// commas writes n with thousands separators, as the docs do.
func commas(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
