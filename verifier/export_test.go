package verifier_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/verifier"
)

// exportOf writes a player's export of the bundles in files (testdata's,
// canonicalized to one line each, as the log serves them), with header
// count games (-1: the number of files).
func exportOf(t *testing.T, games int, files ...string) []byte {
	t.Helper()
	if games < 0 {
		games = len(files)
	}
	seat, _ := dice.ParseUUID("0b2c4a1e-7d3f-4c59-9e21-3f8a6b5c4d2e")
	b := append(verifier.FormatExportHeader("tavla-east", seat, games), '\n')
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join("..", "testdata", "dice", "evidence", f))
		if err != nil {
			t.Fatal(err)
		}
		c, err := cjson.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, c...), '\n')
	}
	return b
}

// TestExport: a player's export is checked whole, one verdict per game in
// the order of its lines and a summary; an invalid game makes the export
// invalid (exit 1), a cut file (fewer games than its header says) or a bad
// header is bad input (exit 2).
func TestExport(t *testing.T) {
	opt := verifier.Options{}
	var err error
	if opt.LogKey, err = verifier.ParseLogKey("log.zarlog.example+58a735df+AabtJ4sEH6aKjQjFidVXKTVU3pwEtYb2uS3y5DAd+GNI"); err != nil {
		t.Fatal(err)
	}
	valid := []string{"valid/bundle-tavlarena-10-rolls.json", "valid/bundle-anchored-8-rolls.json", "valid/bundle-per-roll-4-rolls.json"}

	whole := exportOf(t, -1, valid...)
	if !verifier.IsExport(whole) {
		t.Fatal("IsExport is false for an export")
	}
	r := verifier.VerifyExport(whole, opt)
	if r.Exit() != 0 || len(r.Games) != 3 || r.Problem != nil {
		t.Fatalf("3 valid games: exit %d, %d games, problem %v\n%s", r.Exit(), len(r.Games), r.Problem, r.Text(verifier.English))
	}
	text := r.Text(verifier.English)
	for i, g := range r.Games {
		if g.ID == "-" || g.Report.Exit() != 0 {
			t.Errorf("game %d: id %q exit %d", i, g.ID, g.Report.Exit())
		}
		if !strings.Contains(text, "Game "+string(rune('1'+i))+" of 3 ("+g.ID+"): ") {
			t.Errorf("the text has no line for game %d (%s):\n%s", i+1, g.ID, text)
		}
	}
	if want := "\nGames of player 0b2c4a1e-7d3f-4c59-9e21-3f8a6b5c4d2e on \"tavla-east\": 3; every roll checked in 3, invalid: 0, not checked: 0\n"; !strings.HasSuffix(text, want) {
		t.Errorf("the summary:\n%s\nwant the end %q", text, want)
	}
	var j verifier.JSONExport
	if err := json.Unmarshal(r.JSON(verifier.Turkish), &j); err != nil || j.Exit != 0 || len(j.Games) != 3 || j.Summary.Checked != 3 {
		t.Errorf("--json: %v %+v", err, j)
	}
	for _, g := range j.Games {
		var rep verifier.JSONReport
		if err := json.Unmarshal(g.Report, &rep); err != nil || rep.Exit != 0 || rep.Lang != verifier.Turkish {
			t.Errorf("--json game %s: %v %+v", g.Game, err, rep)
		}
	}

	// An invalid game makes the whole export invalid, and is named.
	bad := verifier.VerifyExport(exportOf(t, -1, valid[0], "invalid/bundle-flipped-proof-hash.json", valid[2]), opt)
	if bad.Exit() != 1 || bad.Games[1].Report.Exit() != 1 || bad.Games[0].Report.Exit() != 0 {
		t.Errorf("an invalid game: exit %d\n%s", bad.Exit(), bad.Text(verifier.English))
	}
	if !strings.Contains(bad.Text(verifier.English), "invalid: 1") {
		t.Errorf("the summary does not count the invalid game:\n%s", bad.Text(verifier.English))
	}

	// A cut file: its header says 3.
	cut := verifier.VerifyExport(exportOf(t, 3, valid[:2]...), opt)
	if cut.Exit() != 2 || cut.Problem == nil || !strings.Contains(cut.Text(verifier.English), "says it holds 3 games, it holds 2") {
		t.Errorf("a cut export: exit %d\n%s", cut.Exit(), cut.Text(verifier.English))
	}
	// A header that is not one, and one with a bad member.
	for _, head := range []string{`{"emitter":"tavla-east","format":"zarlog-player-export-v1","games":1,"player":"x"}`,
		`{"emitter":"tavla-east","format":"zarlog-player-export-v1","games":1,"player":"0b2c4a1e-7d3f-4c59-9e21-3f8a6b5c4d2e","more":true}`} {
		data := []byte(head + "\n")
		if !verifier.IsExport(data) {
			t.Errorf("IsExport is false for %s", head)
		}
		if r := verifier.VerifyExport(data, opt); r.Exit() != 2 || r.Problem == nil {
			t.Errorf("header %s: exit %d", head, r.Exit())
		}
	}
	// A bundle is not an export, nor is an evidence file.
	for _, f := range valid {
		one := exportOf(t, -1, f)
		if _, line, _ := bytes.Cut(one, []byte{'\n'}); verifier.IsExport(line) {
			t.Errorf("IsExport is true for the bundle %s", f)
		}
	}
}
