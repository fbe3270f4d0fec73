#!/usr/bin/env node
// zarlog-verify (JavaScript): check a game's proof file offline, with the
// contract of the Go zarlog-verify: the same flags, the same text and JSON,
// exit 0 (every check passed), 1 (the proof is invalid), 2 (bad input).
// The command line is src/cli.js; this gives it Node's files and streams.
//
//   npx zarlog-verify [--json] [--lang en|tr|ar] [--expected-commitment HEX|SEAL]
//       [--log-key VKEY] [--witness-policy FILE] [--emitter-key VKEY]... [--leaf FILE] FILE|-

import process from "node:process";

// The package needs Node.js 20 (package.json's engines): an older one gets
// one line saying so, and exit 2 (bad input: no verdict), before anything
// that could fail on it in other words is loaded.
const major = Number(process.versions.node.split(".")[0]);
if (!(major >= 20)) {
  process.stderr.write("zarlog-verify: Node.js 20 or later is needed; this is Node.js " + process.version + "\n");
  process.exit(2);
}

const { readFile } = await import("node:fs/promises");
const { run } = await import("../src/cli.js");

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return new Uint8Array(Buffer.concat(chunks));
}

const io = {
  env: process.env,
  readFile: async function (p) { return new Uint8Array(await readFile(p)); },
  readStdin: readStdin,
  out: function (s) { process.stdout.write(s); },
  err: function (s) { process.stderr.write(s); },
};

run(process.argv.slice(2), io).then(function (code) { process.exitCode = code; }, function (e) {
  process.stderr.write("zarlog-verify: " + (e && e.stack || e) + "\n");
  process.exitCode = 2;
});
