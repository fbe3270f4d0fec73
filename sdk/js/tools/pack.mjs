// Packs the two npm packages for release: zarlog-verify (verifier/js) and
// zarlog-emitter (sdk/js), into the folder given (default: the current
// one). In the repository zarlog-emitter names zarlog-verify by its path
// (file:../../verifier/js), so that both are developed together; the
// packed zarlog-emitter names it by its version instead, as pnpm and yarn
// do for a workspace dependency when they publish. Each tarball carries its
// own dependencies (bundleDependencies: @noble/curves in zarlog-verify, the
// NATS client in zarlog-emitter), so both install without a network
// (TestNodePackages):
//
//   node tools/pack.mjs OUT
//   cd EMPTY && npm install --offline OUT/zarlog-verify-0.1.0.tgz OUT/zarlog-emitter-0.1.0.tgz
//
// It prints the two tarballs' paths.

import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const sdk = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const verifier = path.join(sdk, "..", "..", "verifier", "js");
const out = path.resolve(process.argv[2] || ".");

function pack(dir) {
  const r = JSON.parse(execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", out], { cwd: dir, encoding: "utf8" }));
  return path.join(out, r[0].filename);
}

const verifierPkg = JSON.parse(readFileSync(path.join(verifier, "package.json"), "utf8"));
const verifyTgz = pack(verifier);

const stage = mkdtempSync(path.join(tmpdir(), "zarlog-emitter-"));
try {
  const pkg = JSON.parse(readFileSync(path.join(sdk, "package.json"), "utf8"));
  for (const f of pkg.files.concat(["LICENSE", "package.json"])) cpSync(path.join(sdk, f), path.join(stage, f), { recursive: true });
  // The bundled dependencies (the NATS client, bundleDependencies) travel
  // in the tarball, so that it installs without the registry; zarlog-verify
  // is a package of its own.
  cpSync(path.join(sdk, "node_modules"), path.join(stage, "node_modules"), {
    recursive: true,
    filter: function (src) { return path.basename(src) !== "zarlog-verify" && path.basename(src) !== ".bin"; },
  });
  if (!String(pkg.dependencies["zarlog-verify"]).startsWith("file:")) throw new Error("zarlog-emitter's zarlog-verify dependency is not a path");
  pkg.dependencies["zarlog-verify"] = verifierPkg.version;
  writeFileSync(path.join(stage, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
  const emitterTgz = pack(stage);
  process.stdout.write(verifyTgz + "\n" + emitterTgz + "\n");
} finally {
  rmSync(stage, { recursive: true, force: true });
}
