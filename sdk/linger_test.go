package sdk

import (
	"context"
	"testing"
	"time"
)

// TestLingerDecision: the adaptive linger's decision, on an injected
// clock. A message waits only while the emitter's recent rate predicts
// another event within a quarter of its bound and before the bound, and
// never a quarter of the bound past the last event; the Node SDK's twin
// (sdk/js/test/sdk.test.js, "the linger's decision") checks the same
// cases.
func TestLingerDecision(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 22, 0, 0, 0, time.UTC)
	ms := func(f float64) time.Time { return t0.Add(time.Duration(f * float64(time.Millisecond))) }
	// n arrivals, every gap ms from 0; then the decision for a message
	// whose first event was taken first ms after the last arrival, asked
	// after ms after it. The rate just after an arrival is a little above
	// 1/gap (the count of a steady stream peaks at 1/(1-e^(-gap/100 ms))
	// at each arrival).
	const d = DefaultLinger // 20 ms: a quarter is 5 ms, 200 events a second
	for _, tc := range []struct {
		name        string
		bound       time.Duration
		gap         float64 // ms between arrivals
		n           int
		first       float64 // the message's first event, ms after the last arrival (negative: before it)
		after       float64 // the decision, ms after the last arrival
		want        time.Duration
		wantRateMin float64 // events a second, as of the last arrival
		wantRateMax float64
	}{
		// A quiet emitter: one event a second. Its lone event goes at
		// once.
		{"quiet", d, 1000, 20, 0, 0, 0, 9.5, 10.5},
		// 100 events a second: 2 expected in the bound, but 0.5 within a
		// quarter of it: no wait. 150: 0.75, no wait.
		{"100/s", d, 10, 200, 0, 0, 0, 99, 106},
		{"150/s", d, 1000.0 / 150, 300, 0, 0, 0, 148, 160},
		// The threshold is about 200 a second, not exactly: just after
		// an arrival a steady stream's count is 1/(1-e^(-gap/100 ms)),
		// 20 (so 200 a second) at a gap of 5.13 ms, 195 events a second.
		// 190 a second: 195 as of an arrival, no wait; 200: 205, it waits.
		{"190/s", d, 1000.0 / 190, 1000, 0, 0, 0, 194, 196},
		{"200/s", d, 5, 1000, 0, 0, 5 * time.Millisecond, 204, 206},
		// 300 a second: 1.5 within a quarter: it waits, a quarter at most
		// before it decides again.
		{"300/s", d, 1000.0 / 300, 600, 0, 0, 5 * time.Millisecond, 297, 310},
		// 1,000 a second, an event just taken: a quarter, then again.
		{"1000/s", d, 1, 1000, 0, 0, 5 * time.Millisecond, 990, 1010},
		// 17 ms into its message, an event just taken: what is left, 3 ms
		// (3 expected in it).
		{"1000/s, 17 ms in", d, 1, 1000, -17, 0, 3 * time.Millisecond, 990, 1010},
		// 19.5 ms in: 0.5 expected in what is left: it goes.
		{"1000/s, 19.5 ms in", d, 1, 1000, -19.5, 0, 0, 990, 1010},
		// 10 ms in, 3 ms since the last event: 2 ms more at most.
		{"1000/s, 3 ms since", d, 1, 1000, -7, 3, 2 * time.Millisecond, 990, 1010},
		// 10 ms in, the next event a quarter late: it goes.
		{"1000/s, an event late", d, 1, 1000, -5, 5, 0, 990, 1010},
		// The window was full for 6 ms: the message's first event is
		// taken now, but the last was published 6 ms ago, a quarter and
		// more: it goes at once (the events are counted when published,
		// TestLingerCountsPublished).
		{"1000/s, the window full for 6 ms", d, 1, 1000, 6, 6, 0, 990, 1010},
		// A burst of 30 events at once from a quiet emitter: 300 a second
		// over the window, 1.5 expected in a quarter: it waits.
		{"burst", d, 0, 30, 0, 0, 5 * time.Millisecond, 299, 301},
		// A burst of 15: 0.75 expected: it goes.
		{"small burst", d, 0, 15, 0, 0, 0, 149, 151},
		// A busy emitter gone quiet: 1,000 a second, then nothing for
		// 300 ms: the rate has decayed to e^-3 of it, about 50 a second;
		// a new message does not wait.
		{"gone quiet", d, 1, 1000, 300, 300, 0, 990, 1010},
		// Off: never waits, whatever the rate.
		{"off", 0, 1, 1000, 0, 0, 0, 0, 0},
		// A bound of 5 ms (the default until issue 31's sixth session)
		// waits at 800 events a second or more, at most 1.25 ms at a time.
		{"5 ms, 1000/s", 5 * time.Millisecond, 1, 1000, 0, 0, 1250 * time.Microsecond, 990, 1010},
		{"5 ms, 500/s", 5 * time.Millisecond, 2, 1000, 0, 0, 0, 495, 510},
		// A long bound catches a slower emitter: 100 a second, 80 ms: 2
		// expected in a quarter.
		{"80 ms, 100/s", 80 * time.Millisecond, 10, 200, 0, 0, 20 * time.Millisecond, 99, 106},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := lingerer{bound: tc.bound}
			var last time.Time
			for i := range tc.n {
				last = ms(float64(i) * tc.gap)
				l.arrived(last, 1)
			}
			if r := l.rate(last); r < tc.wantRateMin || r > tc.wantRateMax {
				t.Errorf("rate %.1f/s, want %.0f–%.0f", r, tc.wantRateMin, tc.wantRateMax)
			}
			first := last.Add(time.Duration(tc.first * float64(time.Millisecond)))
			now := last.Add(time.Duration(tc.after * float64(time.Millisecond)))
			if got := l.wait(now, first); got != tc.want {
				t.Errorf("wait %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLingerArrivals: arrivals out of order (a clock read by two callers)
// do not move the rate's reference back, and a batch of n counts as n.
func TestLingerArrivals(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 22, 0, 0, 0, time.UTC)
	l := lingerer{bound: 20 * time.Millisecond}
	l.arrived(t0, 40)
	l.arrived(t0.Add(-time.Millisecond), 10)
	if r := l.rate(t0); r < 499 || r > 501 {
		t.Errorf("rate %.1f/s after 50 events at once, want 500", r)
	}
	if w := l.wait(t0, t0); w != 5*time.Millisecond {
		t.Errorf("wait %v, want 5ms (a quarter of the bound)", w)
	}
	// The bound passed: no wait, whatever the rate.
	if w := l.wait(t0.Add(20*time.Millisecond), t0.Add(-time.Millisecond)); w != 0 {
		t.Errorf("wait %v at the bound, want 0", w)
	}
	// Its zero value never waits, and counts nothing.
	var z lingerer
	z.arrived(t0, 1000)
	if w := z.wait(t0, t0); w != 0 || z.count != 0 {
		t.Errorf("zero lingerer: wait %v, count %v", w, z.count)
	}
}

// TestLingerCountsPublished: the linger counts an event when the
// application publishes it, not when the sender takes it: an event
// waiting for the Window, or parked behind its order key's earlier event,
// is counted at once, and a copy the follower publishes again is not. No
// sender runs here: the events stay queued. The Node SDK's twin
// (sdk/js/test/sdk.test.js, "the linger counts each event when it is
// published") checks the same.
func TestLingerCountsPublished(t *testing.T) {
	ctx := context.Background()
	c := &Client{
		cfg:    Config{Linger: DefaultLinger},
		admit:  make(chan struct{}, 8),
		queue:  make(chan *entry, 8),
		closed: make(chan struct{}),
		tails:  map[string]*entry{},
		follow: newFollower(true),
		linger: lingerer{bound: DefaultLinger},
	}
	before := time.Now()
	for _, ev := range []Event{
		{ID: "g1:0", Data: []byte(`{"id":"g1:0"}`), OrderKey: "g1"},
		{ID: "g2:0", Data: []byte(`{"id":"g2:0"}`), OrderKey: "g2"},
		{ID: "g1:1", Data: []byte(`{"id":"g1:1"}`), OrderKey: "g1"}, // parked behind g1:0
	} {
		if _, err := c.publish(ctx, ev, nil); err != nil {
			t.Fatal(err)
		}
	}
	after := time.Now()
	if len(c.queue) != 2 {
		t.Fatalf("%d events queued, want 2 (the third parked)", len(c.queue))
	}
	if n := c.linger.count; n <= 2.9 || n > 3 {
		t.Errorf("counted %v, want the 3 published", n)
	}
	if c.linger.last.Before(before) || c.linger.last.After(after) {
		t.Errorf("the last counted at %v, not when published (%v to %v)", c.linger.last, before, after)
	}
	// A copy of a held event, published again by the follower: not an
	// arrival.
	n := c.linger.count
	if _, err := c.publish(ctx, Event{ID: "g3:0", Data: []byte(`{"id":"g3:0"}`)}, &held{}); err != nil {
		t.Fatal(err)
	}
	if c.linger.count != n {
		t.Errorf("a copy counted: %v, then %v", n, c.linger.count)
	}
}

// TestLingerNap: while a message waits, the sender sleeps through the
// events published meanwhile only until an arrival could end the wait:
// until what is left of the bound falls to the expected gap to the next
// event (1/rate), never past the wait itself, and not at all when that is
// less than napMin away. Every nap ends where the decision, with an event
// arriving just then, still says wait; a little later one may not.
func TestLingerNap(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		gap        time.Duration // between arrivals
		intoMsg    time.Duration // since the message's first event was taken
		want       time.Duration
		wantApprox bool // want ± 2 %: the rate is a little above 1/gap just after an arrival
	}{
		// 1,000 a second, a message just begun: the wait, 5 ms (a quarter
		// of the bound after the last event), is all a nap.
		{"1000/s, begun", time.Millisecond, 0, 5 * time.Millisecond, false},
		// 17 ms in: 3 ms left, the next event expected in about 1 ms: a
		// nap of about 2 ms, then the sender looks at each event.
		{"1000/s, 17 ms in", time.Millisecond, 17 * time.Millisecond, 2 * time.Millisecond, true},
		// 18.9 ms in: 1.1 ms left, about 0.1 ms before an arrival could
		// end it: below napMin, no nap.
		{"1000/s, 18.9 ms in", time.Millisecond, 18900 * time.Microsecond, 0, false},
		// 2,000 a second (one emitter's share of 50,000 games), 16 ms in:
		// 4 ms left, a gap of about 0.5 ms: about 3.5 ms.
		{"2000/s, 16 ms in", 500 * time.Microsecond, 16 * time.Millisecond, 3500 * time.Microsecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := lingerer{bound: DefaultLinger}
			var now time.Time
			for i := range 1000 {
				now = t0.Add(time.Duration(i) * tc.gap)
				l.arrived(now, 1)
			}
			first := now.Add(-tc.intoMsg)
			w := l.wait(now, first)
			if w <= 0 {
				t.Fatalf("wait %v: the message should wait", w)
			}
			got := l.nap(now, first, w)
			if got > w {
				t.Errorf("nap %v longer than the wait %v", got, w)
			}
			if tc.wantApprox {
				if d := got - tc.want; d < -tc.want/50 || d > tc.want/50 {
					t.Errorf("nap %v, want about %v", got, tc.want)
				}
			} else if got != tc.want {
				t.Errorf("nap %v, want %v", got, tc.want)
			}
			if got == 0 {
				return
			}
			// An event arriving as the nap ends does not end the wait.
			end := now.Add(got)
			l2 := l
			l2.arrived(end, 1)
			if l2.wait(end, first) <= 0 {
				t.Errorf("an event at the nap's end (%v) ends the wait: the nap was too long", got)
			}
		})
	}
}

