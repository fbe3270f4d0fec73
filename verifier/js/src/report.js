// The report as zarlog-verify (Go) prints it: text for a terminal, or one
// JSON object, with the same check names, statuses and message texts
// (package verifier's Report.Text and Report.JSON).

import { M, render } from "./render.js";
import { rollsOf } from "./verify.js";
import { catalog, langIndex } from "./messages.js";
import { CHECK_TITLES, STATUS_WORDS } from "./titles.js";

const TITLES = CHECK_TITLES;
const STATUS = STATUS_WORDS;

// INDEX stands for a tlog-proof's index in the JSON until it is written.
const INDEX = "\u0000index";

function T(m, lang) { return render(m, catalog, langIndex(lang)); }
function id(x, lang) { return T({ id: x, args: [] }, lang); }

/** textReport renders report r as zarlog-verify prints it, in lang. */
export function textReport(r, lang) {
  const width = Math.max(...Object.values(STATUS).map(function (s) { return [...id(s, lang)].length; }));
  let out = "";
  for (const c of r.checks) {
    let st = id(STATUS[c.status], lang);
    if (lang !== "ar") st += " ".repeat(width - [...st].length);
    let title = id(TITLES[c.name], lang);
    if (title !== c.name) title += " (" + c.name + ")";
    out += st + "  " + title + ": " + T(c.detail, lang) + "\n";
  }
  if (r.event) out += "\n" + T({ id: "EvLine", args: [r.event.index, r.event.leaf] }, lang) + "\n";
  if (r.exit === 0) {
    out += "\n";
    out += list(id("HProves", lang), r.proves || [], lang);
    out += list(id("HNotProves", lang), r.notProves || [], lang);
  } else if (r.exit === 1) {
    out += "\n" + id("SuFailNote", lang) + "\n";
  }
  return out + "\n" + T(r.summary, lang) + "\n";
}

function list(head, items, lang) {
  if (items.length === 0) return "";
  return head + "\n" + items.map(function (m) { return "- " + T(m, lang) + "\n"; }).join("");
}

// The player words of a failed check, and of a skipped one the verdict
// lists as not checked (package verifier's vdFail and vdNotChecked).
const VD_FAIL = ["format", "commitment", "expected-commitment", "anchor", "sequence", "log-inclusion", "log-signature",
  "log-order", "log-agreement", "log-witnesses", "log-emitter-signatures", "moves"];
const VD_NOT_CHECKED = ["anchor", "log-witnesses", "log-emitter-signatures", "moves"];

/**
 * verdict returns report r in a player's words, as package verifier's
 * Report.Verdict does: {kind, headline, details}, messages to render.
 * kind is checked, untied (a proof bundle checked without the log's key),
 * wrong-seal (only the seal code given is wrong), failed or bad-input; or,
 * in this package alone, incomplete: a check it could not make (never
 * so since the rules engine's port). Every sentence comes from the checks that ran and from what the scheme
 * proves and does not prove (docs/SCHEMES.md §9).
 */
export function verdict(r) {
  const status = {};
  for (const c of r.checks) status[c.name] = c.status;
  const ev = r.evidence;
  const rolls = rollsOf(ev).length;
  const round = ev && ev.anchored ? ev.anchored.anchor.round : 0;
  const computer = !!(ev && ev.opponent === "computer");
  // A check this package could not make: no verdict (never ✓, nor ✗).
  if (r.incomplete) return { kind: "incomplete", headline: r.summary, details: [] };
  if (r.exit === 2) {
    const f = r.checks.find(function (c) { return c.name === "format"; });
    return { kind: "bad-input", headline: M(r.badOptions ? "BrBadOptions" : "VdBadInput"), details: f ? [f.detail] : [] };
  }
  if (r.tlogProof && r.exit === 0) return { kind: "checked", headline: M("SuTlogPass"), details: [] };
  if (r.tlogProof) return { kind: "failed", headline: r.summary, details: [] };
  if (r.failed.length === 1 && r.failed[0] === "expected-commitment") {
    const v = { kind: "wrong-seal", headline: M("VdWrongSeal"), details: [] };
    v.details.push(r.scheme === "per-roll-v1" ? M("VdSealOtherPer", r.expected) : M("VdSealOther", r.expected, r.seal));
    if (r.bundle && status["log-signature"] !== "pass") v.details.push(M("VdUntied"));
    return v;
  }
  if (r.exit === 1) return { kind: "failed", headline: M("VdFail"), details: failureWords(r) };

  const tied = status["log-signature"] === "pass";
  const v = { kind: "checked", headline: M("SuPass"), details: [] };
  if (r.bundle && !tied) { v.kind = "untied"; v.headline = M("VdUntiedHead"); }
  if (rolls === 0) v.details.push(M("VdNoRolls"));
  else if (r.scheme === "tavlarena-v1") v.details.push(M("VdDiceTav", rolls));
  else if (r.scheme === "anchored-v1") v.details.push(M("VdDiceAnc", rolls, round));
  else v.details.push(M("VdDicePer", rolls));
  if (r.scheme === "per-roll-v1") {
    if (status["expected-commitment"] === "pass" && r.perRollSeen >= 0) v.details.push(M("VdPerSeen", r.perRollSeen + 1));
  } else if (status["expected-commitment"] === "pass") {
    v.details.push(M("VdSealSeen"));
  } else if (tied && status["log-order"] === "pass") {
    v.details.push(M(r.scheme === "anchored-v1" ? "VdSealLoggedAnc" : "VdSealLogged"));
  }
  if (r.scheme === "anchored-v1" && status.anchor === "pass") v.details.push(M("VdAnchor", round));
  if (tied && status["log-inclusion"] === "pass") v.details.push(M("VdInLog"));
  else if (r.bundle) v.details.push(M("VdUntied"));
  else v.details.push(M("VdNoLog"));
  if (computer) v.details.push(M("VdLimitComputer"));
  else if (r.scheme === "tavlarena-v1") v.details.push(M("VdLimitTav"));
  else if (r.scheme === "anchored-v1") v.details.push(M("VdLimitAnc"));
  else v.details.push(M("VdLimitPer"));
  // The witnesses, when a policy was given: witnessed, or not yet (with
  // witnessesPending; without it a quorum not met fails).
  const wit = r.checks.find(function (c) { return c.name === "log-witnesses"; });
  if (r.bundle && wit && wit.status === "pass" && wit.detail.id === "LwPass") v.details.push(M("VdWitnessed", wit.detail.args[0], wit.detail.args[1]));
  else if (r.bundle && wit && pendingWitnesses(wit)) v.details.push(M("VdNotWitnessed"));
  const nc = r.checks.filter(function (c) {
    return c.status === "skipped" && VD_NOT_CHECKED.indexOf(c.name) >= 0 && (r.bundle || c.name === "anchor") && !pendingWitnesses(c);
  }).map(function (c) { return M("VdNC-" + c.name); });
  if (nc.length > 0) v.details.push(M("VdNotChecked", nc));
  return v;
}

