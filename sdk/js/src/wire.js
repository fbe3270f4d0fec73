// How zarlog talks over NATS (docs/NATS.md; the Go package wire): the
// subjects, the headers, the framing of several events in one message, and
// the small JSON messages of the receipt and rejection protocols. It is
// pure: no NATS client, no I/O.

import { b64canonical } from "zarlog-verify/src/bytes.js";

/** The first subject token of every zarlog subject unless configured otherwise. */
export const DEFAULT_ROOT = "zarlog";
/** The header of a multi-event message: its number of events (NATS.md §2). */
export const HEADER_EVENTS = "Zarlog-Events";
/** The largest event, in bytes (the tlog-tiles entry bundle limit). */
export const MAX_EVENT_SIZE = 65535;
/** The most events one NATS message may carry. */
export const MAX_BATCH_EVENTS = 4096;
/** The receipt protocol version whose ok replies carry the inclusion proof. */
export const RECEIPT_PROOF_VERSION = 2;
/**
 * The receipt protocol version whose pending replies for an event the
 * ledger holds no record of carry the stream's state, decided and last
 * (docs/NATS.md §5, "Resending"): what the SDK asks with.
 */
export const RECEIPT_STATE_VERSION = 3;

const EMITTER = /^[a-z0-9][a-z0-9-]{0,62}$/;
const EVENT_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const CODE = /^[a-z0-9][a-z0-9-]{0,63}$/;
const te = new TextEncoder();

/** A WireError is a malformed zarlog wire message or an invalid name. */
export class WireError extends Error {}

/** checkEmitter throws a WireError unless id is an emitter id: [a-z0-9][a-z0-9-]{0,62}. */
export function checkEmitter(id) {
  if (typeof id !== "string" || !EMITTER.test(id)) throw new WireError("invalid emitter id " + JSON.stringify(id) + ": want [a-z0-9][a-z0-9-]{0,62}");
}

/** checkEventID throws a WireError unless id is an event id: [A-Za-z0-9][A-Za-z0-9._:-]{0,127}. */
export function checkEventID(id) {
  if (typeof id !== "string" || !EVENT_ID.test(id)) throw new WireError("invalid event id " + JSON.stringify(id) + ": want [A-Za-z0-9][A-Za-z0-9._:-]{0,127}");
}

/** checkBatchable throws a WireError unless event (bytes) may travel in a NATS message of the SDK. */
export function checkBatchable(event) {
  if (event.length === 0) throw new WireError("empty event");
  if (event.length > MAX_EVENT_SIZE) throw new WireError("event of " + event.length + " bytes exceeds " + MAX_EVENT_SIZE);
  if (event.indexOf(10) >= 0) throw new WireError("event contains a newline");
}

/**
 * Subjects builds the subjects under one root (default "zarlog"): an
 * emitter publishes its events on R.events.E, asks for receipts on
 * R.receipts.E, and reads its rejections on R.rejected.E and its games'
 * bundles on R.proofs.E.
 */
export class Subjects {
  constructor(root) {
    this.root = root || DEFAULT_ROOT;
    for (const t of this.root.split(".")) {
      if (t === "" || /[*> \t\r\n]/.test(t)) throw new WireError("invalid subject root " + JSON.stringify(this.root));
    }
  }
  events(e) { return this.root + ".events." + e; }
  rejected(e) { return this.root + ".rejected." + e; }
  receipts(e) { return this.root + ".receipts." + e; }
  proofs(e) { return this.root + ".proofs." + e; }
}

/** inboxPrefix is emitter's own reply-subject prefix, which NATS.md §7's permissions allow. */
export function inboxPrefix(emitter) { return "_INBOX." + emitter; }

/**
 * joinBatch returns the payload of a multi-event message holding events
 * (2…4096 Uint8Arrays, each batchable): the events joined by single '\n'.
 */
export function joinBatch(events) {
  if (events.length < 2 || events.length > MAX_BATCH_EVENTS) throw new WireError(events.length + " events is not 2…" + MAX_BATCH_EVENTS);
  let n = events.length - 1;
  for (const e of events) { checkBatchable(e); n += e.length; }
  const out = new Uint8Array(n);
  let o = 0;
  events.forEach(function (e, i) {
    if (i > 0) out[o++] = 10;
    out.set(e, o);
    o += e.length;
  });
  return out;
}

