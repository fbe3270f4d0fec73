package verifier

import (
	"github.com/zarlog/zarlog/events/dice"
)

// A VerdictKind names what a verdict says, for a page's colours and a
// script's tests.
type VerdictKind string

// Verdict kinds.
const (
	// VerdictChecked: every check passed; for a proof bundle, its
	// checkpoint is signed by the log whose key was given, which ties the
	// game to that log. An evidence file, which has no log member, is tied
	// to none, and its verdict says so.
	VerdictChecked VerdictKind = "checked"
	// VerdictUntied: every check of a proof bundle passed, but its
	// checkpoint's signature was not checked (no log key was given), so
	// nothing ties the game to a log.
	VerdictUntied VerdictKind = "untied"
	// VerdictWrongSeal: the only check that failed is expected-commitment:
	// the seal code given is not this game's. It says nothing against the
	// game.
	VerdictWrongSeal VerdictKind = "wrong-seal"
	// VerdictFailed: a check of the game failed (exit 1).
	VerdictFailed VerdictKind = "failed"
	// VerdictBadInput: the file cannot be checked (exit 2).
	VerdictBadInput VerdictKind = "bad-input"
)

// A Verdict is a report in a player's words: a headline and the sentences
// under it. Every sentence is derived from the checks that ran and from
// what the scheme proves and does not prove (docs/SCHEMES.md §9): a
// sentence is said only when the checks that show it passed, and the
// scheme's main limit is said with it. The game page, the offline auditor,
// zarlog-verify --json and the JavaScript package say the same
// (docs/SCHEMES.md §8, "The verdict").
type Verdict struct {
	Kind     VerdictKind
	Headline Message
	Details  []Message
}

// verdictFacts are what a verdict says beyond the checks' statuses: the
// numbers of the game its sentences name.
type verdictFacts struct {
	rolls    int    // the rolls checked
	round    uint64 // anchored-v1: the drand round
	seal     string // the game's seal code (tavlarena-v1, anchored-v1)
	expected string // the seal code or commitment given, as normalized
	computer bool   // a game against the computer
	bundle   bool   // a proof bundle (a log member)
}

// factsOf returns the verdict's facts of evidence ev (for a bundle, the
// evidence its logged events give) checked with opt.
func factsOf(ev *Evidence, opt Options, bundle bool) verdictFacts {
	f := verdictFacts{computer: ev.Opponent == OpponentComputer, bundle: bundle}
	if opt.Expected != nil {
		f.expected = opt.Expected.String()
	}
	switch {
	case ev.Tavlarena != nil:
		f.rolls, f.seal = len(ev.Tavlarena.Rolls), dice.SealCode(ev.Tavlarena.Commitment)
	case ev.Anchored != nil:
		f.rolls, f.seal, f.round = len(ev.Anchored.Rolls), dice.SealCode(ev.Anchored.Fingerprint), ev.Anchored.Anchor.Round
	case ev.PerRoll != nil:
		f.rolls = len(ev.PerRoll.Rolls)
	}
	return f
}

// vdFail are the player words of a failed check, by its name.
var vdFail = map[string]msgID{
	CheckFormat: mVdFailFormat, CheckCommitment: mVdFailCommitment, CheckExpected: mVdFailExpected,
	CheckAnchor: mVdFailAnchor, CheckSequence: mVdFailSequence, CheckLogInclusion: mVdFailLogInclusion,
	CheckLogSignature: mVdFailLogSignature, CheckLogOrder: mVdFailLogOrder, CheckLogAgreement: mVdFailLogAgreement,
	CheckLogWitnesses: mVdFailLogWitnesses, CheckLogEmitter: mVdFailLogEmitter, CheckMoves: mVdFailMoves,
}

// vdNotChecked name in player words the checks a verdict lists as not
// checked when they were skipped.
var vdNotChecked = map[string]msgID{
	CheckAnchor: mVdNCAnchor, CheckLogWitnesses: mVdNCLogWitnesses, CheckLogEmitter: mVdNCLogEmitter, CheckMoves: mVdNCMoves,
}

