// The package needs Node.js 20 or later (package.json's engines): an older
// one gets one line saying so, before anything that could fail on it in
// other words is loaded (index.js imports this module first).

import process from "node:process";

const major = Number(process.versions.node.split(".")[0]);
if (!(major >= 20)) {
  throw new Error("zarlog-emitter needs Node.js 20 or later; this is Node.js " + process.version);
}
