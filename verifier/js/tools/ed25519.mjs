// Reads Ed25519 cases {pub, msg, sig} (hex) as JSON from a file and prints,
// for each, what @noble/curves (zip215 off: the package's fallback) and
// this platform's WebCrypto say, for the Go differential test
// (publisher's TestEd25519Agreement): node tools/ed25519.mjs FILE
import { readFile } from "node:fs/promises";
import { nobleVerify } from "../src/ed25519.js";
import { unhex } from "../src/bytes.js";

const cases = JSON.parse(await readFile(process.argv[2], "utf8"));
const out = [];
for (const c of cases) {
  const pub = unhex(c.pub), msg = unhex(c.msg), sig = unhex(c.sig);
  let web;
  try {
    const k = await crypto.subtle.importKey("raw", pub, { name: "Ed25519" }, false, ["verify"]);
    web = await crypto.subtle.verify({ name: "Ed25519" }, k, sig, msg);
  } catch (e) {
    web = false;
  }
  out.push({ noble: nobleVerify(pub, msg, sig), webcrypto: web });
}
process.stdout.write(JSON.stringify(out));
