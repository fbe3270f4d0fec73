package verifier

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/merkle"
)

func parseVector(t *testing.T, name string) *Evidence {
	t.Helper()
	b, err := os.ReadFile(vectorNamed(t, name).Path)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := Parse(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ev
}

// TestBundleFailuresSayWhat: each failed bundle check names what failed:
// the first entry, the field, the witnesses, in every language.
func TestBundleFailuresSayWhat(t *testing.T) {
	tests := []struct {
		vector, check string
		want          []string // substrings of the English detail
	}{
		{"bundle-top-level-disagrees", CheckLogAgreement, []string{"rolls[7].dice[1]"}},
		{"bundle-commit-after-roll", CheckLogOrder, []string{"log.entries[0]", "before the game's commit"}},
		{"bundle-missing-entry", CheckLogOrder, []string{"log.entries[6] is seq 7", "seq 6 is due"}},
		{"bundle-missing-final-event", CheckLogOrder, []string{"not the game's final event (reveal)"}},
		{"bundle-extra-foreign-entry", CheckLogOrder, []string{"is an event of game"}},
		{"bundle-reordered-entries", CheckLogOrder, []string{"log.entries[5]", "does not come after log.entries[4]"}},
		{"bundle-token-after-beacon", CheckLogOrder, []string{"log.entries[3]", "after the drand beacon"}},
		{"bundle-bad-emitter-signature", CheckLogEmitter, []string{"log.entries[0] (seq 0, commit)", `"tavla-east"`}},
		{"bundle-emitter-key-of-another-emitter", CheckLogEmitter, []string{`"tavla-east"`}},
		{"bundle-witness-policy-unmet", CheckLogWitnesses, []string{"2 of the 3 in its list of witnesses"}},
		{"bundle-not-yet-witnessed", CheckLogWitnesses, []string{"none of the 3 in the policy's list of witnesses", "not witnessed yet"}},
		{"bundle-wrong-log-key", CheckLogSignature, []string{"no valid signature by the log key log.zarlog.example"}},
		{"bundle-swapped-checkpoint-other-log", CheckLogSignature, []string{`"other.zarlog.example"`, `not of the log "log.zarlog.example"`}},
		{"bundle-leaf-tampered", CheckRolls, []string{"1 of 10 rolls"}},
		{"bundle-commit-after-roll", CheckRolls, []string{"not checked"}},
	}
	for _, tt := range tests {
		r := verifyVector(t, vectorNamed(t, tt.vector))
		c, ok := r.Check(tt.check)
		if !ok || (c.Status != Fail && tt.check != CheckRolls) {
			t.Errorf("%s: %s %+v", tt.vector, tt.check, c)
			continue
		}
		for _, w := range tt.want {
			if d := c.Detail.In(English); !strings.Contains(d, w) {
				t.Errorf("%s: %s detail %q does not say %q", tt.vector, tt.check, d, w)
			}
		}
		// Identifiers (paths, names in quotes) are the same in every language.
		for _, w := range tt.want {
			for _, f := range strings.Fields(w) {
				if !strings.ContainsAny(f, `[."`) {
					continue
				}
				for _, l := range Langs() {
					if d := c.Detail.In(l); !strings.Contains(d, strings.Trim(f, "(),")) {
						t.Errorf("%s (%s): %q does not name %q", tt.vector, l, d, f)
					}
				}
			}
		}
	}
}

// TestBundleInclusionNamesFirstEntry: a failed log-inclusion names the
// first entry whose proof does not verify, found here entry by entry with
// merkle.CheckInclusion, and why.
func TestBundleInclusionNamesFirstEntry(t *testing.T) {
	n := 0
	for _, v := range loadVectors(t) {
		if !v.IsBundle() || !containsString(v.Failing, CheckLogInclusion) {
			continue
		}
		n++
		ev := parseVector(t, v.Name)
		l := ev.Log
		first := -1
		for i, e := range l.Entries {
			p := make([]merkle.Hash, len(e.Proof))
			for j, k := range e.Proof {
				p[j] = l.Hashes[k]
			}
			if merkle.CheckInclusion(merkle.LeafHash(e.Leaf), e.Index, l.Tree.Size, p, l.Tree.Hash) != nil {
				first = i
				break
			}
		}
		c, _ := verifyVector(t, v).Check(CheckLogInclusion)
		want := fmt.Sprintf("log.entries[%d] (index %d", first, l.Entries[max(first, 0)].Index)
		if first < 0 || !strings.Contains(c.Detail.In(English), want) {
			t.Errorf("%s: detail %q, want it to name %s", v.Name, c.Detail, want)
		}
		if v.Name == "bundle-truncated-proof" && !strings.Contains(c.Detail.In(English), "inclusion proof of") {
			t.Errorf("%s: detail %q does not give the proof's length", v.Name, c.Detail)
		}
	}
	if n < 3 {
		t.Errorf("%d bundle vectors fail log-inclusion, want at least 3", n)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestBundleHashTableFields: the hash table has one form; its errors name
// the hash.
func TestBundleHashTableFields(t *testing.T) {
	valid := parseVector(t, "bundle-tavlarena-10-rolls")
	last := len(valid.Log.Hashes) // the appended hash's position
	for name, field := range map[string]string{
		"bundle-hash-not-hex":   "log.hashes[2]",
		"bundle-duplicate-hash": fmt.Sprintf("log.hashes[%d]", last),
		"bundle-unused-hash":    fmt.Sprintf("log.hashes[%d]", last),
	} {
		b, _ := os.ReadFile(vectorNamed(t, name).Path)
		_, err := Parse(b)
		ie, ok := err.(*InputError)
		if !ok || ie.Field != field {
			t.Errorf("%s: error %v, want one naming %s", name, err, field)
		}
	}
}

// TestBundleSummaries: without --log-key the last line says that the
// log's signature was not checked; the statements say what the log shows.
func TestBundleSummaries(t *testing.T) {
	for _, tt := range []struct {
		vector  string
		summary msgID
		proves  []msgID
		not     []msgID
	}{
		{"bundle-tavlarena-10-rolls", mSuPass, []msgID{mStBundle, mStBundleSigned, mStEmitterSigned}, []msgID{mStBundleNoWitness, mStNoExpectedLog}},
		{"bundle-tavlarena-no-keys", mSuPassNoKey, []msgID{mStBundle}, []msgID{mStBundleNoKey, mStEmitterUnchecked, mStNoExpected}},
		{"bundle-witness-policy-met", mSuPass, []msgID{mStBundleWitnessed}, []msgID{mStEmitterUnchecked}},
		{"bundle-log-key-from-policy", mSuPass, []msgID{mStBundleSigned, mStBundleWitnessed}, nil},
		{"bundle-anchored-8-rolls", mSuPass, []msgID{mStBundleSignedAnc}, []msgID{mStNoExpectedAncLog}},
		{"bundle-per-roll-4-rolls", mSuPass, []msgID{mStBundleSignedPer}, []msgID{mStPerBefore}},
		{"tlog-proof-commit", mSuTlogPass, []msgID{mStTlogIn, mStTlogSigned}, []msgID{mStTlogOnly}},
	} {
		r := verifyVector(t, vectorNamed(t, tt.vector))
		if r.Summary().id != tt.summary {
			t.Errorf("%s: summary %q", tt.vector, r.Summary())
		}
		for _, id := range tt.proves {
			if !hasMsg(r.Proves(), id) {
				t.Errorf("%s: does not prove %q", tt.vector, msg(id).In(English))
			}
		}
		for _, id := range tt.not {
			if !hasMsg(r.DoesNotProve(), id) {
				t.Errorf("%s: does not say it does not prove %q", tt.vector, msg(id).In(English))
			}
		}
	}
}

func hasMsg(ms []Message, id msgID) bool {
	for _, m := range ms {
		if m.id == id {
			return true
		}
	}
	return false
}
