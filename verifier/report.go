package verifier

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zarlog/zarlog/events/dice"
)

// The names of the checks, in the order a Report lists them. They are
// stable identifiers, the same in every language and in --json output; a
// later version may add checks but never changes what an existing name
// means.
const (
	CheckFormat     = "format"              // a well-formed dice-proof-v1 file (failure: exit 2)
	CheckCommitment = "commitment"          // commitment / fingerprint / per-roll commitments recomputed from the seeds
	CheckExpected   = "expected-commitment" // the commitment the user saw before the game (--expected-commitment)
	CheckAnchor     = "anchor"              // anchored-v1 only: the drand beacon and its timing
	CheckRolls      = "rolls"               // every roll recomputed and equal to the dice played
	CheckSequence   = "sequence"            // the roll-sequence rules
	// Proof-bundle checks (the "log" member; see docs/FORMATS.md §3). They
	// are "skipped" for plain evidence files.
	CheckLogInclusion = "log-inclusion"          // every leaf's inclusion proof against the checkpoint
	CheckLogSignature = "log-signature"          // the checkpoint's signature against --log-key
	CheckLogOrder     = "log-order"              // the entries are the game's events, in log order, the commit first
	CheckLogAgreement = "log-agreement"          // the leaves replay to the game, and the top-level fields agree with it
	CheckLogWitnesses = "log-witnesses"          // the checkpoint's cosignatures satisfy --witness-policy
	CheckLogEmitter   = "log-emitter-signatures" // the binding events are signed by an --emitter-key
	// CheckMoves replays the moves of a proof bundle's game through the
	// rules engine (docs/RULES.md): skipped for plain evidence files and for
	// games whose settings do not declare their moves logged.
	CheckMoves = "moves"
)

// CheckNames returns every check name in report order.
func CheckNames() []string {
	return []string{
		CheckFormat, CheckCommitment, CheckExpected, CheckAnchor, CheckRolls, CheckSequence,
		CheckLogInclusion, CheckLogSignature, CheckLogOrder, CheckLogAgreement, CheckLogWitnesses, CheckLogEmitter,
		CheckMoves,
	}
}

var checkTitles = map[string]msgID{
	CheckFormat:       mTitleFormat,
	CheckCommitment:   mTitleCommitment,
	CheckExpected:     mTitleExpected,
	CheckAnchor:       mTitleAnchor,
	CheckRolls:        mTitleRolls,
	CheckSequence:     mTitleSequence,
	CheckLogInclusion: mTitleLogInclusion,
	CheckLogSignature: mTitleLogSignature,
	CheckLogOrder:     mTitleLogOrder,
	CheckLogAgreement: mTitleLogAgreement,
	CheckLogWitnesses: mTitleLogWitnesses,
	CheckLogEmitter:   mTitleLogEmitter,
	CheckMoves:        mTitleMoves,
}

// CheckTitles returns the title of each check by its name, in every
// language (in English the title is the name). The map is new on every
// call.
func CheckTitles() map[string]Text {
	out := make(map[string]Text, len(checkTitles))
	for name, id := range checkTitles {
		out[name] = catalog[id]
	}
	return out
}

// A Status is the outcome of one check.
type Status string

// Check outcomes.
const (
	Pass    Status = "pass"
	Fail    Status = "fail"
	Skipped Status = "skipped" // not run: its input was not given (a flag, a log member)
)

var statusMsg = map[Status]msgID{Pass: mStPass, Fail: mStFail, Skipped: mStSkipped}

// A Check is the outcome of one named check.
type Check struct {
	Name   string  // one of the Check* constants
	Status Status  // pass, fail or skipped
	Detail Message // what was found, translatable
	Field  string  // for a failed format check: the JSON path of the bad field, if any
	Roll   *RollRef
	Move   *MoveRef // for a failed moves check: the event the rules engine refused
}

// A RollRef identifies the first wrong roll of a failed check.
type RollRef struct {
	Index      int        `json:"index"`                // position in the file's rolls array
	N          *uint32    `json:"n,omitempty"`          // roll number (per-game schemes)
	RollID     string     `json:"rollId,omitempty"`     // roll id (per-roll-v1)
	Claimed    *dice.Dice `json:"claimed,omitempty"`    // the dice the file says were played
	Recomputed *dice.Dice `json:"recomputed,omitempty"` // the dice the seed gives
}

// Number returns the roll's number as players count: from 1, the first
// roll of the game (or of the per-roll-v1 match) being roll 1. It is n + 1
// where the file numbers its rolls, the position + 1 otherwise.
func (r *RollRef) Number() int {
	if r.N != nil {
		return int(*r.N) + 1
	}
	return r.Index + 1
}

// A Report is the outcome of verifying one evidence file (or one
// tlog-proof): the checks in the order of CheckNames (checks that do not
// apply are left out; after an input error only the failed format check is
// present) and the honest statement of what the evidence proves.
type Report struct {
	Scheme    string // "" if the file could not be parsed
	Checks    []Check
	Event     *LoggedEvent // the event of a tlog-proof; nil for evidence files
	proves    []Message
	notProves []Message
	noLogKey  bool // a proof bundle whose checkpoint signature was not checked
	tlogProof bool // the report of a tlog-proof file
	facts     verdictFacts
	// perRollSeen is the index of the per-roll-v1 roll whose commitment
	// the user gave (expected-commitment passed); -1 otherwise.
	perRollSeen int
}

// A LoggedEvent is the event a tlog-proof file proves is in the log.
type LoggedEvent struct {
	Index uint64 `json:"index"` // its index in the log
	Leaf  []byte `json:"-"`     // the leaf: the event's canonical JSON
}

// Exit returns the verifier's exit code: 2 if the file is not a
// well-formed evidence file, 1 if any check failed, 0 if every check that
// applies passed.
func (r *Report) Exit() int {
	code := 0
	for _, c := range r.Checks {
		if c.Status == Fail {
			if c.Name == CheckFormat {
				return 2
			}
			code = 1
		}
	}
	return code
}

