// The title of each check: a message id of the catalog (package verifier's
// checkTitles), shared by the report (report.js) and the pages (ui.js reads
// ZarlogVerifier.CHECK_TITLES).
export const CHECK_TITLES = {
  "format": "TitleFormat", "commitment": "TitleCommitment", "expected-commitment": "TitleExpected",
  "anchor": "TitleAnchor", "rolls": "TitleRolls", "sequence": "TitleSequence",
  "log-inclusion": "TitleLogInclusion", "log-signature": "TitleLogSignature", "log-order": "TitleLogOrder",
  "log-agreement": "TitleLogAgreement", "log-witnesses": "TitleLogWitnesses",
  "log-emitter-signatures": "TitleLogEmitter", "moves": "TitleMoves",
};

/** The message id of each status's word (PASS, GEÇTİ, ناجح). */
export const STATUS_WORDS = { pass: "StPass", fail: "StFail", skipped: "StSkipped" };
