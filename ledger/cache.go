package ledger

import (
	"container/list"

	"github.com/zarlog/zarlog/events"
)

// cacheEntryOverhead is what a cached state costs besides its own Size: the
// map's and the list's entries and the key.
const cacheEntryOverhead = 160

// cutAbove is how many leaves a cached state's history may hold before the
// cache cuts it (events.Game.Cut): past it, put keeps a cut copy that holds
// only the last few of its leaves, rolls, moves and revealed rolls. A
// state of a game in play grows by an event's history at each event, so
// the copy is made about once every cutAbove-4 events of a game.
const cutAbove = 12

// A gameCache keeps the decoded states of open games, bounded in bytes
// (events.Game.MemSize, its DecodedSize and cacheEntryOverhead each). It
// keeps states cut (events.Game.Cut): what the checks of a game's next
// event read of its history, not the rest, which the store holds (the
// sequencer reads the full state back when an event needs it: the
// sequencer's next). Past its
// bound it drops the least recently put state of the emitter that holds
// the most bytes in it, so one emitter's many or large games push out its
// own states first, never another's that holds less. It is used by the sequencer
// goroutine only.
type gameCache struct {
	max   int64
	bytes int64
	items map[string]*list.Element // by game id; elements hold *cacheEntry
	by    map[string]*emitterCache
	// cutAt is the most leaves a state's history may hold in the cache
	// before it is cut: cutAbove, or for tests, which compare the two,
	// 0 (every state is cut) or -1 (none is).
	cutAt int
}

type cacheEntry struct {
	game, emitter string
	ec            *emitterCache // its emitter's share, which lists it
	g             *events.Game
	size          int // the full state's Size (g may be cut: SizeAfter's)
	mem           int // g.MemSize() + g.DecodedSize(): memory
}

func (e *cacheEntry) cost() int64 {
	return int64(e.mem) + cacheEntryOverhead + int64(len(e.game))
}

// An emitterCache is one emitter's share: its states, most recent first.
type emitterCache struct {
	order *list.List
	bytes int64
}

func newGameCache(max int64) *gameCache {
	return &gameCache{max: max, items: map[string]*list.Element{}, by: map[string]*emitterCache{}, cutAt: cutAbove}
}

// get returns the cached state of game, which may be cut, and its full
// state's size. It leaves the order as it is: the states are in the order
// of their last put (an event that changes its game puts the new state at
// the front; a refused one leaves its game where it was), which spares
// every event a move to the front on top of its put's.
func (c *gameCache) get(game string) (*events.Game, int, bool) {
	e, ok := c.items[game]
	if !ok {
		return nil, 0, false
	}
	ce := e.Value.(*cacheEntry)
	return ce.g, ce.size, true
}

// put keeps g, of the given size (the full state's), as game's state, or a
// cut copy of it if its history holds more than cutAbove leaves (g itself
// does not change: the sequencer may still use it), then drops states until
// the cache is within its bound (possibly g itself, if its emitter holds
// the most). A game already cached keeps its entry, which takes the new
// state and moves to the front of its emitter's list: at a human pace
// every event replaces a cached state, without a new entry and list element.
func (c *gameCache) put(game string, g *events.Game, size int) {
	if c.cutAt >= 0 && g.Held().Leaves > c.cutAt {
		g = g.Cut()
	}
	mem := g.MemSize() + g.DecodedSize()
	if e, ok := c.items[game]; ok {
		ce := e.Value.(*cacheEntry)
		if ce.emitter == g.Emitter { // always: a game's emitter is its commit's
			ec := ce.ec
			old := ce.cost()
			ce.g, ce.size, ce.mem = g, size, mem
			d := ce.cost() - old
			ec.bytes += d
			c.bytes += d
			ec.order.MoveToFront(e)
			c.evict()
			return
		}
		c.remove(game)
	}
	ec := c.by[g.Emitter]
	if ec == nil {
		ec = &emitterCache{order: list.New()}
		c.by[g.Emitter] = ec
	}
	ce := &cacheEntry{game: game, emitter: g.Emitter, ec: ec, g: g, size: size, mem: mem}
	c.items[game] = ec.order.PushFront(ce)
	ec.bytes += ce.cost()
	c.bytes += ce.cost()
	c.evict()
}

// evict drops the least recently put states of the emitter that holds the
// most bytes until the cache is within its bound.
func (c *gameCache) evict() {
	for c.bytes > c.max {
		var big *emitterCache
		for _, ec := range c.by {
			if big == nil || ec.bytes > big.bytes {
				big = ec
			}
		}
		c.remove(big.order.Back().Value.(*cacheEntry).game)
	}
}

func (c *gameCache) remove(game string) {
	e, ok := c.items[game]
	if !ok {
		return
	}
	ce := e.Value.(*cacheEntry)
	ec := ce.ec
	ec.order.Remove(e)
	ec.bytes -= ce.cost()
	c.bytes -= ce.cost()
	if ec.order.Len() == 0 {
		delete(c.by, ce.emitter)
	}
	delete(c.items, game)
}

func (c *gameCache) clear() {
	clear(c.items)
	clear(c.by)
	c.bytes = 0
}

// emitterBytes returns the bytes emitter's states take in the cache.
func (c *gameCache) emitterBytes(emitter string) int64 {
	if ec := c.by[emitter]; ec != nil {
		return ec.bytes
	}
	return 0
}
