package verifier

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/events/dice"
)

// verdictNeeds says, for each sentence a verdict can say, the checks that
// must have passed for it to be said. A sentence not listed claims nothing
// of its own (a limit, a failure, what was not checked).
var verdictNeeds = map[msgID][]string{
	mSuPass:          {CheckCommitment, CheckRolls, CheckSequence},
	mVdUntiedHead:    {CheckCommitment, CheckRolls, CheckSequence},
	mVdDiceTav:       {CheckCommitment, CheckRolls},
	mVdDiceAnc:       {CheckCommitment, CheckRolls, CheckAnchor},
	mVdDicePer:       {CheckCommitment, CheckRolls},
	mVdSealSeen:      {CheckExpected, CheckCommitment},
	mVdPerSeen:       {CheckExpected, CheckCommitment},
	mVdSealLogged:    {CheckLogSignature, CheckLogOrder, CheckLogInclusion},
	mVdSealLoggedAnc: {CheckLogSignature, CheckLogOrder, CheckLogInclusion},
	mVdAnchor:        {CheckAnchor},
	mVdInLog:         {CheckLogSignature, CheckLogInclusion},
}

// schemeSays are the sentences a verdict may say of each scheme, from
// what the scheme proves and does not prove (docs/SCHEMES.md §9): a
// per-roll-v1 verdict never says a seal was fixed before the first roll.
var schemeSays = map[string][]msgID{
	dice.Tavlarena: {mVdDiceTav, mVdSealSeen, mVdSealLogged, mVdLimitTav},
	dice.Anchored:  {mVdDiceAnc, mVdSealSeen, mVdSealLoggedAnc, mVdAnchor, mVdLimitAnc},
	dice.PerRoll:   {mVdDicePer, mVdPerSeen, mVdLimitPer},
}

var schemeLimit = map[string]msgID{dice.Tavlarena: mVdLimitTav, dice.Anchored: mVdLimitAnc, dice.PerRoll: mVdLimitPer}

// TestVerdictPerScheme derives the verdict of every vector and holds each
// sentence to the checks behind it and to its scheme: a sentence is said
// only when the checks that show it passed; a scheme's sentences only of
// that scheme; every valid verdict says the scheme's main limit (or, for a
// game against the computer, that the dice were on the player's device);
// a verdict about the log only when the log's key checked its signature.
func TestVerdictPerScheme(t *testing.T) {
	perScheme := map[string]int{}
	for _, v := range loadVectors(t) {
		r := verifyVector(t, v)
		if r.tlogProof {
			continue
		}
		vd := r.Verdict()
		status := map[string]Status{}
		for _, c := range r.Checks {
			status[c.Name] = c.Status
		}
		ids := []msgID{vd.Headline.id}
		for _, m := range vd.Details {
			ids = append(ids, m.id)
		}
		for _, id := range ids {
			for _, need := range verdictNeeds[id] {
				if status[need] != Pass && !(need == CheckAnchor && r.Scheme != dice.Anchored) {
					t.Errorf("%s: the verdict says %q, but %s is %q", v.Name, catalog[id].In(English), need, status[need])
				}
			}
			for scheme, says := range schemeSays {
				if scheme != r.Scheme && slices.Contains(says, id) && !slices.Contains(schemeSays[r.Scheme], id) {
					t.Errorf("%s (%s): the verdict says %s's %q", v.Name, r.Scheme, scheme, catalog[id].In(English))
				}
			}
		}
		// The statements too: each scheme's own words of what the log's
		// order shows; per-roll-v1's never a seal fixed before the first roll.
		notOf := map[string][]msgID{
			dice.Tavlarena: {mStBundleSignedAnc, mStBundleSignedPer},
			dice.Anchored:  {mStBundleSigned, mStBundleSignedPer, mStSealSeen, mStSealIf},
			dice.PerRoll:   {mStBundleSigned, mStBundleSignedAnc, mStSealSeen, mStSealIf, mStFpSeen},
		}
		for _, m := range r.Proves() {
			if slices.Contains(notOf[r.Scheme], m.id) {
				t.Errorf("%s (%s): the statement says %q", v.Name, r.Scheme, catalog[m.id].In(English))
			}
		}
		switch r.Exit() {
		case 0:
			perScheme[r.Scheme]++
			limit := schemeLimit[r.Scheme]
			if r.facts.computer {
				limit = mVdLimitComputer
			}
			if !slices.Contains(ids, limit) {
				t.Errorf("%s: a valid verdict does not say the scheme's limit %q", v.Name, catalog[limit].In(English))
			}
			tied := status[CheckLogSignature] == Pass
			if want := VerdictChecked; r.facts.bundle && !tied {
				if vd.Kind != VerdictUntied || !slices.Contains(ids, mVdUntied) {
					t.Errorf("%s: a bundle not tied to a log: verdict %s %v", v.Name, vd.Kind, ids)
				}
			} else if vd.Kind != want {
				t.Errorf("%s: verdict %s, want %s", v.Name, vd.Kind, want)
			}
		case 1:
			if vd.Kind != VerdictFailed && vd.Kind != VerdictWrongSeal || len(vd.Details) == 0 {
				t.Errorf("%s: exit 1, verdict %s %v", v.Name, vd.Kind, ids)
			}
			if (vd.Kind == VerdictWrongSeal) != slices.Equal(r.Failed(), []string{CheckExpected}) {
				t.Errorf("%s: verdict %s, failed %v", v.Name, vd.Kind, r.Failed())
			}
		case 2:
			if vd.Kind != VerdictBadInput {
				t.Errorf("%s: exit 2, verdict %s", v.Name, vd.Kind)
			}
		}
	}
	for _, s := range []string{dice.Tavlarena, dice.Anchored, dice.PerRoll} {
		if perScheme[s] < 3 {
			t.Errorf("only %d valid vectors of %s", perScheme[s], s)
		}
	}
}

