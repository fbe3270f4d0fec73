// Package cjson implements zarlog's canonical JSON: RFC 8785 (the JSON
// Canonicalization Scheme) restricted to integers, as specified in
// docs/SCHEMES.md §1 (from the shared DICE.md contract).
//
// Canonical JSON is the encoding of every hashed or signed JSON value in
// zarlog: the settings hashed into a tavlarena-v1 commitment and every event
// leaf of the log. It differs from plain RFC 8785 in what it refuses:
//
//   - numbers must be integers written without fraction or exponent, with
//     |n| ≤ 2^53−1; anything else is an input error, never silently rounded;
//   - duplicate object keys are an input error;
//   - strings must be valid UTF-8 without lone surrogate escapes;
//   - nesting deeper than MaxDepth is an input error.
//
// Parse validates and returns the canonical form of any JSON text that
// satisfies these rules. Check reports whether a text is already exactly
// canonical, which is how the log guarantees that an event has one possible
// encoding. github.com/gowebpki/jcs, a maintained RFC 8785 implementation,
// serves as a differential oracle in the tests; it is not used here because
// it rounds 2^53+1 and accepts floats.
package cjson

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth is the deepest nesting of arrays and objects that Parse accepts.
const MaxDepth = 64

// MaxSafeInteger is 2^53−1, the largest integer magnitude canonical JSON
// allows.
const MaxSafeInteger = 1<<53 - 1

// Sentinel errors. Every error returned by this package wraps a *SyntaxError,
// and where it applies one of these sentinels, so callers can branch with
// errors.Is.
var (
	ErrDuplicateKey  = errors.New("duplicate object key")
	ErrNotInteger    = errors.New("number is not an integer")
	ErrUnsafeInteger = errors.New("integer outside ±(2^53−1)")
	ErrNotCanonical  = errors.New("not in canonical form")
	ErrTooDeep       = errors.New("nesting too deep")
)

// A SyntaxError describes where and why a JSON text was rejected.
type SyntaxError struct {
	Offset int    // byte offset in the input where the problem was found
	Msg    string // what was wrong
	Err    error  // a sentinel above, or nil
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("canonical json: at byte %d: %s", e.Offset, e.Msg)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// Parse validates b as JSON under the canonical-JSON rules and returns its
// canonical form. Whitespace and key order in b are free; everything else
// must satisfy the rules in the package comment.
func Parse(b []byte) ([]byte, error) {
	v, err := Decode(b)
	if err != nil {
		return nil, err
	}
	return Append(make([]byte, 0, len(b)), v), nil
}

// Check returns nil if b is exactly the canonical form of a valid JSON text,
// and an error wrapping ErrNotCanonical (or a more specific sentinel) if not.
func Check(b []byte) error {
	c, err := Parse(b)
	if err != nil {
		return err
	}
	if !bytes.Equal(c, b) {
		i := 0
		for i < len(c) && i < len(b) && c[i] == b[i] {
			i++
		}
		return &SyntaxError{Offset: i, Msg: "text is valid but not canonical (whitespace, key order, escaping or number form)", Err: ErrNotCanonical}
	}
	return nil
}

// Marshal encodes v as canonical JSON. Values are the ones Decode returns:
// nil, bool, int64, string, []any, and Object; map[string]any is accepted
// too. Integers outside ±(2^53−1) and any other type are an error.
func Marshal(v any) ([]byte, error) {
	if err := checkValue(v, 0); err != nil {
		return nil, err
	}
	return Append(nil, v), nil
}

func checkValue(v any, depth int) error {
	if depth > MaxDepth {
		return &SyntaxError{Msg: "nesting deeper than 64", Err: ErrTooDeep}
	}
	switch x := v.(type) {
	case nil, bool:
	case string:
		if !utf8.ValidString(x) {
			return &SyntaxError{Msg: "string is not valid UTF-8"}
		}
	case int:
		return checkInt(int64(x))
	case int64:
		return checkInt(x)
	case []any:
		for _, e := range x {
			if err := checkValue(e, depth+1); err != nil {
				return err
			}
		}
	case Object:
		seen := make(map[string]bool, len(x))
		for _, m := range x {
			if seen[m.Key] {
				return &SyntaxError{Msg: fmt.Sprintf("duplicate key %q", m.Key), Err: ErrDuplicateKey}
			}
			seen[m.Key] = true
			if !utf8.ValidString(m.Key) {
				return &SyntaxError{Msg: "key is not valid UTF-8"}
			}
			if err := checkValue(m.Value, depth+1); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) {
				return &SyntaxError{Msg: "key is not valid UTF-8"}
			}
			if err := checkValue(e, depth+1); err != nil {
				return err
			}
		}
	default:
		return &SyntaxError{Msg: fmt.Sprintf("cannot encode value of type %T", v)}
	}
	return nil
}

func checkInt(n int64) error {
	if n > MaxSafeInteger || n < -MaxSafeInteger {
		return &SyntaxError{Msg: fmt.Sprintf("integer %d outside ±(2^53−1)", n), Err: ErrUnsafeInteger}
	}
	return nil
}

