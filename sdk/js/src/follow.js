// The follower (the Go SDK's sdk/follow.go, the same rule and protocol): a
// Client keeps every event it accepted until the ledger reports it logged
// (a signed checkpoint covers it) or refused, asks the ledger about the
// events it holds in status requests (receipt protocol version 3, up to
// 256 events each, docs/NATS.md §5, "Resending"), and publishes again every
// event that the events stream lost after acknowledging it: JetStream's
// lazy fsync on a power loss, a truncated or corrupted stream file, a
// ledger that decided the message and died before its checkpoint reached
// the bucket. The ledger deduplicates by (emitter, id), so a copy it
// already has costs nothing but the message.
//
// The bound: every answer carries the stream's state {decided, last}. An
// event the ledger holds no record of, whose latest copy was acknowledged
// at stream sequence S, is lost once decided > S, or last < S and last <
// decided (lost() in wire.js). Until then it is only not read yet, and the
// Client waits.
//
// Following per message (docs/NATS.md §5): an acknowledged message's held
// events are followed by asking about the message (its stream sequence and
// its payload's SHA-256, message status protocol version 4): one answer
// "logged" confirms them all. A message answered "mixed", or "unknown" once
// the ledger has decided past it or the stream lost it, hands its events to
// the per-event path above, which finds losses and refusals as before; a
// ledger that answers the question "bad-request" is followed by event.
//
// This module holds the state and the rule; the Client (client.js) gives
// it the events it accepts and their acks, publishes the copies it asks
// for, and runs its rounds.

import { parseSignedCheckpoint } from "zarlog-verify/src/note.js";
import { createHash } from "node:crypto";
import { formatStatusRequest, parseStatusReply, parseReceiptReply, lost, MAX_STATUS_EVENTS,
  formatMessageStatusRequest, parseMessageStatusReply, MAX_STATUS_MESSAGES } from "./wire.js";

/** DEFAULT_FOLLOW_INTERVAL is cfg.followInterval's default (ms): the Client follows its events unless told not to. */
export const DEFAULT_FOLLOW_INTERVAL = 500;
/** DEFAULT_FOLLOW_AFTER is cfg.followAfter's default (ms). */
export const DEFAULT_FOLLOW_AFTER = 1000;

// APPENDED_AGAIN is how long after the ledger reported an event appended,
// with no checkpoint covering its index since, it is asked about again (ms).
const APPENDED_AGAIN = 30000;
// STATUS_TIMEOUT bounds one status request (ms).
const STATUS_TIMEOUT = 5000;
// MAX_RESEND_WAIT is the longest pause between two copies of one event (ms).
const MAX_RESEND_WAIT = 60000;

/**
 * A FollowUnsupportedError is given to cfg.onRetry once when the ledger
 * does not serve status requests (receipt protocol version 3): the Client
 * then stops following and holds nothing.
 */
export class FollowUnsupportedError extends Error {
  constructor() {
    super("the ledger does not answer status requests (receipt protocol version 3); the Client does not follow its events");
    this.name = "FollowUnsupportedError";
    this.code = "follow-unsupported";
  }
}

// An order refusal refuses an event only for what came before it under its
// order key: a lost predecessor published again undoes it.
function orderRefusal(h, code) {
  return !!h.ev.orderKey && (code === "out-of-order" || code === "unknown-game");
}

/**
 * A Follower is a Client's set of held events. host is the Client: it
 * gives emitter, subjects, nc, cfg (followInterval, followAfter, maxHeld,
 * maxHeldBytes, logKey, onRetry, onResend, onRejected) and copy(h), which
 * publishes a copy of held event h through its queue (with its order key)
 * and calls copyAcked or copyFailed.
 */
