// The variants and their rules as data (rules/variant.go): backgammon,
// portes, tavla, plakoto, fevga; the openings.

export const BACKGAMMON = "backgammon";
export const PORTES = "portes";
export const TAVLA = "tavla";
export const PLAKOTO = "plakoto";
export const FEVGA = "fevga";

/** allVariants returns every variant, in a fixed order. */
export function allVariants() { return [BACKGAMMON, PORTES, TAVLA, PLAKOTO, FEVGA]; }

/** validVariant reports whether v is one of the variants. */
export function validVariant(v) { return allVariants().indexOf(v) >= 0; }

/** parseVariant returns the variant named s, or throws. */
export function parseVariant(s) {
  if (validVariant(s)) return s;
  throw new Error("rules: unknown variant " + JSON.stringify(s) + ": want one of backgammon, portes, tavla, plakoto, fevga");
}

export const OPENING_WESTERN = "western";
export const OPENING_TURKISH_REROLL = "turkish-reroll";

/** parseOpening returns the opening style named s, or throws. */
export function parseOpening(s) {
  if (s === OPENING_WESTERN || s === OPENING_TURKISH_REROLL) return s;
  throw new Error("rules: unknown opening " + JSON.stringify(s) + ": want \"western\" or \"turkish-reroll\"");
}

// How checkers interact.
export const HITTING = 0; // a blot is hit and goes to the bar
export const PINNING = 1; // a blot is pinned where it stands (plakoto)
export const RUNNING = 2; // a single checker holds a point (fevga)

// A ruleset is a variant's rules as data.
function Ruleset(style, start, hitAndRun, fevga) {
  this.style = style;
  this.start = start; // starting layout, in the owner's own numbering (26 counts)
  this.hitAndRun = hitAndRun; // whether a checker that hit in its home board may move on
  this.fevga = fevga; // fevga's opening and blocking rules
}

// opposite returns, for a point q (1..24) in one seat's numbering, the same
// point in the other seat's numbering. Both mappings are involutions.
Ruleset.prototype.opposite = function (q) {
  if (this.style === RUNNING) return q > 12 ? q - 12 : q + 12;
  return 25 - q;
};

const westernStart = (function () { const s = new Int8Array(26); s[24] = 2; s[13] = 5; s[8] = 3; s[6] = 5; return s; })();
const stackedStart = (function () { const s = new Int8Array(26); s[24] = 15; return s; })();

const rsBackgammon = new Ruleset(HITTING, westernStart, true, false);
const rsTavla = new Ruleset(HITTING, westernStart, false, false);
const rsPlakoto = new Ruleset(PINNING, stackedStart, true, false);
const rsFevga = new Ruleset(RUNNING, stackedStart, true, true);

/** rulesOf returns the ruleset of v; it throws on an unknown variant. */
export function rulesOf(v) {
  switch (v) {
    case BACKGAMMON: case PORTES: return rsBackgammon;
    case TAVLA: return rsTavla;
    case PLAKOTO: return rsPlakoto;
    case FEVGA: return rsFevga;
  }
  throw new Error("rules: unknown variant " + JSON.stringify(v));
}
