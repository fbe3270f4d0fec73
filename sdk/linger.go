// This file is the adaptive linger's decision (Config.Linger): whether a
// message that is not full waits for more events, from the emitter's
// recent rate of events. It reads no clock: the sender passes the times.

package sdk

import (
	"math"
	"time"
)

// DefaultLinger is Config.Linger's default: the most a message that is not
// full waits for more events, when the emitter's recent rate predicts the
// next one within a quarter of it (5 ms: at about 200 events a second or
// more).
const DefaultLinger = 20 * time.Millisecond

// rateWindow is the time constant of the emitter's recent rate of events
// that the linger reads: an exponentially weighted count of the events
// published, each weighing e^(-age/rateWindow), over rateWindow.
const rateWindow = 100 * time.Millisecond

// A lingerer decides how long a message that is not full waits for more
// events: only while the emitter's recent rate predicts at least one more
// event within a quarter of the bound (Config.Linger) and before the bound
// has passed since the message's first event was taken, and never a
// quarter of the bound past the last event published. An event counts
// when the application publishes it (the Client's publish), not when the
// sender takes it: its publishing is what predicts the next. So an
// emitter below about 4/bound events a second (200 at the default, 20 ms)
// never waits: a message waits only where the linger can fill it with
// about four events or more. (About: just after an event, a steady
// stream's count is 1/(1-e^(-gap/rateWindow)), which reaches
// rateWindow/(bound/4) at a gap of 5.13 ms at the default, 195 events a
// second.) A quiet emitter's lone event goes at once; a busy emitter's
// message waits up to the bound, and goes once what is left of it is
// shorter than the expected gap to the next event, or the next event is
// a quarter of the bound late. Its zero value never waits.
type lingerer struct {
	bound time.Duration // Config.Linger; 0: never wait
	// count is the decayed count of the events seen, as of last.
	count float64
	last  time.Time
}

// arrived records n events published at now.
func (l *lingerer) arrived(now time.Time, n int) {
	if l.bound <= 0 {
		return
	}
	l.count = l.decayed(now) + float64(n)
	if now.After(l.last) {
		l.last = now
	}
}

// decayed returns the count as of now.
func (l *lingerer) decayed(now time.Time) float64 {
	if l.count == 0 {
		return 0
	}
	age := now.Sub(l.last)
	if age <= 0 {
		return l.count
	}
	return l.count * math.Exp(-float64(age)/float64(rateWindow))
}

// rate returns the emitter's recent rate of events, per second, as of now.
func (l *lingerer) rate(now time.Time) float64 {
	return l.decayed(now) / rateWindow.Seconds()
}

// wait returns how long, from now, a message that is not full and whose
// first event was taken at first should wait for more events: until its
// bound, or a quarter of the bound after the last event published if that
// comes first, if the recent rate predicts at least one event within a
// quarter of the bound and within what is left of it (rate × min(left,
// bound/4) ≥ 1); zero if not, if the bound has passed, or if no event came
// in the last quarter of the bound. The caller asks again when an event
// comes or the wait ends.
func (l *lingerer) wait(now, first time.Time) time.Duration {
	if l.bound <= 0 {
		return 0
	}
	left := first.Add(l.bound).Sub(now)
	gap := l.bound / 4
	quiet := l.last.Add(gap).Sub(now) // until a quarter of the bound after the last event
	if left <= 0 || quiet <= 0 || l.rate(now)*min(left, gap).Seconds() < 1 {
		return 0
	}
	return min(left, quiet)
}

// napMin is the shortest nap (lingerer.nap): below it the sender looks at
// each event as it comes.
const napMin = 200 * time.Microsecond

// nap returns how long from now the sender may sleep through the events
// published meanwhile, without looking at them, while a message waits w
// (wait's answer, positive): w, but only until what is left of the bound
// falls to the expected gap to the next event (1/rate, the rate as it
// decays meanwhile). Until then no event's arrival can end the wait (it
// only raises the rate, and moves the last event later); from then one
// can (rate × what is left < 1), and the sender looks at each event again.
// Zero if that is less than napMin away.
func (l *lingerer) nap(now, first time.Time, w time.Duration) time.Duration {
	left := (first.Add(l.bound).Sub(now)).Seconds()
	r := l.rate(now)
	if r <= 0 {
		return 0
	}
	// The largest x with r·e^(-x/rateWindow)·(left-x) ≥ 1 (the rate
	// decayed over x, times what is left then), by bisection: it holds at
	// 0 (wait said r·left ≥ 1) and fails from left - 1/r on, and it falls
	// as x grows.
	tau := rateWindow.Seconds()
	lo, hi := 0.0, left-1/r
	if hi <= 0 {
		return 0
	}
	for range 24 {
		if mid := (lo + hi) / 2; r*math.Exp(-mid/tau)*(left-mid) >= 1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	x := lo
	w = min(w, time.Duration(x*float64(time.Second)))
	if w < napMin {
		return 0
	}
	return w
}