export class Follower {
  constructor(host) {
    this.host = host;
    const c = host.cfg;
    this.interval = c.followInterval;
    this.after = c.followAfter;
    this.off = !(this.interval > 0);
    this.byID = new Map();
    this.byKey = new Map(); // order key → held events in acceptance order
    this.order = []; // in acceptance order; done ones dropped from the front lazily
    this.accepted = 0;
    this.count = 0;
    this.bytes = 0;
    this.roomWaiters = [];
    this.idle = []; // waitLogged callers: {n, resolve}
    this.stats = { held: 0, heldBytes: 0, logged: 0, rejected: 0, requests: 0, byMessage: 0 };
    // msgs are the messages followed whole, in acknowledgement order
    // ({seq, sum, n, hs, acked, live, appended, index, appendedAt, done});
    // byEvent is set once the ledger answered a message status request
    // "bad-request"; loose counts the held events not followed by their
    // message (h.msg null): none, a round asks about no event by id.
    this.msgs = [];
    this.byEvent = false;
    this.loose = 0;
    // The stream's state in the latest reply, and the largest checkpoint
    // seen: a round asks only about the events they leave open.
    this.decided = 0;
    this.last = 0;
    this.size = 0n;
    // hiSeq is the highest stream sequence seen (an ack, or a reply's
    // last): a copy published after it that gets no higher one was given a
    // sequence the stream had given before (held.reused).
    this.hiSeq = 0;
    this.running = false;
    this.again = false;
    this.timer = null;
    if (!this.off) {
      this.timer = setInterval(() => { this.round(); }, this.interval);
      if (this.timer.unref) this.timer.unref();
    }
  }

  /** hasRoom reports whether one more event of size bytes may be held now. */
  hasRoom(size) {
    const c = this.host.cfg;
    return this.off || this.host.closed || this.count < c.maxHeld && (this.count === 0 || this.bytes + size <= c.maxHeldBytes);
  }

  /** reserve waits until one more event of size bytes may be held (cfg.maxHeld, cfg.maxHeldBytes). */
  async reserve(size, signal) {
    for (;;) {
      if (this.hasRoom(size)) return;
      if (signal && signal.aborted) throw signal.reason;
      await new Promise((resolve) => {
        const onAbort = function () { resolve(); };
        this.roomWaiters.push(function () { if (signal) signal.removeEventListener("abort", onAbort); resolve(); });
        if (signal) signal.addEventListener("abort", onAbort, { once: true });
      });
    }
  }

  /**
   * hold returns the held record of ev, making one if none is held under
   * its id (or another's bytes are: the newer replaces it), and counts one
   * more copy on its way; null when following is off.
   */
  hold(ev) {
    if (this.off) return null;
    const old = this.byID.get(ev.id);
    if (old && !old.done) {
      if (sameBytes(old.ev.data, ev.data)) {
        old.copies++;
        return old;
      }
      this.drop(old);
    }
    const h = {
      ev: { id: ev.id, data: ev.data, orderKey: ev.orderKey || "" }, n: ++this.accepted, copies: 1,
      seq: 0, bound: 0, acked: 0, appended: false, index: 0n, appendedAt: 0,
      resends: 0, resentAt: 0, retriedOrder: false, orderRefusedAt: 0, floor: 0, reused: false, done: false, msg: null,
    };
    this.loose++;
    this.byID.set(ev.id, h);
    if (h.ev.orderKey) {
      const list = this.byKey.get(h.ev.orderKey);
      if (list) list.push(h); else this.byKey.set(h.ev.orderKey, [h]);
    }
    this.order.push(h);
    this.count++;
    this.bytes += ev.data.length;
    this.stats.held = this.count;
    this.stats.heldBytes = this.bytes;
    return h;
  }

  /** copyAcked records the acknowledgement of a copy of h at stream sequence seq. */
  copyAcked(h, seq) {
    h.copies--;
    this.hiSeq = Math.max(this.hiSeq, seq);
    if (h.done) return;
    h.seq = seq;
    h.acked = Date.now();
    h.reused = seq <= h.floor;
  }

  /**
   * copyFailed records that a copy of h failed. An event no copy of which
   * was ever acknowledged is dropped: its publisher got the error.
   */
  copyFailed(h) {
    h.copies--;
    if (!h.done && h.seq === 0 && h.bound === 0 && h.copies === 0) this.drop(h);
  }

