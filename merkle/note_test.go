package merkle

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// testRand returns a deterministic randomness source for key generation.
func testRand(seed byte) *rand.ChaCha8 { return rand.NewChaCha8([32]byte{seed}) }

// testLogKey returns a fixed log key pair for origin.
func testLogKey(t testing.TB, origin string, seed byte) (note.Signer, note.Verifier) {
	t.Helper()
	skey, vkey, err := GenerateKey(testRand(seed), origin)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

var validCheckpoints = []string{
	"example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
	"zarlog.example/log\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n",
	"o\n18446744073709551615\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n",
	"with spaces + plus, ünïcödé\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\next one\next two\n",
}

func TestCheckpointRoundTrip(t *testing.T) {
	for _, text := range validCheckpoints {
		c, err := ParseCheckpoint([]byte(text))
		if err != nil {
			t.Fatalf("ParseCheckpoint(%q): %v", text, err)
		}
		got, err := c.Format()
		if err != nil || string(got) != text {
			t.Fatalf("Format(ParseCheckpoint(%q)) = %q, %v", text, got, err)
		}
	}
	c, _ := ParseCheckpoint([]byte(validCheckpoints[1]))
	if c.Size != 0 || c.Hash != EmptyRoot() || c.Extensions != nil {
		t.Fatalf("empty-tree checkpoint parsed as %+v", c)
	}
}

func TestParseCheckpointRejects(t *testing.T) {
	const h = "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I="
	for name, text := range map[string]string{
		"empty":             "",
		"no-final-newline":  "o\n1\n" + h,
		"two-lines":         "o\n1\n",
		"empty-origin":      "\n1\n" + h + "\n",
		"leading-zero":      "o\n01\n" + h + "\n",
		"plus-sign":         "o\n+1\n" + h + "\n",
		"negative":          "o\n-1\n" + h + "\n",
		"overflow":          "o\n18446744073709551616\n" + h + "\n",
		"size-space":        "o\n1 \n" + h + "\n",
		"short-hash":        "o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2=\n",
		"noncanonical-hash": "o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2J=\n",
		"unpadded-hash":     "o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I\n",
		"url-base64":        "o\n1\nCsUYapGGPo4dkMgIAUqom_Xajj7h2fB2MPA3j2jxq2I=\n",
		"empty-extension":   "o\n1\n" + h + "\n\n",
		"crlf":              "o\r\n1\n" + h + "\n",
		"tab-in-origin":     "o\to\n1\n" + h + "\n",
		"bad-utf8":          "o\xff\n1\n" + h + "\n",
	} {
		if _, err := ParseCheckpoint([]byte(text)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: ParseCheckpoint(%q) = %v, want ErrMalformed", name, text, err)
		}
	}
	for _, c := range []Checkpoint{{Origin: ""}, {Origin: "a\nb"}, {Origin: "o", Extensions: []string{""}}, {Origin: "o", Extensions: []string{"a\nb"}}} {
		if _, err := c.Format(); !errors.Is(err, ErrMalformed) {
			t.Errorf("Format(%+v) = %v, want ErrMalformed", c, err)
		}
	}
}

func TestSignOpen(t *testing.T) {
	s, v := testLogKey(t, "zarlog.example/log", 1)
	_, other := testLogKey(t, "zarlog.example/log", 2)
	c := Checkpoint{Origin: "zarlog.example/log", Size: 12, Hash: Hash{1, 2, 3}, Extensions: []string{"x"}}
	msg, err := Sign(c, s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Open(msg, v)
	if err != nil {
		t.Fatal(err)
	}
	if got.Origin != c.Origin || got.Size != c.Size || got.Hash != c.Hash || len(got.Extensions) != 1 {
		t.Fatalf("Open returned %+v, want %+v", got, c)
	}

	// The signed-note specification's example verifies through the same
	// note.Open (it is not a checkpoint, so Open itself refuses it).
	specV, err := NewVerifier("example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k")
	if err != nil {
		t.Fatal(err)
	}
	spec := "This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n"
	if _, err := openNote([]byte(spec), note.VerifierList(specV)); err != nil {
		t.Fatalf("spec example: %v", err)
	}
	if _, err := Open([]byte(spec), specV); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Open(spec example) = %v, want ErrMalformed (not a checkpoint)", err)
	}

	// A checkpoint signed by a key named differently from its origin.
	wrongName, _ := testLogKey(t, "other.example/log", 3)
	if _, err := Sign(c, wrongName); !errors.Is(err, ErrSignature) {
		t.Fatalf("Sign with a key of another name: %v", err)
	}
	text, _ := c.Format()
	forged, err := note.Sign(&note.Note{Text: string(text)}, wrongName)
	if err != nil {
		t.Fatal(err)
	}
	_, wrongNameV := testLogKey(t, "other.example/log", 3)
	if _, err := Open(forged, wrongNameV); !errors.Is(err, ErrSignature) {
		t.Fatalf("Open of a checkpoint whose origin is not the key name: %v", err)
	}

	mutations := map[string][]byte{
		"other-key":       nil,
		"flipped-size":    bytes.Replace(msg, []byte("\n12\n"), []byte("\n13\n"), 1),
		"flipped-sig":     flipBase64(msg),
		"no-signature":    msg[:bytes.Index(msg, []byte("\n\n"))+2],
		"truncated":       msg[:len(msg)-1],
		"oversize":        append(bytes.Repeat([]byte("x"), MaxNoteSize), msg...),
		"extra-text-line": bytes.Replace(msg, []byte("x\n\n"), []byte("x\ny\n\n"), 1),
	}
	for name, m := range mutations {
		key := v
		if name == "other-key" {
			m, key = msg, other
		}
		if _, err := Open(m, key); err == nil {
			t.Errorf("%s: Open succeeded", name)
		} else if !errors.Is(err, ErrSignature) && !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Open error %v wraps neither ErrSignature nor ErrMalformed", name, err)
		}
	}
	if _, _, err := GenerateKey(testRand(1), "has space"); err == nil {
		t.Fatal("GenerateKey accepted an origin with a space")
	}
	if _, err := NewVerifier("example.com/foo+530d903b+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"); !errors.Is(err, ErrMalformed) {
		t.Fatal("NewVerifier accepted a wrong key hash")
	}
}

