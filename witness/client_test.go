package witness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/merkle"
)

// TestClientErrors checks that the client turns each answer of a real
// witness into the right typed error.
func TestClientErrors(t *testing.T) {
	ctx := context.Background()
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	other := newTestLog(t, "zarlog.example/other", 2, "o")
	impostor := newTestLog(t, "zarlog.example/a", 3, "a")
	w := openWitness(t, vfs.NewMem(), "/w", a)
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	c, err := NewClient(srv.URL+"/", witnessVerifier(t), srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	if c.URL() != srv.URL+"/add-checkpoint" || c.Name() != "witness.example/w1" {
		t.Errorf("client URL %q name %q", c.URL(), c.Name())
	}
	cp4 := a.grow(4)
	lines, err := c.AddCheckpoint(ctx, 0, nil, cp4)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := MergeCosignatures(cp4, lines)
	if err != nil {
		t.Fatal(err)
	}
	if cs, err := merkle.VerifyCosignatures(merged, []*merkle.CosignatureVerifier{witnessVerifier(t)}); err != nil || len(cs) != 1 {
		t.Fatalf("merged note: %v, %v", cs, err)
	}
	cp6 := a.grow(2)
	bad := a.proof(4)
	bad[0][3] ^= 1
	var conflict *ConflictError
	var status *StatusError
	for _, c2 := range []struct {
		name  string
		old   uint64
		proof []merkle.Hash
		cp    []byte
		want  error
		code  int
	}{
		{"conflict", 0, nil, cp6, ErrConflict, 0},
		{"inconsistent", 4, bad, cp6, ErrInconsistent, 422},
		{"forbidden", 0, nil, impostor.grow(1), ErrForbidden, 403},
		{"unknown", 0, nil, other.grow(1), ErrUnknownLog, 404},
		{"malformed", 7, nil, cp6, ErrMalformed, 400},
	} {
		_, err := c.AddCheckpoint(ctx, c2.old, c2.proof, c2.cp)
		if !errors.Is(err, c2.want) {
			t.Errorf("%s: %v, want %v", c2.name, err, c2.want)
		}
		if c2.code == 0 {
			if !errors.As(err, &conflict) || conflict.Size != 4 {
				t.Errorf("%s: %v is not a conflict at 4", c2.name, err)
			}
		} else if !errors.As(err, &status) || status.Code != c2.code || status.Body == "" {
			t.Errorf("%s: %v is not a StatusError %d", c2.name, err, c2.code)
		}
	}
	if _, err := c.AddCheckpoint(ctx, 4, a.proof(4), cp6); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddCheckpoint(ctx, 0, nil, []byte("not a note")); !errors.Is(err, ErrMalformed) {
		t.Errorf("client sent a non-note: %v", err)
	}
	if _, err := NewClient("witness.example", witnessVerifier(t), nil); err == nil {
		t.Error("NewClient accepted a prefix without scheme")
	}
}

// TestClientBadResponses runs the client against servers that answer
// wrongly: it never returns a cosignature it has not verified.
func TestClientBadResponses(t *testing.T) {
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	cp := a.grow(3)
	c0, _ := merkle.Open(cp, a.verifier())
	skey, v := testWitnessKey(t, "witness.example/w1", 99)
	good, _ := merkle.NewCosigner(skey, testClock)
	line, _ := good.Cosign(c0)
	otherKey, _ := testWitnessKey(t, "witness.example/other", 5)
	other, _ := merkle.NewCosigner(otherKey, testClock)
	otherLine, _ := other.Cosign(c0)
	// A cosignature of another checkpoint by the right key.
	wrongCP, _ := good.Cosign(merkle.Checkpoint{Origin: c0.Origin, Size: 4, Hash: c0.Hash})
	// The right key's name with another key ID.
	impostorKey, _ := testWitnessKey(t, "witness.example/w1", 6)
	impostor, _ := merkle.NewCosigner(impostorKey, testClock)
	impostorLine, _ := impostor.Cosign(c0)

	for _, c := range []struct {
		name  string
		code  int
		body  string
		want  error // nil: success with exactly line
		lines string
	}{
		{"good", 200, string(line), nil, string(line)},
		{"good-among-others", 200, string(otherLine) + string(line) + string(impostorLine), nil, string(line)},
		{"only-others", 200, string(otherLine) + string(impostorLine), ErrResponse, ""},
		{"empty", 200, "", ErrResponse, ""},
		{"wrong-checkpoint", 200, string(wrongCP), ErrResponse, ""},
		{"no-final-newline", 200, strings.TrimSuffix(string(line), "\n"), ErrResponse, ""},
		{"garbage", 200, "hello\n", ErrResponse, ""},
		{"conflict-garbage", 409, "five\n", ErrResponse, ""},
		{"conflict-no-newline", 409, "5", ErrResponse, ""},
		{"conflict-leading-zero", 409, "05\n", ErrResponse, ""},
		{"server-error", 500, "boom\n", ErrResponse, ""},
		{"too-large", 200, strings.Repeat(string(otherLine), 1000), ErrResponse, ""},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.WriteHeader(c.code)
			fmt.Fprint(rw, c.body)
		}))
		cl, _ := NewClient(srv.URL, v, srv.Client())
		got, err := cl.AddCheckpoint(context.Background(), 0, nil, cp)
		srv.Close()
		if c.want == nil {
			if err != nil || string(got) != c.lines {
				t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.lines)
			}
			continue
		}
		if !errors.Is(err, c.want) || got != nil {
			t.Errorf("%s: %q, %v; want %v", c.name, got, err, c.want)
		}
	}
}

