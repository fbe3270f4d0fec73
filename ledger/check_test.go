package ledger

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/zarlog/zarlog/events"
)

// check runs the checks on one input alone, in their order: the oracle
// checkAll is compared with.
func (l *Ledger) check(in Input) item {
	it := l.parse(in)
	l.verify(&it)
	l.finish(&it)
	l.checkBeacon(&it)
	return it
}

// TestCheckAllAgrees: checkAll, which parses a chunk, then checks its
// signatures emitter by emitter, then the rest, gives every input exactly
// the outcome check gives it alone, whatever the order and mix of the chunk:
// valid events of two emitters, forged and corrupted signatures, an unknown
// emitter, a message id that differs (on a valid and on a forged event, so
// that the order of the checks shows), a reserved id, malformed bytes and
// transport refusals.
func TestCheckAllAgrees(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	k := e.k
	var leaves [][]byte
	leaves = append(leaves, k.tavlarenaGame(t, "a1", gameOpts{rolls: 6})...)
	leaves = append(leaves, k.perRollMatch(t, "b1", gameOpts{rolls: 6, emitter: emitterB})...)
	leaves = append(leaves, k.anchoredGame(t, "a2", gameOpts{rolls: 4})...)
	leaves = append(leaves, k.perRollMatch(t, "a3", gameOpts{rolls: 6})...)
	leaves = append(leaves, k.tavlarenaGame(t, "b2", gameOpts{rolls: 4, emitter: emitterB})...)
	in := inputs(t, leaves...)

	corruptSig := func(leaf []byte) []byte {
		i := bytes.Index(leaf, []byte(`"sig":"`))
		if i < 0 {
			t.Fatalf("no sig in %s", leaf)
		}
		out := bytes.Clone(leaf)
		j := i + len(`"sig":"`) + 10
		if out[j] == '0' {
			out[j] = '1'
		} else {
			out[j] = '0'
		}
		return out
	}
	var binding []Input
	for _, x := range in {
		if parse(t, x.Data).Type.Binding() {
			binding = append(binding, x)
		}
	}
	if len(binding) < 8 {
		t.Fatalf("only %d binding events", len(binding))
	}
	forged := mkEvent(t, k, events.Header{Scheme: events.PerRoll, Game: testUUID("forged").String(), Emitter: emitterA},
		events.PerRollCommit{Settings: []byte(`{}`)}, k.other)
	ghost := mkEvent(t, k, events.Header{Scheme: events.Tavlarena, Game: parse(t, leaves[0]).Game, Seq: 3, Emitter: "ghost"}, events.Contribution{Seat: 0}, nil)
	reserved := mkEvent(t, k, events.Header{ID: parse(t, leaves[0]).ID, Scheme: events.PerRoll, Game: testUUID("x").String(), Emitter: emitterA},
		events.PerRollCommit{Settings: []byte(`{}`)}, nil)
	bad := []Input{
		{Emitter: emitterA, Data: forged},
		{Emitter: emitterA, MsgID: "other-id", Data: forged},
		{Emitter: "ghost", Data: ghost},
		{Emitter: emitterA, Data: reserved},
		{Emitter: emitterA, Data: []byte("{")},
		{Emitter: emitterA, Data: binding[1].Data, Refuse: &events.RejectError{Code: "bad-batch", Msg: "framing"}},
		{Emitter: binding[2].Emitter, MsgID: "other-id", Data: binding[2].Data},
	}
	for i := 3; i < len(binding); i += 3 {
		bad = append(bad, Input{Emitter: binding[i].Emitter, MsgID: binding[i].MsgID, Data: corruptSig(binding[i].Data)})
	}
	all := append(append([]Input(nil), in...), bad...)

	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		chunk := all[:min(len(all), checkChunk)]
		got := make([]item, len(chunk))
		l.checkAll(chunk, got)
		codes := map[events.Code]int{}
		for i, x := range chunk {
			want := l.check(x)
			want.hint = got[i].hint // the dedup lookup is checkAll's alone
			if !reflect.DeepEqual(got[i], want) {
				t.Fatalf("round %d, input %d (%.60q): checkAll gave %+v (reject %v), check alone %+v (reject %v)", round, i, x.Data, got[i], got[i].rej, want, want.rej)
			}
			if want.rej != nil {
				codes[want.rej.Code]++
			} else {
				codes["ok"]++
			}
		}
		if round == 0 {
			for _, c := range []events.Code{"ok", events.CodeBadSignature, events.CodeMsgIDMismatch, events.CodeUnknownEmitter, events.CodeReservedID, events.CodeMalformed, "bad-batch"} {
				if codes[c] == 0 {
					t.Errorf("no input came out %s: %v", c, codes)
				}
			}
		}
	}
}
