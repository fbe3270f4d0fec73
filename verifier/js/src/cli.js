// The command line (zarlog-verify, npx zarlog-verify), with the contract of
// the Go zarlog-verify (package verifier/cli): the same flags, the same text
// and JSON, exit 0 (every check passed), 1 (the proof is invalid), 2 (bad
// input). It takes the platform as an argument (bin/zarlog-verify.js gives
// Node's), so that it runs and is tested in one process.
//
//   zarlog-verify [--json] [--lang en|tr|ar] [--expected-commitment HEX|SEAL]
//       [--log-key VKEY] [--witness-policy FILE] [--emitter-key VKEY]... [--leaf FILE] FILE|-

import { verify, fileErrorReport } from "./verify.js";
import { render } from "./render.js";
import { catalog, langIndex } from "./messages.js";
import { textReport, jsonReport } from "./report.js";
import { isExport, verifyExport, exportText, exportJSON } from "./export.js";
import { parseExpected } from "./dice.js";
import { parseLogKey } from "./note.js";
import { parsePolicy } from "./policy.js";
import { hex } from "./bytes.js";

const EMITTER = /^[a-z0-9][a-z0-9-]{0,62}$/;

// goError writes a Node file error as Go's os package words it ("open
// x.json: no such file or directory"), which the Go command quotes.
const STRERROR = {
  ENOENT: "no such file or directory", EACCES: "permission denied", EPERM: "operation not permitted",
  EISDIR: "is a directory", ENOTDIR: "not a directory", ELOOP: "too many levels of symbolic links",
  ENAMETOOLONG: "file name too long", EMFILE: "too many open files", EIO: "input/output error",
};
function goError(e, path) {
  const why = e && STRERROR[e.code];
  if (!why) return String((e && e.message) || e);
  return (e.syscall === "read" ? "read " : "open ") + path + ": " + why;
}

// The command line's words are the Go command line's (package verifier/cli's
// table, generated into messages.js): the same usage, the same errors.
function say(lang, id, ...args) { return render({ id: id, args: args }, catalog, langIndex(lang)); }

// langFromEnv: LC_ALL, then LC_MESSAGES, then LANG, as the Go verifier.
function langFromEnv(env) {
  for (const name of ["LC_ALL", "LC_MESSAGES", "LANG"]) {
    const v = env[name];
    if (!v) continue;
    const l = v.split(".")[0].split("@")[0].split("_")[0].toLowerCase();
    return ["en", "tr", "ar"].indexOf(l) >= 0 ? l : "en";
  }
  return "en";
}

function usageError(io, lang, id, ...args) {
  io.err("zarlog-verify: " + say(lang, id, ...args) + "\n\n" + say(lang, "CliUsage"));
  return 2;
}

/**
 * run runs the command line on argv (the arguments after the command's
 * name) and resolves to its exit code: 0 every check passed, 1 the proof is
 * invalid, 2 bad input. io gives it the platform: {env (the environment's
 * variables), readFile(path) → Promise<Uint8Array> (a Node error on
 * failure), readStdin() → Promise<Uint8Array>, out(text), err(text)}.
 */
