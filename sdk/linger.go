// This file is the adaptive linger's decision (Config.Linger): whether a
// message that is not full waits for more events, from the emitter's
// recent rate of events. It reads no clock: the sender passes the times.

package sdk

import (
	"math"
	"time"
)

// DefaultLinger is Config.Linger's default: the most a message that is not
// full waits for more events, when the emitter's recent rate predicts one
// within it.
const DefaultLinger = 5 * time.Millisecond

// rateWindow is the time constant of the emitter's recent rate of events
// that the linger reads: an exponentially weighted count of the events
// taken for sending, each weighing e^(-age/rateWindow), over rateWindow.
const rateWindow = 100 * time.Millisecond

// A lingerer decides how long a message that is not full waits for more
// events: only while the emitter's recent rate predicts at least one more
// event before the message's bound (Config.Linger after its first event
// was taken) has passed. A quiet emitter's lone event goes at once; a busy
// emitter's message waits up to the bound, and goes once what is left of
// it is shorter than the expected gap to the next event. Its zero value
// never waits.
type lingerer struct {
	bound time.Duration // Config.Linger; 0: never wait
	// count is the decayed count of the events seen, as of last.
	count float64
	last  time.Time
}

// arrived records n events taken for sending at now.
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
// first event was taken at first should wait for more events: what is left
// of its bound, if the recent rate predicts at least one event in it (rate
// × left ≥ 1); zero if not, or if the bound has passed. The caller asks
// again when an event comes or the wait ends.
func (l *lingerer) wait(now, first time.Time) time.Duration {
	if l.bound <= 0 {
		return 0
	}
	left := first.Add(l.bound).Sub(now)
	if left <= 0 || l.rate(now)*left.Seconds() < 1 {
		return 0
	}
	return left
}
