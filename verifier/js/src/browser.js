// The entry of the pages' bundle (build.js): the package as one classic
// script that sets the global ZarlogVerifier, for the game pages and the
// single-file offline auditor, which load no module and fetch nothing.
export { verify, rollsOf } from "./verify.js";
export { render } from "./render.js";
export { sealCode } from "./dice.js";
export { webCryptoEd25519 as ed25519Supported } from "./ed25519.js";
export { QUICKNET_PUBLIC_KEY } from "./drand.js";
export { checkRollReveal, checkReceipt, verifyBeacon } from "./app.js";
export { badge } from "./badge.js";
export { CHECK_TITLES, STATUS_WORDS } from "./titles.js";
export { verdict } from "./report.js";
