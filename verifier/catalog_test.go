package verifier

import (
	"regexp"
	"testing"
)

// TestMessageCatalog checks that every message has a distinct name and its
// three texts, and that the texts use only the verbs renderers outside Go
// implement.
func TestMessageCatalog(t *testing.T) {
	cat := MessageCatalog()
	if len(cat) != int(numMsgs) {
		t.Fatalf("MessageCatalog has %d names for %d messages: a name is missing or repeated", len(cat), numMsgs)
	}
	verb := regexp.MustCompile(`%[^\[]|%\[[1-9]\][^sdq]`)
	for name, texts := range cat {
		for i, s := range texts {
			if s == "" {
				t.Errorf("%s[%d] is empty", name, i)
			}
			if v := verb.FindString(s); v != "" {
				t.Errorf("%s[%d] uses %q: only %%[n]s, %%[n]d and %%[n]q are rendered outside Go", name, i, v)
			}
		}
	}
	if got := cat["SuPass"][0]; got != "Every roll checked" {
		t.Errorf(`MessageCatalog()["SuPass"][0] = %q`, got)
	}
}
