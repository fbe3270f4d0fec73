// The report as zarlog-verify (Go) prints it: text for a terminal, or one
// JSON object, with the same check names, statuses and message texts
// (package verifier's Report.Text and Report.JSON).

import { render } from "./render.js";
import { catalog, langIndex } from "./messages.js";
import { CHECK_TITLES, STATUS_WORDS } from "./titles.js";

const TITLES = CHECK_TITLES;
const STATUS = STATUS_WORDS;

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

/** jsonReport returns report r as zarlog-verify --json prints it, in lang. */
export function jsonReport(r, lang) {
  const out = {};
  if (r.scheme) out.scheme = r.scheme;
  out.lang = lang;
  out.exit = r.exit;
  out.result = ["valid", "invalid", "bad-input"][r.exit];
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
    return j;
  });
  out.proves = r.exit === 0 ? (r.proves || []).map(function (m) { return T(m, lang); }) : [];
  out.doesNotProve = r.exit === 0 ? (r.notProves || []).map(function (m) { return T(m, lang); }) : [];
  out.summary = T(r.summary, lang);
  return JSON.stringify(out, null, 2) + "\n";
}
