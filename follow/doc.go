// Package follow keeps a verified copy of a transparency log that it reads
// over C2SP tlog-tiles HTTP (https://c2sp.org/tlog-tiles): the read side's
// core, the counterpart of package ledger, on which `zarlog mirror` and
// `zarlog audit` are built and another operator can build its own watcher
// (docs/WATCHERS.md).
//
// A Follower fetches the log's signed checkpoint (C2SP tlog-checkpoint,
// https://c2sp.org/tlog-checkpoint), verifies its signature with the log's
// key (and, if given, a witness quorum of a C2SP tlog-policy), fetches the
// new entry bundles with bounded concurrency, retries and backoff, rebuilds
// the Merkle tree itself from the entries with merkle.Builder, and accepts
// the checkpoint only if the rebuilt tree has the checkpoint's root at the
// checkpoint's size.
//
// A log may be hostile: it signs what it likes. So the follower fetches and
// verifies in steps (Config.Chunk bundles, Config.StepBytes bytes): a step's
// leaves are appended in memory and stored only once a consistency proof
// from the log's own hash tiles shows the tree of that size to be a prefix
// of the checkpoint's; a step that is not is never stored. A checkpoint
// larger than Config.MaxSize is refused before anything is fetched, a
// response larger than the format allows is refused as soon as it says so
// or goes past it (ErrLogFault, ErrTooLarge), and the store stops growing at
// its disk budget (Config.MaxBytes, ErrBudget), staying at its verified
// checkpoint. Because the tree is extended, never replaced, that one
// comparison also proves the new checkpoint consistent with every checkpoint
// accepted before. A validly signed checkpoint that cannot be true together
// with the verified copy — the same size with another root, a smaller one
// whose root the copy does not have at that size, a larger one whose root
// the log's own entries do not give — is refused with an Evidence record
// (a *Refusal error) that holds both signed checkpoints verbatim and what
// failed; WriteEvidence keeps it as a file and CheckEvidence lets anyone
// holding the log's key check it again.
//
// A Store (Pebble) holds the copy: the entry bundles, the hash tiles the
// Builder produced, the Builder's state, the accepted signed checkpoint, and
// a projection of the zarlog events among the leaves (games, finished games,
// roll statistics) replayed with events.Apply as an auditor does. Each step
// is one atomic batch, so a process killed at any moment resumes where its
// last batch left it: it refetches at most the bundles of one unfinished
// batch. The projection only ever sees entries of an accepted checkpoint;
// entries fetched for a checkpoint that is not yet accepted (each step a
// proven prefix of its tree) are kept, so a restart does not fetch them
// again, but are neither served nor projected.
package follow
