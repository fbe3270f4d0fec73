package ingest

import (
	"bytes"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/zarlog/zarlog/wire"
)

// FuzzSplit feeds arbitrary messages to the ingest's splitting of a message
// into submissions: it never panics, every submission carries the message's
// stream sequence, and either the framing is accepted and the parts rebuild
// the payload, or the whole payload is submitted once (refused if framed).
func FuzzSplit(f *testing.F) {
	f.Add("zarlog.events.e1", "", "g:0", []byte(`{"id":"g:0"}`))
	f.Add("zarlog.events.e1", "2", "batch/x", []byte("a\nb"))
	f.Add("zarlog.events.e1", "3", "", []byte("a\nb"))
	f.Add("other.e1", "", "", []byte("x"))
	in := &Ingester{cfg: Config{}.withDefaults()}
	f.Fuzz(func(t *testing.T, subject, count, msgID string, data []byte) {
		h := nats.Header{}
		if count != "" {
			h.Set(wire.HeaderEvents, count)
		}
		if msgID != "" {
			h.Set(wire.HeaderMsgID, msgID)
		}
		var subs []submission
		it := in.split(&subs, subject, h, data, 7, nil)
		if it.first != 0 || it.n != len(subs) || it.n == 0 {
			t.Fatalf("item %+v for %d submissions", it, len(subs))
		}
		for _, s := range subs {
			if s.seq != 7 {
				t.Fatalf("submission with seq %d", s.seq)
			}
		}
		if len(subs) == 1 {
			if !bytes.Equal(subs[0].Data, data) {
				t.Fatalf("single submission %q is not the payload %q", subs[0].Data, data)
			}
			if count != "" && subs[0].Refuse == nil {
				t.Fatalf("framed message of one part accepted")
			}
			return
		}
		parts := make([][]byte, len(subs))
		for i, s := range subs {
			if s.part != i || s.MsgID != "" || s.Refuse != nil {
				t.Fatalf("part %d: %+v", i, s)
			}
			parts[i] = s.Data
		}
		back, err := wire.AppendBatch(nil, parts)
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("parts do not rebuild the payload: %v", err)
		}
	})
}
