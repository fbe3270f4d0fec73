package ledger

import (
	"bytes"
	"testing"
	"time"

	"github.com/zarlog/zarlog/events"
)

// The ledger's own stored records are decoded strictly: decoding never
// panics, and whatever decodes encodes back to the same bytes.

func FuzzStats(f *testing.F) {
	var s Stats
	b, _ := s.MarshalBinary()
	f.Add(b)
	s.Events, s.Types[3], s.Opening.Pairs[5][4], s.Play.Pairs[0][0], s.Finished, s.Failed = 1<<40, 7, 300, 1, 3, 1
	b, _ = s.MarshalBinary()
	f.Add(b)
	f.Add([]byte{statsVersion, 0x80, 0x00})
	b[len(b)-36-8]++ // Play's number of rolls no longer matches its pairs
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		var s Stats
		if err := s.UnmarshalBinary(b); err != nil {
			return
		}
		again, _ := s.MarshalBinary()
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip: %x became %x", b, again)
		}
	})
}

func FuzzRejection(f *testing.F) {
	r := newRejection(testStart, Input{Emitter: "e", MsgID: "m", Data: []byte(`{"v":1}`)}, "g:1",
		&events.RejectError{Code: events.CodeMalformed, Field: "type", Msg: "missing"})
	b, _ := r.MarshalBinary()
	f.Add(b)
	big := newRejection(time.Unix(0, -1), Input{Data: bytes.Repeat([]byte{'x'}, MaxRejectedData+10)}, "",
		&events.RejectError{Code: events.CodeTooLarge})
	b, _ = big.MarshalBinary()
	f.Add(b)
	f.Add([]byte{rejectionVersion})
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Rejection
		if err := r.UnmarshalBinary(b); err != nil {
			return
		}
		again, _ := r.MarshalBinary()
		if !bytes.Equal(again, b) {
			t.Fatalf("round trip: %x became %x", b, again)
		}
	})
}

func FuzzRejectedSummary(f *testing.F) {
	s := RejectedSummary{Next: 10, First: 3, Bytes: 999, Dropped: 3, Counts: map[events.Code]uint64{"malformed": 8, "too-large": 2},
		Emitters: map[string]EmitterRejections{"": {Stored: 1, Bytes: 40}, "acme": {Stored: 9, Bytes: 959, OverQuota: 4,
			FirstID: "g:1", LastID: "g:4", FirstTime: time.Unix(5, 0), LastTime: time.Unix(7, 1)}}}
	f.Add(s.marshal())
	v1 := []byte{rejMetaV1, 2, 0, 80, 0, 1, 9, 'm', 'a', 'l', 'f', 'o', 'r', 'm', 'e', 'd', 2}
	f.Add(v1)
	f.Add((&RejectedSummary{}).marshal())
	f.Fuzz(func(t *testing.T, b []byte) {
		s, v1, err := parseRejMeta(b)
		if err != nil || v1 {
			return
		}
		if again := s.marshal(); !bytes.Equal(again, b) {
			t.Fatalf("round trip: %x became %x", b, again)
		}
	})
}

func FuzzSmallRecords(f *testing.F) {
	f.Add([]byte{prefixFinished, 0, 0, 0, 0, 0, 0, 0, 9}, []byte{2, 'g'})
	f.Add(make([]byte, 9), make([]byte, dedupSize))
	f.Fuzz(func(t *testing.T, key, val []byte) {
		if d, err := parseDedup(val); err == nil && !bytes.Equal(d.marshal(), val) {
			t.Fatalf("dedup round trip: %x", val)
		}
		if tm, err := parseTime(val); err == nil && !bytes.Equal(marshalTime(tm), val) {
			t.Fatalf("time round trip: %x", val)
		}
		if fg, err := parseFinished(key, val); err == nil {
			if k := u64Key(prefixFinished, fg.Index); !bytes.Equal(k[1:], key[1:]) || !bytes.Equal(marshalFinished(fg.Status, fg.Game), val) {
				t.Fatalf("finished round trip: %x %x", key, val)
			}
		}
	})
}
