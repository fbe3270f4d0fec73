// zarlog-emitter: log an online backgammon platform's dice in a zarlog
// ledger from Node.js, as the Go SDK (package sdk) does, with the
// verifier's own code (zarlog-verify) for hashing, canonical JSON, the game
// rules and signatures.

import "./engine.js";

export { Backend, TavlarenaGame, AnchoredGame, PerRollMatch, NotAcknowledgedError, NotNowError, LocalError, SeatNamesError, DEFAULT_ANCHOR_ROUNDS, rollSeats } from "./game.js";
export { Client, dial, ClosedError, PredecessorError, PublishError, BacklogError, RejectedError, ReceiptRefusedError, FollowUnsupportedError } from "./client.js";
export { DEFAULT_FOLLOW_INTERVAL, DEFAULT_FOLLOW_AFTER } from "./follow.js";
export { DEFAULT_LINGER } from "./linger.js";
export { Receipt, parseReceipt, checkReceipt, BadReceiptError } from "./receipt.js";
export { RefusedError, makeEvent, canonicalSettings, SIG_CONTEXT } from "./events.js";
export { Signer, KeyError, loadSigner, parseSignerKey, readSecretFile } from "./signer.js";
export { quicknetBeacons, RecordedBeacons, Relay, verifyBeacon, BeaconNotYetError, BadBeaconError, NoBeaconError } from "./beacon.js";
export { checkRoll, RollCheckError } from "./rollcheck.js";
export { Subjects, WireError, checkEmitter, checkEventID, DEFAULT_ROOT, MAX_EVENT_SIZE, MAX_BATCH_EVENTS } from "./wire.js";