// TestNapKick: a sender sleeping on a lingering message (napOn) is kicked
// once the events queued meanwhile could fill the message, by their count
// or by their bytes, and not before; the runs taken out of the queue are
// counted out.
func TestNapKick(t *testing.T) {
	ev := func(size int) *entry { return &entry{ev: Event{ID: "a", Data: make([]byte, size)}} }
	for _, tc := range []struct {
		name        string
		items, size int   // the message being packed
		queued      []int // the sizes of the events queued meanwhile, each its own run
		kickAt      int   // the number queued when the kick comes (0: none)
	}{
		// Room for 3 more events: the third kicks.
		{"events", 3, 300, []int{100, 100, 100, 100}, 3},
		// Room for 1,001 more bytes (each event with its separator):
		// 3 × 301 < 1,001 ≤ 4 × 301.
		{"bytes", 1, 1000 - 1, []int{300, 300, 300, 300}, 4},
		// Neither fills it.
		{"room", 1, 100, []int{100, 100}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Client{cfg: Config{MaxBatchEvents: 6, MaxBatchBytes: 2000}, queue: make(chan *entry, 10), nap: napper{kick: make(chan struct{}, 1)}}
			c.nap.wantBytes.Store(int64(c.cfg.MaxBatchBytes - tc.size))
			c.nap.wantEvents.Store(int64(c.cfg.MaxBatchEvents - tc.items))
			for i, size := range tc.queued {
				c.enqueue(ev(size))
				kicked := len(c.nap.kick) == 1
				if want := tc.kickAt != 0 && i+1 >= tc.kickAt; kicked != want {
					t.Fatalf("%d queued: kicked %v, want %v", i+1, kicked, want)
				}
			}
			for range tc.queued {
				c.took(<-c.queue)
			}
			if e, b := c.nap.events.Load(), c.nap.bytes.Load(); e != 0 || b != 0 {
				t.Errorf("all taken: %d events and %d bytes still counted", e, b)
			}
		})
	}
	// A run counts as its events: a run of 3 fills a message with room
	// for 3.
	c := &Client{cfg: Config{MaxBatchEvents: 6, MaxBatchBytes: 2000}, queue: make(chan *entry, 10), nap: napper{kick: make(chan struct{}, 1)}}
	c.nap.wantBytes.Store(1000)
	c.nap.wantEvents.Store(3)
	a, b, d := ev(10), ev(10), ev(10)
	a.run, b.run = b, d
	c.enqueue(a)
	if len(c.nap.kick) != 1 {
		t.Error("a run of 3 events did not kick a sender with room for 3")
	}
	// Not sleeping (wantEvents 0): no kick.
	<-c.nap.kick
	c.nap.wantEvents.Store(0)
	c.enqueue(ev(10))
	if len(c.nap.kick) != 0 {
		t.Error("kicked a sender that is not sleeping")
	}
}
