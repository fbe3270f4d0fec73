// Times: RFC 3339 read and written as Go's time package does, in
// nanoseconds since the Unix epoch (BigInt). It imports nothing.

function daysFromCivil(y, m, d) {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}
function civilFromDays(z) {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}
function daysIn(y, m) { return [31, (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]; }

// parseRFC3339 returns nanoseconds since the Unix epoch (BigInt), or null.
function parseRFC3339(s) {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/.exec(s);
  if (!m) return null;
  const y = +m[1], mo = +m[2], d = +m[3], h = +m[4], mi = +m[5], se = +m[6];
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || se > 59) return null;
  let off = 0;
  if (!m[8]) {
    const oh = +m[10], om = +m[11];
    if (oh > 23 || om > 59) return null;
    off = (oh * 60 + om) * 60 * (m[9] === "-" ? -1 : 1);
  }
  const secs = BigInt(daysFromCivil(y, mo, d)) * 86400n + BigInt(h * 3600 + mi * 60 + se - off);
  const frac = BigInt(((m[7] || "") + "000000000").slice(0, 9));
  return secs * 1000000000n + frac;
}
function pad(n, w) { return String(n).padStart(w, "0"); }
// formatTime writes ns in UTC: RFC 3339, with fraction digits as Go's
// RFC3339Nano (trailing zeros dropped) or, with ms, exactly 3 (events).
function formatTime(ns, style) {
  let secs = ns / 1000000000n;
  let frac = ns % 1000000000n;
  if (frac < 0n) { frac += 1000000000n; secs -= 1n; }
  let days = secs / 86400n;
  let rem = secs % 86400n;
  if (rem < 0n) { rem += 86400n; days -= 1n; }
  const [y, mo, d] = civilFromDays(Number(days));
  const r = Number(rem);
  let s = pad(y, 4) + "-" + pad(mo, 2) + "-" + pad(d, 2) + "T" + pad(Math.floor(r / 3600), 2) + ":" + pad(Math.floor(r / 60) % 60, 2) + ":" + pad(r % 60, 2);
  const f = pad(frac, 9);
  if (style === "ms") s += "." + f.slice(0, 3);
  else if (style === "nano" && frac !== 0n) s += "." + f.replace(/0+$/, "");
  return s + "Z";
}
function evidenceTime(ns) { return ns % 1000000n === 0n ? formatTime(ns, "ms") : formatTime(ns, "nano"); }

export { daysIn, parseRFC3339, formatTime, evidenceTime };
