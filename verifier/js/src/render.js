// Messages: a message is an id of the catalog (messages.js, generated from
// the Go verifier's tables) with its arguments; render formats it in
// English, Turkish or Arabic. It imports nothing.

function M(id, ...args) { return { id: id, args: args }; }

// goQuote renders a string as Go's %q does for the strings in these
// messages (printable text): a double-quoted string with escapes.
function goQuote(s) { return JSON.stringify(s); }

// listSep joins a list of clauses: the catalog's ListSep (the Arabic
// semicolon in Arabic), so that a page's catalog of one language joins as
// the full catalog does.
function listSep(cat, li) { return cat.ListSep ? cat.ListSep[li] : (li === 2 ? "؛ " : "; "); }

// render returns message m in language index li (0 en, 1 tr, 2 ar) from
// catalog cat (id -> [en, tr, ar] Go format strings with %[n]s/d/q).
function render(m, cat, li) {
  if (typeof m === "string") return m;
  if (!m) return "";
  const t = cat[m.id];
  if (!t) return m.id + "(" + m.args.join(", ") + ")";
  return t[li].replace(/%%|%\[(\d+)\]([sdqv])/g, function (all, n, verb) {
    if (all === "%%") return "%";
    let a = m.args[Number(n) - 1];
    if (a && typeof a === "object" && a.id) a = render(a, cat, li);
    else if (Array.isArray(a)) a = a.map(function (x) { return render(x, cat, li); }).join(listSep(cat, li));
    if (verb === "q") return goQuote(String(a));
    return String(a);
  });
}

export { M, render };
