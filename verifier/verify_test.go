package verifier

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/internal/testonly"
)

// loadVectors returns the vectors of testdata/dice and testdata/moves.
func loadVectors(t testing.TB) []testonly.Vector {
	t.Helper()
	vs, err := testonly.LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func optionsOf(t testing.TB, v testonly.Vector) Options {
	t.Helper()
	var o Options
	if v.ExpectedCommitment != nil {
		e, err := ParseExpected(*v.ExpectedCommitment)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		o.Expected = e
	}
	if v.LogKey != nil {
		k, err := ParseLogKey(*v.LogKey)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		o.LogKey = k
	}
	if v.EmitterKeys != nil {
		k, err := ParseEmitterKeys(v.EmitterKeys...)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		o.EmitterKeys = k
	}
	if v.WitnessPolicy != nil {
		text, err := os.ReadFile(v.PolicyPath)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ParseWitnessPolicy(text)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		o.WitnessPolicy = p
	}
	return o
}

func verifyVector(t testing.TB, v testonly.Vector) *Report {
	t.Helper()
	b, err := os.ReadFile(v.Path)
	if err != nil {
		t.Fatal(err)
	}
	return Verify(b, optionsOf(t, v))
}

var everyRollChecked = map[Lang]string{English: "Every roll checked", Turkish: "Her atış kontrol edildi", Arabic: "تم التحقق من كل رمية"}

// validSummary is what the last line of a valid report starts with.
func validSummary(r *Report, l Lang) string {
	if r.Event != nil {
		return msg(mSuTlogPass).In(l)
	}
	return everyRollChecked[l]
}

// TestVectors runs every vector of testdata/dice through the library: the
// exit code, the exact set of failing checks, and the rendering in every
// language.
func TestVectors(t *testing.T) {
	vs := loadVectors(t)
	schemes := map[string]map[int]int{}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			r := verifyVector(t, v)
			if got := r.Exit(); got != v.Exit {
				t.Errorf("exit %d, want %d (%s)\n%s", got, v.Exit, v.Note, r.Text(English))
			}
			failed := r.Failed()
			slices.Sort(failed)
			if !slices.Equal(failed, v.Failing) {
				t.Errorf("failed checks %v, want %v\n%s", failed, v.Failing, r.Text(English))
			}
			if schemes[r.Scheme] == nil {
				schemes[r.Scheme] = map[int]int{}
			}
			schemes[r.Scheme][v.Exit]++
			checkRendering(t, r)
		})
	}
	for _, s := range []string{dice.Tavlarena, dice.Anchored, dice.PerRoll} {
		if schemes[s][0] == 0 || schemes[s][1] == 0 {
			t.Errorf("scheme %s: %d valid and %d invalid vectors, want some of each", s, schemes[s][0], schemes[s][1])
		}
	}
	if schemes[""][2] == 0 {
		t.Error("no malformed vectors")
	}
	// The proof-bundle and tlog-proof vectors: some of each outcome.
	kinds := map[string]map[int]int{"bundle": {}, "tlog-proof": {}}
	for _, v := range vs {
		switch {
		case v.IsBundle():
			kinds["bundle"][v.Exit]++
		case v.IsTlogProof():
			kinds["tlog-proof"][v.Exit]++
		}
	}
	for k, n := range kinds {
		if n[0] == 0 || n[1] == 0 || n[2] == 0 {
			t.Errorf("%s vectors: %d valid, %d invalid, %d malformed; want some of each", k, n[0], n[1], n[2])
		}
	}
}

