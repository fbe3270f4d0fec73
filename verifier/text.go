package verifier

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// A Text is one entry of a message table, {name, en, tr, ar}: a stable
// name, the key by which
// renderers outside Go (the pages' scripts, the JavaScript package) look it
// up, and its words in English, Turkish and Arabic. The words are Go format
// strings whose arguments have explicit indexes (%[1]s, %[2]d, %[3]q), so a
// translation can reorder them and a renderer outside Go needs only those
// three verbs.
//
// Every word zarlog-verify, its JavaScript twin and the pages say is a Text:
// the verifier's reports (MessageCatalog), the command line's own words
// (package verifier/cli) and the pages' (package publisher). Each package
// keeps the table of its own words; CheckTexts holds the tables together to
// one set of rules, and the JavaScript package's messages.js is generated
// from all three.
type Text [4]string

// Name returns the text's name.
func (t Text) Name() string { return t[0] }

// In returns the text in language l, unformatted.
func (t Text) In(l Lang) string {
	return t[1+l.index()]
}

// Format returns the text in language l formatted with args.
func (t Text) Format(l Lang, args ...any) string {
	s := t.In(l)
	if len(args) == 0 && !strings.Contains(s, "%") {
		return s
	}
	return fmt.Sprintf(s, args...)
}

// Words returns the three texts in the order of Langs.
func (t Text) Words() [3]string { return [3]string{t[1], t[2], t[3]} }

// MessageCatalog returns every message of the verifier's reports keyed by
// its name: the message's identifier in this package without its "m", such
// as "RoFail" or "SuPass". It is for renderers outside Go, such as the
// browser verifier of package publisher, which must say exactly what
// zarlog-verify says. The map is new on every call.
func MessageCatalog() map[string]Text {
	out := make(map[string]Text, len(catalog))
	for _, t := range catalog {
		out[t.Name()] = t
	}
	return out
}

// Texts returns the verifier's messages as a table, in the order of their
// identifiers. The slice is new on every call.
func Texts() []Text { return slices.Clone(catalog[:]) }

var (
	nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]*$`)
	verbRE = regexp.MustCompile(`%\[([1-9])\]([sdq])|%%|%`)
)

// bidiControls are the Unicode bidi formatting characters. No text uses
// one: the Arabic texts start with an Arabic word where a line can start
// instead (docs/SCHEMES.md, "Reading the output").
const bidiControls = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

// CheckTexts holds message tables to the rules every renderer relies on:
// each name is a word ([A-Za-z][A-Za-z0-9-]*) that no other entry of any of
// the tables has, so that they can be merged into one catalog; each text is
// present in all three languages; the only verbs are %[n]s, %[n]d and
// %[n]q (and %%), and the three languages take the same arguments; no text
// holds a bidi control character. It returns every fault found, joined.
func CheckTexts(tables ...[]Text) error {
	var errs []error
	seen := map[string]bool{}
	for _, table := range tables {
		for i, t := range table {
			if !nameRE.MatchString(t.Name()) || seen[t.Name()] {
				errs = append(errs, fmt.Errorf("entry %d: the name %q is empty, not a word, or repeated", i, t.Name()))
			}
			seen[t.Name()] = true
			var args [3][]string
			for j, s := range t.Words() {
				if strings.TrimSpace(s) == "" {
					errs = append(errs, fmt.Errorf("%s: the %s text is missing", t.Name(), Langs()[j]))
				}
				if strings.ContainsAny(s, bidiControls) {
					errs = append(errs, fmt.Errorf("%s: the %s text holds a bidi control character", t.Name(), Langs()[j]))
				}
				for _, m := range verbRE.FindAllStringSubmatch(s, -1) {
					switch {
					case m[0] == "%%":
					case m[1] == "":
						errs = append(errs, fmt.Errorf("%s: the %s text has a verb without an explicit index, or another than %%[n]s, %%[n]d and %%[n]q", t.Name(), Langs()[j]))
					default:
						args[j] = append(args[j], m[1]+m[2])
					}
				}
				slices.Sort(args[j])
				args[j] = slices.Compact(args[j])
			}
			if !slices.Equal(args[0], args[1]) || !slices.Equal(args[0], args[2]) {
				errs = append(errs, fmt.Errorf("%s: the languages take different arguments: en %v, tr %v, ar %v", t.Name(), args[0], args[1], args[2]))
			}
		}
	}
	return errors.Join(errs...)
}
