// The package's import graph runs downward, as the Go module's does
// (TestLayers in cmd/zarlog): every module of src/ has a layer, and imports
// only modules of lower layers, so there is no import cycle and the bottom
// (bytes, hashes, canonical JSON) can be shared by another package without
// the rest. Only the signature modules import @noble; no module of src/
// imports a Node module or touches a platform object, so the same code
// runs in a browser and in Node.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";

const src = new URL("../src/", import.meta.url).pathname;

// LAYERS lists the modules of src/ from the bottom up; a module may import
// only modules of the layers before its own. A new module is a decision:
// it must be placed here (and in README.md's "Modules").
export const LAYERS = [
  // 0: the bottom, importing nothing: bytes, SHA-256 and HMAC (WebCrypto),
  // canonical JSON, times, messages and their catalog, a check's shape; the
  // rules engine's rule codes and variants.
  ["bytes.js", "sha256.js", "cjson.js", "time.js", "render.js", "messages.js", "titles.js", "check.js",
    "rules/errors.js", "rules/variant.js"],
  // 1: signatures on @noble/curves: Ed25519's fallback, drand's BLS; the
  // rules' positions.
  ["ed25519.js", "bls.js", "rules/position.js"],
  // 2: what the log and the dice are made of: drand quicknet, signed
  // notes and checkpoints, RFC 6962 proofs, witness policies, the dice; the
  // rules' notation and results.
  ["drand.js", "note.js", "merkle.js", "policy.js", "dice.js", "rules/notation.js", "rules/result.js"],
  // 3: the parsers of an event, of an evidence file and of a tlog-proof;
  // the move generator.
  ["event.js", "evidence.js", "tlog.js", "rules/movegen.js"],
  // 4: a game replayed from its events, and the evidence it gives; legal
  // plays; the flow of play's state.
  ["game.js", "format.js", "rules/play.js", "rules/movecheck/state.js"],
  // 5: the rules engine's checker of rolls, moves and ends (Go's
  // rules/movecheck, layer 3 there).
  ["rules/movecheck/checker.js"],
  // 6: the moves check: a game replayed with the checker.
  ["moves.js"],
  // 7: the proof bundle's log checks.
  ["bundle.js"],
  // 8: a tlog-proof's checks (the log checks of one event).
  ["tlogproof.js"],
  // 9: verify(), every check of a file.
  ["verify.js"],
  // 10: what is built on it: the reports, the app's own checks, the badge.
  ["report.js", "app.js", "badge.js"],
  // 10.5: a player's export: every bundle of it checked, with the reports.
  ["export.js"],
  // 11: the entries: the package's (index.js), the pages' bundle's, and the
  // command line's (bin/zarlog-verify.js gives it Node's files).
  ["index.js", "browser.js", "cli.js"],
];

// EXTERNAL says which modules may import which packages.
const EXTERNAL = {
  "ed25519.js": ["@noble/curves/ed25519.js", "@noble/hashes/sha2.js"],
  "bls.js": ["@noble/curves/bls12-381.js"],
};

// PLATFORM are the names of a platform's objects that no module of src/
// may use (the browser's page, Node's process and modules, the network).
const PLATFORM = /(?<![\w$.])(?:document|window|process|require|fetch|localStorage|XMLHttpRequest)(?![\w$])/;

/** imports returns the specifiers a module's text imports or re-exports. */
export function imports(text) {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const out = [];
  for (const m of code.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*"([^"]+)"|^\s*import\s*"([^"]+)"|\bimport\s*\(\s*"([^"]+)"\s*\)/gm)) {
    out.push(m[1] || m[2] || m[3]);
  }
  return out;
}

/**
 * problems returns what is wrong with a graph (module -> its imports,
 * relative specifiers resolved to module names) under layers: a module
 * without a layer, a layer's module that does not exist, an import of the
 * same or a higher layer, an import of a package the module may not
 * import, and any cycle.
 */
