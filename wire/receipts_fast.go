package wire

// This file is a fast path for decoding a batched receipt reply
// (ParseReceiptsReply) and request (ParseReceiptsRequest): the SDK decodes
// a reply for every receipt request it has in flight, the ingest every
// request, and encoding/json's reflection was about 1 µs of CPU an event
// of the emitters' at a human pace (50,000 games), and 0.8 of the log's.
// It reads only the canonical form MarshalReceiptsReply (or
// MarshalReceiptsRequest) writes (the members in their order,
// no whitespace, no \u escape, no null, no empty array, numbers without
// sign, fraction, exponent or leading zero) and gives up on anything else,
// which the strict decoder (unmarshal) then reads: whatever the fast path
// accepts, the strict decoder reads to an equal value
// (FuzzReceiptsReplyFast), and both results go through the same check.

import (
	"bytes"
	"unicode/utf8"
)

// fastDecoder reads b from i on; every method returns false when the
// input is not in the canonical form it reads.
type fastDecoder struct {
	b []byte
	i int
}

// lit consumes s.
func (d *fastDecoder) lit(s string) bool {
	if len(d.b)-d.i < len(s) || string(d.b[d.i:d.i+len(s)]) != s {
		return false
	}
	d.i += len(s)
	return true
}

// peek reports whether s comes next, without consuming it.
func (d *fastDecoder) peek(s string) bool {
	return len(d.b)-d.i >= len(s) && string(d.b[d.i:d.i+len(s)]) == s
}

// str reads a JSON string: its bytes valid UTF-8, control bytes refused,
// the escapes \" \\ \/ \b \f \n \r \t read, \u not.
func (d *fastDecoder) str() (string, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return "", false
	}
	start := d.i + 1
	j, escaped, high := start, false, false
	for ; j < len(d.b); j++ {
		c := d.b[j]
		if c == '"' {
			break
		}
		switch {
		case c < 0x20:
			return "", false
		case c == '\\':
			escaped = true
			j++ // the escaped byte: never the closing quote
		case c >= utf8.RuneSelf:
			high = true
		}
	}
	if j >= len(d.b) {
		return "", false
	}
	raw := d.b[start:j]
	d.i = j + 1
	if high && !utf8.Valid(raw) {
		return "", false // encoding/json replaces invalid bytes with U+FFFD
	}
	if !escaped {
		return string(raw), true
	}
	out := make([]byte, 0, len(raw))
	for k := 0; k < len(raw); k++ {
		c := raw[k]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		k++
		if k >= len(raw) {
			return "", false
		}
		switch raw[k] {
		case '"', '\\', '/':
			out = append(out, raw[k])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default:
			return "", false // \u and anything else: the strict decoder's
		}
	}
	return string(out), true
}

// uint reads a number of 1 to 18 digits without a leading zero: below
// 2^63, so that int and uint64 hold it alike.
func (d *fastDecoder) uint() (uint64, bool) {
	j := d.i
	var n uint64
	for j < len(d.b) && d.b[j] >= '0' && d.b[j] <= '9' && j-d.i < 19 {
		n = n*10 + uint64(d.b[j]-'0')
		j++
	}
	digits := j - d.i
	if digits == 0 || digits > 18 || digits > 1 && d.b[d.i] == '0' {
		return 0, false
	}
	if j < len(d.b) && (d.b[j] == '.' || d.b[j] == 'e' || d.b[j] == 'E' || d.b[j] >= '0' && d.b[j] <= '9') {
		return 0, false
	}
	d.i = j
	return n, true
}

// member reads `,"name":` (first: without the comma) if it comes next,
// and reports whether it did.
func (d *fastDecoder) member(name string, first *bool) bool {
	j := d.i
	if !*first {
		if j >= len(d.b) || d.b[j] != ',' {
			return false
		}
		j++
	}
	n := len(name)
	if len(d.b)-j < n+3 || d.b[j] != '"' || string(d.b[j+1:j+1+n]) != name || d.b[j+1+n] != '"' || d.b[j+2+n] != ':' {
		return false
	}
	d.i = j + n + 3
	*first = false
	return true
}

