// Package ledger stores zarlog's event log in Pebble: it sequences events
// into the leaves of an RFC 6962 transparency log, keeps the log's tiles in
// the C2SP tlog-tiles layout (https://c2sp.org/tlog-tiles), signs C2SP
// tlog-checkpoint checkpoints (https://c2sp.org/tlog-checkpoint) as signed
// notes, and maintains the projections derived from the log: game states,
// the dedup index, finished games and statistics. Events are zarlog's
// (docs/FORMATS.md §1); the tree, tiles and checkpoints are package merkle's.
//
// A Ledger has one writer, the sequencer. Callers hand it inputs with
// Append; it checks each (Parse and Verify run in the callers' goroutines,
// in parallel), groups the inputs of concurrent callers, and commits each
// group as one Pebble batch with one fsync: the entry bundles and hash tiles
// the group changed, the tree state, the projections, the append time and
// the rejected inputs. Only when that batch is durable does any caller learn
// its index. A signer loop then signs a checkpoint over the durable tree,
// stores it durably, and only then publishes it (Latest, WaitCovering).
//
// A failed write stops the ledger: nothing more is appended or signed, and
// the error is reported by Err and on Done. Reopening the ledger (Close,
// then Open) recovers once the fault is gone. Open checks the stored tree
// against the last signed checkpoint and refuses a store that differs.
//
// README.md in this directory describes the key layout and the life of an
// event: every durable step, and what a crash at each one leaves behind.
package ledger
