// zarlog-verify: the verifier, for browsers and Node.
//
// It checks a dice-proof-v1 evidence file or proof bundle (docs/SCHEMES.md
// §7–9, docs/FORMATS.md §3) with the platform's own WebCrypto, the way
// zarlog-verify (Go) does, under the same check names and message ids:
// format, commitment, expected-commitment, anchor, rolls, sequence,
// log-inclusion, log-signature, log-order, log-agreement,
// log-witnesses, log-emitter-signatures, moves. The drand beacon's
// BLS12-381 signature is checked with @noble/curves (bls.js); Ed25519 with
// WebCrypto, or with @noble/curves where WebCrypto has none (ed25519.js);
// the moves with the port of the rules engine (rules/, moves.js). A check
// that needs what the caller did not give (a log key, a witness policy,
// emitter keys; the pages fetch the log's witness policy) is "skipped"
// with the reason, as in Go. A check that this package could not make
// (browserLimit) is never passed over: the report is then no verdict
// (finish).
//
// Messages are ids of the Go verifier's catalog (package verifier), which
// render() formats in English, Turkish or Arabic.

import { hex, eq } from "./bytes.js";
import { sha256, hasWebCrypto } from "./sha256.js";
import { canon } from "./cjson.js";
import { formatTime } from "./time.js";
import { M } from "./render.js";
import { QUICKNET, roundTimeNs, verifyQuicknet } from "./drand.js";
import { parseLogKey } from "./note.js";
import { parsePolicy } from "./policy.js";
import { sealCode, parseExpected, expectedMatches, tavlarenaCommitment, tavlarenaRoller, anchoredRoller, perRollDice, Sequence } from "./dice.js";
import { parseEvidence, InputError } from "./evidence.js";
import { checkBundle } from "./bundle.js";
import { movesStatements } from "./moves.js";
import { isTlogProof } from "./tlog.js";
import { verifyTlogProof } from "./tlogproof.js";
import { pass, fail, skipped, diceStr } from "./check.js";


function formatMsg(ev) {
  if (ev.tavlarena) return M("FmtTavlarena", ev.tavlarena.gameId, ev.tavlarena.rolls.length);
  if (ev.anchored) return M("FmtAnchored", ev.anchored.matchId, ev.anchored.gameNo, ev.anchored.rolls.length);
  return M("FmtPerRoll", ev.perRoll.matchId, ev.perRoll.rolls.length);
}

function expectedCheck(opt, c, passId, failId, skip) {
  if (!opt.expected) return skipped("expected-commitment", skip);
  if (expectedMatches(opt.expected, c)) return pass("expected-commitment", M(passId, hex(c), opt.expected.str));
  return fail("expected-commitment", M(failId, opt.expected.str, hex(c), sealCode(c)));
}

async function gameRollsCheck(roll, rolls) {
  if (rolls.length === 0) return pass("rolls", M("RoNone"));
  let bad = 0, ref = null;
  for (let i = 0; i < rolls.length; i++) {
    const got = await roll(rolls[i].n);
    if (got[0] === rolls[i].dice[0] && got[1] === rolls[i].dice[1]) continue;
    if (bad === 0) ref = { index: i, n: rolls[i].n, claimed: rolls[i].dice, recomputed: got };
    bad++;
  }
  if (bad === 0) return pass("rolls", M("RoPass", rolls.length));
  return fail("rolls", M("RoFail", bad, rolls.length, ref.n + 1, diceStr(ref.claimed), diceStr(ref.recomputed)), { roll: ref });
}

const KIND = { opening: "KindOpening", reroll: "KindReroll", turn: "KindTurn" };
function sequenceCheck(opening, rolls) {
  if (rolls.length === 0) return pass("sequence", M("SqNone"));
  const s = new Sequence(opening);
  for (let i = 0; i < rolls.length; i++) {
    const x = rolls[i];
    const due = s.next, w = s.want;
    if (s.accept(x)) continue;
    const ref = { index: i, n: x.n };
    if (x.n !== due) return fail("sequence", M("SqGap", i + 1, x.n, due), { roll: ref });
    let why;
    if (w === "opening" && i === 0) why = "SqWhyFirst";
    else if (w === "opening") why = "SqWhyTie";
    else if (w === "reroll") why = "SqWhyReroll";
    else if (x.kind === "reroll") why = "SqWhyOneReroll";
    else why = "SqWhyDecided";
    return fail("sequence", M("SqKind", x.n + 1, M(KIND[x.kind]), M(KIND[w]), M(why)), { roll: ref });
  }
  let how;
  if (s.starter < 0) how = "SqOpeningPending";
  else if (opening === "western") how = "SqWestern";
  else if (s.want === "reroll") how = "SqTurkishPending";
  else how = "SqTurkishDone";
  return pass("sequence", M("SqPass", rolls.length, rolls.length - 1, M(how)));
}

