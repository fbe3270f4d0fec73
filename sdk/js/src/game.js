// The game API (the Go SDK's sdk/game.go, tavlarena.go, anchored.go,
// perroll.go): a Backend makes the games of one emitter. Each event is
// built canonically (events.js), applied to the game's state by
// zarlog-verify's own state machine and rules engine exactly as the ledger
// applies it (a backend bug is refused at the source, with the ledger's
// code), signed when it is binding, and published through a Client with
// the game id as order key, each call waiting for JetStream's ack. Seeds,
// ids and server-drawn second numbers come from the injected randomness,
// times from the injected clock; the random bytes are drawn in the Go
// SDK's order, so that for the same inputs the two SDKs make the same
// bytes (TestNodeSDKAgreement).

import { hex, unhex, HEX32 } from "zarlog-verify/src/bytes.js";
import { sha256 } from "zarlog-verify/src/sha256.js";
import { canon } from "zarlog-verify/src/cjson.js";
import { sealCode, tavlarenaCommitment, tavlarenaRoller, anchoredRoller, perRollDice } from "zarlog-verify/src/dice.js";
import { QUICKNET, roundTimeNs } from "zarlog-verify/src/drand.js";
import { formatTime } from "zarlog-verify/src/time.js";
import { apply, replay, Refusal } from "zarlog-verify/src/game.js";
import { evidenceOf, evidenceObject } from "zarlog-verify/src/format.js";
import { render } from "zarlog-verify/src/render.js";
import { catalog } from "zarlog-verify/src/messages.js";
import { Checker } from "zarlog-verify/src/rules/movecheck/checker.js";
import { parseState, PHASE_PLAY, PHASE_OVER } from "zarlog-verify/src/rules/movecheck/state.js";
import { canonicalPlay, legalPlays as legalPlaysOf } from "zarlog-verify/src/rules/play.js";
import { formatPlay } from "zarlog-verify/src/rules/notation.js";
import { outcome } from "zarlog-verify/src/rules/result.js";
import { makeEvent, canonicalSettings, RefusedError } from "./events.js";
import { PredecessorError } from "./client.js";
import { verifyBeacon, BeaconNotYetError } from "./beacon.js";

/** How many rounds after the current one an anchored-v1 game's anchor round is, unless said otherwise (one minute). */
export const DEFAULT_ANCHOR_ROUNDS = 20;
const GENESIS = 1692803367;

/**
 * A NotAcknowledgedError: the call's event is made and is part of the game,
 * but JetStream has not acknowledged it yet (the signal aborted, the Client
 * was closed, the stream's backlog is full: its cause says). The call's
 * other results are valid; flush, or the game's next call, publishes it
 * again (it is deduplicated by id).
 */
export class NotAcknowledgedError extends Error {
  constructor(message, cause) { super(message, { cause: cause }); this.name = "NotAcknowledgedError"; this.code = (cause && cause.code) || "not-acknowledged"; }
}

/** A NotNowError: the call does not fit the game's state. Nothing changed. */
export class NotNowError extends Error {
  constructor(message) { super(message); this.name = "NotNowError"; this.code = "not-now"; }
}

/** A LocalError: a device's game has no ledger (no receipts). */
export class LocalError extends Error {
  constructor(message) { super(message); this.name = "LocalError"; this.code = "local"; }
}

/**
 * A SeatNamesError: a new game's settings have "seatNames", the players'
 * display names, which would be public in the log for ever, and the
 * backend was not told to publish them (cfg.publishSeatNames; the Go SDK's
 * ErrSeatNames, docs/PRIVACY.md). Nothing was made.
 */
export class SeatNamesError extends Error {
  constructor() {
    super("zarlog-emitter: the settings' \"seatNames\" would put the players' display names into the public log for ever; cfg.publishSeatNames allows it (docs/PRIVACY.md)");
    this.name = "SeatNamesError";
    this.code = "seat-names";
  }
}

function nowNs(d) { return BigInt(d.getTime()) * 1000000n; }
function roundAt(d) {
  const s = Math.floor(d.getTime() / 1000);
  return s < GENESIS ? 0 : Math.floor((s - GENESIS) / 3) + 1;
}
function bytes32(x, what) {
  if (typeof x === "string" && HEX32.test(x)) return unhex(x);
  if (x instanceof Uint8Array && x.length === 32) return x;
  throw new TypeError("zarlog-emitter: " + what + " must be 32 bytes (a Uint8Array, or 64 lower-case hex digits)");
}
function uuidString(b) {
  const h = hex(b);
  return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
}