// checkRendering: one line per check, the last line is the summary, "Every
// roll checked" exactly when the exit code is 0, and the JSON agrees.
func checkRendering(t *testing.T, r *Report) {
	t.Helper()
	for _, l := range Langs() {
		text := r.Text(l)
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		if last := lines[len(lines)-1]; last != r.Summary().In(l) {
			t.Errorf("%s: last line %q, want the summary", l, last)
		}
		if got, want := strings.HasPrefix(lines[len(lines)-1], validSummary(r, l)), r.Exit() == 0; got != want {
			t.Errorf("%s: summary says %q: %v, exit %d", l, validSummary(r, l), got, r.Exit())
		}
		for i, c := range r.Checks {
			st := msg(statusMsg[c.Status]).In(l)
			if !strings.HasPrefix(lines[i], st) || !strings.Contains(lines[i], c.Name) {
				t.Errorf("%s: line %d %q is not the %s line of check %s", l, i, lines[i], c.Status, c.Name)
			}
		}
		if n := strings.Count(text, "\n"); n < len(r.Checks)+1 {
			t.Errorf("%s: %d lines for %d checks", l, n, len(r.Checks))
		}
		var j JSONReport
		if err := json.Unmarshal(r.JSON(l), &j); err != nil {
			t.Fatalf("%s: JSON: %v", l, err)
		}
		if j.Exit != r.Exit() || len(j.Checks) != len(r.Checks) || j.Summary != r.Summary().In(l) || j.Lang != l {
			t.Errorf("%s: JSON disagrees with the report: %+v", l, j)
		}
		if (len(j.Proves) > 0) != (r.Exit() == 0) {
			t.Errorf("%s: JSON proves %d statements with exit %d", l, len(j.Proves), r.Exit())
		}
	}
}

// TestCheckOrder: the checks come in the documented order, the log checks
// are always present for a parsed file, and anchor only for anchored-v1.
func TestCheckOrder(t *testing.T) {
	for _, v := range loadVectors(t) {
		r := verifyVector(t, v)
		var names []string
		for _, c := range r.Checks {
			names = append(names, c.Name)
		}
		if r.Exit() == 2 {
			if !slices.Equal(names, []string{CheckFormat}) {
				t.Errorf("%s: checks %v after an input error", v.Name, names)
			}
			continue
		}
		want := CheckNames()
		if r.Scheme != dice.Anchored {
			want = slices.DeleteFunc(want, func(s string) bool { return s == CheckAnchor })
		}
		if v.IsTlogProof() {
			want = []string{CheckFormat, CheckLogInclusion, CheckLogSignature, CheckLogWitnesses, CheckLogEmitter}
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s: checks %v, want %v", v.Name, names, want)
		}
	}
}