// Verdict returns the report in a player's words.
func (r *Report) Verdict() Verdict {
	status := map[string]Status{}
	for _, c := range r.Checks {
		status[c.Name] = c.Status
	}
	failed := r.Failed()
	switch {
	case r.Exit() == 2:
		v := Verdict{Kind: VerdictBadInput, Headline: msg(mVdBadInput)}
		if c, ok := r.Check(CheckFormat); ok {
			v.Details = []Message{c.Detail}
		}
		return v
	case r.tlogProof && r.Exit() == 0:
		return Verdict{Kind: VerdictChecked, Headline: msg(mSuTlogPass)}
	case r.tlogProof:
		return Verdict{Kind: VerdictFailed, Headline: r.Summary()}
	case len(failed) == 1 && failed[0] == CheckExpected:
		v := Verdict{Kind: VerdictWrongSeal, Headline: msg(mVdWrongSeal)}
		if r.Scheme == dice.PerRoll {
			v.Details = append(v.Details, msg(mVdSealOtherPer, r.facts.expected))
		} else {
			v.Details = append(v.Details, msg(mVdSealOther, r.facts.expected, r.facts.seal))
		}
		if r.facts.bundle && status[CheckLogSignature] != Pass {
			v.Details = append(v.Details, msg(mVdUntied))
		}
		return v
	case r.Exit() == 1:
		return Verdict{Kind: VerdictFailed, Headline: msg(mVdFail), Details: r.failureWords(failed)}
	}

	tied := status[CheckLogSignature] == Pass
	v := Verdict{Kind: VerdictChecked, Headline: msg(mSuPass)}
	if r.facts.bundle && !tied {
		v.Kind, v.Headline = VerdictUntied, msg(mVdUntiedHead)
	}
	// The dice: every roll recomputed.
	switch {
	case r.facts.rolls == 0:
		v.Details = append(v.Details, msg(mVdNoRolls))
	case r.Scheme == dice.Tavlarena:
		v.Details = append(v.Details, msg(mVdDiceTav, r.facts.rolls))
	case r.Scheme == dice.Anchored:
		v.Details = append(v.Details, msg(mVdDiceAnc, r.facts.rolls, r.facts.round))
	case r.Scheme == dice.PerRoll:
		v.Details = append(v.Details, msg(mVdDicePer, r.facts.rolls))
	}
	// The seal: fixed before the first roll only where the scheme has one
	// seal, and only as far as the seal code given or the signed log's
	// order shows it.
	switch {
	case r.Scheme == dice.PerRoll:
		if status[CheckExpected] == Pass {
			if seen := r.perRollSeen; seen >= 0 {
				v.Details = append(v.Details, msg(mVdPerSeen, seen+1))
			}
		}
	case status[CheckExpected] == Pass:
		v.Details = append(v.Details, msg(mVdSealSeen))
	case tied && status[CheckLogOrder] == Pass && r.Scheme == dice.Anchored:
		v.Details = append(v.Details, msg(mVdSealLoggedAnc))
	case tied && status[CheckLogOrder] == Pass:
		v.Details = append(v.Details, msg(mVdSealLogged))
	}
	if r.Scheme == dice.Anchored && status[CheckAnchor] == Pass {
		v.Details = append(v.Details, msg(mVdAnchor, r.facts.round))
	}
	// The log.
	switch {
	case tied && status[CheckLogInclusion] == Pass:
		v.Details = append(v.Details, msg(mVdInLog))
	case r.facts.bundle:
		v.Details = append(v.Details, msg(mVdUntied))
	default:
		v.Details = append(v.Details, msg(mVdNoLog))
	}
	// The scheme's main limit.
	switch {
	case r.facts.computer:
		v.Details = append(v.Details, msg(mVdLimitComputer))
	case r.Scheme == dice.Tavlarena:
		v.Details = append(v.Details, msg(mVdLimitTav))
	case r.Scheme == dice.Anchored:
		v.Details = append(v.Details, msg(mVdLimitAnc))
	case r.Scheme == dice.PerRoll:
		v.Details = append(v.Details, msg(mVdLimitPer))
	}
	// The witnesses, when a policy was given: witnessed, or not yet (with
	// Options.WitnessesPending; without it a quorum not met fails).
	if c, ok := r.Check(CheckLogWitnesses); ok && r.facts.bundle {
		switch {
		case c.Status == Pass && c.Detail.id == mLwPass:
			v.Details = append(v.Details, msg(mVdWitnessed, c.Detail.args...))
		case pendingWitnesses(c):
			v.Details = append(v.Details, msg(mVdNotWitnessed))
		}
	}
	// What was not checked.
	var nc []Message
	for _, c := range r.Checks {
		if id, ok := vdNotChecked[c.Name]; ok && c.Status == Skipped && (r.facts.bundle || c.Name == CheckAnchor) && !pendingWitnesses(c) {
			nc = append(nc, msg(id))
		}
	}
	if len(nc) > 0 {
		v.Details = append(v.Details, msg(mVdNotChecked, nc))
	}
	return v
}

// pendingWitnesses reports whether c is a log-witnesses check skipped
// because the policy's quorum has not cosigned yet
// (Options.WitnessesPending): checked, and found not witnessed yet.
func pendingWitnesses(c Check) bool {
	return c.Name == CheckLogWitnesses && c.Status == Skipped && (c.Detail.id == mLwNotYet || c.Detail.id == mLwQuorum)
}

// failureWords says the first failure of the game in a player's words: a
// wrong roll with its number counted from 1, else the first failed check
// (the seal code given comes last: a wrong code says nothing of the game).
func (r *Report) failureWords(failed []string) []Message {
	var out []Message
	for _, name := range failed {
		if name == CheckExpected {
			continue
		}
		c, _ := r.Check(name)
		id, known := vdFail[name]
		switch {
		case name == CheckRolls && c.Roll != nil && c.Roll.Claimed != nil:
			out = append(out, msg(mVdWrongRoll, c.Roll.Number(), *c.Roll.Claimed, *c.Roll.Recomputed))
		case known:
			out = append(out, msg(id))
		default:
			out = append(out, msg(mVdFailOther, msg(checkTitles[name])))
		}
		break
	}
	for _, name := range failed {
		if name == CheckExpected {
			out = append(out, msg(mVdFailExpected))
		}
	}
	return out
}