func TestMergeCosignatures(t *testing.T) {
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	cp := a.grow(3)
	c0, _ := merkle.Open(cp, a.verifier())
	var lines [][]byte
	for i := range 3 {
		k, _ := testWitnessKey(t, fmt.Sprintf("witness.example/%d", i), byte(40+i))
		cs, _ := merkle.NewCosigner(k, testClock)
		l, _ := cs.Cosign(c0)
		lines = append(lines, l)
	}
	m, err := MergeCosignatures(cp, lines[0], lines[1])
	if err != nil {
		t.Fatal(err)
	}
	// Merging again, and a line already present, adds only what is new.
	m2, err := MergeCosignatures(m, lines[1], lines[0], lines[2], lines[2])
	if err != nil {
		t.Fatal(err)
	}
	want := string(cp) + string(lines[0]) + string(lines[1]) + string(lines[2])
	if string(m2) != want {
		t.Errorf("merged\n%s\nwant\n%s", m2, want)
	}
	// The log's own signature line is not added twice either.
	logLine := cp[bytes.LastIndex(cp, []byte("\n\n"))+2:]
	if m3, _ := MergeCosignatures(cp, logLine); !bytes.Equal(m3, cp) {
		t.Errorf("log signature added twice:\n%s", m3)
	}
	var many []byte
	for i := range 700 {
		many = fmt.Appendf(many, "— w%d.example %s\n", i, strings.Repeat("A", 96))
	}
	for name, c := range map[string]struct {
		msg   []byte
		lines []byte
	}{
		"not-a-note": {[]byte("x\n"), lines[0]},
		"not-a-line": {cp, []byte("hello\n")},
		"no-newline": {cp, bytes.TrimSuffix(lines[0], []byte("\n"))},
		"too-large":  {cp, many},
	} {
		if _, err := MergeCosignatures(c.msg, c.lines); err == nil {
			t.Errorf("%s: merged", name)
		}
	}
}

// TestClientConflict: the client reads a 409 only with the Content-Type
// text/x.tlog.size that C2SP tlog-witness requires, and tells the two 409s
// apart: another size (retry from it) and the same size with another root
// (a fork: RootMismatch, wrapping ErrInconsistent).
func TestClientConflict(t *testing.T) {
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	a.grow(5)
	cp := a.grow(0)
	_, v := testWitnessKey(t, "witness.example/w1", 99)
	answer := func(ctype, body string) *Client {
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if ctype != "" {
				rw.Header().Set("Content-Type", ctype)
			}
			rw.WriteHeader(409)
			fmt.Fprint(rw, body)
		}))
		t.Cleanup(srv.Close)
		cl, _ := NewClient(srv.URL, v, srv.Client())
		return cl
	}
	var conflict *ConflictError
	_, err := answer("text/x.tlog.size", "3\n").AddCheckpoint(context.Background(), 0, nil, cp)
	if !errors.As(err, &conflict) || conflict.Size != 3 || conflict.RootMismatch || errors.Is(err, ErrInconsistent) {
		t.Errorf("409 with another size: %v", err)
	}
	_, err = answer("text/x.tlog.size; charset=utf-8", "5\n").AddCheckpoint(context.Background(), 5, nil, cp)
	if !errors.As(err, &conflict) || conflict.Size != 5 || !conflict.RootMismatch || !errors.Is(err, ErrInconsistent) {
		t.Errorf("409 at the checkpoint's own size: %v, want a root mismatch", err)
	}
	for _, ctype := range []string{"", "text/plain; charset=utf-8"} {
		if _, err := answer(ctype, "3\n").AddCheckpoint(context.Background(), 0, nil, cp); !errors.Is(err, ErrResponse) {
			t.Errorf("409 with Content-Type %q: %v, want ErrResponse", ctype, err)
		}
	}
}
