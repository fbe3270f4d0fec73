package verifier

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/merkle"
)

// A Log is the "log" member of a proof bundle (docs/FORMATS.md §3): the
// signed checkpoint, the table of the inclusion proofs' hashes, each listed
// once, and every event leaf of the game with its index and inclusion proof.
type Log struct {
	Checkpoint []byte            // the signed checkpoint note, verbatim
	Tree       merkle.Checkpoint // its body, parsed without checking any signature
	Hashes     []merkle.Hash     // the distinct hashes of the inclusion proofs
	Entries    []LogEntry        // in log order
}

// A LogEntry is one event leaf of a proof bundle.
type LogEntry struct {
	Index uint64 // the leaf's index in the log
	Leaf  []byte // the leaf: the event's canonical JSON (docs/FORMATS.md §1)
	Proof []int  // its RFC 6962 inclusion proof, as positions in Log.Hashes
}

// maxProof is the length of the longest inclusion proof (a tree of 2^64−1
// leaves).
const maxProof = 64

// log parses the "log" member. Beyond the types it requires what makes the
// table of hashes one form: no hash twice, every position a proof names
// inside the table, and every hash used by some proof.
func (p *parser) log(o cjson.Node) *Log {
	l := &Log{}
	if v, ok := p.get(o, "checkpoint"); ok {
		s, isStr := v.Str()
		cp, err := merkle.ParseSignedCheckpoint([]byte(s))
		if !isStr || err != nil {
			p.want(v, mWantCheckpoint)
		}
		l.Checkpoint, l.Tree = []byte(s), cp
	}
	_, hs := p.elems(o, "hashes")
	first := make(map[merkle.Hash]int, len(hs))
	for i, v := range hs {
		h := p.hex32Value(v)
		if j, dup := first[h]; dup {
			p.fail(v.Path, mInDupHash, j)
		}
		if p.err != nil {
			return nil
		}
		first[h] = i
		l.Hashes = append(l.Hashes, h)
	}
	entries, es := p.elems(o, "entries")
	if p.err == nil && len(es) == 0 {
		p.want(entries, mWantEntries)
	}
	used := make([]bool, len(l.Hashes))
	for _, e := range es {
		if p.err != nil {
			return nil
		}
		if _, ok := e.Object(); !ok {
			p.want(e, mWantObject)
			return nil
		}
		var x LogEntry
		x.Index = uint64(p.integer(e, "index", 0, cjson.MaxSafeInteger, mWantUint))
		if v, ok := p.get(e, "leaf"); ok {
			s, isStr := v.Str()
			if !isStr || len(s) == 0 || len(s) > events.MaxEventSize {
				p.want(v, mWantLeaf)
			}
			x.Leaf = []byte(s)
		}
		proof, refs := p.elems(e, "proof")
		if p.err == nil && len(refs) > maxProof {
			p.want(proof, mWantProof)
		}
		for _, r := range refs {
			k := p.intValue(r, 0, int64(len(l.Hashes))-1, mWantHashRef)
			if p.err != nil {
				return nil
			}
			used[k] = true
			x.Proof = append(x.Proof, int(k))
		}
		l.Entries = append(l.Entries, x)
	}
	for k, u := range used {
		if !u {
			p.fail(fmt.Sprintf("%s[%d]", o.Field("hashes"), k), mInUnusedHash)
			break
		}
	}
	if p.err != nil {
		return nil
	}
	return l
}

// A bundleResult is what the proof-bundle checks found.
type bundleResult struct {
	checks   []Check      // the log-* checks, in report order
	derived  *Evidence    // the evidence taken from the leaves; nil if they do not give one
	game     *events.Game // the replayed game; nil if the leaves do not replay
	signed   bool         // log-signature passed
	noKey    bool         // log-signature was skipped: no key to check it with
	signer   string       // the name of the log key that signed
	cosigs   int          // witness cosignatures that count toward the policy (log-witnesses passed)
	policy   bool         // a witness policy was given
	emitter  Status       // the log-emitter-signatures status
	moves    Check        // the moves check
	movesRes movesResult
}

