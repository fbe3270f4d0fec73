package verifier

import (
	"encoding/hex"
	"errors"
	"time"

	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/events/drand"
)

// Verify parses an evidence file (or, for data that IsTlogProof, a C2SP
// tlog-proof: see VerifyTlogProof) and runs every check on it. It never
// fails: a file that cannot be parsed gives a Report whose format check
// failed (Exit 2).
func Verify(data []byte, opt Options) *Report {
	if IsTlogProof(data) {
		return VerifyTlogProof(data, opt)
	}
	ev, err := Parse(data)
	if err != nil {
		return InputErrorReport(err)
	}
	return VerifyEvidence(ev, opt)
}

// A FileProblem is why the command line could not read a file, said in
// the report's language by FileErrorReport (the operating system's own
// text is English).
type FileProblem int

// File problems.
const (
	FileMissing    FileProblem = iota + 1 // there is no such file
	FileNotAllowed                        // its permissions forbid reading it
	FileIsFolder                          // it is a folder
)

// FileErrorReport returns the Report for a file at path that could not be
// read for reason p: only the format check, failed (exit 2).
func FileErrorReport(p FileProblem, path string) *Report {
	id := map[FileProblem]msgID{FileMissing: mInNoSuchFile, FileNotAllowed: mInPermission, FileIsFolder: mInIsDirectory}[p]
	return &Report{Checks: []Check{{Name: CheckFormat, Status: Fail, Detail: msg(id, path)}}}
}

// InputErrorReport returns the Report for a file that could not be read or
// parsed: only the format check, failed, with err's message (an
// *InputError's own, or "cannot read the file: …" for any other error).
func InputErrorReport(err error) *Report {
	c := Check{Name: CheckFormat, Status: Fail}
	var ie *InputError
	if errors.As(err, &ie) {
		c.Detail, c.Field = ie.msg, ie.Field
	} else {
		c.Detail = msg(mInReadFailed, err.Error())
	}
	return &Report{Checks: []Check{c}}
}

// VerifyEvidence runs every check of the evidence's scheme. For a proof
// bundle (ev.Log set) it first runs the log checks, and the dice checks then
// run on the values taken from the logged events, not on the top-level
// fields, which need only agree with them (log-agreement).
func VerifyEvidence(ev *Evidence, opt Options) *Report {
	r := &Report{Scheme: ev.Scheme, perRollSeen: -1}
	if ev.Log == nil {
		r.facts = factsOf(ev, opt, false)
		verifyScheme(r, ev, opt)
		r.Checks = append(r.Checks, noLogChecks(opt)...)
		r.Checks = append(r.Checks, skipped(CheckMoves, msg(mMvNoLog)))
		return r
	}
	b := checkBundle(ev, opt)
	r.facts = factsOf(ev, opt, true)
	if b.derived != nil {
		r.facts = factsOf(b.derived, opt, true)
		verifyScheme(r, b.derived, opt)
		r.Checks[0].Detail = msg(mFmtBundle, r.Checks[0].Detail, len(ev.Log.Entries))
	} else {
		r.Checks = append(r.Checks, pass(CheckFormat, msg(mFmtBundle, formatMsg(ev), len(ev.Log.Entries))))
		for _, name := range diceChecks(ev.Scheme) {
			r.Checks = append(r.Checks, skipped(name, msg(mSkNoValues)))
		}
	}
	r.Checks = append(r.Checks, b.checks...)
	r.Checks = append(r.Checks, b.moves)
	bundleStatements(r, ev.Log, b)
	movesStatements(r, b.movesRes, true)
	return r
}

func verifyScheme(r *Report, ev *Evidence, opt Options) {
	switch ev.Scheme {
	case dice.Tavlarena:
		verifyTavlarena(r, ev, opt)
	case dice.Anchored:
		verifyAnchored(r, ev, opt)
	case dice.PerRoll:
		verifyPerRoll(r, ev, opt)
	}
}

// diceChecks returns the names of the checks after format that a scheme's
// dice get.
func diceChecks(scheme string) []string {
	if scheme == dice.Anchored {
		return []string{CheckCommitment, CheckExpected, CheckAnchor, CheckRolls, CheckSequence}
	}
	return []string{CheckCommitment, CheckExpected, CheckRolls, CheckSequence}
}

