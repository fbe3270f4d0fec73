package wire

import (
	"reflect"
	"strings"
	"testing"
)

// fastSeeds are replies in and out of the canonical form.
var fastSeeds = []string{
	`{"checkpoint":"zarlog.example/log\n42\nAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— zarlog.example/log abc+def/==\n","decided":3,"events":[{"id":"g:1","index":1,"proof":["AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","AgAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="],"status":"ok"},{"id":"g:2","index":9,"status":"pending"},{"id":"g:4","status":"unknown"},{"code":"x","id":"g:5","reason":"no \"quote\" \\ / \t","status":"rejected"}],"last":4,"status":"ok","v":5}`,
	`{"code":"busy","reason":"later","status":"error","v":5}`,
	`{"events":[{"id":"a","status":"pending"}],"status":"ok","v":5}`,
	`{"events":[{"id":"a","index":0,"status":"pending"}],"status":"ok","v":5}`,
	// Not canonical: the strict decoder's.
	`{"events":[{"id":"a","status":"pending"}], "status":"ok","v":5}`,
	`{"events":[{"id":"a","status":"pending"}],"status":"ok","v":5} `,
	`{"status":"ok","events":[{"id":"a","status":"pending"}],"v":5}`,
	`{"events":[{"id":"a","index":01,"status":"pending"}],"status":"ok","v":5}`,
	`{"events":[{"id":"a","index":1.0,"status":"pending"}],"status":"ok","v":5}`,
	`{"events":[{"id":"a","index":1e2,"status":"pending"}],"status":"ok","v":5}`,
	`{"events":[{"id":"\u0061","status":"pending"}],"status":"ok","v":5}`,
	`{"events":[{"ID":"a","status":"pending"}],"status":"ok","v":5}`,
	`{"events":[],"status":"ok","v":5}`,
	`{"events":null,"status":"ok","v":5}`,
	`{"events":[{"id":"a","status":"pending"}],"status":"ok","v":-5}`,
	`{"events":[{"code":"x","id":"a","reason":"` + "\xff" + `","status":"rejected"}],"status":"ok","v":5}`,
	`{"events":[{"id":"a","index":99999999999999999999,"status":"pending"}],"status":"ok","v":5}`,
}

// TestReceiptsReplyFast: what MarshalReceiptsReply writes is read by the
// fast path, to the value the strict decoder reads; a reply out of the
// canonical form is left to the strict decoder.
func TestReceiptsReplyFast(t *testing.T) {
	i1, i2, d, l := uint64(1), uint64(1<<40), uint64(3), uint64(4)
	var h, h2 Hash
	h[0], h2[31] = 1, 0xff
	for _, p := range []ReceiptsReply{
		{Status: StatusOK, V: ReceiptBatchVersion, Checkpoint: "log\n2\nAAAA\n\n— log x+y/z=\n", Decided: &d, Last: &l, Events: []EventReceipt{
			{ID: "g:1", Status: StatusOK, Index: &i1, Proof: []Hash{h, h2}},
			{ID: "g:2", Status: StatusPending, Index: &i2},
			{ID: "g:3", Status: StatusPending},
			{ID: "g:4", Status: EventUnknown},
			{ID: "g:5", Status: StatusRejected, Code: "bad-signature", Reason: "a \"reason\"\twith\\escapes <&> and ünïcode"},
		}},
		{Status: StatusError, V: ReceiptBatchVersion, Code: "busy", Reason: "later"},
		{Status: StatusOK, V: ReceiptBatchVersion, Events: []EventReceipt{{ID: "a", Status: StatusPending}}},
	} {
		b, err := MarshalReceiptsReply(p)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := fastReceiptsReply(b)
		if !ok {
			t.Fatalf("the fast path gave up on the canonical %s", b)
		}
		var strict ReceiptsReply
		if err := unmarshal(b, &strict); err != nil || !reflect.DeepEqual(got, strict) || !reflect.DeepEqual(got, p) {
			t.Errorf("%s: fast %+v, strict %+v (%v), want %+v", b, got, strict, err, p)
		}
	}
	for _, s := range fastSeeds[4:] {
		if _, ok := fastReceiptsReply([]byte(s)); ok {
			t.Errorf("the fast path read the non-canonical %s", s)
		}
	}
}

// FuzzReceiptsReplyFast: whatever the fast path reads, the strict decoder
// reads too, to an equal value; and ParseReceiptsReply agrees with the
// strict decoder and check on every input.
func FuzzReceiptsReplyFast(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var strict ReceiptsReply
		serr := unmarshal(b, &strict)
		if p, ok := fastReceiptsReply(b); ok {
			if serr != nil {
				t.Fatalf("fast path read %q to %+v, the strict decoder refused it: %v", b, p, serr)
			}
			if !reflect.DeepEqual(p, strict) {
				t.Fatalf("%q: fast %+v, strict %+v", b, p, strict)
			}
		}
		got, err := ParseReceiptsReply(b)
		if serr == nil {
			serr = strict.check()
		}
		if (err == nil) != (serr == nil) {
			t.Fatalf("%q: ParseReceiptsReply %v, strict %v", b, err, serr)
		}
		if err == nil && !reflect.DeepEqual(got, strict) {
			t.Fatalf("%q: ParseReceiptsReply %+v, strict %+v", b, got, strict)
		}
	})
}

