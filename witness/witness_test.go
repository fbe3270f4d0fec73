package witness

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/merkle"
)

// TestStatusCodes reaches every status of the HTTP API, in a sequence of
// requests against one witness.
func TestStatusCodes(t *testing.T) {
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	other := newTestLog(t, "zarlog.example/other", 2, "x") // not configured
	impostor := newTestLog(t, "zarlog.example/a", 3, "a")  // a's origin, another key
	w := openWitness(t, vfs.NewMem(), "/w", a)
	h := w.Handler()

	cp3 := a.grow(3)
	cp5 := a.grow(2)
	cp8 := a.grow(3)
	proof58 := a.proofTo(5, 8)
	bad := append([]merkle.Hash(nil), proof58...)
	bad[0][0] ^= 1
	emptyCP, _ := merkle.Sign(merkle.Checkpoint{Origin: a.origin, Size: 0, Hash: merkle.EmptyRoot()}, a.signer)
	zeroBad, _ := merkle.Sign(merkle.Checkpoint{Origin: a.origin, Size: 0, Hash: merkle.Hash{1}}, a.signer)
	// A fork: the log's signature on another tree of size 8.
	fork8, _ := merkle.Sign(merkle.Checkpoint{Origin: a.origin, Size: 8, Hash: merkle.Hash{8}}, a.signer)
	// A signature line with a's key name and ID whose signature is wrong.
	forged := bytes.Clone(cp5)
	forged[len(forged)-3] ^= 1
	if bytes.Equal(forged, cp5) {
		t.Fatal("forgery did not change the note")
	}

	type step struct {
		name   string
		body   []byte
		code   int
		needle string // in the body
	}
	for _, s := range []step{
		{"malformed", []byte("old x\n\n"), 400, "old size"},
		{"note-malformed", request(t, 0, nil, []byte("o\n1\nAAAA\n")), 400, "not a signed note"},
		{"checkpoint-malformed", request(t, 0, nil, mustSignText(t, a, "zarlog.example/a\n01\n"+base64.StdEncoding.EncodeToString(make([]byte, 32))+"\n")), 400, "size"},
		{"unknown-origin", request(t, 0, nil, other.grow(1)), 404, "unknown log"},
		{"unknown-key", request(t, 0, nil, impostor.grow(1)), 403, "no signature"},
		{"bad-signature", request(t, 0, nil, forged), 403, "does not verify"},
		{"old-larger", request(t, 6, nil, cp5), 400, "larger than"},
		{"size-zero-bad-root", request(t, 0, nil, zeroBad), 422, "empty tree"},
		{"size-zero", request(t, 0, nil, emptyCP), 200, "— witness.example/w1 "},
		{"proof-from-zero", request(t, 0, proof58, cp5), 422, "want none"},
		{"first", request(t, 0, nil, cp5), 200, "— witness.example/w1 "},
		{"conflict-zero", request(t, 0, nil, cp8), 409, "5\n"},
		{"conflict-ahead", request(t, 6, nil, cp8), 409, "5\n"},
		{"same-size-with-proof", request(t, 5, proof58, cp5), 422, "want none"},
		{"same-again", request(t, 5, nil, cp5), 200, "— witness.example/w1 "},
		{"bad-proof", request(t, 5, bad, cp8), 422, "consistency"},
		{"short-proof", request(t, 5, proof58[1:], cp8), 422, "consistency"},
		{"smaller", request(t, 5, nil, cp3), 400, "larger than"},
		{"grow", request(t, 5, proof58, cp8), 200, "— witness.example/w1 "},
		{"smaller-old", request(t, 3, nil, cp3), 409, "8\n"},
		// C2SP tlog-witness: "If the old size matches the checkpoint size,
		// the witness MUST check that the root hashes are also identical.
		// If they don't match, the witness MUST respond with a 409 Conflict".
		{"same-size-other-root", request(t, 8, nil, fork8), 409, "8\n"},
		{"too-large", append([]byte("old 0\n\n"), bytes.Repeat([]byte("x"), MaxRequestSize)...), 413, "larger than"},
	} {
		code, ctype, body := post(t, h, s.body)
		if code != s.code || !strings.Contains(string(body), s.needle) {
			t.Errorf("%s: %d %q, want %d with %q", s.name, code, body, s.code, s.needle)
		}
		switch code {
		case 409:
			if ctype != "text/x.tlog.size" || !bytes.HasSuffix(body, []byte("\n")) {
				t.Errorf("%s: 409 with Content-Type %q, body %q", s.name, ctype, body)
			}
		case 200:
			if !bytes.HasPrefix(body, []byte("— ")) || !bytes.HasSuffix(body, []byte("\n")) || bytes.Count(body, []byte("\n")) != 1 {
				t.Errorf("%s: 200 body %q is not one signature line", s.name, body)
			}
		}
	}
	if got := cosignedSize(t, w, a.origin); got != 8 {
		t.Errorf("cosigned size %d, want 8", got)
	}

	// The other endpoints.
	get := func(method, path string) (int, []byte) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec.Code, rec.Body.Bytes()
	}
	origins := w.Origins()
	for _, c := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/add-checkpoint", 405},
		{"PUT", "/add-checkpoint", 405},
		{"GET", "/", 404},
		{"POST", "/sign-subtree", 404},
		{"GET", "/healthz", 200},
		{"GET", "/" + origins[a.origin] + "/checkpoint", 200},
		{"GET", "/" + strings.Repeat("0", 64) + "/checkpoint", 404},
	} {
		if code, body := get(c.method, c.path); code != c.code {
			t.Errorf("%s %s: %d %q, want %d", c.method, c.path, code, body, c.code)
		}
	}
	if _, err := w.Checkpoint("nope"); !errors.Is(err, ErrUnknownLog) {
		t.Errorf("Checkpoint of an unknown origin: %v", err)
	}
	w.Close()
	if code, _ := get("GET", "/healthz"); code != 503 {
		t.Errorf("healthz after Close: %d", code)
	}
	if code, _, body := post(t, h, request(t, 8, nil, cp8)); code != 500 {
		t.Errorf("add-checkpoint after Close: %d %q", code, body)
	}
}

