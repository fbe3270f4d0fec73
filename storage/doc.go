// Package storage keeps a zarlog log in S3-compatible object storage, with
// one sequencer at a time: what `zarlog serve --storage s3://BUCKET[/PREFIX]`
// and `zarlog serve --standby` run (docs/OPERATIONS.md "Running two
// nodes", "Restoring from the bucket").
//
// The bucket holds the log in the C2SP tlog-tiles layout
// (https://c2sp.org/tlog-tiles) — the checkpoint, the hash tiles and the
// entry bundles — beside the append times of the leaves (times.go), the
// lock (lock.go) and what the publisher exports (proof bundles, pages).
// Pebble stays the sequencer's working store (package ledger); the bucket
// is the durable public copy, and what a new node starts from.
//
// A Node is the ledger's Config.Publish. While it holds the lock it makes
// every checkpoint durable in the bucket before the ledger publishes it
// (and so before any receipt or reader sees it):
//
//  1. the tiles, entry bundles and times the checkpoint adds are written,
//     in parallel, each create-only (If-None-Match: *); an object that an
//     earlier sequencer wrote beyond its last checkpoint, and that differs,
//     is replaced with If-Match on its ETag, once the lock, read after the
//     object, shows this node still holds it: a node that lost the lock
//     without knowing yet stops there, fenced, and never replaces what the
//     new holder wrote;
//  2. the lock is written with the new checkpoint, If-Match the ETag of
//     the lock as this node last wrote it: the commit point. A failed
//     compare means another node has taken the log: ledger.ErrFenced, and
//     the ledger stops, having published nothing more;
//  3. the public checkpoint object is written (If-Match its last ETag);
//  4. the ledger publishes the checkpoint: receipts, readers, bundles.
//
// The lock is renewed (rewritten with Renewal+1) every Lease/4 while
// nothing new is published. A node that is not the holder follows the
// bucket: it reads the lock every Lease/8, verifies each new checkpoint
// (the log's signature, and the root of its own tree after the leaves it
// fetches from the bucket, as a mirror does: package follow's Source), and
// imports the leaves into its ledger (ledger.Import) with their append
// times, so that its tree, projections and dedup state are the
// sequencer's. When the lock has not changed for its Lease, by its own
// clock, it takes it over: it checks its copy against the lock's
// checkpoint, writes the lock with Term+1 (If-Match: the holder's last
// write loses its race, or the takeover does), and from then on sequences.
//
// Safety does not rest on the clocks: every checkpoint published extends
// the one in the lock by a compare-and-swap, so two nodes can never both
// publish a checkpoint over the same one. The lease only decides when a
// standby tries.
//
// What a node answers from its ledger does rest on them: a holder that was
// cut off or paused past its lease keeps its ledger, which is no longer
// the log's, until its next write of the lock fails. Node.Fresh says
// whether it still holds the log for sure (its last successful write was
// sent less than Lease/2 ago; the argument is in Fresh's doc), and
// `zarlog serve` ingests and answers receipt and status requests only
// while it does (Node.Hold, package ingest's Config.Hold).
package storage
