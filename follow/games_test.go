package follow_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/follow"
	"github.com/zarlog/zarlog/internal/testlog"
)

// TestProjection follows a real ledger and compares the projection with the
// ledger's own: the same finished games in the same order with the same
// status and leaves, and the same roll statistics.
func TestProjection(t *testing.T) {
	ctx := context.Background()
	o := testlog.StartOrigin(t, testlog.OriginConfig{Dir: t.TempDir()})
	ids := o.Play(t, "proj", 6, 20)
	f := follow.NewTestFollower(t, o.URL, o.VKey, nil)
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
	got, err := f.Store().Finished(ctx, 0, 100)
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
		g, err := f.Store().Game(ctx, got[i].Game)
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
	st := f.Store().Stats()
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
	m := follow.NewTestLog(t)
	m.Add([]byte("not an event"))
	m.Add(games[0][0])
	m.Add(games[0][2]) // seq 2 before seq 1: out of order
	m.Add(games[0][1:]...)
	m.Add([]byte{})
	m.Sign()
	url := m.Serve(t)
	f := follow.NewTestFollower(t, url, m.VKey(), nil)
	if _, err := f.Update(ctx); err != nil {
		t.Fatal(err)
	}
	st := f.Store().Stats()
	if st.NonEvents != 2 || st.Refused != 1 || st.Finished != 1 || st.Events != uint64(len(games[0])) {
		t.Fatalf("stats %+v", st)
	}
	us, err := f.Store().Unusable(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 3 || us[0].Index != 0 || us[0].Kind != follow.NotAnEvent || us[1].Index != 2 || us[1].Kind != follow.Refused || us[2].Kind != follow.NotAnEvent {
		t.Fatalf("unusable leaves %+v", us)
	}
	fs, _ := f.Store().Finished(ctx, 0, 10)
	if len(fs) != 1 || fs[0].Status != events.StatusVerified {
		t.Fatalf("finished %+v", fs)
	}
}

// BenchmarkCatchUpEvents is BenchmarkCatchUp from a real ledger holding
// real games (about 20,000 events of the three schemes, moves logged):
// the projection parses and replays every event (events.Apply), which
// costs more than fetching and hashing.
func BenchmarkCatchUpEvents(b *testing.B) {
	o := testlog.StartOrigin(b, testlog.OriginConfig{Dir: b.TempDir()})
	o.WaitBundles(b, o.Play(b, "bench", 200, 40)...) // the origin's bundler is idle while timed
	size, err := o.L.Size()
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	runs := 0
	for b.Loop() {
		f := follow.NewTestFollower(b, o.URL, o.VKey, vfs.Default)
		start := time.Now()
		res, err := f.Update(context.Background())
		total += time.Since(start)
		runs++
		if err != nil || !res.Accepted {
			b.Fatalf("%+v %v", res, err)
		}
		if st := f.Store().Stats(); st.Events != size {
			b.Fatalf("%d events projected of %d", st.Events, size)
		}
		f.Store().Close()
	}
	b.ReportMetric(float64(size), "events")
	b.ReportMetric(float64(size*uint64(runs))/total.Seconds(), "entries/s")
}
