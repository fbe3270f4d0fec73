// Package movecheck connects the rules engine (package rules) to the log:
// its Checker implements events.FlowChecker, so that the ledger checks
// every move event of a game whose moves are logged against the rules and
// the logged dice, and anyone replaying the log (zarlog-verify's moves
// check) gets the same decisions.
//
// A game declares its moves logged and its variant in the commit's
// settings ({"moves": "logged", "variant": "tavla"}; docs/FORMATS.md §1.6).
// The Checker then follows the game event by event as docs/RULES.md §4
// describes: the opening (western or turkish-reroll, from the settings),
// the seat on turn, the roll that waits for its move, each move checked
// with rules.ApplyPlay and required in canonical form, the end of the game
// on the board (rules.Outcome), and the winner and points of a finished
// end. Under per-roll-v1 a match may hold several games: when one is over
// on the board, the next roll starts the next game's opening.
//
// The Checker is pure and keeps nothing between calls: the flow of play
// travels in the game's state as a State's canonical text (events.Game.
// Position), at most 100 bytes, which the ledger stores in its projection and
// passes back with the next event. The ledger wires it as
//
//	ledger.Config{Moves: movecheck.Checker{}}
//
// and the verifier replays a bundle's events through events.Apply with the
// same Checker.
package movecheck
