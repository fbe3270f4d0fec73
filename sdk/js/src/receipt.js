// Receipts (the Go SDK's sdk/receipt.go): the ledger's promise about one
// event, as a C2SP tlog-proof@v1 of it (https://c2sp.org/tlog-proof): the
// event's leaf bytes, its leaf index, its inclusion proof and the signed
// checkpoint the proof leads to. It is checked with zarlog-verify's own
// code: its tlog-proof parser, its RFC 6962 proofs, its signed notes and
// its checkReceipt, the function a player's app runs.

import { eq } from "zarlog-verify/src/bytes.js";
import { parseSignedCheckpoint, parseLogKey, openNote } from "zarlog-verify/src/note.js";
import { proofLen, inclusionRoot } from "zarlog-verify/src/merkle.js";
import { parseTlogProof } from "zarlog-verify/src/tlog.js";
import { render } from "zarlog-verify/src/render.js";
import { catalog } from "zarlog-verify/src/messages.js";
import { checkReceipt as verifyReceipt } from "zarlog-verify/src/app.js";

const te = new TextEncoder();
const HEADER = "c2sp.org/tlog-proof@v1";

/** A BadReceiptError: the receipt does not prove the event (the Client never returns such a receipt). */
export class BadReceiptError extends Error {
  constructor(message) { super(message); this.name = "BadReceiptError"; this.code = "bad-receipt"; }
}

function b64(b) { return Buffer.from(b).toString("base64"); }

/**
 * A Receipt is a tlog-proof of one event: eventId, extra (the event's
 * bytes), index (a BigInt), proof (32-byte hashes from the leaf's sibling
 * up) and checkpoint (the signed checkpoint note's text). signatureChecked
 * says whether the log's signature was checked against the log's key.
 */
export class Receipt {
  constructor(eventId, extra, index, proof, checkpoint) {
    this.eventId = eventId;
    this.extra = extra;
    this.index = BigInt(index);
    this.proof = proof;
    this.checkpoint = checkpoint;
    this.signatureChecked = false;
  }

  /**
   * format returns the tlog-proof file (a string): byte for byte the Go
   * SDK's Receipt.Format, what `zarlog-verify` and the JavaScript package's
   * checkReceipt check, and what the log serves at
   * /games/<game>/proofs/<seq>.tlog-proof for the same checkpoint.
   */
  format() {
    let s = HEADER + "\n";
    if (this.extra && this.extra.length > 0) s += "extra " + b64(this.extra) + "\n";
    s += "index " + this.index.toString() + "\n";
    for (const h of this.proof) s += b64(h) + "\n";
    return s + "\n" + this.checkpoint;
  }

  /**
   * check checks the receipt for leaf (the event's bytes as the caller
   * knows them): the leaf is the receipt's, it is at index in the tree of
   * the checkpoint's size, and, with logKey (the log's verifier key), the
   * checkpoint is signed by the log. Without logKey only the inclusion
   * proof is checked against the checkpoint's root. It resolves to the
   * checkpoint {origin, size, root} or throws a BadReceiptError.
   */
  async check(leaf, logKey, notes) {
    const bytes = typeof leaf === "string" ? te.encode(leaf) : leaf;
    if (!bytes || bytes.length === 0) throw new BadReceiptError("receipt of " + this.eventId + ": no event bytes to check it against");
    if (this.extra && this.extra.length > 0 && !eq(this.extra, bytes)) {
      throw new BadReceiptError("receipt of " + this.eventId + ": it holds other bytes than the event's (" + this.extra.length + " bytes, the event " + bytes.length + ")");
    }
    let cp = parseSignedCheckpoint(this.checkpoint);
    if (!cp) throw new BadReceiptError("receipt of " + this.eventId + ": its checkpoint is not a signed checkpoint note");
    if (logKey && notes) {
      // The Client's path: the note's signature checked once per note
      // (CheckedNotes), the leaf and the inclusion proof every time.
      try {
        cp = await notes.open(this.checkpoint, logKey);
      } catch (e) {
        throw new BadReceiptError("receipt of " + this.eventId + ": " + e.message);
      }
      await this.checkInclusion(bytes, cp);
      this.signatureChecked = true;
    } else if (logKey) {
      const r = await verifyReceipt(te.encode(this.format()), logKey, null, bytes);
      if (!r.ok) throw new BadReceiptError("receipt of " + this.eventId + ": " + render(r.message, catalog, 0));
      this.signatureChecked = true;
    } else {
      await this.checkInclusion(bytes, cp);
    }
    return { origin: cp.origin, size: cp.size, root: cp.root };
  }