// formatMsg describes a parsed evidence file.
func formatMsg(ev *Evidence) Message {
	switch {
	case ev.Tavlarena != nil:
		return msg(mFmtTavlarena, ev.Tavlarena.GameID.String(), len(ev.Tavlarena.Rolls))
	case ev.Anchored != nil:
		return msg(mFmtAnchored, ev.Anchored.MatchID, ev.Anchored.GameNo, len(ev.Anchored.Rolls))
	}
	return msg(mFmtPerRoll, ev.PerRoll.MatchID.String(), len(ev.PerRoll.Rolls))
}

// bundleStatements adds what a proof bundle's log checks prove and do not
// prove to the statements of its scheme.
func bundleStatements(r *Report, l *Log, b bundleResult) {
	r.noLogKey = b.noKey
	if b.game == nil {
		return // some log check failed: no statements are shown
	}
	last := b.game.NextSeq() - 1
	r.proves = append(r.proves, msg(mStBundle, len(l.Entries), last, l.Tree.Size))
	if b.signed {
		// What the log's order shows, in the scheme's words.
		signed := mStBundleSigned
		switch r.Scheme {
		case dice.Anchored:
			signed = mStBundleSignedAnc
		case dice.PerRoll:
			signed = mStBundleSignedPer
		}
		r.proves = append(r.proves, msg(signed, b.signer))
		// The log's order shows when the commitment was logged, relative
		// to the game: say so instead of "the file alone cannot show".
		for i, m := range r.notProves {
			switch m.id {
			case mStNoExpected:
				r.notProves[i] = msg(mStNoExpectedLog)
			case mStNoExpectedAnc:
				r.notProves[i] = msg(mStNoExpectedAncLog)
			}
		}
	} else {
		r.notProves = append(r.notProves, msg(mStBundleNoKey))
	}
	switch {
	case b.cosigs > 0:
		r.proves = append(r.proves, msg(mStBundleWitnessed, b.cosigs))
	case b.policy:
		r.notProves = append(r.notProves, msg(mStBundleNotWitnessed))
	case b.signed:
		r.notProves = append(r.notProves, msg(mStBundleNoWitness))
	}
	if b.emitter == Pass {
		r.proves = append(r.proves, msg(mStEmitterSigned, b.game.Emitter))
	} else {
		r.notProves = append(r.notProves, msg(mStEmitterUnchecked, b.game.Emitter))
	}
}

func hexs(b []byte) string { return hex.EncodeToString(b) }

func pass(name string, d Message) Check    { return Check{Name: name, Status: Pass, Detail: d} }
func fail(name string, d Message) Check    { return Check{Name: name, Status: Fail, Detail: d} }
func skipped(name string, d Message) Check { return Check{Name: name, Status: Skipped, Detail: d} }

func verifyTavlarena(r *Report, ev *Evidence, opt Options) {
	t := ev.Tavlarena
	r.Checks = append(r.Checks, pass(CheckFormat, formatMsg(ev)))

	sh, err := dice.SettingsHash(ev.Settings)
	if err != nil { // Settings is canonical JSON from Parse
		panic("verifier: settings from Parse do not hash: " + err.Error())
	}
	got := dice.TavlarenaCommitment(t.GameID, sh, t.Seats, t.Seed)
	if got == t.Commitment {
		r.Checks = append(r.Checks, pass(CheckCommitment, msg(mCmTavPass, hexs(got[:]), dice.SealCode(got))))
	} else {
		r.Checks = append(r.Checks, fail(CheckCommitment, msg(mCmTavFail, hexs(got[:]), dice.SealCode(got), hexs(t.Commitment[:]), dice.SealCode(t.Commitment))))
	}

	exp := expectedCheck(opt, t.Commitment, mExPass, mExFail, msg(mExSkipTav, dice.SealCode(t.Commitment)))
	r.Checks = append(r.Checks, exp)
	r.Checks = append(r.Checks, gameRollsCheck(dice.NewTavlarena(t.Seed, t.GameID, t.Contributions), t.Rolls))
	r.Checks = append(r.Checks, sequenceCheck(ev.Opening, t.Rolls))

	r.proves = []Message{msg(mStTavDice)}
	switch exp.Status {
	case Pass:
		r.proves = append(r.proves, msg(mStSealSeen))
	default:
		r.proves = append(r.proves, msg(mStSealIf, dice.SealCode(t.Commitment)))
	}
	if ev.Opponent == OpponentComputer {
		r.proves = append(r.proves, msg(mStComputerProves))
		r.notProves = append(r.notProves, msg(mStComputerPeek))
	} else {
		r.proves = append(r.proves, msg(mStTavPlayers))
		r.notProves = append(r.notProves, msg(mStTavServerKnew))
	}
	if exp.Status != Pass {
		r.notProves = append(r.notProves, msg(mStNoExpected))
	}
}