// pendingWitnesses: a log-witnesses check skipped because the policy's
// quorum has not cosigned yet (witnessesPending): checked, and found not
// witnessed yet.
function pendingWitnesses(c) {
  return c.name === "log-witnesses" && c.status === "skipped" && (c.detail.id === "LwNotYet" || c.detail.id === "LwQuorum");
}

// failureWords: the first failure of the game in a player's words (a wrong
// roll counted from 1), the seal code given last.
function failureWords(r) {
  const out = [];
  const first = r.checks.find(function (c) { return c.status === "fail" && c.name !== "expected-commitment"; });
  if (first) {
    const w = first.roll;
    if (first.name === "rolls" && w && w.claimed) {
      const number = w.n !== undefined ? w.n + 1 : w.index + 1;
      out.push(M("VdWrongRoll", number, w.claimed[0] + "-" + w.claimed[1], w.recomputed[0] + "-" + w.recomputed[1]));
    } else if (VD_FAIL.indexOf(first.name) >= 0) {
      out.push(M("VdFail-" + first.name));
    } else {
      out.push(M("VdFailOther", M(TITLES[first.name])));
    }
  }
  if (r.failed.indexOf("expected-commitment") >= 0) out.push(M("VdFail-expected-commitment"));
  return out;
}

/** jsonReport returns report r as zarlog-verify --json prints it, in lang. */
export function jsonReport(r, lang) {
  const out = {};
  if (r.scheme) out.scheme = r.scheme;
  out.lang = lang;
  out.exit = r.exit;
  out.result = ["valid", "invalid", "bad-input"][r.exit];
  out.tiedToLog = r.checks.some(function (c) { return c.name === "log-signature" && c.status === "pass"; });
  out.unchecked = r.checks.filter(function (c) { return c.status === "skipped"; }).map(function (c) { return c.name; });
  // The event of a tlog-proof: its index (a uint64, written exactly) and
  // the leaf itself, canonical JSON, as Go's json.RawMessage.
  if (r.event) out.event = { index: INDEX, leaf: JSON.parse(r.event.leaf) };
  out.checks = r.checks.map(function (c) {
    const j = { name: c.name, status: c.status, detail: T(c.detail, lang) };
    if (c.field) j.field = c.field;
    if (c.roll) {
      const x = { index: c.roll.index };
      if (c.roll.n !== undefined) x.n = c.roll.n;
      if (c.roll.rollId) x.rollId = c.roll.rollId;
      if (c.roll.claimed) x.claimed = c.roll.claimed;
      if (c.roll.recomputed) x.recomputed = c.roll.recomputed;
      j.roll = x;
    }
    if (c.move) {
      // The event the rules engine refused, as Go's MoveRef.
      const m = c.move, x = { entry: m.entry, seq: m.seq, code: m.code };
      if (m.rule) x.rule = m.rule;
      if (m.n !== undefined) x.n = m.n;
      if (m.seat !== undefined) x.seat = m.seat;
      if (m.play) x.play = m.play;
      if (m.dice) x.dice = m.dice;
      j.move = x;
    }
    return j;
  });
  out.proves = r.exit === 0 ? (r.proves || []).map(function (m) { return T(m, lang); }) : [];
  out.doesNotProve = r.exit === 0 ? (r.notProves || []).map(function (m) { return T(m, lang); }) : [];
  out.summary = T(r.summary, lang);
  const v = verdict(r);
  out.verdict = { kind: v.kind, headline: T(v.headline, lang), details: v.details.map(function (m) { return T(m, lang); }) };
  let s = JSON.stringify(out, null, 2) + "\n";
  if (r.event) s = s.replace('"index": ' + JSON.stringify(INDEX), '"index": ' + String(r.event.index));
  return s;
}