// TestNoKeyNoClaim (issue 26): a proof bundle whose checkpoint another key
// signed under the same origin is valid without a log key, exit 0 as the
// exit code contract says, but the verdict, the last line and --json say
// that nothing ties the game to a log: tiedToLog is false and log-signature
// is among the unchecked. Given the log's key it fails.
func TestNoKeyNoClaim(t *testing.T) {
	v := vectorNamed(t, "bundle-wrong-log-key") // the checkpoint is signed by another key of the same origin
	b, err := os.ReadFile(v.Path)
	if err != nil {
		t.Fatal(err)
	}
	if r := Verify(b, optionsOf(t, v)); r.Exit() != 1 || !slices.Equal(r.Failed(), []string{CheckLogSignature}) {
		t.Fatalf("with the log's key: exit %d, failed %v", r.Exit(), r.Failed())
	}
	r := Verify(b, Options{})
	if r.Exit() != 0 {
		t.Fatalf("without a key: exit %d, failed %v", r.Exit(), r.Failed())
	}
	for _, l := range Langs() {
		var j JSONReport
		if err := json.Unmarshal(r.JSON(l), &j); err != nil {
			t.Fatal(err)
		}
		if j.TiedToLog || !slices.Contains(j.Unchecked, CheckLogSignature) || j.Verdict.Kind != VerdictUntied ||
			j.Verdict.Headline != catalog[mVdUntiedHead].In(l) || !slices.Contains(j.Verdict.Details, catalog[mVdUntied].In(l)) {
			t.Errorf("%s: --json says tiedToLog %v, unchecked %v, verdict %+v", l, j.TiedToLog, j.Unchecked, j.Verdict)
		}
		if !strings.HasSuffix(r.Text(l), "\n"+catalog[mSuPassNoKey].In(l)+"\n") || !strings.HasPrefix(catalog[mSuPassNoKey].In(l), everyRollChecked[l]) {
			t.Errorf("%s: the last line of the text is not %q", l, catalog[mSuPassNoKey].In(l))
		}
		for _, m := range r.DoesNotProve() {
			if m.id == mStBundleNoKey {
				goto said
			}
		}
		t.Errorf("%s: what it does not prove does not say the game is not tied to a log", l)
	said:
	}
	// With the right key for that signature, it is tied.
	var j JSONReport
	good := vectorNamed(t, "bundle-tavlarena-10-rolls")
	if err := json.Unmarshal(verifyVector(t, good).JSON(English), &j); err != nil || !j.TiedToLog || j.Verdict.Kind != VerdictChecked {
		t.Errorf("bundle-tavlarena-10-rolls with its key: tiedToLog %v, verdict %s (%v)", j.TiedToLog, j.Verdict.Kind, err)
	}
}

// flagRE matches a command-line flag.
var flagRE = regexp.MustCompile(`(^|[^\w-])--[a-z][a-z-]+`)

// TestNoFlagsInReports: no message of the verifier names a command-line
// flag, in any language, so that the pages, which show the verifier's
// reports and statements, never do; the command line's own texts (package
// cli: its usage and errors) may.
func TestNoFlagsInReports(t *testing.T) {
	for _, x := range Texts() {
		for i, s := range x.Words() {
			if m := flagRE.FindString(s); m != "" {
				t.Errorf("%s (%s) names the flag %q: %q", x.Name(), Langs()[i], strings.TrimSpace(m), s)
			}
		}
	}
	// And the reports as rendered, every vector in every language.
	for _, v := range loadVectors(t) {
		r := verifyVector(t, v)
		for _, l := range Langs() {
			for _, out := range [][]byte{[]byte(r.Text(l)), r.JSON(l)} {
				if m := flagRE.Find(out); m != nil {
					t.Errorf("%s (%s): the report names %q", v.Name, l, m)
				}
			}
		}
	}
}

// TestRollNumbers: every text counts rolls from 1, as players do; the
// --json keeps the file's own numbers (roll.index, roll.n, from 0).
func TestRollNumbers(t *testing.T) {
	r := verifyVector(t, vectorNamed(t, "tavlarena-flipped-die"))
	c, _ := r.Check(CheckRolls)
	if c.Roll == nil || c.Roll.N == nil {
		t.Fatalf("no first wrong roll: %+v", c)
	}
	n := int(*c.Roll.N)
	for _, l := range Langs() {
		word := map[Lang]string{English: "roll %d", Turkish: "%d. atış", Arabic: "الرمية %d"}[l]
		if d := c.Detail.In(l); !strings.Contains(d, sprintf(word, n+1)) || strings.Contains(d, "n=") {
			t.Errorf("%s: the rolls check says %q, want roll %d (n=%d in the file)", l, d, n+1, n)
		}
		if d := r.Verdict().Details[0].In(l); !strings.Contains(strings.ToLower(d), strings.ToLower(sprintf(word, n+1))) {
			t.Errorf("%s: the verdict says %q, want roll %d", l, d, n+1)
		}
	}
	var j JSONReport
	if err := json.Unmarshal(r.JSON(English), &j); err != nil {
		t.Fatal(err)
	}
	for _, jc := range j.Checks {
		if jc.Name == CheckRolls && (jc.Roll == nil || *jc.Roll.N != uint32(n)) {
			t.Errorf("--json: roll %+v, want n=%d as in the file", jc.Roll, n)
		}
	}
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }
