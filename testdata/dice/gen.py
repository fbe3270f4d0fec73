#!/usr/bin/env python3
"""Generate zarlog's dice vectors (testdata/dice) from the scheme description.

Together with dice_ref.py this is an independent implementation of
docs/SCHEMES.md, written against the text of the contract, not against the
Go code, using only the Python 3 standard library. It writes:

  primitives.json  encodings, MAC blocks, dice from blocks, seal codes,
                   bindings and canonical JSON, value by value;
  evidence/        dice-proof-v1 evidence files: valid games, mutations of
                   them (named after the mutation) and malformed files;
  manifest.json    for every evidence file: the flags to run the verifier
                   with, the expected exit code and the exact set of checks
                   that must fail.

The expectations in the manifest are not written by hand: the small
verifier of dice_ref.py (strict parser, commitments, dice, sequence rules,
anchor), the reference implementation this generator builds on, computes
them, and every mutation also states the checks it is meant to break, which
the generator asserts. Python has no BLS: for the drand anchor the
generator takes the real quicknet beacons (round, signature, randomness)
listed in the contract as the only valid signatures; any other
(round, signature) pair counts as invalid.

Deterministic: seeds, contributions, tokens and ids come from SHA-256 of
fixed labels, so a rerun produces identical files.

    python3 testdata/dice/gen.py        # rewrite the files
    python3 testdata/dice/gen.py --check  # exit 1 if a file would change
"""

import json
import os
import sys

sys.dont_write_bytecode = True  # keep testdata free of __pycache__
from dice_ref import *  # noqa: E402,F401,F403 (the reference implementation)
from bundle_ref import verify_file  # noqa: E402 (proof bundles and tlog-proofs)
from gen_bundles import build_bundles  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------
# Vectors

GAME = "00112233-4455-6677-8899-aabbccddeeff"
SEAT0 = "10000000-0000-4000-8000-000000000000"
SEAT1 = "20000000-0000-4000-8000-000000000000"
WORKED_SETTINGS = {"rulesVersion": "tavla-1", "variant": "portes", "matchLength": 5,
                   "opening": "turkish-reroll", "doublingCube": False}
LOG_KEY_NAME = "log.example"


def log_vkey():
    """A C2SP signed-note verifier key (Ed25519 type 0x01) over fixed bytes."""
    import base64
    pub = label_bytes("log-key")
    khash = sha256(LOG_KEY_NAME.encode() + b"\n" + b"\x01" + pub)[:4]
    return "%s+%s+%s" % (LOG_KEY_NAME, khash.hex(), base64.b64encode(b"\x01" + pub).decode())


def tav_game(label, settings, nrolls, seed=None, contribs=None, game=None, seats=None, **kw):
    seed = seed or label_bytes(label + "/seed")
    contribs = contribs or [label_bytes(label + "/c0"), label_bytes(label + "/c1")]
    game = game or label_uuid(label + "/game")
    seats = seats or [label_uuid(label + "/seat0"), label_uuid(label + "/seat1")]
    c = tav_commitment(game, settings_hash(settings), seats, seed)
    rolls = play_rolls(lambda n: tav_roll(seed, game, contribs, n), settings.get("opening", "western"), nrolls)
    ev = {"format": "dice-proof-v1", "scheme": "tavlarena-v1", "gameId": game, "settings": settings,
          "seats": seats, "commitment": h(c), "seed": h(seed), "contributions": [h(x) for x in contribs],
          "rolls": rolls}
    ev.update(kw)
    return ev


def anc_game(label, settings, nrolls, rnd, sealed_ms, tokens=None, match_id=None, game_no=1, chain=QUICKNET,
             randomness=None, offset=0, seed=None):
    seed = seed or label_bytes(label + "/seed")
    sig, rand = BEACONS[rnd]
    randomness = randomness or bytes.fromhex(rand)
    tokens = tokens or [label + "/token0", label + "/token1"]
    match_id = match_id if match_id is not None else "match-" + label
    binding = anchored_binding(match_id, game_no, tokens, chain, rnd, randomness)
    rolls = play_rolls(lambda n: anc_roll(seed, binding, n), settings.get("opening", "western"), nrolls)
    return {"format": "dice-proof-v1", "scheme": "anchored-v1", "matchId": match_id, "gameNo": game_no,
            "settings": settings, "tokens": tokens, "fingerprint": h(sha256(seed)), "seed": h(seed),
            "anchor": {"chain": h(chain), "round": rnd, "signature": sig, "randomness": h(randomness)},
            "sealedAt": rfc3339(sealed_ms, offset), "rolls": rolls}


def pr_match(label, nrolls, second_from, match_id=None, settings=None):
    match_id = match_id or label_uuid(label + "/match")
    rolls = []
    for i in range(nrolls):
        seed = label_bytes("%s/seed/%d" % (label, i))
        second = label_bytes("%s/second/%d" % (label, i))
        rid = label_uuid("%s/roll/%d" % (label, i))
        sf = second_from(i) if callable(second_from) else second_from
        rolls.append({"rollId": rid, "commitment": h(sha256(seed)), "seed": h(seed), "second": h(second),
                      "secondFrom": sf, "dice": list(pr_roll(seed, match_id, rid, second))})
    ev = {"format": "dice-proof-v1", "scheme": "per-roll-v1", "matchId": match_id, "rolls": rolls}
    if settings is not None:
        ev["settings"] = settings
    return ev


def pretty(ev):
    """One member per line, one roll per line: readable and diffable."""
    def c(v):
        return json.dumps(v, ensure_ascii=False, separators=(", ", ": "))
    lines = []
    for k, v in ev.items():
        if k == "rolls" and isinstance(v, list) and v:
            lines.append(' %s: [\n%s\n ]' % (c(k), ",\n".join("  " + c(r) for r in v)))
        else:
            lines.append(" %s: %s" % (c(k), c(v)))
    return "{\n" + ",\n".join(lines) + "\n}\n"


def copy(ev):
    return json.loads(json.dumps(ev))


