// zarlog: the offline auditor's page. It reads a proof file the user opens
// or drops, and checks it with verify.js; nothing leaves the page (its
// Content-Security-Policy forbids every connection).
"use strict";

(function () {
  const cat = JSON.parse(document.body.dataset.messages);
  const ui = JSON.parse(document.body.dataset.ui);
  const LANGS = ["en", "tr", "ar"];
  const sel = document.getElementById("lang");
  const out = document.getElementById("result");
  let li = 0, last = null, lastName = "";

  function T(id, args) { return ZarlogVerifier.render({ id: id, args: args || [] }, cat, li); }

  function applyLang() {
    li = Math.max(0, LANGS.indexOf(sel.value));
    document.documentElement.lang = LANGS[li];
    document.documentElement.dir = li === 2 ? "rtl" : "ltr";
    const word = function (k) { return ui[k] ? ui[k][li] : (cat[k] ? cat[k][li] : k); };
    for (const e of document.querySelectorAll("[data-t]")) e.textContent = word(e.dataset.t);
    for (const e of document.querySelectorAll("[data-t-label]")) e.setAttribute("aria-label", word(e.dataset.tLabel));
    document.title = T("BrAuditorTitle");
    if (last) show(last);
  }

  function rollsTable(r) {
    const table = document.getElementById("rolls");
    const body = table.querySelector("tbody");
    body.textContent = "";
    const rolls = ZarlogVerifier.rollsOf(r.evidence);
    rolls.forEach(function (x, i) {
      const tr = document.createElement("tr");
      tr.dataset.index = String(i);
      // Rolls are counted from 1, as on the game page and in the verdict.
      // The kind in the page's words; a roll id is an identifier.
      const kind = ui["Kind-" + x.kind] ? ui["Kind-" + x.kind][li] : x.kind;
      const cells = x.rollId ? [String(i + 1), x.rollId, x.dice[0] + "-" + x.dice[1]] : [String(x.n + 1), kind, x.dice[0] + "-" + x.dice[1]];
      cells.forEach(function (c, k) {
        const td = document.createElement("td");
        if (k === 1 && x.rollId) {
          const code = document.createElement("code");
          code.textContent = c;
          td.appendChild(code);
        } else {
          td.textContent = c;
        }
        if (k !== 1 || x.rollId) td.dir = "ltr";
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    table.hidden = rolls.length === 0;
    ZarlogUI.markRoll(table, r);
  }

  function show(r) {
    document.getElementById("file-name").textContent = T("BrFile", [lastName]);
    window.zarlogReport = ZarlogUI.show(out, r, cat, li);
    ZarlogUI.verdictBox(document.getElementById("verdict"), r, cat, li);
    rollsTable(r);
  }

  async function check(file) {
    lastName = file.name;
    const box = document.getElementById("verdict");
    box.hidden = false;
    box.classList.remove("ok", "bad", "partial");
    box.classList.add("checking");
    delete box.dataset.exit;
    document.getElementById("verdict-main").textContent = T("BrChecking");
    document.getElementById("verdict-detail").textContent = "";
    out.textContent = "";
    const bytes = new Uint8Array(await file.arrayBuffer());
    last = await ZarlogVerifier.verify(bytes, {
      expected: document.getElementById("expected").value,
      logKey: document.getElementById("log-key").value,
    });
    show(last);
  }

  // The language: ?lang= (the game page links here in its own), else the
  // browser's, else English.
  const asked = new URLSearchParams(location.search).get("lang");
  const pref = asked && LANGS.indexOf(asked) >= 0 ? asked : (navigator.language || "en").slice(0, 2);
  sel.value = LANGS.indexOf(pref) >= 0 ? pref : "en";
  sel.addEventListener("change", applyLang);
  applyLang();
  const input = document.getElementById("file");
  input.addEventListener("change", function () { if (input.files[0]) check(input.files[0]); });
  const drop = document.getElementById("drop");
  drop.addEventListener("dragover", function (e) { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", function () { drop.classList.remove("over"); });
  drop.addEventListener("drop", function (e) {
    e.preventDefault();
    drop.classList.remove("over");
    if (e.dataTransfer.files[0]) check(e.dataTransfer.files[0]);
  });
})();
