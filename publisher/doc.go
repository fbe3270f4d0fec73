// Package publisher makes what players, auditors and mirrors read from
// zarlog's log, and can change nothing in it:
//
//   - the log itself over HTTP as C2SP tlog-tiles (https://c2sp.org/tlog-tiles),
//     with each event's C2SP tlog-proof, /metrics and /healthz (api.go),
//     reading through LogReader, the contract a mirror implements too;
//   - proof bundles (bundle.go: BuildBundle, TlogProofs), built by themselves
//     for every finished game as soon as a signed checkpoint covers it, kept in
//     a bundle store of their own and announced on NATS (bundler.go, store.go,
//     announce.go);
//   - the same tree of files written to a directory for a static server or a
//     CDN (export.go);
//   - the audit pages, the offline auditor, the per-game Python checker and
//     the statistics (pages.go, gamepage.go, auditor.go, python.go, stats.go;
//     docs/PAGES.md).
//
// docs/HTTP.md describes every endpoint, the bundle store and the export.
package publisher
