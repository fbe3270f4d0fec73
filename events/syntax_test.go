package events

import (
	"regexp"
	"strings"
	"testing"
)

// The identifier grammar of FORMATS.md §1.1, as regular expressions: the
// reference the character-class table is checked against.
var (
	eventIDRef = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)
	gameIDRef  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
)

func checkIDSyntax(t *testing.T, s string) {
	t.Helper()
	if got, want := ValidEventID(s), eventIDRef.MatchString(s); got != want {
		t.Errorf("ValidEventID(%q) = %v, the grammar says %v", s, got, want)
	}
	if got, want := ValidGameID(s), gameIDRef.MatchString(s); got != want {
		t.Errorf("ValidGameID(%q) = %v, the grammar says %v", s, got, want)
	}
	if got, want := validID([]byte(s), eventRest, 128), ValidEventID(s); got != want {
		t.Errorf("validID of the bytes %q = %v, of the string %v", s, got, want)
	}
}

// TestIDSyntax: every string of one or two bytes, every byte after a valid
// start and before a valid end, and the length limits.
func TestIDSyntax(t *testing.T) {
	checkIDSyntax(t, "")
	for a := 0; a < 256; a++ {
		checkIDSyntax(t, string([]byte{byte(a)}))
		checkIDSyntax(t, "g"+string([]byte{byte(a)})+"7")
		for b := 0; b < 256; b++ {
			checkIDSyntax(t, string([]byte{byte(a), byte(b)}))
		}
	}
	for _, s := range []string{strings.Repeat("a", 127), strings.Repeat("a", 128), strings.Repeat("a", 129), "a" + strings.Repeat(":", 127), "a" + strings.Repeat(".", 128)} {
		checkIDSyntax(t, s)
	}
}

func FuzzIDSyntax(f *testing.F) {
	for _, s := range []string{"game-1:12", "a.b_c-d", ":x", "x:", "é", "A\x00", strings.Repeat("z", 128)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkIDSyntax(t, s) })
}
