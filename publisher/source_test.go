package publisher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// memStore is a memSource as a LogStore: a game's state is replayed from
// its leaves, and the tally is fixed.
type memStore struct {
	*memSource
	tally events.Tally
}

func (m memStore) Latest() ([]byte, merkle.Checkpoint, <-chan struct{}) {
	note, size, next := m.memSource.Latest()
	return note, merkle.Checkpoint{Size: size}, next
}

func (m memStore) Game(ctx context.Context, id string) (*events.Game, error) {
	leaves, err := m.memSource.GameLeaves(ctx, id)
	if errors.Is(err, ErrNoGame) {
		return nil, fmt.Errorf("game %q: %w", id, merkle.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return replay(leaves)
}

func (m memStore) LeavesAt(ctx context.Context, indices []uint64) ([][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	byIndex := map[uint64][]byte{}
	for _, g := range m.games {
		for _, l := range g {
			byIndex[l.Index] = l.Leaf
		}
	}
	out := make([][]byte, len(indices))
	for i, idx := range indices {
		l, ok := byIndex[idx]
		if !ok {
			return nil, fmt.Errorf("leaf %d: %w", idx, merkle.ErrNotFound)
		}
		out[i] = l
	}
	return out, nil
}

func (m memStore) Tally() (events.Tally, uint64, error) { return m.tally, m.size, nil }

// TestSource reads a LogStore through a Source as each of the publisher's
// interfaces: the checkpoint, the games' leaves and states, the bundles a
// Bundler over the same Source builds, and the statistics.
func TestSource(t *testing.T) {
	ctx := context.Background()
	signer, emitterKey := testKey(t, testEmitter)
	mem := newMemSource(t)
	st := memStore{memSource: mem}
	st.tally.Games, st.tally.Opening.Pairs[2][0], st.tally.Play.Pairs[4][4] = 2, 3, 7
	src := Source{Store: st, Tiles: mem}
	if _, err := src.Checkpoint(ctx); !errors.Is(err, merkle.ErrNotFound) {
		t.Fatalf("checkpoint of an empty log: %v, want merkle.ErrNotFound", err)
	}
	ids := mem.add(t, tavlarenaGame(t, signer, "source-a", 6), perRollMatch(t, signer, "source-b", 3))
	mem.publish(t)
	if note, err := src.Checkpoint(ctx); err != nil || !bytes.Equal(note, mem.note) {
		t.Fatalf("checkpoint %q, %v", note, err)
	}
	if _, size, _ := src.Latest(); size != mem.size {
		t.Errorf("latest size %d, want %d", size, mem.size)
	}
	fin, err := src.Finished(ctx, 0, 10)
	if err != nil || len(fin) != len(ids) {
		t.Fatalf("finished %+v, %v", fin, err)
	}
	for _, id := range ids {
		want, _ := mem.GameLeaves(ctx, id)
		got, err := src.GameLeaves(ctx, id)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("game %s: leaves %v, %v", id, got, err)
		}
		g, err := src.Game(ctx, id)
		if err != nil || g.Status != GameInPlay || len(g.Events) != len(want) || !bytes.Equal(g.Events[0], want[0].Leaf) {
			t.Fatalf("game %s without bundles: %+v, %v", id, g, err)
		}
	}
	if _, err := src.Game(ctx, "no-such-game"); !errors.Is(err, ErrNoGame) {
		t.Errorf("an unknown game: %v, want ErrNoGame", err)
	}

	// A Bundler over the Source builds the bundles; the Source with the
	// bundle store serves them.
	src.Bundles = openTestStore(t, t.TempDir())
	_, ch, stop := runBundler(t, src, src.Bundles)
	for range ids {
		a := nextAnnouncement(t, ch)
		checkBundle(t, src.Bundles, a, mem.vkey, emitterKey)
		g, err := src.Game(ctx, a.Game)
		if err != nil || g.Status != GameFinished || !bytes.Equal(g.Bundle, a.Bundle) {
			t.Errorf("game %s with its bundle: status %v, %v", a.Game, g.Status, err)
		}
	}
	stop()

	s, err := src.Stats(ctx)
	if err != nil || s.Opening != st.tally.Opening || s.Play != st.tally.Play || s.Games != 2 || s.LogSize != mem.size || s.LogSize == 0 {
		t.Errorf("stats %+v, %v", s, err)
	}
}
