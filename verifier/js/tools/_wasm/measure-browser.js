// The browser's entry of the measurement (measure-core.js): it fetches the
// WebAssembly, wasm_exec.js and the bundle from its origin and leaves the
// result in window.zarlogMeasure (publisher's BenchmarkRulesEngines).
import { measure } from "./measure-core.js";

(async function () {
  try {
    const get = async function (p) { const r = await fetch(p); return new Uint8Array(await r.arrayBuffer()); };
    const n = Number(new URLSearchParams(location.search).get("n") || 20);
    window.zarlogMeasure = await measure(await get("movecheck.wasm"), new TextDecoder().decode(await get("wasm_exec.js")), await get("bundle.json"), n);
  } catch (e) {
    window.zarlogMeasure = { error: String(e && e.stack || e) };
  }
})();
