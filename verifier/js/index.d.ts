// Types of zarlog-verify, the JavaScript verifier of zarlog proof files.

/** A message of the verifier's catalog: an id and its arguments; render() formats it. */
export interface Message {
  id: string;
  args: Array<string | number | bigint | Message | Message[]>;
}

/** A check's outcome, named as zarlog-verify names it. */
export interface Check {
  name:
    | "format" | "commitment" | "expected-commitment" | "anchor" | "rolls" | "sequence"
    | "log-inclusion" | "log-signature" | "log-order" | "log-agreement" | "log-witnesses"
    | "log-emitter-signatures" | "moves";
  status: "pass" | "fail" | "skipped";
  detail: Message;
  field?: string;
  /** The first wrong roll of a failed rolls (or sequence, commitment) check. */
  roll?: { index: number; n?: number; rollId?: string; claimed?: [number, number]; recomputed?: [number, number] };
  /** The event the rules engine refused, for a failed moves check (Go's MoveRef). */
  move?: { entry: number; seq: number; code: string; rule?: string; n?: number; seat?: number; play?: string; dice?: [number, number] };
  /** Set on a check this package could not make; the report is then no verdict (exit 2), never a pass. */
  browserLimit?: string;
}

/** What verify() resolves to. */
export interface Report {
  scheme: "" | "tavlarena-v1" | "anchored-v1" | "per-roll-v1";
  /** 0 every check passed, 1 the proof is invalid, 2 bad input: zarlog-verify's exit code. */
  exit: 0 | 1 | 2;
  checks: Check[];
  failed: string[];
  /** Checks skipped for want of a key or a policy, or because this package cannot make them. */
  notChecked: string[];
  summary: Message;
  proves?: Message[];
  notProves?: Message[];
  firstWrongRoll: Check["roll"] | null;
  /** A check could not be made here (browserLimit): exit 2, and the summary says so. */
  incomplete: boolean;
  /** The report of a tlog-proof file: the event it proves is in the log. */
  tlogProof?: boolean;
  event?: { index: bigint; leaf: string };
}

export interface VerifyOptions {
  /** The commitment (64 hex digits) or seal code ("XXXX-XXXX") the player saw before the game. */
  expected?: string;
  /** The log's C2SP signed-note verifier key (name+hash+key). */
  logKey?: string;
  /** The game servers' (emitters') verifier keys; their binding events' signatures are checked. */
  emitterKeys?: string[];
  /** A C2SP tlog-policy file's text: the witnesses whose quorum must have cosigned the checkpoint (and the logs accepted). */
  witnessPolicy?: string;
  /**
   * With witnessPolicy: a quorum not (yet) met, without an invalid cosignature, is not a failure;
   * log-witnesses is then skipped with what was found (LwNotYet, LwQuorum). A log's own pages
   * use it: a game's first bundle is not witnessed yet, its witnessed bundle comes a minute or two
   * after the game's end. The command line never sets it.
   */
  witnessesPending?: boolean;
  /** The event's bytes, for a tlog-proof file without an extra line (zarlog-verify --leaf). */
  leaf?: Uint8Array;
}

/** Checks a dice-proof-v1 evidence file or proof bundle, as zarlog-verify does. */
export function verify(file: Uint8Array, options?: VerifyOptions): Promise<Report>;

/**
 * The report of a file that could not be read, as the Go zarlog-verify gives it: the format check
 * failed, naming the file (exit 2). err is Node's error: ENOENT, EACCES, EPERM and EISDIR are told
 * by name, any other by its message.
 */
export function fileErrorReport(path: string, err: unknown): Report;

/** Formats message m from catalog at language index li (0 en, 1 tr, 2 ar). */
export function render(m: Message | string, catalog: Record<string, string[]>, li: number): string;

/** The seal code of a commitment: 8 Crockford base32 symbols, "XXXX-XXXX". */
export function sealCode(commitment: Uint8Array): string;

/** The tile badge of a commitment, the same SVG as the server's (32 bytes or 64 hex digits). */
export function badge(commitment: Uint8Array | string): string;

/** Whether this platform's WebCrypto verifies Ed25519 (the package verifies it either way). */
export function ed25519Supported(): Promise<boolean>;

