package wire

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func u64(v uint64) *uint64 { return &v }

var hash = strings.Repeat("ab", 32)

// b64 is a hash in the reply's form: standard base64 of 32 bytes.
var b64 = "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s="

func TestMessagesRoundTrip(t *testing.T) {
	rejections := []Rejection{
		{Code: "bad-signature", ID: "g:3", MsgID: "g:3", Reason: "signature <does not> verify", Seq: 12, SHA256: hash},
		{Code: "bad-batch", MsgID: "batch/x", Part: 7, Reason: "", Seq: 1, SHA256: hash},
	}
	for _, r := range rejections {
		b, err := MarshalRejection(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseRejection(b)
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Errorf("rejection round trip: %+v, %v; want %+v (%s)", got, err, r, b)
		}
		if strings.Contains(string(b), `\u003c`) {
			t.Errorf("HTML-escaped: %s", b)
		}
	}
	for _, q := range []ReceiptRequest{{ID: "g:0"}, {ID: "x", WaitMillis: 5000}, {ID: "x", V: ReceiptProofVersion, Seq: 7}} {
		b, err := MarshalReceiptRequest(q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseReceiptRequest(b)
		if err != nil || got != q {
			t.Errorf("request round trip: %+v, %v; want %+v", got, err, q)
		}
	}
	for _, p := range []ReceiptReply{
		{ID: "g:0", Status: StatusOK, Index: u64(0), Checkpoint: "origin\n1\nhash\n\n— sig\n"},
		{ID: "g:0", Status: StatusOK, Index: u64(0), Checkpoint: "origin\n1\nhash\n\n— sig\n", V: ReceiptProofVersion},
		{ID: "g:5", Status: StatusOK, Index: u64(5), Checkpoint: "origin\n9\nhash\n\n— sig\n", V: ReceiptProofVersion, Proof: []Hash{{0xab}, {1, 2, 3}, {31: 0xff}}},
		{ID: "g:0", Status: StatusPending, V: ReceiptProofVersion},
		{ID: "g:0", Status: StatusPending},
		{ID: "g:0", Status: StatusPending, Index: u64(9)},
		{ID: "g:0", Status: StatusRejected, Code: "out-of-order", Reason: "seq 5, want 4"},
		{Status: StatusError, Code: "bad-request", Reason: "no id"},
	} {
		b, err := MarshalReceiptReply(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseReceiptReply(b)
		if err != nil || !reflect.DeepEqual(got, p) {
			t.Errorf("reply round trip: %+v, %v; want %+v", got, err, p)
		}
	}
}

func TestMessagesInvalid(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parse func([]byte) error
		in    string
	}{
		{"rejection unknown member", parseRej, `{"code":"x","reason":"","seq":1,"sha256":"` + hash + `","extra":1}`},
		{"rejection bad code", parseRej, `{"code":"X","reason":"","seq":1,"sha256":"` + hash + `"}`},
		{"rejection bad hash", parseRej, `{"code":"x","reason":"","seq":1,"sha256":"AB"}`},
		{"rejection trailing", parseRej, `{"code":"x","reason":"","seq":1,"sha256":"` + hash + `"} {}`},
		{"rejection negative part", parseRej, `{"code":"x","part":-1,"reason":"","seq":1,"sha256":"` + hash + `"}`},
		{"request bad id", parseReq, `{"id":"a/b"}`},
		{"request negative wait", parseReq, `{"id":"a","wait_ms":-1}`},
		{"request not object", parseReq, `[]`},
		{"reply unknown status", parseRep, `{"id":"a","status":"maybe"}`},
		{"reply ok without checkpoint", parseRep, `{"id":"a","index":1,"status":"ok"}`},
		{"reply ok without index", parseRep, `{"checkpoint":"c","id":"a","status":"ok"}`},
		{"reply rejected with index", parseRep, `{"code":"x","id":"a","index":1,"status":"rejected"}`},
		{"reply error without code", parseRep, `{"id":"a","status":"error"}`},
		{"request version 1 written out", parseReq, `{"id":"a","v":1}`},
		{"request version 3", parseReq, `{"id":"a","v":3}`},
		{"reply version 3", parseRep, `{"id":"a","status":"pending","v":3}`},
		{"reply proof without version", parseRep, `{"checkpoint":"c","id":"a","index":1,"proof":["` + b64 + `"],"status":"ok"}`},
		{"reply proof when pending", parseRep, `{"id":"a","index":1,"proof":["` + b64 + `"],"status":"pending","v":2}`},
		{"reply empty proof", parseRep, `{"checkpoint":"c","id":"a","index":1,"proof":[],"status":"ok","v":2}`},
		{"reply proof null", parseRep, `{"checkpoint":"c","id":"a","index":1,"proof":[null],"status":"ok","v":2}`},
		{"reply hash not base64", parseRep, `{"checkpoint":"c","id":"a","index":1,"proof":["` + hash + `"],"status":"ok","v":2}`},
		{"reply hash short", parseRep, `{"checkpoint":"c","id":"a","index":1,"proof":["q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urqw=="],"status":"ok","v":2}`},
		{"reply hash stray bits", parseRep, `{"checkpoint":"c","id":"a","index":1,"proof":["q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6t="],"status":"ok","v":2}`},
		{"reply hash unpadded", parseRep, `{"checkpoint":"c","id":"a","index":1,"proof":["q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s"],"status":"ok","v":2}`},
		{"reply hash url alphabet", parseRep, `{"checkpoint":"c","id":"a","index":1,"proof":["q6urq6urq6urq6urq6urq6urq6urq6urq6urq6ur_6s="],"status":"ok","v":2}`},
		{"reply hash long", parseRep, `{"checkpoint":"c","id":"a","index":1,"proof":["q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s="],"status":"ok","v":2}`},
		{"reply proof of 65 hashes", parseRep, `{"checkpoint":"c","id":"a","index":1,"proof":["` + strings.Repeat(b64+`","`, 64) + b64 + `"],"status":"ok","v":2}`},
	} {
		if err := tc.parse([]byte(tc.in)); !errors.Is(err, ErrMessage) {
			t.Errorf("%s: %v, want ErrMessage", tc.name, err)
		}
	}
}

func parseRej(b []byte) error { _, err := ParseRejection(b); return err }
func parseReq(b []byte) error { _, err := ParseReceiptRequest(b); return err }
func parseRep(b []byte) error { _, err := ParseReceiptReply(b); return err }

// FuzzMessages checks that the parsers never panic and that whatever they
// accept marshals back to an equal value.
func FuzzMessages(f *testing.F) {
	f.Add([]byte(`{"code":"x","reason":"r","seq":1,"sha256":"` + hash + `"}`))
	f.Add([]byte(`{"id":"g:1","wait_ms":10}`))
	f.Add([]byte(`{"checkpoint":"c","id":"a","index":1,"status":"ok"}`))
	f.Add([]byte(`{"id":"g:1","v":2,"wait_ms":10}`))
	f.Add([]byte(`{"checkpoint":"c","id":"a","index":1,"proof":["` + b64 + `","AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="],"status":"ok","v":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := ParseRejection(b); err == nil {
			m, err := MarshalRejection(r)
			if err != nil {
				t.Fatalf("marshal parsed rejection: %v", err)
			}
			if r2, err := ParseRejection(m); err != nil || !reflect.DeepEqual(r, r2) {
				t.Fatalf("rejection round trip: %+v -> %s -> %+v, %v", r, m, r2, err)
			}
		}
		if q, err := ParseReceiptRequest(b); err == nil {
			m, err := MarshalReceiptRequest(q)
			if err != nil {
				t.Fatalf("marshal parsed request: %v", err)
			}
			if q2, err := ParseReceiptRequest(m); err != nil || q != q2 {
				t.Fatalf("request round trip: %+v -> %s -> %+v, %v", q, m, q2, err)
			}
		}
		if p, err := ParseReceiptReply(b); err == nil {
			m, err := MarshalReceiptReply(p)
			if err != nil {
				t.Fatalf("marshal parsed reply: %v", err)
			}
			if p2, err := ParseReceiptReply(m); err != nil || !reflect.DeepEqual(p, p2) {
				t.Fatalf("reply round trip: %+v -> %s -> %+v, %v", p, m, p2, err)
			}
		}
	})
}
