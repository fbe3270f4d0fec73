// The modules of src/ are layered: each imports only modules of lower
// layers (and zarlog-verify's, the NATS client's and Node's own), so there
// is no import cycle; zarlog-verify is reached through its package name
// only, never a relative path into another folder, so that the installed
// package is the one code runs with.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const src = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "src");

const LAYERS = {
  "engine.js": 0, "wire.js": 0, "signer.js": 0, "events.js": 0, "linger.js": 0,
  "receipt.js": 1, "receipts.js": 1, "beacon.js": 1, "rollcheck.js": 1, "follow.js": 1,
  "client.js": 2,
  "game.js": 3,
  "index.js": 4,
};

test("every module has a layer and imports downward", function () {
  const files = readdirSync(src).filter(function (f) { return f.endsWith(".js"); });
  assert.ok(files.length >= 10, "modules: " + files);
  for (const f of files) {
    assert.ok(f in LAYERS, f + " has no layer in the table");
    const text = readFileSync(path.join(src, f), "utf8");
    for (const m of text.matchAll(/^(?:import|export)\s[^;]*?from\s+"([^"]+)"|^import\s+"([^"]+)"/gm)) {
      const spec = m[1] || m[2];
      if (spec.startsWith("./")) {
        const dep = spec.slice(2);
        assert.ok(dep in LAYERS, f + " imports " + spec + ", which has no layer");
        assert.ok(LAYERS[dep] < LAYERS[f], f + " (layer " + LAYERS[f] + ") imports " + dep + " (layer " + LAYERS[dep] + ")");
      } else {
        assert.ok(/^(node:|@nats-io\/|zarlog-verify(\/src\/|$))/.test(spec), f + " imports " + spec);
      }
    }
  }
});