// checkBundle runs the proof-bundle checks on ev, which has a Log. Every
// value it returns in derived comes from the logged leaves; the top-level
// fields of ev are only compared with them.
func checkBundle(ev *Evidence, opt Options) bundleResult {
	l := ev.Log
	var res bundleResult
	evs := make([]*events.Event, len(l.Entries))
	for i, e := range l.Entries {
		evs[i], _ = events.Parse(e.Leaf) // a leaf that is not an event fails log-order
	}
	sig, signer := signatureCheck(l.Tree, l.Checkpoint, opt)
	res.signed, res.noKey, res.signer = sig.Status == Pass, sig.Status == Skipped, signer
	order := orderCheck(l, evs)
	agree := skipped(CheckLogAgreement, msg(mLaNotOrdered))
	if order.Status == Pass {
		res.game, agree = replay(l, evs)
		if res.game != nil {
			d, err := evidenceOf(res.game)
			if err != nil {
				agree = fail(CheckLogAgreement, err.msg)
			} else {
				res.derived = d
				agree = agreementCheck(ev, d, len(evs))
			}
		}
	}
	wit, cosigs := witnessCheck(l.Checkpoint, opt)
	if wit.Status == Pass {
		res.cosigs = cosigs
	}
	res.policy = opt.WitnessPolicy != nil
	emi := emitterCheck(evs, func(i int) string { return fmt.Sprintf("log.entries[%d]", i) }, opt)
	res.emitter = emi.Status
	res.checks = []Check{inclusionCheck(l), sig, order, agree, wit, emi}
	res.moves, res.movesRes = movesCheck(l, evs, res.game)
	return res
}

// proofLen returns the length of the RFC 6962 inclusion proof of the leaf
// at index in a tree of size leaves (index < size).
func proofLen(index, size uint64) int {
	inner := bits.Len64(index ^ (size - 1))
	return inner + bits.OnesCount64(index>>inner)
}

// inclusionCheck checks every entry's inclusion proof against the
// checkpoint's root (merkle.CheckMulti) and names the first that fails.
func inclusionCheck(l *Log) Check {
	size, root := l.Tree.Size, l.Tree.Hash
	leafHashes := make([]merkle.Hash, len(l.Entries))
	indices := make([]uint64, len(l.Entries))
	proofs := make([][]int, len(l.Entries))
	for i, e := range l.Entries {
		leafHashes[i], indices[i], proofs[i] = merkle.LeafHash(e.Leaf), e.Index, e.Proof
	}
	err := merkle.CheckMulti(leafHashes, indices, l.Hashes, proofs, size, root)
	if err == nil {
		return pass(CheckLogInclusion, msg(mLiPass, len(l.Entries), size, hexs(root[:])))
	}
	var ee *merkle.EntryError
	if !errors.As(err, &ee) { // Parse admits only tables CheckMulti accepts
		panic("verifier: a parsed log's hash table is refused: " + err.Error())
	}
	return entryInclusionFailure(fmt.Sprintf("log.entries[%d]", ee.Entry), ee.Index, len(l.Entries[ee.Entry].Proof), size)
}

// entryInclusionFailure says why the inclusion proof of the entry named
// what, at index with a proof of n hashes, fails in a tree of size leaves.
func entryInclusionFailure(what string, index uint64, n int, size uint64) Check {
	switch {
	case index >= size:
		return fail(CheckLogInclusion, msg(mLiBeyond, what, index, size))
	case n != proofLen(index, size):
		return fail(CheckLogInclusion, msg(mLiLength, what, index, n, proofLen(index, size), size))
	}
	return fail(CheckLogInclusion, msg(mLiFail, what, index, size))
}

// signatureCheck checks the checkpoint's signature against --log-key, or
// else against the logs of --witness-policy; without either it is skipped.
// It also returns the name of the key that signed, if one did.
func signatureCheck(cp merkle.Checkpoint, note []byte, opt Options) (Check, string) {
	switch {
	case opt.LogKey != nil:
		name := opt.LogKey.Name()
		if cp.Origin != name {
			return fail(CheckLogSignature, msg(mLsOrigin, cp.Origin, name)), ""
		}
		if _, err := merkle.Open(note, opt.LogKey); err != nil {
			return fail(CheckLogSignature, msg(mLsBad, name)), ""
		}
		return pass(CheckLogSignature, msg(mLsPass, name, cp.Size)), name
	case opt.WitnessPolicy != nil && len(opt.WitnessPolicy.Logs()) > 0:
		for _, v := range opt.WitnessPolicy.Logs() {
			if _, err := merkle.Open(note, v); err == nil {
				return pass(CheckLogSignature, msg(mLsPolicyPass, v.Name(), cp.Size)), v.Name()
			}
		}
		return fail(CheckLogSignature, msg(mLsPolicyFail, cp.Origin, len(opt.WitnessPolicy.Logs()))), ""
	}
	return skipped(CheckLogSignature, msg(mLsNoKey)), ""
}

