// Runs every vector of a testdata/dice manifest through this package and
// prints one JSON report per line (in LANG, English by default), for the
// Go agreement test (publisher's TestNodeVerifier):
// node tools/vectors.mjs MANIFEST DIR [LANG]
import { readFile } from "node:fs/promises";
import path from "node:path";
import { verify, jsonReport } from "../src/index.js";

const [manifest, dir, lang = "en"] = process.argv.slice(2);
const m = JSON.parse(await readFile(manifest, "utf8"));
for (const v of m.Vectors || m.vectors) {
  const bytes = new Uint8Array(await readFile(path.join(dir, v.File || v.file)));
  const policy = v.witnessPolicy ? await readFile(path.join(dir, v.witnessPolicy), "utf8") : undefined;
  const r = await verify(bytes, { expected: v.expectedCommitment || "", logKey: v.logKey || "", emitterKeys: v.emitterKeys, witnessPolicy: policy });
  process.stdout.write(JSON.stringify({ name: v.Name || v.name, report: JSON.parse(jsonReport(r, lang)) }) + "\n");
}
