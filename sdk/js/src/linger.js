// The adaptive linger's decision, as the Go SDK's (sdk/linger.go): whether
// a message that is not full waits for more events, from the emitter's
// recent rate of events. It reads no clock: the client passes the times
// (ms).

/** DEFAULT_LINGER is the client's linger by default (ms): the Go SDK's sdk.DefaultLinger. */
export const DEFAULT_LINGER = 5;

// RATE_WINDOW (ms) is the time constant of the emitter's recent rate: an
// exponentially weighted count of the events queued for sending, each
// weighing e^(-age/RATE_WINDOW), over RATE_WINDOW.
const RATE_WINDOW = 100;

/**
 * A Lingerer decides how long a message that is not full waits for more
 * events: only while the emitter's recent rate predicts at least one more
 * event before the message's bound (the linger, in ms, after its first
 * event was ready to go) has passed. A quiet emitter's lone event goes at
 * once; a busy emitter's message waits up to the bound, and goes once
 * what is left of it is shorter than the expected gap to the next event.
 * A bound of 0 or less never waits.
 */
export class Lingerer {
  constructor(bound) {
    this.bound = bound > 0 ? bound : 0;
    this.count = 0; // the decayed count of the events seen, as of last
    this.last = 0;
  }

  /** arrived records n events queued at now (ms). */
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
   * what is left of its bound if the recent rate predicts at least one
   * event in it (rate × left ≥ 1), 0 if not or if the bound has passed.
   * Ask again when an event comes or the wait ends.
   */
  wait(now, first) {
    if (this.bound <= 0) return 0;
    const left = first + this.bound - now;
    if (left <= 0 || this.rate(now) * left / 1000 < 1) return 0;
    return left;
  }
}