func verifyAnchored(r *Report, ev *Evidence, opt Options) {
	a := ev.Anchored
	r.Checks = append(r.Checks, pass(CheckFormat, formatMsg(ev)))

	fp := dice.Fingerprint(a.Seed)
	if fp == a.Fingerprint {
		r.Checks = append(r.Checks, pass(CheckCommitment, msg(mCmAncPass, hexs(fp[:]))))
	} else {
		r.Checks = append(r.Checks, fail(CheckCommitment, msg(mCmAncFail, hexs(fp[:]), hexs(a.Fingerprint[:]))))
	}
	exp := expectedCheck(opt, a.Fingerprint, mExAncPass, mExAncFail, msg(mExSkipAnc, dice.SealCode(a.Fingerprint)))
	r.Checks = append(r.Checks, exp)

	b := a.Anchor
	chain, known := drand.ChainByHash(b.Chain)
	sealed := a.SealedAt.UTC().Format(time.RFC3339Nano)
	var problems []Message
	var roundTime string
	if !known {
		q := drand.Quicknet().Hash()
		problems = append(problems, msg(mAnUnknownChain, hexs(b.Chain[:]), hexs(q[:])))
	} else {
		roundTime = chain.RoundTime(b.Round).Format(time.RFC3339)
		if b.Round == 0 {
			problems = append(problems, msg(mAnRoundZero))
		} else if _, err := chain.Verify(b.Round, b.Signature); err != nil {
			problems = append(problems, msg(mAnBadSig))
		}
	}
	if rnd := drand.Randomness(b.Signature); rnd != b.Randomness {
		problems = append(problems, msg(mAnBadRand, hexs(b.Randomness[:]), hexs(rnd[:])))
	}
	if known && b.Round != 0 && chain.ExistedAt(b.Round, a.SealedAt) {
		problems = append(problems, msg(mAnExisted, roundTime, sealed))
	}
	if len(problems) == 0 {
		r.Checks = append(r.Checks, pass(CheckAnchor, msg(mAnPass, b.Round, roundTime, sealed)))
	} else {
		r.Checks = append(r.Checks, fail(CheckAnchor, msg(mAnFail, b.Round, problems)))
	}

	binding := dice.AnchoredBinding(a.MatchID, a.GameNo, a.Tokens, dice.Anchor{Chain: b.Chain, Round: b.Round, Randomness: b.Randomness})
	r.Checks = append(r.Checks, gameRollsCheck(dice.NewAnchored(a.Seed, binding), a.Rolls))
	r.Checks = append(r.Checks, sequenceCheck(ev.Opening, a.Rolls))

	r.proves = []Message{msg(mStAncDice, b.Round)}
	if exp.Status == Pass {
		r.proves = append(r.proves, msg(mStFpSeen))
	}
	if ev.Opponent == OpponentComputer {
		r.proves = append(r.proves, msg(mStAncAnchorComputer, b.Round, roundTime, sealed), msg(mStComputerProves))
		r.notProves = append(r.notProves, msg(mStComputerPeekAnc, b.Round))
	} else {
		r.proves = append(r.proves, msg(mStAncAnchor, b.Round, roundTime, sealed))
		r.notProves = append(r.notProves, msg(mStAncServerKnew, b.Round))
	}
	r.notProves = append(r.notProves, msg(mStAncSealTime))
	if exp.Status != Pass {
		r.notProves = append(r.notProves, msg(mStNoExpectedAnc))
	}
}