async function verifyTavlarena(r, ev, opt) {
  const t = ev.tavlarena;
  r.checks.push(pass("format", formatMsg(ev)));
  const got = await tavlarenaCommitment(t.gameId, canon(ev.settings), t.seats, t.seed);
  r.commitment = hex(t.commitment);
  r.seal = sealCode(t.commitment);
  if (eq(got, t.commitment)) r.checks.push(pass("commitment", M("CmTavPass", hex(got), sealCode(got))));
  else r.checks.push(fail("commitment", M("CmTavFail", hex(got), sealCode(got), hex(t.commitment), sealCode(t.commitment))));
  const exp = expectedCheck(opt, t.commitment, "ExPass", "ExFail", M("ExSkipTav", sealCode(t.commitment)));
  r.checks.push(exp);
  r.checks.push(await gameRollsCheck(await tavlarenaRoller(t), t.rolls));
  r.checks.push(sequenceCheck(ev.opening, t.rolls));

  // What it proves and does not (package verifier's statements).
  r.proves = [M("StTavDice"), exp.status === "pass" ? M("StSealSeen") : M("StSealIf", sealCode(t.commitment))];
  r.notProves = [];
  if (ev.opponent === "computer") {
    r.proves.push(M("StComputerProves"));
    r.notProves.push(M("StComputerPeek"));
  } else {
    r.proves.push(M("StTavPlayers"));
    r.notProves.push(M("StTavServerKnew"));
  }
  if (exp.status !== "pass") r.notProves.push(M("StNoExpected"));
}

async function verifyAnchored(r, ev, opt) {
  const a = ev.anchored;
  r.checks.push(pass("format", formatMsg(ev)));
  const fp = await sha256(a.seed);
  r.commitment = hex(a.fingerprint);
  r.seal = sealCode(a.fingerprint);
  if (eq(fp, a.fingerprint)) r.checks.push(pass("commitment", M("CmAncPass", hex(fp))));
  else r.checks.push(fail("commitment", M("CmAncFail", hex(fp), hex(a.fingerprint))));
  r.checks.push(expectedCheck(opt, a.fingerprint, "ExAncPass", "ExAncFail", M("ExSkipAnc", sealCode(a.fingerprint))));

  const b = a.anchor;
  const known = hex(b.chain) === QUICKNET;
  const sealed = formatTime(a.sealedAt, "nano");
  const problems = [];
  let roundTime = "";
  if (!known) {
    problems.push(M("AnUnknownChain", hex(b.chain), QUICKNET));
  } else {
    roundTime = formatTime(roundTimeNs(b.round), "");
    if (b.round === 0) problems.push(M("AnRoundZero"));
    else if (!(await verifyQuicknet(b.round, b.signature, sha256))) problems.push(M("AnBadSig"));
  }
  const rnd = await sha256(b.signature);
  if (!eq(rnd, b.randomness)) problems.push(M("AnBadRand", hex(b.randomness), hex(rnd)));
  if (known && b.round !== 0 && a.sealedAt >= roundTimeNs(b.round)) problems.push(M("AnExisted", roundTime, sealed));
  if (problems.length === 0) {
    r.checks.push(pass("anchor", M("AnPass", b.round, roundTime, sealed)));
  } else {
    r.checks.push(fail("anchor", M("AnFail", b.round, problems)));
  }
  r.checks.push(await gameRollsCheck(await anchoredRoller(a), a.rolls));
  r.checks.push(sequenceCheck(ev.opening, a.rolls));

  const exp = r.checks.find(function (c) { return c.name === "expected-commitment"; });
  r.proves = [M("StAncDice", b.round)];
  r.notProves = [];
  if (exp.status === "pass") r.proves.push(M("StFpSeen"));
  if (ev.opponent === "computer") {
    r.proves.push(M("StAncAnchorComputer", b.round, roundTime, sealed), M("StComputerProves"));
    r.notProves.push(M("StComputerPeekAnc", b.round));
  } else {
    r.proves.push(M("StAncAnchor", b.round, roundTime, sealed));
    r.notProves.push(M("StAncServerKnew", b.round));
  }
  r.notProves.push(M("StAncSealTime"));
  if (exp.status !== "pass") r.notProves.push(M("StNoExpectedAnc"));
}

