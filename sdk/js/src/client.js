// The transport, as the Go SDK's Client (sdk/client.go, sdk/receipt.go):
// it publishes event bytes on its emitter's subject without a Nats-Msg-Id
// (docs/NATS.md §2: JetStream deduplicates that header across emitters),
// retries until JetStream acknowledges, keeps a bounded window of messages
// in flight, orders events with the same order key (an event goes only once
// its predecessor is acknowledged, or in the same message), packs events
// that queue up into multi-event messages, waits for receipts and checks
// each one against the event's bytes, and reports rejections and backlog
// with their codes.

import { connect, headers as natsHeaders, nkeyAuthenticator } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import {
  Subjects, checkEmitter, checkEventID, checkBatchable, joinBatch, inboxPrefix, formatReceiptRequest,
  parseReceiptReply, parseRejection, lost, HEADER_EVENTS, MAX_BATCH_EVENTS, MAX_EVENT_SIZE, RECEIPT_PROOF_VERSION, RECEIPT_STATE_VERSION,
  RECEIPT_BATCH_VERSION,
} from "./wire.js";
import { Receipt, BadReceiptError, CheckedNotes } from "./receipt.js";
import { ReceiptBatcher } from "./receipts.js";
import { Follower, FollowUnsupportedError, DEFAULT_FOLLOW_INTERVAL, DEFAULT_FOLLOW_AFTER } from "./follow.js";
import { Lingerer, DEFAULT_LINGER } from "./linger.js";

/** A ClosedError: the Client was closed before the event was acknowledged (publishing it again is safe). */
export class ClosedError extends Error {
  constructor(message) { super(message || "zarlog-emitter: the client is closed"); this.name = "ClosedError"; this.code = "closed"; }
}

/** A PredecessorError: an earlier event with the same order key failed, so this one was not sent. */
export class PredecessorError extends Error {
  constructor(message, cause) { super(message, { cause: cause }); this.name = "PredecessorError"; this.code = "predecessor"; }
}

/**
 * A PublishError is a permanent refusal by NATS or JetStream (the message
 * is too large, the subject is not allowed, the connection is closed).
 * Transient failures are retried, never returned.
 */
export class PublishError extends Error {
  constructor(message, cause) { super("publishing: " + message, { cause: cause }); this.name = "PublishError"; this.code = "publish"; }
}

/**
 * A BacklogError: the log's stream refused the message because its backlog
 * is at its bound (docs/NATS.md §6 "Backpressure"): the ledger is behind
 * the publishers. The event is not in the stream; publish it again later
 * (a game's next call, or flush, does), or shed load. Its message names the
 * limit ("maximum messages exceeded").
 */
export class BacklogError extends PublishError {
  constructor(message, cause) { super("the log's backlog is full (the stream refused the message: " + message + ")", cause); this.name = "BacklogError"; this.code = "backlog"; }
}

/** A RejectedError says the ledger refused the event: its code (FORMATS.md §1.5) and reason. */
export class RejectedError extends Error {
  constructor(eventId, code, reason) {
    super("event " + eventId + " rejected by the ledger: " + code + ": " + reason);
    this.name = "RejectedError";
    this.eventId = eventId;
    this.code = code;
    this.reason = reason;
  }
}

/** A ReceiptRefusedError: the ledger refused to serve a receipt request (a bad request). */
export class ReceiptRefusedError extends Error {
  constructor(message) { super(message); this.name = "ReceiptRefusedError"; this.code = "bad-request"; }
}

// RECEIPT_WAIT is how long one receipt request asks the ledger to hold it, and RECEIPT_SLACK
// how much longer the client waits for the answer: a request held by a ledger that dies (a
// primary killed, whose standby takes the log over) is never answered, so these bound how late
// a backend learns of the new primary's receipt. The same as the Go SDK (sdk/receipt.go).
const RECEIPT_WAIT = 5000;
const RECEIPT_SLACK = 2000;

