// Package testonly is test support that stands on the pure packages alone
// (events, rules, merkle), so that any package's tests may import it: the
// deterministic games whose moves are logged (gamegen.go), the
// evidence-file and move vectors of testdata (dicevectors.go), an
// independent tlog-tiles client that checks everything it reads
// (tlogclient.go), and an in-memory tree for fake ledgers that serve real
// receipts (memtree.go). It is not part of zarlog's contract.
//
// The test support that needs the ledger, the service or the SDK is
// internal/testlog: merged here, it would make an import cycle with the
// tests of the packages it stands on.
package testonly
