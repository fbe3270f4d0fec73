package verifier

// A player's export (docs/FORMATS.md §5, docs/HTTP.md): every proof
// bundle of one player on one platform in one file, as the log serves it
// at /players/<emitter>/<id>/export. It is JSON lines: a first line, the
// header (canonical JSON):
//
//	{"emitter":"acme","format":"zarlog-player-export-v1","games":50,"player":"<seat id>"}
//
// then one line per game, each the game's proof bundle byte for byte as
// /games/<id>/proof.json serves it (canonical JSON, so one line). Every
// line ends in "\n". VerifyExport checks each bundle as Verify does, with
// the same options, and says one verdict per game and a summary.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
)

// ExportFormat is the format of a player's export (its header's "format").
const ExportFormat = "zarlog-player-export-v1"

// MaxExportSize bounds a player's export the command line reads.
const MaxExportSize = 1 << 30

// An ExportHeader is the first line of a player's export.
type ExportHeader struct {
	Emitter string `json:"emitter"`
	Format  string `json:"format"`
	Games   int    `json:"games"`
	Player  string `json:"player"`
}

// FormatExportHeader returns the header line of a player's export, without
// its newline: canonical JSON.
func FormatExportHeader(emitter string, player dice.UUID, games int) []byte {
	b, _ := json.Marshal(ExportHeader{Emitter: emitter, Format: ExportFormat, Games: games, Player: player.String()})
	return b
}

// IsExport reports whether data is a player's export: its first line is a
// JSON object whose "format" is ExportFormat.
func IsExport(data []byte) bool {
	line, _, _ := bytes.Cut(data, []byte{'\n'})
	var h struct{ Format string }
	return bytes.HasPrefix(line, []byte("{")) && json.Unmarshal(line, &h) == nil && h.Format == ExportFormat
}

// An ExportReport is the check of a player's export: its header, each
// game's report, and what is wrong with the file itself (nil if nothing).
type ExportReport struct {
	Header  ExportHeader
	Games   []ExportGame
	Problem *Message
}

// An ExportGame is one game of an export: its id (from its first logged
// event; "-" if its line has none) and its report.
type ExportGame struct {
	ID     string
	Report *Report
}

// VerifyExport checks a player's export (IsExport): every game's bundle as
// Verify checks it, with opt.
func VerifyExport(data []byte, opt Options) *ExportReport {
	r := &ExportReport{}
	head, rest, _ := bytes.Cut(data, []byte{'\n'})
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r.Header); err != nil {
		m := msg(mPxHeader, err.Error())
		r.Problem = &m
		return r
	}
	if _, err := dice.ParseUUID(r.Header.Player); err != nil || !events.ValidEmitter(r.Header.Emitter) || r.Header.Games < 0 {
		m := msg(mPxHeader, fmt.Sprintf("emitter %q, player %q, games %d", r.Header.Emitter, r.Header.Player, r.Header.Games))
		r.Problem = &m
		return r
	}
	rest = bytes.TrimSuffix(rest, []byte{'\n'})
	var lines [][]byte
	if len(rest) > 0 {
		lines = bytes.Split(rest, []byte{'\n'})
	}
	for _, line := range lines {
		r.Games = append(r.Games, ExportGame{ID: bundleGameID(line), Report: Verify(line, opt)})
	}
	if len(lines) != r.Header.Games {
		m := msg(mPxCount, r.Header.Games, len(lines))
		r.Problem = &m
	}
	return r
}

// bundleGameID returns the game id of a bundle's first logged event, or "-".
func bundleGameID(bundle []byte) string {
	var b struct {
		Log struct {
			Entries []struct{ Leaf string }
		}
	}
	if json.Unmarshal(bundle, &b) != nil || len(b.Log.Entries) == 0 {
		return "-"
	}
	ev, err := events.Parse([]byte(b.Log.Entries[0].Leaf))
	if err != nil {
		return "-"
	}
	return ev.Game
}

// counts returns the number of games whose every check passed, that are
// invalid, and that could not be checked.
func (r *ExportReport) counts() (checked, invalid, notChecked int) {
	for _, g := range r.Games {
		switch g.Report.Exit() {
		case 0:
			checked++
		case 1:
			invalid++
		default:
			notChecked++
		}
	}
	return
}

// Exit is the export's exit code: 1 if any game's proof is invalid, else 2
// if any game could not be checked or the file is not whole, else 0.
func (r *ExportReport) Exit() int {
	_, invalid, notChecked := r.counts()
	switch {
	case invalid > 0:
		return 1
	case notChecked > 0 || r.Problem != nil:
		return 2
	}
	return 0
}

// Text is the export's report: one line per game with its verdict, what is
// wrong with the file (if anything), and the summary.
func (r *ExportReport) Text(l Lang) string {
	var b strings.Builder
	for i, g := range r.Games {
		b.WriteString(msg(mPxGame, i+1, len(r.Games), g.ID, g.Report.Verdict().Headline).In(l) + "\n")
	}
	if r.Problem != nil {
		b.WriteString("\n" + r.Problem.In(l) + "\n")
	}
	checked, invalid, notChecked := r.counts()
	b.WriteString("\n" + msg(mPxSummary, len(r.Games), r.Header.Player, r.Header.Emitter, checked, invalid, notChecked).In(l) + "\n")
	return b.String()
}

// JSONExport is the --json form of an export's report.
type JSONExport struct {
	Format  string            `json:"format"`
	Emitter string            `json:"emitter"`
	Player  string            `json:"player"`
	Exit    int               `json:"exit"`
	Problem string            `json:"problem,omitempty"`
	Games   []JSONExportGame  `json:"games"`
	Summary JSONExportSummary `json:"summary"`
}

// A JSONExportGame is one game of JSONExport: its id and its report, as
// Report.JSON gives it.
type JSONExportGame struct {
	Game   string          `json:"game"`
	Report json.RawMessage `json:"report"`
}

// JSONExportSummary counts the games of JSONExport.
type JSONExportSummary struct {
	Games      int `json:"games"`
	Checked    int `json:"checked"`
	Invalid    int `json:"invalid"`
	NotChecked int `json:"notChecked"`
}

// JSON is the export's report as one JSON object (JSONExport), indented
// as Report.JSON is.
func (r *ExportReport) JSON(l Lang) []byte {
	out := JSONExport{Format: ExportFormat, Emitter: r.Header.Emitter, Player: r.Header.Player, Exit: r.Exit(), Games: []JSONExportGame{}}
	if r.Problem != nil {
		out.Problem = r.Problem.In(l)
	}
	for _, g := range r.Games {
		out.Games = append(out.Games, JSONExportGame{Game: g.ID, Report: g.Report.JSON(l)})
	}
	out.Summary.Games = len(r.Games)
	out.Summary.Checked, out.Summary.Invalid, out.Summary.NotChecked = r.counts()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic("verifier: encoding the export's report: " + err.Error()) // only plain values: cannot fail
	}
	return b.Bytes()
}
