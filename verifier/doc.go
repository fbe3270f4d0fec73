// Package verifier checks dice-proof-v1 evidence files and proof bundles
// offline: the contract of docs/SCHEMES.md §7–9 (from the shared DICE.md
// §5–6) and docs/FORMATS.md §3.
//
// Parse reads an evidence file strictly (the whole file under the
// canonical-JSON value rules, required fields with their types; unknown
// fields ignored) and returns an *InputError naming the field when it
// cannot. Verify and VerifyEvidence run the checks of the file's scheme —
// tavlarena-v1, anchored-v1 or per-roll-v1 — and return a Report: a list
// of named checks, each pass, fail or skipped with a translatable detail,
// the first wrong roll when a roll is wrong, and the honest statement of
// what the evidence proves and does not prove. Report.Exit gives the
// verifier's exit code (0 valid, 1 invalid, 2 bad input); Report.Text and
// Report.JSON render it in English, Turkish or Arabic.
//
// The check names are stable identifiers, listed by CheckNames: format,
// commitment, expected-commitment, anchor, rolls, sequence, and the
// proof-bundle checks log-inclusion, log-signature, log-order,
// log-agreement, log-witnesses and log-emitter-signatures, and moves: a
// bundle's game whose settings declare its moves logged is replayed through
// the rules engine (package rules/movecheck), and the first illegal move,
// missing move or wrong result is named, with the rule it breaks.
//
// A proof bundle is an evidence file with a "log" member (Log): every event
// leaf of the game, their inclusion proofs in one shared table of hashes and
// the signed checkpoint. For a bundle, the leaves are replayed through the
// per-game state machine of package events, the evidence is derived from
// the game they give (EvidenceOf), and the dice checks run on those values;
// the top-level fields need only agree with them. Format writes an Evidence
// (with its Log) as canonical JSON, so that a publisher and the verifier
// share one definition of the file. VerifyTlogProof checks a C2SP
// tlog-proof of a single event.
//
// The package is pure and small on purpose: it imports only zarlog's
// events packages (and, for bundles, merkle and the pure rules engine), the
// standard library and crypto packages — never NATS, Pebble or the ledger — so that an auditor
// can build and read the verifier alone. A test enforces it.
package verifier