def flip_hex(s, i=0):
    b = bytearray(bytes.fromhex(s))
    b[i] ^= 0x01
    return b.hex()


def other_face(d):
    return d % 6 + 1


class Vectors:
    def __init__(self):
        self.files = {}   # relative path -> bytes
        self.manifest = []
        self.policies = {}  # name -> relative path

    def policy(self, name, text):
        """Add a C2SP tlog-policy file for --witness-policy."""
        path = "policies/%s.txt" % name
        self.files[path] = text.encode("utf-8")
        self.policies[name] = path

    def add(self, group, name, ev, want_fail=None, expected=None, log_key=None, raw=None, note="",
            emitter_keys=None, policy=None, ext="json"):
        """Add an evidence file (a proof bundle, a tlog-proof). want_fail:
        the checks the vector is meant to fail ([] for a valid one);
        asserted against the independent verifiers."""
        if raw is None:
            raw = pretty(ev).encode("utf-8")
        path = "evidence/%s/%s.%s" % (group, name, ext)
        assert path not in self.files, path
        policy_text = self.files[self.policies[policy]].decode() if policy is not None else None
        code, fails = verify_file(raw, expected, log_key, emitter_keys, policy_text)
        if want_fail is not None:
            assert fails == sorted(want_fail), (name, fails, want_fail)
        assert {"valid": 0, "invalid": 1, "malformed": 2}[group] == code, (name, code, fails)
        self.files[path] = raw
        entry = {"name": name, "file": path, "exit": code, "failing": fails, "note": note}
        if expected is not None:
            entry["expectedCommitment"] = expected
        if log_key is not None:
            entry["logKey"] = log_key
        if emitter_keys is not None:
            entry["emitterKeys"] = emitter_keys
        if policy is not None:
            entry["witnessPolicy"] = self.policies[policy]
        self.manifest.append(entry)


