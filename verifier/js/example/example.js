// The app API on real files: verify() on a proof file the user picks (or
// the project's vectors), sealCode() and badge() of its commitment,
// checkRollReveal() on the rolls of a per-roll-v1 match, checkReceipt() on
// an event of a bundle. window.zarlogExample holds the results (the test
// reads them).
import { verify, render, catalog, langIndex, sealCode, badge, checkRollReveal, checkReceipt } from "../src/index.js";

const out = document.getElementById("out");
const lang = () => document.getElementById("lang").value;
const say = (m) => render(m, catalog, langIndex(lang()));
const hexBytes = (h) => Uint8Array.from(h.match(/../g), (x) => parseInt(x, 16));

async function show(bytes, logKey) {
  const r = await verify(bytes, { logKey: logKey || "" });
  const lines = r.checks.map((c) => c.status.toUpperCase() + "  " + c.name + ": " + say(c.detail));
  lines.push("", say(r.summary));
  const ev = JSON.parse(new TextDecoder().decode(bytes));
  const c = ev.commitment || ev.fingerprint;
  if (c) {
    document.getElementById("tile").innerHTML = badge(c) + " <strong>" + sealCode(hexBytes(c)) + "</strong>";
  }
  out.textContent = lines.join("\n");
  return r;
}

document.getElementById("file").addEventListener("change", async (e) => {
  const f = e.target.files[0];
  if (f) await show(new Uint8Array(await f.arrayBuffer()), "");
});

// The built-in examples, from the project's vectors when the page is served
// from the repository (verifier/js/example/ → testdata/dice).
async function examples() {
  const base = new URL("../../../testdata/dice/", location.href);
  const get = async (p) => new Uint8Array(await (await fetch(new URL(p, base))).arrayBuffer());
  const m = JSON.parse(new TextDecoder().decode(await get("manifest.json")));
  const bundle = m.vectors.find((v) => v.name === "bundle-tavlarena-10-rolls");
  const bundleBytes = await get(bundle.file);
  const report = await show(bundleBytes, bundle.logKey);

  const per = JSON.parse(new TextDecoder().decode(await get(m.vectors.find((v) => v.name === "per-roll-client-60-rolls").file)));
  let revealed = 0;
  for (const r of per.rolls) {
    const ok = await checkRollReveal({ matchId: per.matchId, rollId: r.rollId, commitment: r.commitment }, r, r.secondFrom === "client" ? r.second : null);
    if (ok.ok) revealed++;
  }
  const b = JSON.parse(new TextDecoder().decode(bundleBytes));
  const e = b.log.entries[0];
  const receipt = await checkReceipt({ index: e.index, checkpoint: b.log.checkpoint, leaf: e.leaf, proof: e.proof.map((i) => b.log.hashes[i]) }, bundle.logKey);
  window.zarlogExample = {
    exit: report.exit, summary: say(report.summary), rollsRevealed: revealed, rolls: per.rolls.length,
    receipt: receipt.ok && receipt.included, seal: sealCode(hexBytes(b.commitment)),
  };
  out.textContent += "\n\ncheckRollReveal: " + revealed + " of " + per.rolls.length + " rolls check out\ncheckReceipt: " + (receipt.ok ? "the commit is in the signed log" : say(receipt.message));
}
examples().catch((e) => { out.textContent = String(e); window.zarlogExample = { error: String(e) }; });
