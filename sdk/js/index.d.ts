// Types of zarlog-emitter: log an online backgammon platform's dice in a
// zarlog ledger from Node.js (>= 20), as the Go SDK (package sdk) does.

import type { NatsConnection, ConnectionOptions, Subscription } from "@nats-io/transport-node";

/** 32 bytes: a Uint8Array, or 64 lower-case hex digits. */
export type Bytes32 = Uint8Array | string;
export type Scheme = "tavlarena-v1" | "anchored-v1" | "per-roll-v1";
export type Dice = [number, number];

/** An emitter's event-signing key (loadSigner, parseSignerKey). */
export class Signer {
  /** The emitter id. */
  readonly name: string;
  /** Its verifier key, name+hash+key: the first field of its zarlog serve --emitters line. */
  readonly vkey: string;
  readonly publicKey: Uint8Array;
  /** sign returns the Ed25519 signature of msg. */
  sign(msg: Uint8Array): Uint8Array;
}
export class KeyError extends Error {}
/** parseSignerKey reads a signer key's text (PRIVATE+KEY+name+hash+key) whose name is an emitter id. */
export function parseSignerKey(text: string): Promise<Signer>;
/** loadSigner reads the key file zarlog keygen --emitter wrote (mode 0600: a key others may read is refused). */
export function loadSigner(path: string): Promise<Signer>;
/** readSecretFile reads a key file, refusing one that group or others may read. */
export function readSecretFile(path: string): Promise<Uint8Array>;

export interface DialOptions extends Partial<ConnectionOptions> {
  /** The NATS user nkey seed (SU…) zarlog keygen --emitter wrote next to the key. */
  nkeySeed?: string | Uint8Array;
}
/** dial connects to NATS as emitter: it reconnects forever, and its replies come under _INBOX.<emitter> (docs/NATS.md §7). */
export function dial(url: string | string[], emitter: string, options?: DialOptions): Promise<NatsConnection>;

export interface ClientConfig {
  /** This backend's emitter id. Required. */
  emitter: string;
  /** The subject root; default "zarlog". */
  root?: string;
  /** NATS messages awaiting their JetStream ack at once; default 32. */
  window?: number;
  /**
   * While this many messages await their ack, a message that is not full
   * waits, packing what queues meanwhile, until one is acknowledged or it
   * fills up: a lone event goes at once. Default -1: the window.
   */
  partialFlights?: number;
  /**
   * The most milliseconds a message that is not full waits for more events
   * when the queue runs dry; it waits only while the emitter's recent rate
   * predicts another event within a quarter of it and within what is left
   * of it (each event counted when the application publishes it, not when
   * it is sent), so an emitter below about 4000/linger events a second
   * never waits and a quiet emitter's lone event goes at once. Default 20
   * (DEFAULT_LINGER);
   * 0 or negative: never wait.
   */
  linger?: number;
  /** Most events packed into one message when they queue up; default 256. */
  maxBatchEvents?: number;
  /** A packed message's largest payload; default 256 KiB. */
  maxBatchBytes?: number;
  /** Events accepted and not yet acknowledged before publish waits; default 65536. */
  maxQueued?: number;
  /** Milliseconds one attempt waits for its ack; default 5000. */
  ackTimeout?: number;
  /** Backoff between attempts, in milliseconds; default 25 and 2000. */
  retryMin?: number;
  retryMax?: number;
  /**
   * Milliseconds an out-of-order or unknown-game refusal of the copy receipt() publishes after
   * such a refusal must stand before receipt() rejects with it; default 10000 (a primary fenced
   * by a takeover answers from its own state until it stops).
   */
  orderSettle?: number;
  /** Called with the error of each failed attempt (publishes and receipt requests), for logs. */
  onRetry?: (err: Error) => void;
  /** Called with the id of each event the Client (its follower, or receipt()) publishes again because the stream lost it (docs/NATS.md §5, "Resending"). */
  onResend?: (id: string) => void;
  /**
   * How often, in milliseconds, the Client asks the ledger about the events it holds; default 500
   * (DEFAULT_FOLLOW_INTERVAL). The Client follows its events by default: it holds each one from its
   * acknowledgement until the ledger reports it logged or refused, and publishes again every one the
   * stream lost, with the held events after it under its order key, so events nobody asks a receipt
   * for are resent too (docs/NATS.md §5, "Resending"). Negative turns following off (receipt() still
   * resends the event it waits for).
   */
  followInterval?: number;
  /** Milliseconds after its ack an event is first asked about, and the least pause between two copies (doubling per copy, at most a minute); default 1000. */
  followAfter?: number;
  /** Bounds on the events held and their bytes: publish waits at either; default 1,048,576 and 256 MiB. */
  maxHeld?: number;
  maxHeldBytes?: number;
  /** Called once for each held event the ledger reports refused. */
  onRejected?: (r: { id: string; code: string; reason: string }) => void;
  /**
   * The log's verifier key (the vkey zarlog serve prints): every receipt's checkpoint signature is
   * checked against it. Without it, only each receipt's inclusion proof of the event is checked.
   */
  logKey?: string;
}