def build_games(V):
    # --- tavlarena-v1 -------------------------------------------------------
    worked = tav_game("worked", WORKED_SETTINGS, 4, seed=seq_bytes(0x00),
                      contribs=[seq_bytes(0x20), seq_bytes(0x40)], game=GAME, seats=[SEAT0, SEAT1])
    assert worked["commitment"] == "2b2432fd9fb286c84f19b35297ab6ff81a51fbd05295b96a66ff46e7c27bc0cf"
    assert [r["dice"] for r in worked["rolls"]] == [[3, 3], [2, 2], [5, 1], [3, 1]]
    assert [r["kind"] for r in worked["rolls"]] == ["opening", "opening", "opening", "reroll"]
    V.add("valid", "tavlarena-worked-example", worked, [],
          note="DICE.md §2 sequential-byte-seed: two opening ties, seat 0 starts, Turkish re-roll")
    long = tav_game("worked", WORKED_SETTINGS, 240, seed=seq_bytes(0x00),
                    contribs=[seq_bytes(0x20), seq_bytes(0x40)], game=GAME, seats=[SEAT0, SEAT1])
    assert long["rolls"][232]["dice"] == [3, 1]
    V.add("valid", "tavlarena-worked-example-240-rolls", long, [],
          note="the worked example played to 240 rolls; roll 232 skips its first MAC byte (0xfc)")
    V.add("valid", "tavlarena-worked-example-seal-code", worked, [], expected="5cj3 5zcz",
          note="--expected-commitment given as a seal code typed in lower case with a space")
    V.add("valid", "tavlarena-worked-example-full-hex-upper", worked, [], expected=worked["commitment"].upper(),
          note="--expected-commitment as the full commitment in upper-case hex")
    V.add("invalid", "tavlarena-expected-commitment-mismatch", worked, ["expected-commitment"], expected="5CJ3-5ZC0",
          note="the seal code the player saw is not this game's")
    V.add("invalid", "tavlarena-expected-commitment-other-game", worked, ["expected-commitment"],
          expected=h(sha256(b"another game")), note="a full commitment of another game")
    V.add("invalid", "tavlarena-log-key-without-log", worked, ["log-signature"], log_key=log_vkey(),
          note="--log-key given but the file has no log member: nothing ties it to the log")

    west = {"rulesVersion": "tavla-1", "variant": "portes", "matchLength": 3, "opening": "western", "doublingCube": True}
    turk = dict(WORKED_SETTINGS)
    g_w = tav_game("western-60", west, 60)
    g_t = tav_game("turkish-60", turk, 60)
    V.add("valid", "tavlarena-western-60-rolls", g_w, [])
    V.add("valid", "tavlarena-turkish-60-rolls", g_t, [])

    # An opening with ties under western rules: the first label whose game opens with two ties.
    i = 0
    while True:
        g = tav_game("ties-%d" % i, west, 12)
        ks = [r["kind"] for r in g["rolls"]]
        if ks[:3] == ["opening", "opening", "opening"]:
            break
        i += 1
    V.add("valid", "tavlarena-opening-ties-western", g, [], note="search label ties-%d: the opening is tied twice" % i)

    unicode_settings = {
        "rulesVersion": "tavla-1", "variant": "plakoto", "matchLength": 7, "opening": "turkish-reroll",
        "club": {"şehir": "İstanbul", "مدينة": "دمشق", "emoji": "🎲", "ﬀ": "U+FB00 sorts after 🎲 in UTF-16"},
        "nested": {"z": [1, {"b": None, "a": [True, False, "ç"]}], "a": {}, "m": []},
        "controls": "tab\there\nline\u001f\u007f\"\\/",
        "limits": [MAX_SAFE, -MAX_SAFE, 0],
        "": "empty key",
    }
    g_u = tav_game("unicode", unicode_settings, 30)
    V.add("valid", "tavlarena-unicode-nested-settings", g_u, [],
          note="settings with Turkish, Arabic, emoji, nested values, control characters, ±(2^53−1)")
    # The same settings written differently: escaped, keys reordered, whitespace.
    settings_text = json.dumps(dict(reversed(list(unicode_settings.items()))), ensure_ascii=True, indent=4)
    body = copy(g_u)
    body["settings"] = "@@SETTINGS@@"
    raw = json.dumps(body, ensure_ascii=False, indent=2).replace('"@@SETTINGS@@"', settings_text)
    V.add("valid", "tavlarena-unicode-settings-escaped-reordered", None, [], raw=(raw + "\n").encode(),
          note="the same settings with \\u escapes, reordered keys and whitespace: same canonical form")

    no_opening = {"rulesVersion": "tavla-1", "variant": "portes", "matchLength": 1}
    V.add("valid", "tavlarena-no-opening-key-is-western", tav_game("no-opening", no_opening, 20), [],
          note="settings without \"opening\" mean western")
    V.add("valid", "tavlarena-no-rolls", tav_game("abandoned", west, 0), [], note="a game abandoned before the first roll")
    computer = dict(west, opponent="computer")
    V.add("valid", "tavlarena-against-computer", tav_game("computer", computer, 40), [],
          note="a game against the computer, run on the player's device")
    extra = tav_game("unknown-fields", west, 10, comment="unknown members are ignored", version={"x": [1, 2]})
    extra["rolls"][3]["note"] = "ignored too"
    V.add("valid", "tavlarena-unknown-fields-ignored", extra, [])
    short_t = tav_game("turkish-short", turk, 1)
    V.add("valid", "tavlarena-ended-before-reroll", short_t, [],
          note="a game that ended after the opening, before the Turkish re-roll: a prefix of a valid sequence")

    # Mutations of the Turkish 60-roll game.
    base = g_t
    first_turn = next(i for i, r in enumerate(base["rolls"]) if r["kind"] == "turn")
    m = copy(base); m["rolls"][20]["dice"][1] = other_face(m["rolls"][20]["dice"][1])
    V.add("invalid", "tavlarena-flipped-die", m, ["rolls"], note="roll 20's second die changed")
    m = copy(base); m["seed"] = flip_hex(m["seed"], 31)
    V.add("invalid", "tavlarena-wrong-seed", m, ["commitment", "rolls"])
    m = copy(base); m["contributions"].reverse()
    V.add("invalid", "tavlarena-swapped-contributions", m, ["rolls"])
    m = copy(base); m["seats"].reverse()
    V.add("invalid", "tavlarena-swapped-seats", m, ["commitment"])
    m = copy(base); m["settings"]["matchLength"] = 7
    V.add("invalid", "tavlarena-changed-settings", m, ["commitment"])
    m = copy(base); m["settings"]["opening"] = "western"
    V.add("invalid", "tavlarena-changed-opening-setting", m, ["commitment", "sequence"])
    m = copy(base); m["commitment"] = flip_hex(m["commitment"], 0)
    V.add("invalid", "tavlarena-wrong-commitment", m, ["commitment"])
    m = copy(base); m["gameId"] = label_uuid("another game")
    V.add("invalid", "tavlarena-wrong-game-id", m, ["commitment", "rolls"])
    m = copy(base); m["rolls"][first_turn - 1]["kind"] = "turn"
    V.add("invalid", "tavlarena-missing-reroll", m, ["sequence"], note="the Turkish re-roll marked as a turn")
    m = copy(base); m["rolls"][first_turn]["kind"] = "reroll"
    V.add("invalid", "tavlarena-two-rerolls", m, ["sequence"])
    m = copy(g_w); wt = next(i for i, r in enumerate(m["rolls"]) if r["kind"] == "turn"); m["rolls"][wt]["kind"] = "reroll"
    V.add("invalid", "tavlarena-reroll-under-western", m, ["sequence"])
    m = copy(base); del m["rolls"][30]
    V.add("invalid", "tavlarena-dropped-roll", m, ["sequence"], note="roll 30 removed; n jumps from 29 to 31")
    m = copy(base); del m["rolls"][30]
    for i, r in enumerate(m["rolls"]):
        r["n"] = i
    V.add("invalid", "tavlarena-dropped-roll-renumbered", m, ["rolls"], note="roll 30 removed and the rest renumbered")
    m = copy(base); m["rolls"].insert(31, copy(m["rolls"][30]))
    V.add("invalid", "tavlarena-duplicated-roll", m, ["sequence"])
    m = copy(base); m["rolls"][10], m["rolls"][11] = m["rolls"][11], m["rolls"][10]
    V.add("invalid", "tavlarena-reordered-rolls", m, ["sequence"])
    m = copy(base)
    for r in m["rolls"]:
        r["n"] += 1
    V.add("invalid", "tavlarena-numbered-from-1", m, ["rolls", "sequence"])
    m = copy(base)
    op = m["rolls"][first_turn - 2]
    assert op["kind"] == "opening" and op["dice"][0] != op["dice"][1]
    op["dice"].reverse()
    V.add("invalid", "tavlarena-swapped-opening-dice", m, ["rolls"], note="the other seat would have started")

    wk = copy(worked); wk["rolls"][1]["kind"] = "turn"
    V.add("invalid", "tavlarena-tied-opening-played", wk, ["sequence"],
          note="the tied opening 3-3 followed by a turn instead of another opening roll")
    wk = copy(worked); wk["rolls"][0]["kind"] = "turn"
    V.add("invalid", "tavlarena-starts-with-turn", wk, ["sequence"])
    wk = copy(worked); wk["rolls"][2]["kind"] = "turn"; wk["rolls"][3]["kind"] = "turn"
    V.add("invalid", "tavlarena-opening-decided-marked-turn", wk, ["sequence"])
    wk = copy(worked); wk["rolls"] = [dict(r) for r in wk["rolls"][:3]] + [{"n": 3, "dice": [3, 1], "kind": "opening"}]
    V.add("invalid", "tavlarena-opening-after-decided", wk, ["sequence"])
    wk = copy(worked); wk["rolls"][3]["n"] = 4294967295
    V.add("invalid", "tavlarena-huge-n", wk, ["sequence"],
          note="n = 2^32−1 where 3 is due; roll 2^32−1 happens to give 3-1 as well, so only the sequence fails")

    # --- anchored-v1 --------------------------------------------------------
    r = 657413
    rt = round_time(r) * 1000
    g_a = anc_game("anchored-60", turk, 60, r, rt - 2500,
                   tokens=["ali-token-7d1f", "ayşe'nin-jetonu"], match_id="match-2023-09-15-0001", game_no=3)
    V.add("valid", "anchored-quicknet-657413-60-rolls", g_a, [])
    V.add("valid", "anchored-quicknet-8", anc_game("a8", west, 20, 8, round_time(8) * 1000 - 1000), [])
    V.add("valid", "anchored-quicknet-10-sealed-long-before", anc_game("a10", west, 20, 10, (GENESIS - 86400) * 1000), [],
          note="sealed a day before the chain's genesis: the round certainly did not exist")
    V.add("valid", "anchored-quicknet-123-unicode-tokens",
          anc_game("a123", unicode_settings, 25, 123, round_time(123) * 1000 - 10000,
                   tokens=["رمز-اللاعب-🎲", "oyuncu-ğüşiöç"], match_id="maç/مباراة/🎲"), [])
    V.add("valid", "anchored-sealed-1ms-before-round", anc_game("a-edge", turk, 10, r, rt - 1), [],
          note="sealedAt is 1 ms before the round's time")
    V.add("valid", "anchored-sealed-at-offset", anc_game("a-offset", turk, 10, r, rt - 60000, offset=180), [],
          note="sealedAt with a +03:00 offset")
    m = anc_game("a-lower", turk, 10, r, rt - 60000)
    m["sealedAt"] = m["sealedAt"].lower()
    V.add("valid", "anchored-sealed-at-lower-case", m, [], note="RFC 3339 allows a lower-case t and z")
    V.add("valid", "anchored-max-token-gameno",
          anc_game("a-max", west, 10, 123, round_time(123) * 1000 - 5000, tokens=["ğ" * 128, "x" * 256],
                   game_no=2**32 - 1), [], note="tokens of 256 bytes, gameNo 2^32−1")
    V.add("valid", "anchored-against-computer", anc_game("a-computer", dict(turk, opponent="computer"), 30, r, rt - 4000), [])
    fp_code = seal_code(sha256(bytes.fromhex(g_a["seed"])))
    typed = fp_code.lower().replace("-", " ")
    V.add("valid", "anchored-fingerprint-seal-code", g_a, [], expected=typed,
          note="--expected-commitment as the seal code of the fingerprint (%s), typed %r" % (fp_code, typed))

    m = copy(g_a); m["seed"] = flip_hex(m["seed"], 5)
    V.add("invalid", "anchored-wrong-seed", m, ["commitment", "rolls"])
    m = copy(g_a); m["fingerprint"] = flip_hex(m["fingerprint"], 5)
    V.add("invalid", "anchored-wrong-fingerprint", m, ["commitment"])
    m = copy(g_a); m["tokens"] = [m["tokens"][0] + m["tokens"][1][:1], m["tokens"][1][1:]]
    V.add("invalid", "anchored-token-boundary-moved", m, ["rolls"], note="tokens ab+c read as a+bc: the lengths tell them apart")
    m = copy(g_a); m["tokens"].reverse()
    V.add("invalid", "anchored-swapped-tokens", m, ["rolls"])
    m = copy(g_a); m["anchor"]["round"] = r + 1
    V.add("invalid", "anchored-wrong-drand-round", m, ["anchor", "rolls"], note="round + 1 with the round's signature")
    m = copy(g_a); m["anchor"]["signature"], m["anchor"]["randomness"] = BEACONS[123]
    V.add("invalid", "anchored-another-rounds-beacon", m, ["anchor", "rolls"],
          note="round 123's valid signature and randomness under round 657413")
    m = copy(g_a); m["anchor"]["signature"] = flip_hex(m["anchor"]["signature"], 20)
    V.add("invalid", "anchored-tampered-signature", m, ["anchor"], note="one bit of the signature flipped")
    m = copy(g_a); m["anchor"]["randomness"] = flip_hex(m["anchor"]["randomness"], 0)
    V.add("invalid", "anchored-wrong-randomness", m, ["anchor", "rolls"])
    fake = sha256(b"not the beacon's randomness")
    V.add("invalid", "anchored-randomness-not-hash-of-signature",
          anc_game("a-fake-rand", turk, 20, r, rt - 2000, randomness=fake), ["anchor"],
          note="dice computed from a randomness that is not SHA-256 of the signature")
    m = copy(g_a); m["sealedAt"] = rfc3339(rt + 1000)
    V.add("invalid", "anchored-sealed-after-round", m, ["anchor"])
    m = copy(g_a); m["sealedAt"] = rfc3339(rt)
    V.add("invalid", "anchored-sealed-at-round-time", m, ["anchor"], note="sealedAt equals the round's time: it existed")
    V.add("invalid", "anchored-unknown-chain", anc_game("a-chain", turk, 20, r, rt - 2000, chain=sha256(b"no such chain")),
          ["anchor"])
    V.add("invalid", "anchored-testnet-chain", anc_game("a-testnet", turk, 20, r, rt - 2000, chain=QUICKNET_T),
          ["anchor"], note="the quicknet-t testnet is not an accepted anchor")
    m = copy(g_a); m["gameNo"] = 4
    V.add("invalid", "anchored-changed-game-no", m, ["rolls"])
    m = copy(g_a); m["matchId"] += "x"
    V.add("invalid", "anchored-changed-match-id", m, ["rolls"])
    m = copy(g_a); m["rolls"][7]["dice"][0] = other_face(m["rolls"][7]["dice"][0])
    V.add("invalid", "anchored-flipped-die", m, ["rolls"] if m["rolls"][7]["kind"] == "turn" else None)
    m = copy(g_a); m["anchor"]["round"] = 0
    V.add("invalid", "anchored-round-zero", m, ["anchor", "rolls"])

    # --- per-roll-v1 --------------------------------------------------------
    ex = {"format": "dice-proof-v1", "scheme": "per-roll-v1", "matchId": GAME, "rolls": [{
        "rollId": "30000000-0000-4000-8000-000000000001", "commitment": h(sha256(seq_bytes(0x60))),
        "seed": h(seq_bytes(0x60)), "second": h(seq_bytes(0x80)), "secondFrom": "client", "dice": [4, 3]}]}
    assert ex["rolls"][0]["commitment"] == "4d8d274ff7e176af977a95a0055c8c5f3478d38640343a060cee893e56f39957"
    assert pr_roll(seq_bytes(0x60), GAME, "30000000-0000-4000-8000-000000000001", seq_bytes(0x80)) == (4, 3)
    V.add("valid", "per-roll-worked-example", ex, [], note="DICE.md §4")
    p_c = pr_match("pr-client", 60, "client")
    p_s = pr_match("pr-server", 60, "server")
    p_m = pr_match("pr-mixed", 30, lambda i: "server" if i % 3 == 0 else "client")
    V.add("valid", "per-roll-client-60-rolls", p_c, [])
    V.add("valid", "per-roll-server-60-rolls", p_s, [], note="correspondence match: the server made every second number")
    V.add("valid", "per-roll-mixed", p_m, [])
    V.add("valid", "per-roll-against-computer", pr_match("pr-computer", 12, "client", settings={"opponent": "computer"}), [])
    V.add("valid", "per-roll-no-rolls", pr_match("pr-empty", 0, "client"), [])
    V.add("valid", "per-roll-expected-commitment-of-roll", p_m, [], expected=seal_code(bytes.fromhex(p_m["rolls"][4]["commitment"])),
          note="--expected-commitment names one roll's commitment (the one the player saw)")
    m = copy(p_m); m["rolls"][3]["secondFrom"] = "client"
    V.add("valid", "per-roll-secondfrom-relabeled", m, [],
          note="secondFrom is the record's statement, not bound by any hash: relabeling it is not detectable")

    m = copy(p_m); m["rolls"][5]["commitment"] = flip_hex(m["rolls"][5]["commitment"], 9)
    V.add("invalid", "per-roll-bad-per-roll-commitment", m, ["commitment"])
    m = copy(p_m); m["rolls"][5]["seed"] = flip_hex(m["rolls"][5]["seed"], 9)
    V.add("invalid", "per-roll-wrong-seed", m, ["commitment", "rolls"])
    m = copy(p_m); m["rolls"][5]["second"] = flip_hex(m["rolls"][5]["second"], 9)
    V.add("invalid", "per-roll-wrong-second", m, ["rolls"])
    m = copy(p_m); a_, b_ = m["rolls"][3]["rollId"], m["rolls"][4]["rollId"]; m["rolls"][3]["rollId"], m["rolls"][4]["rollId"] = b_, a_
    V.add("invalid", "per-roll-swapped-roll-ids", m, ["rolls"])
    m = copy(p_m); m["rolls"][8]["dice"][0] = other_face(m["rolls"][8]["dice"][0])
    V.add("invalid", "per-roll-flipped-die", m, ["rolls"])
    m = copy(p_m); m["rolls"].insert(7, copy(m["rolls"][6]))
    V.add("invalid", "per-roll-duplicate-roll-id", m, ["sequence"], note="roll 6 appears twice")
    m = copy(p_m); m["matchId"] = label_uuid("another match")
    V.add("invalid", "per-roll-changed-match-id", m, ["rolls"])
    V.add("invalid", "per-roll-expected-commitment-not-in-match", p_m, ["expected-commitment"], expected="ZZZZ-ZZZZ")


