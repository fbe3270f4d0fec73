package publisher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/verifier"
)

// memSource is a BundleSource over an apiLog: the finished games and their
// leaves as the test appended them, and checkpoints published when the
// test says.
type memSource struct {
	*apiLog
	mu       sync.Mutex
	size     uint64
	next     chan struct{}
	finished []events.FinishedGame
	games    map[string][]IndexedLeaf
}

func newMemSource(t testing.TB) *memSource {
	return &memSource{apiLog: &apiLog{memLog: newMemLog(t)}, next: make(chan struct{}), games: map[string][]IndexedLeaf{}}
}

// add appends games (interleaved, with filler leaves between), records
// them as finished and returns their ids in the order they finished.
func (s *memSource) add(t testing.TB, games ...[][]byte) []string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.finished)
	for _, g := range s.interleave(t, fillerLeaf, 3, games...) {
		id := gameIDOf(t, g[0].Leaf)
		s.games[id] = g
		s.finished = append(s.finished, events.FinishedGame{Index: g[len(g)-1].Index, Game: id})
	}
	// Finished lists games in the order of their final events.
	for i := 1; i < len(s.finished); i++ {
		for j := i; j > 0 && s.finished[j].Index < s.finished[j-1].Index; j-- {
			s.finished[j], s.finished[j-1] = s.finished[j-1], s.finished[j]
		}
	}
	var ids []string
	for _, f := range s.finished[n:] {
		ids = append(ids, f.Game)
	}
	return ids
}

// publish signs the current tree and publishes the checkpoint.
func (s *memSource) publish(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sign(t)
	s.size = s.builder.Size()
	close(s.next)
	s.next = make(chan struct{})
}

func (s *memSource) Latest() ([]byte, uint64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.note, s.size, s.next
}

func (s *memSource) Finished(ctx context.Context, from uint64, limit int) ([]events.FinishedGame, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []events.FinishedGame
	for _, f := range s.finished {
		if f.Index >= from && len(out) < limit {
			out = append(out, f)
		}
	}
	return out, nil
}

func (s *memSource) GameLeaves(ctx context.Context, game string) ([]IndexedLeaf, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.games[game]
	if !ok {
		return nil, fmt.Errorf("%s: %w", game, ErrNoGame)
	}
	return g, nil
}

func (s *memSource) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.apiLog.ReadTiles(ctx, tiles)
}