// witnessCheck checks the witness cosignatures against --witness-policy. It
// also returns the number of valid cosignatures by the policy's witnesses.
func witnessCheck(note []byte, opt Options) (Check, int) {
	p := opt.WitnessPolicy
	if p == nil {
		return skipped(CheckLogWitnesses, msg(mLwNone)), 0
	}
	cosigs, err := merkle.VerifyCosignatures(note, p.Witnesses())
	if err != nil {
		return fail(CheckLogWitnesses, msg(mLwBadCosig)), 0
	}
	if _, err := p.CheckWitnesses(note); err != nil {
		notMet := fail
		if opt.WitnessesPending {
			notMet = skipped
		}
		if len(cosigs) == 0 {
			return notMet(CheckLogWitnesses, msg(mLwNotYet, len(p.Witnesses()))), 0
		}
		return notMet(CheckLogWitnesses, msg(mLwQuorum, len(cosigs), len(p.Witnesses()))), len(cosigs)
	}
	return pass(CheckLogWitnesses, msg(mLwPass, len(cosigs), len(p.Witnesses()))), len(cosigs)
}

// orderCheck checks that the entries are the game's events, each once, in
// log order: indices increasing, every leaf an event of one game, nothing
// before the commit, seq 0 to the last without a gap, anchored-v1 tokens
// before the beacon, and the last entry the game's final event.
func orderCheck(l *Log, evs []*events.Event) Check {
	es := l.Entries
	for i := 1; i < len(es); i++ {
		if es[i].Index <= es[i-1].Index {
			return fail(CheckLogOrder, msg(mLoIndex, i, es[i].Index, i-1, es[i-1].Index))
		}
	}
	commit := -1
	for i, ev := range evs {
		if ev == nil {
			_, err := events.Parse(es[i].Leaf)
			code, _ := events.CodeOf(err)
			return fail(CheckLogOrder, msg(mLoNotEvent, i, string(code), rejectField(err)))
		}
		if commit < 0 && ev.Type == events.TypeCommit {
			commit = i
		}
	}
	if commit < 0 {
		return fail(CheckLogOrder, msg(mLoNoCommit))
	}
	game := evs[commit].Game
	for i, ev := range evs {
		if ev.Game != game {
			return fail(CheckLogOrder, msg(mLoForeign, i, ev.Game, game))
		}
	}
	if commit > 0 { // the first entry, at least, comes before the commit
		return fail(CheckLogOrder, msg(mLoBeforeCommit, 0, string(evs[0].Type), evs[0].Seq, es[0].Index, es[commit].Index))
	}
	beacon := -1
	for i, ev := range evs {
		if ev.Seq != uint64(i) {
			return fail(CheckLogOrder, msg(mLoSeq, i, ev.Seq, i))
		}
		switch {
		case ev.Type == events.TypeBeacon && beacon < 0:
			beacon = i
		case ev.Type == events.TypeContribution && ev.Scheme == events.Anchored && beacon >= 0:
			return fail(CheckLogOrder, msg(mLoTokenAfterBeacon, i, es[i].Index, es[beacon].Index))
		}
	}
	last := evs[len(evs)-1]
	final := events.TypeReveal
	if last.Scheme == events.PerRoll {
		final = events.TypeEnd
	}
	if last.Type != final {
		return fail(CheckLogOrder, msg(mLoNotFinal, last.Seq, string(last.Type), string(final)))
	}
	return pass(CheckLogOrder, msg(mLoPass, len(evs), game, last.Seq, es[0].Index))
}

// rejectField returns the member a *events.RejectError names, or "".
func rejectField(err error) string {
	var re *events.RejectError
	if errors.As(err, &re) {
		return re.Field
	}
	return ""
}