/**
 * rollSeats returns, for a per-game scheme's rolls, the seat that plays the
 * last roll (-1 if nobody does: an opening tie, or the deciding opening roll
 * under turkish-reroll) and the seat that rolls next (-1 while the opening
 * is undecided).
 */
export function rollSeats(opening, rolls) {
  let starter = -1, played = 0, plays = -1;
  for (const r of rolls) {
    plays = -1;
    if (r.kind === "opening") {
      if (r.dice[0] === r.dice[1]) continue;
      starter = r.dice[1] > r.dice[0] ? 1 : 0;
      if (opening === "turkish-reroll") continue;
    }
    if (starter < 0) continue;
    plays = played % 2 === 1 ? 1 - starter : starter;
    played++;
  }
  return { plays: plays, next: plays >= 0 ? 1 - plays : starter };
}

/**
 * A Backend makes the games of one emitter. new Backend(client, cfg)
 * publishes through client (whose emitter must be the signer's name);
 * Backend.device(cfg) publishes nothing: its games run on a player's
 * device, against the computer (their settings must say "opponent":
 * "computer"), and end in the same dice-proof-v1 evidence file. cfg:
 * signer (required: loadSigner or parseSignerKey), now (the clock, a
 * function returning a Date; default the real time), rand (n → n random
 * bytes; default crypto.getRandomValues; anything else is for tests),
 * skipCommitReceipt (let the first roll go ahead without the commit's
 * receipt; by default it waits for it, so that no die is known before the
 * commitment is provably in the log), publishSeatNames (let a game's
 * settings carry "seatNames", the players' display names, which go into
 * the public log for ever; by default such a game is refused with a
 * SeatNamesError, as the Go SDK's GameConfig.PublishSeatNames does; a
 * device's games are not refused).
 */
export class Backend {
  constructor(client, cfg) {
    if (!cfg || !cfg.signer) throw new TypeError("zarlog-emitter: the Backend needs a signer");
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(cfg.signer.name)) throw new TypeError("zarlog-emitter: signer name " + JSON.stringify(cfg.signer.name) + " is not an emitter id");
    if (client && client.emitter !== cfg.signer.name) {
      throw new TypeError("zarlog-emitter: the signer is emitter " + JSON.stringify(cfg.signer.name) + "'s, the client publishes as " + JSON.stringify(client.emitter));
    }
    this.client = client || null;
    this.signer = cfg.signer;
    this.emitter = cfg.signer.name;
    this.now = cfg.now || function () { return new Date(); };
    this.rand = cfg.rand || function (n) { return globalThis.crypto.getRandomValues(new Uint8Array(n)); };
    this.waitReceipt = !!this.client && !cfg.skipCommitReceipt;
    this.publishSeatNames = !!cfg.publishSeatNames;
  }

  /** device returns a Backend whose games run on a player's device and publish nothing. */
  static device(cfg) { return new Backend(null, cfg); }

  /** local reports whether the backend is a device's (its games are not published). */
  get local() { return this.client === null; }

  draw(n, what) {
    const b = this.rand(n);
    if (!(b instanceof Uint8Array) || b.length !== n) throw new Error("zarlog-emitter: drawing " + what + ": the randomness gave no " + n + " bytes");
    return Uint8Array.from(b);
  }

  newUUID(what) {
    const u = this.draw(16, what);
    u[6] = (u[6] & 0x0f) | 0x40;
    u[8] = (u[8] & 0x3f) | 0x80;
    return uuidString(u);
  }

  checkSettings(settings) {
    const s = canonicalSettings(settings);
    if (this.local && s.get("opponent") !== "computer") {
      throw new TypeError('zarlog-emitter: a device game\'s settings must say "opponent": "computer" (they say ' + JSON.stringify(s.get("opponent") || "") + ")");
    }
    if (!this.local && !this.publishSeatNames && s.has("seatNames")) throw new SeatNamesError();
    return s;
  }

  /**
   * newTavlarena starts a tavlarena-v1 game ({gameId (a UUID; default a
   * random one), seats (two different UUIDs), settings}): it draws the seed
   * and logs the commit. The seed stays secret until reveal.
   */
  async newTavlarena(spec, options) {
    const settings = this.checkSettings(spec.settings);
    const id = spec.gameId || this.newUUID("the game id");
    const seed = this.draw(32, "the seed");
    const g = new TavlarenaGame(this, "tavlarena-v1", id, settings);
    g.seed = seed;
    const seats = spec.seats || [];
    const commitment = await tavlarenaCommitment(id, canon(settings), seats.map(String), seed).catch(function () { return new Uint8Array(32); });
    await g.start(new Map([["commitment", hex(commitment)], ["seats", seats.slice()], ["settings", settings]]), options);
    return g;
  }

  /**
   * newAnchored starts an anchored-v1 game ({gameId (default a random
   * UUID), matchId (required), gameNo, settings, rounds}): it draws the
   * seed, names the quicknet round that is rounds (default 20) after the
   * current one, seals the game now and logs the commit.
   */
  async newAnchored(spec, options) {
    const settings = this.checkSettings(spec.settings);
    const id = spec.gameId || this.newUUID("the game id");
    const rounds = spec.rounds || DEFAULT_ANCHOR_ROUNDS;
    const seed = this.draw(32, "the seed");
    const now = this.now();
    const anchor = new Map([["chain", QUICKNET], ["round", roundAt(now) + rounds]]);
    const sealed = BigInt(Math.floor(now.getTime())) * 1000000n;
    const g = new AnchoredGame(this, "anchored-v1", id, settings);
    g.seed = seed;
    g.sealedAt = sealed;
    await g.start(new Map([["anchor", anchor], ["fingerprint", hex(await sha256(seed))], ["gameNo", spec.gameNo || 0],
      ["matchId", spec.matchId], ["sealedAt", formatMs(sealed)], ["settings", settings]]), options);
    return g;
  }

  /** newPerRoll opens a per-roll-v1 match ({matchId (a UUID; default a random one), settings (default {})}): it logs the commit. */
  async newPerRoll(spec, options) {
    const settings = this.checkSettings((spec && spec.settings) || "{}");
    const id = (spec && spec.matchId) || this.newUUID("the match id");
    const m = new PerRollMatch(this, "per-roll-v1", id, settings);
    await m.start(new Map([["settings", settings]]), options);
    return m;
  }
}

