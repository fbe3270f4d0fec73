// Runs the command line (src/cli.js, what npx zarlog-verify runs) on many
// argument lists in one process, for the Go agreement test (publisher's
// TestBrowser, "agrees with zarlog-verify and npx on every vector"): node
// tools/cli.mjs FILE, FILE a JSON array of argument arrays; it prints a
// JSON array of {exit, stdout, stderr}, one for each.
import { readFile } from "node:fs/promises";
import { run } from "../src/cli.js";

const lists = JSON.parse(await readFile(process.argv[2], "utf8"));
const out = [];
for (const args of lists) {
  let stdout = "", stderr = "";
  const io = {
    env: {},
    readFile: async function (p) { return new Uint8Array(await readFile(p)); },
    readStdin: async function () { return new Uint8Array(0); },
    out: function (s) { stdout += s; },
    err: function (s) { stderr += s; },
  };
  const exit = await run(args, io);
  out.push({ exit: exit, stdout: stdout, stderr: stderr });
}
process.stdout.write(JSON.stringify(out));