// replay applies the entries' events in log order, as an auditor replaying
// the log does: no clock checks, beacons verified against the pinned drand
// chains. It returns the game, or nil and the failed log-agreement check
// naming the first event the game's rules refuse.
func replay(l *Log, evs []*events.Event) (*events.Game, Check) {
	beacons := events.BeaconsOf(drand.ChainByHash)
	var g *events.Game
	for i, ev := range evs {
		env := events.Env{Emitter: ev.Emitter, Index: l.Entries[i].Index, SkipClockChecks: true, Beacons: beacons}
		ng, err := events.Apply(g, ev, env)
		if err != nil {
			code, ok := events.CodeOf(err)
			if !ok { // only a misuse of Apply; orderCheck passed, so not expected
				code = "error"
			}
			return nil, fail(CheckLogAgreement, msg(mLaRefused, i, ev.Seq, string(ev.Type), string(code), rejectField(err)))
		}
		g = ng
	}
	return g, Check{}
}

// agreementCheck compares the top-level fields with the evidence derived
// from the leaves and names the first field that differs.
func agreementCheck(top, derived *Evidence, n int) Check {
	path, a, b, diff := firstDifference("", evidenceObject(top), evidenceObject(derived))
	switch diff {
	case diffNone:
		return pass(CheckLogAgreement, msg(mLaPass, n))
	case diffMissing:
		return fail(CheckLogAgreement, msg(mLaMissing, path, snippet(b)))
	case diffExtra:
		return fail(CheckLogAgreement, msg(mLaExtra, path, snippet(a)))
	}
	return fail(CheckLogAgreement, msg(mLaDiffer, path, snippet(a), snippet(b)))
}

type diffKind int

const (
	diffNone    diffKind = iota
	diffValue            // both have the path, with different values
	diffMissing          // only b has it
	diffExtra            // only a has it
)

// firstDifference walks two decoded JSON values in b's member order and
// returns the first path where they differ.
func firstDifference(path string, a, b any) (string, any, any, diffKind) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch y := b.(type) {
	case cjson.Object:
		x, ok := a.(cjson.Object)
		if !ok {
			break
		}
		for _, m := range y {
			v, ok := x.Get(m.Key)
			if !ok {
				return join(m.Key), nil, m.Value, diffMissing
			}
			if p, va, vb, d := firstDifference(join(m.Key), v, m.Value); d != diffNone {
				return p, va, vb, d
			}
		}
		for _, m := range x {
			if _, ok := y.Get(m.Key); !ok {
				return join(m.Key), m.Value, nil, diffExtra
			}
		}
		return "", nil, nil, diffNone
	case []any:
		x, ok := a.([]any)
		if !ok {
			break
		}
		for i := range min(len(x), len(y)) {
			if p, va, vb, d := firstDifference(fmt.Sprintf("%s[%d]", path, i), x[i], y[i]); d != diffNone {
				return p, va, vb, d
			}
		}
		switch {
		case len(x) < len(y):
			return fmt.Sprintf("%s[%d]", path, len(x)), nil, y[len(x)], diffMissing
		case len(x) > len(y):
			return fmt.Sprintf("%s[%d]", path, len(y)), x[len(y)], nil, diffExtra
		}
		return "", nil, nil, diffNone
	default:
		if a == b {
			return "", nil, nil, diffNone
		}
	}
	return path, a, b, diffValue
}

// emitterCheck verifies the events against --emitter-key: the signature of
// every binding event (commit, end, reveal, roll-commit, roll-reveal), by
// a key of its emitter. Without keys it is skipped. name(i) names event i
// in a failure.
func emitterCheck(evs []*events.Event, name func(int) string, opt Options) Check {
	if opt.EmitterKeys == nil {
		return skipped(CheckLogEmitter, msg(mLeNone))
	}
	n, emitter := 0, ""
	for i, ev := range evs {
		if ev == nil {
			continue // not an event: log-order says so
		}
		emitter = ev.Emitter
		err := events.Verify(ev, opt.EmitterKeys)
		if code, _ := events.CodeOf(err); code == events.CodeUnknownEmitter {
			return fail(CheckLogEmitter, msg(mLeUnknown, ev.Emitter))
		} else if err != nil {
			return fail(CheckLogEmitter, msg(mLeBad, name(i), ev.Seq, string(ev.Type), ev.Emitter))
		}
		if ev.Type.Binding() {
			n++
		}
	}
	return pass(CheckLogEmitter, msg(mLePass, n, emitter))
}