// The receipt and rejection messages are JSON objects with exactly the
// members below, as the Go package writes them (encoding/json, members in
// the order of its struct, empty ones left out).
function parseObject(bytes, allowed) {
  if (bytes.length > 1 << 20) throw new WireError("message of " + bytes.length + " bytes exceeds " + (1 << 20));
  let o;
  try {
    o = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (e) {
    throw new WireError("malformed zarlog wire message: " + e.message);
  }
  if (o === null || typeof o !== "object" || Array.isArray(o)) throw new WireError("malformed zarlog wire message: not an object");
  for (const k of Object.keys(o)) if (allowed.indexOf(k) < 0) throw new WireError("malformed zarlog wire message: unknown member " + JSON.stringify(k));
  return o;
}
const isUint = function (x) { return typeof x === "number" && Number.isSafeInteger(x) && x >= 0; };

/** formatReceiptRequest encodes a receipt request {id, v (RECEIPT_STATE_VERSION unless given), wait_ms, seq}. */
export function formatReceiptRequest(q) {
  checkEventID(q.id);
  const v = q.v === undefined ? RECEIPT_STATE_VERSION : q.v;
  if (v !== RECEIPT_PROOF_VERSION && v !== RECEIPT_STATE_VERSION) throw new WireError("receipt protocol version " + v + " is not " + RECEIPT_PROOF_VERSION + " or " + RECEIPT_STATE_VERSION);
  const o = { id: q.id, v: v };
  if (q.waitMs) o.wait_ms = Math.max(0, Math.min(Math.floor(q.waitMs), 2 ** 31));
  if (q.seq) o.seq = q.seq;
  return te.encode(JSON.stringify(o));
}

/**
 * parseReceiptReply decodes a receipt reply and checks that its members fit
 * its status (wire.ParseReceiptReply): {status, id, index (BigInt), checkpoint,
 * proof (32-byte hashes), code, reason, v, state}. state is the stream's
 * state {decided, last} of a pending reply of version 3 for an event the
 * ledger holds no record of, or null.
 */
export function parseReceiptReply(bytes) {
  const o = parseObject(bytes, ["checkpoint", "code", "decided", "id", "index", "last", "proof", "reason", "status", "v"]);
  const bad = function (why) { throw new WireError("malformed zarlog wire message: " + why); };
  if (typeof o.id !== "string" || o.id.length > 128) bad("id");
  if (typeof o.status !== "string") bad("status");
  if (o.v !== undefined && o.v !== RECEIPT_PROOF_VERSION && o.v !== RECEIPT_STATE_VERSION) {
    bad("receipt protocol version " + o.v + " is not " + RECEIPT_PROOF_VERSION + " or " + RECEIPT_STATE_VERSION + " (or absent, version 1)");
  }
  if ((o.decided === undefined) !== (o.last === undefined)) bad("decided and last come together");
  if (o.decided !== undefined && (!isUint(o.decided) || !isUint(o.last) || o.status !== "pending" || o.v !== RECEIPT_STATE_VERSION || o.index !== undefined)) {
    bad("decided and last are in a pending reply of version " + RECEIPT_STATE_VERSION + " without index only");
  }
  if (o.reason !== undefined && (typeof o.reason !== "string" || o.reason.length > 4096)) bad("reason");
  if (o.index !== undefined && !isUint(o.index)) bad("index");
  const r = { status: o.status, id: o.id, v: o.v || 0, index: o.index === undefined ? null : BigInt(o.index),
    checkpoint: o.checkpoint || "", code: o.code || "", reason: o.reason || "", proof: [],
    state: o.decided === undefined ? null : { decided: o.decided, last: o.last } };
  if (o.proof !== undefined) {
    if (!Array.isArray(o.proof) || o.proof.length === 0 || o.proof.length > 64 || o.status !== "ok" || r.v < RECEIPT_PROOF_VERSION) bad("proof");
    for (const h of o.proof) {
      const b = typeof h === "string" && h.length === 44 ? b64canonical(h) : null;
      if (!b || b.length !== 32) bad("hash " + JSON.stringify(h) + " is not standard base64 of 32 bytes");
      r.proof.push(b);
    }
  }
  switch (r.status) {
    case "ok":
      if (r.index === null || r.checkpoint === "" || r.code !== "" || r.reason !== "") bad("status ok needs index and checkpoint only");
      break;
    case "pending":
      if (r.checkpoint !== "" || r.code !== "") bad("status pending carries no checkpoint or code");
      break;
    case "rejected": case "error":
      if (r.checkpoint !== "" || r.index !== null) bad("status " + r.status + " carries no index or checkpoint");
      if (!CODE.test(r.code)) bad("code " + JSON.stringify(r.code));
      break;
    default:
      bad("unknown status " + JSON.stringify(r.status));
  }
  return r;
}

/** MAX_STATUS_EVENTS is the most events one status request asks about (wire.MaxStatusEvents). */
export const MAX_STATUS_EVENTS = 256;
/** MAX_STATUS_REASON bounds a rejected event's reason in a status reply (wire.MaxStatusReason). */
export const MAX_STATUS_REASON = 256;

/**
 * formatStatusRequest encodes a status request (receipt protocol version
 * 3, docs/NATS.md §5) about events [{id, seq}] (1…MAX_STATUS_EVENTS; seq,
 * if not 0, the stream sequence of the event's latest acknowledged copy).
 */
export function formatStatusRequest(events) {
  if (!Array.isArray(events) || events.length === 0 || events.length > MAX_STATUS_EVENTS) {
    throw new WireError("a status request asks about 1…" + MAX_STATUS_EVENTS + " events, not " + (Array.isArray(events) ? events.length : events));
  }
  const evs = eventQueries(events);
  return te.encode(JSON.stringify({ events: evs, v: RECEIPT_STATE_VERSION }));
}

/**
 * parseStateReply decodes what a status reply and a message status reply
 * share (wire.checkStateReply): the version, the stream's state, the
 * checkpoint, and the status with its code and reason; items names the list
 * ("events" or "messages") an ok reply carries 1…most of. It returns the
 * decoded object o, the reply r so far (r[items] empty) and the error
 * thrower bad; o is null when the reply is an error, r then whole.
 */
function parseStateReply(bytes, items, version, versionWhat, what, most) {
  const o = parseObject(bytes, ["checkpoint", "code", "decided", items, "last", "reason", "status", "v"]);
  const bad = function (why) { throw new WireError("malformed zarlog wire message: " + why); };
  if (o.v !== version) bad(versionWhat + version + ", not " + o.v);
  if ((o.decided === undefined) !== (o.last === undefined)) bad("decided and last come together");
  if (o.decided !== undefined && (!isUint(o.decided) || !isUint(o.last))) bad("decided and last");
  if (o.reason !== undefined && (typeof o.reason !== "string" || o.reason.length > 4096)) bad("reason");
  if (o.code !== undefined && typeof o.code !== "string") bad("code");
  if (o.checkpoint !== undefined && (typeof o.checkpoint !== "string" || o.checkpoint === "")) bad("checkpoint");
  const r = { status: o.status, checkpoint: o.checkpoint || "", code: o.code || "", reason: o.reason || "",
    state: o.decided === undefined ? null : { decided: o.decided, last: o.last } };
  r[items] = [];
  switch (o.status) {
    case "ok":
      if (r.code !== "" || r.reason !== "" || !Array.isArray(o[items]) || o[items].length === 0 || o[items].length > most) {
        bad("status ok carries 1…" + most + " " + items + " and no code or reason");
      }
      return { o, r, bad };
    case "error":
      if (r.checkpoint !== "" || r.state !== null || o[items] !== undefined) bad("status error carries no checkpoint, state or " + items);
      if (!CODE.test(r.code)) bad("code " + JSON.stringify(r.code));
      return { o: null, r, bad };
    default:
      bad("unknown status " + JSON.stringify(o.status) + " of " + what);
  }
}

/**
 * parseStatusReply decodes a status reply and checks that its members fit
 * its status (wire.ParseStatusReply): {status ("ok" or "error"), checkpoint,
 * code, reason, state ({decided, last} or null), events: [{id, status
 * ("logged", "appended", "rejected", "unknown"), index (BigInt or null),
 * code, reason}]}.
 */
export function parseStatusReply(bytes) {
  const h = parseStateReply(bytes, "events", RECEIPT_STATE_VERSION, "a status reply is of receipt protocol version ", "a status reply", MAX_STATUS_EVENTS);
  if (h.o === null) return h.r;
  const { o, r, bad } = h;
  let logged = false;
  o.events.forEach(function (e, i) {
    if (e === null || typeof e !== "object" || Array.isArray(e)) bad("events[" + i + "] is not an object");
    for (const k of Object.keys(e)) if (["code", "id", "index", "reason", "status"].indexOf(k) < 0) bad("events[" + i + "]: unknown member " + JSON.stringify(k));
    if (typeof e.id !== "string" || !EVENT_ID.test(e.id)) bad("events[" + i + "]: id");
    if (e.reason !== undefined && (typeof e.reason !== "string" || te.encode(e.reason).length > MAX_STATUS_REASON)) bad("events[" + i + "]: reason");
    if (e.code !== undefined && typeof e.code !== "string") bad("events[" + i + "]: code");
    if (e.index !== undefined && !isUint(e.index)) bad("events[" + i + "]: index");
    const s = { id: e.id, status: e.status, index: e.index === undefined ? null : BigInt(e.index), code: e.code || "", reason: e.reason || "" };
    switch (s.status) {
      case "logged": case "appended":
        if (s.index === null || s.code !== "" || s.reason !== "") bad("events[" + i + "]: status " + s.status + " needs index only");
        logged = logged || s.status === "logged";
        break;
      case "unknown":
        if (s.index !== null || s.code !== "" || s.reason !== "") bad("events[" + i + "]: status unknown carries nothing");
        break;
      case "rejected":
        if (s.index !== null) bad("events[" + i + "]: status rejected carries no index");
        if (!CODE.test(s.code)) bad("events[" + i + "]: code " + JSON.stringify(s.code));
        break;
      default:
        bad("events[" + i + "]: unknown status " + JSON.stringify(s.status));
    }
    r.events.push(s);
  });
  if (logged && r.checkpoint === "") bad("a logged event without the checkpoint that covers it");
  return r;
}

/**
 * RECEIPT_BATCH_VERSION is the version of batched receipt requests
 * (wire.ReceiptBatchVersion, docs/NATS.md §5, "Batched receipts"): one
 * request asks for the receipts of every event a Client waits on, one
 * reply answers with one checkpoint note and each event's index and
 * inclusion proof.
 */
export const RECEIPT_BATCH_VERSION = 5;
/** MAX_RECEIPT_BATCH is the most events one batched receipt request asks about (wire.MaxReceiptBatch). */
export const MAX_RECEIPT_BATCH = 128;

/**
 * formatReceiptsRequest encodes a batched receipt request about events
 * [{id, seq}] (1…MAX_RECEIPT_BATCH; seq, if not 0, the stream sequence of
 * the event's latest acknowledged copy), which the ledger may hold waitMs
 * (wire.ReceiptsRequest).
 */
export function formatReceiptsRequest(events, waitMs) {
  if (!Array.isArray(events) || events.length === 0 || events.length > MAX_RECEIPT_BATCH) {
    throw new WireError("a batched receipt request asks about 1…" + MAX_RECEIPT_BATCH + " events, not " + (Array.isArray(events) ? events.length : events));
  }
  const evs = eventQueries(events);
  const o = { events: evs, v: RECEIPT_BATCH_VERSION };
  if (waitMs) o.wait_ms = Math.max(0, Math.min(Math.floor(waitMs), 2 ** 31));
  return te.encode(JSON.stringify(o));
}

/**
 * parseReceiptsReply decodes a batched receipt reply and checks that its
 * members fit its status (wire.ParseReceiptsReply): {status ("ok" or
 * "error"), checkpoint (the note every "ok" event's proof leads to), code,
 * reason, state ({decided, last}, with an "unknown" event, or null),
 * events: [{id, status ("ok", "pending", "rejected", "unknown"), index
 * (BigInt, of ok and of a durable pending event; else null), proof
 * (32-byte hashes, of ok), code, reason}]}. It does not check the proofs:
 * the Client does, each against its own bytes of the event.
 */
export function parseReceiptsReply(bytes) {
  const h = parseStateReply(bytes, "events", RECEIPT_BATCH_VERSION, "a batched receipt reply is of ", "a batched receipt reply", MAX_RECEIPT_BATCH);
  if (h.o === null) return h.r;
  const { o, r, bad } = h;
  let ok = false, unknown = false;
  o.events.forEach(function (e, i) {
    const at = "events[" + i + "]";
    if (e === null || typeof e !== "object" || Array.isArray(e)) bad(at + " is not an object");
    for (const k of Object.keys(e)) if (["code", "id", "index", "proof", "reason", "status"].indexOf(k) < 0) bad(at + ": unknown member " + JSON.stringify(k));
    if (typeof e.id !== "string" || !EVENT_ID.test(e.id)) bad(at + ": id");
    if (e.reason !== undefined && (typeof e.reason !== "string" || te.encode(e.reason).length > MAX_STATUS_REASON)) bad(at + ": reason");
    if (e.code !== undefined && typeof e.code !== "string") bad(at + ": code");
    if (e.index !== undefined && !isUint(e.index)) bad(at + ": index");
    const s = { id: e.id, status: e.status, index: e.index === undefined ? null : BigInt(e.index), proof: [], code: e.code || "", reason: e.reason || "" };
    if (e.proof !== undefined) {
      if (!Array.isArray(e.proof) || e.proof.length === 0 || e.proof.length > 64 || e.status !== "ok") bad(at + ": a proof, not empty, is in an event of status ok only");
      for (const x of e.proof) {
        const b = typeof x === "string" && x.length === 44 ? b64canonical(x) : null;
        if (!b || b.length !== 32) bad(at + ": hash " + JSON.stringify(x) + " is not standard base64 of 32 bytes");
        s.proof.push(b);
      }
    }
    switch (s.status) {
      case "ok":
        if (s.index === null || s.code !== "" || s.reason !== "") bad(at + ": status ok needs index (and its proof) only");
        ok = true;
        break;
      case "pending":
        if (s.code !== "" || s.reason !== "") bad(at + ": status pending carries no code or reason");
        break;
      case "unknown":
        if (s.index !== null || s.code !== "" || s.reason !== "") bad(at + ": status unknown carries nothing");
        unknown = true;
        break;
      case "rejected":
        if (s.index !== null) bad(at + ": status rejected carries no index");
        if (!CODE.test(s.code)) bad(at + ": code " + JSON.stringify(s.code));
        break;
      default:
        bad(at + ": unknown status " + JSON.stringify(s.status));
    }
    r.events.push(s);
  });
  if (ok !== (r.checkpoint !== "")) bad("the checkpoint comes with an event of status ok, and only with one");
  if (r.state !== null && !unknown) bad("decided and last come with an event of status unknown only");
  return r;
}

/** MESSAGE_STATUS_VERSION is the version of message status requests (wire.MessageStatusVersion, docs/NATS.md §5, "Following per message"). */
export const MESSAGE_STATUS_VERSION = 4;
/** MAX_STATUS_MESSAGES is the most messages one message status request asks about (wire.MaxStatusMessages). */
export const MAX_STATUS_MESSAGES = 256;

/**
 * formatMessageStatusRequest encodes a message status request about
 * messages [{seq, sha256}] (1…MAX_STATUS_MESSAGES): each message's stream
 * sequence (its publish ack's, not 0) and the SHA-256 of its payload in
 * standard base64.
 */
export function formatMessageStatusRequest(messages) {
  if (!Array.isArray(messages) || messages.length === 0 || messages.length > MAX_STATUS_MESSAGES) {
    throw new WireError("a message status request asks about 1…" + MAX_STATUS_MESSAGES + " messages, not " + (Array.isArray(messages) ? messages.length : messages));
  }
  const ms = messages.map(function (m) {
    if (!isUint(m.seq) || m.seq === 0) throw new WireError("stream sequence " + m.seq);
    if (typeof m.sha256 !== "string" || m.sha256.length !== 44 || !b64canonical(m.sha256)) throw new WireError("sha256 " + JSON.stringify(m.sha256) + " is not standard base64 of 32 bytes");
    return { seq: m.seq, sha256: m.sha256 };
  });
  return te.encode(JSON.stringify({ messages: ms, v: MESSAGE_STATUS_VERSION }));
}

/**
 * parseMessageStatusReply decodes a message status reply and checks that
 * its members fit its status (wire.ParseMessageStatusReply): {status ("ok"
 * or "error"), checkpoint, code, reason, state ({decided, last} or null),
 * messages: [{seq, status ("logged", "appended", "mixed", "unknown"),
 * index (BigInt, of logged and appended; else null), events (0 but for
 * logged and appended)}]}.
 */
export function parseMessageStatusReply(bytes) {
  const h = parseStateReply(bytes, "messages", MESSAGE_STATUS_VERSION, "a message status reply is of version ", "a message status reply", MAX_STATUS_MESSAGES);
  if (h.o === null) return h.r;
  const { o, r, bad } = h;
  let logged = false;
  o.messages.forEach(function (m, i) {
    if (m === null || typeof m !== "object" || Array.isArray(m)) bad("messages[" + i + "] is not an object");
    for (const k of Object.keys(m)) if (["events", "index", "seq", "status"].indexOf(k) < 0) bad("messages[" + i + "]: unknown member " + JSON.stringify(k));
    if (!isUint(m.seq) || m.seq === 0) bad("messages[" + i + "]: seq");
    if (m.index !== undefined && !isUint(m.index)) bad("messages[" + i + "]: index");
    if (m.events !== undefined && !isUint(m.events)) bad("messages[" + i + "]: events");
    const s = { seq: m.seq, status: m.status, index: m.index === undefined ? null : BigInt(m.index), events: m.events || 0 };
    switch (s.status) {
      case "logged": case "appended":
        if (s.index === null || s.events < 1 || s.events > MAX_BATCH_EVENTS) bad("messages[" + i + "]: status " + s.status + " needs an index and 1…" + MAX_BATCH_EVENTS + " events");
        logged = logged || s.status === "logged";
        break;
      case "mixed": case "unknown":
        if (s.index !== null || s.events !== 0) bad("messages[" + i + "]: status " + s.status + " carries no index or events");
        break;
      default:
        bad("messages[" + i + "]: unknown status " + JSON.stringify(s.status));
    }
    r.messages.push(s);
  });
  if (logged && r.checkpoint === "") bad("a logged message without the checkpoint that covers it");
  return r;
}

/**
 * lost reports whether an event that the ledger holds no record of, whose
 * message had stream sequence seq, is lost by the stream's state {decided,
 * last}: decided > seq, or last < seq and last < decided (the Go SDK's
 * wire.StreamState.Lost; docs/NATS.md §5, "Resending"). It is the rule for
 * publishing an event again.
 */
export function lost(state, seq) {
  return seq < state.decided || (state.last < seq && state.last < state.decided);
}

/** parseRejection decodes a rejection announced on R.rejected.E: {code, id, msg_id, part, reason, seq, sha256}. */
export function parseRejection(bytes) {
  const o = parseObject(bytes, ["code", "id", "msg_id", "part", "reason", "seq", "sha256"]);
  const bad = function (why) { throw new WireError("malformed zarlog wire message: " + why); };
  if (typeof o.code !== "string" || !CODE.test(o.code)) bad("code");
  if (typeof o.reason !== "string" || o.reason.length > 4096) bad("reason");
  if (!isUint(o.seq)) bad("seq");
  if (typeof o.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(o.sha256)) bad("sha256");
  if (o.part !== undefined && (!isUint(o.part) || o.part >= MAX_BATCH_EVENTS)) bad("part");
  if (o.id !== undefined && (typeof o.id !== "string" || o.id.length > 128)) bad("id");
  return { code: o.code, id: o.id || "", msgId: o.msg_id || "", part: o.part || 0, reason: o.reason, seq: o.seq, sha256: o.sha256 };
}

// eventQueries checks a request's events (an id each, and a stream
// sequence if not 0) and returns them as the request carries them.
function eventQueries(events) {
  return events.map(function (e) {
    checkEventID(e.id);
    const o = { id: e.id };
    if (e.seq) {
      if (!isUint(e.seq)) throw new WireError("seq " + e.seq + " of event " + e.id);
      o.seq = e.seq;
    }
    return o;
  });
}
