// The rules a play or a roll can break, and the errors that name them
// (rules/errors.go). The codes are part of the log's contract:
// docs/RULES.md §6 lists them.

/** Rules a play can break (RULES.md §6). */
export const RULE_NOTATION = "notation";
export const RULE_NON_CANONICAL = "non-canonical";
export const RULE_NO_CHECKER = "no-checker";
export const RULE_BLOCKED = "blocked";
export const RULE_HIT_MARK = "hit-mark";
export const RULE_BAR_FIRST = "bar-first";
export const RULE_PINNED = "pinned";
export const RULE_HIT_AND_RUN = "hit-and-run";
export const RULE_FIRST_CHECKER = "first-checker";
export const RULE_BEAR_OFF_NOT_HOME = "bear-off-not-home";
export const RULE_BEAR_OFF_HIGHER = "bear-off-higher";
export const RULE_START_QUARTER = "start-quarter";
export const RULE_PRIME_TRAP = "prime-trap";
export const RULE_MUST_MOVE = "must-move";
export const RULE_BOTH_DICE = "must-use-both-dice";
export const RULE_MAX_DICE = "must-use-max-dice";
export const RULE_LARGER_DIE = "must-use-larger-die";
export const RULE_DICE = "dice";

/** Rules of the game flow. */
export const RULE_GAME_OVER = "game-over";
export const RULE_NOT_ON_TURN = "not-on-turn";
export const RULE_ROLL_MISMATCH = "roll-mismatch";
export const RULE_ROLL_ORDER = "roll-order";
export const RULE_PLAY_PENDING = "play-pending";
export const RULE_BAD_DICE = "bad-dice";

/** diceString writes dice as Go's rules.Dice.String does: "6-1". */
export function diceString(d) { return d[0] + "-" + d[1]; }

/** An IllegalMoveError says which rule a play breaks. */
export class IllegalMoveError extends Error {
  constructor(rule, seat, dice, play, detail, err) {
    super("rules: seat " + seat + " dice " + diceString(dice) + " play " + JSON.stringify(play) + ": " + rule + ": " + detail);
    this.rule = rule;
    this.seat = seat;
    this.dice = dice;
    this.play = play;
    this.detail = detail;
    this.err = err || null;
  }
}

/** A RollError says why a roll does not fit the game. */
export class RollError extends Error {
  constructor(rule, n, dice, detail) {
    super("rules: roll " + n + " (" + diceString(dice) + "): " + rule + ": " + detail);
    this.rule = rule;
    this.n = n;
    this.dice = dice;
    this.detail = detail;
  }
}