function formatMs(ns) { return formatTime(ns, "ms"); }

// A Game is what every scheme's game has: its events, its state as the
// ledger will see it, and its secrets (never logged, never printed).
class Game {
  constructor(b, scheme, id, settings) {
    this.b = b;
    this.id = id;
    this.scheme = scheme;
    this.settings = settings;
    this.evs = []; // the events, as zarlog-verify's parser reads them
    this.leaves = []; // their canonical bytes
    this.acks = []; // the publish ack of each acknowledged event
    this.acked = 0;
    this.st = null; // the game's state (zarlog-verify's replay)
    this.commitReceiptHeld = null;
    this.lock = Promise.resolve();
    Object.defineProperty(this, "secrets", { value: { seed: null, held: [null, null] }, writable: true });
    this.roller = null;
  }

  get seed() { return this.secrets.seed; }
  set seed(s) { this.secrets.seed = s; }

  toString() { return this.scheme + " game " + this.id; }
  toJSON() { return { scheme: this.scheme, game: this.id }; }
  [Symbol.for("nodejs.util.inspect.custom")]() { return this.toString(); }

  // serial runs fn after the game's previous call: each game's calls are
  // serialized, as in Go.
  serial(fn) {
    const run = this.lock.then(fn);
    this.lock = run.then(function () {}, function () {});
    return run;
  }

  env(now) { return { moves: Checker, now: now === undefined ? undefined : now }; }

  // start logs the commit. If it is made but not acknowledged, the
  // NotAcknowledgedError carries the game (error.game): it exists, and its
  // next call or flushEvents publishes the commit again.
  async start(body, options) {
    return this.serial(async () => {
      await this.emit([["commit", body]], options);
    }).catch((e) => {
      if (this.evs.length > 0 && e instanceof NotAcknowledgedError) e.game = this;
      throw e;
    });
  }

