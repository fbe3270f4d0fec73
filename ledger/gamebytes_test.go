package ledger

import (
	"fmt"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/workload"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// BenchmarkCachedGameBytes measures what the game cache holds for a game of
// the benchmark's workload (workload.DefaultRolls rolls, the rules engine's
// moves), per scheme, at its middle (half its events applied) and at its
// last event before the closing one: the bytes events.Game.Size counts, by
// part, and what the cache counts for the state (cacheEntry.cost), cut as
// the cache cuts it (cached-B) and whole (full-cached-B); "mean": the
// mean over the game's events of what the cache holds for it, the state
// going on from the cut one whenever the cache cut it, as in the sequencer
// (mean-cached-B, what a game in play costs the cache on average; whole:
// mean-full-cached-B). It
// applies the games with events.Next, as the sequencer does.
func BenchmarkCachedGameBytes(b *testing.B) {
	for _, mix := range []string{"tavlarena", "anchored", "per-roll"} {
		for _, at := range []string{"mid", "end", "mean"} {
			b.Run(mix+"/"+at, func(b *testing.B) {
				m, err := workload.ParseMix(mix)
				if err != nil {
					b.Fatal(err)
				}
				gen, err := workload.New(workload.Config{Seed: 1, Mix: m, Moves: true})
				if err != nil {
					b.Fatal(err)
				}
				var sum map[string]float64
				games := 0
				for range b.N {
					evs, err := gen.Game()
					if err != nil {
						b.Fatal(err)
					}
					stop := len(evs) / 2
					if at != "mid" {
						stop = len(evs) - 1
					}
					var g, gf *events.Game
					c, cf := newGameCache(1<<30), newGameCache(1<<30)
					cf.cutAt = -1
					for i, e := range evs[:stop] {
						ev, err := events.Parse(e.Data)
						if err != nil {
							b.Fatal(err)
						}
						env := events.Env{Emitter: e.Emitter, Now: ev.Time, SkipClockChecks: true, Index: uint64(i) * 7,
							Beacons: workload.Beacons, Moves: movecheck.Checker{}}
						if g, err = events.Next(g, ev, env); err != nil {
							b.Fatalf("event %d: %v", i, err)
						}
						if at == "mean" { // the cache's bytes for the game after each event, as the sequencer keeps it
							c.put(g.ID, g, 0)
							if sum == nil {
								sum = map[string]float64{}
							}
							sum["mean-cached-B"] += float64(c.bytes) / float64(stop)
							if gf, err = events.Apply(gf, ev, env); err != nil { // whole, a line of its own
								b.Fatal(err)
							}
							cf.put(gf.ID, gf, 0)
							sum["mean-full-cached-B"] += float64(cf.bytes) / float64(stop)
							if ce := c.items[g.ID].Value.(*cacheEntry); ce.g != g {
								g = ce.g // the cache cut it: the game goes on from the cut state
							}
						}
					}
					if at == "mean" {
						games++
						continue
					}
					p := partsOf(g)
					if sum == nil {
						sum = map[string]float64{}
					}
					for k, v := range p {
						sum[k] += float64(v)
					}
					games++
				}
				for k, v := range sum {
					b.ReportMetric(v/float64(games), k)
				}
			})
		}
	}
}

// partsOf returns a state's bytes by part, as events.Game.Size and the
// cache count them.
func partsOf(g *events.Game) map[string]int {
	moves := 0
	for _, m := range g.Moves {
		moves += 32 + len(m.Play)
	}
	size := g.Size()
	full := cacheEntry{game: g.ID, g: g, size: size, mem: g.MemSize() + g.DecodedSize()}
	c := newGameCache(1 << 30)
	c.put(g.ID, g, size)
	cached := c.bytes
	hist := 8*len(g.Leaves) + 40*len(g.Rolls) + 152*len(g.RollRecords) + moves
	return map[string]int{
		"leaves-B": 8 * len(g.Leaves), "rolls-B": 40*len(g.Rolls) + 152*len(g.RollRecords), "moves-B": moves,
		"fixed-B": size - hist, "decoded-B": g.DecodedSize(), "size-B": size, "full-cached-B": int(full.cost()), "cached-B": int(cached),
		"events": len(g.Leaves), "capB": capOf(g),
	}
}

func capOf(g *events.Game) int {
	return 8*cap(g.Leaves) + 40*cap(g.Rolls) + 152*cap(g.RollRecords) + 32*cap(g.Moves)
}

// cacheOfGames returns a cache of n games in play, of five emitters, with
// states short enough not to be cut, and the games' ids and states.
func cacheOfGames(n int) (*gameCache, []string, []*events.Game) {
	c := newGameCache(1 << 30)
	ids := make([]string, n)
	states := make([]*events.Game, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("game-%06d", i)
		states[i] = &events.Game{ID: ids[i], Emitter: fmt.Sprintf("emitter-%d", i%5), Leaves: make([]uint64, 6)}
		c.put(ids[i], states[i], states[i].Size())
	}
	return c, ids, states
}

// BenchmarkGameCachePut: put of a game the cache holds already, as each
// event at a human pace does (50,000 games in play, five emitters, states
// short enough not to be cut: the entry's cost, not Cut's).
func BenchmarkGameCachePut(b *testing.B) {
	const games = 50_000
	c, ids, states := cacheOfGames(games)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		j := (i * 7919) % games
		c.put(ids[j], states[j], 600)
	}
}

// BenchmarkGameCacheGetPut: what an event at a human pace asks of the
// cache: get its game's state, then, once its group of 300 is prepared,
// put the new one.
func BenchmarkGameCacheGetPut(b *testing.B) {
	const games = 50_000
	c, ids, _ := cacheOfGames(games)
	b.ReportAllocs()
	b.ResetTimer()
	const group = 300
	type got struct {
		g    *events.Game
		size int
	}
	gs := make([]got, group)
	for i := 0; i < b.N; i += group {
		n := min(group, b.N-i)
		for k := range n {
			j := ((i + k) * 7919) % games
			gs[k].g, gs[k].size, _ = c.get(ids[j])
		}
		for k := range n {
			j := ((i + k) * 7919) % games
			c.put(ids[j], gs[k].g, gs[k].size)
		}
	}
}
