package witness

import (
	"bytes"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// FuzzAddCheckpoint sends arbitrary bodies to the HTTP handler of a witness
// that has cosigned a checkpoint: it never panics, never answers 500, and
// answers 200 only with one signature line.
func FuzzAddCheckpoint(f *testing.F) {
	a := newTestLog(f, "zarlog.example/a", 1, "a")
	cp3 := a.grow(3)
	cp7 := a.grow(4)
	w := openWitness(f, vfs.NewMem(), "/w", a)
	h := w.Handler()
	if code, _, body := post(f, h, request(f, 0, nil, cp3)); code != 200 {
		f.Fatalf("setup: %d %q", code, body)
	}
	f.Add(request(f, 3, a.proof(3), cp7))
	f.Add(request(f, 0, nil, cp7))
	f.Add(request(f, 3, nil, cp3))
	f.Add(request(f, 3, a.proof(3)[1:], cp7))
	f.Add([]byte(specExample))
	f.Add([]byte("old 0\n\nzarlog.example/a\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n— zarlog.example/a AAAAAAA=\n"))
	allowed := map[int]bool{200: true, 400: true, 403: true, 404: true, 409: true, 413: true, 422: true}
	f.Fuzz(func(t *testing.T, body []byte) {
		code, _, out := post(t, h, body)
		if !allowed[code] {
			t.Fatalf("status %d %q", code, out)
		}
		if code == 200 && (!bytes.HasPrefix(out, []byte("— witness.example/w1 ")) || bytes.Count(out, []byte("\n")) != 1) {
			t.Fatalf("200 with %q", out)
		}
	})
}