// mustSignText signs an arbitrary note text with the log's key.
func mustSignText(t testing.TB, l *testLog, text string) []byte {
	msg, err := note.Sign(&note.Note{Text: text}, l.signer)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// TestMonitoringCheckpoint checks that the monitoring URL serves a note
// that the log's key opens and the witness's key has cosigned, without the
// other signatures of the submitted note.
func TestMonitoringCheckpoint(t *testing.T) {
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	w := openWitness(t, vfs.NewMem(), "/w", a)
	h := w.Handler()
	path := "/" + w.Origins()[a.origin] + "/checkpoint"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if rec.Code != 404 {
		t.Fatalf("before any cosignature: %d", rec.Code)
	}
	// The submitted note carries another witness's cosignature: not kept.
	cp := a.grow(3)
	otherKey, otherV := testWitnessKey(t, "witness.example/other", 7)
	oc, _ := merkle.NewCosigner(otherKey, testClock)
	c, _ := merkle.Open(cp, a.verifier())
	line, _ := oc.Cosign(c)
	if code, _, body := post(t, h, request(t, 0, nil, append(bytes.Clone(cp), line...))); code != 200 {
		t.Fatalf("add-checkpoint: %d %q", code, body)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	got := rec.Body.Bytes()
	if _, err := merkle.Open(got, a.verifier()); err != nil {
		t.Fatalf("served checkpoint does not open with the log key: %v\n%s", err, got)
	}
	cs, err := merkle.VerifyCosignatures(got, []*merkle.CosignatureVerifier{witnessVerifier(t), otherV})
	if err != nil || len(cs) != 1 || cs[0].Name != "witness.example/w1" || !cs[0].Timestamp.Equal(testNow) {
		t.Fatalf("served checkpoint cosignatures %+v, %v", cs, err)
	}
}

// TestCosignatureInterop checks the witness's cosignatures with independent
// verifiers: transparency-dev/formats' cosignature/v1 verifier through
// golang.org/x/mod/sumdb/note, and merkle's own.
func TestCosignatureInterop(t *testing.T) {
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	w := openWitness(t, vfs.NewMem(), "/w", a)
	cp := a.grow(10)
	line, err := w.AddCheckpoint(context.Background(), 0, nil, cp)
	if err != nil {
		t.Fatal(err)
	}
	cosigned := append(bytes.Clone(cp), line...)

	theirs, err := fnote.NewVerifierForCosignatureV1(w.VerifierKey())
	if err != nil {
		t.Fatalf("formats does not read the witness's vkey %q: %v", w.VerifierKey(), err)
	}
	n, err := note.Open(cosigned, note.VerifierList(theirs))
	if err != nil {
		t.Fatalf("formats does not verify the cosignature: %v", err)
	}
	ts, err := fnote.CoSigV1Timestamp(n.Sigs[0])
	if err != nil || !ts.Equal(testNow) {
		t.Errorf("formats reads timestamp %v, %v; want %v", ts, err, testNow)
	}
	// Both keys together, as a verifier of the cosigned checkpoint does.
	if n, err := note.Open(cosigned, note.VerifierList(theirs, a.verifier())); err != nil || len(n.Sigs) != 2 {
		t.Fatalf("note.Open with log and witness keys: %v", err)
	}
	ours, err := merkle.NewCosignatureVerifier(w.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := merkle.VerifyCosignatures(cosigned, []*merkle.CosignatureVerifier{ours})
	if err != nil || len(cs) != 1 || !cs[0].Timestamp.Equal(testNow) {
		t.Fatalf("merkle verifies %+v, %v", cs, err)
	}
	policy, err := merkle.ParsePolicy([]byte("log " + a.vkey + "\nwitness W " + w.VerifierKey() + "\nquorum W\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := policy.Open(cosigned); err != nil {
		t.Fatalf("policy.Open: %v", err)
	}
	// A cosignature of another checkpoint does not verify on this one.
	cp2 := a.grow(1)
	if _, err := merkle.VerifyCosignatures(append(bytes.Clone(cp2), line...), []*merkle.CosignatureVerifier{ours}); !errors.Is(err, merkle.ErrSignature) {
		t.Fatalf("cosignature moved to another checkpoint: %v", err)
	}
}

// TestFork submits a forked log's checkpoints (same key, another history)
// to a witness that cosigned the original: it refuses them and keeps the
// evidence, once per checkpoint, and goes on cosigning the original.
func TestFork(t *testing.T) {
	ctx := context.Background()
	a := newTestLog(t, "zarlog.example/a", 1, "honest")
	b := newTestLog(t, "zarlog.example/a", 1, "forked") // same key, different leaves
	fs := vfs.NewMem()
	w := openWitness(t, fs, "/w", a)

	a5 := a.grow(5)
	b5 := b.grow(5)
	if _, err := w.AddCheckpoint(ctx, 0, nil, a5); err != nil {
		t.Fatal(err)
	}
	// Same size, other root: a fork, recorded even with a (meaningless)
	// proof attached.
	if _, err := w.AddCheckpoint(ctx, 5, []merkle.Hash{{1}}, b5); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("forked checkpoint of the same size: %v", err)
	}
	if names, _ := fs.List("/w/evidence"); len(names) != 1 || !strings.HasPrefix(names[0], "fork-") {
		t.Fatalf("evidence after the fork: %q", names)
	}
	var inc *merkle.InconsistencyError
	b8 := b.grow(3)
	// Larger, with the fork's own (valid for it) proof from 5.
	_, err := w.AddCheckpoint(ctx, 5, b.proof(5), b8)
	if !errors.Is(err, ErrInconsistent) || !errors.As(err, &inc) {
		t.Fatalf("forked checkpoint with the fork's proof: %v", err)
	}
	// Again: refused, no second file.
	if _, err := w.AddCheckpoint(ctx, 5, nil, b5); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("fork again: %v", err)
	}
	// The honest log continues.
	a9 := a.grow(4)
	if _, err := w.AddCheckpoint(ctx, 5, a.proof(5), a9); err != nil {
		t.Fatalf("honest log after the fork attempts: %v", err)
	}

	names, err := fs.List("/w/evidence")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 2 {
		t.Fatalf("evidence files %q, want 2", names)
	}
	kinds := map[string]Evidence{}
	for _, n := range names {
		f, err := fs.Open("/w/evidence/" + n)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(f)
		f.Close()
		var e Evidence
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if !strings.HasPrefix(n, e.Kind+"-") {
			t.Errorf("file %s holds kind %q", n, e.Kind)
		}
		kinds[e.Kind] = e
	}
	fork, ok := kinds[EvidenceFork]
	if !ok {
		t.Fatalf("no fork evidence in %q", names)
	}
	// The fork evidence proves itself: both notes open with the log's key
	// and have the same size and different roots.
	old, err := merkle.Open([]byte(fork.Cosigned), a.verifier())
	if err != nil {
		t.Fatal(err)
	}
	sub, err := merkle.Open([]byte(fork.Submitted), a.verifier())
	if err != nil {
		t.Fatal(err)
	}
	if old.Size != 5 || sub.Size != 5 || old.Hash == sub.Hash || fork.Submitted != string(b5) || fork.Origin != a.origin || !fork.Time.Equal(testNow) {
		t.Errorf("fork evidence %+v", fork)
	}
	err = merkle.CheckSignedConsistency(merkle.SignedCheckpoint{Checkpoint: old, Note: []byte(fork.Cosigned)}, merkle.SignedCheckpoint{Checkpoint: sub, Note: []byte(fork.Submitted)}, nil)
	if !errors.As(err, &inc) {
		t.Errorf("the fork evidence does not check as an inconsistency: %v", err)
	}
	// The proof evidence holds the proof; against the honest tree's root at
	// 5 it fails, as it did for the witness.
	pe, ok := kinds[EvidenceProof]
	if !ok || len(pe.Proof) == 0 || pe.Submitted != string(b8) {
		t.Fatalf("proof evidence %+v", pe)
	}
	var proof []merkle.Hash
	for _, s := range pe.Proof {
		h, ok := parseHash([]byte(s))
		if !ok {
			t.Fatalf("proof hash %q", s)
		}
		proof = append(proof, h)
	}
	bcp, _ := merkle.Open(b8, a.verifier())
	if err := merkle.CheckConsistency(5, 8, old.Hash, bcp.Hash, proof); err == nil {
		t.Error("the kept proof verifies against the cosigned root")
	}
}

// TestEvidenceLimit checks that evidence beyond MaxEvidence is only logged.
func TestEvidenceLimit(t *testing.T) {
	ctx := context.Background()
	a := newTestLog(t, "zarlog.example/a", 1, "honest")
	fs := vfs.NewMem()
	skey, _ := testWitnessKey(t, "witness.example/w1", 99)
	w, err := New(ctx, Config{Dir: "/w", FS: fs, Logs: []note.Verifier{a.verifier()}, Key: skey, Clock: testClock, MaxEvidence: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.AddCheckpoint(ctx, 0, nil, a.grow(5)); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		f := newTestLog(t, "zarlog.example/a", 1, fmt.Sprint("fork", i))
		if _, err := w.AddCheckpoint(ctx, 5, nil, f.grow(5)); !errors.Is(err, ErrInconsistent) {
			t.Fatalf("fork %d: %v", i, err)
		}
	}
	if names, _ := fs.List("/w/evidence"); len(names) != 2 {
		t.Fatalf("evidence files %q, want 2", names)
	}
}

// TestConcurrentSameLog sends many add-checkpoint requests from the same old
// size at once, over HTTP: exactly one is cosigned, every other gets 409 with
// the winner's size. Run with -race.
func TestConcurrentSameLog(t *testing.T) {
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	var cps [][]byte
	for range 32 {
		cps = append(cps, a.grow(1))
	}
	w := openWitness(t, vfs.NewMem(), "/w", a)
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	for round := range 2 {
		old := cosignedSize(t, w, a.origin)
		batch := cps[16*round : 16*round+16]
		start := make(chan struct{})
		codes := make([]int, len(batch))
		bodies := make([]string, len(batch))
		var wg sync.WaitGroup
		for i, cp := range batch {
			size := uint64(16*round + i + 1)
			body := request(t, old, a.proofTo(old, size), cp)
			wg.Go(func() {
				<-start
				resp, err := http.Post(srv.URL+"/add-checkpoint", "", bytes.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				codes[i], bodies[i] = resp.StatusCode, string(b)
			})
		}
		close(start)
		wg.Wait()
		won := cosignedSize(t, w, a.origin)
		ok := 0
		for i, c := range codes {
			switch c {
			case 200:
				ok++
				if uint64(16*round+i+1) != won {
					t.Errorf("round %d: request for size %d cosigned, but the witness has %d", round, 16*round+i+1, won)
				}
			case 409:
				if bodies[i] != fmt.Sprintf("%d\n", won) {
					t.Errorf("round %d request %d: 409 body %q, want the winner's size %d", round, i, bodies[i], won)
				}
			default:
				t.Errorf("round %d request %d: %d %q", round, i, c, bodies[i])
			}
		}
		if ok != 1 {
			t.Errorf("round %d: %d requests cosigned, want 1 (codes %v)", round, ok, codes)
		}
	}
}

// TestConcurrentLogs cosigns many logs at once: they do not block each
// other's success.
func TestConcurrentLogs(t *testing.T) {
	var logs []*testLog
	for i := range 8 {
		logs = append(logs, newTestLog(t, fmt.Sprintf("zarlog.example/%d", i), byte(10+i), "l"))
	}
	w := openWitness(t, vfs.NewMem(), "/w", logs...)
	var wg sync.WaitGroup
	for _, l := range logs {
		cps := [][]byte{l.grow(3), l.grow(5)}
		wg.Go(func() {
			if _, err := w.AddCheckpoint(context.Background(), 0, nil, cps[0]); err != nil {
				t.Error(err)
			}
			if _, err := w.AddCheckpoint(context.Background(), 3, l.proofTo(3, 8), cps[1]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, l := range logs {
		if got := cosignedSize(t, w, l.origin); got != 8 {
			t.Errorf("%s: cosigned %d, want 8", l.origin, got)
		}
	}
}

// TestKeyRotation accepts checkpoints signed by any of a log's keys.
func TestKeyRotation(t *testing.T) {
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	a2 := newTestLog(t, "zarlog.example/a", 2, "a") // same tree, new key
	w := openWitness(t, vfs.NewMem(), "/w", a, a2)
	ctx := context.Background()
	if _, err := w.AddCheckpoint(ctx, 0, nil, a.grow(3)); err != nil {
		t.Fatal(err)
	}
	a2.grow(3)
	cp5 := a2.grow(2)
	if _, err := w.AddCheckpoint(ctx, 3, a2.proof(3), cp5); err != nil {
		t.Fatalf("checkpoint by the rotated key: %v", err)
	}
	if len(w.Origins()) != 1 {
		t.Errorf("origins %v", w.Origins())
	}
}

// TestContextDone checks that a request whose context is done before the
// write stores and cosigns nothing.
func TestContextDone(t *testing.T) {
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	w := openWitness(t, vfs.NewMem(), "/w", a)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.AddCheckpoint(ctx, 0, nil, a.grow(3)); !errors.Is(err, context.Canceled) {
		t.Fatalf("AddCheckpoint with a done context: %v", err)
	}
	if got := cosignedSize(t, w, a.origin); got != 0 {
		t.Fatalf("stored size %d", got)
	}
}