export async function run(argv, io) {
  let lang = langFromEnv(io.env);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--") break;
    const m = /^--?lang(?:=(.*))?$/.exec(argv[i]);
    if (m) {
      const v = m[1] !== undefined ? m[1] : argv[i + 1];
      if (["en", "tr", "ar"].indexOf(v) >= 0) lang = v;
    }
  }
  // The flags are checked as the Go command checks them, in the same
  // order, so that a bad command line gets the same words, on stderr, and
  // exit 2: each value as it comes, then the emitter keys together, the
  // number of files, and last the files the flags name.
  const opt = { emitterKeys: [] };
  const emitterKeys = [];
  let json = false, policyFile = "", leafFile = "";
  const files = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") { files.push(...argv.slice(i + 1)); break; }
    if (a === "-" || !a.startsWith("-")) { files.push(a); continue; }
    const eq = a.indexOf("=");
    const name = a.replace(/^--?/, "").split("=")[0];
    const value = function () {
      if (eq >= 0) return a.slice(eq + 1);
      if (i + 1 < argv.length) return argv[++i];
      return null;
    };
    switch (name) {
      case "h": case "help":
        io.out(say(lang, "CliUsage"));
        return 0;
      case "json":
        if (eq >= 0 && a.slice(eq + 1) !== "true" && a.slice(eq + 1) !== "false") return usageError(io, lang, "CliBadBool", a);
        json = eq < 0 || a.slice(eq + 1) === "true";
        break;
      case "lang": {
        const v = value();
        if (v === null) return usageError(io, lang, "CliNoValue", a);
        if (["en", "tr", "ar"].indexOf(v) < 0) return usageError(io, lang, "CliBadLang", v);
        lang = v;
        break;
      }
      case "expected-commitment": {
        const v = value();
        if (v === null) return usageError(io, lang, "CliNoValue", a);
        if (!parseExpected(v)) return usageError(io, lang, "CliBadExpected", v);
        opt.expected = v;
        break;
      }
      case "log-key": {
        const v = value();
        if (v === null) return usageError(io, lang, "CliNoValue", a);
        if (!(await parseLogKey(v))) return usageError(io, lang, "CliBadLogKey", v);
        opt.logKey = v;
        break;
      }
      case "emitter-key": {
        const v = value();
        if (v === null) return usageError(io, lang, "CliNoValue", a);
        const k = await parseLogKey(v);
        if (!k || !EMITTER.test(k.name)) return usageError(io, lang, "CliBadEmitterKey", v);
        emitterKeys.push(k);
        opt.emitterKeys.push(v);
        break;
      }
      case "witness-policy": {
        const v = value();
        if (v === null || v === "") return usageError(io, lang, "CliNoValue", a);
        policyFile = v;
        break;
      }
      case "leaf": {
        const v = value();
        if (v === null || v === "") return usageError(io, lang, "CliNoValue", a);
        leafFile = v;
        break;
      }
      default:
        return usageError(io, lang, "CliUnknownFlag", a);
    }
  }
  for (let i = 0; i < emitterKeys.length; i++) {
    for (let j = 0; j < i; j++) {
      if (emitterKeys[i].name === emitterKeys[j].name && hex(emitterKeys[i].key) === hex(emitterKeys[j].key)) return usageError(io, lang, "CliBadEmitterKeys");
    }
  }
  if (files.length === 0) return usageError(io, lang, "CliNoFile");
  if (files.length > 1) return usageError(io, lang, "CliTooManyFiles", files.length);
  if (policyFile !== "") {
    let text;
    try {
      text = new TextDecoder().decode(await io.readFile(policyFile));
    } catch (e) {
      return usageError(io, lang, "CliPolicyUnreadable", policyFile, goError(e, policyFile));
    }
    try {
      await parsePolicy(text);
    } catch (e) {
      return usageError(io, lang, "CliBadPolicy", policyFile, "bad flag value: --witness-policy: " + e.message);
    }
    opt.witnessPolicy = text;
  }
  if (leafFile !== "") {
    // The event's bytes, for a tlog-proof without an extra line, less the
    // one trailing newline an editor adds (as the Go command).
    let b;
    try {
      b = await io.readFile(leafFile);
    } catch (e) {
      return usageError(io, lang, "CliLeafUnreadable", leafFile, goError(e, leafFile));
    }
    b = b.subarray(0, 65535 + 2);
    if (b.length > 0 && b[b.length - 1] === 10) b = b.subarray(0, b.length - 1);
    if (b.length > 0 && b[b.length - 1] === 13) b = b.subarray(0, b.length - 1);
    opt.leaf = b;
  }
  let r;
  try {
    const bytes = files[0] === "-" ? await io.readStdin() : await io.readFile(files[0]);
    if (isExport(bytes)) {
      // A player's export: every game's bundle, one verdict each and a summary.
      const x = await verifyExport(bytes, opt);
      io.out(json ? exportJSON(x, lang) : exportText(x, lang));
      return x.exit;
    }
    r = await verify(bytes, opt);
  } catch (e) {
    if (!e || typeof e.code !== "string" || typeof e.syscall !== "string") throw e;
    r = fileErrorReport(files[0], e);
  }
  io.out(json ? jsonReport(r, lang) : textReport(r, lang));
  return r.exit;
}