func verifyPerRoll(r *Report, ev *Evidence, opt Options) {
	p := ev.PerRoll
	r.Checks = append(r.Checks, pass(CheckFormat, formatMsg(ev)))

	var badC, badR, fromServer int
	var firstC, firstR *RollRef
	var firstFP [32]byte // SHA-256 of the first mismatching seed
	for i, x := range p.Rolls {
		if x.SecondFrom == "server" {
			fromServer++
		}
		if fp := dice.Fingerprint(x.Seed); fp != x.Commitment {
			if badC == 0 {
				firstC, firstFP = &RollRef{Index: i, RollID: x.RollID.String()}, fp
			}
			badC++
		}
		if got := dice.NewPerRoll(x.Seed, p.MatchID, x.RollID, x.Second).Roll(0); got != x.Dice {
			if badR == 0 {
				claimed := x.Dice
				firstR = &RollRef{Index: i, RollID: x.RollID.String(), Claimed: &claimed, Recomputed: &got}
			}
			badR++
		}
	}
	n := len(p.Rolls)
	switch {
	case n == 0:
		r.Checks = append(r.Checks, pass(CheckCommitment, msg(mCmPerNone)))
	case badC == 0:
		r.Checks = append(r.Checks, pass(CheckCommitment, msg(mCmPerPass, n)))
	default:
		x := p.Rolls[firstC.Index]
		c := fail(CheckCommitment, msg(mCmPerFail, badC, n, firstC.Index+1, firstC.RollID, hexs(firstFP[:]), hexs(x.Commitment[:])))
		c.Roll = firstC
		r.Checks = append(r.Checks, c)
	}

	var exp Check
	seen := -1
	switch {
	case opt.Expected == nil:
		exp = skipped(CheckExpected, msg(mExSkipPer))
	default:
		for i, x := range p.Rolls {
			if opt.Expected.Matches(x.Commitment) {
				seen = i
				break
			}
		}
		if seen >= 0 {
			exp = pass(CheckExpected, msg(mExPerPass, seen+1, p.Rolls[seen].RollID.String(), opt.Expected.String()))
		} else {
			exp = fail(CheckExpected, msg(mExPerFail, opt.Expected.String()))
		}
	}
	r.Checks = append(r.Checks, exp)

	switch {
	case n == 0:
		r.Checks = append(r.Checks, pass(CheckRolls, msg(mRoNone)))
	case badR == 0:
		r.Checks = append(r.Checks, pass(CheckRolls, msg(mRoPass, n)))
	default:
		c := fail(CheckRolls, msg(mRoFailPer, badR, n, firstR.Index+1, firstR.RollID, *firstR.Claimed, *firstR.Recomputed))
		c.Roll = firstR
		r.Checks = append(r.Checks, c)
	}

	// Sequence: a roll id names one roll.
	first := make(map[dice.UUID]int, n)
	seq := pass(CheckSequence, msg(mSqPerPass, n))
	if n == 0 {
		seq = pass(CheckSequence, msg(mSqNone))
	}
	for i, x := range p.Rolls {
		if j, dup := first[x.RollID]; dup {
			seq = fail(CheckSequence, msg(mSqPerDup, i+1, x.RollID.String(), j+1))
			seq.Roll = &RollRef{Index: i, RollID: x.RollID.String()}
			break
		}
		first[x.RollID] = i
	}
	r.Checks = append(r.Checks, seq)

	r.proves = []Message{msg(mStPerDice)}
	if seen >= 0 {
		r.proves = append(r.proves, msg(mStPerSeen, seen+1))
		r.perRollSeen = seen
	}
	r.notProves = []Message{msg(mStPerBefore)}
	if fromServer > 0 {
		r.notProves = append(r.notProves, msg(mStPerServer, fromServer, n))
	}
	if fromServer < n {
		r.notProves = append(r.notProves, msg(mStPerClientLabel))
	}
	if ev.Opponent == OpponentComputer {
		r.proves = append(r.proves, msg(mStComputerProves))
		r.notProves = append(r.notProves, msg(mStComputerPeek))
	}
}

// expectedCheck compares a commitment with --expected-commitment.
func expectedCheck(opt Options, c [32]byte, passID, failID msgID, skip Message) Check {
	switch {
	case opt.Expected == nil:
		return skipped(CheckExpected, skip)
	case opt.Expected.Matches(c):
		return pass(CheckExpected, msg(passID, hexs(c[:]), opt.Expected.String()))
	default:
		return fail(CheckExpected, msg(failID, opt.Expected.String(), hexs(c[:]), dice.SealCode(c)))
	}
}