  // record makes the game's next event, checks it against the game's
  // history and appends it. It publishes nothing.
  async record(type, body) {
    const seq = this.evs.length;
    const now = this.b.now();
    const t = nowNs(now);
    const m = makeEvent({ scheme: this.scheme, game: this.id, seq: seq, emitter: this.b.emitter, time: t }, type, body, this.b.signer);
    try {
      this.st = await apply(this.st, m.ev, seq, this.env(t));
    } catch (e) {
      if (!(e instanceof Refusal)) throw e;
      this.st = this.evs.length === 0 ? null : await replay(this.evs, this.env());
      throw new RefusedError("zarlog-emitter: game " + this.id + ": " + type + " event " + seq + ": event rejected (" + e.code + "): " + e.field +
        (e.err ? ": " + ruleMessage(e.err) : ""), e.code, e.field, e.err || undefined);
    }
    this.evs.push(m.ev);
    this.leaves.push(m.bytes);
    if (this.b.local) this.acked = this.leaves.length;
    return m;
  }

  // flush publishes the events JetStream has not acknowledged yet, in
  // order, and waits for their acks.
  async flush(options) {
    const signal = options && options.signal;
    while (this.acked < this.leaves.length) {
      const start = this.acked;
      const pending = [];
      for (let i = start; i < this.leaves.length; i++) {
        pending.push(this.b.client.publishAsync({ id: this.id + ":" + i, data: this.leaves[i], orderKey: this.id }, { signal: signal }));
      }
      let retry = false;
      for (const p of pending) {
        try {
          this.acks[this.acked] = await p;
        } catch (e) {
          // An attempt abandoned by an earlier call may still be in flight
          // for this game; its end fails what queued behind it. Send again.
          if (e instanceof PredecessorError && !(signal && signal.aborted)) { retry = true; break; }
          throw new NotAcknowledgedError("zarlog-emitter: game " + this.id + ": publishing event " + this.id + ":" + this.acked + ": " + e.message, e);
        }
        this.acked++;
      }
      if (!retry && this.acked < this.leaves.length) break;
    }
  }

  // emit records events ([type, body] pairs) and publishes them. A
  // NotAcknowledgedError means the events are recorded and not yet
  // acknowledged; any other error means nothing changed.
  async emit(items, options) {
    if (!this.b.local) await this.flush(options);
    const n = this.evs.length;
    for (const [type, body] of items) {
      try {
        await this.record(type, body);
      } catch (e) {
        // Forget what this call recorded: it was never published.
        if (this.evs.length > n) {
          this.evs.length = n;
          this.leaves.length = n;
          this.acked = Math.min(this.acked, n);
          this.st = n === 0 ? null : await replay(this.evs, this.env());
        }
        throw e;
      }
    }
    if (!this.b.local) await this.flush(options);
  }

  async needReceipt(options) {
    if (!this.b.waitReceipt || this.commitReceiptHeld) return;
    await this.commitReceiptLocked(options);
  }

  async commitReceiptLocked(options) {
    if (this.commitReceiptHeld) return this.commitReceiptHeld;
    if (this.b.local) throw new LocalError("zarlog-emitter: game " + this.id + ": a device game is not logged");
    await this.flush(options);
    try {
      this.commitReceiptHeld = await this.b.client.receipt({ id: this.id + ":0", data: this.leaves[0] }, this.acks[0], options);
    } catch (e) {
      e.message = "zarlog-emitter: game " + this.id + ": receipt of the commit: " + e.message;
      throw e;
    }
    return this.commitReceiptHeld;
  }

  /**
   * commitReceipt resolves to the ledger's receipt for the game's commit (a
   * Receipt: format() is its tlog-proof file), asking the ledger if the
   * game does not hold it yet. Hand it to the players' apps before the
   * first roll: it proves the commitment was logged before any die was
   * known (they check it with checkReceipt, or zarlog-verify's). A
   * RejectedError means the ledger refused the commit.
   */
  commitReceipt(options) { return this.serial(() => this.commitReceiptLocked(options)); }

  /** receipt resolves to the ledger's receipt of the game's event seq, after publishing what is not acknowledged yet. */
  async receipt(seq, options) {
    const ev = await this.serial(async () => {
      if (!(seq >= 0 && seq < this.evs.length)) throw new RangeError("zarlog-emitter: game " + this.id + " has " + this.evs.length + " events, no seq " + seq);
      if (this.b.local) throw new LocalError("zarlog-emitter: game " + this.id + ": a device game is not logged");
      if (seq === 0 && this.commitReceiptHeld) return null;
      await this.flush(options);
      return { id: this.id + ":" + seq, data: this.leaves[seq], ack: this.acks[seq] };
    });
    if (ev === null) return this.commitReceiptHeld;
    return this.b.client.receipt(ev, ev.ack, options); // the game goes on meanwhile
  }