// flipBase64 changes one base64 character of the first signature line.
func flipBase64(msg []byte) []byte {
	m := bytes.Clone(msg)
	i := bytes.Index(m, []byte("\n\n— "))
	j := bytes.IndexByte(m[i+6:], ' ') + i + 6 + 10
	if m[j] == 'A' {
		m[j] = 'B'
	} else {
		m[j] = 'A'
	}
	return m
}

func testCosigner(t testing.TB, name string, seed byte, now time.Time) (*Cosigner, *CosignatureVerifier) {
	t.Helper()
	skey, vkey, err := GenerateCosignerKey(testRand(seed), name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCosigner(skey, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewCosignatureVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	if c.VerifierKey() != vkey || c.KeyHash() != v.KeyHash() || c.Name() != name {
		t.Fatalf("cosigner and verifier disagree")
	}
	return c, v
}

func TestCosignatures(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 37, 31, 0, time.UTC)
	s, _ := testLogKey(t, "zarlog.example/log", 1)
	cp := Checkpoint{Origin: "zarlog.example/log", Size: 7, Hash: Hash{9}, Extensions: []string{"ext"}}
	msg, err := Sign(cp, s)
	if err != nil {
		t.Fatal(err)
	}
	w1, v1 := testCosigner(t, "w1.example", 10, now)
	w2, v2 := testCosigner(t, "w2.example", 11, now.Add(time.Second))
	_, v3 := testCosigner(t, "w3.example", 12, now)
	cosigned := bytes.Clone(msg)
	for _, w := range []*Cosigner{w1, w2} {
		line, err := w.Cosign(cp)
		if err != nil {
			t.Fatal(err)
		}
		cosigned = append(cosigned, line...)
	}
	got, err := VerifyCosignatures(cosigned, []*CosignatureVerifier{v1, v2, v3})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "w1.example" || !got[0].Timestamp.Equal(now) || !got[1].Timestamp.Equal(now.Add(time.Second)) {
		t.Fatalf("VerifyCosignatures = %+v", got)
	}
	if got, err := VerifyCosignatures(msg, []*CosignatureVerifier{v1}); err != nil || len(got) != 0 {
		t.Fatalf("uncosigned note: %v, %v", got, err)
	}
	if _, err := Open(cosigned, mustVerifier(t, s)); err != nil {
		t.Fatalf("Open of a cosigned checkpoint: %v", err)
	}
	// A cosignature over another checkpoint does not verify.
	line, _ := w1.Cosign(Checkpoint{Origin: cp.Origin, Size: 8, Hash: cp.Hash, Extensions: cp.Extensions})
	if _, err := VerifyCosignatures(append(bytes.Clone(msg), line...), []*CosignatureVerifier{v1}); !errors.Is(err, ErrSignature) {
		t.Fatalf("cosignature of another checkpoint: %v", err)
	}
	// A log key is not a witness key and vice versa.
	if _, err := NewCosignatureVerifier(mustVerifierKey(t, "zarlog.example/log", 1)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("NewCosignatureVerifier of a log key: %v", err)
	}
	if _, err := NewVerifier(w1.VerifierKey()); !errors.Is(err, ErrMalformed) {
		t.Fatalf("NewVerifier of a cosignature key: %v", err)
	}
	// A clock before the epoch cannot cosign.
	w0, _ := testCosigner(t, "w0.example", 13, time.Unix(0, 0))
	if _, err := w0.Cosign(cp); err == nil {
		t.Fatal("cosigned at time 0")
	}
}

// TestCosignaturesAgainstFormats checks the cosignature/v1 format against
// github.com/transparency-dev/formats/note, an independent implementation.
func TestCosignaturesAgainstFormats(t *testing.T) {
	s, _ := testLogKey(t, "zarlog.example/log", 1)
	cp := Checkpoint{Origin: "zarlog.example/log", Size: 7, Hash: Hash{9}}
	msg, _ := Sign(cp, s)
	skey, vkey, err := GenerateCosignerKey(testRand(20), "witness.example/w")
	if err != nil {
		t.Fatal(err)
	}
	ours, _ := NewCosigner(skey, func() time.Time { return time.Unix(1679315147, 0) })
	line, _ := ours.Cosign(cp)
	theirV, err := fnote.NewVerifierForCosignatureV1(vkey)
	if err != nil {
		t.Fatal(err)
	}
	if theirV.KeyHash() != ours.KeyHash() {
		t.Fatalf("key IDs differ: formats %08x, ours %08x", theirV.KeyHash(), ours.KeyHash())
	}
	n, err := note.Open(append(bytes.Clone(msg), line...), note.VerifierList(theirV))
	if err != nil {
		t.Fatalf("formats does not verify our cosignature: %v", err)
	}
	ts, err := fnote.CoSigV1Timestamp(n.Sigs[0])
	if err != nil || ts.Unix() != 1679315147 {
		t.Fatalf("formats reads timestamp %v, %v", ts, err)
	}
	theirS, err := fnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := cp.Format()
	signed, err := note.Sign(&note.Note{Text: string(text)}, theirS)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := NewCosignatureVerifier(vkey)
	got, err := VerifyCosignatures(signed, []*CosignatureVerifier{v})
	if err != nil || len(got) != 1 {
		t.Fatalf("we do not verify formats' cosignature: %v, %v", got, err)
	}
}

func mustVerifierKey(t testing.TB, origin string, seed byte) string {
	_, vkey, err := GenerateKey(testRand(seed), origin)
	if err != nil {
		t.Fatal(err)
	}
	return vkey
}

func mustVerifier(t testing.TB, s note.Signer) note.Verifier {
	t.Helper()
	for seed := range byte(255) {
		skey, vkey, _ := GenerateKey(testRand(seed), s.Name())
		if s2, _ := NewSigner(skey); s2 != nil && s2.KeyHash() == s.KeyHash() {
			v, _ := NewVerifier(vkey)
			return v
		}
	}
	t.Fatal("no verifier for signer")
	return nil
}

func TestPolicy(t *testing.T) {
	now := time.Unix(1700000000, 0)
	s, logV := testLogKey(t, "zarlog.example/log", 1)
	var ws []*Cosigner
	var lines []string
	lines = append(lines, "# a policy", "log "+mustVerifierKey(t, "zarlog.example/log", 1)+" https://zarlog.example/", "")
	for i, name := range []string{"X1", "X2", "X3", "Y1", "Y2", "Y3"} {
		w, v := testCosigner(t, "w"+name+".example", byte(30+i), now)
		ws = append(ws, w)
		_ = v
		lines = append(lines, "  witness\t"+name+" "+w.VerifierKey())
	}
	lines = append(lines,
		"group X-witnesses 2 X1 X2 X3",
		"group Y-witnesses any Y1 Y2 Y3",
		"group X-and-Y all X-witnesses Y-witnesses",
		"quorum X-and-Y")
	p, err := ParsePolicy([]byte(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	cp := Checkpoint{Origin: "zarlog.example/log", Size: 3, Hash: Hash{3}}
	msg, _ := Sign(cp, s)
	cosign := func(idx ...int) []byte {
		m := bytes.Clone(msg)
		for _, i := range idx {
			line, err := ws[i].Cosign(cp)
			if err != nil {
				t.Fatal(err)
			}
			m = append(m, line...)
		}
		return m
	}
	for _, c := range []struct {
		idx []int
		ok  bool
	}{
		{nil, false}, {[]int{0, 1}, false}, {[]int{0, 3}, false}, {[]int{0, 1, 3}, true},
		{[]int{1, 2, 5}, true}, {[]int{3, 4, 5}, false}, {[]int{0, 1, 2, 3, 4, 5}, true},
	} {
		got, cosigs, err := p.Open(cosign(c.idx...))
		if c.ok != (err == nil) {
			t.Errorf("cosigned by %v: Open = %v, want ok=%v", c.idx, err, c.ok)
		}
		if err == nil && (got.Size != 3 || len(cosigs) != len(c.idx)) {
			t.Errorf("cosigned by %v: got %+v, %d cosignatures", c.idx, got, len(cosigs))
		}
		if err != nil && !errors.Is(err, ErrSignature) {
			t.Errorf("cosigned by %v: error %v does not wrap ErrSignature", c.idx, err)
		}
	}
	if _, err := p.CheckWitnesses(cosign(0, 2, 4)); err != nil {
		t.Errorf("CheckWitnesses: %v", err)
	}
	urls, err := ParsePolicy([]byte("witness A " + ws[0].VerifierKey() + " https://a.example/w\nwitness B " + ws[1].VerifierKey() + "\nquorum A\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := urls.WitnessURLs(); len(got) != 2 || got[0] != "https://a.example/w" || got[1] != "" || urls.Witnesses()[0].Name() != ws[0].Name() {
		t.Errorf("WitnessURLs = %q", got)
	}
	_ = logV

	none, err := ParsePolicy([]byte("quorum none"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := none.CheckWitnesses(msg); err != nil {
		t.Errorf("quorum none: %v", err)
	}
	if _, _, err := none.Open(msg); !errors.Is(err, ErrSignature) {
		t.Errorf("policy without logs opened a checkpoint: %v", err)
	}

	wk := ws[0].VerifierKey()
	wk2 := ws[1].VerifierKey()
	lk := mustVerifierKey(t, "zarlog.example/log", 1)
	for name, text := range map[string]string{
		"no-quorum":          "witness A " + wk + "\n",
		"two-quorums":        "quorum none\nquorum none\n",
		"undefined-quorum":   "quorum A\n",
		"quorum-before-def":  "quorum A\nwitness A " + wk + "\n",
		"none-as-name":       "witness none " + wk + "\nquorum none\n",
		"none-as-member":     "witness A " + wk + "\ngroup G any none\nquorum G\n",
		"duplicate-name":     "witness A " + wk + "\nwitness A " + wk2 + "\nquorum A\n",
		"duplicate-key":      "witness A " + wk + "\nwitness B " + wk + "\nquorum A\n",
		"duplicate-member":   "witness A " + wk + "\ngroup G any A A\nquorum G\n",
		"duplicate-log":      "log " + lk + "\nlog " + lk + "\nquorum none\n",
		"threshold-zero":     "witness A " + wk + "\ngroup G 0 A\nquorum G\n",
		"threshold-too-high": "witness A " + wk + "\ngroup G 2 A\nquorum G\n",
		"threshold-leading0": "witness A " + wk + "\ngroup G 01 A\nquorum G\n",
		"empty-group":        "group G any\nquorum none\n",
		"log-key-as-witness": "witness A " + lk + "\nquorum A\n",
		"witness-key-as-log": "log " + wk + "\nquorum none\n",
		"unknown-keyword":    "witnesses A " + wk + "\nquorum none\n",
		"control-char":       "quorum none\r\n",
		"too-many-items":     "log " + lk + " url extra\nquorum none\n",
	} {
		if _, err := ParsePolicy([]byte(text)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: ParsePolicy = %v, want ErrMalformed", name, err)
		}
	}
}

// testNow is the fixed clock of the tests.
var testNow = time.Date(2026, 11, 30, 10, 37, 31, 0, time.UTC)

func TestVerifierKey(t *testing.T) {
	for seed := range byte(20) {
		skey, vkey, err := GenerateKey(testRand(seed), "zarlog.example/log")
		if err != nil {
			t.Fatal(err)
		}
		got, err := VerifierKey(skey)
		if err != nil || got != vkey {
			t.Fatalf("VerifierKey = %q, %v, want %q", got, err, vkey)
		}
	}
	if _, err := VerifierKey("PRIVATE+KEY+x+00000000+AAAA"); !errors.Is(err, ErrMalformed) {
		t.Fatalf("VerifierKey of a bad key: %v", err)
	}
}