func vectorNamed(t *testing.T, name string) testonly.Vector {
	t.Helper()
	for _, v := range loadVectors(t) {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no vector %s", name)
	return testonly.Vector{}
}

// TestFirstWrongRoll: the failing rolls check names the first wrong roll,
// the dice the file claims and the dice the seed gives.
func TestFirstWrongRoll(t *testing.T) {
	for _, name := range []string{"tavlarena-flipped-die", "anchored-flipped-die", "per-roll-flipped-die", "tavlarena-swapped-contributions"} {
		v := vectorNamed(t, name)
		b, _ := os.ReadFile(v.Path)
		ev, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := verifyVector(t, v).Check(CheckRolls)
		if c.Status != Fail || c.Roll == nil || c.Roll.Claimed == nil || c.Roll.Recomputed == nil {
			t.Fatalf("%s: rolls check %+v", name, c)
		}
		ref := c.Roll
		// Recompute independently of the check: the first roll whose dice differ.
		first, claimed, recomputed := -1, dice.Dice{}, dice.Dice{}
		switch {
		case ev.Tavlarena != nil:
			r := dice.NewTavlarena(ev.Tavlarena.Seed, ev.Tavlarena.GameID, ev.Tavlarena.Contributions)
			for i, x := range ev.Tavlarena.Rolls {
				if d := r.Roll(x.N); d != x.Dice {
					first, claimed, recomputed = i, x.Dice, d
					break
				}
			}
		case ev.Anchored != nil:
			a := ev.Anchored
			r := dice.NewAnchored(a.Seed, dice.AnchoredBinding(a.MatchID, a.GameNo, a.Tokens, dice.Anchor{Chain: a.Anchor.Chain, Round: a.Anchor.Round, Randomness: a.Anchor.Randomness}))
			for i, x := range a.Rolls {
				if d := r.Roll(x.N); d != x.Dice {
					first, claimed, recomputed = i, x.Dice, d
					break
				}
			}
		default:
			p := ev.PerRoll
			for i, x := range p.Rolls {
				if d := dice.NewPerRoll(x.Seed, p.MatchID, x.RollID, x.Second).Roll(0); d != x.Dice {
					first, claimed, recomputed = i, x.Dice, d
					break
				}
			}
			if ref.RollID != p.Rolls[first].RollID.String() || ref.N != nil {
				t.Errorf("%s: roll ref %+v, want rollId %s", name, ref, p.Rolls[first].RollID)
			}
		}
		if ref.Index != first || *ref.Claimed != claimed || *ref.Recomputed != recomputed {
			t.Errorf("%s: first wrong roll %d %v→%v, want %d %v→%v", name, ref.Index, *ref.Claimed, *ref.Recomputed, first, claimed, recomputed)
		}
		for _, l := range Langs() {
			d := c.Detail.In(l)
			if !strings.Contains(d, claimed.String()) || !strings.Contains(d, recomputed.String()) {
				t.Errorf("%s (%s): detail %q does not name the dice %v and %v", name, l, d, claimed, recomputed)
			}
		}
	}
}

// TestInputErrorsNameTheField: an input error names the JSON path of the
// field, in every language.
func TestInputErrorsNameTheField(t *testing.T) {
	tests := map[string]string{
		"missing-seed":                   "seed",
		"seed-short":                     "seed",
		"seed-uppercase-hex":             "seed",
		"game-id-uppercase":              "gameId",
		"seats-three":                    "seats",
		"contributions-short":            "contributions[1]",
		"die-seven":                      "rolls[1].dice[0]",
		"dice-three":                     "rolls[1].dice",
		"roll-n-negative":                "rolls[1].n",
		"roll-kind-unknown":              "rolls[1].kind",
		"opening-unknown":                "settings.opening",
		"opponent-unknown":               "settings.opponent",
		"settings-array":                 "settings",
		"unknown-scheme":                 "scheme",
		"missing-format":                 "format",
		"anchored-round-string":          "anchor.round",
		"anchored-token-257-bytes":       "tokens[1]",
		"anchored-sealed-at-date-only":   "sealedAt",
		"anchored-game-no-2^32":          "gameNo",
		"per-roll-second-missing":        "rolls[1].second",
		"per-roll-second-from-unknown":   "rolls[1].secondFrom",
		"per-roll-settings-not-object":   "settings",
		"log-not-object":                 "log",
		"anchored-signature-odd-hex":     "anchor.signature",
		"anchored-randomness-short":      "anchor.randomness",
		"per-roll-commitment-short":      "rolls[0].commitment",
		"anchored-sealed-at-unix-number": "sealedAt",
		"bundle-checkpoint-missing":      "log.checkpoint",
		"bundle-checkpoint-not-a-note":   "log.checkpoint",
		"bundle-hashes-missing":          "log.hashes",
		"bundle-entries-empty":           "log.entries",
		"bundle-index-negative":          "log.entries[1].index",
		"bundle-index-string":            "log.entries[1].index",
		"bundle-leaf-not-string":         "log.entries[2].leaf",
		"bundle-leaf-empty":              "log.entries[2].leaf",
		"bundle-proof-ref-out-of-range":  "log.entries[3].proof[2]",
		"bundle-proof-ref-negative":      "log.entries[3].proof[0]",
		"bundle-proof-too-long":          "log.entries[0].proof",
	}
	for name, field := range tests {
		v := vectorNamed(t, name)
		b, _ := os.ReadFile(v.Path)
		_, err := Parse(b)
		var ie *InputError
		if !errors.As(err, &ie) || !errors.Is(err, ErrInput) {
			t.Errorf("%s: Parse error %v, want an *InputError", name, err)
			continue
		}
		if ie.Field != field {
			t.Errorf("%s: field %q, want %q (%v)", name, ie.Field, field, err)
		}
		c, _ := Verify(b, Options{}).Check(CheckFormat)
		for _, l := range Langs() {
			if d := c.Detail.In(l); !strings.Contains(d, field) {
				t.Errorf("%s (%s): %q does not name %s", name, l, d, field)
			}
		}
	}
}

func TestParseExpected(t *testing.T) {
	c := [32]byte{0x2b, 0x24, 0x32, 0xfd, 0x9f, 0x01}
	full := "2b2432fd9f01" + strings.Repeat("00", 26)
	for _, s := range []string{full, strings.ToUpper(full), " " + full + " ", "5CJ3-5ZCZ", "5cj35zcz", "5CJ3 5ZCZ"} {
		e, err := ParseExpected(s)
		if err != nil || !e.Matches(c) {
			t.Errorf("ParseExpected(%q) = %v, %v: does not match", s, e, err)
		}
	}
	other := c
	other[31] = 1
	e, _ := ParseExpected(full)
	if e.Matches(other) {
		t.Error("a full commitment matches a different one")
	}
	if s, _ := ParseExpected("5CJ3-5ZCZ"); !s.Matches(other) {
		t.Error("a seal code does not match a commitment with the same first 40 bits")
	}
	for _, s := range []string{"", "0x" + full[2:], full[:63], full + "0", "5CJ3-5ZC", "5CJ3-5ZCU", "zz" + full[2:]} {
		if _, err := ParseExpected(s); !errors.Is(err, ErrBadFlag) {
			t.Errorf("ParseExpected(%q) = %v, want ErrBadFlag", s, err)
		}
	}
}

func TestParseLogKey(t *testing.T) {
	if _, err := ParseLogKey(*vectorNamed(t, "tavlarena-log-key-without-log").LogKey); err != nil {
		t.Errorf("vector log key: %v", err)
	}
	for _, s := range []string{"", "log.example", "log.example+00000000+AQ==", "a+b+c"} {
		if _, err := ParseLogKey(s); !errors.Is(err, ErrBadFlag) {
			t.Errorf("ParseLogKey(%q) = %v, want ErrBadFlag", s, err)
		}
	}
}

// TestStatements: the honest statements follow the scheme and the settings.
func TestStatements(t *testing.T) {
	has := func(ms []Message, id msgID) bool {
		return slices.ContainsFunc(ms, func(m Message) bool { return m.id == id })
	}
	tests := []struct {
		vector      string
		proves, not []msgID
		notNot      []msgID
	}{
		{"tavlarena-worked-example", []msgID{mStTavDice, mStSealIf, mStTavPlayers}, []msgID{mStTavServerKnew, mStNoExpected}, []msgID{mStComputerPeek}},
		{"tavlarena-worked-example-seal-code", []msgID{mStSealSeen}, []msgID{mStTavServerKnew}, []msgID{mStNoExpected}},
		{"tavlarena-against-computer", []msgID{mStComputerProves}, []msgID{mStComputerPeek}, []msgID{mStTavServerKnew}},
		{"anchored-quicknet-657413-60-rolls", []msgID{mStAncDice, mStAncAnchor}, []msgID{mStAncServerKnew, mStAncSealTime, mStNoExpectedAnc}, []msgID{mStComputerPeekAnc}},
		{"anchored-fingerprint-seal-code", []msgID{mStFpSeen}, []msgID{mStAncServerKnew}, []msgID{mStNoExpectedAnc}},
		{"anchored-against-computer", []msgID{mStAncAnchorComputer, mStComputerProves}, []msgID{mStComputerPeekAnc}, []msgID{mStAncServerKnew}},
		{"per-roll-client-60-rolls", []msgID{mStPerDice}, []msgID{mStPerBefore, mStPerClientLabel}, []msgID{mStPerServer}},
		{"per-roll-server-60-rolls", []msgID{mStPerDice}, []msgID{mStPerBefore, mStPerServer}, []msgID{mStPerClientLabel}},
		{"per-roll-mixed", nil, []msgID{mStPerServer, mStPerClientLabel}, nil},
		{"per-roll-against-computer", []msgID{mStComputerProves}, []msgID{mStComputerPeek}, nil},
		{"per-roll-expected-commitment-of-roll", []msgID{mStPerSeen}, nil, nil},
	}
	for _, tt := range tests {
		r := verifyVector(t, vectorNamed(t, tt.vector))
		if r.Exit() != 0 {
			t.Fatalf("%s: exit %d", tt.vector, r.Exit())
		}
		for _, id := range tt.proves {
			if !has(r.Proves(), id) {
				t.Errorf("%s: does not prove %q", tt.vector, msg(id).In(English))
			}
		}
		for _, id := range tt.not {
			if !has(r.DoesNotProve(), id) {
				t.Errorf("%s: does not say it does not prove %q", tt.vector, msg(id).In(English))
			}
		}
		for _, id := range tt.notNot {
			if has(r.DoesNotProve(), id) || has(r.Proves(), id) {
				t.Errorf("%s: wrongly says %q", tt.vector, msg(id).In(English))
			}
		}
	}
	// An invalid proof proves nothing.
	if r := verifyVector(t, vectorNamed(t, "tavlarena-flipped-die")); len(r.Proves()) != 0 || len(r.DoesNotProve()) != 0 {
		t.Error("a failed report makes statements")
	}
}