/** An event to publish: its id, its canonical bytes, and the key that orders it (the game id). */
export interface Event {
  id: string;
  data: Uint8Array;
  orderKey?: string;
}
/** JetStream's acknowledgement of the message that carried an event: the stream has it (not yet the ledger). */
export interface Ack {
  stream: string;
  seq: number;
  duplicate: boolean;
  events: number;
}
export interface CallOptions {
  /** Ends the call's waiting (the event may still reach the stream; publishing it again is safe). */
  signal?: AbortSignal;
}

/** What a Client's following did: events held now, and counts since it started. */
export interface FollowStats {
  held: number;
  heldBytes: number;
  logged: number;
  rejected: number;
  resent: number;
  /** Status requests sent: about events, and about whole messages (message status protocol 4). */
  requests: number;
  /** Events reported logged by an answer about their message (docs/NATS.md §5, "Following per message"). */
  byMessage: number;
}
/** Given to onRetry once when the ledger does not answer status requests (receipt protocol version 3): the Client then stops following. */
export class FollowUnsupportedError extends Error {
  readonly code: "follow-unsupported";
}
export const DEFAULT_FOLLOW_INTERVAL: number;
/** The client's linger by default, in ms (ClientConfig.linger). */
export const DEFAULT_LINGER: number;
export const DEFAULT_FOLLOW_AFTER: number;

/** A rejection the ledger announced for one of this emitter's events. */
export interface Rejection {
  code: string;
  id: string;
  msgId: string;
  part: number;
  reason: string;
  seq: number;
  sha256: string;
}

/** The transport: publishes one emitter's events over NATS JetStream, in order per order key, and waits for receipts. */
export class Client {
  constructor(nc: NatsConnection, cfg: ClientConfig);
  readonly emitter: string;
  /** publish resolves once JetStream acknowledged the event. */
  publish(ev: Event, options?: CallOptions): Promise<Ack>;
  publishAsync(ev: Event, options?: CallOptions): Promise<Ack>;
  /** flush resolves once every event accepted so far is acknowledged or failed. */
  flush(): Promise<void>;
  /**
   * receipt waits until the event is durable and covered by a signed checkpoint; the receipt is checked
   * against ev.data. It publishes the event again when the ledger's answer shows that the stream lost it
   * after acknowledging it (the ledger read past its message without it), and waits for that copy.
   */
  receipt(ev: Event, ack?: Ack | null, options?: CallOptions): Promise<Receipt>;
  /** The number of copies published again (by the follower and by receipt()) because the stream lost the event. */
  readonly resent?: number;
  /** follow holds ev, published before a restart, as if this Client had published it: it is asked about, and published again if the stream lost it. */
  follow(ev: Event): void;
  /**
   * waitLogged resolves once the ledger has reported every event accepted before the call logged or refused
   * (call it before close); at once when following is off.
   */
  waitLogged(options?: CallOptions): Promise<void>;
  /** The follower's counters. */
  followStats(): FollowStats;
  /** rejections calls handle with every rejection announced for this emitter's events (best effort). */
  rejections(handle: (r: Rejection) => void): Subscription;
  close(): Promise<void>;
}

export class ClosedError extends Error { code: "closed"; }
export class PredecessorError extends Error { code: "predecessor"; }
/** A permanent refusal by NATS or JetStream. */
export class PublishError extends Error { code: string; }
/** The log's stream refused the message: its backlog is at its bound (docs/NATS.md §6). */
export class BacklogError extends PublishError { code: "backlog"; }
/** The ledger refused the event: code is its rejection code (docs/FORMATS.md §1.5). */
export class RejectedError extends Error {
  eventId: string;
  code: string;
  reason: string;
}
export class ReceiptRefusedError extends Error { code: "bad-request"; }
/** A receipt that does not prove its event. */
export class BadReceiptError extends Error { code: "bad-receipt"; }

