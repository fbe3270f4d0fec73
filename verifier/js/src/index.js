// zarlog-verify: check a zarlog game's dice on the player's own device.
// See README.md for the API; index.d.ts for the types.

export { verify, fileErrorReport, rollsOf } from "./verify.js";
export { render } from "./render.js";
export { sealCode } from "./dice.js";
export { webCryptoEd25519 as ed25519Supported } from "./ed25519.js";
export { QUICKNET_PUBLIC_KEY } from "./drand.js";
export { checkRollReveal, checkReceipt, verifyBeacon } from "./app.js";
export { badge } from "./badge.js";
export { catalog, langs, langIndex } from "./messages.js";
export { textReport, jsonReport, verdict } from "./report.js";
export { isExport, verifyExport, exportText, exportJSON, EXPORT_FORMAT } from "./export.js";