  // checkInclusion checks that leaf's hash is at the receipt's index in the
  // tree of cp ({size, root}) by its proof, or throws a BadReceiptError.
  async checkInclusion(leaf, cp) {
    if (this.index >= cp.size || this.proof.length !== proofLen(this.index, cp.size) ||
      !eq(await inclusionRoot(this.index, cp.size, leaf, this.proof), cp.root)) {
      throw new BadReceiptError("receipt of " + this.eventId + ": the inclusion proof of leaf " + this.index + " does not lead to the root of the checkpoint of size " + cp.size);
    }
  }
}

/** How many checkpoint notes a CheckedNotes remembers (the Go SDK's checkedNotesSize). */
export const CHECKED_NOTES_SIZE = 8;

/**
 * CheckedNotes are the checkpoint notes a Client opened with its log key
 * (the Go SDK's checkedNotes): a ledger signs a checkpoint every 100 ms or
 * so, and every receipt and status reply it serves meanwhile carries the
 * same note, text for text, so its signature is checked once. The last
 * CHECKED_NOTES_SIZE notes that opened are remembered, with the checkpoint
 * they opened to, and a note being opened is shared by the calls that ask
 * for it meanwhile (the receipts of one batched reply are checked
 * together): they await the one check. A note that fails is forgotten at
 * once: the next call checks it again. Only the very same text is reused;
 * anything else, the same checkpoint under another signature included, is
 * checked on its own.
 */
export class CheckedNotes {
  constructor() {
    this.notes = new Map(); // note text → Promise of its checkpoint, in insertion order
    this.keys = new Map(); // log key text → Promise of the parsed key
  }

  /**
   * open resolves to the checkpoint ({origin, size, root, note}) the signed
   * checkpoint note text opens to with logKey (a verifier key's text), or
   * rejects with an Error saying why it does not: not a signed checkpoint,
   * another origin than the key's name, or no valid signature by the key.
   * Each call gets a copy of its own (its root too): a caller that changes
   * it changes neither what the note is remembered as opening to nor what
   * a later receipt's proof is checked against.
   */
  open(text, logKey) {
    const id = logKey + "\n\n" + text;
    const known = this.notes.get(id);
    if (known) return known.then(structuredClone);
    const p = this.openNow(text, logKey);
    this.notes.set(id, p);
    if (this.notes.size > CHECKED_NOTES_SIZE) this.notes.delete(this.notes.keys().next().value);
    p.catch(() => { if (this.notes.get(id) === p) this.notes.delete(id); });
    return p.then(structuredClone);
  }

  async openNow(text, logKey) {
    let kp = this.keys.get(logKey);
    if (!kp) {
      kp = parseLogKey(logKey);
      this.keys.set(logKey, kp);
    }
    const key = await kp;
    if (!key) throw new Error("the log key " + JSON.stringify(logKey) + " is not an Ed25519 verifier key");
    const cp = parseSignedCheckpoint(text);
    if (!cp) throw new Error("its checkpoint is not a signed checkpoint note");
    if (cp.origin !== key.name) throw new Error("the checkpoint's origin " + JSON.stringify(cp.origin) + " is not the log key's name " + JSON.stringify(key.name));
    if (!(await openNote(cp.note, key))) throw new Error("the checkpoint is not signed by the log's key " + key.name);
    return cp;
  }
}

/**
 * parseReceipt reads a receipt from its tlog-proof file (text or bytes):
 * strictly, with the event's leaf in its extra line, which must be a zarlog
 * event (its id is the receipt's eventId). It checks neither the proof nor
 * the signature: checkReceipt does.
 */
export function parseReceipt(file) {
  const p = parseTlogProof(typeof file === "string" ? te.encode(file) : file);
  if (!p) throw new BadReceiptError("not a C2SP tlog-proof@v1 file");
  if (p.extra.length === 0) throw new BadReceiptError("the tlog-proof has no extra line holding the event");
  let id;
  try {
    id = JSON.parse(new TextDecoder().decode(p.extra)).id;
  } catch (e) {
    id = undefined;
  }
  if (typeof id !== "string") throw new BadReceiptError("its extra line is not an event");
  return new Receipt(id, p.extra, p.index, p.proof, p.checkpoint);
}

/**
 * checkReceipt checks a receipt as a player's app does before it trusts
 * that an event was logged (the Go SDK's CheckReceipt): leaf is the event's
 * bytes as the caller knows them, logKey the log's verifier key (required).
 * It resolves to the checkpoint {origin, size, root} or throws a
 * BadReceiptError.
 */
export async function checkReceipt(receipt, leaf, logKey) {
  if (!logKey) throw new BadReceiptError("receipt of " + receipt.eventId + ": no log key to check its signature");
  return receipt.check(leaf, logKey);
}
