// Answers the rules differential test's cases (publisher's TestJSRulesAgree)
// with this package's port of the rules engine: node tools/rules.mjs FILE,
// FILE the cases as JSON, Go's answers in them; it prints the same cases
// with this package's answers.
import { readFile } from "node:fs/promises";
import { parsePosition } from "../src/rules/position.js";
import { parsePlay, formatPlay } from "../src/rules/notation.js";
import { legalPlays, applyPlay } from "../src/rules/play.js";
import { IllegalMoveError } from "../src/rules/errors.js";

function applyAnswer(v, p, seat, d, text) {
  let pl;
  try {
    pl = parsePlay(text);
  } catch (e) {
    return "rule notation";
  }
  try {
    const r = applyPlay(v, p, seat, d, pl);
    return "ok " + formatPlay(r.play) + " " + r.pos.toString();
  } catch (e) {
    if (!(e instanceof IllegalMoveError)) return "error " + e.message;
    return "rule " + e.rule;
  }
}

function parseAnswer(text) {
  try {
    return "ok " + formatPlay(parsePlay(text));
  } catch (e) {
    return "error";
  }
}

const cases = JSON.parse(await readFile(process.argv[2], "utf8"));
const out = cases.map(function (c) {
  const p = parsePosition(c.variant, c.position);
  return {
    legal: legalPlays(c.variant, p, c.seat, c.dice).map(formatPlay),
    plays: c.plays.map(function (x) { return { play: x.play, answer: applyAnswer(c.variant, p, c.seat, c.dice, x.play) }; }),
    texts: (c.texts || []).map(function (x) { return { text: x.text, answer: parseAnswer(x.text) }; }),
  };
});
process.stdout.write(JSON.stringify(out));
