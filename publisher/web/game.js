// zarlog: the game page's "verify in your browser" action. It fetches the
// game's proof file from this origin and checks it with verify.js.
"use strict";

(function () {
  const sec = document.getElementById("verify");
  if (!sec) return;
  const cat = JSON.parse(sec.dataset.messages);
  const out = document.getElementById("result");
  const button = document.getElementById("verify-button");
  const T = function (id, args) { return ZarlogVerifier.render({ id: id, args: args || [] }, cat, 0); };

  ZarlogVerifier.ed25519Supported().then(function (ok) {
    if (!ok) document.getElementById("ed25519-note").hidden = false;
  });

  button.addEventListener("click", async function () {
    button.disabled = true;
    out.textContent = T("BrChecking");
    try {
      const resp = await fetch(sec.dataset.proof, { cache: "no-store", credentials: "omit" });
      if (!resp.ok) throw new Error("HTTP " + resp.status);
      const bytes = new Uint8Array(await resp.arrayBuffer());
      const r = await ZarlogVerifier.verify(bytes, {
        expected: document.getElementById("expected").value,
        logKey: document.getElementById("log-key").value,
      });
      window.zarlogReport = ZarlogUI.show(out, r, cat, 0);
      ZarlogUI.markRoll(document.getElementById("rolls"), r);
    } catch (e) {
      out.textContent = T("BrFetchFailed", [String(e && e.message || e)]);
      window.zarlogReport = { error: String(e && e.message || e) };
    } finally {
      button.disabled = false;
    }
  });
})();
