// The measurement of measure.mjs, for Node and for a browser (publisher's
// BenchmarkRulesEngines runs it in Chromium): the rules engine as
// WebAssembly (the Go rules/movecheck) against the JavaScript port
// (src/rules), on the moves of one game, in the same process.
import { parseEvidence } from "../../src/evidence.js";
import { parseEvent } from "../../src/event.js";
import { canon } from "../../src/cjson.js";
import { replay } from "../../src/game.js";
import { Checker } from "../../src/rules/movecheck/checker.js";

// measure loads the WebAssembly (wasm: its bytes; execText: Go's
// wasm_exec.js) and replays the game of bundle (bytes) n times through
// each checker; it resolves to the times in ms.
export async function measure(wasm, execText, bundle, n) {
  const out = {};
  let t0 = performance.now();
  (0, eval)(execText); // wasm_exec.js sets globalThis.Go
  const go = new globalThis.Go();
  const { instance } = await WebAssembly.instantiate(wasm, go.importObject);
  go.run(instance);
  out.wasmLoadMs = performance.now() - t0;
  const mc = globalThis.zarlogMovecheck;

  // The Checker's interface, answered by the WebAssembly.
  const call = function (f, input, end) {
    const j = {
      Scheme: input.scheme, Settings: canon(input.settings), Position: input.position || "", Starter: -1,
      Roll: input.roll ? { N: input.roll.n, Dice: input.roll.dice, Kind: input.roll.kind } : { N: 0, Dice: [0, 0], Kind: "" },
      Move: input.move ? { N: input.move.n, Play: input.move.play, Seat: input.move.seat } : { N: 0, Play: "", Seat: 0 },
    };
    if (end) j.End = { Points: end.points, Result: end.result, Winner: end.winner === null ? -1 : end.winner };
    const r = JSON.parse(f(JSON.stringify(j)));
    if (r.error) throw new Error(r.error);
    return r;
  };
  const wasmChecker = {
    checkRoll: function (input) { const r = call(mc.checkRoll, input); return { position: r.position || null, played: !!r.played }; },
    checkMove: function (input) { return call(mc.checkMove, input).position || null; },
    checkEnd: function (input, end) { call(mc.checkEnd, input, end); },
  };

  const ev = parseEvidence(bundle);
  const evs = ev.log.entries.map(function (e) { return parseEvent(e.leaf); });
  out.events = evs.length;
  out.moves = evs.filter(function (e) { return e.type === "move"; }).length;
  for (const [name, checker] of [["port", Checker], ["wasm", wasmChecker], ["port", Checker], ["wasm", wasmChecker]]) {
    const g = await replay(evs, { moves: checker }); // the warm-up, and the check that both replay it
    if (g.moves.length !== out.moves) throw new Error(name + ": " + g.moves.length + " moves replayed");
    t0 = performance.now();
    for (let i = 0; i < n; i++) await replay(evs, { moves: checker });
    out[name + "MsPerGame"] = (performance.now() - t0) / n;
  }
  return out;
}