/** The checkpoint a receipt leads to. */
export interface Checkpoint {
  origin: string;
  size: bigint;
  root: Uint8Array;
}
/** The ledger's receipt of an event: a C2SP tlog-proof of its bytes. */
export class Receipt {
  constructor(eventId: string, extra: Uint8Array, index: bigint | number, proof: Uint8Array[], checkpoint: string);
  readonly eventId: string;
  readonly extra: Uint8Array;
  readonly index: bigint;
  readonly proof: Uint8Array[];
  readonly checkpoint: string;
  /** Whether the log's signature was checked against its key. */
  signatureChecked: boolean;
  /** format returns the tlog-proof file: byte for byte the Go SDK's, what zarlog-verify and checkReceipt check. */
  format(): string;
  check(leaf: Uint8Array | string, logKey: string | null): Promise<Checkpoint>;
}
/** parseReceipt reads a receipt from its tlog-proof file. */
export function parseReceipt(file: string | Uint8Array): Receipt;
/** checkReceipt checks a receipt for the event's bytes against the log's key, as a player's app does. */
export function checkReceipt(receipt: Receipt, leaf: Uint8Array | string, logKey: string): Promise<Checkpoint>;

/** The SDK refused to make an event the ledger would reject: code is the ledger's rejection code. Nothing changed. */
export class RefusedError extends Error {
  code: string;
  field: string;
}
/** The call's event is made and part of the game, but not acknowledged yet: the next call or flushEvents publishes it again. */
export class NotAcknowledgedError extends Error {
  code: string;
  /** For a game's first call (its commit): the game, which exists. */
  game?: TavlarenaGame | AnchoredGame | PerRollMatch;
}
/** The call does not fit the game's state. Nothing changed. */
export class NotNowError extends Error { code: "not-now"; }
/** A new game's settings have "seatNames" and the backend was not told to publish them (publishSeatNames; docs/PRIVACY.md). */
export class SeatNamesError extends Error { code: "seat-names"; }
/** A device's game is not logged. */
export class LocalError extends Error { code: "local"; }

export interface BackendConfig {
  signer: Signer;
  /** The clock; default the real time. */
  now?: () => Date;
  /** n random bytes; default crypto.getRandomValues. Anything else is for tests. */
  rand?: (n: number) => Uint8Array;
  /** Let the first roll go ahead without the commit's receipt (by default it waits for it). */
  skipCommitReceipt?: boolean;
  /**
   * Let a game's settings carry "seatNames", the players' display names the pages show: they go into
   * the public, append-only log for ever (docs/PRIVACY.md). By default such a game is refused.
   */
  publishSeatNames?: boolean;
}

export interface End {
  result: "finished" | "resigned" | "abandoned";
  winner: 0 | 1 | null;
  points: number;
}
export interface Move {
  n: number;
  play: string;
  seat: 0 | 1;
}
/** One roll of a per-game scheme. */
export interface Rolled {
  n: number;
  dice: Dice;
  kind: "opening" | "reroll" | "turn";
  /** The seat that plays it, or -1 (an opening tie; the deciding opening roll under turkish-reroll). */
  seat: number;
  /** The seat that rolls next, or -1 while the opening is undecided. */
  next: number;
  /** The seat that won the opening, or -1. */
  starter: number;
}
export interface GameState {
  scheme: Scheme;
  game: string;
  events: number;
  status: "open" | "ended" | "closed";
  rolls: number;
  moves: number;
  moveOwed: boolean;
  /** The rules engine's position, in a game whose moves are logged. */
  position: string | null;
}

declare class Game {
  readonly id: string;
  readonly scheme: Scheme;
  /** The events JetStream has not acknowledged yet. */
  readonly unacknowledged: number;
  /** The ledger's receipt of the commit: give it to the players' apps before the first roll. */
  commitReceipt(options?: CallOptions): Promise<Receipt>;
  /** The ledger's receipt of event seq. */
  receipt(seq: number, options?: CallOptions): Promise<Receipt>;
  /** Publishes what JetStream has not acknowledged yet. */
  flushEvents(options?: CallOptions): Promise<void>;
  /** The canonical bytes of every event so far (the log's leaves, once logged). */
  events(): Uint8Array[];
  state(): GameState;
  /** The dice-proof-v1 evidence file, once the game is closed. */
  evidence(): Promise<Uint8Array>;
  end(end: End, options?: CallOptions): Promise<void>;
  /** The finished end the board gives, in a game whose moves are logged; null while it is not over. */
  boardEnd(): End | null;
  /** The legal plays of the roll that waits for a move (a game whose moves are logged), or null. */
  legalPlays(): { seat: 0 | 1; dice: Dice; plays: string[] } | null;
  /** Logs seat's play of the roll that waits (in a game whose moves are logged, checked and canonicalized). */
  move(seat: 0 | 1, play: string, options?: CallOptions): Promise<Move>;
}

export class TavlarenaGame extends Game {
  /** The commitment (hex), shown to the players as its seal code before they contribute. */
  readonly commitment: string;
  readonly sealCode: string;
  contribute(seat: 0 | 1, contribution: Bytes32, options?: CallOptions): Promise<void>;
  withheld(): [boolean, boolean];
  roll(options?: CallOptions): Promise<Rolled>;
  reveal(options?: CallOptions): Promise<void>;
}

