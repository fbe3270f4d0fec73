// The entry of the pages' bundle (build.js): the package as one classic
// script that sets the global ZarlogVerifier, for the game pages and the
// single-file offline auditor, which load no module and fetch nothing.
export { verify, render, sealCode, rollsOf, ed25519Supported, QUICKNET_PUBLIC_KEY } from "./core.js";
export { checkRollReveal, checkReceipt, verifyBeacon } from "./app.js";
export { badge } from "./badge.js";
export { CHECK_TITLES, STATUS_WORDS } from "./titles.js";
