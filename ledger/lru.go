package ledger

import "container/list"

// An lru is a least-recently-used cache of decoded game states, bounded by
// count. It is used by the sequencer goroutine only.
type lru[V any] struct {
	max   int
	order *list.List // front: most recent; elements hold *lruEntry
	items map[string]*list.Element
}

type lruEntry[V any] struct {
	key string
	val V
}

func newLRU[V any](max int) *lru[V] {
	return &lru[V]{max: max, order: list.New(), items: make(map[string]*list.Element, max)}
}

func (c *lru[V]) get(key string) (V, bool) {
	e, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry[V]).val, true
}

func (c *lru[V]) put(key string, val V) {
	if e, ok := c.items[key]; ok {
		e.Value.(*lruEntry[V]).val = val
		c.order.MoveToFront(e)
		return
	}
	c.items[key] = c.order.PushFront(&lruEntry[V]{key, val})
	for c.order.Len() > c.max {
		e := c.order.Back()
		c.order.Remove(e)
		delete(c.items, e.Value.(*lruEntry[V]).key)
	}
}

func (c *lru[V]) remove(key string) {
	if e, ok := c.items[key]; ok {
		c.order.Remove(e)
		delete(c.items, key)
	}
}

func (c *lru[V]) clear() {
	c.order.Init()
	clear(c.items)
}