async function verifyPerRoll(r, ev, opt) {
  const p = ev.perRoll;
  r.checks.push(pass("format", formatMsg(ev)));
  let badC = 0, badR = 0, firstC = null, firstR = null, firstFP = null;
  for (let i = 0; i < p.rolls.length; i++) {
    const x = p.rolls[i];
    const fp = await sha256(x.seed);
    if (!eq(fp, x.commitment)) {
      if (badC === 0) { firstC = { index: i, rollId: x.rollId }; firstFP = fp; }
      badC++;
    }
    const got = await perRollDice(p.matchId, x);
    if (got[0] !== x.dice[0] || got[1] !== x.dice[1]) {
      if (badR === 0) firstR = { index: i, rollId: x.rollId, claimed: x.dice, recomputed: got };
      badR++;
    }
  }
  const n = p.rolls.length;
  if (n === 0) r.checks.push(pass("commitment", M("CmPerNone")));
  else if (badC === 0) r.checks.push(pass("commitment", M("CmPerPass", n)));
  else r.checks.push(fail("commitment", M("CmPerFail", badC, n, firstC.index + 1, firstC.rollId, hex(firstFP), hex(p.rolls[firstC.index].commitment)), { roll: firstC }));

  if (!opt.expected) {
    r.checks.push(skipped("expected-commitment", M("ExSkipPer")));
  } else {
    const seen = p.rolls.findIndex(function (x) { return expectedMatches(opt.expected, x.commitment); });
    if (seen >= 0) r.checks.push(pass("expected-commitment", M("ExPerPass", seen + 1, p.rolls[seen].rollId, opt.expected.str)));
    else r.checks.push(fail("expected-commitment", M("ExPerFail", opt.expected.str)));
  }
  if (n === 0) r.checks.push(pass("rolls", M("RoNone")));
  else if (badR === 0) r.checks.push(pass("rolls", M("RoPass", n)));
  else r.checks.push(fail("rolls", M("RoFailPer", badR, n, firstR.index + 1, firstR.rollId, diceStr(firstR.claimed), diceStr(firstR.recomputed)), { roll: firstR }));

  let seq = n === 0 ? pass("sequence", M("SqNone")) : pass("sequence", M("SqPerPass", n));
  const firstIdx = new Map();
  for (let i = 0; i < n; i++) {
    const id = p.rolls[i].rollId;
    if (firstIdx.has(id)) {
      seq = fail("sequence", M("SqPerDup", i + 1, id, firstIdx.get(id) + 1), { roll: { index: i, rollId: id } });
      break;
    }
    firstIdx.set(id, i);
  }
  r.checks.push(seq);

  const seen = opt.expected ? p.rolls.findIndex(function (x) { return expectedMatches(opt.expected, x.commitment); }) : -1;
  const fromServer = p.rolls.filter(function (x) { return x.secondFrom === "server"; }).length;
  r.proves = [M("StPerDice")];
  if (seen >= 0) r.proves.push(M("StPerSeen", seen + 1));
  r.perRollSeen = seen;
  r.notProves = [M("StPerBefore")];
  if (fromServer > 0) r.notProves.push(M("StPerServer", fromServer, n));
  if (fromServer < n) r.notProves.push(M("StPerClientLabel"));
  if (ev.opponent === "computer") {
    r.proves.push(M("StComputerProves"));
    r.notProves.push(M("StComputerPeek"));
  }
}

async function verifyScheme(r, ev, opt) {
  if (ev.scheme === "tavlarena-v1") await verifyTavlarena(r, ev, opt);
  else if (ev.scheme === "anchored-v1") await verifyAnchored(r, ev, opt);
  else await verifyPerRoll(r, ev, opt);
}
function diceChecks(scheme) {
  return scheme === "anchored-v1" ? ["commitment", "expected-commitment", "anchor", "rolls", "sequence"]
    : ["commitment", "expected-commitment", "rolls", "sequence"];
}