// runBundler runs a Bundler over src and store until the test ends (or
// stop is called) and returns its announcements.
func runBundler(t *testing.T, src BundleSource, store *Store) (*Bundler, <-chan Announcement, func()) {
	t.Helper()
	ch := make(chan Announcement, 64)
	b, err := NewBundler(BundlerConfig{Source: src, Store: store, Workers: 2, Batch: 2,
		Announce: func(ctx context.Context, a Announcement) error { ch <- a; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Run returned %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return b, ch, stop
}

func openTestStore(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := OpenStore(StoreConfig{Dir: dir, Origin: testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// next returns the next announcement, failing after a generous deadline
// (a hang, not a timing assertion).
func nextAnnouncement(t *testing.T, ch <-chan Announcement) Announcement {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(30 * time.Second):
		t.Fatal("no announcement")
		return Announcement{}
	}
}

// TestBundler: bundles are built once each, in log order, as soon as a
// published checkpoint covers the game; they are stored, announced, and
// verify; a Bundler restarted on the same store builds nothing twice; a
// game that cannot be proved is skipped and counted; Reset builds them all
// again at the latest checkpoint.
func TestBundler(t *testing.T) {
	signer, emitterKey := testKey(t, testEmitter)
	src := newMemSource(t)
	dir := t.TempDir()
	store := openTestStore(t, dir)

	a := src.add(t, tavlarenaGame(t, signer, "bundler-a", 8))
	// A finished game the Bundler cannot prove: its leaves stop before
	// the reveal.
	cut := tavlarenaGame(t, signer, "bundler-cut", 4)
	cutID := src.add(t, cut[:len(cut)-1])
	src.publish(t) // covers a and the cut game
	bc := src.add(t, anchoredGame(t, signer, "bundler-b", 5), perRollMatch(t, signer, "bundler-c", 3))
	// Not yet covered: nothing about b and c until the next checkpoint.

	b1, ch, stop := runBundler(t, src, store)
	got := nextAnnouncement(t, ch)
	if got.Game != a[0] || got.Emitter != testEmitter || got.CheckpointSize != src.size {
		t.Fatalf("first announcement %s by %s at %d, want %s by %s at %d", got.Game, got.Emitter, got.CheckpointSize, a[0], testEmitter, src.size)
	}
	checkBundle(t, store, got, src.vkey, emitterKey)

	src.publish(t)
	for _, want := range bc {
		got := nextAnnouncement(t, ch)
		if got.Game != want || got.CheckpointSize != src.size {
			t.Fatalf("announcement %s at %d, want %s at %d", got.Game, got.CheckpointSize, want, src.size)
		}
		checkBundle(t, store, got, src.vkey, emitterKey)
	}
	if n := testutil.ToFloat64(b1.skipped); n != 1 {
		t.Errorf("%v games skipped, want 1 (%s)", n, cutID[0])
	}
	if _, err := store.Bundle(context.Background(), cutID[0]); !errors.Is(err, ErrNoBundle) {
		t.Errorf("the cut game has a bundle: %v", err)
	}
	stop()

	// A new Bundler on the same store: the next bundle it announces is the
	// new game's, not one it built before.
	_, ch, stop = runBundler(t, src, store)
	d := src.add(t, tavlarenaGame(t, signer, "bundler-d", 3))
	src.publish(t)
	if got := nextAnnouncement(t, ch); got.Game != d[0] {
		t.Fatalf("after a restart the first announcement is %s, want the new game %s", got.Game, d[0])
	}
	stop()
	refs, err := store.List(context.Background(), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]string{}, a...), bc...), d...)
	if len(refs) != len(want) {
		t.Fatalf("the store lists %d bundles, want %d", len(refs), len(want))
	}
	for i, r := range refs {
		if r.Game != want[i] {
			t.Errorf("stored bundle %d is %s, want %s", i, r.Game, want[i])
		}
	}

	// Reset: everything again, at the latest checkpoint.
	if err := store.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c, err := store.Cursor(); err != nil || c != 0 {
		t.Fatalf("cursor after Reset: %d, %v", c, err)
	}
	_, ch, _ = runBundler(t, src, store)
	for _, w := range want {
		got := nextAnnouncement(t, ch)
		if got.Game != w || got.CheckpointSize != src.size {
			t.Fatalf("after Reset: %s at %d, want %s at %d", got.Game, got.CheckpointSize, w, src.size)
		}
	}
}

// checkBundle checks that an announced bundle is the stored one and that
// it verifies with every key.
func checkBundle(t *testing.T, store *Store, a Announcement, logKey, emitterKey string) {
	t.Helper()
	stored, err := store.Bundle(context.Background(), a.Game)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stored, a.Bundle) {
		t.Fatalf("the announced bundle of %s is not the stored one", a.Game)
	}
	lk, err := verifier.ParseLogKey(logKey)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := verifier.ParseEmitterKeys(emitterKey)
	if err != nil {
		t.Fatal(err)
	}
	if r := verifier.Verify(a.Bundle, verifier.Options{LogKey: lk, EmitterKeys: ek}); r.Exit() != 0 {
		t.Fatalf("bundle of %s: exit %d\n%s", a.Game, r.Exit(), r.Text(verifier.English))
	}
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	f := testFixture(t)
	b3, b9 := f.games[f.ids["tavlarena-v1"]].Bundle, f.games[f.ids["anchored-v1"]].Bundle
	dir := t.TempDir()
	s, err := OpenStore(StoreConfig{Dir: dir, Origin: testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(ctx, 10, []StoredBundle{{Index: 3, Game: "g3", Bundle: b3}, {Index: 9, Game: "g9", Bundle: b9}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		next    uint64
		bundles []StoredBundle
	}{
		{"cursor back", 9, nil},
		{"index below the cursor", 20, []StoredBundle{{Index: 9, Game: "x", Bundle: b3}}},
		{"index at next", 20, []StoredBundle{{Index: 20, Game: "x", Bundle: b3}}},
		{"not a bundle", 20, []StoredBundle{{Index: 15, Game: "x", Bundle: []byte("{}")}}},
	} {
		if err := s.Add(ctx, tc.next, tc.bundles); err == nil {
			t.Errorf("%s: Add accepted it", tc.name)
		}
	}
	// A game that has a bundle keeps it.
	if err := s.Add(ctx, 12, []StoredBundle{{Index: 11, Game: "g3", Bundle: b9}}); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Bundle(ctx, "g3"); err != nil || !bytes.Equal(b, b3) {
		t.Errorf("g3: %.40q, %v", b, err)
	}
	if c, err := s.Cursor(); err != nil || c != 12 {
		t.Errorf("cursor %d, %v; want 12", c, err)
	}
	refs, err := s.List(ctx, 4, 10)
	if err != nil || len(refs) != 1 || refs[0] != (BundleRef{Index: 9, Game: "g9"}) {
		t.Errorf("List from 4: %v, %v", refs, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(StoreConfig{Dir: dir, Origin: "another.example/log"}); !errors.Is(err, ErrStoreMismatch) {
		t.Errorf("opening another log's store: %v", err)
	}
	s = openTestStore(t, dir)
	if b, err := s.Bundle(ctx, "g9"); err != nil || !bytes.Equal(b, b9) {
		t.Errorf("after reopening, g9: %.40q, %v", b, err)
	}
	if _, err := s.Bundle(ctx, "g4"); !errors.Is(err, ErrNoBundle) {
		t.Errorf("g4: %v", err)
	}
}

// TestStoreIndexes: the seal and seat tables find every game that has a
// seal code or a seat id, the last finished first, including two games
// that share a seal; Recent lists the games newest first; a store opened
// without the tables (one made before them) gets them rebuilt.
func TestStoreIndexes(t *testing.T) {
	ctx := context.Background()
	f := testFixture(t)
	tav, anc, per := f.games[f.ids["tavlarena-v1"]].Bundle, f.games[f.ids["anchored-v1"]].Bundle, f.games[f.ids["per-roll-v1"]].Bundle
	dir := t.TempDir()
	s, err := OpenStore(StoreConfig{Dir: dir, Origin: testOrigin})
	if err != nil {
		t.Fatal(err)
	}
	// "twin" holds the same bundle as "tav": two games under one seal, as
	// two games whose commitments share their first 40 bits would be.
	if err := s.Add(ctx, 100, []StoredBundle{{Index: 10, Game: "tav", Bundle: tav}, {Index: 20, Game: "anc", Bundle: anc},
		{Index: 30, Game: "per", Bundle: per}, {Index: 40, Game: "twin", Bundle: tav}}); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		sums := map[string]GameSummary{}
		for name, b := range map[string][]byte{"tav": tav, "anc": anc, "per": per} {
			sum, _, err := Summarize(name, b)
			if err != nil {
				t.Fatal(err)
			}
			sums[name] = sum
		}
		games := func(refs []BundleRef, err error) []string {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			var out []string
			for _, r := range refs {
				out = append(out, r.Game)
			}
			return out
		}
		if got := games(s.FindSeal(ctx, sums["tav"].Seals[0], 10)); fmt.Sprint(got) != "[twin tav]" {
			t.Errorf("%s: seal of tav: %v, want [twin tav]", when, got)
		}
		if got := games(s.FindSeal(ctx, sums["tav"].Seals[0], 1)); fmt.Sprint(got) != "[twin]" {
			t.Errorf("%s: seal of tav, limit 1: %v", when, got)
		}
		if got := games(s.FindSeal(ctx, sums["anc"].Seals[0], 10)); fmt.Sprint(got) != "[anc]" {
			t.Errorf("%s: seal of anc: %v", when, got)
		}
		if len(sums["per"].Seals) != 6 {
			t.Fatalf("per-roll-v1 match: %d seals, want 6", len(sums["per"].Seals))
		}
		for i, seal := range sums["per"].Seals {
			if got := games(s.FindSeal(ctx, seal, 10)); fmt.Sprint(got) != "[per]" {
				t.Errorf("%s: seal of roll %d of per: %v", when, i, got)
			}
		}
		for seat := range 2 {
			if got := games(s.GamesOf(ctx, testEmitter, sums["tav"].Seats[seat], 10)); fmt.Sprint(got) != "[twin tav]" {
				t.Errorf("%s: games of seat %d: %v", when, seat, got)
			}
			if got := games(s.GamesOf(ctx, "another-platform", sums["tav"].Seats[seat], 10)); got != nil {
				t.Errorf("%s: another platform's games of seat %d: %v", when, seat, got)
			}
			if got, err := s.EmittersOf(ctx, sums["tav"].Seats[seat], 10); err != nil || fmt.Sprint(got) != "["+testEmitter+"]" {
				t.Errorf("%s: the platforms of seat %d: %v, %v", when, seat, got, err)
			}
		}
		if got := games(s.GamesOf(ctx, testEmitter, labelUUID("nobody"), 10)); got != nil {
			t.Errorf("%s: games of an unknown seat id: %v", when, got)
		}
		if got, err := s.EmittersOf(ctx, labelUUID("nobody"), 10); err != nil || got != nil {
			t.Errorf("%s: the platforms of an unknown seat id: %v, %v", when, got, err)
		}
		var none dice.Seal
		if got := games(s.FindSeal(ctx, none, 10)); got != nil {
			t.Errorf("%s: an unknown seal: %v", when, got)
		}
		for name, b := range map[string][]byte{"tav": tav, "anc": anc, "per": per} {
			sum, ev, _ := Summarize(name, b)
			sum.Moves = nil
			want := GameRow{GameSummary: sum, Index: map[string]uint64{"tav": 10, "anc": 20, "per": 30}[name], Dice: DiceOf(sum, ev)}
			got, err := s.Row(ctx, name)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: row of %s:\n got %+v, %v\nwant %+v", when, name, got, err, want)
			}
		}
		if _, err := s.Row(ctx, "nothing"); !errors.Is(err, ErrNoBundle) {
			t.Errorf("%s: the row of a game without a bundle: %v", when, err)
		}
		if got := games(s.Recent(ctx, 3)); fmt.Sprint(got) != "[twin per anc]" {
			t.Errorf("%s: Recent(3): %v", when, got)
		}
	}
	check("after Add")
	// A store from before the tables: they and their version are gone.
	for _, k := range [][]byte{{keySeal}, {keySeat}, {keyEmitters}} {
		if err := s.db.DeleteRange(k, []byte{k[0] + 1}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.db.Delete(keyIndexes, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTestStore(t, dir)
	check("after the rebuild on open")
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if refs, err := s.FindSeal(ctx, dice.SealOf([32]byte{}), 10); err != nil || len(refs) != 0 {
		t.Errorf("after Reset: %v, %v", refs, err)
	}
}

func TestSeatNames(t *testing.T) {
	for _, tc := range []struct {
		settings string
		want     [2]string
	}{
		{`{"seatNames":["Ayşe","محمد"]}`, [2]string{"Ayşe", "محمد"}},
		{`{}`, [2]string{}},
		{`{"seatNames":["Ayşe"]}`, [2]string{}},
		{`{"seatNames":["Ayşe",7]}`, [2]string{}},
		{`{"seatNames":["Ayşe",""]}`, [2]string{}},
		{`{"seatNames":["Ayşe","a\u202eb"]}`, [2]string{}},
		{`{"seatNames":["Ayşe","a\nb"]}`, [2]string{}},
		{`{"seatNames":["` + strings.Repeat("é", MaxSeatName) + `","x"]}`, [2]string{strings.Repeat("é", MaxSeatName), "x"}},
		{`{"seatNames":["` + strings.Repeat("é", MaxSeatName+1) + `","x"]}`, [2]string{}},
		{`[1]`, [2]string{}},
	} {
		if got := seatNames([]byte(tc.settings)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.settings, got, tc.want)
		}
	}
}

// BenchmarkBundler measures the Bundler end to end: 64 finished
// tavlarena-v1 games of 40 rolls, interleaved in a log with filler leaves,
// built (and self-checked), stored with fsync and announced, with as many
// workers as GOMAXPROCS. It reports games/s.
func BenchmarkBundler(b *testing.B) {
	signer, _ := testKey(b, testEmitter)
	src := newMemSource(b)
	var games [][][]byte
	for i := range 64 {
		games = append(games, tavlarenaGame(b, signer, fmt.Sprintf("bench-%d", i), 40))
	}
	src.add(b, games...)
	src.publish(b)
	n := 0
	for b.Loop() {
		store := openTestStore(b, b.TempDir())
		done := make(chan struct{})
		count := 0
		bu, err := NewBundler(BundlerConfig{Source: src, Store: store, Announce: func(ctx context.Context, a Announcement) error {
			if count++; count == len(games) {
				close(done)
			}
			return nil
		}})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		ended := make(chan error, 1)
		go func() { ended <- bu.Run(ctx) }()
		<-done
		cancel()
		<-ended
		n += len(games)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "games/s")
}