// BenchmarkParseReceiptsReply parses a reply of 20 receipts with proofs
// of 17 hashes (a tree of about 100,000 leaves), as the SDK gets them.
func BenchmarkParseReceiptsReply(b *testing.B) {
	proof := make([]Hash, 17)
	for i := range proof {
		proof[i][0] = byte(i)
	}
	p := ReceiptsReply{Status: StatusOK, V: ReceiptBatchVersion, Checkpoint: "zarlog.example/log\n100000\n" + strings.Repeat("A", 43) + "=\n\n— zarlog.example/log " + strings.Repeat("x", 88) + "\n"}
	for i := range 20 {
		n := uint64(99000 + i)
		p.Events = append(p.Events, EventReceipt{ID: strings.Repeat("0123456789abcdef", 4) + ":17", Status: StatusOK, Index: &n, Proof: proof})
	}
	m, err := MarshalReceiptsReply(p)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			if _, err := ParseReceiptsReply(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fast-decode", func(b *testing.B) {
		for b.Loop() {
			if _, ok := fastReceiptsReply(m); !ok {
				b.Fatal("not read")
			}
		}
	})
	b.Run("strict", func(b *testing.B) {
		for b.Loop() {
			if _, err := parseChecked[ReceiptsReply](m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// requestSeeds are batched requests in and out of the canonical form.
var requestSeeds = []string{
	`{"events":[{"id":"g:1","seq":7},{"id":"g:2"}],"v":5,"wait_ms":5000}`,
	`{"events":[{"id":"g:1"}],"v":5}`,
	`{"events":[{"id":"g:1","seq":0}],"v":5,"wait_ms":0}`,
	// Not canonical: the strict decoder's.
	`{"events":[{"id":"g:1","seq":7}],"wait_ms":5000,"v":5}`,
	`{"events":[{"seq":7,"id":"g:1"}],"v":5}`,
	`{"events":[{"id":"g:1","seq":-7}],"v":5}`,
	`{"events":[{"id":"g:1"}],"v":5,"wait_ms":-1}`,
	`{"events":[],"v":5}`,
	`{"events":null,"v":5}`,
	`{"events":[{"id":"g\u003a1"}],"v":5}`,
	`{"events":[{"id":"g:1"}],"v":5,"x":1}`,
	`{"events":[{"id":"g:1"}],"v":5}` + "\n",
}

// TestReceiptsRequestFast: what MarshalReceiptsRequest writes is read by
// the fast path, to the value the strict decoder reads; a request out of
// the canonical form is left to the strict decoder.
func TestReceiptsRequestFast(t *testing.T) {
	for _, q := range []ReceiptsRequest{
		{V: ReceiptBatchVersion, WaitMillis: 5000, Events: []StatusQuery{{ID: "g:1", Seq: 7}, {ID: "g:2"}}},
		{V: ReceiptBatchVersion, Events: []StatusQuery{{ID: strings.Repeat("0123456789abcdef", 4) + ":117", Seq: 1 << 40}}},
	} {
		b, err := MarshalReceiptsRequest(q)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := fastReceiptsRequest(b)
		if !ok {
			t.Fatalf("the fast path gave up on the canonical %s", b)
		}
		var strict ReceiptsRequest
		if err := unmarshal(b, &strict); err != nil || !reflect.DeepEqual(got, strict) || !reflect.DeepEqual(got, q) {
			t.Errorf("%s: fast %+v, strict %+v (%v), want %+v", b, got, strict, err, q)
		}
	}
	for _, s := range requestSeeds[3:] {
		if _, ok := fastReceiptsRequest([]byte(s)); ok {
			t.Errorf("the fast path read the non-canonical %s", s)
		}
	}
}

// FuzzReceiptsRequestFast: whatever the fast path reads, the strict
// decoder reads too, to an equal value; and ParseReceiptsRequest agrees
// with the strict decoder and check on every input.
func FuzzReceiptsRequestFast(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var strict ReceiptsRequest
		serr := unmarshal(b, &strict)
		if q, ok := fastReceiptsRequest(b); ok {
			if serr != nil {
				t.Fatalf("fast path read %q to %+v, the strict decoder refused it: %v", b, q, serr)
			}
			if !reflect.DeepEqual(q, strict) {
				t.Fatalf("%q: fast %+v, strict %+v", b, q, strict)
			}
		}
		got, err := ParseReceiptsRequest(b)
		if serr == nil {
			serr = strict.check()
		}
		if (err == nil) != (serr == nil) {
			t.Fatalf("%q: ParseReceiptsRequest %v, strict %v", b, err, serr)
		}
		if err == nil && !reflect.DeepEqual(got, strict) {
			t.Fatalf("%q: ParseReceiptsRequest %+v, strict %+v", b, got, strict)
		}
	})
}

// BenchmarkParseReceiptsRequest parses a request about 12 events, as the
// ingest gets them at a human pace.
func BenchmarkParseReceiptsRequest(b *testing.B) {
	q := ReceiptsRequest{V: ReceiptBatchVersion, WaitMillis: 5000}
	for i := range 12 {
		q.Events = append(q.Events, StatusQuery{ID: strings.Repeat("0123456789abcdef", 4) + ":" + strings.Repeat("1", i%3+1), Seq: uint64(1000 + i)})
	}
	m, err := MarshalReceiptsRequest(q)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			if _, err := ParseReceiptsRequest(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("strict", func(b *testing.B) {
		for b.Loop() {
			var q ReceiptsRequest
			if err := unmarshal(m, &q); err != nil {
				b.Fatal(err)
			}
			if err := q.check(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
