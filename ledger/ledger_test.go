package ledger

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/merkle"
)

// mkEvent formats an event built from a header and body, signed (if its type
// is binding) by s, or by the header's emitter's test key if s is nil.
func mkEvent(t testing.TB, k *testKeys, h events.Header, body events.Body, s note.Signer) []byte {
	t.Helper()
	if h.Time.IsZero() {
		h.Time = testStart
	}
	if s == nil {
		s = k.emitters[h.Emitter]
	}
	var ev *events.Event
	var err error
	if body.Type().Binding() {
		ev, err = events.New(h, body)
		if err == nil {
			err = events.Sign(ev, s)
		}
	} else {
		ev, err = events.New(h, body)
	}
	if err != nil {
		t.Fatalf("building %s: %v", body.Type(), err)
	}
	b, err := events.Format(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAppendOutcomes appends, one at a time, inputs that give every kind of
// outcome and a rejection from every stage of the checks, and checks the
// outcome, the rejected store's record and the log size after each.
func TestAppendOutcomes(t *testing.T) {
	e := newTestEnv(t)
	e.cfg.Moves = checkerFunc(func(in events.MoveInput) ([]byte, error) {
		if in.Move.Play == "overflow" {
			return make([]byte, events.MaxPosition+1), nil // the checker misbehaves
		}
		return nil, nil
	})
	l := e.open()
	k := e.k
	base := k.tavlarenaGame(t, "base", gameOpts{rolls: 2})
	gid := parse(t, base[0]).Game
	// Everything up to the game's first move: commit, contributions and
	// the opening roll(s).
	m := 0
	for parse(t, base[m]).Type != events.TypeMove {
		m++
	}
	appendAll(t, l, base[:m], m)
	move := parse(t, base[m]).Body.(events.Move)

	hdr := func(seq uint64) events.Header {
		return events.Header{Scheme: events.Tavlarena, Game: gid, Seq: seq, Emitter: emitterA}
	}
	other := k.tavlarenaGame(t, "other", gameOpts{rolls: 2})
	roll0 := base[m]
	notCanonical := append([]byte("{ "), base[3][1:]...)
	sameID := mkEvent(t, k, events.Header{ID: parse(t, base[0]).ID, Scheme: events.PerRoll, Game: testUUID("x").String(), Emitter: emitterA},
		events.PerRollCommit{Settings: []byte(`{}`)}, nil)
	ghost := mkEvent(t, k, events.Header{Scheme: events.Tavlarena, Game: gid, Seq: 3, Emitter: "ghost"}, events.Contribution{Seat: 0}, nil)
	forged := mkEvent(t, k, events.Header{Scheme: events.PerRoll, Game: testUUID("forged").String(), Emitter: emitterA},
		events.PerRollCommit{Settings: []byte(`{}`)}, k.other)
	badBeacon := func() []byte {
		g := k.anchoredGame(t, "beacon", gameOpts{rolls: 1})
		appendAll(t, l, g[:3], 3)
		ev := parse(t, g[3])
		b := ev.Body.(events.Beacon)
		b.Signature = append([]byte(nil), b.Signature...)
		b.Signature[0] ^= 1
		b.Randomness = [32]byte{}
		return mkEvent(t, k, events.Header{Scheme: ev.Scheme, Game: ev.Game, Seq: ev.Seq, Emitter: ev.Emitter}, b, nil)
	}()

	type want struct {
		result Result
		index  uint64 // Appended, Duplicate
		code   events.Code
		field  string
	}
	size := uint64(m + 3) // base[:m] and the beacon game's first three
	cases := []struct {
		name string
		in   Input
		want want
	}{
		{"internal", Input{Emitter: emitterA, Data: mkEvent(t, k, hdr(uint64(m)), events.Move{N: move.N, Play: "overflow", Seat: 0}, nil)}, want{result: Rejected, code: CodeInternal}},
		{"appended", Input{Emitter: emitterA, MsgID: parse(t, roll0).ID, Data: roll0}, want{result: Appended, index: size}},
		{"duplicate", Input{Emitter: emitterA, MsgID: parse(t, roll0).ID, Data: roll0}, want{result: Duplicate, index: size}},
		{"duplicate without msg id", Input{Emitter: emitterA, Data: base[0]}, want{result: Duplicate, index: 0}},
		{"too-large", Input{Emitter: emitterA, Data: bytes.Repeat([]byte("x"), events.MaxEventSize+1)}, want{result: Rejected, code: events.CodeTooLarge}},
		{"not JSON", Input{Emitter: emitterA, Data: []byte("{")}, want{result: Rejected, code: events.CodeMalformed}},
		{"empty", Input{Emitter: emitterA, Data: nil}, want{result: Rejected, code: events.CodeMalformed}},
		{"not-canonical", Input{Emitter: emitterA, Data: notCanonical}, want{result: Rejected, code: events.CodeNotCanonical}},
		{"unknown-emitter", Input{Emitter: "ghost", Data: ghost}, want{result: Rejected, code: events.CodeUnknownEmitter, field: "emitter"}},
		{"bad-signature", Input{Emitter: emitterA, Data: forged}, want{result: Rejected, code: events.CodeBadSignature}},
		{"msg id differs", Input{Emitter: emitterA, MsgID: "something-else", Data: base[m+1]}, want{result: Rejected, code: events.CodeMsgIDMismatch, field: "id"}},
		{"reserved-id", Input{Emitter: emitterA, Data: sameID}, want{result: Rejected, code: events.CodeReservedID, field: "id"}},
		{"duplicate-id", Input{Emitter: emitterA, Data: mkEvent(t, k, hdr(0), events.Contribution{Seat: 0}, nil)}, want{result: Rejected, code: events.CodeDuplicateID, field: "id"}},
		{"wrong-emitter", Input{Emitter: emitterB, Data: base[m+1]}, want{result: Rejected, code: events.CodeWrongEmitter}},
		{"unknown-game", Input{Emitter: emitterA, Data: other[1]}, want{result: Rejected, code: events.CodeUnknownGame}},
		{"game-exists", Input{Emitter: emitterA, Data: mkEvent(t, k, events.Header{ID: "again", Scheme: events.Tavlarena, Game: gid, Emitter: emitterA}, parse(t, base[0]).Body, nil)},
			want{result: Rejected, code: events.CodeGameExists}},
		{"foreign-game", Input{Emitter: emitterB, Data: mkEvent(t, k, events.Header{Scheme: events.Tavlarena, Game: gid, Seq: uint64(m + 1), Emitter: emitterB}, events.Move{N: 0, Play: "x"}, nil)},
			want{result: Rejected, code: events.CodeForeignGame}},
		{"out-of-order", Input{Emitter: emitterA, Data: mkEvent(t, k, hdr(uint64(m+9)), events.Move{N: 0, Play: "x"}, nil)}, want{result: Rejected, code: events.CodeOutOfOrder}},
		{"not-allowed-now", Input{Emitter: emitterA, Data: mkEvent(t, k, hdr(uint64(m+1)), events.Reveal{}, nil)}, want{result: Rejected, code: events.CodeNotAllowedNow}},
		{"bad-beacon", Input{Emitter: emitterA, Data: badBeacon}, want{result: Rejected, code: events.CodeBadBeacon}},
		{"refused by the transport", Input{Emitter: emitterA, MsgID: "batch-7", Data: []byte("\x00broken"), Refuse: &events.RejectError{Code: "bad-batch", Msg: "framing"}},
			want{result: Rejected, code: "bad-batch"}},
		{"refused by the transport, a valid event", Input{Emitter: emitterA, Data: base[m+1], Refuse: &events.RejectError{Code: "bad-batch", Msg: "framing"}},
			want{result: Rejected, code: "bad-batch"}},
		{"appended after rejections", Input{Emitter: emitterA, Data: base[m+1]}, want{result: Appended, index: size + 1}},
	}
	var rejected uint64
	for _, tc := range cases {
		before, _ := l.Size()
		out := mustAppend(t, l, []Input{tc.in})[0]
		after, _ := l.Size()
		switch {
		case out.Result != tc.want.result:
			t.Errorf("%s: %v (%v), want %v", tc.name, out.Result, out.Reject, tc.want.result)
			continue
		case out.Result == Rejected:
			if out.Reject.Code != tc.want.code || (tc.want.field != "" && out.Reject.Field != tc.want.field) {
				t.Errorf("%s: rejected %s at %q (%s), want %s at %q", tc.name, out.Reject.Code, out.Reject.Field, out.Reject.Msg, tc.want.code, tc.want.field)
			}
			if out.Seq != rejected {
				t.Errorf("%s: rejection record %d, want %d", tc.name, out.Seq, rejected)
			}
			rejected++
			recs, err := l.Rejected(context.Background(), out.Seq, 1)
			if err != nil || len(recs) != 1 {
				t.Fatalf("%s: rejected record %d: %v %v", tc.name, out.Seq, recs, err)
			}
			r := recs[0]
			if wantID := idOf(tc.in); out.ID != wantID || r.ID != cmp.Or(wantID, tc.in.MsgID, peekID(tc.in.Data)) {
				t.Errorf("%s: outcome id %q, record id %q; the event's id is %q", tc.name, out.ID, r.ID, wantID)
			}
			if r.ID != "" {
				if byID, err := l.RejectedByID(context.Background(), tc.in.Emitter, r.ID); err != nil || byID.Seq != r.Seq {
					t.Errorf("%s: RejectedByID(%q): record %d, %v; want %d", tc.name, r.ID, byID.Seq, err, r.Seq)
				}
			}
			wantData := tc.in.Data[:min(len(tc.in.Data), MaxRejectedData)]
			if r.Seq != out.Seq || r.Code != out.Reject.Code || r.Field != out.Reject.Field || r.Reason != out.Reject.Msg ||
				r.Emitter != tc.in.Emitter || r.MsgID != tc.in.MsgID || !bytes.Equal(r.Data, wantData) || r.Size != len(tc.in.Data) || r.Time.IsZero() {
				t.Errorf("%s: stored rejection %+v does not match the input and outcome %+v", tc.name, r, out.Reject)
			}
			if after != before {
				t.Errorf("%s: rejected, but the log grew from %d to %d", tc.name, before, after)
			}
		default:
			if out.ID != idOf(tc.in) {
				t.Errorf("%s: outcome id %q", tc.name, out.ID)
			}
			if out.Index != tc.want.index {
				t.Errorf("%s: index %d, want %d", tc.name, out.Index, tc.want.index)
			}
			if grew := after - before; (out.Result == Appended) != (grew == 1) {
				t.Errorf("%s: %v, but the log grew by %d", tc.name, out.Result, grew)
			}
		}
	}
	sum, err := l.RejectedSummary()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Next != rejected || sum.First != 0 || sum.Dropped != 0 {
		t.Errorf("rejected summary %+v, want %d records", sum, rejected)
	}
	var total uint64
	for _, n := range sum.Counts {
		total += n
	}
	if total != rejected || sum.Counts[events.CodeMalformed] != 2 || sum.Counts[events.CodeMsgIDMismatch] != 1 {
		t.Errorf("rejected counts %v: total %d, want %d (2 malformed, 1 msg-id-mismatch)", sum.Counts, total, rejected)
	}
}

// idOf returns the id of the event in an input, or "" if it does not parse.
func idOf(in Input) string {
	if in.Refuse != nil {
		return ""
	}
	ev, err := events.Parse(in.Data)
	if err != nil {
		return ""
	}
	return ev.ID
}

type checkerFunc func(events.MoveInput) ([]byte, error)

func (f checkerFunc) CheckMove(in events.MoveInput) ([]byte, error) { return f(in) }

// TestAppendBatchOrder appends several events of one game in one call, with
// a repeated event and a refused one in between.
func TestAppendBatchOrder(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	g := e.k.perRollMatch(t, "batch", gameOpts{rolls: 2})
	in := inputs(t, g[0], g[1], g[1], g[3], g[2], g[3])
	out := mustAppend(t, l, in)
	want := []Outcome{
		{Result: Appended, Index: 0},
		{Result: Appended, Index: 1},
		{Result: Duplicate, Index: 1},
		{Result: Rejected},
		{Result: Appended, Index: 2},
		{Result: Appended, Index: 3},
	}
	for i := range want {
		if out[i].Result != want[i].Result || out[i].Index != want[i].Index {
			t.Errorf("input %d: %v at %d (%v), want %v at %d", i, out[i].Result, out[i].Index, out[i].Reject, want[i].Result, want[i].Index)
		}
	}
	if out[3].Reject == nil || out[3].Reject.Code != events.CodeOutOfOrder {
		t.Errorf("seq 3 before seq 2: %v", out[3].Reject)
	}
}

// TestDedupConcurrent sends the same events from many goroutines at once:
// each is appended exactly once and every caller learns the same index.
func TestDedupConcurrent(t *testing.T) {
	for _, maxIDs := range []int{maxRecentIDs, 3} {
		t.Run(fmt.Sprint("recent=", maxIDs), func(t *testing.T) { testDedupConcurrent(t, maxIDs) })
	}
}

func testDedupConcurrent(t *testing.T, maxIDs int) {
	e := newTestEnv(t)
	e.cfg.MaxBatchEvents = 7 // many groups
	l := e.open()
	l.seq.maxIDs = maxIDs // before any Append: the sequencer is idle
	g := e.k.tavlarenaGame(t, "dedup", gameOpts{rolls: 6})
	const callers = 8
	results := make([][]Outcome, callers)
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			// Each caller sends the game in order, in calls of 1 to 3.
			for i := 0; i < len(g); {
				n := min(1+(i+c)%3, len(g)-i)
				out, err := l.Append(context.Background(), inputs(t, g[i:i+n]...))
				if err != nil {
					t.Error(err)
					return
				}
				results[c] = append(results[c], out...)
				i += n
			}
		})
	}
	wg.Wait()
	size, _ := l.Size()
	if size != uint64(len(g)) {
		t.Fatalf("log has %d leaves, want %d", size, len(g))
	}
	for i := range g {
		appended := 0
		for c := range callers {
			o := results[c][i]
			// A caller may be refused as out-of-order when another
			// caller's copy of an earlier event is not yet appended;
			// an event it sees as appended or duplicate has the one
			// index it has in the log.
			if o.Result == Rejected {
				continue
			}
			if o.Result == Appended {
				appended++
			}
			leaves, err := l.LeavesAt(context.Background(), []uint64{o.Index})
			if err != nil || !bytes.Equal(leaves[0], g[i]) {
				t.Errorf("caller %d event %d: index %d does not hold it (%v)", c, i, o.Index, err)
			}
		}
		if appended != 1 {
			t.Errorf("event %d appended %d times", i, appended)
		}
	}
}

