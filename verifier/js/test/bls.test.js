// The drand quicknet beacons of docs/SCHEMES.md §6 (and the SDK's recorded
// ones) verify; a flipped bit, another round or a truncated signature does
// not.
import { test } from "node:test";
import assert from "node:assert/strict";
import { verifyQuicknet } from "../src/bls.js";
import { unhex } from "../src/bytes.js";
import { sha256 } from "../src/sha256.js";

const beacons = [
  [8, "a0c06b9964123d2e6036aa004c140fc301f4edd3ea6b8396a15dfd7dfd70cc0dce0b4a97245995767ab72cf59de58c47"],
  [10, "ac415e508c484053efed1c6c330e3ae0bf20185b66ed088864dac1ff7d6f927610824986390d3239dac4dd73e6f865f5"],
  [123, "b75c69d0b72a5d906e854e808ba7e2accb1542ac355ae486d591aa9d43765482e26cd02df835d3546d23c4b13e0dfc92"],
  [657413, "b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b"],
];

test("real quicknet beacons verify", async () => {
  for (const [round, sig] of beacons) {
    assert.equal(await verifyQuicknet(round, unhex(sig), sha256), true, `round ${round}`);
  }
});

test("a flipped bit, another round, a short signature fail", async () => {
  for (const [round, sig] of beacons) {
    const b = unhex(sig);
    for (const bit of [7, 100, 383]) {
      const f = b.slice();
      f[bit >> 3] ^= 1 << (bit & 7);
      assert.equal(await verifyQuicknet(round, f, sha256), false, `round ${round}, bit ${bit}`);
    }
    assert.equal(await verifyQuicknet(round + 1, b, sha256), false, `round ${round} as ${round + 1}`);
    assert.equal(await verifyQuicknet(round, b.subarray(0, 47), sha256), false, `round ${round}, 47 bytes`);
  }
});
