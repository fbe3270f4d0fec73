// zarlog: the game page's check. As soon as the page loads, the browser
// fetches the game's proof file from this origin, checks it with verify.js
// and says the verdict at the top of the page in a player's words; the
// per-check rows go to the auditors' section below. "Check again" reruns it
// with the key and seal code typed there.
"use strict";

(function () {
  const sec = document.getElementById("verify");
  const box = document.getElementById("verdict");
  if (!sec || !box) return;
  const cat = JSON.parse(sec.dataset.messages);
  const out = document.getElementById("result");
  const button = document.getElementById("verify-button");
  const main = document.getElementById("verdict-main");
  const detail = document.getElementById("verdict-detail");
  const more = document.getElementById("verdict-more");
  const T = function (id, args) { return ZarlogVerifier.render({ id: id, args: args || [] }, cat, 0); };
  const sep = T("BrListSep");

  // The first failure, as a player reads it.
  function failure(r) {
    const w = r.firstWrongRoll;
    if (w) {
      const claimed = w.claimed[0] + "-" + w.claimed[1], got = w.recomputed[0] + "-" + w.recomputed[1];
      return T("VdWrongRoll", [String(w.index + 1), claimed, got]);
    }
    const first = r.checks.find(function (c) { return c.status === "fail"; });
    const id = first && cat["VdFail-" + first.name] ? "VdFail-" + first.name : "VdFailOther";
    return T(id);
  }

  function say(r) {
    box.classList.remove("checking", "ok", "bad", "partial");
    more.hidden = true;
    more.textContent = "";
    const rolls = document.querySelectorAll("#rolls tbody tr[data-index]").length;
    if (r.exit === 0) {
      const noSig = r.notChecked.indexOf("log-signature") >= 0;
      box.classList.add(noSig ? "partial" : "ok");
      main.textContent = T(noSig ? "SuPassNoKey" : "SuPass");
      detail.textContent = T("VdPassDetail", [String(rolls)]);
      const nc = r.notChecked.filter(function (n) { return cat["VdNC-" + n]; }).map(function (n) { return T("VdNC-" + n); });
      if (nc.length > 0) {
        more.textContent = T("VdNotChecked", [nc.join(sep)]);
        more.hidden = false;
      }
    } else if (r.exit === 1) {
      box.classList.add("bad");
      main.textContent = T("VdFail");
      detail.textContent = failure(r);
    } else {
      box.classList.add("bad");
      main.textContent = T("BrBadOptions");
      detail.textContent = ZarlogVerifier.render(r.summary, cat, 0);
    }
    box.dataset.exit = String(r.exit);
  }

  async function check() {
    button.disabled = true;
    box.classList.remove("ok", "bad", "partial");
    box.classList.add("checking");
    delete box.dataset.exit;
    main.textContent = T("VdChecking");
    detail.textContent = "";
    out.textContent = T("BrChecking");
    try {
      const resp = await fetch(sec.dataset.proof, { cache: "no-store", credentials: "omit" });
      if (!resp.ok) throw new Error("HTTP " + resp.status);
      const bytes = new Uint8Array(await resp.arrayBuffer());
      const r = await ZarlogVerifier.verify(bytes, {
        expected: document.getElementById("expected").value,
        logKey: document.getElementById("log-key").value,
        emitterKeys: JSON.parse(sec.dataset.emitterKeys || "[]"),
      });
      window.zarlogReport = ZarlogUI.show(out, r, cat, 0);
      ZarlogUI.markRoll(document.getElementById("rolls"), r);
      say(r);
      window.zarlogVerdictMs = performance.now(); // the time to the verdict, for BenchmarkVerifiers
    } catch (e) {
      const msg = T("BrFetchFailed", [String(e && e.message || e)]);
      out.textContent = msg;
      box.classList.remove("checking");
      box.classList.add("bad");
      main.textContent = msg;
      box.dataset.exit = "2";
      window.zarlogReport = { error: String(e && e.message || e) };
    } finally {
      button.disabled = false;
    }
  }

  button.addEventListener("click", check);
  check();
})();