  /** flush publishes every event JetStream has not acknowledged yet (after a NotAcknowledgedError), in order. */
  flushEvents(options) { return this.serial(() => this.b.local ? undefined : this.flush(options)); }

  /** leaves returns the canonical bytes of every event so far, in seq order (the log's leaves, once logged). */
  events() { return this.leaves.slice(); }

  /** unacknowledged is the number of the game's events JetStream has not acknowledged yet. */
  get unacknowledged() { return this.leaves.length - this.acked; }

  /**
   * state returns what the game's state says: {status ("open", "ended",
   * "closed"), events, rolls, moves, moveOwed, position (the rules
   * engine's, in a game whose moves are logged)}.
   */
  state() {
    const g = this.st;
    return { scheme: this.scheme, game: this.id, events: this.evs.length,
      status: !g ? "open" : g.closed ? "closed" : g.end ? "ended" : "open",
      rolls: g ? (this.scheme === "per-roll-v1" ? g.records.length : g.rolls.length) : 0,
      moves: g ? g.moves.length : 0, moveOwed: g ? g.moveOwed : false, position: g ? g.position : null };
  }

  /**
   * evidence resolves to the game's dice-proof-v1 evidence file (canonical
   * JSON, bytes) once the game is closed: what a player downloads and
   * zarlog-verify checks; byte for byte the Go SDK's Evidence.
   */
  async evidence() {
    return this.serial(async () => {
      if (!this.st || !this.st.closed) throw new NotNowError("zarlog-emitter: game " + this.id + ": the evidence file exists once the game is closed");
      const r = evidenceOf(this.st);
      if (r.err) throw new Error("zarlog-emitter: game " + this.id + ": " + render(r.err, catalog, 0));
      return new TextEncoder().encode(canon(evidenceObject(r.ev)));
    });
  }

  /**
   * end logs the game's end ({result: "finished" | "resigned" | "abandoned",
   * winner: 0 | 1 | null, points}). A finished end of a game whose moves
   * are logged must be the one the board gives (boardEnd).
   */
  end(end, options) {
    return this.serial(() => this.emit([["end", new Map([["points", end.points || 0], ["result", end.result],
      ["winner", end.winner === undefined ? null : end.winner]])]], options));
  }

  /**
   * boardEnd returns, for a game whose moves are logged, the finished end
   * the board gives once the game is over on it ({result: "finished",
   * winner, points}; a plakoto draw has winner null and 0 points), or null
   * while it is not over or the moves are not logged. In backgammon with
   * the doubling cube, multiply the points by the cube's value.
   */
  boardEnd() {
    const g = this.st;
    if (!g || !g.movesLogged || !g.position) return null;
    const s = parseState(g.position);
    if (s.phase !== PHASE_OVER) return null;
    const o = outcome(s.variant, s.position);
    if (!o.over) return null;
    if (o.result.winner < 0) return { result: "finished", winner: null, points: 0 };
    return { result: "finished", winner: o.result.winner, points: o.result.multiplier };
  }

  /**
   * move logs the checker play of the roll that waits for one, by seat. In
   * a game whose moves are logged the play may be written in any spelling
   * the rules engine reads: it is checked against the position and logged
   * in its canonical text, which move resolves to ({n, play, seat}); an
   * illegal play is refused (RefusedError, code illegal-move, its cause the
   * rules engine's IllegalMoveError naming the rule).
   */
  move(seat, play, options) {
    return this.serial(async () => {
      const m = this.moveOf(seat, play);
      await this.emit([["move", new Map([["n", m.n], ["play", m.play], ["seat", m.seat]])]], options);
      return m;
    });
  }

  /**
   * legalPlays returns, in a game whose moves are logged, the seat on turn
   * and the legal plays of the roll that waits for its move, in canonical
   * text ({seat, dice, plays}; plays is ["-"] when no checker can move), or
   * null when no roll waits for one.
   */
  legalPlays() {
    const g = this.st;
    if (!g || !g.movesLogged || !g.position) return null;
    const s = parseState(g.position);
    if (s.phase !== PHASE_PLAY) return null;
    const plays = legalPlaysOf(s.variant, s.position, s.seat, s.dice) || [];
    return { seat: s.seat, dice: s.dice.slice(), plays: plays.length > 0 ? plays.map(formatPlay) : ["-"] };
  }