export class AnchoredGame extends Game {
  readonly fingerprint: string;
  readonly sealCode: string;
  readonly anchor: { chain: string; round: number };
  readonly anchorTime: Date;
  token(seat: 0 | 1, token: string, options?: CallOptions): Promise<void>;
  recordBeacon(src: BeaconSource, options?: CallOptions): Promise<void>;
  roll(options?: CallOptions): Promise<Rolled>;
  reveal(options?: CallOptions): Promise<void>;
}

/** What a player's app receives before a per-roll-v1 roll. */
export interface RollCommitment {
  matchId: string;
  rollId: string;
  commitment: string;
}
/** What a player's app receives after a per-roll-v1 roll. */
export interface RevealedRoll {
  index: number;
  rollId: string;
  seed: string;
  second: string;
  secondFrom: "client" | "server";
  dice: Dice;
  seat: number;
}

export class PerRollMatch extends Game {
  commitRoll(options?: CallOptions): Promise<RollCommitment>;
  clientSecond(second: Bytes32, options?: CallOptions): Promise<void>;
  serverSecond(options?: CallOptions): Promise<void>;
  revealRoll(options?: CallOptions): Promise<RevealedRoll>;
}

export class Backend {
  constructor(client: Client | null, cfg: BackendConfig);
  /** A Backend whose games run on a player's device, against the computer, and publish nothing. */
  static device(cfg: BackendConfig): Backend;
  readonly emitter: string;
  readonly local: boolean;
  newTavlarena(spec: { gameId?: string; seats: [string, string]; settings?: string | Uint8Array | object }, options?: CallOptions): Promise<TavlarenaGame>;
  newAnchored(spec: { gameId?: string; matchId: string; gameNo?: number; settings?: string | Uint8Array | object; rounds?: number }, options?: CallOptions): Promise<AnchoredGame>;
  newPerRoll(spec?: { matchId?: string; settings?: string | Uint8Array | object }, options?: CallOptions): Promise<PerRollMatch>;
}
export const DEFAULT_ANCHOR_ROUNDS: 20;
export function rollSeats(opening: string, rolls: { kind: string; dice: Dice }[]): { plays: number; next: number };

/** A drand quicknet beacon, hex. */
export interface Beacon {
  chain: string;
  round: number;
  signature: string;
  randomness: string;
}
export interface BeaconSource {
  beacon(chain: string, round: number, signal?: AbortSignal): Promise<Beacon>;
}
export class RecordedBeacons implements BeaconSource {
  static create(beacons: Beacon[]): Promise<RecordedBeacons>;
  beacon(chain: string, round: number): Promise<Beacon>;
}
/** The four real quicknet beacons of docs/SCHEMES.md §6 (rounds 8, 10, 123, 657413). */
export function quicknetBeacons(): Promise<RecordedBeacons>;
/** Beacons from drand HTTP relays (api "v2", the default, or "v1"). */
export class Relay implements BeaconSource {
  constructor(urls: string[], api?: "v1" | "v2");
  beacon(chain: string, round: number, signal?: AbortSignal): Promise<Beacon>;
}
export function verifyBeacon(b: Beacon, chain: string, round: number): Promise<void>;
export class BeaconNotYetError extends Error { code: "beacon-not-yet"; }
export class BadBeaconError extends Error { code: "bad-beacon"; }
export class NoBeaconError extends Error { code: "no-beacon"; }

/** The player's check of a per-roll-v1 roll, the moment it is revealed: resolves to the dice. */
export function checkRoll(before: RollCommitment, sent: Bytes32 | null, got: RevealedRoll): Promise<Dice>;
export class RollCheckError extends Error {
  part: "roll-id" | "second" | "commitment" | "dice";
  rollId: string;
  want: string;
  got: string;
}

export function makeEvent(h: { scheme: Scheme; game: string; seq: number; emitter: string; time: bigint }, type: string, body: Map<string, unknown>, signer: Signer | null): { leaf: string; bytes: Uint8Array; ev: unknown };
export function canonicalSettings(settings: string | Uint8Array | object | null | undefined): Map<string, unknown>;
export const SIG_CONTEXT: "zarlog-event-v1\n";
export class Subjects {
  constructor(root?: string);
  events(emitter: string): string;
  rejected(emitter: string): string;
  receipts(emitter: string): string;
  proofs(emitter: string): string;
}
export class WireError extends Error {}
export function checkEmitter(id: string): void;
export function checkEventID(id: string): void;
export const DEFAULT_ROOT: "zarlog";
export const MAX_EVENT_SIZE: 65535;
export const MAX_BATCH_EVENTS: 4096;
