package sdk

// Napping reports whether the Client's sender sleeps on a lingering
// message (napOn), for the tests of package sdk_test.
func (c *Client) Napping() bool { return c.nap.wantEvents.Load() > 0 }

// ClosedWakes is the number of naps the Client's closing ended.
func (c *Client) ClosedWakes() int64 { return c.nap.closedWakes.Load() }

// DropOldestHeld forgets the event held longest, as the ledger's logged
// verdict does, and reports whether one was held (benchmarks keep the held
// events at a human pace's number with it).
func (c *Client) DropOldestHeld() bool {
	f := c.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.order) == 0 {
		return false
	}
	f.stats.Logged++
	c.dropLocked(f.order[0])
	return true
}
