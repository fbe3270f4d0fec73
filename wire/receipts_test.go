package wire

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestReceiptsRequestRoundTrip(t *testing.T) {
	q := ReceiptsRequest{V: ReceiptBatchVersion, WaitMillis: 5000, Events: []StatusQuery{{ID: "g:1", Seq: 7}, {ID: "g:2"}}}
	b, err := MarshalReceiptsRequest(q)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"events":[{"id":"g:1","seq":7},{"id":"g:2"}],"v":5,"wait_ms":5000}`; string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
	q2, err := ParseReceiptsRequest(b)
	if err != nil || !reflect.DeepEqual(q, q2) {
		t.Fatalf("round trip: %+v, %v", q2, err)
	}
	// A batched request is none of the older requests, and they are not it:
	// the ingest tells them apart by parsing.
	if _, err := ParseReceiptRequest(b); err == nil {
		t.Error("a batched request parses as a receipt request")
	}
	if _, err := ParseStatusRequest(b); err == nil {
		t.Error("a batched request parses as a status request")
	}
	if _, err := ParseReceiptsRequest([]byte(`{"events":[{"id":"g:1"}],"v":3}`)); err == nil {
		t.Error("a status request parses as a batched request")
	}
}

func TestReceiptsRequestRefused(t *testing.T) {
	many := make([]StatusQuery, MaxReceiptBatch+1)
	for i := range many {
		many[i].ID = "e"
	}
	for _, tc := range []struct {
		name string
		q    ReceiptsRequest
	}{
		{"version 3", ReceiptsRequest{V: ReceiptStateVersion, Events: []StatusQuery{{ID: "a"}}}},
		{"no events", ReceiptsRequest{V: ReceiptBatchVersion}},
		{"too many", ReceiptsRequest{V: ReceiptBatchVersion, Events: many}},
		{"bad id", ReceiptsRequest{V: ReceiptBatchVersion, Events: []StatusQuery{{ID: "a"}, {ID: "-x"}}}},
		{"negative wait", ReceiptsRequest{V: ReceiptBatchVersion, WaitMillis: -1, Events: []StatusQuery{{ID: "a"}}}},
	} {
		if _, err := MarshalReceiptsRequest(tc.q); !errors.Is(err, ErrMessage) {
			t.Errorf("%s: %v, want ErrMessage", tc.name, err)
		}
	}
}

func TestReceiptsReplyRoundTrip(t *testing.T) {
	i1, i2, d, l := uint64(1), uint64(9), uint64(3), uint64(4)
	var h Hash
	h[0] = 1
	p := ReceiptsReply{Status: StatusOK, V: ReceiptBatchVersion, Checkpoint: "note\n", Decided: &d, Last: &l, Events: []EventReceipt{
		{ID: "g:1", Status: StatusOK, Index: &i1, Proof: []Hash{h}},
		{ID: "g:2", Status: StatusPending, Index: &i2},
		{ID: "g:3", Status: StatusPending},
		{ID: "g:4", Status: EventUnknown},
		{ID: "g:5", Status: StatusRejected, Code: "bad-signature", Reason: "no"},
	}}
	b, err := MarshalReceiptsReply(p)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := ParseReceiptsReply(b)
	if err != nil || !reflect.DeepEqual(p, p2) {
		t.Fatalf("round trip: %s -> %+v, %v", b, p2, err)
	}
	if st, ok := p2.State(); !ok || st != (StreamState{Decided: 3, Last: 4}) {
		t.Errorf("State() = %v, %v", st, ok)
	}
	e := ReceiptsReply{Status: StatusError, V: ReceiptBatchVersion, Code: "busy", Reason: "later"}
	if b, err = MarshalReceiptsReply(e); err != nil {
		t.Fatal(err)
	}
	if e2, err := ParseReceiptsReply(b); err != nil || !reflect.DeepEqual(e, e2) {
		t.Fatalf("error round trip: %s -> %+v, %v", b, e2, err)
	}
}

func TestReceiptsReplyRefused(t *testing.T) {
	hash := `"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="`
	for _, tc := range []struct{ name, json string }{
		{"version 3", `{"checkpoint":"c","events":[{"id":"a","index":1,"status":"ok"}],"status":"ok","v":3}`},
		{"ok without checkpoint", `{"events":[{"id":"a","index":1,"status":"ok"}],"status":"ok","v":5}`},
		{"checkpoint without ok", `{"checkpoint":"c","events":[{"id":"a","index":1,"status":"pending"}],"status":"ok","v":5}`},
		{"ok without index", `{"checkpoint":"c","events":[{"id":"a","status":"ok"}],"status":"ok","v":5}`},
		{"proof of pending", `{"events":[{"id":"a","index":1,"proof":[` + hash + `],"status":"pending"}],"status":"ok","v":5}`},
		{"empty proof", `{"checkpoint":"c","events":[{"id":"a","index":1,"proof":[],"status":"ok"}],"status":"ok","v":5}`},
		{"bad hash", `{"checkpoint":"c","events":[{"id":"a","index":1,"proof":["AA=="],"status":"ok"}],"status":"ok","v":5}`},
		{"unknown with index", `{"events":[{"id":"a","index":1,"status":"unknown"}],"status":"ok","v":5}`},
		{"rejected with index", `{"events":[{"code":"x","id":"a","index":1,"status":"rejected"}],"status":"ok","v":5}`},
		{"rejected without code", `{"events":[{"id":"a","status":"rejected"}],"status":"ok","v":5}`},
		{"state without unknown", `{"decided":1,"events":[{"id":"a","status":"pending"}],"last":2,"status":"ok","v":5}`},
		{"decided alone", `{"decided":1,"events":[{"id":"a","status":"unknown"}],"status":"ok","v":5}`},
		{"no events", `{"events":[],"status":"ok","v":5}`},
		{"status logged", `{"events":[{"id":"a","index":1,"status":"logged"}],"status":"ok","v":5}`},
		{"error with events", `{"code":"busy","events":[{"id":"a","status":"pending"}],"status":"error","v":5}`},
		{"error without code", `{"status":"error","v":5}`},
		{"pending reply", `{"events":[{"id":"a","status":"pending"}],"status":"pending","v":5}`},
		{"unknown member", `{"events":[{"id":"a","status":"pending"}],"status":"ok","v":5,"x":1}`},
		{"bad id", `{"events":[{"id":"","status":"pending"}],"status":"ok","v":5}`},
		{"long reason", `{"events":[{"code":"x","id":"a","reason":"` + strings.Repeat("r", MaxStatusReason+1) + `","status":"rejected"}],"status":"ok","v":5}`},
	} {
		if _, err := ParseReceiptsReply([]byte(tc.json)); !errors.Is(err, ErrMessage) {
			t.Errorf("%s: %v, want ErrMessage", tc.name, err)
		}
	}
}

// FuzzReceipts checks that the batched receipt parsers never panic and that
// whatever they accept marshals back to an equal value that parses again.
func FuzzReceipts(f *testing.F) {
	f.Add([]byte(`{"events":[{"id":"g:1","seq":7},{"id":"g:2"}],"v":5,"wait_ms":5000}`))
	f.Add([]byte(`{"checkpoint":"c","decided":3,"events":[{"id":"g:1","index":1,"proof":["AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="],"status":"ok"},{"id":"g:2","index":9,"status":"pending"},{"id":"g:4","status":"unknown"},{"code":"x","id":"g:5","reason":"no","status":"rejected"}],"last":4,"status":"ok","v":5}`))
	f.Add([]byte(`{"code":"busy","reason":"later","status":"error","v":5}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if q, err := ParseReceiptsRequest(b); err == nil {
			m, err := MarshalReceiptsRequest(q)
			if err != nil {
				t.Fatalf("marshal parsed batched request: %v", err)
			}
			if q2, err := ParseReceiptsRequest(m); err != nil || !reflect.DeepEqual(q, q2) {
				t.Fatalf("batched request round trip: %+v -> %s -> %+v, %v", q, m, q2, err)
			}
		}
		if p, err := ParseReceiptsReply(b); err == nil {
			m, err := MarshalReceiptsReply(p)
			if err != nil {
				t.Fatalf("marshal parsed batched reply: %v", err)
			}
			if p2, err := ParseReceiptsReply(m); err != nil || !reflect.DeepEqual(p, p2) {
				t.Fatalf("batched reply round trip: %+v -> %s -> %+v, %v", p, m, p2, err)
			}
		}
	})
}
