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
  // flag, a field path, a scheme or format (publisher's identRE).
  const IDENTS = /--[a-z][a-z-]*|\blog\.entries\[\d+\]|\brolls\[\d+\]|\b[a-z]+(?:-[a-z]+)*-v1\b/g;

  // withIdents fills e with text, each identifier in a left-to-right code
  // element, so that a right-to-left sentence does not reorder it.
  function withIdents(e, text) {
    let last = 0;
    for (const m of text.matchAll(IDENTS)) {
      e.appendChild(document.createTextNode(text.slice(last, m.index)));
      const c = el("code", "", m[0]);
      c.dir = "ltr";
      e.appendChild(c);
      last = m.index + m[0].length;
    }
    e.appendChild(document.createTextNode(text.slice(last)));
    return e;
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
      item.appendChild(withIdents(el("span", "detail"), T(c.detail)));
      list.appendChild(item);
    }
    container.appendChild(list);
    const w = r.firstWrongRoll;
    if (w) {
      const claimed = w.claimed[0] + "-" + w.claimed[1], got = w.recomputed[0] + "-" + w.recomputed[1];
      const p = el("p", "first-wrong", w.rollId
        ? T({ id: "BrFirstWrongPer", args: [String(w.index), w.rollId, claimed, got] })
        : T({ id: "BrFirstWrong", args: [String(w.n), claimed, got] }));
      p.id = "first-wrong";
      p.dataset.index = String(w.index);
      if (w.n !== undefined) p.dataset.n = String(w.n);
      p.dataset.claimed = claimed;
      p.dataset.recomputed = got;
      container.appendChild(p);
    }
    if (r.notChecked.length > 0) {
      const names = r.notChecked.map(function (n) { return TITLES[n] ? T({ id: TITLES[n], args: [] }) : n; });
      container.appendChild(el("p", "not-checked", T({ id: "BrNotChecked", args: [names.join(T({ id: "BrListSep", args: [] }))] })));
    }
    const s = el("p", "summary " + (r.exit === 0 ? "ok" : "bad"), T(r.summary));
    s.id = "summary";
    s.dataset.exit = String(r.exit);
    container.appendChild(s);
    return {
      exit: r.exit, failed: r.failed, notChecked: r.notChecked, summary: T(r.summary),
      checks: r.checks.map(function (c) { return { name: c.name, status: c.status, detail: T(c.detail), roll: c.roll || null }; }),
    };
  }

  // markRoll highlights the row of the first wrong roll in a roll table.
  function markRoll(table, r) {
    if (!table) return;
    for (const tr of table.querySelectorAll("tr.wrong")) tr.classList.remove("wrong");
    if (!r.firstWrongRoll) return;
    const tr = table.querySelector('tr[data-index="' + r.firstWrongRoll.index + '"]');
    if (tr) tr.classList.add("wrong");
  }

  return { show: show, markRoll: markRoll };
})();
