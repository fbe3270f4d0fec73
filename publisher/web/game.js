// zarlog: the game page's check. As soon as the page loads, the browser
// fetches the game's proof file and the log's witness policy from this
// origin, checks the file with verify.js (the witnesses' countersignatures
// against that policy) and says the verdict at the top of the page in a
// player's words (the package's verdict(), as zarlog-verify --json says
// it, and the witnesses' line); the per-check rows go to the auditors'
// section below.
// "Check again" reruns it with the key and seal code typed there.
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
  const wit = document.getElementById("verdict-witness");
  const T = function (id, args) { return ZarlogVerifier.render({ id: id, args: args || [] }, cat, 0); };

  // The witnesses' check: {state, text}. state is "witnessed" (the quorum
  // of the log's policy countersigned the file's checkpoint), "pending" (no
  // quorum yet: a game is witnessed a minute or two after its end), both
  // said by the verdict itself; "none" (the log names no witnesses) and
  // "unavailable" (its policy could not be had), which the page says in
  // its own line (text); or "" when the check failed otherwise (an invalid
  // countersignature: the verdict says it).
  function witnessing(r, pol) {
    if (pol.text === null) {
      return pol.why === "" ? { state: "none", text: T("VdNoWitnesses") } : { state: "unavailable", text: T("VdPolicyUnavailable", [pol.why]) };
    }
    const c = r.checks.find(function (x) { return x.name === "log-witnesses"; });
    if (!c) return { state: "", text: "" };
    if (c.status === "pass") return { state: "witnessed", text: "" };
    if (c.detail.id === "LwNotYet" || c.detail.id === "LwQuorum") return { state: "pending", text: "" };
    return { state: "", text: "" };
  }

  // say shows the verdict (ZarlogUI.verdictBox) and the witnesses' line
  // w under it; a game whose witnesses have not countersigned yet is
  // amber, not green.
  function say(r, w) {
    ZarlogUI.verdictBox(box, r, cat, 0);
    if (r.exit === 0 && w.state === "pending") {
      box.classList.remove("ok");
      box.classList.add("partial");
    }
    wit.textContent = ZarlogUI.isolateNumbers(w.text);
    wit.hidden = w.text === "" || r.exit !== 0;
    box.dataset.witness = w.state;
  }

  // The log's witness policy: {text} or {text: null, why} with why "" when
  // the log has none (404) and the reason otherwise.
  async function policy() {
    if (!sec.dataset.policy) return { text: null, why: "" };
    try {
      const resp = await fetch(sec.dataset.policy, { cache: "no-store", credentials: "omit" });
      if (resp.status === 404) return { text: null, why: "" };
      if (!resp.ok) return { text: null, why: "HTTP " + resp.status };
      return { text: await resp.text() };
    } catch (e) {
      return { text: null, why: String(e && e.message || e) };
    }
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
      const pol = await policy();
      const opt = {
        expected: document.getElementById("expected").value,
        logKey: document.getElementById("log-key").value,
        emitterKeys: JSON.parse(sec.dataset.emitterKeys || "[]"),
      };
      // The page requires no witness: it says what they did, so a quorum
      // not met yet is not a failure (witnessesPending).
      let r = await ZarlogVerifier.verify(bytes, Object.assign({ witnessPolicy: pol.text || undefined, witnessesPending: true }, opt));
      const bad = r.exit === 2 && r.checks[0] && r.checks[0].detail.id === "BrBadPolicy";
      if (bad) {
        // A policy that does not parse: the rest is checked without it.
        pol.why = ZarlogVerifier.render(r.checks[0].detail, cat, 0);
        pol.text = null;
        r = await ZarlogVerifier.verify(bytes, opt);
      }
      const w = witnessing(r, pol);
      window.zarlogReport = ZarlogUI.show(out, r, cat, 0);
      ZarlogUI.markRoll(document.getElementById("rolls"), r);
      say(r, w);
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