// verify checks a file (Uint8Array). opt: {expected: string, logKey:
// string} as a person typed them (empty: not given), witnessPolicy (a C2SP
// tlog-policy's text) with witnessesPending (a quorum not met yet is not a
// failure: the log's own pages), and emitterKeys: the
// game servers' verifier keys (strings). It resolves to a report: {scheme,
// exit, checks, summary, failed, notChecked, firstWrongRoll, evidence}.
async function verify(bytes, opt) {
  opt = opt || {};
  if (!hasWebCrypto()) {
    return finish({ scheme: "", checks: [fail("format", M("BrNoCrypto"))], badOptions: true });
  }
  const o = {};
  if (opt.expected && opt.expected.trim() !== "") {
    o.expected = parseExpected(opt.expected);
    if (!o.expected) return finish({ scheme: "", checks: [fail("format", M("BrBadExpected", opt.expected))], badOptions: true });
  }
  if (opt.emitterKeys && opt.emitterKeys.length > 0) {
    o.emitterKeys = new Map();
    for (const vkey of opt.emitterKeys) {
      const k = await parseLogKey(vkey);
      if (!k) return finish({ scheme: "", checks: [fail("format", M("BrBadLogKey", vkey))], badOptions: true });
      if (!o.emitterKeys.has(k.name)) o.emitterKeys.set(k.name, []);
      o.emitterKeys.get(k.name).push(k.key);
    }
  }
  if (opt.witnessPolicy) {
    try {
      o.witnessPolicy = typeof opt.witnessPolicy === "string" ? await parsePolicy(opt.witnessPolicy) : opt.witnessPolicy;
      o.witnessesPending = !!opt.witnessesPending;
    } catch (e) {
      return finish({ scheme: "", checks: [fail("format", M("BrBadPolicy", String(e.message)))], badOptions: true });
    }
  }
  if (opt.logKey && opt.logKey.trim() !== "") {
    o.logKey = await parseLogKey(opt.logKey);
    if (!o.logKey) return finish({ scheme: "", checks: [fail("format", M("BrBadLogKey", opt.logKey))], badOptions: true });
    o.logKey.str = o.logKey.name;
  }
  if (opt.leaf) o.leaf = opt.leaf;
  if (isTlogProof(bytes)) return finish(await verifyTlogProof(bytes, o));
  let ev;
  try {
    ev = parseEvidence(bytes);
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    const c = fail("format", e.msg);
    if (e.field) c.field = e.field;
    return finish({ scheme: "", checks: [c] });
  }
  const r = { scheme: ev.scheme, checks: [], expected: o.expected ? o.expected.str : "" };
  if (!ev.log) {
    await verifyScheme(r, ev, o);
    r.checks.push(
      skipped("log-inclusion", M("LgNoLog")),
      o.logKey ? fail("log-signature", M("LgKeyNoLog")) : skipped("log-signature", M("LgNoLog")),
      skipped("log-order", M("LgNoLog")),
      skipped("log-agreement", M("LgNoLog")),
      o.witnessPolicy ? fail("log-witnesses", M("LgPolicyNoLog")) : skipped("log-witnesses", M("LgNoLog")),
      o.emitterKeys ? fail("log-emitter-signatures", M("LgEmitterNoLog")) : skipped("log-emitter-signatures", M("LgNoLog")),
      skipped("moves", M("MvNoLog")));
    r.evidence = ev;
    return finish(r);
  }
  const b = await checkBundle(ev, o);
  if (b.derived) {
    await verifyScheme(r, b.derived, o);
    r.checks[0].detail = M("FmtBundle", r.checks[0].detail, ev.log.entries.length);
    r.evidence = b.derived;
  } else {
    r.checks.push(pass("format", M("FmtBundle", formatMsg(ev), ev.log.entries.length)));
    for (const name of diceChecks(ev.scheme)) r.checks.push(skipped(name, M("SkNoValues")));
    r.evidence = ev;
  }
  r.checks.push(...b.checks, b.moves);
  r.bundle = true;
  bundleStatements(r, ev.log, b, o);
  if (b.game) movesStatements(r, b.movesRes, true);
  return finish(r);
}

