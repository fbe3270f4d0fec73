package verifier

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/zarlog/zarlog/events/cjson"
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
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, perr := Parse(data)
		r := Verify(data, Options{})
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