  moveOf(seat, play) {
    const g = this.st;
    if (!g) throw new NotNowError("zarlog-emitter: game " + this.id + ": no roll yet");
    if (g.movesLogged) {
      const s = g.position ? parseState(g.position) : null;
      if (!s || s.phase !== PHASE_PLAY) throw new NotNowError("zarlog-emitter: game " + this.id + ": no roll waits for a move");
      if (seat !== s.seat) {
        throw new NotNowError("zarlog-emitter: game " + this.id + ": roll " + s.n + " (" + s.dice[0] + "-" + s.dice[1] + ") is seat " + s.seat + "'s to play, not seat " + seat + "'s");
      }
      let c;
      try {
        c = canonicalPlay(s.variant, s.position, seat, s.dice, play);
      } catch (e) {
        throw new RefusedError("zarlog-emitter: game " + this.id + ": move " + JSON.stringify(play) + " of seat " + seat + " with " + s.dice[0] + "-" + s.dice[1] +
          " (roll " + s.n + "): refused by the game's rules: " + e.message, "illegal-move", "body.play", e);
      }
      return { n: s.n, play: c, seat: seat };
    }
    if (this.scheme !== "per-roll-v1") {
      if (g.rolls.length === 0) throw new NotNowError("zarlog-emitter: game " + this.id + ": no roll yet");
      const n = g.rolls.length - 1;
      const plays = rollSeats(g.opening, g.rolls).plays;
      if (plays !== seat) throw new NotNowError("zarlog-emitter: game " + this.id + ": roll " + n + " is played by seat " + plays + ", not seat " + seat);
      return { n: n, play: play, seat: seat };
    }
    if (g.records.length === 0) throw new NotNowError("zarlog-emitter: game " + this.id + ": no roll revealed yet");
    return { n: g.records.length - 1, play: play, seat: seat };
  }

  // roll logs a per-game scheme's next roll.
  roll(options) {
    return this.serial(async () => {
      if (!this.roller) {
        const what = this.scheme === "anchored-v1" ? "both tokens and the beacon" : "both contributions";
        throw new NotNowError("zarlog-emitter: game " + this.id + ": no roll before " + what + " are logged");
      }
      if (!this.b.local) await this.flush(options);
      await this.needReceipt(options);
      const g = this.st;
      const n = g.rolls.length;
      const dice = await this.roller(n);
      await this.record("roll", new Map([["dice", dice], ["kind", g.seq.want], ["n", n]]));
      const rs = rollSeats(g.opening, this.st.rolls);
      const out = { n: n, dice: dice, kind: this.st.rolls[n].kind, seat: rs.plays, next: rs.next, starter: this.st.seq.starter };
      await this.publishRecorded(options);
      return out;
    });
  }

  async publishRecorded(options) {
    if (this.b.local) return;
    try {
      await this.flush(options);
    } catch (e) {
      if (e instanceof NotAcknowledgedError) throw e;
      throw new NotAcknowledgedError("zarlog-emitter: game " + this.id + ": " + e.message, e);
    }
  }

  // reveal logs the seed: a per-game scheme's last event, after its end.
  reveal(options) {
    return this.serial(() => this.emit([["reveal", new Map([["seed", hex(this.seed)]])]], options));
  }
}

function ruleMessage(e) { return e && e.message ? e.message : String(e); }

/**
 * A TavlarenaGame is one tavlarena-v1 game (docs/SCHEMES.md §2): the
 * backend draws the seed and logs the commitment, both players contribute
 * 32 random bytes (the first withheld until both have arrived), every roll
 * comes from the seed and both contributions, and the seed is revealed at
 * the end. Its life: newTavlarena, contribute for each seat, then roll and
 * move, end, reveal.
 */
export class TavlarenaGame extends Game {
  /** commitment is the game's commitment (hex), which players see before they contribute (as its seal code). */
  get commitment() { return this.evs[0].body.commitment; }
  /** sealCode is the commitment's seal code, such as "5CJ3-5ZCZ". */
  get sealCode() { return sealCode(unhex(this.commitment)); }

