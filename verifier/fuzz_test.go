package verifier

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/merkle"
)

// FuzzVerify: the evidence parser and every check never panic on any
// input; a file that parses is never reported as bad input, its settings
// are canonical JSON, and every rendering works.
func FuzzVerify(f *testing.F) {
	for _, v := range loadVectors(f) {
		b, err := os.ReadFile(v.Path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"format":"dice-proof-v1","scheme":"per-roll-v1","matchId":"00112233-4455-6677-8899-aabbccddeeff","rolls":[]}`))
	f.Add([]byte("c2sp.org/tlog-proof@v1\nindex 0\n\no\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— o AAAAAAA=\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := Verify(data, Options{})
		if IsTlogProof(data) {
			checkTlogReport(t, data, r)
			return
		}
		ev, perr := Parse(data)
		exit := r.Exit()
		switch {
		case perr != nil && exit != 2:
			t.Fatalf("Parse failed (%v) but exit %d", perr, exit)
		case perr == nil && exit == 2:
			t.Fatalf("Parse succeeded but exit 2: %s", r.Text(English))
		}
		if perr == nil {
			if ev.Settings != nil {
				if err := cjson.Check(ev.Settings); err != nil {
					t.Fatalf("settings not canonical: %v", err)
				}
			}
			if ev.Opening == "" || ev.Opponent == "" {
				t.Fatalf("opening %q opponent %q", ev.Opening, ev.Opponent)
			}
			// A parsed file formats canonically and parses back to the
			// same canonical bytes.
			b, err := Format(ev)
			if err != nil {
				t.Fatalf("Format of a parsed file: %v", err)
			}
			ev2, err := Parse(b)
			if err != nil {
				t.Fatalf("Format's output does not parse: %v", err)
			}
			if b2, err := Format(ev2); err != nil || !bytes.Equal(b, b2) {
				t.Fatalf("Format(Parse(Format(ev))) differs: %v", err)
			}
		}
		for _, l := range Langs() {
			_ = r.Text(l)
			var j JSONReport
			if err := json.Unmarshal(r.JSON(l), &j); err != nil {
				t.Fatalf("JSON report: %v", err)
			}
		}
	})
}

// checkTlogReport: a tlog-proof's report is bad input exactly when the file
// does not parse or holds no event, and otherwise has the event.
func checkTlogReport(t *testing.T, data []byte, r *Report) {
	p, err := merkle.ParseTlogProof(data)
	parsed := err == nil && len(p.Extra) > 0
	if parsed {
		_, err := events.Parse(p.Extra)
		parsed = err == nil
	}
	if parsed != (r.Exit() != 2) || parsed != (r.Event != nil) {
		t.Fatalf("tlog-proof parsed %v, exit %d, event %v", parsed, r.Exit(), r.Event != nil)
	}
	if parsed && r.Exit() == 0 {
		t.Fatal("a tlog-proof verified without a log key")
	}
}

// FuzzBundleLog fuzzes the log member alone, inside a small per-roll-v1
// file: the log parser and every bundle check never panic, and a file that
// parses formats back to canonical bytes that parse.
func FuzzBundleLog(f *testing.F) {
	const head = `{"format":"dice-proof-v1","scheme":"per-roll-v1","matchId":"00112233-4455-6677-8899-aabbccddeeff","rolls":[],"log":`
	for _, v := range loadVectors(f) {
		if !v.IsBundle() {
			continue
		}
		b, err := os.ReadFile(v.Path)
		if err != nil {
			f.Fatal(err)
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) == nil && m["log"] != nil {
			f.Add([]byte(m["log"]))
		}
	}
	f.Add([]byte(`{"checkpoint":"o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— o AAAAAAA=\n","hashes":[],"entries":[{"index":0,"leaf":"{}","proof":[]}]}`))
	f.Fuzz(func(t *testing.T, log []byte) {
		data := append(append([]byte(head), log...), '}')
		r := Verify(data, Options{})
		ev, err := Parse(data)
		if (err == nil) == (r.Exit() == 2) {
			t.Fatalf("Parse error %v but exit %d", err, r.Exit())
		}
		if err == nil {
			b, err := Format(ev)
			if err != nil {
				t.Fatalf("Format of a parsed bundle: %v", err)
			}
			if _, err := Parse(b); err != nil {
				t.Fatalf("Format's output does not parse: %v", err)
			}
		}
		for _, l := range Langs() {
			_ = r.Text(l)
		}
	})
}

// FuzzTlogProof fuzzes tlog-proof files with the vectors' keys, so that
// the signature, witness and emitter paths run too.
func FuzzTlogProof(f *testing.F) {
	var opt Options
	for _, v := range loadVectors(f) {
		if v.IsTlogProof() {
			b, err := os.ReadFile(v.Path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
			if v.LogKey != nil && v.WitnessPolicy != nil {
				opt = optionsOf(f, v)
			}
		}
	}
	if opt.LogKey == nil {
		f.Fatal("no tlog-proof vector with a log key and a witness policy")
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := VerifyTlogProof(data, opt)
		if r.Exit() != 2 && r.Event == nil {
			t.Fatal("a checked tlog-proof without its event")
		}
		for _, l := range Langs() {
			_ = r.Text(l)
			if !json.Valid(r.JSON(l)) {
				t.Fatal("invalid JSON report")
			}
		}
	})
}
