// The adaptive linger's decision, as the Go SDK's (sdk/linger.go): whether
// a message that is not full waits for more events, from the emitter's
// recent rate of events. It reads no clock: the client passes the times
// (ms).

/**
 * DEFAULT_LINGER is the client's linger by default (ms): the Go SDK's
 * sdk.DefaultLinger. A message waits only where the emitter's recent rate
 * predicts the next event within a quarter of it (5 ms: at about 200
 * events a second or more).
 */
export const DEFAULT_LINGER = 20;

// RATE_WINDOW (ms) is the time constant of the emitter's recent rate: an
// exponentially weighted count of the events published, each
// weighing e^(-age/RATE_WINDOW), over RATE_WINDOW.
const RATE_WINDOW = 100;

/**
 * A Lingerer decides how long a message that is not full waits for more
 * events: only while the emitter's recent rate predicts at least one more
 * event within a quarter of the bound (the linger, in ms) and before the
 * bound has passed since the message's first event was ready to go, and
 * never a quarter of the bound past the last event published. An event
 * counts when the application publishes it (the client's accept), not when
 * it is sent, as in the Go SDK. So an emitter below about 4/bound events a
 * second (200 at the default, 20 ms; 195 for a steady stream) never waits.
 * A quiet emitter's lone event goes at once; a busy emitter's message
 * waits up to the bound, and goes once what is left of it is shorter than
 * the expected gap to the next event, or the next event is a quarter of
 * the bound late. A bound of 0 or less never waits.
 */
export class Lingerer {
  constructor(bound) {
    this.bound = bound > 0 ? bound : 0;
    this.count = 0; // the decayed count of the events seen, as of last
    this.last = 0;
  }

  /** arrived records n events published at now (ms). */
  arrived(now, n) {
    if (this.bound <= 0) return;
    this.count = this.decayed(now) + n;
    if (now > this.last) this.last = now;
  }

  decayed(now) {
    if (this.count === 0) return 0;
    const age = now - this.last;
    if (age <= 0) return this.count;
    return this.count * Math.exp(-age / RATE_WINDOW);
  }

  /** rate returns the recent rate of events, per second, as of now (ms). */
  rate(now) {
    return this.decayed(now) / (RATE_WINDOW / 1000);
  }

  /**
   * wait returns how long (ms) from now a message that is not full, whose
   * first event was ready to go at first, should wait for more events:
   * until its bound, or a quarter of the bound after the last event published
   * if that comes first, if the recent rate predicts at least one event
   * within a quarter of the bound and within what is left of it (rate ×
   * min(left, bound/4) ≥ 1); 0 if not, if the bound has passed, or if no
   * event came in the last quarter of the bound. Ask again when an event
   * comes or the wait ends.
   */
  wait(now, first) {
    if (this.bound <= 0) return 0;
    const left = first + this.bound - now;
    const gap = this.bound / 4;
    const quiet = this.last + gap - now;
    if (left <= 0 || quiet <= 0 || this.rate(now) * Math.min(left, gap) / 1000 < 1) return 0;
    return Math.min(left, quiet);
  }
}
