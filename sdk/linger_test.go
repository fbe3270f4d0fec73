package sdk

import (
	"testing"
	"time"
)

// TestLingerDecision: the adaptive linger's decision, on an injected
// clock. A message waits only while the emitter's recent rate predicts
// another event before its bound; the Node SDK's twin
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
	for _, tc := range []struct {
		name        string
		bound       time.Duration
		gap         float64 // ms between arrivals
		n           int
		first       float64 // the message's first event, ms after the last arrival
		after       float64 // the decision, ms after the last arrival
		want        time.Duration
		wantRateMin float64 // events a second, as of the last arrival
		wantRateMax float64
	}{
		// A quiet emitter: one event a second. Its lone event goes at
		// once.
		{"quiet", 5 * time.Millisecond, 1000, 20, 0, 0, 0, 9.5, 10.5},
		// 100 events a second: 1 expected in 10 ms, about 0.5 in the 5 ms
		// bound: no wait.
		{"100/s", 5 * time.Millisecond, 10, 200, 0, 0, 0, 99, 106},
		// 1,000 events a second: 5 in the bound; it waits all of it.
		{"1000/s", 5 * time.Millisecond, 1, 1000, 0, 0, 5 * time.Millisecond, 990, 1010},
		// The same, 4.5 ms later: 0.5 ms left, 0.45 expected: it goes.
		{"1000/s late", 5 * time.Millisecond, 1, 1000, 0, 4.5, 0, 990, 1010},
		// The same, 3 ms later: 2 ms left, 1.9 expected (the rate has
		// decayed by e^-0.03): it waits what is left.
		{"1000/s mid", 5 * time.Millisecond, 1, 1000, 0, 3, 2 * time.Millisecond, 990, 1010},
		// A burst of 30 events at once from a quiet emitter: 300 a second
		// over the window, 1.5 expected in 5 ms: it waits.
		{"burst", 5 * time.Millisecond, 0, 30, 0, 0, 5 * time.Millisecond, 299, 301},
		// A burst of 15: 0.75 expected: it goes.
		{"small burst", 5 * time.Millisecond, 0, 15, 0, 0, 0, 149, 151},
		// A busy emitter gone quiet: 1,000 a second, then nothing for
		// 300 ms: the rate has decayed to e^-3 of it, about 50 a second;
		// a new message does not wait.
		{"gone quiet", 5 * time.Millisecond, 1, 1000, 300, 300, 0, 990, 1010},
		// Off: never waits, whatever the rate.
		{"off", 0, 1, 1000, 0, 0, 0, 0, 0},
		// A longer bound catches a slower emitter: 100 a second, 20 ms: 2
		// expected.
		{"100/s, 20 ms", 20 * time.Millisecond, 10, 200, 0, 0, 20 * time.Millisecond, 99, 106},
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
	l := lingerer{bound: 5 * time.Millisecond}
	l.arrived(t0, 40)
	l.arrived(t0.Add(-time.Millisecond), 10)
	if r := l.rate(t0); r < 499 || r > 501 {
		t.Errorf("rate %.1f/s after 50 events at once, want 500", r)
	}
	if w := l.wait(t0, t0); w != 5*time.Millisecond {
		t.Errorf("wait %v, want 5ms", w)
	}
	// The bound passed: no wait, whatever the rate.
	if w := l.wait(t0.Add(5*time.Millisecond), t0); w != 0 {
		t.Errorf("wait %v at the bound, want 0", w)
	}
	// Its zero value never waits, and counts nothing.
	var z lingerer
	z.arrived(t0, 1000)
	if w := z.wait(t0, t0); w != 0 || z.count != 0 {
		t.Errorf("zero lingerer: wait %v, count %v", w, z.count)
	}
}
