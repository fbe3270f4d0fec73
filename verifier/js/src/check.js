// A check's outcome: its name (as zarlog-verify names it), its status and
// its message. It imports nothing.

function check(name, status, detail, extra) {
  const c = { name: name, status: status, detail: detail };
  if (extra) Object.assign(c, extra);
  return c;
}
const pass = function (n, d, x) { return check(n, "pass", d, x); };
const fail = function (n, d, x) { return check(n, "fail", d, x); };
const skipped = function (n, d, x) { return check(n, "skipped", d, x); };
const diceStr = function (d) { return d[0] + "-" + d[1]; };

export { check, pass, fail, skipped, diceStr };