// fastReceiptsReply decodes b if it is in the canonical form; ok false
// means the strict decoder must read it (whether or not it is valid).
func fastReceiptsReply(b []byte) (p ReceiptsReply, ok bool) {
	d := &fastDecoder{b: b}
	if !d.lit("{") {
		return p, false
	}
	first := true
	if d.member("checkpoint", &first) {
		if p.Checkpoint, ok = d.str(); !ok {
			return p, false
		}
	}
	if d.member("code", &first) {
		if p.Code, ok = d.str(); !ok {
			return p, false
		}
	}
	if d.member("decided", &first) {
		n, ok := d.uint()
		if !ok {
			return p, false
		}
		p.Decided = &n
	}
	if d.member("events", &first) {
		if p.Events, ok = d.events(); !ok {
			return p, false
		}
	}
	if d.member("last", &first) {
		n, ok := d.uint()
		if !ok {
			return p, false
		}
		p.Last = &n
	}
	if d.member("reason", &first) {
		if p.Reason, ok = d.str(); !ok {
			return p, false
		}
	}
	if !d.member("status", &first) {
		return p, false
	}
	if p.Status, ok = d.str(); !ok {
		return p, false
	}
	if !d.member("v", &first) {
		return p, false
	}
	v, ok := d.uint()
	if !ok {
		return p, false
	}
	p.V = int(v)
	if !d.lit("}") || d.i != len(d.b) {
		return p, false
	}
	return p, true
}

// events reads a non-empty array of EventReceipt.
func (d *fastDecoder) events() ([]EventReceipt, bool) {
	if !d.lit("[") || d.peek("]") {
		return nil, false
	}
	var out []EventReceipt
	for {
		e, ok := d.event()
		if !ok {
			return nil, false
		}
		out = append(out, e)
		if d.lit("]") {
			return out, true
		}
		if !d.lit(",") {
			return nil, false
		}
	}
}

// event reads one EventReceipt.
func (d *fastDecoder) event() (e EventReceipt, ok bool) {
	if !d.lit("{") {
		return e, false
	}
	first := true
	if d.member("code", &first) {
		if e.Code, ok = d.str(); !ok {
			return e, false
		}
	}
	if !d.member("id", &first) {
		return e, false
	}
	if e.ID, ok = d.str(); !ok {
		return e, false
	}
	if d.member("index", &first) {
		n, ok := d.uint()
		if !ok {
			return e, false
		}
		e.Index = &n
	}
	if d.member("proof", &first) {
		if !d.lit("[") || d.peek("]") {
			return e, false
		}
		// As many hashes as the array has room for (each 46 bytes and a
		// comma; no ']' inside one): one allocation.
		if end := bytes.IndexByte(d.b[d.i:], ']'); end > 0 {
			e.Proof = make([]Hash, 0, (end+1)/47)
		}
		for {
			s, ok := d.hash()
			if !ok {
				return e, false
			}
			e.Proof = append(e.Proof, s)
			if d.lit("]") {
				break
			}
			if !d.lit(",") {
				return e, false
			}
		}
	}
	if d.member("reason", &first) {
		if e.Reason, ok = d.str(); !ok {
			return e, false
		}
	}
	if !d.member("status", &first) {
		return e, false
	}
	if e.Status, ok = d.str(); !ok {
		return e, false
	}
	if !d.lit("}") {
		return e, false
	}
	return e, true
}

// hash reads a Hash: a string of its 44 base64 characters, no escape.
func (d *fastDecoder) hash() (h Hash, ok bool) {
	const n = 44 // base64.StdEncoding.EncodedLen(32)
	if len(d.b)-d.i < n+2 || d.b[d.i] != '"' || d.b[d.i+n+1] != '"' {
		return h, false
	}
	if err := h.UnmarshalText(d.b[d.i+1 : d.i+n+1]); err != nil {
		return h, false
	}
	d.i += n + 2
	return h, true
}

// fastReceiptsRequest decodes b if it is in the canonical form; ok false
// means the strict decoder must read it (whether or not it is valid).
func fastReceiptsRequest(b []byte) (q ReceiptsRequest, ok bool) {
	d := &fastDecoder{b: b}
	first := true
	if !d.lit("{") || !d.member("events", &first) || !d.lit("[") || d.peek("]") {
		return q, false
	}
	for {
		var e StatusQuery
		inner := true
		if !d.lit("{") || !d.member("id", &inner) {
			return q, false
		}
		if e.ID, ok = d.str(); !ok {
			return q, false
		}
		if d.member("seq", &inner) {
			if e.Seq, ok = d.uint(); !ok {
				return q, false
			}
		}
		if !d.lit("}") {
			return q, false
		}
		q.Events = append(q.Events, e)
		if d.lit("]") {
			break
		}
		if !d.lit(",") {
			return q, false
		}
	}
	if !d.member("v", &first) {
		return q, false
	}
	v, ok := d.uint()
	if !ok {
		return q, false
	}
	q.V = int(v)
	if d.member("wait_ms", &first) {
		w, ok := d.uint()
		if !ok {
			return q, false
		}
		q.WaitMillis = int64(w)
	}
	if !d.lit("}") || d.i != len(d.b) {
		return q, false
	}
	return q, true
}
