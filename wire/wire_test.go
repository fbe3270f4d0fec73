package wire

import (
	"bytes"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestCheckEmitter(t *testing.T) {
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"a", true},
		{"0", true},
		{"tavlarena", true},
		{"acme-games-2", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{"", false},
		{"-a", false},
		{"Acme", false},
		{"a.b", false},
		{"a*", false},
		{"a>", false},
		{"a b", false},
		{"a_b", false},
	} {
		err := CheckEmitter(tc.id)
		if (err == nil) != tc.ok {
			t.Errorf("CheckEmitter(%q) = %v, want ok=%v", tc.id, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrEmitter) {
			t.Errorf("CheckEmitter(%q) = %v, does not wrap ErrEmitter", tc.id, err)
		}
	}
}

// TestCheckEmitterBytes checks every single byte as first and later
// character against the documented alphabet.
func TestCheckEmitterBytes(t *testing.T) {
	for c := 0; c < 256; c++ {
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if got := CheckEmitter(string([]byte{byte(c)})) == nil; got != alnum {
			t.Errorf("first byte %#x: ok=%v, want %v", c, got, alnum)
		}
		if got := CheckEmitter("a"+string([]byte{byte(c)})) == nil; got != (alnum || c == '-') {
			t.Errorf("later byte %#x: ok=%v, want %v", c, got, alnum || c == '-')
		}
	}
}

func TestCheckEventIDBytes(t *testing.T) {
	for c := 0; c < 256; c++ {
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if got := CheckEventID(string([]byte{byte(c)})) == nil; got != alnum {
			t.Errorf("first byte %#x: ok=%v, want %v", c, got, alnum)
		}
		later := alnum || strings.IndexByte("._:-", byte(c)) >= 0
		if got := CheckEventID("a"+string([]byte{byte(c)})) == nil; got != later {
			t.Errorf("later byte %#x: ok=%v, want %v", c, got, later)
		}
	}
	if err := CheckEventID(strings.Repeat("a", 128)); err != nil {
		t.Errorf("128-byte id: %v", err)
	}
	if err := CheckEventID(strings.Repeat("a", 129)); !errors.Is(err, ErrEventID) {
		t.Errorf("129-byte id: %v, want ErrEventID", err)
	}
}

func TestSubjects(t *testing.T) {
	for _, root := range []string{"", "zarlog", "acme.zarlog"} {
		s := Subjects{Root: root}
		if err := s.Check(); err != nil {
			t.Fatalf("root %q: %v", root, err)
		}
		want := root
		if want == "" {
			want = DefaultRoot
		}
		if got := s.Events("e1"); got != want+".events.e1" {
			t.Errorf("Events = %q", got)
		}
		for _, kind := range []string{"events", "receipts"} {
			subj := want + "." + kind + ".e1"
			if kind == "events" && s.Events("e1") != subj || kind == "receipts" && s.Receipts("e1") != subj {
				t.Fatalf("%s subject is not %q", kind, subj)
			}
			got, err := s.EmitterOf(kind, subj)
			if err != nil || got != "e1" {
				t.Errorf("EmitterOf(%q, %q) = %q, %v", kind, subj, got, err)
			}
			for _, bad := range []string{want + "." + kind + ".", want + "." + kind + ".a.b", "other." + kind + ".e1", want + ".rejected.e1"} {
				if _, err := s.EmitterOf(kind, bad); !errors.Is(err, ErrSubject) {
					t.Errorf("EmitterOf(%q, %q) = %v, want ErrSubject", kind, bad, err)
				}
			}
		}
		if got := s.Rejected("e1"); got != want+".rejected.e1" {
			t.Errorf("Rejected = %q", got)
		}
		if s.EventsWildcard() != want+".events.*" || s.ReceiptsWildcard() != want+".receipts.*" {
			t.Errorf("wildcards %q %q", s.EventsWildcard(), s.ReceiptsWildcard())
		}
	}
	for _, root := range []string{"a..b", ".a", "a.", "a.*", ">", "a b"} {
		if err := (Subjects{Root: root}).Check(); !errors.Is(err, ErrRoot) {
			t.Errorf("root %q: %v, want ErrRoot", root, err)
		}
	}
}

func TestBatchRoundTrip(t *testing.T) {
	for n := 2; n <= 40; n++ {
		events := make([][]byte, n)
		for i := range events {
			events[i] = []byte(`{"id":"g:` + strconv.Itoa(i) + `"}` + strings.Repeat("x", i))
		}
		payload, err := AppendBatch(nil, events)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		got, err := SplitBatch(FormatCount(n), payload)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if !reflect.DeepEqual(got, events) {
			t.Fatalf("n=%d: split %q, want %q", n, got, events)
		}
	}
}

func TestBatchErrors(t *testing.T) {
	big := bytes.Repeat([]byte("x"), MaxEventSize+1)
	for _, tc := range []struct {
		name   string
		events [][]byte
	}{
		{"one", [][]byte{[]byte("a")}},
		{"none", nil},
		{"empty", [][]byte{[]byte("a"), {}}},
		{"newline", [][]byte{[]byte("a"), []byte("b\nc")}},
		{"big", [][]byte{[]byte("a"), big}},
	} {
		if _, err := AppendBatch(nil, tc.events); !errors.Is(err, ErrBatch) {
			t.Errorf("AppendBatch %s: %v, want ErrBatch", tc.name, err)
		}
	}
	for _, tc := range []struct {
		name, count, payload string
	}{
		{"count mismatch", "3", "a\nb"},
		{"count too small", "1", "a"},
		{"count leading zero", "02", "a\nb"},
		{"count sign", "+2", "a\nb"},
		{"count empty", "", "a\nb"},
		{"count huge", "4097", strings.Repeat("a\n", 4096) + "a"},
		{"empty part", "3", "a\n\nb"},
		{"trailing newline", "2", "a\nb\n"},
		{"big part", "2", "a\n" + string(big)},
	} {
		if _, err := SplitBatch(tc.count, []byte(tc.payload)); !errors.Is(err, ErrBatch) {
			t.Errorf("SplitBatch %s: %v, want ErrBatch", tc.name, err)
		}
	}
}

// TestParseCount checks every string of up to four digits.
func TestParseCount(t *testing.T) {
	for n := 0; n < 10000; n++ {
		for _, s := range []string{strconv.Itoa(n), "0" + strconv.Itoa(n)} {
			got, err := ParseCount(s)
			want := n >= 2 && n <= MaxBatchEvents && s[0] != '0' && len(s) <= 4
			if (err == nil) != want || err == nil && got != n {
				t.Fatalf("ParseCount(%q) = %d, %v; want ok=%v", s, got, err, want)
			}
		}
	}
}

func FuzzSplitBatch(f *testing.F) {
	f.Add("2", []byte("a\nb"))
	f.Add("3", []byte("{}\n{}\n{}"))
	f.Add("2", []byte("\n"))
	f.Fuzz(func(t *testing.T, count string, payload []byte) {
		events, err := SplitBatch(count, payload)
		if err != nil {
			return
		}
		back, err := AppendBatch(nil, events)
		if err != nil {
			t.Fatalf("AppendBatch of a split: %v", err)
		}
		if !bytes.Equal(back, payload) || FormatCount(len(events)) != count {
			t.Fatalf("round trip: %q/%q -> %q/%d", payload, count, back, len(events))
		}
	})
}

func FuzzEmitterOf(f *testing.F) {
	f.Add("zarlog.events.e1")
	f.Add("zarlog.events.")
	f.Add("zarlog.receipts.a.b")
	f.Fuzz(func(t *testing.T, subject string) {
		for _, kind := range []string{"events", "receipts"} {
			e, err := Subjects{}.EmitterOf(kind, subject)
			if err != nil {
				continue
			}
			back := Subjects{}.Events(e)
			if kind == "receipts" {
				back = Subjects{}.Receipts(e)
			}
			if back != subject {
				t.Fatalf("EmitterOf(%q, %q) = %q, which gives back %q", kind, subject, e, back)
			}
		}
	})
}

// BenchmarkCheckEventID checks an id of the SDK's canonical shape (a game
// id of 64 hex digits, its sequence number): PublishAsync checks every
// event's.
func BenchmarkCheckEventID(b *testing.B) {
	id := strings.Repeat("0123456789abcdef", 4) + ":117"
	for b.Loop() {
		if err := CheckEventID(id); err != nil {
			b.Fatal(err)
		}
	}
}
