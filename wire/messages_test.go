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
	for _, q := range []ReceiptRequest{{ID: "g:0"}, {ID: "x", WaitMillis: 5000}, {ID: "x", V: ReceiptProofVersion, Seq: 7}, {ID: "x", V: ReceiptStateVersion, Seq: 7, WaitMillis: 1}} {
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
		{ID: "g:0", Status: StatusPending, V: ReceiptStateVersion, Decided: u64(5), Last: u64(0)},
		{ID: "g:0", Status: StatusPending, V: ReceiptStateVersion},
		{ID: "g:0", Status: StatusPending, V: ReceiptStateVersion, Index: u64(3)},
		{ID: "g:5", Status: StatusOK, Index: u64(5), Checkpoint: "origin\n9\nhash\n\n— sig\n", V: ReceiptStateVersion, Proof: []Hash{{0xab}}},
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

func TestStatusRoundTrip(t *testing.T) {
	for _, q := range []StatusRequest{
		{Events: []StatusQuery{{ID: "g:0"}}, V: ReceiptStateVersion},
		{Events: []StatusQuery{{ID: "g:0", Seq: 9}, {ID: "g:1", Seq: 10}}, V: ReceiptStateVersion},
	} {
		b, err := MarshalStatusRequest(q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseStatusRequest(b)
		if err != nil || !reflect.DeepEqual(got, q) {
			t.Errorf("status request round trip: %+v, %v; want %+v (%s)", got, err, q, b)
		}
		if _, err := ParseReceiptRequest(b); err == nil {
			t.Errorf("%s parses as a receipt request", b)
		}
	}
	for _, p := range []StatusReply{
		{Status: StatusOK, V: ReceiptStateVersion, Decided: u64(7), Last: u64(9), Checkpoint: "origin\n9\nhash\n\n— sig\n", Events: []EventStatus{
			{ID: "g:0", Status: EventLogged, Index: u64(3)},
			{ID: "g:1", Status: EventAppended, Index: u64(12)},
			{ID: "g:2", Status: EventUnknown},
			{ID: "g:3", Status: EventRejected, Code: "out-of-order", Reason: "seq 3, want 2"},
		}},
		{Status: StatusOK, V: ReceiptStateVersion, Events: []EventStatus{{ID: "g:2", Status: EventUnknown}}},
		{Status: StatusError, V: ReceiptStateVersion, Code: "busy", Reason: "limit"},
	} {
		b, err := MarshalStatusReply(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseStatusReply(b)
		if err != nil || !reflect.DeepEqual(got, p) {
			t.Errorf("status reply round trip: %+v, %v; want %+v (%s)", got, err, p, b)
		}
	}
	// What a ledger of version 2 answers a status request with: a receipt
	// reply, which is not a status reply.
	old := []byte(`{"code":"bad-request","id":"","reason":"malformed zarlog wire message: json: unknown field \"events\"","status":"error"}`)
	if _, err := ParseStatusReply(old); err == nil {
		t.Errorf("an old ledger's bad-request parses as a status reply")
	}
	if _, err := ParseReceiptReply(old); err != nil {
		t.Errorf("an old ledger's bad-request: %v", err)
	}
}

// TestMessageStatusRoundTrip: the message status request and reply
// (MessageStatusVersion) round trip, are not taken for the per-event ones,
// and a reply that breaks its rules is refused.
func TestMessageStatusRoundTrip(t *testing.T) {
	var sum Hash
	sum[0], sum[31] = 1, 2
	q := MessageStatusRequest{V: MessageStatusVersion, Messages: []MessageQuery{{Seq: 3, SHA256: sum}, {Seq: 9}}}
	b, err := MarshalMessageStatusRequest(q)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ParseMessageStatusRequest(b); err != nil || !reflect.DeepEqual(got, q) {
		t.Errorf("message status request round trip: %+v, %v; want %+v (%s)", got, err, q, b)
	}
	if _, err := ParseStatusRequest(b); err == nil {
		t.Errorf("%s parses as a status request", b)
	}
	if _, err := ParseReceiptRequest(b); err == nil {
		t.Errorf("%s parses as a receipt request", b)
	}
	for _, p := range []MessageStatusReply{
		{Status: StatusOK, V: MessageStatusVersion, Decided: u64(7), Last: u64(9), Checkpoint: "origin\n9\nhash\n\n— sig\n", Messages: []MessageStatus{
			{Seq: 3, Status: MessageLogged, Index: u64(3), Events: 200},
			{Seq: 4, Status: MessageAppended, Index: u64(12), Events: 1},
			{Seq: 5, Status: MessageMixed},
			{Seq: 6, Status: MessageUnknown},
		}},
		{Status: StatusError, V: MessageStatusVersion, Code: "busy", Reason: "limit"},
	} {
		b, err := MarshalMessageStatusReply(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseMessageStatusReply(b)
		if err != nil || !reflect.DeepEqual(got, p) {
			t.Errorf("message status reply round trip: %+v, %v; want %+v (%s)", got, err, p, b)
		}
		if _, err := ParseStatusReply(b); err == nil {
			t.Errorf("%s parses as a status reply", b)
		}
	}
	for _, bad := range []string{
		`{"messages":[],"v":4}`,
		`{"messages":[{"seq":0,"sha256":"` + b64 + `"}],"v":4}`,
		`{"messages":[{"seq":1,"sha256":"` + b64 + `"}],"v":3}`,
		`{"messages":[{"seq":1,"sha256":"abc"}],"v":4}`,
	} {
		if _, err := ParseMessageStatusRequest([]byte(bad)); !errors.Is(err, ErrMessage) {
			t.Errorf("request %s: %v, want ErrMessage", bad, err)
		}
	}
	for _, bad := range []string{
		`{"messages":[{"events":2,"index":1,"seq":3,"status":"logged"}],"status":"ok","v":4}`,           // logged without a checkpoint
		`{"checkpoint":"c","messages":[{"index":1,"seq":3,"status":"appended"}],"status":"ok","v":4}`,   // no events
		`{"checkpoint":"c","messages":[{"events":2,"seq":3,"status":"appended"}],"status":"ok","v":4}`,  // no index
		`{"messages":[{"events":2,"seq":3,"status":"mixed"}],"status":"ok","v":4}`,                      // mixed with events
		`{"messages":[{"seq":0,"status":"unknown"}],"status":"ok","v":4}`,                               // sequence 0
		`{"messages":[{"seq":3,"status":"lost"}],"status":"ok","v":4}`,                                  // unknown status
		`{"decided":3,"messages":[{"seq":3,"status":"unknown"}],"status":"ok","v":4}`,                   // decided without last
		`{"code":"busy","messages":[{"seq":3,"status":"unknown"}],"reason":"r","status":"error","v":4}`, // error with messages
		`{"messages":[{"seq":3,"status":"unknown"}],"status":"ok","v":3}`,                               // version
	} {
		if _, err := ParseMessageStatusReply([]byte(bad)); !errors.Is(err, ErrMessage) {
			t.Errorf("reply %s: %v, want ErrMessage", bad, err)
		}
	}
}

// TestStreamStateLost: the resend rule, at each side of its bounds.
func TestStreamStateLost(t *testing.T) {
	for _, tc := range []struct {
		st   StreamState
		seq  uint64
		lost bool
	}{
		{StreamState{Decided: 10, Last: 20}, 9, true},   // decided past it, no record
		{StreamState{Decided: 10, Last: 20}, 10, false}, // the next to decide
		{StreamState{Decided: 10, Last: 20}, 15, false}, // in the stream, not read yet
		{StreamState{Decided: 21, Last: 20}, 25, true},  // the stream ends below it, all read
		{StreamState{Decided: 20, Last: 20}, 25, false}, // the stream ends below it, its last not read
		{StreamState{Decided: 1, Last: 0}, 500, true},   // a new, empty stream
		{StreamState{Decided: 0, Last: 0}, 1, false},    // nothing read yet
		{StreamState{Decided: 31, Last: 30}, 30, true},
	} {
		if got := tc.st.Lost(tc.seq); got != tc.lost {
			t.Errorf("%+v.Lost(%d) = %v, want %v", tc.st, tc.seq, got, tc.lost)
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
		{"request version 4", parseReq, `{"id":"a","v":4}`},
		{"reply version 4", parseRep, `{"id":"a","status":"pending","v":4}`},
		{"reply decided without last", parseRep, `{"decided":3,"id":"a","status":"pending","v":3}`},
		{"reply last without decided", parseRep, `{"id":"a","last":3,"status":"pending","v":3}`},
		{"reply state in version 2", parseRep, `{"decided":3,"id":"a","last":4,"status":"pending","v":2}`},
		{"reply state with index", parseRep, `{"decided":3,"id":"a","index":1,"last":4,"status":"pending","v":3}`},
		{"reply state when ok", parseRep, `{"checkpoint":"c","decided":3,"id":"a","index":1,"last":4,"status":"ok","v":3}`},
		{"reply state when rejected", parseRep, `{"code":"x","decided":3,"id":"a","last":4,"status":"rejected","v":3}`},
		{"status request version 2", parseStatusReq, `{"events":[{"id":"a"}],"v":2}`},
		{"status request no version", parseStatusReq, `{"events":[{"id":"a"}]}`},
		{"status request no events", parseStatusReq, `{"events":[],"v":3}`},
		{"status request null events", parseStatusReq, `{"events":null,"v":3}`},
		{"status request bad id", parseStatusReq, `{"events":[{"id":"a/b"}],"v":3}`},
		{"status request unknown member", parseStatusReq, `{"events":[{"id":"a","wait_ms":1}],"v":3}`},
		{"status request 257 events", parseStatusReq, `{"events":[` + strings.Repeat(`{"id":"a"},`, 256) + `{"id":"a"}],"v":3}`},
		{"status request is a receipt request", parseStatusReq, `{"id":"a","v":3}`},
		{"receipt request is a status request", parseReq, `{"events":[{"id":"a"}],"v":3}`},
		{"status reply no events", parseStatusRep, `{"decided":1,"last":1,"status":"ok","v":3}`},
		{"status reply unknown status", parseStatusRep, `{"events":[{"id":"a","status":"unknown"}],"status":"pending","v":3}`},
		{"status reply version 2", parseStatusRep, `{"events":[{"id":"a","status":"unknown"}],"status":"ok","v":2}`},
		{"status reply decided alone", parseStatusRep, `{"decided":1,"events":[{"id":"a","status":"unknown"}],"status":"ok","v":3}`},
		{"status reply logged without checkpoint", parseStatusRep, `{"events":[{"id":"a","index":1,"status":"logged"}],"status":"ok","v":3}`},
		{"status reply logged without index", parseStatusRep, `{"checkpoint":"c","events":[{"id":"a","status":"logged"}],"status":"ok","v":3}`},
		{"status reply unknown with index", parseStatusRep, `{"events":[{"id":"a","index":1,"status":"unknown"}],"status":"ok","v":3}`},
		{"status reply rejected without code", parseStatusRep, `{"events":[{"id":"a","status":"rejected"}],"status":"ok","v":3}`},
		{"status reply long reason", parseStatusRep, `{"events":[{"code":"x","id":"a","reason":"` + strings.Repeat("r", 257) + `","status":"rejected"}],"status":"ok","v":3}`},
		{"status reply event status", parseStatusRep, `{"events":[{"id":"a","status":"pending"}],"status":"ok","v":3}`},
		{"status reply error with events", parseStatusRep, `{"code":"busy","events":[{"id":"a","status":"unknown"}],"status":"error","v":3}`},
		{"status reply error without code", parseStatusRep, `{"status":"error","v":3}`},
		{"status reply ok with code", parseStatusRep, `{"code":"busy","events":[{"id":"a","status":"unknown"}],"status":"ok","v":3}`},
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
func parseStatusReq(b []byte) error {
	_, err := ParseStatusRequest(b)
	return err
}
func parseStatusRep(b []byte) error { _, err := ParseStatusReply(b); return err }

// FuzzMessages checks that the parsers never panic and that whatever they
// accept marshals back to an equal value.
func FuzzMessages(f *testing.F) {
	f.Add([]byte(`{"code":"x","reason":"r","seq":1,"sha256":"` + hash + `"}`))
	f.Add([]byte(`{"id":"g:1","wait_ms":10}`))
	f.Add([]byte(`{"checkpoint":"c","id":"a","index":1,"status":"ok"}`))
	f.Add([]byte(`{"id":"g:1","v":2,"wait_ms":10}`))
	f.Add([]byte(`{"checkpoint":"c","id":"a","index":1,"proof":["` + b64 + `","AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="],"status":"ok","v":2}`))
	f.Add([]byte(`{"decided":3,"id":"a","last":4,"status":"pending","v":3}`))
	f.Add([]byte(`{"events":[{"id":"g:1","seq":3},{"id":"g:2"}],"v":3}`))
	f.Add([]byte(`{"checkpoint":"c","decided":1,"events":[{"id":"a","index":1,"status":"logged"},{"code":"x","id":"b","reason":"r","status":"rejected"}],"last":2,"status":"ok","v":3}`))
	f.Add([]byte(`{"messages":[{"seq":3,"sha256":"` + b64 + `"}],"v":4}`))
	f.Add([]byte(`{"checkpoint":"c","decided":9,"last":12,"messages":[{"events":200,"index":1,"seq":3,"status":"logged"},{"seq":4,"status":"mixed"},{"seq":5,"status":"unknown"}],"status":"ok","v":4}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if q, err := ParseStatusRequest(b); err == nil {
			m, err := MarshalStatusRequest(q)
			if err != nil {
				t.Fatalf("marshal parsed status request: %v", err)
			}
			if q2, err := ParseStatusRequest(m); err != nil || !reflect.DeepEqual(q, q2) {
				t.Fatalf("status request round trip: %+v -> %s -> %+v, %v", q, m, q2, err)
			}
		}
		if q, err := ParseMessageStatusRequest(b); err == nil {
			m, err := MarshalMessageStatusRequest(q)
			if err != nil {
				t.Fatalf("marshal parsed message status request: %v", err)
			}
			if q2, err := ParseMessageStatusRequest(m); err != nil || !reflect.DeepEqual(q, q2) {
				t.Fatalf("message status request round trip: %+v -> %s -> %+v, %v", q, m, q2, err)
			}
		}
		if p, err := ParseMessageStatusReply(b); err == nil {
			m, err := MarshalMessageStatusReply(p)
			if err != nil {
				t.Fatalf("marshal parsed message status reply: %v", err)
			}
			if p2, err := ParseMessageStatusReply(m); err != nil || !reflect.DeepEqual(p, p2) {
				t.Fatalf("message status reply round trip: %+v -> %s -> %+v, %v", p, m, p2, err)
			}
		}
		if p, err := ParseStatusReply(b); err == nil {
			m, err := MarshalStatusReply(p)
			if err != nil {
				t.Fatalf("marshal parsed status reply: %v", err)
			}
			if p2, err := ParseStatusReply(m); err != nil || !reflect.DeepEqual(p, p2) {
				t.Fatalf("status reply round trip: %+v -> %s -> %+v, %v", p, m, p2, err)
			}
		}
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