// gameRollsCheck recomputes every roll of a per-game scheme by its n.
func gameRollsCheck(roller dice.Roller, rolls []dice.Roll) Check {
	if len(rolls) == 0 {
		return pass(CheckRolls, msg(mRoNone))
	}
	bad := 0
	var c Check
	for i, x := range rolls {
		got := roller.Roll(x.N)
		if got == x.Dice {
			continue
		}
		if bad == 0 {
			n, claimed := x.N, x.Dice
			c.Roll = &RollRef{Index: i, N: &n, Claimed: &claimed, Recomputed: &got}
		}
		bad++
	}
	if bad == 0 {
		return pass(CheckRolls, msg(mRoPass, len(rolls)))
	}
	ref := c.Roll
	c = fail(CheckRolls, msg(mRoFail, bad, len(rolls), *ref.N+1, *ref.Claimed, *ref.Recomputed))
	c.Roll = ref
	return c
}

var kindMsg = map[dice.Kind]msgID{dice.KindOpening: mKindOpening, dice.KindReroll: mKindReroll, dice.KindTurn: mKindTurn}

// sequenceCheck applies the roll-sequence rules and says, in every
// language, which roll broke them and why.
func sequenceCheck(o dice.Opening, rolls []dice.Roll) Check {
	if len(rolls) == 0 {
		return pass(CheckSequence, msg(mSqNone))
	}
	s := dice.NewSequence(o)
	for i, x := range rolls {
		due, want := s.Rolls(), s.WantKind()
		err := s.Next(x)
		if err == nil {
			continue
		}
		n := x.N
		ref := &RollRef{Index: i, N: &n}
		var c Check
		switch {
		case x.N != due:
			c = fail(CheckSequence, msg(mSqGap, i+1, x.N, due))
		case !x.Dice.Valid(): // Parse admits only dice from 1 to 6
			panic("verifier: invalid dice after Parse")
		default:
			var why msgID
			switch {
			case want == dice.KindOpening && i == 0:
				why = mSqWhyFirst
			case want == dice.KindOpening:
				why = mSqWhyTie
			case want == dice.KindReroll:
				why = mSqWhyReroll
			case x.Kind == dice.KindReroll:
				why = mSqWhyOneReroll
			default:
				why = mSqWhyDecided
			}
			c = fail(CheckSequence, msg(mSqKind, x.N+1, msg(kindMsg[x.Kind]), msg(kindMsg[want]), msg(why)))
		}
		c.Roll = ref
		return c
	}
	var how msgID
	switch {
	case s.Starter() < 0:
		how = mSqOpeningPending
	case o == dice.OpeningWestern:
		how = mSqWestern
	case s.WantKind() == dice.KindReroll:
		how = mSqTurkishPending
	default:
		how = mSqTurkishDone
	}
	return pass(CheckSequence, msg(mSqPass, len(rolls), len(rolls)-1, msg(how)))
}

// noLogChecks are the proof-bundle checks of a file without a log: skipped,
// except that a flag asking for a tie to a log, to witnesses or to an
// emitter fails, since the file cannot show it.
func noLogChecks(opt Options) []Check {
	sig := skipped(CheckLogSignature, msg(mLgNoLog))
	if opt.LogKey != nil {
		sig = fail(CheckLogSignature, msg(mLgKeyNoLog))
	}
	wit := skipped(CheckLogWitnesses, msg(mLgNoLog))
	if opt.WitnessPolicy != nil {
		wit = fail(CheckLogWitnesses, msg(mLgPolicyNoLog))
	}
	emi := skipped(CheckLogEmitter, msg(mLgNoLog))
	if opt.EmitterKeys != nil {
		emi = fail(CheckLogEmitter, msg(mLgEmitterNoLog))
	}
	return []Check{
		skipped(CheckLogInclusion, msg(mLgNoLog)),
		sig,
		skipped(CheckLogOrder, msg(mLgNoLog)),
		skipped(CheckLogAgreement, msg(mLgNoLog)),
		wit,
		emi,
	}
}