// A Member is one key/value pair of an Object.
type Member struct {
	Key   string
	Value any
}

// An Object is a JSON object as decoded: its members in input order.
type Object []Member

// Get returns the value of key and whether it is present.
func (o Object) Get(key string) (any, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// Decode parses b under the canonical-JSON rules into a tree of nil, bool,
// int64, string, []any and Object values.
func Decode(b []byte) (any, error) {
	if !utf8.Valid(b) {
		off := 0
		for off < len(b) {
			r, size := utf8.DecodeRune(b[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return nil, &SyntaxError{Offset: off, Msg: "input is not valid UTF-8"}
	}
	d := decoder{b: b}
	d.skipSpace()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.skipSpace()
	if d.i != len(d.b) {
		return nil, d.errf(nil, "trailing data after the JSON value")
	}
	return v, nil
}

type decoder struct {
	b []byte
	i int
}

func (d *decoder) errf(sentinel error, format string, args ...any) error {
	return &SyntaxError{Offset: d.i, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

func (d *decoder) skipSpace() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) value(depth int) (any, error) {
	if depth > MaxDepth {
		return nil, d.errf(ErrTooDeep, "nesting deeper than %d", MaxDepth)
	}
	if d.i >= len(d.b) {
		return nil, d.errf(nil, "unexpected end of input")
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return d.object(depth)
	case c == '[':
		return d.array(depth)
	case c == '"':
		return d.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return d.number()
	case d.literal("true"):
		return true, nil
	case d.literal("false"):
		return false, nil
	case d.literal("null"):
		return nil, nil
	default:
		return nil, d.errf(nil, "unexpected character %q", rune(c))
	}
}

func (d *decoder) literal(s string) bool {
	if bytes.HasPrefix(d.b[d.i:], []byte(s)) {
		d.i += len(s)
		return true
	}
	return false
}

func (d *decoder) object(depth int) (any, error) {
	d.i++ // {
	obj := make(Object, 0, 8)
	var seen map[string]struct{}
	d.skipSpace()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return obj, nil
	}
	for {
		d.skipSpace()
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return nil, d.errf(nil, "expected an object key")
		}
		keyAt := d.i
		k, err := d.str()
		if err != nil {
			return nil, err
		}
		// Small objects (every event) are checked for duplicates by a scan;
		// a map takes over past 16 members.
		dup := false
		if seen == nil && len(obj) >= 16 {
			seen = make(map[string]struct{}, 2*len(obj))
			for _, m := range obj {
				seen[m.Key] = struct{}{}
			}
		}
		if seen != nil {
			_, dup = seen[k]
			seen[k] = struct{}{}
		} else {
			for _, m := range obj {
				dup = dup || m.Key == k
			}
		}
		if dup {
			return nil, &SyntaxError{Offset: keyAt, Msg: fmt.Sprintf("duplicate key %q", k), Err: ErrDuplicateKey}
		}
		d.skipSpace()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return nil, d.errf(nil, "expected ':' after object key")
		}
		d.i++
		d.skipSpace()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		obj = append(obj, Member{k, v})
		d.skipSpace()
		if d.i >= len(d.b) {
			return nil, d.errf(nil, "unexpected end of input in object")
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			return obj, nil
		default:
			return nil, d.errf(nil, "expected ',' or '}' in object")
		}
	}
}

func (d *decoder) array(depth int) (any, error) {
	d.i++ // [
	arr := []any{}
	d.skipSpace()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return arr, nil
	}
	for {
		d.skipSpace()
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		d.skipSpace()
		if d.i >= len(d.b) {
			return nil, d.errf(nil, "unexpected end of input in array")
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			return arr, nil
		default:
			return nil, d.errf(nil, "expected ',' or ']' in array")
		}
	}
}

func (d *decoder) number() (any, error) {
	start := d.i
	if d.b[d.i] == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	if d.i == digits {
		return nil, d.errf(nil, "'-' not followed by a digit")
	}
	if d.b[digits] == '0' && d.i-digits > 1 {
		return nil, &SyntaxError{Offset: start, Msg: "number has a leading zero"}
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		// Consume the rest of the number so the message shows it whole.
		for d.i < len(d.b) && bytes.IndexByte([]byte("0123456789.eE+-"), d.b[d.i]) >= 0 {
			d.i++
		}
		return nil, &SyntaxError{Offset: start, Msg: fmt.Sprintf("number %s has a fraction or exponent; only integers are allowed", d.b[start:d.i]), Err: ErrNotInteger}
	}
	text := string(d.b[start:d.i])
	if d.i-digits > 16 {
		return nil, &SyntaxError{Offset: start, Msg: fmt.Sprintf("integer %s outside ±(2^53−1)", text), Err: ErrUnsafeInteger}
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return nil, &SyntaxError{Offset: start, Msg: fmt.Sprintf("bad integer %s", text)}
	}
	if n > MaxSafeInteger || n < -MaxSafeInteger {
		return nil, &SyntaxError{Offset: start, Msg: fmt.Sprintf("integer %s outside ±(2^53−1)", text), Err: ErrUnsafeInteger}
	}
	return n, nil
}

func (d *decoder) str() (string, error) {
	d.i++ // opening quote
	var sb []byte
	runStart := d.i
	for {
		if d.i >= len(d.b) {
			return "", d.errf(nil, "unterminated string")
		}
		c := d.b[d.i]
		switch {
		case c == '"':
			s := append(sb, d.b[runStart:d.i]...)
			d.i++
			return string(s), nil
		case c < 0x20:
			return "", d.errf(nil, "control character %#02x in string must be escaped", c)
		case c == '\\':
			sb = append(sb, d.b[runStart:d.i]...)
			r, err := d.escape()
			if err != nil {
				return "", err
			}
			sb = utf8.AppendRune(sb, r)
			runStart = d.i
		default:
			d.i++
		}
	}
}

// escape decodes one escape sequence at d.i (the backslash) and advances.
func (d *decoder) escape() (rune, error) {
	if d.i+1 >= len(d.b) {
		return 0, d.errf(nil, "unterminated escape")
	}
	c := d.b[d.i+1]
	var r rune
	switch c {
	case '"', '\\', '/':
		r = rune(c)
	case 'b':
		r = '\b'
	case 'f':
		r = '\f'
	case 'n':
		r = '\n'
	case 'r':
		r = '\r'
	case 't':
		r = '\t'
	}
	if r != 0 {
		d.i += 2
		return r, nil
	}
	if c != 'u' {
		return 0, d.errf(nil, "invalid escape \\%c", c)
	}
	r1, err := d.hex4(d.i + 2)
	if err != nil {
		return 0, err
	}
	d.i += 6
	if !utf16.IsSurrogate(r1) {
		return r1, nil
	}
	if r1 >= 0xdc00 || d.i+1 >= len(d.b) || d.b[d.i] != '\\' || d.b[d.i+1] != 'u' {
		return 0, d.errf(nil, "lone surrogate \\u%04x", r1)
	}
	r2, err := d.hex4(d.i + 2)
	if err != nil {
		return 0, err
	}
	r = utf16.DecodeRune(r1, r2)
	if r == utf8.RuneError {
		return 0, d.errf(nil, "lone surrogate \\u%04x", r1)
	}
	d.i += 6
	return r, nil
}

func (d *decoder) hex4(at int) (rune, error) {
	if at+4 > len(d.b) {
		return 0, &SyntaxError{Offset: at, Msg: "short \\u escape"}
	}
	n, err := strconv.ParseUint(string(d.b[at:at+4]), 16, 16)
	if err != nil {
		return 0, &SyntaxError{Offset: at, Msg: fmt.Sprintf("bad \\u escape %q", d.b[at:at+4])}
	}
	return rune(n), nil
}

// Append appends the canonical encoding of v (a value as returned by Decode,
// or a map[string]any) to dst. It does not validate: use Marshal for values
// that were not produced by Decode.
func Append(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		if x {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	case string:
		return AppendString(dst, x)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = Append(dst, e)
		}
		return append(dst, ']')
	case Object:
		ms := x
		if !slices.IsSortedFunc(ms, compareMembers) { // decoded canonical text is already sorted
			ms = slices.Clone(x)
			slices.SortFunc(ms, compareMembers)
		}
		dst = append(dst, '{')
		for i, m := range ms {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, m.Key)
			dst = append(dst, ':')
			dst = Append(dst, m.Value)
		}
		return append(dst, '}')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, CompareKeys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, k)
			dst = append(dst, ':')
			dst = Append(dst, x[k])
		}
		return append(dst, '}')
	default:
		panic(fmt.Sprintf("cjson: cannot encode %T", v))
	}
}

func compareMembers(a, b Member) int { return CompareKeys(a.Key, b.Key) }

// CompareKeys orders object keys as RFC 8785 does: by their UTF-16 code
// units. It returns -1, 0 or +1.
func CompareKeys(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := utf16Units(ra), utf16Units(rb)
			for i := 0; i < len(ua) && i < len(ub); i++ {
				if ua[i] != ub[i] {
					if ua[i] < ub[i] {
						return -1
					}
					return 1
				}
			}
			return len(ua) - len(ub) // unreachable for distinct runes, kept for safety
		}
		a, b = a[na:], b[nb:]
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	default:
		return 1
	}
}

func utf16Units(r rune) []uint16 {
	if r >= 0x10000 {
		r1, r2 := utf16.EncodeRune(r)
		return []uint16{uint16(r1), uint16(r2)}
	}
	return []uint16{uint16(r)}
}

// AppendString appends s as an RFC 8785 string: quotes, backslashes and
// control characters escaped (\b \f \n \r \t, other controls as lowercase
// \u00xx), everything else literal UTF-8.
func AppendString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
