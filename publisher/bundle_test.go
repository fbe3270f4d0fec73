package publisher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/verifier"
)

// fillerGames returns the leaves of other games' events: contributions of
// tavlarena-v1 games that are not ours, as valid events.
func fillerGames(t testing.TB) func(i int) []byte {
	return func(i int) []byte {
		id := labelUUID(fmt.Sprintf("filler/%d", i/2))
		ev, err := events.New(events.Header{Scheme: events.Tavlarena, Game: id.String(), Seq: uint64(1 + i%2), Emitter: "other-platform"},
			events.Contribution{Contribution: label32(fmt.Sprint("filler", i)), Seat: i % 2})
		if err != nil {
			t.Fatal(err)
		}
		b, err := events.Format(ev)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func mustOptions(t testing.TB, logVkey, emitterVkey string) verifier.Options {
	t.Helper()
	k, err := verifier.ParseLogKey(logVkey)
	if err != nil {
		t.Fatal(err)
	}
	e, err := verifier.ParseEmitterKeys(emitterVkey)
	if err != nil {
		t.Fatal(err)
	}
	return verifier.Options{LogKey: k, EmitterKeys: e}
}

// TestBundleRoundTrip builds the bundles of a game of each scheme from a
// real in-memory log, in which the games' events are interleaved with each
// other and with other games' events, and verifies them completely: every
// check passes, with the log key and the emitter key; every value checked is
// the logged one; each entry's tlog-proof verifies on its own.
func TestBundleRoundTrip(t *testing.T) {
	ctx := context.Background()
	signer, emitterVkey := testKey(t, testEmitter)
	log := newMemLog(t)
	games := [][][]byte{
		tavlarenaGame(t, signer, "rt-tav", 30),
		anchoredGame(t, signer, "rt-anc", 30),
		perRollMatch(t, signer, "rt-per", 12),
		tavlarenaGame(t, signer, "rt-short", 0),
	}
	log.append(t, fillerGames(t)(20_000)) // the games do not start at index 0
	leaves := log.interleave(t, fillerGames(t), 3, games...)
	log.append(t, fillerGames(t)(10_000))
	cp := log.checkpoint(t)
	opt := mustOptions(t, log.vkey, emitterVkey)

	for g, ls := range leaves {
		b, err := BuildBundle(ctx, log, ls, cp)
		if err != nil {
			t.Fatalf("game %d: %v", g, err)
		}
		again, err := BuildBundle(ctx, log, ls, cp)
		if err != nil || !bytes.Equal(b, again) {
			t.Errorf("game %d: a second build differs (%v)", g, err)
		}
		r := verifier.Verify(b, opt)
		for _, c := range r.Checks {
			if c.Status != verifier.Pass && c.Name != verifier.CheckExpected && c.Name != verifier.CheckLogWitnesses && c.Name != verifier.CheckMoves { // these games do not log their moves
				t.Errorf("game %d: %s %s: %s", g, c.Name, c.Status, c.Detail)
			}
		}
		if r.Exit() != 0 || r.Summary().String() != "Every roll checked" {
			t.Errorf("game %d: exit %d, %s", g, r.Exit(), r.Summary())
		}
		// Without keys it still passes, and says what it did not check.
		if r := verifier.Verify(b, verifier.Options{}); r.Exit() != 0 || r.Summary().String() == "Every roll checked" {
			t.Errorf("game %d without keys: exit %d, %q", g, r.Exit(), r.Summary())
		}
		ev, err := verifier.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if len(ev.Log.Entries) != len(games[g]) {
			t.Errorf("game %d: %d entries, want %d", g, len(ev.Log.Entries), len(games[g]))
		}
		for i, e := range ev.Log.Entries {
			if e.Index != ls[i].Index || !bytes.Equal(e.Leaf, games[g][i]) {
				t.Errorf("game %d entry %d: index %d, want %d, or another leaf", g, i, e.Index, ls[i].Index)
			}
		}
		back, err := verifier.Format(ev)
		if err != nil || !bytes.Equal(back, b) {
			t.Errorf("game %d: Format(Parse(bundle)) differs (%v)", g, err)
		}

		tps, err := TlogProofs(b)
		if err != nil {
			t.Fatal(err)
		}
		if len(tps) != len(ls) {
			t.Fatalf("game %d: %d tlog-proofs for %d leaves", g, len(tps), len(ls))
		}
		for i, tp := range tps {
			r := verifier.Verify(tp, opt)
			if r.Exit() != 0 || r.Event == nil || r.Event.Index != ls[i].Index || !bytes.Equal(r.Event.Leaf, ls[i].Leaf) {
				t.Errorf("game %d tlog-proof %d: exit %d\n%s", g, i, r.Exit(), r.Text(verifier.English))
			}
		}
	}
}

// TestBundleLaterCheckpoint: a bundle built at a later checkpoint, after
// other games' events were appended, verifies too, and the proofs differ.
func TestBundleLaterCheckpoint(t *testing.T) {
	ctx := context.Background()
	signer, emitterVkey := testKey(t, testEmitter)
	log := newMemLog(t)
	leaves := log.interleave(t, fillerGames(t), 2, tavlarenaGame(t, signer, "later", 8))
	cp1 := log.checkpoint(t)
	b1, err := BuildBundle(ctx, log, leaves[0], cp1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		log.append(t, fillerGames(t)(1000+i))
	}
	cp2 := log.checkpoint(t)
	b2, err := BuildBundle(ctx, log, leaves[0], cp2)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(b1, b2) {
		t.Error("bundles at checkpoints of different sizes are equal")
	}
	opt := mustOptions(t, log.vkey, emitterVkey)
	for _, b := range [][]byte{b1, b2} {
		if r := verifier.Verify(b, opt); r.Exit() != 0 {
			t.Errorf("exit %d\n%s", r.Exit(), r.Text(verifier.English))
		}
	}
}

// TestBuildBundleRefuses: leaves that are not one finished game in log
// order, and checkpoints that do not cover them, are refused.
func TestBuildBundleRefuses(t *testing.T) {
	ctx := context.Background()
	signer, _ := testKey(t, testEmitter)
	log := newMemLog(t)
	ls := log.interleave(t, fillerGames(t), 2, tavlarenaGame(t, signer, "refuse", 6), perRollMatch(t, signer, "refuse", 2))
	cp := log.checkpoint(t)
	game, other := ls[0], ls[1]
	early, err := merkle.Sign(merkle.Checkpoint{Origin: testOrigin, Size: game[len(game)-1].Index, Hash: merkle.EmptyRoot()}, log.signer)
	if err != nil {
		t.Fatal(err)
	}
	swapped := slices.Clone(game)
	swapped[3], swapped[4] = swapped[4], swapped[3]
	foreign := slices.Insert(slices.Clone(game), 2, other[1])
	for name, tt := range map[string]struct {
		leaves []IndexedLeaf
		cp     []byte
	}{
		"no leaves":            {nil, cp},
		"unfinished":           {game[:len(game)-1], cp},
		"no commit":            {game[1:], cp},
		"swapped":              {swapped, cp},
		"foreign":              {foreign, cp},
		"checkpoint too early": {game, early},
		"not a checkpoint":     {game, []byte("hello\n")},
		"not an event":         {append(slices.Clone(game[:1]), IndexedLeaf{Index: game[1].Index, Leaf: []byte("{}")}), cp},
	} {
		if _, err := BuildBundle(ctx, log, tt.leaves, tt.cp); !errors.Is(err, ErrNotProvable) {
			t.Errorf("%s: error %v, want ErrNotProvable", name, err)
		}
	}
	// A checkpoint that is not of this log's tree: the self-check refuses
	// the bundle its proofs would give.
	wrong, err := merkle.Sign(merkle.Checkpoint{Origin: testOrigin, Size: log.builder.Size(), Hash: merkle.LeafHash([]byte("x"))}, log.signer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := BuildBundle(ctx, log, game, wrong); !errors.Is(err, ErrNotProvable) {
		t.Errorf("wrong root: error %v, want ErrNotProvable", err)
	}
	// Missing tiles are the reader's error.
	empty := newMemLog(t)
	if _, err := BuildBundle(ctx, empty, game, cp); !errors.Is(err, merkle.ErrNotFound) {
		t.Errorf("no tiles: error %v, want merkle.ErrNotFound", err)
	}
}

// TestTlogProofsRefuses: only proof bundles have tlog-proofs.
func TestTlogProofsRefuses(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("{}"), []byte(`{"format":"dice-proof-v1","scheme":"per-roll-v1","matchId":"00112233-4455-6677-8899-aabbccddeeff","rolls":[]}`)} {
		if _, err := TlogProofs(b); err == nil {
			t.Errorf("TlogProofs(%q) succeeded", b)
		}
	}
}
