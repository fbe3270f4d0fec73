// Package testlog is the test support that runs the real thing: a ledger
// (package ledger, Pebble in a directory) behind the NATS ingest, for the
// tests of the SDK and of `zarlog emit` (OpenLedger); an origin log fed
// with real games, its bundles built and served over HTTP exactly as
// `zarlog serve` serves them, for the tests of the watchers (packages
// follow, mirror, audit and `zarlog mirror`/`zarlog audit`; StartOrigin);
// and whole games of the three schemes played through the SDK as a game
// backend plays them, for the end-to-end tests of `zarlog serve`
// (Tavlarena, Anchored, PerRoll). Moves are chosen by rules.Choose from a
// seeded source when the settings log them; otherwise every played roll gets
// the move "-" and the game ends by resignation after a number of rolls.
//
// Its functions that run in goroutines return errors and never print. The
// test support that stands on the pure packages alone is internal/testonly.
// Neither is part of zarlog's contract.
package testlog
