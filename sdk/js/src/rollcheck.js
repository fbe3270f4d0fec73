// The player's check of a per-roll-v1 roll (the Go SDK's CheckRoll): what
// a player's app runs the moment a roll is revealed. It is zarlog-verify's
// checkRollReveal, the function the pages and apps run, with the Go SDK's
// error.

import { checkRollReveal } from "zarlog-verify/src/app.js";

/**
 * A RollCheckError names the part of a per-roll-v1 roll that failed the
 * player's check ("roll-id", "second", "commitment", "dice"), with the
 * values compared: want (what the app knew before the roll, or recomputed)
 * and got (what the server revealed).
 */
export class RollCheckError extends Error {
  constructor(part, rollId, want, got) {
    super(RollCheckError.text(part, rollId, want, got));
    this.name = "RollCheckError";
    this.code = "roll-check";
    this.part = part;
    this.rollId = rollId;
    this.want = want;
    this.got = got;
  }

  static text(part, rollId, want, got) {
    switch (part) {
      case "roll-id": return "roll " + rollId + ": the reveal is of roll " + got + ", not of the roll committed to";
      case "second": return "roll " + rollId + ": the revealed second number " + got + " is not the " + want + " the app sent";
      case "commitment": return "roll " + rollId + ": the revealed seed hashes to " + got + ", not to the commitment " + want + " received before the roll";
      case "dice": return "roll " + rollId + ": the revealed dice are " + got + ", the seed and the second number give " + want;
    }
    return "roll " + rollId + ": " + part + " check failed";
  }
}

/**
 * checkRoll checks a per-roll-v1 roll as the player's app does when it is
 * revealed (docs/SCHEMES.md §4): before is the commitment the app received
 * before the roll ({matchId, rollId, commitment}), sent the second number
 * the app itself sent (null when the server made it), got the reveal
 * ({rollId, seed, second, secondFrom, dice}, as revealRoll gives it). It
 * resolves to the dice, or throws a RollCheckError naming the first part
 * that failed: the reveal is of the committed roll, the second number is
 * the app's (marked "client"), SHA-256 of the seed is the commitment, and
 * the dice are the seed's.
 */
export async function checkRoll(before, sent, got) {
  const r = await checkRollReveal(before, got, sent || null);
  if (!r.ok) throw new RollCheckError(r.part, before.rollId, r.want, r.got);
  return r.dice;
}
