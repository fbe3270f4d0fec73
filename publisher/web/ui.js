// zarlog: shows a browser verifier report (verify.js) in a page. Shared by
// the game page and the offline auditor.
"use strict";

var ZarlogUI = (function () {
  const TITLES = ZarlogVerifier.CHECK_TITLES;
  const STATUS = ZarlogVerifier.STATUS_WORDS;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // IDENTS matches what a message names but does not say in words: a
  // flag, a field path, a scheme or format, the verifier's name
  // (publisher's identRE).
  const IDENTS = /--[a-z][a-z-]*|\blog\.entries\[\d+\]|\brolls\[\d+\]|\b[a-z]+(?:-[a-z]+)*-v1\b|\bzarlog-verify\b/g;

  // withIdents fills e with text, each identifier in a left-to-right code
  // element, so that a right-to-left sentence does not reorder it.
  function withIdents(e, text) {
    let last = 0;
    for (const m of text.matchAll(IDENTS)) {
      e.appendChild(document.createTextNode(text.slice(last, m.index)));
      const c = el("code", "ident", m[0]);
      c.dir = "ltr";
      e.appendChild(c);
      last = m.index + m[0].length;
    }
    e.appendChild(document.createTextNode(text.slice(last)));
    return e;
  }

  // NUMBERS matches what reads left to right inside a sentence of any
  // direction: a dice pair, a score or a run of numbers joined by hyphens
  // or dashes ("6-2"), and a percentage ("16.7%") (publisher's numberRE).
  const NUMBERS = /\d+(?:\.\d+)?%|\d+(?:[-\u2013]\d+)+/g;
  // A Latin letter or a digit beside one makes it part of a code ("J3-5"
  // of a seal code); an Arabic letter does not ("و1-3", "and 1-3").
  const JOINS = /[A-Za-z\p{N}\-\u2013.:/_+\u2066\u2060]/u;

  // isolateNumbers keeps each match of NUMBERS that stands alone (not part
  // of a word, a code, a date or a time) in one piece, as the Go pages do
  // (publisher's keepNumbers): in a left-to-right isolate (LRI … PDI), and
  // a pair with a word joiner after its hyphen, so that in an Arabic
  // sentence "6-2" is not drawn "2-6" and no pair breaks across lines.
  function isolateNumbers(text) {
    return text.replace(NUMBERS, function (m, off, str) {
      const before = Array.from(str.slice(Math.max(0, off - 2), off)).pop();
      const after = Array.from(str.slice(off + m.length, off + m.length + 2))[0];
      const pct = m.endsWith("%");
      if (before !== undefined && JOINS.test(before)) return m;
      if (!pct && after !== undefined && after !== "." && after !== ":" && JOINS.test(after)) return m;
      return "\u2066" + (pct ? m : m.replace(/[-\u2013]/g, "$&\u2060")) + "\u2069";
    });
  }

  // show renders report r into container, in the language of catalog cat
  // (id -> [text, …]) at index li, and returns a plain summary object.
  function show(container, r, cat, li) {
    const T = function (m) { return ZarlogVerifier.render(m, cat, li); };
    container.textContent = "";
    const list = el("ul", "checks");
    for (const c of r.checks) {
      const item = el("li", "check " + c.status);
      item.dataset.name = c.name;
      item.dataset.status = c.status;
      const title = T({ id: TITLES[c.name], args: [] });
      item.appendChild(el("span", "status", T({ id: STATUS[c.status], args: [] })));
      const name = el("span", "name", title);
      if (title !== c.name) {
        // The check's name, as zarlog-verify prints it: an identifier.
        name.appendChild(document.createTextNode(" "));
        const code = el("code", "check-id", c.name);
        code.dir = "ltr";
        name.appendChild(code);
      }
      item.appendChild(name);
      item.appendChild(withIdents(el("span", "detail"), isolateNumbers(T(c.detail))));
      list.appendChild(item);
    }
    container.appendChild(list);
    const w = r.firstWrongRoll;
    if (w) {
      // Rolls are counted from 1, as the verdict and the roll tables count
      // them; data-n and data-index keep the file's own numbers.
      const claimed = w.claimed[0] + "-" + w.claimed[1], got = w.recomputed[0] + "-" + w.recomputed[1];
      const p = el("p", "first-wrong", isolateNumbers(w.rollId
        ? T({ id: "BrFirstWrongPer", args: [w.index + 1, w.rollId, claimed, got] })
        : T({ id: "BrFirstWrong", args: [w.n + 1, claimed, got] })));
      p.id = "first-wrong";
      p.dataset.index = String(w.index);
      if (w.n !== undefined) p.dataset.n = String(w.n);
      p.dataset.claimed = claimed;
      p.dataset.recomputed = got;
      container.appendChild(p);
    }
    const s = el("p", "summary " + (r.exit === 0 ? "ok" : "bad"));
    if (r.summary && r.summary.id === "SuFail") {
      // The failed checks by their titles, each with its name as an
      // identifier, as the statement above lists them.
      const parts = T({ id: "SuFail", args: ["\u0001"] }).split("\u0001");
      s.appendChild(document.createTextNode(parts[0]));
      r.failed.forEach(function (n, i) {
        if (i > 0) s.appendChild(document.createTextNode(", "));
        const title = T({ id: TITLES[n], args: [] });
        s.appendChild(document.createTextNode(title));
        if (title !== n) {
          s.appendChild(document.createTextNode(" "));
          const code = el("code", "check-id", n);
          code.dir = "ltr";
          s.appendChild(code);
        }
      });
      s.appendChild(document.createTextNode(parts[1] || ""));
    } else {
      s.textContent = isolateNumbers(T(r.summary));
    }
    s.id = "summary";
    s.dataset.exit = String(r.exit);
    container.appendChild(s);
    const v = ZarlogVerifier.verdict(r);
    return {
      exit: r.exit, failed: r.failed, notChecked: r.notChecked, summary: T(r.summary),
      checks: r.checks.map(function (c) { return { name: c.name, status: c.status, detail: T(c.detail), roll: c.roll || null }; }),
      verdict: { kind: v.kind, headline: T(v.headline), details: v.details.map(T) },
    };
  }

  // The class of the verdict box for each kind of verdict.
  const BOX = { checked: "ok", untied: "partial", "wrong-seal": "partial", failed: "bad", "bad-input": "bad", incomplete: "partial" };

  // verdictBox says report r in a player's words (ZarlogVerifier.verdict)
  // in the verdict box box: its headline in #verdict-main, its sentences
  // in #verdict-detail, one paragraph each. The game page and the offline
  // auditor open with it.
  function verdictBox(box, r, cat, li) {
    const T = function (m) { return ZarlogVerifier.render(m, cat, li); };
    const v = ZarlogVerifier.verdict(r);
    box.classList.remove("checking", "ok", "bad", "partial");
    box.classList.add(BOX[v.kind]);
    box.hidden = false;
    box.querySelector(".verdict-main").textContent = isolateNumbers(T(v.headline));
    const detail = box.querySelector(".verdict-detail");
    detail.textContent = "";
    // The first sentence is always shown; the others, when there are more
    // than two, fold under "What else it shows, and what it does not", so
    // that the verdict stays within a phone's first screen.
    const shown = v.details.length > 2 ? 1 : v.details.length;
    for (const m of v.details.slice(0, shown)) detail.appendChild(withIdents(el("p", ""), isolateNumbers(T(m))));
    if (shown < v.details.length) {
      const more = el("details", "verdict-more");
      more.appendChild(el("summary", "", T({ id: "VdMore", args: [] })));
      for (const m of v.details.slice(shown)) more.appendChild(withIdents(el("p", ""), isolateNumbers(T(m))));
      detail.appendChild(more);
    }
    box.dataset.kind = v.kind;
    box.dataset.exit = String(r.exit);
  }

  // markRoll highlights the row of the first wrong roll in a roll table.
  function markRoll(table, r) {
    if (!table) return;
    for (const tr of table.querySelectorAll("tr.wrong")) tr.classList.remove("wrong");
    if (!r.firstWrongRoll) return;
    const tr = table.querySelector('tr[data-index="' + r.firstWrongRoll.index + '"]');
    if (tr) tr.classList.add("wrong");
  }

  return { show: show, markRoll: markRoll, verdictBox: verdictBox, isolateNumbers: isolateNumbers };
})();
