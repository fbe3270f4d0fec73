package ledger

import (
	"testing"

	"github.com/zarlog/zarlog/events"
)

func TestPeekID(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`{"id":"g:1","v":2}`, "g:1"},
		{`{"v":2, "id" : "g:1"}`, "g:1"},
		{`{"id":"bad id"}`, ""},
		{`{"id":7}`, ""},
		{`["g:1"]`, ""},
		{`{"id":"g:1"`, ""},
		{``, ""},
	} {
		if got := peekID([]byte(tc.data)); got != tc.want {
			t.Errorf("peekID(%s) = %q, want %q", tc.data, got, tc.want)
		}
	}
}

// FuzzPeekID: never panics, and returns "" or a valid event id.
func FuzzPeekID(f *testing.F) {
	f.Add([]byte(`{"id":"g:1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if id := peekID(data); id != "" && !events.ValidEventID(id) {
			t.Fatalf("peekID returned %q", id)
		}
	})
}
