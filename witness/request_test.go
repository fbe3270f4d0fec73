package witness

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/merkle"
)

// specExample is the example request of C2SP tlog-witness.
const specExample = `old 20852014
PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=
jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=
5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=
/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=

example.com/behind-the-sofa
20852163
CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=

— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=
— example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=
`

func TestParseRequestSpecExample(t *testing.T) {
	r, err := ParseRequest([]byte(specExample))
	if err != nil {
		t.Fatal(err)
	}
	if r.OldSize != 20852014 || len(r.Proof) != 4 || !bytes.HasPrefix(r.Checkpoint, []byte("example.com/behind-the-sofa\n20852163\n")) {
		t.Fatalf("parsed %d, %d proof lines, checkpoint %q", r.OldSize, len(r.Proof), r.Checkpoint)
	}
	if r.Proof[3][0] != 0xff || r.Proof[3][31] != 0xfd {
		t.Errorf("last proof hash %x", r.Proof[3])
	}
	b, err := r.Format()
	if err != nil || string(b) != specExample {
		t.Errorf("Format = %q, %v; want the example back", b, err)
	}
	// The checkpoint itself is the witness's to check: it parses.
	text, err := noteText(r.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := merkle.ParseCheckpoint(text); err != nil {
		t.Fatal(err)
	}
}

func TestParseRequestRejects(t *testing.T) {
	h := "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n"
	cp := "o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n— o AAAAAAA=\n"
	for name, body := range map[string]string{
		"empty":                "",
		"no-newline":           "old 1",
		"no-old":               "1\n\n" + cp,
		"old-uppercase":        "OLD 1\n\n" + cp,
		"old-two-spaces":       "old  1\n\n" + cp,
		"old-trailing-space":   "old 1 \n\n" + cp,
		"old-leading-zero":     "old 01\n\n" + cp,
		"old-double-zero":      "old 00\n\n" + cp,
		"old-sign":             "old +1\n\n" + cp,
		"old-negative":         "old -1\n\n" + cp,
		"old-hex":              "old 0x1\n\n" + cp,
		"old-overflow":         "old 18446744073709551616\n\n" + cp,
		"old-empty":            "old \n\n" + cp,
		"crlf":                 "old 1\r\n\r\n" + cp,
		"no-blank-line":        "old 1\n" + h,
		"no-checkpoint":        "old 1\n" + h + "\n",
		"hash-unpadded":        "old 1\n" + strings.TrimSuffix(h, "=\n") + "\n\n" + cp,
		"hash-url-base64":      "old 1\n5-pKlUdi2LeF_BcMHBn-Ku6yhPGNCswZZD1X_6QgPd8=\n\n" + cp,
		"hash-short":           "old 1\nAAAA\n\n" + cp,
		"hash-33-bytes":        "old 1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n\n" + cp,
		"hash-noncanonical":    "old 1\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaz=\n\n" + cp,
		"hash-trailing-space":  "old 1\n" + strings.TrimSuffix(h, "\n") + " \n\n" + cp,
		"blank-line-spaces":    "old 1\n \n" + cp,
		"64-proof-lines":       "old 1\n" + strings.Repeat(h, 64) + "\n" + cp,
		"too-large":            "old 1\n\n" + strings.Repeat("x", MaxRequestSize),
		"checkpoint-then-more": "old 1\n" + h + "x\n\n" + cp,
	} {
		if _, err := ParseRequest([]byte(body)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: ParseRequest = %v, want ErrMalformed", name, err)
		}
	}
	// 63 proof lines, old 0 and the largest size are fine as syntax.
	for _, body := range []string{
		"old 1\n" + strings.Repeat(h, 63) + "\n" + cp,
		"old 0\n\n" + cp,
		"old 18446744073709551615\n\n" + cp,
	} {
		r, err := ParseRequest([]byte(body))
		if err != nil {
			t.Errorf("ParseRequest(%.30q…) = %v", body, err)
			continue
		}
		if b, _ := r.Format(); string(b) != body {
			t.Errorf("round trip of %.30q… gave %.30q…", body, b)
		}
	}
	if _, err := (Request{OldSize: 1, Proof: make([]merkle.Hash, 64), Checkpoint: []byte(cp)}).Format(); !errors.Is(err, ErrMalformed) {
		t.Errorf("Format with 64 proof hashes = %v", err)
	}
	if _, err := (Request{OldSize: 1}).Format(); !errors.Is(err, ErrMalformed) {
		t.Errorf("Format without checkpoint = %v", err)
	}
}

// FuzzParseRequest checks that ParseRequest never panics and that every
// request it accepts formats back to the same bytes.
func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(specExample))
	f.Add([]byte("old 0\n\nx"))
	f.Add([]byte("old 1\n\n\n\n"))
	f.Add([]byte("old 5\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseRequest(body)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		b, err := r.Format()
		if err != nil {
			t.Fatalf("Format of a parsed request: %v", err)
		}
		if !bytes.Equal(b, body) {
			t.Fatalf("round trip: %q became %q", body, b)
		}
	})
}

func TestParseLogs(t *testing.T) {
	a := newTestLog(t, "zarlog.example/a", 1, "a")
	a2 := newTestLog(t, "zarlog.example/a", 2, "a")
	b := newTestLog(t, "zarlog.example/b", 3, "b")
	_, wv := testWitnessKey(t, "witness.example/w1", 9)
	_ = wv
	wkey, _, _ := merkle.GenerateCosignerKey(testRand(9), "witness.example/w1")
	wc, _ := merkle.NewCosigner(wkey, testClock)
	for name, c := range map[string]struct {
		text    string
		origins []string
	}{
		"one-log":        {"log " + a.vkey + "\n", []string{"zarlog.example/a"}},
		"no-final-nl":    {"log " + a.vkey, []string{"zarlog.example/a"}},
		"rotation":       {"# a rotated key\nlog " + a.vkey + "\nlog " + a2.vkey + " https://a.example/\n", []string{"zarlog.example/a", "zarlog.example/a"}},
		"two-logs":       {"\tlog  " + a.vkey + "  \n\nlog " + b.vkey + "\n", []string{"zarlog.example/a", "zarlog.example/b"}},
		"a-whole-policy": {"log " + a.vkey + "\nwitness W " + wc.VerifierKey() + "\nquorum W\n", []string{"zarlog.example/a"}},
	} {
		vs, err := ParseLogs([]byte(c.text))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var got []string
		for _, v := range vs {
			got = append(got, v.Name())
		}
		if strings.Join(got, " ") != strings.Join(c.origins, " ") {
			t.Errorf("%s: logs %q, want %q", name, got, c.origins)
		}
	}
	for name, text := range map[string]string{
		"empty":              "",
		"no-log":             "# nothing\n",
		"duplicate-key":      "log " + a.vkey + "\nlog " + a.vkey + "\n",
		"witness-key-as-log": "log " + wc.VerifierKey() + "\n",
		"bad-key":            "log zarlog.example/a+00000000+AAAA\n",
		"unknown-keyword":    "logs " + a.vkey + "\n",
		"bad-quorum":         "log " + a.vkey + "\nquorum W\n",
	} {
		if _, err := ParseLogs([]byte(text)); !errors.Is(err, merkle.ErrMalformed) {
			t.Errorf("%s: ParseLogs = %v, want ErrMalformed", name, err)
		}
	}
}