// Check returns the check with the given name.
func (r *Report) Check(name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// Failed returns the names of the failed checks, in report order.
func (r *Report) Failed() []string {
	var out []string
	for _, c := range r.Checks {
		if c.Status == Fail {
			out = append(out, c.Name)
		}
	}
	return out
}

// Proves returns what the evidence proves; empty unless every check passed.
func (r *Report) Proves() []Message {
	if r.Exit() != 0 {
		return nil
	}
	return r.proves
}

// DoesNotProve returns what the evidence does not prove; empty unless
// every check passed.
func (r *Report) DoesNotProve() []Message {
	if r.Exit() != 0 {
		return nil
	}
	return r.notProves
}

// Summary returns the report's last line: "Every roll checked" only when
// every check that applies passed — for a proof bundle whose checkpoint
// signature was not checked (no --log-key), followed by that fact — and for a
// tlog-proof "The event is in the log".
func (r *Report) Summary() Message {
	switch {
	case r.Exit() == 0 && r.tlogProof:
		return msg(mSuTlogPass)
	case r.Exit() == 0 && r.noLogKey:
		return msg(mSuPassNoKey)
	case r.Exit() == 0:
		return msg(mSuPass)
	case r.Exit() == 1:
		return msg(mSuFail, strings.Join(r.Failed(), ", "))
	case r.tlogProof:
		return msg(mSuInputTlog)
	}
	return msg(mSuInput)
}

// Text renders the report for a terminal in language l: one line per
// check, "<status> <title> (<name>): <detail>" (English titles are the
// names), then what the evidence proves and does not prove, and the summary
// as the last line. See docs/SCHEMES.md for the exact format.
func (r *Report) Text(l Lang) string {
	var b strings.Builder
	width := 0
	for _, id := range statusMsg {
		width = max(width, len([]rune(msg(id).In(l))))
	}
	for _, c := range r.Checks {
		st := msg(statusMsg[c.Status]).In(l)
		if l != Arabic { // padding means nothing once a line is laid out right to left
			st += strings.Repeat(" ", width-len([]rune(st)))
		}
		title := msg(checkTitles[c.Name]).In(l)
		if title != c.Name {
			title += " (" + c.Name + ")"
		}
		fmt.Fprintf(&b, "%s  %s: %s\n", st, title, c.Detail.In(l))
	}
	if r.Event != nil {
		b.WriteString("\n" + msg(mEvLine, r.Event.Index, string(r.Event.Leaf)).In(l) + "\n")
	}
	switch r.Exit() {
	case 0:
		b.WriteString("\n")
		writeList(&b, msg(mHProves).In(l), r.proves, l)
		writeList(&b, msg(mHNotProves).In(l), r.notProves, l)
	case 1:
		b.WriteString("\n" + msg(mSuFailNote).In(l) + "\n")
	}
	b.WriteString("\n" + r.Summary().In(l) + "\n")
	return b.String()
}

func writeList(b *strings.Builder, head string, items []Message, l Lang) {
	if len(items) == 0 {
		return
	}
	b.WriteString(head + "\n")
	for _, m := range items {
		b.WriteString("- " + m.In(l) + "\n")
	}
}

// JSONCheck is one check in the --json output.
type JSONCheck struct {
	Name   string   `json:"name"`
	Status Status   `json:"status"`
	Detail string   `json:"detail"`
	Field  string   `json:"field,omitempty"`
	Roll   *RollRef `json:"roll,omitempty"`
	Move   *MoveRef `json:"move,omitempty"`
}

// JSONEvent is the event of a tlog-proof in the --json output.
type JSONEvent struct {
	Index uint64          `json:"index"`
	Leaf  json.RawMessage `json:"leaf"` // the leaf itself: canonical JSON
}

// JSONVerdict is the verdict in the --json output: the report in a
// player's words (Report.Verdict).
type JSONVerdict struct {
	Kind     VerdictKind `json:"kind"`     // checked, untied, wrong-seal, failed, bad-input
	Headline string      `json:"headline"` // "Every roll checked", …
	Details  []string    `json:"details"`  // the sentences under it
}

// JSONReport is the --json output: one object.
type JSONReport struct {
	Scheme string `json:"scheme,omitempty"`
	Lang   Lang   `json:"lang"`
	Exit   int    `json:"exit"`   // 0, 1 or 2, as the process exit code
	Result string `json:"result"` // "valid", "invalid" or "bad-input"
	// TiedToLog reports whether the log-signature check passed: the
	// checkpoint that includes the game's events is signed by the log
	// whose key was given (or by a log of the witness policy). Without it
	// nothing ties the game to any log, whatever the exit code.
	TiedToLog bool `json:"tiedToLog"`
	// Unchecked lists the checks that were skipped (their input was not
	// given, or the file has no such part), in report order.
	Unchecked    []string    `json:"unchecked"`
	Event        *JSONEvent  `json:"event,omitempty"`
	Checks       []JSONCheck `json:"checks"`
	Proves       []string    `json:"proves"`
	DoesNotProve []string    `json:"doesNotProve"`
	Summary      string      `json:"summary"`
	Verdict      JSONVerdict `json:"verdict"`
}

// JSON renders the report as one JSON object (JSONReport) in language l,
// indented, with a final newline.
func (r *Report) JSON(l Lang) []byte {
	out := JSONReport{Scheme: r.Scheme, Lang: l, Exit: r.Exit(), Summary: r.Summary().In(l),
		Unchecked: []string{}, Checks: []JSONCheck{}, Proves: []string{}, DoesNotProve: []string{}}
	out.Result = [...]string{"valid", "invalid", "bad-input"}[out.Exit]
	for _, c := range r.Checks {
		switch {
		case c.Name == CheckLogSignature && c.Status == Pass:
			out.TiedToLog = true
		case c.Status == Skipped:
			out.Unchecked = append(out.Unchecked, c.Name)
		}
	}
	v := r.Verdict()
	out.Verdict = JSONVerdict{Kind: v.Kind, Headline: v.Headline.In(l), Details: []string{}}
	for _, m := range v.Details {
		out.Verdict.Details = append(out.Verdict.Details, m.In(l))
	}
	if r.Event != nil {
		out.Event = &JSONEvent{Index: r.Event.Index, Leaf: json.RawMessage(r.Event.Leaf)}
	}
	for _, c := range r.Checks {
		out.Checks = append(out.Checks, JSONCheck{c.Name, c.Status, c.Detail.In(l), c.Field, c.Roll, c.Move})
	}
	for _, m := range r.Proves() {
		out.Proves = append(out.Proves, m.In(l))
	}
	for _, m := range r.DoesNotProve() {
		out.DoesNotProve = append(out.DoesNotProve, m.In(l))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic("verifier: encoding the report: " + err.Error()) // only plain values: cannot fail
	}
	return b.Bytes()
}
