// Package sdk is the library game backends use to log their games' dice in a
// zarlog ledger: it builds each game's events, checks them as the ledger
// will, signs them, sends them over NATS JetStream and obtains the ledger's
// receipts. It must not import the ledger or Pebble: backends link it (a
// test keeps it so).
//
// # Games
//
// A Backend (NewBackend: a Client and the backend's signing key) makes games
// of the three schemes of docs/SCHEMES.md, each with a small API for its life:
//
//	tavlarena-v1  NewTavlarena → Contribute ×2 → (Roll, Move)… → End → Reveal
//	anchored-v1   NewAnchored  → Token ×2 → RecordBeacon → (Roll, Move)… → End → Reveal
//	per-roll-v1   NewPerRoll   → (CommitRoll → ClientSecond|ServerSecond → RevealRoll, Move)… → End
//
// The backend draws the seeds (and ids) from its injected randomness, the
// SDK computes every die, applies the roll-sequence rules (opening ties
// rolled again, the Turkish re-roll) and says who plays each roll; the
// caller only asks for the next roll. Every event is built with package
// events, applied to the game's state with events.Apply and the rules engine
// exactly as the ledger will apply it (so a backend bug is refused at the
// source, with ErrRefused and the ledger's rejection code), signed when it is
// binding, and published with the id "<game>:<seq>" as Nats-Msg-Id and the
// game id as OrderKey. Each call waits for JetStream's ack; an
// ErrNotAcknowledged result means the event is made and will be published
// again by the next call or Flush. In a game whose settings log the moves
// ("moves": "logged") Move checks the play with the rules engine and logs
// its canonical text.
//
// # Receipts: the commitment before the first roll
//
// A JetStream ack is not the ledger's promise; the receipt is (docs/NATS.md
// §3, §5): a C2SP tlog-proof of the event — its bytes, its leaf index, its
// inclusion proof and a signed checkpoint of a tree that contains it
// (docs/FORMATS.md §4). The Client checks every receipt against the bytes it
// published, and with Config.LogKey against the log's key, before returning
// it, so a backend never holds one that does not prove its own event. The
// pattern is: create the game, wait for the commit's receipt
// (CommitReceipt), hand it to the players' apps (Receipt.Format is the file;
// they check it with CheckReceipt, or the JavaScript package's checkReceipt,
// against the log's key), and only then roll. The first Roll
// (per-roll-v1: the first CommitRoll) waits for that receipt by default
// (GameConfig.SkipCommitReceipt turns it off), so no die is known before the
// commitment is provably in the log.
//
// # Snapshots
//
// A game's Snapshot (canonical JSON, see Snapshot) holds its events, how many
// JetStream acknowledged, its secrets and the commit's receipt; the Backend's
// Resume functions rebuild the game from it after the backend restarts,
// replaying the events through the state machine and checking each secret
// against its commitment. Snapshots hold the seeds: keep them like keys,
// never log them. The SDK itself logs nothing, and its games print no
// secret (String, GoString, LogValue).
//
// # Games against the computer
//
// A Backend from NewDevice runs the same games on a player's device with no
// server in the loop: nothing is published, and a finished game's Evidence
// is the same dice-proof-v1 file, whose settings ("opponent": "computer")
// make zarlog-verify say plainly that whoever held the device could have
// looked at the dice in advance.
//
// # The player's check of a per-roll-v1 roll
//
// CheckRoll is what a player's app runs when a per-roll-v1 roll is revealed:
// against the commitment it received before the roll and the second number
// it sent, it confirms the seed and the dice at once (docs/SCHEMES.md §4).
//
// # Anchors
//
// An anchored-v1 game's beacon comes from a BeaconSource: recorded beacons
// (NewRecordedBeacons, QuicknetBeacons) or drand HTTP relays (NewRelay, v1
// and v2 APIs). Every beacon is verified against the pinned quicknet chain
// (package events/drand) before use.
//
// # Transport
//
// The Client (client.go, receipt.go) publishes event bytes: it retries
// until JetStream acknowledges (across NATS restarts), keeps a bounded window
// of messages in flight, packs events that queue up into multi-event messages
// (a message that is not full waits up to Config.Linger, 20 ms by default,
// for more events, only while the emitter's recent rate, each event
// counted when the application publishes it, predicts one within a
// quarter of it: an emitter below about 200 events a second never waits,
// and a quiet emitter's lone event goes at once; optionally it also
// waits while others are in flight, packing what queues meanwhile:
// Config.PartialFlights), and orders events with the same OrderKey.
package sdk