// TestFailedReveal appends games whose seed does not match: the reveal is
// appended and the game marked failed, in the game state, the finished index
// and the statistics.
func TestFailedReveal(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	good := e.k.anchoredGame(t, "good", gameOpts{rolls: 3})
	bad := e.k.tavlarenaGame(t, "bad", gameOpts{rolls: 3, badSeed: true})
	badRoll := e.k.perRollMatch(t, "bad-roll", gameOpts{rolls: 2, badSeed: true})
	appendAll(t, l, good, 5)
	appendAll(t, l, bad, 5)
	appendAll(t, l, badRoll, 5)
	ctx := context.Background()
	for _, tc := range []struct {
		leaves [][]byte
		status events.Status
		check  events.FailCheck
	}{
		{good, events.StatusVerified, ""},
		{bad, events.StatusFailed, events.FailCommitment},
		{badRoll, events.StatusFailed, events.FailCommitment},
	} {
		id := parse(t, tc.leaves[0]).Game
		g, err := l.Game(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if g.Status != tc.status || !g.Closed || len(g.Leaves) != len(tc.leaves) {
			t.Errorf("game %s: status %s closed %v with %d leaves, want %s, closed, %d", id, g.Status, g.Closed, len(g.Leaves), tc.status, len(tc.leaves))
		}
		if tc.check != "" && (g.Failure == nil || g.Failure.Check != tc.check) {
			t.Errorf("game %s: failure %v, want check %s", id, g.Failure, tc.check)
		}
		last := parse(t, tc.leaves[len(tc.leaves)-1])
		idx, _, err := l.Lookup(ctx, last.Emitter, last.ID)
		if err != nil || idx != g.Leaves[len(g.Leaves)-1] {
			t.Errorf("game %s: its last event is at %d (%v), the game says %d", id, idx, err, g.Leaves[len(g.Leaves)-1])
		}
	}
	fin, err := l.Finished(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(fin) != 3 || fin[0].Status != events.StatusVerified || fin[1].Status != events.StatusFailed || fin[2].Status != events.StatusFailed {
		t.Errorf("finished games %+v", fin)
	}
	st, _ := l.Stats()
	if st.Verified() != 1 || st.Failed != 2 || st.Finished != 3 || st.Games != 3 {
		t.Errorf("stats: %d verified, %d failed, %d finished of %d games", st.Verified(), st.Failed, st.Finished, st.Games)
	}
}

// TestStatsProjection checks the statistics against counts made here from
// the leaves.
func TestStatsProjection(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	leaves := newStreamGen(t, e.k, "stats", 7, 6).take(3000)
	appendAll(t, l, leaves, 64)
	var want Stats
	types := map[events.Type]uint64{}
	for _, leaf := range leaves {
		ev := parse(t, leaf)
		types[ev.Type]++
		var d dice.Dice
		opening := false
		switch b := ev.Body.(type) {
		case events.Roll:
			d, opening = b.Dice, b.Kind == dice.KindOpening
		case events.RollReveal:
			d = b.Dice
		default:
			continue
		}
		r := &want.Play
		if opening {
			r = &want.Opening
		}
		r.Pairs[d[0]-1][d[1]-1]++
	}
	got, err := l.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if got.Events != uint64(len(leaves)) || got.Games != types[events.TypeCommit] {
		t.Errorf("events %d games %d, want %d and %d", got.Events, got.Games, len(leaves), types[events.TypeCommit])
	}
	for ty, n := range types {
		if got.Type(ty) != n {
			t.Errorf("%s: %d, want %d", ty, got.Type(ty), n)
		}
	}
	if got.Opening != want.Opening || got.Play != want.Play {
		t.Errorf("rolls:\n got %+v\n%+v\nwant %+v\n%+v", got.Opening, got.Play, want.Opening, want.Play)
	}
	if got.Opening.Total() == 0 || got.Play.Total() == 0 {
		t.Errorf("%d opening and %d play rolls, want both non-zero", got.Opening.Total(), got.Play.Total())
	}
}

// TestRejectedStoreQuotas: each emitter has its own quota in the rejected
// store. A flood from one emitter fills its quota and is then only counted
// in its summary; the other emitter's records, stored before and after the
// flood, are all kept, and an id rejected for one emitter is not found for
// the other.
func TestRejectedStoreQuotas(t *testing.T) {
	for _, tc := range []struct {
		name    string
		records int
		bytes   int64
	}{
		{"records", 5, 0},
		{"bytes", 0, 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			e.cfg.RejectedQuotaRecords, e.cfg.RejectedQuotaBytes = tc.records, tc.bytes
			l := e.open()
			junk := func(emitter, id string, n int) Input {
				return Input{Emitter: emitter, MsgID: id, Data: bytes.Repeat([]byte{'x'}, n)}
			}
			// The victim's two rejections, before the flood.
			mustAppend(t, l, []Input{junk(emitterB, "victim:0", 100), junk(emitterB, "shared:1", 100)})
			// The flood: 40 calls of 1 to 3 inputs from emitterA, some
			// under the victim's ids, and 3 from emitters with no key.
			const n = 40
			var overQuota int
			for i := range n {
				var in []Input
				for j := range 1 + i%3 {
					in = append(in, junk(emitterA, fmt.Sprint("flood:", i, "-", j), 100+i))
				}
				in = append(in, junk(emitterA, "shared:1", 120))
				for _, o := range mustAppend(t, l, in) {
					if o.Result != Rejected {
						t.Fatalf("%+v", o)
					}
					if o.OverQuota {
						overQuota++
					}
				}
			}
			for i := range 3 {
				mustAppend(t, l, []Input{junk("stranger", fmt.Sprint("s:", i), 50)})
			}
			// The victim's rejection after the flood is stored too.
			after := mustAppend(t, l, []Input{junk(emitterB, "victim:2", 100)})
			if after[0].OverQuota {
				t.Fatalf("the victim's rejection after the flood was not stored: %+v", after[0])
			}
			sum, err := l.RejectedSummary()
			if err != nil {
				t.Fatal(err)
			}
			a, b, u := sum.Emitters[emitterA], sum.Emitters[emitterB], sum.Emitters[""]
			if b.Stored != 3 || b.OverQuota != 0 {
				t.Errorf("victim: %+v, want 3 stored, none over quota", b)
			}
			if u.Stored != 3 || u.OverQuota != 0 {
				t.Errorf("unconfigured emitters: %+v, want 3 stored", u)
			}
			if a.OverQuota == 0 || a.OverQuota != uint64(overQuota) || a.FirstID == "" || a.LastID != "shared:1" {
				t.Errorf("flood: %+v; %d outcomes over quota", a, overQuota)
			}
			if tc.records > 0 && a.Stored != uint64(tc.records) {
				t.Errorf("flood: %d stored, quota %d", a.Stored, tc.records)
			}
			if tc.bytes > 0 && (a.Bytes > uint64(tc.bytes) || a.Bytes+300 < uint64(tc.bytes)) {
				t.Errorf("flood: %d bytes stored, quota %d", a.Bytes, tc.bytes)
			}
			var total uint64
			for _, c := range sum.Counts {
				total += c
			}
			if total != sum.Next+a.OverQuota || sum.Dropped != 0 || sum.First != 0 {
				t.Errorf("counts %v (total %d), next %d, over quota %d, dropped %d", sum.Counts, total, sum.Next, a.OverQuota, sum.Dropped)
			}
			recs, err := l.Rejected(context.Background(), 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if uint64(len(recs)) != sum.Next {
				t.Fatalf("%d records, summary %+v", len(recs), sum)
			}
			var size uint64
			for _, r := range recs {
				b, _ := r.MarshalBinary()
				size += uint64(len(b) + 9)
			}
			if size != sum.Bytes || size != a.Bytes+b.Bytes+u.Bytes {
				t.Errorf("records hold %d bytes, the summary says %d (%d+%d+%d)", size, sum.Bytes, a.Bytes, b.Bytes, u.Bytes)
			}
			// Receipts look rejections up by emitter: the victim's own
			// "shared:1" is the one it gets, the flood's is the flood's.
			ctx := context.Background()
			for _, id := range []string{"victim:0", "shared:1", "victim:2"} {
				r, err := l.RejectedByID(ctx, emitterB, id)
				if err != nil || r.Emitter != emitterB || r.ID != id || r.Size != 100 {
					t.Errorf("RejectedByID(victim, %q) = %+v, %v", id, r, err)
				}
			}
			if r, err := l.RejectedByID(ctx, emitterA, "shared:1"); err != nil || r.Emitter != emitterA {
				t.Errorf("RejectedByID(flood, shared:1) = %+v, %v", r, err)
			}
			if _, err := l.RejectedByID(ctx, emitterA, "victim:0"); !errors.Is(err, ErrNotFound) {
				t.Errorf("RejectedByID(flood, victim:0): %v, want ErrNotFound", err)
			}
			// The counters survive a restart.
			l.Close()
			l = e.open()
			if again, _ := l.RejectedSummary(); !reflect.DeepEqual(again, sum) {
				t.Errorf("after reopening:\n%+v\nwant\n%+v", again, sum)
			}
		})
	}
}

// TestOpenConfig refuses bad configurations and another log's store.
func TestOpenConfig(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	l := e.open()
	l.Close()
	if err := l.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	if _, err := l.Append(ctx, inputs(t, e.k.tavlarenaGame(t, "c", gameOpts{rolls: 1})[0])); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	if _, err := l.Size(); !errors.Is(err, ErrClosed) {
		t.Errorf("Size after Close: %v", err)
	}

	skey, vkey, _ := merkle.GenerateKey(strings.NewReader(strings.Repeat("k", 64)), "another.log")
	s2, _ := merkle.NewSigner(skey)
	v2, _ := merkle.NewVerifier(vkey)
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no dir", func(c *Config) { c.Dir = "" }, "Dir"},
		{"no signer", func(c *Config) { c.Signer = nil }, "Signer"},
		{"mismatched keys", func(c *Config) { c.Verifier = v2 }, "differ"},
		{"another log", func(c *Config) { c.Signer, c.Verifier = s2, v2 }, `holds the log "zarlog.test/log"`},
	} {
		cfg := e.cfg
		tc.edit(&cfg)
		if _, err := Open(ctx, cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// TestDrandQuicknet runs an anchored-v1 game anchored to a real drand
// quicknet beacon through a ledger with the default Config.Beacons (the
// chains package events/drand pins).
func TestDrandQuicknet(t *testing.T) {
	const (
		quicknet = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"
		round    = 657413
		sigHex   = "b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b"
	)
	chain, _ := hex.DecodeString(quicknet)
	sig, _ := hex.DecodeString(sigHex)
	roundTime := time.Unix(1692803367+3*(round-1), 0).UTC()
	e := newTestEnv(t)
	e.cfg.Beacons = nil
	e.clock.t = roundTime.Add(-time.Minute) // the commit is appended before the round exists
	l := e.open()
	k := e.k
	seed := seed32("quicknet")
	anchor := events.AnchorRef{Chain: [32]byte(chain), Round: round}
	c, err := events.NewAnchoredCommit("m", 1, anchor, roundTime.Add(-2*time.Minute), []byte(`{"opening":"western"}`), seed)
	if err != nil {
		t.Fatal(err)
	}
	h := func(seq uint64) events.Header {
		return events.Header{Scheme: events.Anchored, Game: "quicknet-game", Seq: seq, Emitter: emitterA}
	}
	rnd := sha256.Sum256(sig)
	evs := [][]byte{
		mkEvent(t, k, h(0), c, nil),
		mkEvent(t, k, h(1), events.TokenContribution{Seat: 0, Token: "a"}, nil),
		mkEvent(t, k, h(2), events.TokenContribution{Seat: 1, Token: "b"}, nil),
		mkEvent(t, k, h(3), events.Beacon{Chain: anchor.Chain, Randomness: rnd, Round: round, Signature: sig}, nil),
	}
	bad := append([]byte(nil), sig...)
	bad[5] ^= 1
	badBeacon := mkEvent(t, k, h(3), events.Beacon{Chain: anchor.Chain, Randomness: sha256.Sum256(bad), Round: round, Signature: bad}, nil)
	appendAll(t, l, evs[:3], 3)
	if out := mustAppend(t, l, inputs(t, badBeacon))[0]; out.Result != Rejected || out.Reject.Code != events.CodeBadBeacon {
		t.Fatalf("a beacon with a broken signature: %+v %v", out, out.Reject)
	}
	appendAll(t, l, evs[3:], 1)
	g, err := l.Game(context.Background(), "quicknet-game")
	if err != nil || g.Beacon == nil || g.Beacon.Randomness != rnd {
		t.Fatalf("game %+v, %v", g, err)
	}
}

// TestAppendCopiesData: the sequencer works on a copy of the callers'
// bytes, so a caller whose Append returned early (its context ended after
// the inputs were handed over) may reuse its buffer; an Owned input is not
// copied.
func TestAppendCopiesData(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	g := e.k.tavlarenaGame(t, "copy", gameOpts{rolls: 2})
	in := inputs(t, bytes.Clone(g[0]), bytes.Clone(g[1]), bytes.Clone(g[2]))
	in[2].Owned = true
	copied := copyInputs(in)
	if &copied[2].Data[0] != &in[2].Data[0] {
		t.Error("an Owned input was copied")
	}
	in, copied = in[:2], copied[:2]
	items := make([]item, len(copied))
	for i := range copied {
		items[i] = l.check(copied[i])
	}
	for i := range in {
		for j := range in[i].Data {
			in[i].Data[j] = 'x'
		}
		if !bytes.Equal(items[i].in.Data, g[i]) || items[i].ev == nil {
			t.Fatalf("input %d: the sequencer would see %q", i, items[i].in.Data)
		}
	}
}

// TestAppendAbandoned abandons large calls (their context ends while the
// workers check them), closes the ledger at once, and checks that the
// workers stopped before Pebble was closed and that sending the same inputs
// again appends each event exactly once.
func TestAppendAbandoned(t *testing.T) {
	e := newTestEnv(t)
	in := inputs(t, newStreamGen(t, e.k, "abandoned", 5, 16).take(4*checkChunk+17)...)
	for round := range 3 {
		l := e.open()
		ctx, cancel := context.WithCancel(context.Background())
		if round > 0 {
			cancel()
		} else {
			go cancel()
		}
		_, err := l.Append(ctx, in)
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("round %d: %v", round, err)
		}
		if err := l.Close(); err != nil {
			t.Fatalf("round %d: Close: %v", round, err)
		}
	}
	l := e.open()
	outs := mustAppend(t, l, in)
	seen := map[uint64]bool{}
	for i, o := range outs {
		if o.Result != Appended && o.Result != Duplicate {
			t.Fatalf("input %d: %v %v", i, o.Result, o.Reject)
		}
		if seen[o.Index] {
			t.Fatalf("input %d: index %d twice", i, o.Index)
		}
		seen[o.Index] = true
	}
	if size, _ := l.Size(); size != uint64(len(in)) {
		t.Fatalf("size %d after %d events", size, len(in))
	}
}

// TestRejectedStoreMigration opens a rejected store of version 1 (a
// by-id index without the emitter, counters without namespaces): Open
// indexes its records by emitter and id, counts each namespace, and deletes
// the old index.
func TestRejectedStoreMigration(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	in := []Input{
		{Emitter: emitterA, MsgID: "a:1", Data: []byte("junk a")},
		{Emitter: emitterB, MsgID: "b:1", Data: []byte("junk b")},
		{Emitter: "stranger", MsgID: "s:1", Data: []byte("junk s")},
	}
	mustAppend(t, l, in)
	want, _ := l.RejectedSummary()
	l.Close()

	// Make it a version 1 store.
	db := openRaw(t, e)
	b := db.NewBatch()
	b.DeleteRange([]byte{prefixRejectedID}, prefixEnd(prefixRejectedID), nil)
	for i, x := range in {
		k := append([]byte{prefixRejectedIDv1}, x.MsgID...)
		b.Set(binary.BigEndian.AppendUint64(append(k, 0), uint64(i)), nil, nil)
	}
	v1 := want
	v1.Emitters = nil
	meta := v1.marshal()
	meta[0] = rejMetaV1
	meta = meta[:len(meta)-1] // no namespaces: the count 0 is the last byte
	b.Set(keyRejMeta, meta, nil)
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	db.Close()

	l = e.open()
	got, _ := l.RejectedSummary()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after the migration:\n%+v\nwant\n%+v", got, want)
	}
	for _, x := range in {
		if r, err := l.RejectedByID(context.Background(), x.Emitter, x.MsgID); err != nil || r.Emitter != x.Emitter {
			t.Errorf("RejectedByID(%s, %s) = %+v, %v", x.Emitter, x.MsgID, r, err)
		}
	}
	l.Close()
	db = openRaw(t, e)
	defer db.Close()
	it, _ := db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixRejectedIDv1}, UpperBound: prefixEnd(prefixRejectedIDv1)})
	defer it.Close()
	if it.First() {
		t.Errorf("the version 1 index is still there: %q", it.Key())
	}
}
