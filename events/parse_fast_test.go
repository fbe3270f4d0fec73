package events

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/events/cjson"
)

// agree checks that the fast path and the tree walk decide b alike: when
// parseCanonicalFast accepts, parseReference accepts with an equal Event, and Parse
// returns that Event; when parseCanonicalFast declines, Parse is parseReference.
func agree(t testing.TB, b []byte) (fast bool) {
	t.Helper()
	if len(b) > MaxEventSize {
		return false
	}
	want, wantErr := parseReference(b)
	got, ok := parseCanonicalFast(b)
	if ok {
		if wantErr != nil {
			t.Fatalf("parseCanonicalFast accepts what parseReference refuses (%v):\n%s", wantErr, b)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("parseCanonicalFast and parseReference disagree:\n fast %#v\n tree %#v\n%s", got, want, b)
		}
	}
	p, err := Parse(b)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() || !reflect.DeepEqual(p, want) {
		t.Fatalf("Parse = %v, %v; parseReference = %v, %v\n%s", p, err, want, wantErr, b)
	}
	return ok
}

// corpusEvents returns the canonical bytes of every event of the fixture's
// games, plus events the games do not have (escapes, a null winner, an
// abandoned end, a long beacon signature, non-ASCII text).
func corpusEvents(t testing.TB) [][]byte {
	f := newFixture(t)
	var out [][]byte
	for _, ev := range allEvents(t, f) {
		out = append(out, mustFormat(t, ev))
	}
	extra := []struct {
		at   int // an event of the corpus of this type
		path string
		v    any
	}{
		{-1, "body.play", "bar/22* 6/4(2)"},
		{-1, "body.play", ""},
		{-1, "body.play", "ağır oyun ♜ 🎲"},
		{-1, "body.play", `quote " and \ backslash`},
		{-1, "body.play", "tab\tnewline\n"},
		{-1, "body.play", "del\x7f"},
	}
	var move []byte
	for _, b := range out {
		if bytes.Contains(b, []byte(`"type":"move"`)) {
			move = b
			break
		}
	}
	for _, x := range extra {
		out = append(out, mutate(t, move, x.path, x.v))
	}
	return out
}

// TestParseFastCovers checks that the fast path takes every event of the
// fixture's games (so it is the one Parse uses for them), and declines the
// valid events it leaves to parseReference.
func TestParseFastCovers(t *testing.T) {
	evs := corpusEvents(t)
	if len(evs) < 50 {
		t.Fatalf("only %d events in the corpus", len(evs))
	}
	types := map[string]bool{}
	for _, b := range evs {
		ev, err := parseReference(b)
		if err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		escaped := bytes.Contains(b, []byte(`\`))
		if fast := agree(t, b); fast == escaped {
			t.Errorf("parseCanonicalFast ok = %v for a valid event with escapes = %v:\n%s", fast, escaped, b)
		}
		types[string(ev.Scheme)+"/"+string(ev.Type)] = true
	}
	if len(types) != 19 {
		t.Errorf("the corpus has %d scheme/type pairs, want all 19: %v", len(types), types)
	}
}

// onePerKind returns the first corpus event of each scheme and type, and
// the extra ones.
func onePerKind(t testing.TB) [][]byte {
	var out [][]byte
	seen := map[string]bool{}
	for _, b := range corpusEvents(t) {
		ev, err := parseReference(b)
		if err != nil {
			t.Fatal(err)
		}
		k := string(ev.Scheme) + "/" + string(ev.Type)
		if ev.Type == TypeMove {
			k += "/" + ev.Body.(Move).Play
		}
		if !seen[k] {
			out = append(out, b)
		}
		seen[k] = true
	}
	return out
}

// TestParseFastMutations runs both paths over systematic damage to an
// event of each kind: each byte replaced by each of a set of bytes, each
// byte deleted, each byte doubled, and the text cut at every length.
func TestParseFastMutations(t *testing.T) {
	subs := []byte("\x00\x1f \"',-.0123456789:AF[\\]afnu{}\x7f\xc3\xff")
	n := 0
	for _, b := range onePerKind(t) {
		m := make([]byte, len(b)+1)
		for i := range b {
			for _, c := range subs {
				if c == b[i] {
					continue
				}
				copy(m, b)
				m[i] = c
				agree(t, m[:len(b)])
				n++
			}
			agree(t, append(append(m[:0:0], b[:i]...), b[i+1:]...))
			agree(t, append(append(m[:0:0], b[:i+1]...), b[i:]...))
			agree(t, b[:i])
			n += 3
		}
	}
	t.Logf("%d mutations", n)
}

// TestParseFastMembers replaces each member of each corpus event with
// values of every JSON type and the edge values of its range.
func TestParseFastMembers(t *testing.T) {
	values := []any{nil, true, false, int64(0), int64(1), int64(-1), int64(2), int64(6), int64(7),
		int64(1<<32 - 1), int64(1 << 32), int64(cjson.MaxSafeInteger), int64(-cjson.MaxSafeInteger),
		"", "x", "turn", "opening", "null", strings.Repeat("a", 64), strings.Repeat("a", 128), strings.Repeat("0", 64),
		"2026-02-29T00:00:00.000Z", "2024-02-29T00:00:00.000Z", "00000000-0000-4000-8000-000000000000",
		[]any{}, []any{int64(1)}, []any{int64(1), int64(2)}, []any{int64(1), int64(2), int64(3)},
		cjson.Object{}, cjson.Object{{Key: "variant", Value: "tavla"}}, cjson.Object{{Key: "moves", Value: "logged"}}}
	n := 0
	for _, b := range corpusEvents(t) {
		tree, err := cjson.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range memberPaths(tree.(cjson.Object), "") {
			agree(t, mutate(t, b, path, deleteMember))
			for _, v := range values {
				agree(t, mutate(t, b, path, v))
				n++
			}
		}
		agree(t, mutate(t, b, "extra", int64(1)))
		agree(t, mutate(t, b, "body.extra", int64(1)))
	}
	t.Logf("%d member mutations", n)
}

func memberPaths(o cjson.Object, prefix string) []string {
	var out []string
	for _, m := range o {
		p := prefix + m.Key
		out = append(out, p)
		if sub, ok := m.Value.(cjson.Object); ok {
			out = append(out, memberPaths(sub, p+".")...)
		}
	}
	return out
}

// FuzzParseCanonicalFast holds the fast path to the tree walk: same decision, same
// Event. The old path is the oracle.
func FuzzParseCanonicalFast(f *testing.F) {
	for _, b := range corpusEvents(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		agree(t, b)
	})
}
