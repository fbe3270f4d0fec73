package ledger

import (
	"hash/maphash"

	"github.com/zarlog/zarlog/events"
)

// cacheEntryOverhead is what a cached state costs besides its own Size: the
// map's slot, the entry and the key.
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
//
// Its map is keyed by a seeded 64-bit hash of the game id (maphash), and
// each entry holds its id, which get and put compare: a lookup reads the
// map's slot and the entry, which the caller reads anyway, never a key
// string elsewhere in memory (at a human pace, a cache miss of the
// processor's for each event: docs/BENCHMARKS.md "the game cache keyed by
// a hash"). The id is held in the entry itself when it is at most
// shortID bytes (a UUID's 36), else as a string. Two ids of one hash are
// never both cached: the later put drops the earlier's state, as the
// bound would, and the sequencer reads it back from the store when its
// game's next event comes (SECURITY.md §1: a collision costs a read of a
// state, never an outcome; TestGameCacheCollision).
type gameCache struct {
	max   int64
	bytes int64
	items map[uint64]*cacheEntry // by hash of the game id
	by    map[string]*emitterCache
	seed  maphash.Seed
	// cutAt is the most leaves a state's history may hold in the cache
	// before it is cut: cutAbove, or for tests, which compare the two,
	// 0 (every state is cut) or -1 (none is).
	cutAt int
	// testHash, if not nil, replaces the seeded hash (tests make
	// collisions with it).
	testHash func(game string) uint64
}

// shortID is the longest game id a cache entry holds in itself.
const shortID = 40

// A cacheEntry is a cached state, an element of its emitter's list. Its
// 120 bytes take the allocator's 128-byte class, whose objects begin on a
// cache line: get's fields (the id, g and size) are on the first.
type cacheEntry struct {
	n     uint8         // len(the game id) if it is at most shortID, else 0
	short [shortID]byte // the game id, if n > 0
	g     *events.Game
	size  int // the full state's Size (g may be cut: SizeAfter's)

	mem        int           // g.MemSize() + g.DecodedSize(): memory
	key        uint64        // the map's key: the cache's hash of the game id
	prev, next *cacheEntry   // in its emitter's list, most recent first
	ec         *emitterCache // its emitter's share, which lists it
	long       string        // the game id, if n == 0
}

func (e *cacheEntry) cost() int64 {
	return int64(e.mem) + cacheEntryOverhead + int64(e.idLen())
}

func (e *cacheEntry) idLen() int {
	if e.n > 0 {
		return int(e.n)
	}
	return len(e.long)
}

// game returns e's game id (a new string if it is short: for tests).
func (e *cacheEntry) game() string {
	if e.n > 0 {
		return string(e.short[:e.n])
	}
	return e.long
}

// is reports whether e is game's entry, reading only e if game is short.
func (e *cacheEntry) is(game string) bool {
	if n := int(e.n); n > 0 {
		return len(game) == n && string(e.short[:n]) == game
	}
	return e.long == game
}

// An emitterCache is one emitter's share: its states, most recent first.
type emitterCache struct {
	emitter     string
	front, back *cacheEntry
	n           int
	bytes       int64
}

func (ec *emitterCache) pushFront(e *cacheEntry) {
	e.prev, e.next = nil, ec.front
	if ec.front != nil {
		ec.front.prev = e
	} else {
		ec.back = e
	}
	ec.front = e
	ec.n++
}

func (ec *emitterCache) unlink(e *cacheEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		ec.front = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		ec.back = e.prev
	}
	e.prev, e.next = nil, nil
	ec.n--
}

func (ec *emitterCache) moveToFront(e *cacheEntry) {
	if ec.front == e {
		return
	}
	ec.unlink(e)
	ec.pushFront(e)
}

func newGameCache(max int64) *gameCache {
	return &gameCache{max: max, items: map[uint64]*cacheEntry{}, by: map[string]*emitterCache{}, seed: maphash.MakeSeed(), cutAt: cutAbove}
}

func (c *gameCache) hash(game string) uint64 {
	if c.testHash != nil {
		return c.testHash(game)
	}
	return maphash.String(c.seed, game)
}

// entry returns game's entry, or nil.
func (c *gameCache) entry(game string) *cacheEntry {
	if e := c.items[c.hash(game)]; e != nil && e.is(game) {
		return e
	}
	return nil
}

// get returns the cached state of game, which may be cut, and its full
// state's size. It leaves the order as it is: the states are in the order
// of their last put (an event that changes its game puts the new state at
// the front; a refused one leaves its game where it was), which spares
// every event a move to the front on top of its put's.
func (c *gameCache) get(game string) (*events.Game, int, bool) {
	e := c.entry(game)
	if e == nil {
		return nil, 0, false
	}
	return e.g, e.size, true
}

// put keeps g, of the given size (the full state's), as game's state, or a
// cut copy of it if its history holds more than cutAbove leaves (g itself
// does not change: the sequencer may still use it), then drops states until
// the cache is within its bound (possibly g itself, if its emitter holds
// the most). A game already cached keeps its entry, which takes the new
// state and moves to the front of its emitter's list: at a human pace
// every event replaces a cached state, without a new entry. A state of
// another game of the same hash is dropped.
func (c *gameCache) put(game string, g *events.Game, size int) {
	if c.cutAt >= 0 && g.Held().Leaves > c.cutAt {
		g = g.Cut()
	}
	mem := g.MemSize() + g.DecodedSize()
	key := c.hash(game)
	if e := c.items[key]; e != nil {
		if e.is(game) && e.ec.emitter == g.Emitter { // the emitter: always, a game's is its commit's
			ec := e.ec
			old := e.cost()
			e.g, e.size, e.mem = g, size, mem
			d := e.cost() - old
			ec.bytes += d
			c.bytes += d
			ec.moveToFront(e)
			c.evict()
			return
		}
		c.drop(e)
	}
	ec := c.by[g.Emitter]
	if ec == nil {
		ec = &emitterCache{emitter: g.Emitter}
		c.by[g.Emitter] = ec
	}
	e := &cacheEntry{ec: ec, g: g, size: size, mem: mem, key: key}
	if len(game) <= shortID {
		e.n = uint8(len(game))
		copy(e.short[:], game)
	} else {
		e.long = game
	}
	c.items[key] = e
	ec.pushFront(e)
	ec.bytes += e.cost()
	c.bytes += e.cost()
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
		c.drop(big.back)
	}
}

// remove drops game's state, if the cache holds it.
func (c *gameCache) remove(game string) {
	if e := c.entry(game); e != nil {
		c.drop(e)
	}
}

func (c *gameCache) drop(e *cacheEntry) {
	ec := e.ec
	ec.unlink(e)
	ec.bytes -= e.cost()
	c.bytes -= e.cost()
	if ec.n == 0 {
		delete(c.by, ec.emitter)
	}
	delete(c.items, e.key)
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