  // drop forgets h (logged, refused, or replaced) and wakes whoever waits.
  drop(h) {
    if (h.done) return;
    h.done = true;
    if (h.msg === null) this.loose--;
    this.unfollowMsg(h);
    if (this.byID.get(h.ev.id) === h) this.byID.delete(h.ev.id);
    const k = h.ev.orderKey;
    if (k) {
      let list = this.byKey.get(k);
      if (list[0] === h) list.shift(); // the usual case: a key's events are logged in order
      else list = list.filter(function (o) { return o !== h; });
      if (list.length === 0) this.byKey.delete(k); else this.byKey.set(k, list);
    }
    this.count--;
    this.bytes -= h.ev.data.length;
    this.stats.held = this.count;
    this.stats.heldBytes = this.bytes;
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const w of waiters) w();
    let i = 0;
    while (i < this.order.length && this.order[i].done) i++;
    if (i > 0) this.order = this.order.slice(i);
    const first = this.order.length > 0 ? this.order[0].n : this.accepted + 1;
    this.idle = this.idle.filter(function (w) {
      if (w.n < first) { w.resolve(); return false; }
      return true;
    });
  }

  // unfollowMsg stops following h by its message: asked about by id.
  unfollowMsg(h) {
    const m = h.msg;
    if (m === null) return;
    h.msg = null;
    if (!h.done) this.loose++;
    if (--m.live <= 0) m.done = true;
  }

  // dissolve stops following m whole: its held events are asked about by id.
  dissolve(m) {
    m.done = true;
    for (const h of m.hs) {
      if (h.msg === m) {
        h.msg = null;
        if (!h.done) this.loose++;
      }
    }
    m.live = 0;
    m.hs = [];
  }

  /**
   * followMessage follows the held events hs (null for an event not held),
   * whose message (payload) JetStream acknowledged at stream sequence seq,
   * by asking about the message, unless the ledger does not answer such
   * questions.
   */
  followMessage(hs, seq, payload) {
    if (this.off || this.byEvent || !seq) return;
    const m = { seq: seq, sum: createHash("sha256").update(payload).digest("base64"), n: hs.length, hs: [], acked: Date.now(),
      live: 0, appended: false, index: 0n, appendedAt: 0, done: false };
    for (const h of hs) {
      if (!h || h.done || h.seq !== seq) continue;
      this.unfollowMsg(h);
      h.msg = m;
      this.loose--;
      m.live++;
      m.hs.push(h);
    }
    if (m.live > 0) this.msgs.push(m);
  }

  /** follow holds ev without publishing it: asked about at the next round. */
  follow(ev) {
    const h = this.hold(ev);
    if (!h) return;
    h.copies--;
    if (h.seq === 0 && h.acked === 0) h.acked = Date.now() - this.after; // ask at the next round
  }

  /** waitLogged resolves once every event accepted before the call is reported logged or refused. */
  waitLogged(signal) {
    if (this.off || this.order.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const w = { n: this.accepted, resolve: resolve };
      this.idle.push(w);
      if (signal) {
        if (signal.aborted) { reject(signal.reason); return; }
        signal.addEventListener("abort", () => {
          this.idle = this.idle.filter(function (o) { return o !== w; });
          reject(signal.reason);
        }, { once: true });
      }
    });
  }

  /** stop ends the rounds (the Client is closed): waitLogged callers are released with err. */
  stop(err) {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const w of waiters) w();
    for (const w of this.idle) w.resolve(Promise.reject(err));
    this.idle = [];
  }

  // stopFollowing turns following off for good: the ledger cannot answer.
  stopFollowing() {
    if (this.off) return;
    for (const h of this.order.slice()) this.drop(h);
    this.off = true;
    this.msgs = [];
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const w of this.idle) w.resolve();
    this.idle = [];
  }

  /** wake starts a round now (or right after the running one). */
  wake() {
    if (this.off) return;
    setImmediate(() => { this.round(); });
  }

  /**
   * round asks about the events due, oldest first, in requests of up to
   * MAX_STATUS_EVENTS, one at a time, and stops at the first batch the
   * ledger has not read past yet. Rounds do not overlap.
   */
  async round() {
    if (this.off || this.host.closed) return;
    if (this.running) { this.again = true; return; }
    this.running = true;
    try {
      do {
        this.again = false;
        await this.roundOnce();
      } while (this.again && !this.off && !this.host.closed);
    } catch (err) {
      if (this.host.cfg.onRetry) this.host.cfg.onRetry(new Error("following: " + err.message, { cause: err }));
    } finally {
      this.running = false;
    }
  }

  async roundOnce() {
    if (!this.byEvent && this.msgs.length > 0) {
      // As for events below: the oldest due message is asked about every
      // round, the others once the ledger has decided past them (or they
      // are gone from the stream), one appended not before a checkpoint
      // covers its largest index or APPENDED_AGAIN.
      const now = Date.now();
      this.msgs = this.msgs.filter(function (m) { return !m.done; });
      const due = [];
      for (const m of this.msgs) {
        if (now - m.acked < this.after) continue;
        if (m.appended && m.index >= this.size && now - m.appendedAt < APPENDED_AGAIN) continue;
        if (due.length > 0 && this.decided <= m.seq && m.seq <= this.last) continue;
        due.push(m);
      }
      for (let i = 0; i < due.length && !this.off && !this.host.closed; i += MAX_STATUS_MESSAGES) {
        let progress;
        try {
          progress = await this.askMessages(due.slice(i, i + MAX_STATUS_MESSAGES));
        } catch (err) {
          if (this.host.cfg.onRetry) this.host.cfg.onRetry(new Error("following " + Math.min(due.length - i, MAX_STATUS_MESSAGES) + " messages: " + err.message, { cause: err }));
          return;
        }
        if (!progress) break;
      }
      if (this.off || this.host.closed) return;
    }
    if (this.loose === 0) return; // every held event is followed by its message
    const now = Date.now();
    // Every due event, however many. What the last replies said spares the
    // ledger a lookup of each event per round: one appended is not asked
    // about again before a checkpoint covers its index, or APPENDED_AGAIN
    // (only the ledger's reply makes it logged: the ledger that reported it
    // appended may lose it, a primary fenced before its checkpoint); one
    // whose message the ledger has not decided yet and that is still in
    // the stream is not asked about, but for the oldest due event, asked
    // every round to learn the state.
    const due = [];
    for (const h of this.order) {
      if (h.done || h.msg !== null || h.acked === 0 || now - h.acked < this.after) continue;
      if (h.appended && h.index >= this.size && now - h.appendedAt < APPENDED_AGAIN) continue;
      if (due.length > 0 && h.seq !== 0 && this.decided <= h.seq && h.seq <= this.last) continue;
      due.push(h);
    }
    for (let i = 0; i < due.length && !this.off && !this.host.closed; i += MAX_STATUS_EVENTS) {
      let progress;
      try {
        progress = await this.ask(due.slice(i, i + MAX_STATUS_EVENTS));
      } catch (err) {
        if (this.host.cfg.onRetry) this.host.cfg.onRetry(new Error("following " + Math.min(due.length - i, MAX_STATUS_EVENTS) + " events: " + err.message, { cause: err }));
        return;
      }
      if (!progress) return; // the ledger has not read past these yet: the later ones wait too
    }
  }

  // askMessages sends one message status request about batch and acts on
  // the reply; it resolves to whether the ledger has read past any of them.
  // Only "logged" (the message named by its sequence and payload, every
  // event of it appended, covered by the reply's checkpoint) confirms its
  // events; anything else hands them to the per-event path (dissolve).
  async askMessages(batch) {
    const host = this.host;
    this.stats.requests++;
    const req = formatMessageStatusRequest(batch.map(function (m) { return { seq: m.seq, sha256: m.sum }; }));
    const msg = await host.nc.request(host.subjects.receipts(host.emitter), req, { timeout: STATUS_TIMEOUT });
    let rep;
    try {
      rep = parseMessageStatusReply(msg.data);
    } catch (e) {
      let old = null;
      try { old = parseReceiptReply(msg.data); } catch (e2) { /* neither */ }
      if (old && old.status === "error" && old.code === "bad-request") {
        // A ledger that predates message status requests: follow every
        // event by its id.
        this.byEvent = true;
        for (const m of this.msgs) this.dissolve(m);
        this.msgs = [];
        return true;
      }
      throw e;
    }
    if (rep.status !== "ok") throw new Error("status " + rep.status + ", code " + rep.code + ": " + rep.reason);
    if (rep.messages.length !== batch.length) throw new Error("malformed zarlog wire message: " + rep.messages.length + " statuses for " + batch.length + " messages");
    batch.forEach(function (m, i) {
      if (rep.messages[i].seq !== m.seq) throw new Error("malformed zarlog wire message: status " + i + " is of the message at " + rep.messages[i].seq + ", not " + m.seq);
    });
    let size = 0n;
    if (rep.checkpoint !== "") size = (await this.openCheckpoint(rep.checkpoint)).size;
    const st = rep.state;
    if (st) {
      this.decided = st.decided;
      this.last = st.last;
      this.hiSeq = Math.max(this.hiSeq, st.last);
    }
    if (size > this.size) this.size = size;
    const now = Date.now();
    let progress = false;
    batch.forEach((m, i) => {
      const s = rep.messages[i];
      if (m.done) return;
      switch (s.status) {
        case "logged":
          progress = true;
          if (s.events !== m.n) { this.dissolve(m); return; } // not the message sent, whatever the sum says
          if (s.index >= size) return; // a reply that contradicts itself: ask again
          for (const h of m.hs) {
            if (!h.done) {
              this.stats.logged++;
              this.stats.byMessage++;
              this.drop(h);
            }
          }
          m.done = true;
          m.hs = [];
          return;
        case "appended":
          progress = true;
          if (s.events !== m.n) { this.dissolve(m); return; }
          if (!m.appended || m.appendedAt === 0) m.appendedAt = now;
          m.appended = true;
          m.index = s.index;
          return;
        case "mixed":
          progress = true;
          this.dissolve(m);
          return;
        case "unknown":
          m.appended = false; // a ledger that reported it appended lost it since (a takeover)
          if (st && lost(st, m.seq)) {
            progress = true;
            this.dissolve(m);
          }
          return;
      }
    });
    return progress;
  }

  // ask sends one status request about batch and acts on the reply. It
  // resolves to whether the ledger has read past any of them (a verdict, or
  // a loss).
  async ask(batch) {
    const host = this.host;
    const queries = batch.map(function (h) { return { id: h.ev.id, seq: h.seq }; });
    this.stats.requests++;
    const m = await host.nc.request(host.subjects.receipts(host.emitter), formatStatusRequest(queries), { timeout: STATUS_TIMEOUT });
    let rep;
    try {
      rep = parseStatusReply(m.data);
    } catch (e) {
      let old = null;
      try { old = parseReceiptReply(m.data); } catch (e2) { /* neither */ }
      if (old && old.status === "error" && old.code === "bad-request") {
        this.stopFollowing(); // a ledger of receipt protocol version 2 refuses the request
        throw new FollowUnsupportedError();
      }
      throw e;
    }
    if (rep.status !== "ok") throw new Error("status " + rep.status + ", code " + rep.code + ": " + rep.reason);
    if (rep.events.length !== batch.length) throw new Error("malformed zarlog wire message: " + rep.events.length + " statuses for " + batch.length + " events");
    let size = 0n;
    if (rep.checkpoint !== "") size = (await this.openCheckpoint(rep.checkpoint)).size;
    const st = rep.state;
    if (st) {
      this.decided = st.decided;
      this.last = st.last;
      this.hiSeq = Math.max(this.hiSeq, st.last);
    }
    if (size > this.size) this.size = size;
    const resend = [];
    const rejected = [];
    const now = Date.now();
    let progress = false;
    batch.forEach((h, i) => {
      const s = rep.events[i];
      if (h.done || s.id !== h.ev.id) return;
      if (s.status !== "logged" && s.status !== "appended" && h.seq !== queries[i].seq) {
        return; // a copy acknowledged since the question: this answer is about the older one
      }
      switch (s.status) {
        case "logged":
          if (s.index >= size) return; // a reply that contradicts itself: ask again
          this.stats.logged++;
          this.drop(h);
          progress = true;
          return;
        case "appended":
          if (!h.appended || h.appendedAt === 0) h.appendedAt = now;
          h.appended = true;
          h.index = s.index;
          progress = true;
          return;
        case "rejected": {
          progress = true;
          if (h.copies > 0) return; // an older copy's refusal: the new one's answer is the one
          if (h.reused) {
            // The copy's sequence was given before: the refusal may be of
            // an earlier copy decided there. Send it again (paced).
            if (now - h.resentAt >= this.resendWait(h)) resend.push(...this.claim(this.tail(h)));
            return;
          }
          if (orderRefusal(h, s.code)) {
            if (this.predecessorHeld(h)) return; // refused because an earlier event is missing: wait for it
            if (!h.retriedOrder) {
              h.retriedOrder = true;
              resend.push(...this.claim(this.tail(h)));
              return;
            }
            // The copy sent after every earlier event was logged is
            // refused too: final once it has stood for orderSettle (a
            // primary fenced by a takeover answers from its own state until
            // it stops; the new primary has no record of the copy, which is
            // then found lost). Asked again each round until then.
            if (h.orderRefusedAt === 0) h.orderRefusedAt = now;
            if (now - h.orderRefusedAt < this.host.cfg.orderSettle) return;
          }
          this.stats.rejected++;
          rejected.push({ id: h.ev.id, code: s.code, reason: s.reason });
          this.drop(h);
          return;
        }
        case "unknown": {
          h.appended = false; // a ledger that reported it appended lost it since (a takeover)
          h.orderRefusedAt = 0;
          if (!st || h.copies > 0) return;
          let seq = h.seq;
          if (seq === 0) {
            if (h.bound === 0) h.bound = Math.max(st.last, 1);
            seq = h.bound;
          }
          if (!lost(st, seq)) return;
          progress = true;
          if (now - h.resentAt < this.resendWait(h)) return;
          resend.push(...this.claim(this.tail(h)));
          return;
        }
      }
    });
    for (const h of resend) {
      if (host.cfg.onResend) host.cfg.onResend(h.ev.id);
      host.copy(h);
    }
    if (host.cfg.onRejected) for (const r of rejected) host.cfg.onRejected(r);
    return progress;
  }

  // resendWait is how long after its last copy an event may be sent
  // again: followAfter, doubling with each copy, at most a minute.
  resendWait(h) {
    if (h.resends === 0) return 0;
    return Math.min(this.after * 2 ** Math.min(h.resends - 1, 10), MAX_RESEND_WAIT);
  }

  // predecessorHeld reports whether an event accepted before h with its
  // order key is still held (not reported logged nor refused). One a ledger
  // reported appended counts (a fenced primary's leaf), and is asked about
  // at the next round.
  predecessorHeld(h) {
    let found = false;
    for (const o of this.byKey.get(h.ev.orderKey) || []) {
      if (o === h) break;
      if (!o.done) {
        found = true;
        if (o.appended) o.appendedAt = 0;
        this.unfollowMsg(o); // by its id: its message's record may be another ledger's
      }
    }
    return found;
  }

  // tail returns h and the events held after it with its order key that are
  // not logged and not on their way already: sent again in this order after
  // h, they cannot land before it.
  tail(h) {
    const out = [h];
    if (!h.ev.orderKey) return out;
    let after = false;
    for (const o of this.byKey.get(h.ev.orderKey) || []) {
      if (o === h) { after = true; continue; }
      if (after && !o.done && o.copies === 0 && o.acked !== 0) out.push(o);
    }
    return out;
  }

  // claim counts one more copy on its way of each of hs that is not done
  // and has none on its way, and returns those: the copies to publish.
  claim(hs) {
    const now = Date.now();
    const live = [];
    for (const h of hs) {
      if (h.done || h.copies > 0) continue;
      h.copies++;
      h.resends++;
      h.resentAt = now;
      h.floor = this.hiSeq;
      live.push(h);
    }
    return live;
  }

  /**
   * heldSeq returns {seq, busy} of the held event id (the stream sequence
   * of its latest acknowledged copy, or its bound; whether a copy is on its
   * way), or null if it is not held.
   */
  heldSeq(id) {
    const h = this.byID.get(id);
    if (!h || h.done) return null;
    return { seq: h.seq !== 0 ? h.seq : h.bound, busy: h.copies > 0 };
  }

  /**
   * wakeFor wakes the follower for a receipt() that found the held event
   * id lost: the follower publishes it again with its order key's later
   * events, in their order. It returns false if the event is not held.
   */
  wakeFor(id) {
    const h = this.byID.get(id);
    if (!h || h.done) return false;
    if (h.appended) h.appendedAt = 0;
    this.unfollowMsg(h); // asked about by its id, at once
    this.wake();
    return true;
  }

  /**
   * refusalOpen reports whether the refusal (code) of the held event id,
   * answered for its copy at stream sequence seq, may still be undone: a
   * newer copy is on its way or acknowledged, its sequence was given
   * before, or it is an order refusal (open until the follower takes it as
   * final, after its retry and cfg.orderSettle, and drops the event). It
   * wakes the follower.
   */
  refusalOpen(id, code, seq) {
    const h = this.byID.get(id);
    if (!h || h.done) return false;
    const open = h.copies > 0 || h.seq !== 0 && h.seq !== seq || h.reused || orderRefusal(h, code);
    if (open) this.wake();
    return open;
  }

  // openCheckpoint parses a signed checkpoint note, checking its signature
  // with the log's key when the Client has one (once per note: the
  // Client's CheckedNotes, which its receipts share).
  async openCheckpoint(text) {
    const logKey = this.host.cfg.logKey;
    if (logKey) {
      try {
        return await this.host.notes.open(text, logKey);
      } catch (e) {
        throw new Error("the status reply's checkpoint: " + e.message);
      }
    }
    const cp = parseSignedCheckpoint(text);
    if (!cp) throw new Error("the status reply's checkpoint is not a signed checkpoint note");
    return cp;
  }
}

function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
