// Measures the rules engine as WebAssembly (the Go rules/movecheck, built
// from ./movecheck) against the JavaScript port (src/rules), in Node: the
// bytes of the WebAssembly, the time to load it, and the time to replay a
// game's moves through each, in the same process (measure-core.js).
//
//   GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w" -o /tmp/movecheck.wasm ./verifier/js/tools/_wasm/movecheck
//   node verifier/js/tools/_wasm/measure.mjs /tmp/movecheck.wasm $(go env GOROOT)/lib/wasm/wasm_exec.js FILE N
//
// FILE is a proof bundle of a game whose moves are logged (testdata/moves);
// it prints one JSON object. publisher's BenchmarkRulesEngines runs it, and
// the same in Chromium; README.md ("The rules engine: a port, not
// WebAssembly") has the numbers.
import { readFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import { measure } from "./measure-core.js";

const [wasmFile, execFile, file, n] = process.argv.slice(2);
const wasm = await readFile(wasmFile);
const exec = await readFile(execFile, "utf8");
const out = await measure(wasm, exec, new Uint8Array(await readFile(file)), Number(n || 20));
out.wasmBytes = wasm.length;
out.wasmGzip = gzipSync(wasm, { level: 9 }).length;
out.wasmExecBytes = Buffer.byteLength(exec);
out.wasmExecGzip = gzipSync(exec, { level: 9 }).length;
process.stdout.write(JSON.stringify(out) + "\n");
process.exit(0); // the Go program waits for ever
