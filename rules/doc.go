// Package rules implements the rules of backgammon and its Greek and Turkish
// relatives, so that a server can check every play against the dice it
// logged, and anyone can replay a finished game from the log and see that
// every play was legal. It is pure: no I/O, no clock, randomness only where
// a caller passes a *rand.Rand.
//
// The rules, the notation, the rule codes and their sources are in
// docs/RULES.md; the move event that carries a play is in docs/FORMATS.md
// §1.2. In short:
//
//   - Variants: Backgammon (Western, with gammons and backgammons), Portes
//     (Greek; no cube, no triple game), Tavla (Turkish; no cube, no triple
//     game, no hit-and-run in the home board), Plakoto (Turkish mahbusa;
//     pinning instead of hitting, the "mother" rule) and Fevga (Turkish
//     moultezim; no hitting, both sides run the same way).
//   - A Position holds both seats' checkers, each in its own numbering
//     (points 1-24 in the order the seat moves, 0 off, 25 the bar); its
//     compact text form (String, ParsePosition) suits a ledger projection.
//   - LegalPlays lists the legal plays of a roll, one per resulting
//     position, in canonical notation; ApplyPlay checks and applies a play
//     and names the rule an illegal one breaks (*IllegalMoveError).
//   - ParsePlay and FormatPlay read and write standard notation
//     ("24/18 13/11", "bar/22*", "6/off", "13/11(2)", "-" for no move);
//     CanonicalPlay gives the one spelling the log carries.
//   - A Game follows one game's rolls and plays in log order: the Western
//     or Turkish (re-roll) opening, whose turn it is, each move event
//     checked, the end of the game and its Result; a Match keeps the score
//     (with the Crawford rule).
//   - Choose is a small deterministic strategy for demonstration bots.
//
// The backgammon move generator agrees with GNU Backgammon on every position
// the differential test tries (gnubg_test.go); all variants agree with an
// independent brute-force implementation (reference_test.go) and with the
// perft goldens in testdata/perft.json.
package rules
