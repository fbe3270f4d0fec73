#!/usr/bin/env node
// zarlog-verify (JavaScript): check a game's proof file offline, with the
// contract of the Go zarlog-verify: the same flags, the same text and JSON,
// exit 0 (every check passed), 1 (the proof is invalid), 2 (bad input).
//
//   npx zarlog-verify [--json] [--lang en|tr|ar] [--expected-commitment HEX|SEAL]
//       [--log-key VKEY] [--witness-policy FILE] [--emitter-key VKEY]... FILE|-

import { readFile } from "node:fs/promises";
import process from "node:process";
import { verify, textReport, jsonReport } from "../src/index.js";

const USAGE = {
  en: `usage: zarlog-verify [--json] [--lang en|tr|ar] [--expected-commitment HEX|SEALCODE]
                     [--log-key VKEY] [--witness-policy FILE] [--emitter-key VKEY]... FILE|-
Checks a dice-proof-v1 evidence file or proof bundle offline and says what it proves.
Exit code: 0 every check passed, 1 the proof is invalid, 2 bad input.
`,
  tr: `kullanım: zarlog-verify [--json] [--lang en|tr|ar] [--expected-commitment ONALTILIK|MÜHÜRKODU]
                        [--log-key ANAHTAR] [--witness-policy DOSYA] [--emitter-key ANAHTAR]... DOSYA|-
Bir dice-proof-v1 kanıt dosyasını ya da kanıt paketini çevrimdışı kontrol eder ve neyi kanıtladığını söyler.
Çıkış kodu: 0 her kontrol geçti, 1 kanıt geçersiz, 2 hatalı girdi.
`,
  ar: `الاستخدام: zarlog-verify [--json] [--lang en|tr|ar] [--expected-commitment ست_عشري|رمز_الختم] [--log-key مفتاح] [--witness-policy ملف] [--emitter-key مفتاح]... ملف|-
يتحقق دون اتصال بالشبكة من ملف إثبات dice-proof-v1 أو حزمة إثبات ويقول ما يثبته.
رمز الخروج: 0 نجحت الفحوص كلها، 1 الإثبات غير صالح، 2 مدخلات خاطئة.
`,
};
const ERRORS = {
  unknown: { en: "unknown flag %s", tr: "bilinmeyen seçenek %s", ar: "خيار غير معروف %s" },
  value: { en: "the flag %s needs a value", tr: "%s seçeneği bir değer ister", ar: "الخيار %s يحتاج إلى قيمة" },
  lang: { en: "unknown language %s: use en, tr or ar", tr: "bilinmeyen dil %s: en, tr ya da ar kullan", ar: "لغة غير معروفة %s: استعمل en أو tr أو ar" },
  file: { en: "give exactly one file (or - for standard input)", tr: "tam olarak bir dosya ver (ya da standart girdi için -)", ar: "أعطِ ملفًا واحدًا بالضبط (أو - للدخل القياسي)" },
  read: { en: "cannot read the file %s: %s", tr: "%s dosyası okunamadı: %s", ar: "تعذّرت قراءة الملف %s: %s" },
  unsupported: {
    en: "%s is checked by the Go zarlog-verify only", tr: "%s yalnızca Go ile yazılmış zarlog-verify ile kontrol edilir",
    ar: "لا يفحص الخيارَ %s إلا برنامج zarlog-verify المكتوب بلغة Go",
  },
};

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

function usageError(lang, key, ...args) {
  let m = ERRORS[key][lang];
  for (const a of args) m = m.replace("%s", a);
  process.stderr.write("zarlog-verify: " + m + "\n\n" + USAGE[lang]);
  return 2;
}

async function main(argv) {
  let lang = langFromEnv(process.env);
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--") break;
    const m = /^--?lang(?:=(.*))?$/.exec(argv[i]);
    if (m) {
      const v = m[1] !== undefined ? m[1] : argv[i + 1];
      if (["en", "tr", "ar"].indexOf(v) >= 0) lang = v;
    }
  }
  const opt = { emitterKeys: [] };
  let json = false;
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
        process.stdout.write(USAGE[lang]);
        return 0;
      case "json":
        if (eq >= 0 && a.slice(eq + 1) !== "true" && a.slice(eq + 1) !== "false") return usageError(lang, "unknown", a);
        json = eq < 0 || a.slice(eq + 1) === "true";
        break;
      case "lang": {
        const v = value();
        if (v === null) return usageError(lang, "value", a);
        if (["en", "tr", "ar"].indexOf(v) < 0) return usageError(lang, "lang", JSON.stringify(v));
        lang = v;
        break;
      }
      case "expected-commitment": {
        const v = value();
        if (v === null) return usageError(lang, "value", a);
        opt.expected = v;
        break;
      }
      case "log-key": {
        const v = value();
        if (v === null) return usageError(lang, "value", a);
        opt.logKey = v;
        break;
      }
      case "emitter-key": {
        const v = value();
        if (v === null) return usageError(lang, "value", a);
        opt.emitterKeys.push(v);
        break;
      }
      case "witness-policy": {
        const v = value();
        if (v === null) return usageError(lang, "value", a);
        try {
          opt.witnessPolicy = await readFile(v, "utf8");
        } catch (e) {
          return usageError(lang, "read", v, e.code || String(e.message || e));
        }
        break;
      }
      case "leaf":
        return usageError(lang, "unsupported", "--" + name);
      default:
        return usageError(lang, "unknown", a);
    }
  }
  if (files.length !== 1) return usageError(lang, "file");
  let bytes;
  try {
    bytes = files[0] === "-" ? await readStdin() : new Uint8Array(await readFile(files[0]));
  } catch (e) {
    return usageError(lang, "read", files[0], e.code || String(e.message || e));
  }
  const r = await verify(bytes, opt);
  process.stdout.write(json ? jsonReport(r, lang) : textReport(r, lang));
  return r.exit;
}

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return new Uint8Array(Buffer.concat(chunks));
}

main(process.argv.slice(2)).then(function (code) { process.exitCode = code; }, function (e) {
  process.stderr.write("zarlog-verify: " + (e && e.stack || e) + "\n");
  process.exitCode = 2;
});
