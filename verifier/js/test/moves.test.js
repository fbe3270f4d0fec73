// The moves check in the package: every vector of testdata/moves gives the
// exit code, the failing checks and the rejection code and rule its
// manifest says (TestNodeVerifier compares the whole report with Go's), and
// a check this package cannot make is never a pass.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { verify } from "../src/index.js";
import { finish } from "../src/verify.js";
import { M } from "../src/render.js";

const dir = new URL("../../../testdata/moves/", import.meta.url);

test("every testdata/moves vector: its exit, failing checks, code and rule", async () => {
  const m = JSON.parse(await readFile(new URL("manifest.json", dir), "utf8"));
  assert.ok(m.vectors.length >= 15, m.vectors.length + " vectors");
  let replayed = 0;
  for (const v of m.vectors) {
    const r = await verify(new Uint8Array(await readFile(new URL(v.file, dir))), { logKey: v.logKey, emitterKeys: v.emitterKeys });
    assert.equal(r.exit, v.exit, v.name + ": " + JSON.stringify(r.failed));
    assert.deepEqual(r.failed.slice().sort(), v.failing, v.name);
    const c = r.checks.find((x) => x.name === "moves");
    assert.ok(!c.browserLimit, v.name + ": the moves check was not made");
    if (c.status !== "skipped") replayed++;
    if (v.moveCode) {
      assert.equal(c.move.code, v.moveCode, v.name);
      assert.equal(c.move.rule || "", v.moveRule || "", v.name);
    }
  }
  assert.ok(replayed >= 14, replayed + " games replayed");
});

test("a check this package could not make is never a pass", () => {
  const checks = () => [
    { name: "format", status: "pass", detail: M("x") },
    { name: "rolls", status: "pass", detail: M("x") },
    { name: "moves", status: "skipped", detail: M("x"), browserLimit: "moves" },
  ];
  const r = finish({ scheme: "tavlarena-v1", checks: checks(), bundle: true });
  assert.equal(r.exit, 2);
  assert.equal(r.incomplete, true);
  assert.equal(r.summary.id, "BrNotAllChecked");
  assert.deepEqual(r.summary.args, ["moves"]);
  assert.deepEqual(r.notChecked, ["moves"]);
  // A failure that was checked is still a failure.
  const bad = checks();
  bad[1].status = "fail";
  const f = finish({ scheme: "tavlarena-v1", checks: bad, bundle: true });
  assert.equal(f.exit, 1);
  assert.equal(f.summary.id, "SuFail");
  // Without such a check, nothing changes.
  const ok = finish({ scheme: "tavlarena-v1", checks: checks().slice(0, 2), bundle: false });
  assert.equal(ok.exit, 0);
  assert.equal(ok.summary.id, "SuPass");
});