  /**
   * contribute takes seat's 32-byte contribution. The first to arrive is
   * withheld until the other seat's has arrived too; then both are logged
   * together, seat 0's first. A seat contributes once.
   */
  contribute(seat, contribution, options) {
    return this.serial(async () => {
      const c = bytes32(contribution, "the contribution");
      if (seat !== 0 && seat !== 1) throw new NotNowError("zarlog-emitter: game " + this.id + ": seat " + seat);
      const held = this.secrets.held;
      if (this.st.contributed[seat] || held[seat]) throw new NotNowError("zarlog-emitter: game " + this.id + ": seat " + seat + " has contributed already");
      if (!held[1 - seat]) {
        if (!this.b.local) await this.flush(options);
        held[seat] = Uint8Array.from(c);
        return;
      }
      const both = [];
      both[seat] = c;
      both[1 - seat] = held[1 - seat];
      let err = null;
      try {
        await this.emit([["contribution", new Map([["contribution", hex(both[0])], ["seat", 0]])],
          ["contribution", new Map([["contribution", hex(both[1])], ["seat", 1]])]], options);
      } catch (e) {
        err = e;
      }
      if (this.st.contributed[0] && this.st.contributed[1]) { // recorded, even if not acknowledged yet
        this.secrets.held = [null, null];
        this.roller = await tavlarenaRoller({ seed: this.seed, gameId: this.id, contributions: both });
      }
      if (err) throw err;
    });
  }

  /** withheld reports which seats' contributions have arrived and are withheld. */
  withheld() { return [this.secrets.held[0] !== null, this.secrets.held[1] !== null]; }

  /**
   * roll logs the game's next roll and resolves to it: {n, dice, kind,
   * seat (who plays it, -1 if nobody), next (who rolls next, -1 while the
   * opening is undecided), starter}. The first roll waits for the commit's
   * receipt unless the backend skips it.
   */
  roll(options) { return super.roll(options); }
}

/**
 * An AnchoredGame is one anchored-v1 game (docs/SCHEMES.md §3): the
 * backend draws the seed and logs its fingerprint with a drand round that
 * does not exist yet; the players add tokens while it does not; the round's
 * beacon goes into every roll with the seed and the tokens; the seed is
 * revealed at the end. Its life: newAnchored, token for each seat,
 * recordBeacon once the round exists, then roll and move, end, reveal.
 */
export class AnchoredGame extends Game {
  /** fingerprint is SHA-256 of the seed (hex), which players see before they choose their tokens. */
  get fingerprint() { return this.evs[0].body.fingerprint; }
  /** sealCode is the fingerprint's seal code. */
  get sealCode() { return sealCode(unhex(this.fingerprint)); }
  /** anchor is the drand round the game is anchored to: {chain, round}. */
  get anchor() { return { chain: this.evs[0].body.anchor.chain, round: this.evs[0].body.anchor.round }; }
  /** anchorTime is when the anchor round is published (a Date): tokens before it, the beacon from it on. */
  get anchorTime() { return new Date(Number(roundTimeNs(this.anchor.round) / 1000000n)); }

  /** token logs seat's token (1 to 256 bytes of UTF-8), which must come before the anchor round exists. */
  token(seat, token, options) {
    return this.serial(() => this.emit([["contribution", new Map([["seat", seat], ["token", token]])]], options));
  }

  /**
   * recordBeacon fetches the anchor round's beacon from src (a beacon
   * source: quicknetBeacons, RecordedBeacons, Relay), verifies it against
   * the pinned quicknet chain and logs it. Before the round's time (by the
   * backend's clock) it throws a BeaconNotYetError without asking src.
   */
  recordBeacon(src, options) {
    return this.serial(async () => {
      const g = this.st;
      if (!g.contributed[0] || !g.contributed[1]) {
        throw new NotNowError("zarlog-emitter: game " + this.id + ": the beacon comes after both tokens (seat 0: " + g.contributed[0] + ", seat 1: " + g.contributed[1] + ")");
      }
      if (g.beacon) throw new NotNowError("zarlog-emitter: game " + this.id + ": the beacon is logged already");
      const a = this.anchor;
      const now = this.b.now();
      if (roundTimeNs(a.round) > nowNs(now)) {
        throw new BeaconNotYetError("zarlog-emitter: game " + this.id + ": round " + a.round + " is due at " + formatTime(roundTimeNs(a.round)) +
          ", it is " + formatTime(nowNs(now) / 1000000000n * 1000000000n));
      }
      if (!this.b.local) await this.flush(options);
      const bc = await src.beacon(a.chain, a.round, options && options.signal);
      await verifyBeacon(bc, a.chain, a.round);
      let err = null;
      try {
        await this.emit([["beacon", new Map([["chain", bc.chain], ["randomness", bc.randomness], ["round", bc.round], ["signature", bc.signature]])]], options);
      } catch (e) {
        err = e;
      }
      if (this.st.beacon) {
        const c = this.evs[0].body;
        this.roller = await anchoredRoller({ seed: this.seed, matchId: c.matchId, gameNo: c.gameNo, tokens: this.st.tokens,
          anchor: { chain: unhex(bc.chain), round: bc.round, randomness: unhex(bc.randomness) } });
      }
      if (err) throw err;
    });
  }
}

