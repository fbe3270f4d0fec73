package cjson

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"dice-md-settings",
			`{"rulesVersion":"tavla-1","variant":"portes","matchLength":5,"opening":"turkish-reroll","doublingCube":false}`,
			`{"doublingCube":false,"matchLength":5,"opening":"turkish-reroll","rulesVersion":"tavla-1","variant":"portes"}`},
		{"whitespace", " { \"b\" : [ 1 , 2 ] ,\n\t\"a\" : null } ", `{"a":null,"b":[1,2]}`},
		{"max-safe", `[9007199254740991,-9007199254740991]`, `[9007199254740991,-9007199254740991]`},
		{"negative-zero", `-0`, `0`},
		{"escapes", `"\u0041\/\b\f\n\r\t\u001f\u007f\"\\"`, "\"A/\\b\\f\\n\\r\\t\\u001f\x7f\\\"\\\\\""},
		{"unicode-literal", `"tavla \u00e7ini \ud83c\udfb2"`, "\"tavla çini 🎲\""},
		{"utf16-key-order", `{"\ud83c\udfb2":1,"\uffff":2,"a":3}`, "{\"a\":3,\"🎲\":1,\"\uffff\":2}"},
		{"nested", `{"z":{"y":[{"b":true,"a":false}]},"a":""}`, `{"a":"","z":{"y":[{"a":false,"b":true}]}}`},
		{"empty", `{"a":{},"b":[]}`, `{"a":{},"b":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Errorf("Parse(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if err := Check(got); err != nil {
				t.Errorf("Check(canonical %q): %v", got, err)
			}
		})
	}
}

// manyKeys returns an object with members k0..k(n-1) and then extra.
func manyKeys(n int, extra string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	fmt.Fprintf(&b, `"%s":0}`, extra)
	return b.String()
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, in string
		want     error // sentinel, or nil for any *SyntaxError
	}{
		{"float", `1.5`, ErrNotInteger},
		{"float-zero-fraction", `{"a":1.0}`, ErrNotInteger},
		{"exponent", `[1e3]`, ErrNotInteger},
		{"2^53", `9007199254740992`, ErrUnsafeInteger},
		{"2^53+1", `9007199254740993`, ErrUnsafeInteger},
		{"-2^53", `-9007199254740992`, ErrUnsafeInteger},
		{"huge", `123456789012345678901234567890`, ErrUnsafeInteger},
		{"duplicate", `{"a":1,"a":1}`, ErrDuplicateKey},
		{"duplicate-escaped", `{"a":1,"\u0061":2}`, ErrDuplicateKey},
		{"duplicate-nested", `{"x":{"k":1,"k":2}}`, ErrDuplicateKey},
		// Objects of 16 and more members are checked with a map.
		{"duplicate-17th", manyKeys(16, "k0"), ErrDuplicateKey},
		{"duplicate-16th", manyKeys(15, "k3"), ErrDuplicateKey},
		{"duplicate-40th", manyKeys(39, "k38"), ErrDuplicateKey},
		{"too-deep", strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2), ErrTooDeep},
		{"leading-zero", `01`, nil},
		{"plus", `+1`, nil},
		{"trailing", `{} {}`, nil},
		{"trailing-comma", `[1,]`, nil},
		{"lone-high", `"\ud800"`, nil},
		{"lone-low", `"\udc00"`, nil},
		{"bad-pair", `"\ud800\u0041"`, nil},
		{"raw-control", "\"a\x01\"", nil},
		{"bad-utf8", "\"\xff\"", nil},
		{"bad-escape", `"\x"`, nil},
		{"nan", `NaN`, nil},
		{"empty", ``, nil},
		{"single-quote", `'a'`, nil},
		{"unterminated", `{"a":`, nil},
		{"key-not-string", `{1:2}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want error", tt.in)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %v is not a *SyntaxError", tt.in, err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Parse(%q) = %v, want %v", tt.in, err, tt.want)
			}
		})
	}
}

