// The tile badge ("çini rozeti", seed 000): the same SVG as the server's
// publisher.Badge, drawn from a commitment's 32 bytes (docs/PAGES.md §6).
// A Go test (TestJSBadge) holds the two byte for byte.

import { unhex } from "./bytes.js";

// END is "</": built at run time, so that the pages' bundle, inlined in the
// offline auditor's script element, never contains the two characters that
// would end it.
const END = "<" + String.fromCharCode(47);

const PALETTE = ["#1d4e89", "#178f8f", "#c0392b", "#2e7d32", "#6a3d7c", "#b7862b"];
const GROUND = "#f6f0e1";
const OUTLINE = "#1b2a41";

function colours(c) {
  const p = c[0] % 6;
  const s = (p + 1 + (c[1] % 5)) % 6;
  const rest = [0, 1, 2, 3, 4, 5].filter(function (i) { return i !== p && i !== s; });
  return [p, s, rest[c[2] % 4]];
}

function octant(x, y) {
  x = Math.min(x, 7 - x); y = Math.min(y, 7 - y);
  const a = Math.min(x, y), b = Math.max(x, y);
  return [0, 4, 7, 9][a] + (b - a);
}

function cell(c, k) {
  const bits = ((c[3] << 24) | (c[4] << 16) | (c[5] << 8) | c[6]) >>> 0;
  const v = (bits >>> (29 - 3 * k)) & 7;
  return [v >> 1, v & 1];
}

/**
 * badge returns the SVG tile badge of a commitment (32 bytes, or 64 hex
 * digits): a 64 × 64 unit square drawn at 96 × 96 pixels.
 * @param {Uint8Array|string} commitment
 * @returns {string}
 */
export function badge(commitment) {
  const c = typeof commitment === "string" ? unhex(commitment) : commitment;
  if (!(c instanceof Uint8Array) || c.length !== 32) throw new TypeError("a commitment is 32 bytes");
  const [p, s, a] = colours(c);
  let b = '<svg xmlns="http://www.w3.org/2000/svg" class="tile" width="96" height="96" viewBox="0 0 64 64" role="img">';
  b += '<rect x="1" y="1" width="62" height="62" rx="3" fill="' + GROUND + '" stroke="' + PALETTE[p] + '" stroke-width="2"/>';
  for (let y = 0; y < 8; y++) {
    for (let x = 0; x < 8; x++) {
      const [shape, colour] = cell(c, octant(x, y));
      const fill = colour === 1 ? PALETTE[s] : PALETTE[p];
      const cx = 4 + 8 * x, cy = 4 + 8 * y;
      if (shape === 1) b += '<circle cx="' + cx + '" cy="' + cy + '" r="2.6" fill="' + fill + '"/>';
      else if (shape === 2) b += '<path d="M' + cx + " " + (cy - 3) + 'l3 3-3 3-3-3z" fill="' + fill + '"/>';
      else if (shape === 3) b += '<rect x="' + (cx - 3) + '" y="' + (cy - 3) + '" width="6" height="6" fill="' + fill + '"/>';
    }
  }
  const r = 9 + (c[7] % 4);
  b += '<g fill="' + PALETTE[a] + '" stroke="' + OUTLINE + '" stroke-width="0.8">';
  const h = Math.trunc((r * 7) / 10);
  b += '<rect x="' + (32 - h) + '" y="' + (32 - h) + '" width="' + 2 * h + '" height="' + 2 * h + '"/>';
  b += '<path d="M32 ' + (32 - r) + "L" + (32 + r) + " 32L32 " + (32 + r) + "L" + (32 - r) + ' 32z"/>';
  b += END + "g>";
  b += '<circle cx="32" cy="32" r="3" fill="' + GROUND + '"/>';
  return b + END + "svg>";
}
