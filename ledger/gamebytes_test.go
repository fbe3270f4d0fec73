package ledger

import (
	"fmt"
	"testing"
	"unsafe"

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
							if ce := c.entry(g.ID); ce.g != g {
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
	full := cacheEntry{long: g.ID, g: g, size: size, mem: g.MemSize() + g.DecodedSize()}
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
// states short enough not to be cut, and the games' ids (of a UUID's
// length, as the SDK's) and states. The states of an emitter share its
// name's string, as the sequencer's do (sequencer.intern).
func cacheOfGames(n int) (*gameCache, []string, []*events.Game) {
	c := newGameCache(1 << 30)
	emitters := []string{"emitter-0", "emitter-1", "emitter-2", "emitter-3", "emitter-4"}
	ids := make([]string, n)
	states := make([]*events.Game, n)
	for i := range ids {
		ids[i] = string(appendGameOfCache(nil, i))
		states[i] = &events.Game{ID: ids[i], Emitter: emitters[i%5], Leaves: make([]uint64, 6)}
		c.put(ids[i], states[i], states[i].Size())
	}
	return c, ids, states
}

// appendGameOfCache appends the id of cacheOfGames's game i, of a UUID's
// form.
func appendGameOfCache(b []byte, i int) []byte {
	b = fmt.Appendf(b, "%08x-0000-4000-8000-%012x", uint32(i*2654435761), i)
	return b
}

// queryIDs sets q[k] to the id of cacheOfGames's game js[k], made anew in
// buf (as the sequencer asks with the id of an event it has just parsed,
// never the string the cache keeps): the strings are valid until the next
// call, and must not be kept (the cache keeps no key of a put of a game it
// holds, and the benchmarks put no other).
func queryIDs(buf []byte, q []string, js []int) []byte {
	buf = buf[:0]
	for k, j := range js {
		start := len(buf)
		buf = appendGameOfCache(buf, j)
		q[k] = unsafe.String(&buf[start], len(buf)-start)
	}
	return buf
}

// BenchmarkGameCachePut: put of a game the cache holds already, as each
// event at a human pace does (50,000 games in play, five emitters, states
// short enough not to be cut: the entry's cost, not Cut's), by an id
// string that is not the one the cache holds (queryIDs), in groups of 300.
func BenchmarkGameCachePut(b *testing.B) {
	const games, group = 50_000, 300
	c, _, states := cacheOfGames(games)
	js, q := make([]int, group), make([]string, group)
	buf := make([]byte, 0, group*64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += group {
		n := min(group, b.N-i)
		for k := range n {
			js[k] = ((i + k) * 7919) % games
		}
		b.StopTimer()
		buf = queryIDs(buf, q[:n], js[:n])
		b.StartTimer()
		for k := range n {
			c.put(q[k], states[js[k]], 600)
		}
	}
}

// BenchmarkGameCacheGetPut: what an event at a human pace asks of the
// cache: get its game's state, then, once its group of 300 is prepared,
// put the new one (by id strings that are not the ones the cache holds:
// queryIDs).
func BenchmarkGameCacheGetPut(b *testing.B) {
	const games = 50_000
	c, _, _ := cacheOfGames(games)
	const group = 300
	type got struct {
		g    *events.Game
		size int
	}
	gs := make([]got, group)
	js, q := make([]int, group), make([]string, group)
	buf := make([]byte, 0, group*64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += group {
		n := min(group, b.N-i)
		for k := range n {
			js[k] = ((i + k) * 7919) % games
		}
		b.StopTimer()
		buf = queryIDs(buf, q[:n], js[:n])
		b.StartTimer()
		for k := range n {
			gs[k].g, gs[k].size, _ = c.get(q[k])
		}
		for k := range n {
			c.put(q[k], gs[k].g, gs[k].size)
		}
	}
}

// chain is 0, but the compiler cannot know it: BenchmarkGameCacheGet
// makes each get's id depend on the last get's result with it.
var chain = 0

// BenchmarkGameCacheGet: get of a game the cache holds, by an id string
// that is not the one the cache holds (queryIDs), as each event at a human
// pace does first, and reading the state's size, as the event's checks
// read the state next (50,000 games in play, groups of 300). Each get
// waits for the one before (chain), as the sequencer's gets come one an
// event, between the checks that use them: the processor cannot overlap
// their cache misses as it would in a loop of gets alone.
func BenchmarkGameCacheGet(b *testing.B) {
	const games, group = 50_000, 300
	c, _, _ := cacheOfGames(games)
	js, q := make([]int, group), make([]string, group)
	buf := make([]byte, 0, group*64)
	sum := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += group {
		n := min(group, b.N-i)
		for k := range n {
			js[k] = ((i + k) * 7919) % games
		}
		b.StopTimer()
		buf = queryIDs(buf, q[:n], js[:n])
		b.StartTimer()
		last := 0
		for k := range n {
			g, size, _ := c.get(q[k+last&chain])
			last = len(g.ID) + size
			sum += last
		}
	}
	if sum == 0 {
		b.Fatal("no state")
	}
}