// bundleStatements adds what a proof bundle's log checks prove and do not
// prove (package verifier's bundleStatements).
function bundleStatements(r, l, b, opt) {
  if (!b.game) { r.proves = []; r.notProves = []; return; }
  r.proves = r.proves || [];
  r.notProves = r.notProves || [];
  r.proves.push(M("StBundle", l.entries.length, l.entries.length - 1, l.tree.size));
  const sig = b.checks.find(function (c) { return c.name === "log-signature"; });
  if (sig.status === "pass") {
    const signed = { "anchored-v1": "StBundleSignedAnc", "per-roll-v1": "StBundleSignedPer" }[r.scheme] || "StBundleSigned";
    r.proves.push(M(signed, opt.logKey ? opt.logKey.str : opt.signer));
    r.notProves = r.notProves.map(function (m) {
      if (m.id === "StNoExpected") return M("StNoExpectedLog");
      if (m.id === "StNoExpectedAnc") return M("StNoExpectedAncLog");
      return m;
    });
  } else {
    r.notProves.push(M("StBundleNoKey"));
  }
  if (b.cosigs > 0) r.proves.push(M("StBundleWitnessed", b.cosigs));
  else if (opt.witnessPolicy) r.notProves.push(M("StBundleNotWitnessed"));
  else if (sig.status === "pass") r.notProves.push(M("StBundleNoWitness"));
  const emi = b.checks.find(function (c) { return c.name === "log-emitter-signatures"; });
  if (emi.status === "pass") r.proves.push(M("StEmitterSigned", b.game.emitter));
  else r.notProves.push(M("StEmitterUnchecked", b.game.emitter));
}

// NEEDS_KEY are the checks of a bundle that need a key or a policy the
// caller may not have given.
const NEEDS_KEY = ["log-signature", "log-witnesses", "log-emitter-signatures"];

// finish adds the exit code, the summary and what was not checked here.
function finish(r) {
  r.exit = 0;
  for (const c of r.checks) {
    if (c.status === "fail") {
      if (c.name === "format") { r.exit = 2; break; }
      r.exit = 1;
    }
  }
  r.failed = r.checks.filter(function (c) { return c.status === "fail"; }).map(function (c) { return c.name; });
  // A check this package could not make (browserLimit) is not a pass:
  // while nothing failed, the report is no verdict (exit 2, "Not every
  // check could be made here"), never "Every roll checked".
  const unmade = r.checks.filter(function (c) { return c.status === "skipped" && c.browserLimit; }).map(function (c) { return c.name; });
  r.incomplete = r.exit === 0 && unmade.length > 0;
  if (r.incomplete) r.exit = 2;
  const sig = r.checks.find(function (c) { return c.name === "log-signature"; });
  if (r.incomplete) r.summary = M("BrNotAllChecked", unmade.join(", "));
  else if (r.exit === 0 && r.tlogProof) r.summary = M("SuTlogPass");
  else if (r.exit === 2 && r.tlogProof) r.summary = M("SuInputTlog");
  else if (r.exit === 2) r.summary = M(r.badOptions ? "BrBadOptions" : "SuInput");
  else if (r.exit === 1) r.summary = M("SuFail", r.failed.join(", "));
  else if (r.bundle && sig && sig.status === "skipped") r.summary = M("SuPassNoKey");
  else r.summary = M("SuPass");
  // What was not checked on this platform or for want of a key: said, not
  // passed over.
  r.notChecked = r.checks.filter(function (c) {
    return c.status === "skipped" && (c.browserLimit || ((r.bundle || r.tlogProof) && NEEDS_KEY.indexOf(c.name) >= 0));
  }).map(function (c) { return c.name; });
  const rolls = r.checks.find(function (c) { return c.name === "rolls" && c.status === "fail"; });
  r.firstWrongRoll = rolls ? rolls.roll : null;
  return r;
}

// rollsOf lists a parsed evidence's rolls for display.
function rollsOf(ev) {
  if (!ev) return [];
  if (ev.tavlarena) return ev.tavlarena.rolls;
  if (ev.anchored) return ev.anchored.rolls;
  if (ev.perRoll) return ev.perRoll.rolls;
  return [];
}

// fileErrorReport returns the report of a file that could not be read, as
// the Go zarlog-verify gives it (verifier.FileErrorReport): the format
// check failed, naming the file, exit 2. err is Node's error (its code:
// ENOENT, EACCES, EPERM, EISDIR) or any other; the latter is told by its
// message (verifier.InputErrorReport).
function fileErrorReport(path, err) {
  const id = { ENOENT: "InNoSuchFile", EACCES: "InPermission", EPERM: "InPermission", EISDIR: "InIsDirectory" }[err && err.code];
  const detail = id ? M(id, path) : M("InReadFailed", String((err && err.message) || err));
  return finish({ scheme: "", checks: [fail("format", detail)] });
}

export { verify, finish, rollsOf, fileErrorReport };