/**
 * A PerRollMatch is one per-roll-v1 match (docs/SCHEMES.md §4): before each
 * roll the backend draws a fresh seed and logs its commitment; a second
 * number is then made (by the player's app in a live match, by the server
 * in a correspondence match); the seed is revealed with the dice, and the
 * player's app checks them at once (checkRoll). Its life: newPerRoll, then
 * for every roll commitRoll, clientSecond or serverSecond, revealRoll (and
 * move), and end.
 */
export class PerRollMatch extends Game {
  /**
   * commitRoll draws the next roll's seed and id and logs the commitment to
   * the seed; send the resolved {matchId, rollId, commitment (hex)} to the
   * player's app before the roll. The match's first commitRoll waits for
   * the commit's receipt unless the backend skips it.
   */
  commitRoll(options) {
    return this.serial(async () => {
      if (this.st.pending) throw new NotNowError("zarlog-emitter: match " + this.id + ": roll " + this.st.pending.rollId + " is pending");
      if (!this.b.local) await this.flush(options);
      await this.needReceipt(options);
      const rollId = this.b.newUUID("the roll id");
      const seed = this.b.draw(32, "the roll's seed");
      const commitment = hex(await sha256(seed));
      await this.record("roll-commit", new Map([["commitment", commitment], ["rollId", rollId]]));
      this.seed = seed;
      const out = { matchId: this.id, rollId: rollId, commitment: commitment };
      await this.publishRecorded(options);
      return out;
    });
  }

  /** clientSecond logs the second number the player's app sent for the pending roll (a live match). */
  clientSecond(second, options) { return this.second("client", bytes32(second, "the second number"), options); }

  /** serverSecond draws the pending roll's second number itself and logs it (a correspondence match). */
  serverSecond(options) { return this.second("server", null, options); }

  second(from, second, options) {
    return this.serial(async () => {
      const p = this.st.pending;
      if (!p || p.stage !== 1) throw new NotNowError("zarlog-emitter: match " + this.id + ": no committed roll waits for its second number");
      const s = second || this.b.draw(32, "the second number");
      await this.emit([["roll-second", new Map([["rollId", p.rollId], ["second", hex(s)], ["secondFrom", from]])]], options);
    });
  }

  /**
   * revealRoll logs the pending roll's seed with the dice it gives, and
   * resolves to what the player's app needs to check them (checkRoll):
   * {index, rollId, seed, second, secondFrom, dice, seat (who plays it in a
   * match whose moves are logged, else -1)}.
   */
  revealRoll(options) {
    return this.serial(async () => {
      const p = this.st.pending;
      if (!p || p.stage !== 2) throw new NotNowError("zarlog-emitter: match " + this.id + ": no roll waits for its reveal (commit it and take its second number first)");
      if (!this.seed || hex(await sha256(this.seed)) !== p.commitment) throw new Error("zarlog-emitter: match " + this.id + ": the pending roll's seed does not give its commitment");
      if (!this.b.local) await this.flush(options);
      const seed = this.seed;
      const pending = { rollId: p.rollId, second: p.second, secondFrom: p.secondFrom };
      const dice = await perRollDice(this.id, { rollId: p.rollId, seed: seed, second: unhex(p.second) });
      await this.record("roll-reveal", new Map([["dice", dice], ["rollId", p.rollId], ["seed", hex(seed)]]));
      this.seed = null;
      const out = { index: this.st.records.length - 1, rollId: pending.rollId, seed: hex(seed), second: pending.second,
        secondFrom: pending.secondFrom, dice: dice, seat: -1 };
      if (this.st.movesLogged && this.st.position) {
        const s = parseState(this.st.position);
        if (s.phase === PHASE_PLAY) out.seat = s.seat;
      }
      await this.publishRecorded(options);
      return out;
    });
  }
}