def build_malformed(V):
    worked = tav_game("worked", WORKED_SETTINGS, 4, seed=seq_bytes(0x00),
                      contribs=[seq_bytes(0x20), seq_bytes(0x40)], game=GAME, seats=[SEAT0, SEAT1])
    good = (json.dumps(worked, indent=1) + "\n").encode()
    a = anc_game("malformed-a", WORKED_SETTINGS, 4, 8, round_time(8) * 1000 - 1000)
    p = pr_match("malformed-p", 2, "client")

    def raw(name, b, note=""):
        V.add("malformed", name, None, ["format"], raw=b, note=note)

    def mut(name, base, f, note=""):
        m = copy(base)
        f(m)
        V.add("malformed", name, m, ["format"], note=note)

    raw("not-json", b"this is not JSON\n")
    raw("empty-file", b"")
    raw("top-level-array", b"[" + good + b"]")
    raw("top-level-string", b'"dice-proof-v1"')
    raw("truncated", good[: len(good) // 2])
    raw("trailing-data", good + b"{}")
    raw("utf8-bom", b"\xef\xbb\xbf" + good)
    raw("invalid-utf8", good.replace(b'"variant": "portes"', b'"variant": "port\xffes"'))
    raw("duplicate-key-top-level", good.replace(b'"seed":', b'"seed": "' + b"00" * 32 + b'",\n "seed":', 1))
    raw("duplicate-key-escaped", good.replace(b'"seed":', b'"\\u0073eed": "' + b"00" * 32 + b'",\n "seed":', 1),
        note="the second key is written \\u0073eed")
    raw("duplicate-key-in-settings", good.replace(b'"matchLength": 5', b'"matchLength": 5, "matchLength": 7'))
    raw("duplicate-key-in-roll", good.replace(b'"kind": "reroll"', b'"kind": "reroll", "kind": "turn"'))
    raw("float-in-settings", good.replace(b'"matchLength": 5', b'"matchLength": 5.0'))
    raw("exponent-in-settings", good.replace(b'"matchLength": 5', b'"matchLength": 5e0'))
    raw("2^53+1-in-settings", good.replace(b'"matchLength": 5', b'"matchLength": 9007199254740993'))
    raw("2^53-in-settings", good.replace(b'"matchLength": 5', b'"matchLength": 9007199254740992'))
    raw("2^53+1-roll-n", good.replace(b'"n": 3', b'"n": 9007199254740993'))
    raw("float-roll-n", good.replace(b'"n": 3', b'"n": 3.0'))
    raw("nan", good.replace(b'"matchLength": 5', b'"matchLength": NaN'))
    raw("lone-surrogate", good.replace(b'"variant": "portes"', b'"variant": "\\ud800"'))
    raw("control-char-in-string", good.replace(b'"variant": "portes"', b'"variant": "port\x01es"'))
    raw("settings-too-deep", good.replace(b'"variant": "portes"', b'"variant": ' + b"[" * 100 + b"]" * 100))
    raw("single-quotes", good.replace(b'"format"', b"'format'"))

    mut("missing-format", worked, lambda m: m.pop("format"))
    mut("format-v2", worked, lambda m: m.update(format="dice-proof-v2"))
    mut("missing-scheme", worked, lambda m: m.pop("scheme"))
    mut("unknown-scheme", worked, lambda m: m.update(scheme="tavlarena-v2"))
    mut("scheme-wrong-type", worked, lambda m: m.update(scheme=1))
    mut("missing-seed", worked, lambda m: m.pop("seed"))
    mut("seed-short", worked, lambda m: m.update(seed=m["seed"][:62]))
    mut("seed-long", worked, lambda m: m.update(seed=m["seed"] + "00"))
    mut("seed-uppercase-hex", worked, lambda m: m.update(seed=m["seed"].upper()), note="hex is lowercase")
    mut("seed-0x-prefix", worked, lambda m: m.update(seed="0x" + m["seed"][2:]))
    mut("seed-number", worked, lambda m: m.update(seed=12345))
    mut("seed-null", worked, lambda m: m.update(seed=None))
    mut("missing-commitment", worked, lambda m: m.pop("commitment"))
    mut("game-id-not-uuid", worked, lambda m: m.update(gameId="game-1"))
    mut("game-id-uppercase", worked, lambda m: m.update(gameId=m["gameId"].upper()), note="UUIDs are lowercase")
    mut("game-id-braces", worked, lambda m: m.update(gameId="{" + m["gameId"] + "}"))
    mut("seats-one", worked, lambda m: m.update(seats=m["seats"][:1]))
    mut("seats-three", worked, lambda m: m.update(seats=m["seats"] + [SEAT0]))
    mut("contributions-short", worked, lambda m: m["contributions"].__setitem__(1, m["contributions"][1][:60]))
    mut("missing-contributions", worked, lambda m: m.pop("contributions"))
    mut("settings-missing", worked, lambda m: m.pop("settings"))
    mut("settings-array", worked, lambda m: m.update(settings=[1, 2]))
    mut("settings-string", worked, lambda m: m.update(settings=cjson(WORKED_SETTINGS)))
    mut("opening-unknown", worked, lambda m: m["settings"].update(opening="greek"))
    mut("opening-wrong-type", worked, lambda m: m["settings"].update(opening=True))
    mut("opponent-unknown", worked, lambda m: m["settings"].update(opponent="robot"))
    mut("rolls-missing", worked, lambda m: m.pop("rolls"))
    mut("rolls-object", worked, lambda m: m.update(rolls={"0": m["rolls"][0]}))
    mut("roll-not-object", worked, lambda m: m["rolls"].__setitem__(1, [1, [2, 2], "opening"]))
    mut("roll-n-string", worked, lambda m: m["rolls"][1].update(n="1"))
    mut("roll-n-negative", worked, lambda m: m["rolls"][1].update(n=-1))
    mut("roll-n-2^32", worked, lambda m: m["rolls"][1].update(n=2**32))
    mut("roll-n-missing", worked, lambda m: m["rolls"][1].pop("n"))
    mut("roll-kind-unknown", worked, lambda m: m["rolls"][1].update(kind="double"))
    mut("roll-kind-missing", worked, lambda m: m["rolls"][1].pop("kind"))
    mut("dice-three", worked, lambda m: m["rolls"][1].update(dice=[2, 2, 2]))
    mut("dice-one", worked, lambda m: m["rolls"][1].update(dice=[2]))
    mut("dice-missing", worked, lambda m: m["rolls"][1].pop("dice"))
    mut("die-seven", worked, lambda m: m["rolls"][1].update(dice=[7, 2]))
    mut("die-zero", worked, lambda m: m["rolls"][1].update(dice=[2, 0]))
    mut("die-string", worked, lambda m: m["rolls"][1].update(dice=["2", 2]))
    mut("die-bool", worked, lambda m: m["rolls"][1].update(dice=[True, 2]))
    mut("log-not-object", worked, lambda m: m.update(log="bundle"))

    mut("anchored-game-no-2^32", a, lambda m: m.update(gameNo=2**32))
    mut("anchored-game-no-negative", a, lambda m: m.update(gameNo=-1))
    mut("anchored-game-no-string", a, lambda m: m.update(gameNo="3"))
    mut("anchored-match-id-number", a, lambda m: m.update(matchId=7))
    mut("anchored-token-empty", a, lambda m: m["tokens"].__setitem__(0, ""))
    mut("anchored-token-257-bytes", a, lambda m: m["tokens"].__setitem__(1, "x" * 255 + "ğ"))
    mut("anchored-tokens-one", a, lambda m: m.update(tokens=m["tokens"][:1]))
    mut("anchored-missing-anchor", a, lambda m: m.pop("anchor"))
    mut("anchored-round-string", a, lambda m: m["anchor"].update(round="8"))
    mut("anchored-round-negative", a, lambda m: m["anchor"].update(round=-8))
    mut("anchored-signature-odd-hex", a, lambda m: m["anchor"].update(signature=m["anchor"]["signature"][:-1]))
    mut("anchored-signature-not-hex", a, lambda m: m["anchor"].update(signature="zz" + m["anchor"]["signature"][2:]))
    mut("anchored-randomness-short", a, lambda m: m["anchor"].update(randomness=m["anchor"]["randomness"][:62]))
    mut("anchored-chain-missing", a, lambda m: m["anchor"].pop("chain"))
    mut("anchored-missing-sealed-at", a, lambda m: m.pop("sealedAt"))
    mut("anchored-sealed-at-not-time", a, lambda m: m.update(sealedAt="yesterday"))
    mut("anchored-sealed-at-date-only", a, lambda m: m.update(sealedAt="2023-08-23"))
    mut("anchored-sealed-at-unix-number", a, lambda m: m.update(sealedAt=1692803380))
    mut("anchored-sealed-at-leap-second", a, lambda m: m.update(sealedAt="2016-12-31T23:59:60Z"))
    mut("anchored-sealed-at-space", a, lambda m: m.update(sealedAt=m["sealedAt"].replace("T", " ")))
    mut("anchored-missing-fingerprint", a, lambda m: m.pop("fingerprint"))
    mut("per-roll-match-id-not-uuid", p, lambda m: m.update(matchId="match-1"))
    mut("per-roll-second-from-unknown", p, lambda m: m["rolls"][1].update(secondFrom="peer"))
    mut("per-roll-second-missing", p, lambda m: m["rolls"][1].pop("second"))
    mut("per-roll-roll-id-missing", p, lambda m: m["rolls"][0].pop("rollId"))
    mut("per-roll-commitment-short", p, lambda m: m["rolls"][0].update(commitment=m["rolls"][0]["commitment"][:10]))
    mut("per-roll-settings-not-object", p, lambda m: m.update(settings="computer"))


def build_primitives():
    P = {}
    # Canonical JSON.
    canon = []
    texts = [
        ("dice-md-settings", json.dumps(WORKED_SETTINGS)),
        ("whitespace-and-order", ' {\n "b" : [ 1 , 2 ] , "a" : { "d" : null , "c" : true } } '),
        ("escapes", json.dumps({"s": "\"\\/\b\f\n\r\t\u0001\u001f\u007f\u00e7\u2028"}, ensure_ascii=True)),
        ("utf16-key-order", json.dumps({"\U0001F3B2": 1, "\uFB00": 2, "a": 3, "\u00e7": 4, "": 5}, ensure_ascii=False)),
        ("utf16-key-order-escaped", json.dumps({"\U0001F3B2": 1, "\uFB00": 2, "a": 3, "\u00e7": 4, "": 5}, ensure_ascii=True)),
        ("max-safe", "[9007199254740991, -9007199254740991, 0, -0]"),
        ("nested", json.dumps({"z": {"y": [{"b": True, "a": False}]}, "a": "", "m": [], "o": {}})),
        ("solidus-escape", '{"a":"\\/"}'),
    ]
    for name, t in texts:
        v = load_strict(t.encode())
        c = cjson(v)
        canon.append({"name": name, "input": t, "canonical": c, "sha256": h(sha256(c.encode()))})
    P["canonical"] = canon
    P["canonicalRejects"] = [
        {"name": n, "input": t} for n, t in [
            ("float", "1.5"), ("float-zero-fraction", '{"a":1.0}'), ("exponent", "[1e3]"),
            ("2^53", "9007199254740992"), ("2^53+1", "9007199254740993"), ("-2^53", "-9007199254740992"),
            ("duplicate", '{"a":1,"a":2}'), ("duplicate-escaped", '{"a":1,"\\u0061":2}'),
            ("lone-surrogate", '"\\ud800"'), ("leading-zero", "01"), ("nan", "NaN"), ("trailing", "{} {}"),
        ]]
    for r in P["canonicalRejects"]:
        try:
            load_strict(r["input"].encode())
            raise AssertionError("accepted " + r["name"])
        except InputError:
            pass

    # Dice from MAC blocks: artificial sequences (a natural block 0 with fewer
    # than two bytes below 252 has probability about 2^-186).
    def blk(pairs, fill=0xFF):
        b = bytearray([fill] * 32)
        for i, v in pairs:
            b[i] = v
        return bytes(b)

    fb = []
    seqs = [
        ("first-two-bytes", [bytes(range(32))]),
        ("first-byte-skipped", [blk([(1, 0), (2, 5)], fill=0xFC)]),
        ("all-four-skipped-values", [bytes([252, 253, 254, 255, 251, 6] + [0] * 26)]),
        ("boundary-251-is-accepted", [bytes([251, 251] + [0] * 30)]),
        ("block-1-continuation", [blk([(31, 5)]), blk([(7, 250)], fill=0xFC)]),
        ("block-2-continuation", [blk([]), blk([(0, 0)], fill=0xFD), blk([(31, 11)], fill=0xFE)]),
        ("continuation-at-last-byte", [blk([(31, 0)]), blk([(31, 1)])]),
    ]
    for name, blocks in seqs:
        d, used = dice_from_blocks(lambda k: blocks[k])
        fb.append({"name": name, "blocks": [h(b) for b in blocks], "dice": list(d), "blocksUsed": used})
    # Every byte value's face.
    fb.append({"name": "every-byte-value", "blocks": [h(bytes([v, v] + [0] * 30)) for v in range(0)], "dice": [], "blocksUsed": 0,
               "faces": [(v % 6 + 1) if v < 252 else 0 for v in range(256)]})
    P["fromBlocks"] = fb

    # tavlarena-v1 blocks and commitments.
    tb = []
    contribs = [seq_bytes(0x20), seq_bytes(0x40)]
    for name, n, k in [("n0", 0, 0), ("n1", 1, 0), ("n2", 2, 0), ("n3", 3, 0), ("n232-first-byte-skipped", 232, 0),
                       ("n0-block1", 0, 1), ("max-n-max-block", 0xFFFFFFFF, 0xFFFFFFFF), ("max-n", 0xFFFFFFFF, 0)]:
        b = tav_block(seq_bytes(0), GAME, contribs, n, k)
        e = {"name": name, "seed": h(seq_bytes(0)), "gameId": GAME, "contributions": [h(c) for c in contribs],
             "n": n, "block": k, "mac": h(b)}
        if k == 0:
            e["dice"] = list(tav_roll(seq_bytes(0), GAME, contribs, n))
        tb.append(e)
    assert tb[0]["mac"] == "b00862cc6f51ffa8d843ff819cf01083a24bb46dd8795a6432e91ce80516ca3a"
    assert tb[4]["mac"] == "fc3e2ab8b76e550cb62f1425d2aaefe0499d51372991c7579a4584e93002ba2f"
    assert tb[6]["mac"] == "f48392863e8da4e6badff9baa63eed0c4960d106f1deec4e57d7124d622337c7"
    P["tavlarenaBlocks"] = tb
    tc = []
    for name, settings, game, seats, seed in [
        ("worked-example", WORKED_SETTINGS, GAME, [SEAT0, SEAT1], seq_bytes(0)),
        ("swapped-seats", WORKED_SETTINGS, GAME, [SEAT1, SEAT0], seq_bytes(0)),
        ("empty-settings", {}, GAME, [SEAT0, SEAT1], bytes(32)),
    ]:
        c = tav_commitment(game, settings_hash(settings), seats, seed)
        tc.append({"name": name, "settings": cjson(settings), "settingsHash": h(settings_hash(settings)), "gameId": game,
                   "seats": seats, "seed": h(seed), "commitment": h(c), "sealCode": seal_code(c)})
    assert tc[0]["settingsHash"] == "e5d8e96dcc7688c26454bbaa0b3c67df9b28db14867a878c86aebba0ce60e095"
    assert tc[0]["sealCode"] == "5CJ3-5ZCZ"
    P["tavlarenaCommitments"] = tc

    # Seal codes.
    seals = []
    for c in [bytes.fromhex(tc[0]["commitment"]), bytes(32), b"\xff" * 32, b"\x80" + bytes(31), sha256(b"seal")]:
        code = seal_code(c)
        typed = [code, code.lower(), code.replace("-", ""), code.replace("0", "O").replace("1", "I"),
                 code.lower().replace("1", "l"), " ".join(code)]
        for t in typed:
            assert parse_seal(t) == c[:5]
        seals.append({"commitment": h(c), "code": code, "typed": typed})
    P["seals"] = seals
    bad = ["", "5CJ3-5ZC", "5CJ3-5ZCZZ", "5CJ3-5ZCU", "5CJ3-5ZC!", "5CJ3-5ZCç", "5CJ3_5ZCZ"]
    for t in bad:
        try:
            parse_seal(t)
            raise AssertionError("accepted seal " + t)
        except ValueError:
            pass
    P["sealRejects"] = bad

    # anchored-v1 bindings and blocks.
    ab = []
    for name, mid, gno, toks, rnd in [
        ("round-8", "match-1", 1, ["ab", "c"], 8),
        ("round-8-boundary-moved", "match-1", 1, ["a", "bc"], 8),
        ("unicode", "maç/مباراة", 7, ["ğ", "🎲"], 657413),
        ("max", "m", 2**32 - 1, ["x" * 256, "y"], 123),
    ]:
        rand = bytes.fromhex(BEACONS[rnd][1])
        b = anchored_binding(mid, gno, toks, QUICKNET, rnd, rand)
        seed = label_bytes("binding/" + name)
        e = {"name": name, "matchId": mid, "gameNo": gno, "tokens": toks, "chain": h(QUICKNET), "round": rnd,
             "randomness": h(rand), "binding": h(b), "seed": h(seed),
             "blocks": [{"n": n, "block": k, "mac": h(anc_block(seed, b, n, k))} for n, k in [(0, 0), (1, 0), (0, 1), (0xFFFFFFFF, 0xFFFFFFFF)]],
             "dice": [list(anc_roll(seed, b, n)) for n in range(6)]}
        ab.append(e)
    assert ab[0]["binding"] != ab[1]["binding"]
    P["anchored"] = ab

    # per-roll-v1.
    pr = []
    for name, seed, mid, rid, second in [
        ("worked-example", seq_bytes(0x60), GAME, "30000000-0000-4000-8000-000000000001", seq_bytes(0x80)),
        ("labels", label_bytes("pr/seed"), label_uuid("pr/match"), label_uuid("pr/roll"), label_bytes("pr/second")),
    ]:
        pr.append({"name": name, "seed": h(seed), "matchId": mid, "rollId": rid, "second": h(second),
                   "commitment": h(sha256(seed)),
                   "blocks": [{"counter": k, "mac": h(pr_block(seed, mid, rid, k, second))} for k in (0, 1, 0xFFFFFFFF)],
                   "dice": list(pr_roll(seed, mid, rid, second))})
    assert pr[0]["blocks"][0]["mac"] == "8dc2dd363a79ff9fb5fc24ba1b63986d7f960bb3207e76580a71535bb9e27501"
    assert pr[0]["dice"] == [4, 3]
    P["perRoll"] = pr
    return P


def main():
    check = "--check" in sys.argv[1:]
    V = Vectors()
    build_games(V)
    build_malformed(V)
    build_bundles(V)
    out = dict(V.files)
    out["manifest.json"] = (json.dumps({"vectors": V.manifest}, ensure_ascii=False, indent=1) + "\n").encode()
    out["primitives.json"] = (json.dumps(build_primitives(), ensure_ascii=False, indent=1) + "\n").encode()
    changed = []
    for rel, data in sorted(out.items()):
        path = os.path.join(HERE, rel)
        old = None
        if os.path.exists(path):
            with open(path, "rb") as f:
                old = f.read()
        if old != data:
            changed.append(rel)
            if not check:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as f:
                    f.write(data)
    # Files under evidence/ and policies/ that the generator no longer writes.
    for root, _, files in [w for d in ("evidence", "policies") for w in os.walk(os.path.join(HERE, d))]:
        for fn in files:
            rel = os.path.relpath(os.path.join(root, fn), HERE)
            if rel not in out:
                changed.append(rel + " (stale)")
                if not check:
                    os.remove(os.path.join(root, fn))
    counts = {}
    for e in V.manifest:
        counts[e["exit"]] = counts.get(e["exit"], 0) + 1
    print("%d vectors (exit 0: %d, exit 1: %d, exit 2: %d); %d files changed" % (
        len(V.manifest), counts.get(0, 0), counts.get(1, 0), counts.get(2, 0), len(changed)))
    if check and changed:
        for c in changed:
            print("would change:", c)
        sys.exit(1)


if __name__ == "__main__":
    main()