const defaults = {
  window: 32, partialFlights: -1, linger: DEFAULT_LINGER, maxBatchEvents: 256, maxBatchBytes: 256 << 10, maxQueued: 65536,
  ackTimeout: 5000, retryMin: 25, retryMax: 2000, orderSettle: 10000,
  followInterval: DEFAULT_FOLLOW_INTERVAL, followAfter: DEFAULT_FOLLOW_AFTER, maxHeld: 1 << 20, maxHeldBytes: 256 << 20,
};

function sleep(ms, signal) {
  return new Promise(function (resolve, reject) {
    if (signal && signal.aborted) { reject(signal.reason); return; }
    const t = setTimeout(function () { if (signal) signal.removeEventListener("abort", onAbort); resolve(); }, ms);
    const onAbort = function () { clearTimeout(t); reject(signal.reason); };
    if (signal) signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * dial connects to NATS for emitter as the permissions of docs/NATS.md §7
 * want it: it reconnects forever, and its replies come under the inbox
 * prefix "_INBOX.<emitter>". opts: nkeySeed (the NATS user seed `zarlog
 * keygen --emitter` wrote, text or bytes), user and pass, tls, and any
 * other option of @nats-io/transport-node's connect, applied last.
 */
export async function dial(url, emitter, opts) {
  checkEmitter(emitter);
  const o = Object.assign({}, opts || {});
  const seed = o.nkeySeed;
  delete o.nkeySeed;
  const options = Object.assign({
    servers: url, name: "zarlog-emitter-" + emitter, inboxPrefix: inboxPrefix(emitter),
    maxReconnectAttempts: -1, reconnectTimeWait: 100,
  }, o);
  if (seed) {
    const s = typeof seed === "string" ? new TextEncoder().encode(seed.trim()) : seed;
    options.authenticator = nkeyAuthenticator(s);
  }
  return connect(options);
}

/**
 * A Client publishes one emitter's events on a NATS connection (from dial;
 * close the Client before the connection). cfg: emitter (required), root
 * (subject root, "zarlog"), window (messages awaiting their ack, 32),
 * partialFlights (-1, the default: the window, every message at once; 1:
 * while that many messages await their ack, a message that is not full
 * waits and packs what queues meanwhile, until one is acknowledged or it
 * fills up, so a lone event goes at once and a message carries what
 * queued during the previous one's round trip; the Go SDK's
 * Config.PartialFlights), linger (ms, 5: the most a message that is not
 * full waits for more events when the queue runs dry, and only while the
 * emitter's recent rate, the events queued in about the last 100 ms,
 * exponentially weighted, times what is left of it predicts at least one
 * more; so a quiet emitter's lone event goes at once, below 1000/linger
 * events a second a message never waits, and an event waits at most
 * linger ms more than it would without; 0 or negative: never wait; the
 * Go SDK's Config.Linger, docs/NATS.md §9),
 * maxBatchEvents (256), maxBatchBytes (256 KiB), maxQueued (65536),
 * ackTimeout (ms, 5000), retryMin and retryMax (ms, 25 and 2000),
 * orderSettle (ms, 10000: how long an order refusal of receipt's copy must
 * stand before it is final, see receipt), onRetry(err) (each failed attempt, for logs), onResend(id) (each copy
 * the Client publishes of an event the stream lost), and logKey (the log's
 * verifier key, which `zarlog serve` prints: every receipt's signature is
 * checked against it, and the checkpoint of every status reply; without it
 * the Client checks each receipt's inclusion proof of the event but not the
 * log's signature).
 *
 * The Client follows its events, as the Go SDK's does (docs/NATS.md §5,
 * "Resending"; follow.js): it holds every event it accepted, from its
 * acknowledgement until the ledger reports it logged (covered by a signed
 * checkpoint) or refused, asks the ledger about the events held for at
 * least followAfter ms (1000) every followInterval ms (500) in status
 * requests of up to 256 events, and publishes again each one the stream
 * lost after acknowledging it, with the held events after it under its
 * order key, in their order; so an event nobody asks a receipt for is
 * resent too. onRejected({id, code, reason}) is called for each held event
 * the ledger refused. maxHeld (1,048,576) and maxHeldBytes (256 MiB) bound
 * what is held: publishAsync waits at the bound. followInterval: -1 turns
 * following off (receipt() still resends the event it waits for).
 * waitLogged() waits for the verdicts (call it before close), follow(ev)
 * holds an event published before a restart, followStats() counts.
 */
export class Client {
  constructor(nc, cfg) {
    checkEmitter(cfg.emitter);
    this.cfg = Object.assign({}, defaults, cfg);
    const c = this.cfg;
    if (c.partialFlights < 0 || c.partialFlights > c.window) c.partialFlights = c.window; // 0 is refused below
    if (!(c.window >= 1 && c.partialFlights >= 1 && c.maxBatchEvents >= 1 && c.maxBatchEvents <= MAX_BATCH_EVENTS && c.maxQueued >= 1 && c.maxBatchBytes >= MAX_EVENT_SIZE)) {
      throw new RangeError("zarlog-emitter: window " + c.window + ", partialFlights " + c.partialFlights + ", maxBatchEvents " + c.maxBatchEvents + " (≤ " + MAX_BATCH_EVENTS + "), maxQueued " +
        c.maxQueued + " must be positive and maxBatchBytes " + c.maxBatchBytes + " ≥ " + MAX_EVENT_SIZE);
    }
    this.emitter = c.emitter;
    this.subjects = new Subjects(c.root);
    this.nc = nc;
    this.js = jetstream(nc, { timeout: c.ackTimeout });
    this.closed = false;
    this.tails = new Map(); // order key → last unsettled entry
    this.queue = []; // runs ready to send
    this.inflight = 0;
    this.unsettled = 0;
    this.idle = [];
    this.room = []; // publishAsync callers waiting for maxQueued
    this.flights = new Set();
    if (typeof c.linger !== "number" || Number.isNaN(c.linger)) throw new RangeError("zarlog-emitter: linger " + c.linger + " must be a number of ms");
    this.lingerer = new Lingerer(c.linger);
    this.lingerFrom = -1; // when the message the pump holds had its first event ready, or -1
    this.lingerTimer = null;
    this.stop = new AbortController();
    if (!(c.followAfter >= 0 && c.maxHeld >= 1 && c.maxHeldBytes >= 1) || typeof c.followInterval !== "number") {
      throw new RangeError("zarlog-emitter: followInterval " + c.followInterval + " (a number of ms; negative: off), followAfter " + c.followAfter + ", maxHeld " + c.maxHeld + " and maxHeldBytes " + c.maxHeldBytes + " must be positive");
    }
    this.resent = 0;
    this.follower = new Follower(this);
    // receipt() asks in batched requests (receipts.js) until a ledger that
    // predates them refuses one (receiptV then RECEIPT_STATE_VERSION).
    this.batcher = new ReceiptBatcher(nc, this.subjects.receipts(this.emitter), RECEIPT_SLACK, c.retryMin, c.retryMax);
    // The checkpoint notes opened with the log key: each note's signature
    // is checked once (receipts, status replies).
    this.notes = new CheckedNotes();
  }

  /**
   * publish publishes ev ({id, data: Uint8Array, orderKey}) and resolves to
   * JetStream's ack {stream, seq, duplicate, events} once it is stored, or
   * rejects: a BacklogError or PublishError (permanent), a ClosedError, a
   * PredecessorError, or the signal's reason (options.signal: an
   * AbortSignal; the outcome is then unknown, and publishing the same
   * event again is safe: the ledger deduplicates it by id).
   */
  async publish(ev, options) {
    return this.publishAsync(ev, options);
  }

  /**
   * publishAsync accepts ev and returns a promise of its ack at once,
   * unless maxQueued events are unsettled: then it waits for room.
   */
  async publishAsync(ev, options) {
    const signal = options && options.signal;
    checkEventID(ev.id);
    checkBatchable(ev.data);
    if (!this.follower.hasRoom(ev.data.length)) {
      await this.follower.reserve(ev.data.length, signal);
      if (this.closed) throw new ClosedError();
    }
    return this.accept(ev, signal, this.follower.hold(ev), true);
  }

  // copy publishes a copy of the held event h, which the follower claimed
  // (Follower.claim), through the queue with its order key.
  copy(h) {
    this.resent++;
    this.accept(h.ev, this.stop.signal, h).catch(function () { /* copyFailed counted it */ });
  }

  // accept queues ev (held by the follower as held, or null) and returns
  // the promise of its ack. published says the application published it
  // now (not a copy): the linger counts it, whether it goes at once, waits
  // for the window, or is parked behind its order key's earlier event.
  async accept(ev, signal, held, published) {
    while (this.unsettled >= this.cfg.maxQueued && !this.closed) {
      await new Promise((resolve) => this.room.push(resolve));
    }
    if (this.closed) {
      if (held) this.follower.copyFailed(held);
      throw new ClosedError();
    }
    if (published) this.lingerer.arrived(performance.now(), 1);
    let resolve, reject;
    const p = new Promise(function (a, b) { resolve = a; reject = b; });
    p.catch(function () {}); // the caller may not wait for it
    const e = { ev: ev, signal: signal, resolve: resolve, reject: reject, settled: false, next: null, run: null, held: held };
    this.unsettled++;
    const k = ev.orderKey || "";
    if (k !== "") {
      const t = this.tails.get(k);
      this.tails.set(k, e);
      if (t) {
        t.next = e; // parked until t is acknowledged
        return p;
      }
    }
    this.queue.push(e);
    this.pump();
    return p;
  }

  settle(e, ack, err) {
    if (e.settled) return;
    e.settled = true;
    if (e.held) {
      if (err) this.follower.copyFailed(e.held); else this.follower.copyAcked(e.held, ack.seq);
    }
    if (err) e.reject(err); else e.resolve(ack);
    const k = e.ev.orderKey || "";
    if (k !== "" && this.tails.get(k) === e) this.tails.delete(k);
    this.unsettled--;
    const r = this.room.shift();
    if (r) r();
    if (this.unsettled === 0) {
      for (const f of this.idle) f();
      this.idle = [];
    }
    const next = e.next;
    e.next = null;
    if (!next) return;
    if (!err && !this.closed) {
      this.queue.push(this.release(next)); // counted by the linger when published
      this.pump();
    } else {
      this.failSuccessor(next, e, err || new ClosedError());
    }
  }

  failSuccessor(next, e, err) {
    this.settle(next, null, new PredecessorError("zarlog-emitter: event " + next.ev.id + ": an earlier event with the same order key failed (" + e.ev.id + ": " + err.message + ")", err));
  }

  // release makes a run of head and the events parked behind it, as many as
  // one message takes; the run goes in one message, in order.
  release(head) {
    let n = 1, size = head.ev.data.length;
    for (let e = head; e.next && n < this.cfg.maxBatchEvents && size + 1 + e.next.ev.data.length <= this.cfg.maxBatchBytes; n++) {
      size += 1 + e.next.ev.data.length;
      e.run = e.next;
      e.next = null;
      e = e.run;
    }
    return head;
  }

  // take appends a run's members to items, up to the first whose signal
  // has aborted: that one fails, and those after it with PredecessorError.
  take(items, e) {
    for (; e; e = e.run) {
      if (e.signal && e.signal.aborted) {
        this.settle(e, null, e.signal.reason);
        for (let f = e.run; f; f = f.run) this.failSuccessor(f, e, e.signal.reason);
        return items;
      }
      items.push(e);
    }
    return items;
  }

  // pump packs queued runs into messages and starts a flight per message,
  // at most window at once; while partialFlights fly, only a full one (the
  // queue holds more than a message takes: fills); a message that is not
  // full waits while the linger holds it (lingers). A run is never split.
  pump() {
    while (!this.closed && this.inflight < this.cfg.window && this.queue.length > 0 &&
      (this.inflight < this.cfg.partialFlights || this.fills())) {
      if (this.lingers()) return;
      let items = [];
      while (items.length === 0 && this.queue.length > 0) items = this.take(items, this.queue.shift());
      if (items.length === 0) {
        this.lingerFrom = -1;
        return;
      }
      let size = items.length - 1;
      for (const e of items) size += e.ev.data.length;
      while (this.queue.length > 0 && items.length < this.cfg.maxBatchEvents) {
        const e = this.queue[0];
        let n = 0, rs = -1;
        for (let f = e; f; f = f.run) { n++; rs += 1 + f.ev.data.length; }
        if (items.length + n > this.cfg.maxBatchEvents || size + 1 + rs > this.cfg.maxBatchBytes) break;
        this.queue.shift();
        const k = items.length;
        items = this.take(items, e);
        for (const f of items.slice(k)) size += 1 + f.ev.data.length;
      }
      this.lingerFrom = -1;
      if (this.lingerTimer !== null) {
        clearTimeout(this.lingerTimer);
        this.lingerTimer = null;
      }
      this.inflight++;
      const flight = this.fly(items).finally(() => {
        this.inflight--;
        this.flights.delete(flight);
        this.pump();
      });
      this.flights.add(flight);
    }
  }

  // lingers reports whether the message the queue would make now, which
  // is ready to go, waits for more events (a Lingerer's decision: the
  // emitter's recent rate predicts one within a quarter of the linger and
  // what is left of it since its first event was ready); a timer then
  // pumps again at the end of the wait, which decides again. A full
  // message never waits.
  lingers() {
    if (this.flushing || this.lingerer.bound <= 0 || this.fills()) return false;
    const now = performance.now();
    if (this.lingerFrom < 0) this.lingerFrom = now;
    const w = this.lingerer.wait(now, this.lingerFrom);
    if (w <= 0) return false;
    if (this.lingerTimer === null) {
      // One timer at a time: an event that comes meanwhile pumps (and
      // finds the timer set); the timer's pump decides again.
      this.lingerTimer = setTimeout(() => {
        this.lingerTimer = null;
        this.pump();
      }, Math.ceil(w));
    }
    return true;
  }

  // fills reports whether the queued runs fill a message: packed as pump
  // packs them, one would be left over, or the message would hold
  // maxBatchEvents.
  fills() {
    let n = 0, size = -1;
    for (const e of this.queue) {
      let rn = 0, rs = -1;
      for (let f = e; f; f = f.run) { rn++; rs += 1 + f.ev.data.length; }
      if (n > 0 && (n + rn > this.cfg.maxBatchEvents || size + 1 + rs > this.cfg.maxBatchBytes)) return true;
      n += rn;
      size += 1 + rs;
      if (n >= this.cfg.maxBatchEvents) return true;
    }
    return false;
  }

  async fly(items) {
    const subject = this.subjects.events(this.emitter);
    let payload, h;
    if (items.length === 1) {
      payload = items[0].ev.data;
    } else {
      payload = joinBatch(items.map(function (e) { return e.ev.data; }));
      h = natsHeaders();
      h.set(HEADER_EVENTS, String(items.length));
    }
    let backoff = this.cfg.retryMin;
    for (;;) {
      const live = items.filter((e) => {
        if (e.signal && e.signal.aborted) { this.settle(e, null, e.signal.reason); return false; }
        return true;
      });
      if (live.length === 0) return;
      if (this.closed) {
        for (const e of items) this.settle(e, null, new ClosedError());
        return;
      }
      let err;
      try {
        const pa = await this.js.publish(subject, payload, h ? { headers: h, timeout: this.cfg.ackTimeout } : { timeout: this.cfg.ackTimeout });
        const ack = { stream: pa.stream, seq: pa.seq, duplicate: !!pa.duplicate, events: items.length };
        for (const e of items) this.settle(e, ack, null);
        if (!ack.duplicate) this.follower.followMessage(items.map(function (e) { return e.held; }), ack.seq, payload);
        return;
      } catch (e) {
        err = e;
      }
      const perm = permanent(err);
      if (perm) {
        for (const e of items) this.settle(e, null, perm);
        return;
      }
      if (this.cfg.onRetry) this.cfg.onRetry(err);
      try {
        await sleep(backoff, this.stop.signal);
      } catch (e) {
        for (const e2 of items) this.settle(e2, null, new ClosedError());
        return;
      }
      backoff = Math.min(2 * backoff, this.cfg.retryMax);
    }
  }

  /** flush resolves once every event accepted so far is settled (acknowledged or failed). */
  async flush() {
    if (this.unsettled === 0) return;
    await new Promise((resolve) => this.idle.push(resolve));
  }

  /**
   * receipt waits until the event ev ({id, data, orderKey}) is durable and
   * covered by a signed checkpoint, and resolves to its Receipt: a C2SP
   * tlog-proof of ev.data, checked (with cfg.logKey, its signature too).
   * ack, if given (the event's publish ack), makes the ledger answer from
   * its decision of that message (seq). It asks again while the answer is
   * "pending" or nobody answers, until options.signal aborts, and publishes
   * the event again when the ledger's answer shows that the stream lost it
   * after acknowledging it (the ledger read past its message without it:
   * lost() in wire.js; docs/NATS.md §5, "Resending"), then waits for that
   * copy (cfg.onResend(id) is called for each copy, and resent counts
   * them). Without ack it learns a bound from the ledger's first answer. It
   * rejects with a RejectedError (the ledger's code and reason) if the
   * ledger refused the event, and a BadReceiptError if the ledger's receipt
   * does not prove ev.data. It publishes only the event asked about: ask
   * for a game's receipts in its order. An out-of-order or unknown-game
   * refusal of an event with an orderKey is returned only after one copy
   * published after it was refused the same: the first may have been
   * decided before a lost predecessor was published again (a takeover),
   * and with the game's earlier events receipted, the copy's answer is
   * final (the Go SDK's Receipt does the same for an event its Client
   * does not hold).
   */
  async receipt(ev, ack, options) {
    const signal = options && options.signal;
    checkEventID(ev.id);
    if (!ev.data || ev.data.length === 0) throw new TypeError("zarlog-emitter: the event's bytes are needed to check its receipt");
    let backoff = this.cfg.retryMin;
    // seq is the stream sequence asked about: the latest acknowledged
    // copy's, or, without ack, the stream's last sequence in the first
    // answer (no copy acknowledged before the first request is above it).
    let seq = ack && ack.seq ? ack.seq : 0;
    let copying = null; // a copy this call published, until settled
    let retried = false; // a copy published after an order refusal
    let settling = 0; // when that copy was first refused so
    for (;;) {
      if (signal && signal.aborted) throw signal.reason;
      if (this.closed) throw new ClosedError();
      // An event the follower holds: ask about its latest copy.
      const hs = this.follower.heldSeq(ev.id);
      const busy = !!hs && hs.busy;
      if (hs && hs.seq !== 0) seq = hs.seq;
      const v = this.receiptV || RECEIPT_BATCH_VERSION;
      const start = Date.now();
      let rep, err;
      try {
        if (v === RECEIPT_BATCH_VERSION) {
          // Asked together with the Client's other receipt requests
          // (receipts.js); the answer about this event is the same.
          rep = await this.batcher.ask(ev.id, seq, RECEIPT_WAIT, signal);
        } else {
          const req = formatReceiptRequest({ id: ev.id, waitMs: RECEIPT_WAIT, seq: seq, v: v });
          const m = await this.nc.request(this.subjects.receipts(this.emitter), req, { timeout: RECEIPT_WAIT + RECEIPT_SLACK });
          rep = parseReceiptReply(m.data);
        }
      } catch (e) {
        err = e;
      }
      if (signal && signal.aborted) throw signal.reason;
      if (copying && copying.done) {
        if (copying.ack) seq = copying.ack.seq;
        copying = null;
      }
      if (!err) {
        if (rep.status === "ok") {
          const r = new Receipt(ev.id, ev.data, rep.index, rep.proof, rep.checkpoint);
          await r.check(ev.data, this.cfg.logKey || null, this.notes);
          return r;
        }
        if (rep.status === "rejected" && !copying && (busy || this.follower.refusalOpen(ev.id, rep.code, seq))) {
          // The refusal of an older copy, or an order refusal that the
          // copies the follower publishes again may undo (a lost
          // predecessor): ask again.
          await sleep(backoff, signal);
          backoff = Math.min(2 * backoff, this.cfg.retryMax);
          continue;
        }
        const order = ev.orderKey && (rep.code === "out-of-order" || rep.code === "unknown-game");
        if (rep.status === "rejected" && !copying && retried && order && (settling === 0 || Date.now() - settling < this.cfg.orderSettle)) {
          // The copy refused too: final once the refusal has stood for
          // orderSettle (a primary fenced by a takeover answers from its
          // own state until it stops; the new primary has no record of
          // the copy, which is then found lost).
          if (settling === 0) settling = Date.now();
          if (this.cfg.onRetry) this.cfg.onRetry(new Error("receipt for " + ev.id + ": refused (" + rep.code + ": " + rep.reason + ") again after a copy: final once it has stood for " + this.cfg.orderSettle + " ms"));
          await sleep(backoff, signal);
          backoff = Math.min(2 * backoff, this.cfg.retryMax);
          continue;
        }
        if (rep.status === "rejected" && !copying && !retried && order && !hs) {
          // An order refusal: the ledger may have decided this copy before
          // a lost predecessor was published again (a takeover: its new
          // primary never had it). The game's earlier events are receipted
          // (ask in a game's order), so a copy published now is judged
          // after them: publish one, once, and its answer is the one.
          retried = true;
          const c = { done: false, ack: null };
          copying = c;
          this.resent = (this.resent || 0) + 1;
          if (this.cfg.onResend) this.cfg.onResend(ev.id);
          this.publishAsync({ id: ev.id, data: ev.data, orderKey: ev.orderKey }, { signal: signal }).then(
            function (a) { c.ack = a; c.done = true; }, function () { c.done = true; });
          await sleep(backoff, signal);
          continue;
        }
        if (rep.status === "rejected" && !copying) throw new RejectedError(ev.id, rep.code, rep.reason);
        if (rep.status === "error" && rep.code === "bad-request" && v === RECEIPT_BATCH_VERSION && rep.v !== RECEIPT_BATCH_VERSION) {
          // A ledger that predates batched receipts refuses a batched
          // request with its own reply: ask as version 3 from now on.
          this.receiptV = RECEIPT_STATE_VERSION;
          continue;
        }
        if (rep.status === "error" && rep.code === "bad-request" && v === RECEIPT_STATE_VERSION && rep.reason.indexOf("version") >= 0) {
          this.receiptV = RECEIPT_PROOF_VERSION; // a ledger of version 2: no stream state, nothing to resend by
          continue;
        }
        if (rep.status === "error" && rep.code === "bad-request") throw new ReceiptRefusedError("zarlog-emitter: receipt for " + ev.id + ": receipt request refused: " + rep.reason);
        if (rep.status === "pending" && rep.state && rep.index === null) {
          if (seq === 0) {
            seq = Math.max(rep.state.last, 1);
            backoff = this.cfg.retryMin;
            continue;
          }
          if (!copying && lost(rep.state, seq) && this.follower.wakeFor(ev.id)) {
            // The follower publishes it again, with its order key's later
            // events in their order: ask again after a pause.
            await sleep(backoff, signal);
            backoff = Math.min(2 * backoff, this.cfg.retryMax);
            continue;
          }
          if (!copying && lost(rep.state, seq)) {
            const c = { done: false, ack: null };
            copying = c;
            this.resent = (this.resent || 0) + 1;
            if (this.cfg.onResend) this.cfg.onResend(ev.id);
            this.publishAsync({ id: ev.id, data: ev.data, orderKey: ev.orderKey }, { signal: signal }).then(
              function (a) { c.ack = a; c.done = true; }, function () { c.done = true; });
            if (this.cfg.onRetry) {
              this.cfg.onRetry(new Error("receipt for " + ev.id + ": the stream lost the event (its message " + seq + "; the ledger has decided the stream up to " +
                rep.state.decided + ", and it ends at " + rep.state.last + "): published again"));
            }
            await sleep(backoff, signal); // a copy that fails is sent again after a growing pause
            backoff = Math.min(2 * backoff, this.cfg.retryMax);
            continue;
          }
        }
        if (rep.status === "pending" && Date.now() - start >= RECEIPT_WAIT / 2) {
          backoff = this.cfg.retryMin; // the ledger held the request: ask again at once
          continue;
        }
        err = new Error("status " + JSON.stringify(rep.status) + ", code " + JSON.stringify(rep.code) + ": " + rep.reason);
      } else if (this.nc.isClosed()) {
        throw new ClosedError("zarlog-emitter: receipt for " + ev.id + ": the connection is closed");
      }
      if (this.cfg.onRetry) this.cfg.onRetry(new Error("receipt for " + ev.id + ": " + err.message, { cause: err }));
      await sleep(backoff, signal);
      backoff = Math.min(2 * backoff, this.cfg.retryMax);
    }
  }

  /**
   * rejections calls handle({code, id, reason, seq, sha256, part, msgId})
   * with every rejection the ledger announces for this emitter's events
   * (best effort: a receipt request reports a rejection durably). It
   * returns the subscription (unsubscribe() ends it).
   */
  rejections(handle) {
    const sub = this.nc.subscribe(this.subjects.rejected(this.emitter), {
      callback: function (err, m) {
        if (err) return;
        try {
          handle(parseRejection(m.data));
        } catch (e) {
          if (!(e instanceof Error) || e.name !== "WireError") throw e;
        }
      },
    });
    return sub;
  }

  /**
   * follow makes the Client hold ev ({id, data, orderKey}) as if it had
   * published it, without publishing it: it asks the ledger about it and
   * publishes it again if the stream lost it. A backend that restarted
   * calls it for the events it had published and holds no receipt for.
   * Nothing happens if following is off.
   */
  follow(ev) {
    checkEventID(ev.id);
    checkBatchable(ev.data);
    this.follower.follow(ev);
  }

  /**
   * waitLogged resolves once the ledger has reported every event accepted
   * before the call (or given to follow) logged or refused, or rejects
   * with options.signal's reason, or a ClosedError. Events whose
   * publication failed before any copy was acknowledged are not waited
   * for. Call it before close, so that nothing published is held only in
   * this process's memory. With following off it resolves at once.
   */
  async waitLogged(options) {
    if (this.closed) throw new ClosedError();
    return this.follower.waitLogged(options && options.signal);
  }

  /**
   * followStats returns the follower's counters: held and heldBytes (now),
   * logged and rejected (events the ledger reported so), resent (copies
   * published again, by the follower and by receipt()), requests (status
   * requests sent).
   */
  followStats() {
    return Object.assign({}, this.follower.stats, { resent: this.resent });
  }

  /** close stops the Client: events not yet acknowledged fail with a ClosedError. It does not close the connection. */
  async close() {
    if (this.closed) return;
    // A message the linger holds goes now, as it would have gone without
    // the linger (the Go SDK's Close does the same).
    this.flushing = true;
    this.pump();
    this.closed = true;
    this.follower.stop(new ClosedError());
    this.stop.abort(new ClosedError());
    if (this.lingerTimer !== null) {
      clearTimeout(this.lingerTimer);
      this.lingerTimer = null;
    }
    for (const r of this.room) r();
    this.room = [];
    const queued = this.queue;
    this.queue = [];
    for (const e of queued) for (let f = e; f; f = f.run) this.settle(f, null, new ClosedError());
    await Promise.allSettled(Array.from(this.flights));
  }
}

// permanent returns the error to fail a message with if err will not go
// away by sending again (soon), or null.
function permanent(err) {
  const api = err && typeof err.apiError === "function" ? err.apiError() : null;
  if (api) {
    const d = api.description || "";
    if (api.err_code === 10077 && (d.indexOf("maximum messages") >= 0 || d.indexOf("maximum bytes") >= 0)) return new BacklogError(d, err);
    if (api.err_code === 10054) return new PublishError(d, err);
    return null;
  }
  const name = err && err.name;
  const msg = String(err && err.message || "");
  if (name === "ClosedConnectionError" || /connection closed/i.test(msg)) return new PublishError(msg, err);
  if (name === "InvalidSubjectError" || /maximum payload|max_payload|MAX_PAYLOAD/i.test(msg)) return new PublishError(msg, err);
  if (name === "PermissionViolationError" || /permissions violation/i.test(msg)) return new PublishError(msg, err);
  return null;
}

export { BadReceiptError, FollowUnsupportedError };
