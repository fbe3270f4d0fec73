package verifier

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

var verbRE = regexp.MustCompile(`%\[(\d+)\]([sdq])|%[^%\[]`)

// verbs returns the explicit argument verbs of a format ("1s", "2d", …),
// sorted; an implicit verb such as %s shows as "implicit".
func verbs(f string) []string {
	var out []string
	for _, m := range verbRE.FindAllStringSubmatch(f, -1) {
		if m[1] == "" {
			out = append(out, "implicit:"+m[0])
			continue
		}
		out = append(out, m[1]+m[2])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// bidiControls are the Unicode bidi formatting characters; none is used.
const bidiControls = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

// firstStrong returns the bidi class of the first strong character:
// 'R' for Arabic, 'L' for other letters, 0 if none.
func firstStrong(s string) rune {
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Arabic, r) && unicode.IsLetter(r):
			return 'R'
		case unicode.IsLetter(r):
			return 'L'
		}
	}
	return 0
}

// TestCatalogTranslated: every message exists in the three languages, the
// translations differ from English, take the same arguments, and the
// Arabic is Arabic, without bidi control characters, and starts with an
// Arabic word wherever a line can start.
func TestCatalogTranslated(t *testing.T) {
	midSentence := map[msgID]bool{mKindOpening: true, mKindReroll: true, mKindTurn: true}
	for id := msgID(0); id < numMsgs; id++ {
		en, tr, ar := catalog[id][1], catalog[id][2], catalog[id][3]
		if en == "" || tr == "" || ar == "" {
			t.Errorf("message %d is missing a language: %q %q %q", id, en, tr, ar)
			continue
		}
		if tr == en || ar == en {
			t.Errorf("message %d (%q) is not translated", id, en)
		}
		if v := verbs(en); !slices.Equal(v, verbs(tr)) || !slices.Equal(v, verbs(ar)) {
			t.Errorf("message %d: arguments differ: en %v tr %v ar %v", id, v, verbs(tr), verbs(ar))
		}
		for _, v := range verbs(en) {
			if strings.HasPrefix(v, "implicit") {
				t.Errorf("message %d uses an implicit verb %s: use %%[n]", id, v)
			}
		}
		if strings.ContainsAny(en+tr+ar, bidiControls) {
			t.Errorf("message %d contains a bidi control character", id)
		}
		if !midSentence[id] && firstStrong(ar) != 'R' {
			t.Errorf("message %d: the Arabic %q does not start with an Arabic word", id, ar)
		}
	}
}

// TestTextArabicLines: every line of an Arabic report starts, in logical
// order, with an Arabic word, so a bidi terminal lays it out right to left.
func TestTextArabicLines(t *testing.T) {
	for _, v := range loadVectors(t) {
		text := verifyVector(t, v).Text(Arabic)
		for _, line := range strings.Split(text, "\n") {
			if line == "" {
				continue
			}
			if firstStrong(line) != 'R' {
				t.Errorf("%s: Arabic line does not start with an Arabic word: %q", v.Name, line)
			}
			if strings.ContainsAny(line, bidiControls) {
				t.Errorf("%s: bidi control in %q", v.Name, line)
			}
		}
	}
}

// TestCatalogNames: every message has a name, and no two the same.
func TestCatalogNames(t *testing.T) {
	seen := map[string]bool{}
	for id, m := range catalog {
		if m[0] == "" || seen[m[0]] || strings.ContainsAny(m[0], " \t") {
			t.Errorf("message %d: name %q (empty, repeated or spaced)", id, m[0])
		}
		seen[m[0]] = true
	}
}
