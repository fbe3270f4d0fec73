// Batched receipt requests (receipt protocol version 5; the Go SDK's
// sdk/receipts.go; docs/NATS.md §5, "Batched receipts"): the Client's
// receipt() calls do not each send a request; they queue what they ask
// (an event id and its copy's stream sequence), and one request at a time
// carries everything queued, up to MAX_RECEIPT_BATCH events. The ledger
// holds it until one of its events is answerable and answers with one
// checkpoint note and each answerable event's index and inclusion proof;
// an event it answers "pending" is asked again in the next request, with
// the events queued meanwhile, until its own wait ends. What receipt()
// does with its answer is unchanged: the receipt is checked exactly as one
// asked for alone (its leaf, its inclusion proof, the log's signature).

import { formatReceiptsRequest, parseReceiptsReply, parseReceiptReply, WireError, MAX_RECEIPT_BATCH, RECEIPT_BATCH_VERSION } from "./wire.js";

/**
 * A ReceiptBatcher sends the receipt requests of one Client: nc, subject
 * (the emitter's receipts subject), slack (ms the Client waits for a reply
 * past the wait it asked for), retryMin and retryMax (ms, the pause before
 * asking again after a reply that answered nothing without being held).
 */
export class ReceiptBatcher {
  constructor(nc, subject, slack, retryMin, retryMax) {
    this.nc = nc;
    this.subject = subject;
    this.slack = slack;
    this.retryMin = retryMin || 25;
    this.retryMax = retryMax || 2000;
    this.queue = [];
    this.sending = false;
    this.requests = 0; // batched requests sent (for tests)
  }

  /**
   * ask resolves to the answer about the event id, whose latest copy's
   * message is at seq (0: unknown), as parseReceiptReply's reply of version
   * RECEIPT_BATCH_VERSION (from a ledger that predates it: that ledger's
   * reply), waiting at most waitMs for an answer other than pending; it
   * rejects if the request fails, or with signal's reason.
   */
  ask(id, seq, waitMs, signal) {
    return new Promise((resolve, reject) => {
      const a = { q: { id: id, seq: seq }, deadline: Date.now() + waitMs, settled: false, resolve: resolve, reject: reject, signal: signal };
      if (signal) {
        if (signal.aborted) return reject(signal.reason);
        a.onAbort = function () { settle(a, null, signal.reason); };
        signal.addEventListener("abort", a.onAbort, { once: true });
      }
      this.queue.push(a);
      if (!this.sending) {
        this.sending = true;
        this.send();
      }
    });
  }

  // send sends the queue, one batched request at a time, until it is empty.
  async send() {
    let backoff = this.retryMin;
    for (;;) {
      const live = this.queue.filter(function (a) { return !a.settled; });
      const batch = live.slice(0, MAX_RECEIPT_BATCH);
      this.queue = live.slice(MAX_RECEIPT_BATCH);
      if (batch.length === 0) {
        this.sending = false;
        return;
      }
      let again;
      const start = Date.now();
      const wait = Math.max(0, Math.min.apply(null, batch.map(function (a) { return a.deadline; })) - start);
      try {
        again = await this.sendBatch(batch, wait);
      } catch (e) {
        for (const a of batch) settle(a, null, e);
        again = [];
      }
      for (const a of again) this.queue.push(a);
      if (again.length === batch.length && Date.now() - start < wait / 2) {
        // Nothing answered, and not held: a ledger should hold the request
        // until an event is answerable. Pause before asking again, as
        // receipt() does after a pending reply it was not held for.
        await new Promise(function (r) { setTimeout(r, backoff); });
        backoff = Math.min(2 * backoff, this.retryMax);
      } else {
        backoff = this.retryMin;
      }
    }
  }

  // sendBatch sends one batched request for batch and answers its asks;
  // it resolves to those answered "pending" whose wait has not ended, to be
  // asked again.
  async sendBatch(batch, wait) {
    const all = function (rep, err) {
      for (const a of batch) settle(a, rep && Object.assign({}, rep, { id: a.q.id }), err);
      return [];
    };
    const req = formatReceiptsRequest(batch.map(function (a) { return a.q; }), wait);
    let m;
    try {
      this.requests++;
      m = await this.nc.request(this.subject, req, { timeout: wait + this.slack });
    } catch (e) {
      return all(null, e);
    }
    let p;
    try {
      p = parseReceiptsReply(m.data);
    } catch (e) {
      let old;
      try {
        old = parseReceiptReply(m.data); // a ledger that predates batched receipts, refusing the request
      } catch (e2) {
        return all(null, e);
      }
      return all(old, null);
    }
    const reply = function (status) {
      return { status: status, id: "", v: RECEIPT_BATCH_VERSION, index: null, checkpoint: "", code: "", reason: "", proof: [], state: null };
    };
    if (p.status === "error") return all(Object.assign(reply("error"), { code: p.code, reason: p.reason }), null);
    if (p.events.length !== batch.length) {
      return all(null, new WireError("malformed zarlog wire message: a batched receipt reply of " + p.events.length + " events to a request of " + batch.length));
    }
    for (let i = 0; i < batch.length; i++) {
      if (p.events[i].id !== batch[i].q.id) return all(null, new WireError("malformed zarlog wire message: a batched receipt reply's event " + i + " is " + p.events[i].id + ", not " + batch[i].q.id));
    }
    const again = [];
    const now = Date.now();
    batch.forEach(function (a, i) {
      const e = p.events[i];
      const rep = Object.assign(reply(e.status), { id: e.id, index: e.index });
      switch (e.status) {
        case "ok":
          rep.checkpoint = p.checkpoint;
          rep.proof = e.proof;
          break;
        case "rejected":
          rep.code = e.code;
          rep.reason = e.reason;
          break;
        case "unknown":
          // No record, and the ledger will not wait for one: its state
          // says whether the stream lost the event (receipt()).
          rep.status = "pending";
          rep.state = p.state;
          break;
        default:
          if (now < a.deadline && !a.settled) {
            again.push(a);
            return;
          }
      }
      settle(a, rep, null);
    });
    return again;
  }
}

function settle(a, rep, err) {
  if (a.settled) return;
  a.settled = true;
  if (a.onAbort) a.signal.removeEventListener("abort", a.onAbort);
  if (err) a.reject(err);
  else a.resolve(rep);
}
