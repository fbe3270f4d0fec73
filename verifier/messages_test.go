package verifier

import (
	"strings"
	"testing"
	"unicode"
)

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

// TestCatalogTranslated: every message passes CheckTexts (a unique name,
// the three languages, the same arguments, only the verbs renderers outside
// Go implement, no bidi controls), the translations differ from English,
// and the Arabic starts with an Arabic word wherever a line can start.
func TestCatalogTranslated(t *testing.T) {
	if err := CheckTexts(Texts()); err != nil {
		t.Error(err)
	}
	if len(MessageCatalog()) != int(numMsgs) {
		t.Errorf("MessageCatalog has %d names for %d messages", len(MessageCatalog()), numMsgs)
	}
	midSentence := map[msgID]bool{mKindOpening: true, mKindReroll: true, mKindTurn: true}
	punctuation := map[msgID]bool{mListSep: true} // no word to translate
	for id := msgID(0); id < numMsgs; id++ {
		m := catalog[id]
		if punctuation[id] {
			continue
		}
		if m[2] == m[1] || m[3] == m[1] {
			t.Errorf("message %s (%q) is not translated", m.Name(), m[1])
		}
		if !midSentence[id] && firstStrong(m[3]) != 'R' {
			t.Errorf("message %s: the Arabic %q does not start with an Arabic word", m.Name(), m[3])
		}
	}
	if got := MessageCatalog()["SuPass"][1]; got != "Every roll checked" {
		t.Errorf(`MessageCatalog()["SuPass"][1] = %q`, got)
	}
}

// TestCheckTexts: CheckTexts finds each fault it names, across tables too,
// and passes a good table.
func TestCheckTexts(t *testing.T) {
	good := Text{"Good", "%[1]d rolls, 95%% of %[2]s", "%[2]s, %[1]d atış, %%95", "%[1]d رمية، 95%% من %[2]s"}
	if got := good.Format(Turkish, 60, "x"); got != "x, 60 atış, %95" {
		t.Errorf("Format = %q", got)
	}
	if got := (Text{"Pct", "95%% of them", "%%95", "95%%"}).Format(English); got != "95% of them" {
		t.Errorf("Format without arguments = %q", got)
	}
	if err := CheckTexts([]Text{good}); err != nil {
		t.Errorf("a good table: %v", err)
	}
	for _, c := range []struct {
		name   string
		tables [][]Text
		want   string
	}{
		{"repeated across tables", [][]Text{{good}, {good}}, "repeated"},
		{"empty name", [][]Text{{{"", "a", "b", "c"}}}, "not a word"},
		{"spaced name", [][]Text{{{"A B", "a", "b", "c"}}}, "not a word"},
		{"missing Turkish", [][]Text{{{"X", "a", " ", "c"}}}, "tr text is missing"},
		{"implicit verb", [][]Text{{{"X", "%s", "%[1]s", "%[1]s"}}}, "explicit index"},
		{"float verb", [][]Text{{{"X", "%[1]f", "%[1]f", "%[1]f"}}}, "explicit index"},
		{"arguments differ", [][]Text{{{"X", "%[1]s %[2]d", "%[1]s", "%[2]d %[1]s"}}}, "different arguments"},
		{"bidi control", [][]Text{{{"X", "a", "b", "\u200fc"}}}, "bidi control"},
	} {
		err := CheckTexts(c.tables...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: CheckTexts = %v, want an error saying %q", c.name, err, c.want)
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