export function problems(graph, layers, external) {
  const out = [];
  const layer = new Map();
  layers.forEach(function (ms, i) { for (const m of ms) layer.set(m, i); });
  for (const m of layer.keys()) if (!graph.has(m)) out.push(m + " is in LAYERS but not in src/");
  for (const [m, deps] of graph) {
    if (!layer.has(m)) { out.push(m + " has no layer (test/layers.test.js LAYERS)"); continue; }
    for (const d of deps) {
      if (!d.startsWith("./") && !d.startsWith("../") && !graph.has(d)) {
        if (!(external[m] || []).includes(d)) out.push(m + " imports " + d + ", which only " + (Object.keys(external).filter(function (k) { return external[k].includes(d); }).join(", ") || "no module") + " may import");
        continue;
      }
      if (!layer.has(d)) { out.push(m + " imports " + d + ", which is not a module of src/ with a layer"); continue; }
      if (layer.get(d) >= layer.get(m)) out.push(m + " (layer " + layer.get(m) + ") imports " + d + " (layer " + layer.get(d) + "): imports run downward");
    }
  }
  // Cycles, named by their path (layering excludes them; say so anyway).
  const state = new Map();
  const stack = [];
  const visit = function (m) {
    state.set(m, 1);
    stack.push(m);
    for (const d of graph.get(m) || []) {
      if (!graph.has(d)) continue;
      if (state.get(d) === 1) out.push("import cycle: " + stack.slice(stack.indexOf(d)).concat(d).join(" -> "));
      else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(m, 2);
  };
  for (const m of [...graph.keys()].sort()) if (!state.has(m)) visit(m);
  return out;
}

// graphOf reads src/ (its subfolders too) into a graph of module names
// relative to src/.
function graphOf(dir) {
  const graph = new Map();
  const texts = new Map();
  const walk = function (rel) {
    for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const name = rel ? rel + "/" + e.name : e.name;
      if (e.isDirectory()) walk(name);
      else if (e.name.endsWith(".js")) {
        const text = readFileSync(path.join(dir, name), "utf8");
        texts.set(name, text);
        graph.set(name, imports(text).map(function (s) {
          return s.startsWith(".") ? path.posix.normalize(path.posix.join(path.posix.dirname(name), s)) : s;
        }));
      }
    }
  };
  walk("");
  return { graph: graph, texts: texts };
}

test("every import of src/ runs downward, with no cycle", function () {
  const { graph } = graphOf(src);
  assert.ok(graph.size >= 20, "only " + graph.size + " modules in src/");
  assert.deepEqual(problems(graph, LAYERS, EXTERNAL), []);
});

test("src/ uses no Node module and no platform object", function () {
  const { graph, texts } = graphOf(src);
  for (const [m, deps] of graph) {
    for (const d of deps) assert.ok(!d.startsWith("node:"), m + " imports " + d);
    const code = texts.get(m).replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "").replace(/"(?:[^"\\\n]|\\.)*"/g, '""');
    assert.ok(!PLATFORM.test(code), m + " uses " + (code.match(PLATFORM) || [])[0]);
  }
});

test("the layer check finds an upward import, a cycle, a module without a layer", function () {
  const layers = [["a.js"], ["b.js"], ["c.js"]];
  const ok = new Map([["a.js", []], ["b.js", ["a.js"]], ["c.js", ["a.js", "b.js"]]]);
  assert.deepEqual(problems(ok, layers, {}), []);
  const up = new Map([["a.js", ["b.js"]], ["b.js", ["a.js"]], ["c.js", ["c.js"]], ["d.js", []]]);
  const p = problems(up, layers, {});
  assert.ok(p.includes("a.js (layer 0) imports b.js (layer 1): imports run downward"), p.join("\n"));
  assert.ok(p.includes("c.js (layer 2) imports c.js (layer 2): imports run downward"), p.join("\n"));
  assert.ok(p.some(function (x) { return x.startsWith("import cycle: a.js -> b.js -> a.js"); }), p.join("\n"));
  assert.ok(p.includes("d.js has no layer (test/layers.test.js LAYERS)"), p.join("\n"));
  const ext = problems(new Map([["a.js", ["@noble/curves/ed25519.js"]]]), [["a.js"]], { "x.js": ["@noble/curves/ed25519.js"] });
  assert.deepEqual(ext, ["a.js imports @noble/curves/ed25519.js, which only x.js may import"]);
  assert.deepEqual(imports('import { a } from "./a.js";\nexport { b } from "./b.js";\n// import { c } from "./c.js";\nconst x = await import("./d.js");\n'),
    ["./a.js", "./b.js", "./d.js"]);
});
