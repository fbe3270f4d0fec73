package merkle

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// The fuzz targets check that parsers of untrusted bytes never panic, that
// every failure wraps ErrMalformed (or ErrSignature where signatures are
// checked), and that canonical formats round-trip.

func FuzzParseTilePath(f *testing.F) {
	for _, s := range []string{"tile/0/000", "tile/0/x001/x234/067.p/8", "tile/entries/x018/x446/x744/x073/x709/x551/615",
		"tile/63/999.p/255", "tile/0/x000/001", "tile/00/000", "tile/0/000.p/256", "tile/0/000.p/0", "tile/-1/000", "tile/entries/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		tile, err := ParseTilePath(path)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if got := tile.Path(); got != path {
			t.Fatalf("ParseTilePath(%q).Path() = %q", path, got)
		}
	})
}

func FuzzParseBundle(f *testing.F) {
	f.Add([]byte{0, 1, 'a'})
	f.Add([]byte{0, 0, 0, 2, 'a', 'b'})
	f.Add([]byte{0, 3, 'a'})
	f.Add(bytes.Repeat([]byte{0, 0}, TileWidth+1))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := ParseBundle(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		back, err := FormatBundle(entries)
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("FormatBundle(ParseBundle(%x)) = %x, %v", data, back, err)
		}
		for w := 1; w <= len(entries); w++ {
			prefix, err := BundlePrefix(data, w)
			if err != nil {
				t.Fatal(err)
			}
			if es, err := ParseBundle(prefix); err != nil || len(es) != w {
				t.Fatalf("BundlePrefix(%d) has %d entries, %v", w, len(es), err)
			}
		}
	})
}

func FuzzParseCheckpoint(f *testing.F) {
	for _, s := range validCheckpoints {
		f.Add([]byte(s))
	}
	f.Add([]byte("o\n01\nAAAA\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		c, err := ParseCheckpoint(text)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		back, err := c.Format()
		if err != nil || !bytes.Equal(back, text) {
			t.Fatalf("Format(ParseCheckpoint(%q)) = %q, %v", text, back, err)
		}
	})
}

// FuzzOpen opens arbitrary notes with a log key and checks cosignatures
// with a witness key, starting from valid signed and cosigned checkpoints.
func FuzzOpen(f *testing.F) {
	s, v := testLogKey(f, "zarlog.example/log", 1)
	w, wv := testCosigner(f, "w.example", 9, testNow)
	cp := Checkpoint{Origin: "zarlog.example/log", Size: 5, Hash: Hash{5}}
	msg, err := Sign(cp, s)
	if err != nil {
		f.Fatal(err)
	}
	line, _ := w.Cosign(cp)
	f.Add(msg)
	f.Add(append(bytes.Clone(msg), line...))
	f.Add([]byte("zarlog.example/log\n5\nAAAA\n\n— zarlog.example/log AAAAAAA=\n"))
	f.Fuzz(func(t *testing.T, m []byte) {
		c, err := Open(m, v)
		if err == nil {
			// Only a note the key signed opens; its text must be canonical.
			text, _, err := splitNote(m)
			if err != nil {
				t.Fatalf("Open accepted a note splitNote refuses: %v", err)
			}
			back, err := c.Format()
			if err != nil || !bytes.Equal(back, text) {
				t.Fatalf("opened checkpoint does not format back to its text")
			}
		} else if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrSignature) {
			t.Fatalf("Open error %v wraps neither sentinel", err)
		}
		cosigs, err := VerifyCosignatures(m, []*CosignatureVerifier{wv})
		if err != nil && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrSignature) {
			t.Fatalf("VerifyCosignatures error %v wraps neither sentinel", err)
		}
		for _, c := range cosigs {
			if c.Name != "w.example" || c.Timestamp.Before(time.Unix(0, 0)) {
				t.Fatalf("cosignature %+v", c)
			}
		}
	})
}

func FuzzParseTlogProof(f *testing.F) {
	s, _ := testLogKey(f, "zarlog.example/log", 1)
	cp := Checkpoint{Origin: "zarlog.example/log", Size: 5, Hash: Hash{5}}
	msg, _ := Sign(cp, s)
	for _, tp := range []TlogProof{
		{Index: 3, Proof: []Hash{{1}, {2}, {3}}, Checkpoint: msg},
		{Extra: []byte("leaf"), Index: 0, Checkpoint: msg},
	} {
		b, err := tp.Format()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseTlogProof(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		back, err := p.Format()
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("Format(ParseTlogProof(%q)) = %q, %v", b, back, err)
		}
	})
}

func FuzzStateUnmarshal(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(append([]byte{1, 0, 0, 0, 0, 0, 0, 0, 1}, make([]byte, 32)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s State
		if err := s.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		back, err := s.MarshalBinary()
		if err != nil || !bytes.Equal(back, data) {
			t.Fatalf("MarshalBinary(UnmarshalBinary(%x)) = %x, %v", data, back, err)
		}
	})
}

func FuzzParsePolicy(f *testing.F) {
	w, _ := testCosigner(f, "w.example", 9, testNow)
	f.Add([]byte("quorum none\n"))
	f.Add([]byte("log " + mustVerifierKey(f, "zarlog.example/log", 1) + "\nwitness A " + w.VerifierKey() + "\ngroup G 1 A\nquorum G\n"))
	f.Add([]byte("# c\n\twitness A " + w.VerifierKey() + " https://w.example/\ngroup G all A\ngroup H any G A\nquorum H"))
	f.Fuzz(func(t *testing.T, text []byte) {
		p, err := ParsePolicy(text)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		_ = p.String()
	})
}
