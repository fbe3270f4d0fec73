// A player's export (package verifier's export.go): every proof bundle of
// one player on one platform in one file, JSON lines, as the log serves it
// at /players/<emitter>/<id>/export: a header line
// {"emitter":…,"format":"zarlog-player-export-v1","games":N,"player":…},
// then one bundle per line. Each bundle is checked as verify() checks it,
// with the same options; the report is one verdict per game and a summary,
// in text and JSON byte for byte the Go command's.

import { verify } from "./verify.js";
import { jsonReport, verdict } from "./report.js";
import { M, render } from "./render.js";
import { catalog, langIndex } from "./messages.js";
import { parseEvent } from "./event.js";
import { UUID } from "./bytes.js";

export const EXPORT_FORMAT = "zarlog-player-export-v1";

const td = new TextDecoder();

function firstLine(bytes) {
  const i = bytes.indexOf(10);
  return i < 0 ? bytes : bytes.subarray(0, i);
}

/** isExport reports whether bytes are a player's export: the first line is a JSON object whose format is EXPORT_FORMAT. */
export function isExport(bytes) {
  const line = firstLine(bytes);
  if (line.length === 0 || line[0] !== 0x7b) return false;
  try {
    const h = JSON.parse(td.decode(line));
    return h !== null && typeof h === "object" && h.format === EXPORT_FORMAT;
  } catch (e) {
    return false;
  }
}

// header reads the header line as Go's encoding/json does into
// verifier.ExportHeader (unknown members refused): the members it could
// read, and the first error's text, if any (Go's decoder goes on after a
// member of the wrong type or an unknown one, and reports the first).
function header(line) {
  const h = JSON.parse(td.decode(line));
  const types = { emitter: "string", format: "string", games: "int", player: "string" };
  const out = { h: { emitter: "", format: "", games: 0, player: "" }, err: "" };
  const fail = function (e) { if (out.err === "") out.err = e; };
  for (const [k, v] of Object.entries(h)) {
    if (!(k in types)) { fail("json: unknown field " + JSON.stringify(k)); continue; }
    const want = types[k];
    const got = typeof v === "number" ? "number" : typeof v === "string" ? "string" : Array.isArray(v) ? "array" : typeof v === "boolean" ? "bool" : "object";
    if (v === null) continue;
    if (want === "int" ? !(typeof v === "number" && Number.isInteger(v)) : typeof v !== want) {
      fail("json: cannot unmarshal " + got + " into Go struct field ExportHeader." + k + " of type " + want);
      continue;
    }
    out.h[k] = v;
  }
  return out;
}

function gameID(line) {
  try {
    const b = JSON.parse(td.decode(line));
    return parseEvent(b.log.entries[0].leaf).game;
  } catch (e) {
    return "-";
  }
}

/**
 * verifyExport checks a player's export (isExport) as verifier.VerifyExport
 * does: every game's bundle with opt. It resolves to {header, games:
 * [{id, report}], problem (a message, or null), exit}.
 */
export async function verifyExport(bytes, opt) {
  const out = { header: { emitter: "", format: "", games: 0, player: "" }, games: [], problem: null, exit: 0 };
  const nl = bytes.indexOf(10);
  const head = nl < 0 ? bytes : bytes.subarray(0, nl);
  let rest = nl < 0 ? new Uint8Array(0) : bytes.subarray(nl + 1);
  const hr = header(head);
  out.header = hr.h;
  if (hr.err) {
    out.problem = M("PxHeader", hr.err);
    return finish(out);
  }
  const h = hr.h;
  if (!UUID.test(h.player) || !/^[a-z0-9][a-z0-9-]{0,62}$/.test(h.emitter) || h.games < 0) {
    out.problem = M("PxHeader", "emitter " + JSON.stringify(h.emitter) + ", player " + JSON.stringify(h.player) + ", games " + h.games);
    return finish(out);
  }
  if (rest.length > 0 && rest[rest.length - 1] === 10) rest = rest.subarray(0, rest.length - 1);
  const lines = [];
  if (rest.length > 0) {
    let s = 0;
    for (let i = 0; i <= rest.length; i++) {
      if (i === rest.length || rest[i] === 10) { lines.push(rest.subarray(s, i)); s = i + 1; }
    }
  }
  for (const line of lines) out.games.push({ id: gameID(line), report: await verify(line, opt) });
  if (lines.length !== h.games) out.problem = M("PxCount", h.games, lines.length);
  return finish(out);
}

function counts(x) {
  let checked = 0, invalid = 0, notChecked = 0;
  for (const g of x.games) {
    if (g.report.exit === 0) checked++;
    else if (g.report.exit === 1) invalid++;
    else notChecked++;
  }
  return { checked: checked, invalid: invalid, notChecked: notChecked };
}

function finish(x) {
  const c = counts(x);
  x.exit = c.invalid > 0 ? 1 : c.notChecked > 0 || x.problem ? 2 : 0;
  return x;
}

/** exportText renders an export's report as zarlog-verify prints it, in lang. */
export function exportText(x, lang) {
  const li = langIndex(lang);
  let s = "";
  x.games.forEach(function (g, i) {
    s += render(M("PxGame", i + 1, x.games.length, g.id, verdict(g.report).headline), catalog, li) + "\n";
  });
  if (x.problem) s += "\n" + render(x.problem, catalog, li) + "\n";
  const c = counts(x);
  return s + "\n" + render(M("PxSummary", x.games.length, x.header.player, x.header.emitter, c.checked, c.invalid, c.notChecked), catalog, li) + "\n";
}

/** exportJSON renders an export's report as zarlog-verify --json prints it (verifier.JSONExport). */
export function exportJSON(x, lang) {
  const o = { format: EXPORT_FORMAT, emitter: x.header.emitter, player: x.header.player, exit: x.exit };
  if (x.problem) o.problem = render(x.problem, catalog, langIndex(lang));
  o.games = x.games.map(function (g) { return { game: g.id, report: JSON.parse(jsonReport(g.report, lang)) }; });
  const c = counts(x);
  o.summary = { games: x.games.length, checked: c.checked, invalid: c.invalid, notChecked: c.notChecked };
  return JSON.stringify(o, null, 2) + "\n";
}