func TestCheckRejectsNonCanonical(t *testing.T) {
	for _, in := range []string{
		`{"b":1,"a":2}`, `{"a": 1}`, ` {}`, `{}` + "\n", `-0`, `"\u0041"`, `"\/"`,
		`"\u00e7"`, `"\u001F"`, `[1 ]`,
	} {
		if err := Check([]byte(in)); !errors.Is(err, ErrNotCanonical) {
			t.Errorf("Check(%q) = %v, want ErrNotCanonical", in, err)
		}
	}
}

func TestMarshal(t *testing.T) {
	got, err := Marshal(map[string]any{"b": []any{int64(1), "x", nil, true}, "a": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":{},"b":[1,"x",null,true]}`; string(got) != want {
		t.Errorf("Marshal = %s, want %s", got, want)
	}
	if _, err := Marshal(map[string]any{"a": int64(MaxSafeInteger + 1)}); !errors.Is(err, ErrUnsafeInteger) {
		t.Errorf("Marshal(2^53) = %v, want ErrUnsafeInteger", err)
	}
	if _, err := Marshal(1.5); err == nil {
		t.Error("Marshal(float64) succeeded")
	}
	if _, err := Marshal(Object{{"a", int64(1)}, {"a", int64(2)}}); !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("Marshal(duplicate) = %v, want ErrDuplicateKey", err)
	}
}

// TestJCSOracle checks our output against github.com/gowebpki/jcs on inputs
// inside the integer subset, where both must agree byte for byte.
func TestJCSOracle(t *testing.T) {
	for _, in := range oracleInputs {
		ours, err := Parse([]byte(in))
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		theirs, err := jcs.Transform([]byte(in))
		if err != nil {
			t.Fatalf("jcs.Transform(%q): %v", in, err)
		}
		if !bytes.Equal(ours, theirs) {
			t.Errorf("Parse(%q) = %q, jcs says %q", in, ours, theirs)
		}
	}
}

var oracleInputs = []string{
	`{"rulesVersion":"tavla-1","variant":"portes","matchLength":5,"opening":"turkish-reroll","doublingCube":false}`,
	`{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
	`{"a":[1,-2,0,9007199254740991],"b":"\u0000\u001f\"\\/é"}`,
	`[{"z":null},{"y":{"x":{"w":[]}}}]`,
	`"ünïcödé ğşı تحقق"`,
}

func FuzzParse(f *testing.F) {
	for _, in := range oracleInputs {
		f.Add([]byte(in))
	}
	f.Add([]byte(`{"a":1.5}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte(`"\ud800"`))
	f.Add([]byte(`9007199254740993`))
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := Parse(in)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %v is not a *SyntaxError", in, err)
			}
			return
		}
		// Round trip: the canonical form is a fixed point.
		c2, err := Parse(c)
		if err != nil {
			t.Fatalf("Parse(canonical %q): %v", c, err)
		}
		if !bytes.Equal(c, c2) {
			t.Fatalf("canonical form not stable: %q -> %q", c, c2)
		}
		if err := Check(c); err != nil {
			t.Fatalf("Check(canonical %q): %v", c, err)
		}
		if Check(in) == nil && !bytes.Equal(in, c) {
			t.Fatalf("Check accepted %q but canonical form is %q", in, c)
		}
		// Differential: inside our subset, jcs must agree.
		if theirs, err := jcs.Transform(in); err == nil && !bytes.Equal(c, theirs) {
			t.Fatalf("Parse(%q) = %q, jcs says %q", in, c, theirs)
		}
	})
}

func BenchmarkCheck(b *testing.B) {
	in := []byte(`{"body":{"dice":[3,1],"kind":"turn","n":17},"emitter":"tavlarena","game":"00112233-4455-6677-8899-aabbccddeeff","id":"00112233-4455-6677-8899-aabbccddeeff:21","scheme":"tavlarena-v1","seq":21,"time":"2026-11-30T10:37:31.123Z","type":"roll","v":1}`)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if err := Check(in); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLargeObject checks that objects past the duplicate-scan threshold
// still parse and come out sorted.
func TestLargeObject(t *testing.T) {
	c, err := Parse([]byte(manyKeys(40, "a")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(c), `{"a":0,"k0":0,"k1":1,"k10":10,`) {
		t.Errorf("Parse = %s", c)
	}
}
