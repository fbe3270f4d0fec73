package follow

import (
	"context"
	"slices"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testlog"
)

// TestProjection follows a real ledger and compares the projection with the
// ledger's own: the same finished games in the same order with the same
// status and leaves, and the same roll statistics.
func TestProjection(t *testing.T) {
	ctx := context.Background()
	o := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	ids := o.Play(t, "proj", 6, 20)
	f := newFollower(t, o.URL, o.VKey, nil)
	if _, err := f.Update(ctx); err != nil {
		t.Fatal(err)
	}
	ids = append(ids, o.Play(t, "proj2", 4, 20)...)
	if _, err := f.Update(ctx); err != nil {
		t.Fatal(err)
	}
	want, err := o.L.Finished(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.store.Finished(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ids) || len(got) != len(want) {
		t.Fatalf("%d finished games, the ledger has %d, %d were played", len(got), len(want), len(ids))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("finished game %d: %+v, the ledger has %+v", i, got[i], want[i])
		}
		g, err := f.store.Game(ctx, got[i].Game)
		if err != nil {
			t.Fatal(err)
		}
		lg, err := o.L.Game(ctx, got[i].Game)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.Leaves, lg.Leaves) || !g.Closed {
			t.Fatalf("game %s: leaves %v, the ledger has %v", g.ID, g.Leaves, lg.Leaves)
		}
	}
	ls, err := o.L.Stats()
	if err != nil {
		t.Fatal(err)
	}
	st := f.store.Stats()
	if st.Tally != ls.Tally || st.Leaves != ls.Events {
		t.Fatalf("stats %+v, the ledger's %+v", st, ls)
	}
	if st.NonEvents != 0 || st.Refused != 0 || st.Finished != uint64(len(ids)) {
		t.Fatalf("stats %+v", st)
	}
}

// TestUnusable: leaves that are not events, and events the state machine
// refuses, are counted and recorded, and make no game.
func TestUnusable(t *testing.T) {
	ctx := context.Background()
	o := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	_, games := o.Games(t, "u", 1, 6)
	m := newMemLog(t)
	m.add([]byte("not an event"))
	m.add(games[0][0])
	m.add(games[0][2]) // seq 2 before seq 1: out of order
	m.add(games[0][1:]...)
	m.add([]byte{})
	m.sign()
	srv := serve(t, m)
	f := newFollower(t, srv.URL, m.vkey, nil)
	if _, err := f.Update(ctx); err != nil {
		t.Fatal(err)
	}
	st := f.store.Stats()
	if st.NonEvents != 2 || st.Refused != 1 || st.Finished != 1 || st.Events != uint64(len(games[0])) {
		t.Fatalf("stats %+v", st)
	}
	us, err := f.store.Unusable(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 3 || us[0].Index != 0 || us[0].Kind != NotAnEvent || us[1].Index != 2 || us[1].Kind != Refused || us[2].Kind != NotAnEvent {
		t.Fatalf("unusable leaves %+v", us)
	}
	fs, _ := f.store.Finished(ctx, 0, 10)
	if len(fs) != 1 || fs[0].Status != events.StatusVerified {
		t.Fatalf("finished %+v", fs)
	}
}
