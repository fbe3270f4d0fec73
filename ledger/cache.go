package ledger

import (
	"container/list"

	"github.com/zarlog/zarlog/events"
)

// cacheEntryOverhead is what a cached state costs besides its own Size: the
// map's and the list's entries and the key.
const cacheEntryOverhead = 160

// A gameCache keeps the decoded states of open games, bounded in bytes
// (events.Game.Size, its DecodedSize and cacheEntryOverhead each). Past its
// bound it drops the least recently used state of the emitter that holds
// the most bytes in it, so one emitter's many or large games push out its
// own states first, never another's that holds less. It is used by the sequencer
// goroutine only.
type gameCache struct {
	max   int64
	bytes int64
	items map[string]*list.Element // by game id; elements hold *cacheEntry
	by    map[string]*emitterCache
}

type cacheEntry struct {
	game, emitter string
	g             *events.Game
	size          int // g.Size()
	decoded       int // g.DecodedSize(): memory, not state
}

func (e *cacheEntry) cost() int64 {
	return int64(e.size+e.decoded) + cacheEntryOverhead + int64(len(e.game))
}

// An emitterCache is one emitter's share: its states, most recent first.
type emitterCache struct {
	order *list.List
	bytes int64
}

func newGameCache(max int64) *gameCache {
	return &gameCache{max: max, items: map[string]*list.Element{}, by: map[string]*emitterCache{}}
}

// get returns the cached state of game and its size.
func (c *gameCache) get(game string) (*events.Game, int, bool) {
	e, ok := c.items[game]
	if !ok {
		return nil, 0, false
	}
	ce := e.Value.(*cacheEntry)
	c.by[ce.emitter].order.MoveToFront(e)
	return ce.g, ce.size, true
}

// put keeps g, of the given size, as game's state, then drops states until
// the cache is within its bound (possibly g itself, if its emitter holds
// the most).
func (c *gameCache) put(game string, g *events.Game, size int) {
	c.remove(game)
	ec := c.by[g.Emitter]
	if ec == nil {
		ec = &emitterCache{order: list.New()}
		c.by[g.Emitter] = ec
	}
	ce := &cacheEntry{game: game, emitter: g.Emitter, g: g, size: size, decoded: g.DecodedSize()}
	c.items[game] = ec.order.PushFront(ce)
	ec.bytes += ce.cost()
	c.bytes += ce.cost()
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
	ec := c.by[ce.emitter]
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