export type Hex32 = string | Uint8Array;

/** Whether signature is drand quicknet's BLS signature of round (the chain's key pinned). */
export function verifyBeacon(round: number | bigint, signature: Uint8Array | string): Promise<boolean>;

/** The per-roll check of a per-roll-v1 roll, the moment it is revealed (seed 004). */
export function checkRollReveal(
  before: { matchId: string; rollId: string; commitment: Hex32 },
  reveal: { rollId: string; seed: Hex32; second: Hex32; secondFrom: "client" | "server"; dice: [number, number] },
  sent?: Hex32 | null,
): Promise<
  | { ok: true; dice: [number, number] }
  | { ok: false; part: "roll-id" | "second" | "commitment" | "dice"; want: string; got: string }
>;

/**
 * Checks a ledger's receipt: a C2SP tlog-proof@v1 of the event (the Go SDK's Receipt.Format, the log's
 * /games/<id>/proofs/<seq>.tlog-proof). The event's bytes (the proof's extra line, or leaf) must be at the
 * proof's index in the tree of a checkpoint signed by logKey; with a policy, a quorum of its witnesses must
 * have cosigned it. The object form of earlier versions is still read, with its leaf.
 */
export function checkReceipt(
  receipt: string | Uint8Array | { index: number; checkpoint: string; leaf: string; proof: Hex32[] },
  logKey: string,
  witnessPolicy?: string,
  leaf?: string | Uint8Array,
): Promise<
  | { ok: true; index: number; size: number; root: string; leaf: string; included: true; cosignatures: number }
  | { ok: false; message: Message }
>;

/** The verifier's messages: id → [English, Turkish, Arabic]. */
export const catalog: Record<string, [string, string, string]>;
export const langs: ["en", "tr", "ar"];
export function langIndex(lang: string): 0 | 1 | 2;

/** The report as zarlog-verify prints it. */
export function textReport(r: Report, lang: "en" | "tr" | "ar"): string;
/**
 * The report as zarlog-verify --json prints it: with "tiedToLog" (the log-signature check passed),
 * "unchecked" (the names of the skipped checks) and "verdict" (the verdict, rendered).
 */
export function jsonReport(r: Report, lang: "en" | "tr" | "ar"): string;

/**
 * A report in a player's words, as package verifier's Report.Verdict gives it and the game page
 * and the offline auditor show it: a headline and the sentences under it, each derived from the
 * checks that ran and the scheme's "proves / does not prove" (docs/SCHEMES.md §8–9).
 */
export interface Verdict {
  /**
   * checked: every check passed (for a proof bundle, under the log key given); untied: a proof
   * bundle whose checks passed but whose log signature was not checked (no key): nothing ties the
   * game to a log; wrong-seal: only the seal code given is not the game's; failed; bad-input.
   */
  kind: "checked" | "untied" | "wrong-seal" | "failed" | "bad-input";
  headline: Message;
  details: Message[];
}
export function verdict(r: Report): Verdict;

/** The drand quicknet chain's public key (hex), as package events/drand pins it. */
export const QUICKNET_PUBLIC_KEY: string;

/** A player's export (every proof bundle of one player on one platform, JSON lines): its check. */
export interface ExportReport {
  header: { emitter: string; format: string; games: number; player: string };
  games: { id: string; report: Report }[];
  /** What is wrong with the file itself (a cut export, a bad header), or null. */
  problem: Message | null;
  /** 0 every game checked, 1 a game's proof is invalid, 2 bad input. */
  exit: 0 | 1 | 2;
}
export const EXPORT_FORMAT: "zarlog-player-export-v1";
/** isExport reports whether the bytes are a player's export (/players/<emitter>/<id>/export). */
export function isExport(bytes: Uint8Array): boolean;
/** verifyExport checks every game of a player's export, as verify() checks one file, with the same options. */
export function verifyExport(bytes: Uint8Array, opt?: VerifyOptions): Promise<ExportReport>;
/** The export's report as zarlog-verify prints it: one verdict per game and a summary. */
export function exportText(x: ExportReport, lang: "en" | "tr" | "ar"): string;
/** The export's report as zarlog-verify --json prints it. */
export function exportJSON(x: ExportReport, lang: "en" | "tr" | "ar"): string;
