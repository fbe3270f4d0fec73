package sdk

// Napping reports whether the Client's sender sleeps on a lingering
// message (napOn), for the tests of package sdk_test.
func (c *Client) Napping() bool { return c.nap.wantEvents.Load() > 0 }

// ClosedWakes is the number of naps the Client's closing ended.
func (c *Client) ClosedWakes() int64 { return c.nap.closedWakes.Load() }
