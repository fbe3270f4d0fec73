package verifier

import (
	"bytes"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// tlogProofHeader is the first line of a C2SP tlog-proof@v1 file.
const tlogProofHeader = "c2sp.org/tlog-proof@v1\n"

// IsTlogProof reports whether data looks like a C2SP tlog-proof@v1 file
// rather than an evidence file: whether it starts with the tlog-proof header
// line (a JSON text cannot).
func IsTlogProof(data []byte) bool { return bytes.HasPrefix(data, []byte(tlogProofHeader)) }

// VerifyTlogProof checks a C2SP tlog-proof@v1 file (https://c2sp.org/tlog-proof)
// for one event, as a publisher exports them from a proof bundle
// (docs/FORMATS.md §3): its extra line holds the event's leaf, or, in a
// tlog-proof without one (the spec makes it optional), Options.Leaf does. The checks
// are format, log-inclusion (the leaf at its index in the checkpoint's tree),
// log-signature, log-witnesses and log-emitter-signatures, as for a bundle,
// except that log-signature fails without a key (--log-key, or a
// --witness-policy listing logs): an inclusion proof without the log's
// signature shows nothing. The Report holds the event; it says nothing about
// the dice of the event's game (verify the game's proof bundle for that).
func VerifyTlogProof(data []byte, opt Options) *Report {
	p, err := merkle.ParseTlogProof(data)
	if err != nil {
		return tlogInputError(msg(mInTlogProof))
	}
	leaf, where := p.Extra, "extra"
	switch {
	case len(leaf) == 0 && len(opt.Leaf) == 0:
		return tlogInputError(msg(mInTlogNoExtra))
	case len(leaf) == 0:
		leaf, where = opt.Leaf, "leaf"
	case len(opt.Leaf) > 0 && !bytes.Equal(leaf, opt.Leaf):
		return tlogInputError(msg(mInTlogLeafDiffers))
	}
	ev, err := events.Parse(leaf)
	if err != nil {
		code, _ := events.CodeOf(err)
		detail := rejectField(err)
		if detail == "" {
			detail = err.Error()
		}
		return tlogInputError(msg(mInTlogNotEvent, string(code), detail))
	}
	p.Extra = leaf
	cp, err := merkle.ParseSignedCheckpoint(p.Checkpoint)
	if err != nil { // ParseTlogProof checked the checkpoint
		panic("verifier: a parsed tlog-proof's checkpoint does not parse: " + err.Error())
	}
	r := &Report{Scheme: string(ev.Scheme), tlogProof: true, Event: &LoggedEvent{Index: p.Index, Leaf: p.Extra}}
	r.Checks = append(r.Checks, pass(CheckFormat, msg(mFmtTlog, string(ev.Type), ev.Game, ev.Seq)))

	inc := pass(CheckLogInclusion, msg(mLiTlogPass, p.Index, cp.Size, hexs(cp.Hash[:])))
	if merkle.CheckInclusion(merkle.LeafHash(p.Extra), p.Index, cp.Size, p.Proof, cp.Hash) != nil {
		inc = entryInclusionFailure(where, p.Index, len(p.Proof), cp.Size)
	}
	sig, signer := signatureCheck(cp, p.Checkpoint, opt)
	if sig.Status == Skipped {
		sig = fail(CheckLogSignature, msg(mLsTlogNoKey))
	}
	wit, cosigs := witnessCheck(p.Checkpoint, opt)
	emi := emitterCheck([]*events.Event{ev}, func(int) string { return where }, opt)
	r.Checks = append(r.Checks, inc, sig, wit, emi)

	r.proves = []Message{msg(mStTlogIn, p.Index, cp.Size, signer)}
	switch {
	case wit.Status == Pass && cosigs > 0:
		r.proves = append(r.proves, msg(mStBundleWitnessed, cosigs))
	case opt.WitnessPolicy != nil:
		r.notProves = append(r.notProves, msg(mStBundleNotWitnessed))
	default:
		r.notProves = append(r.notProves, msg(mStBundleNoWitness))
	}
	switch {
	case emi.Status == Pass && ev.Type.Binding():
		r.proves = append(r.proves, msg(mStTlogSigned, ev.Emitter))
	case ev.Type.Binding():
		r.notProves = append(r.notProves, msg(mStEmitterUnchecked, ev.Emitter))
	}
	r.notProves = append(r.notProves, msg(mStTlogOnly))
	return r
}

func tlogInputError(m Message) *Report {
	return &Report{tlogProof: true, Checks: []Check{{Name: CheckFormat, Status: Fail, Detail: m}}}
}
