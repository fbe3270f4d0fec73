// Times verify() on files, in this process, after one warm-up run: node
// tools/bench.mjs N FILE... prints {"FILE": ms per verify, ...}. For
// publisher's BenchmarkVerifiers, beside the Go verifier and Chromium.
import { readFile } from "node:fs/promises";
import { verify } from "../src/index.js";

const [n, ...files] = process.argv.slice(2);
const out = {};
for (const f of files) {
  const bytes = new Uint8Array(await readFile(f));
  const first = await verify(bytes, {});
  if (first.exit !== 0) throw new Error(f + ": exit " + first.exit);
  const t0 = performance.now();
  for (let i = 0; i < Number(n); i++) await verify(bytes, {});
  out[f] = (performance.now() - t0) / Number(n);
}
process.stdout.write(JSON.stringify(out));
