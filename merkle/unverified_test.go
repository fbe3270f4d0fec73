package merkle

import (
	"bytes"
	"errors"
	"testing"
)

func TestParseSignedCheckpoint(t *testing.T) {
	s, _ := testLogKey(t, "zarlog.example/log", 1)
	w, _ := testCosigner(t, "w.example", 9, testNow)
	cp := Checkpoint{Origin: "zarlog.example/log", Size: 5, Hash: Hash{5}, Extensions: []string{"ext"}}
	msg, err := Sign(cp, s)
	if err != nil {
		t.Fatal(err)
	}
	line, err := w.Cosign(cp)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range [][]byte{msg, append(bytes.Clone(msg), line...)} {
		got, err := ParseSignedCheckpoint(m)
		if err != nil || got.Origin != cp.Origin || got.Size != cp.Size || got.Hash != cp.Hash || len(got.Extensions) != 1 {
			t.Errorf("ParseSignedCheckpoint = %+v, %v; want %+v", got, err, cp)
		}
	}
	text, _ := cp.Format()
	for name, m := range map[string][]byte{
		"no signatures":    append(bytes.Clone(text), '\n'),
		"text only":        text,
		"bad signature":    append(append(bytes.Clone(text), '\n'), "— zarlog.example/log !!!\n"...),
		"bad checkpoint":   []byte("zarlog.example/log\n05\nAAAA\n\n— zarlog.example/log AAAAAAA=\n"),
		"control":          bytes.Replace(msg, []byte("5"), []byte("\x00"), 1),
		"no final newline": bytes.TrimSuffix(msg, []byte("\n")),
		"empty":            nil,
	} {
		if _, err := ParseSignedCheckpoint(m); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: ParseSignedCheckpoint error %v, want ErrMalformed", name, err)
		}
	}
}

// FuzzParseSignedCheckpoint: never panics, and accepts every note that
// Open accepts, with the same checkpoint.
func FuzzParseSignedCheckpoint(f *testing.F) {
	s, v := testLogKey(f, "zarlog.example/log", 1)
	msg, err := Sign(Checkpoint{Origin: "zarlog.example/log", Size: 5, Hash: Hash{5}}, s)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(msg)
	f.Add([]byte("o\n1\nAAAA\n\n— o AAAAAAA=\n"))
	f.Fuzz(func(t *testing.T, m []byte) {
		c, err := ParseSignedCheckpoint(m)
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
		if oc, oerr := Open(m, v); oerr == nil && (err != nil || c.Hash != oc.Hash || c.Size != oc.Size || c.Origin != oc.Origin) {
			t.Fatalf("Open accepts %q but ParseSignedCheckpoint gives %+v, %v", m, c, err)
		}
	})
}
