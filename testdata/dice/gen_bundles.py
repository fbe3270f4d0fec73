"""The proof-bundle and tlog-proof vectors of testdata/dice, for gen.py.

A log is built here from scratch: games of the three schemes, each event a
canonical leaf signed where the contract says so, interleaved with other
games' events, hashed into an RFC 6962 tree and signed as a checkpoint note
with witness cosignatures (bundle_ref.py, ed25519_ref.py). Every bundle is
then written from the leaves, and mutated to break one thing at a time.
Keys come from fixed seeds, timestamps are fixed: reruns give the same bytes.
"""

import base64
import json

from dice_ref import (QUICKNET, BEACONS, h, label_bytes, label_uuid, play_rolls, round_time, settings_hash, sha256,
                      tav_commitment, tav_roll, anchored_binding, anc_roll, pr_roll)
from bundle_ref import (Key, SIG_COSIGN_V1, Tree, b64, checkpoint_text, evidence_of, make_event, parse_event,
                        replay)

EMITTER = "tavla-east"
ORIGIN = "log.zarlog.example"
T0 = 1795860000000  # 2026-11-28T06:40:00Z, in milliseconds
COSIGNED_AT = 1795870000


def other_face(d):
    return d % 6 + 1


def played(r, opening):
    return not (r["kind"] == "opening" and (r["dice"][0] == r["dice"][1] or opening == "turkish-reroll"))


def leaves_of(key, scheme, game, bodies, t0):
    return [make_event(key, scheme, game, seq, t, b, t0 + seq * 1000) for seq, (t, b) in enumerate(bodies)]


def game_tail(bodies, rolls, opening, reveal=None):
    for r in rolls:
        bodies.append(("roll", {"dice": r["dice"], "kind": r["kind"], "n": r["n"]}))
        if played(r, opening):
            bodies.append(("move", {"n": r["n"], "play": "24/18 13/11", "seat": r["n"] % 2}))
    bodies.append(("end", {"points": 1, "result": "finished", "winner": 0}))
    if reveal is not None:
        bodies.append(("reveal", {"seed": h(reveal)}))
    return bodies


def tav_game(key, label, nrolls, reveal_seed=None):
    settings = {"rulesVersion": "tavla-1", "variant": "portes", "matchLength": 5, "opening": "turkish-reroll"}
    game = label_uuid(label + "/game")
    seats = [label_uuid(label + "/seat0"), label_uuid(label + "/seat1")]
    seed = label_bytes(label + "/seed")
    contribs = [label_bytes(label + "/c0"), label_bytes(label + "/c1")]
    c = tav_commitment(game, settings_hash(settings), seats, seed)
    bodies = [("commit", {"commitment": h(c), "seats": seats, "settings": settings}),
              ("contribution", {"contribution": h(contribs[0]), "seat": 0}),
              ("contribution", {"contribution": h(contribs[1]), "seat": 1})]
    rolls = play_rolls(lambda n: tav_roll(seed, game, contribs, n), "turkish-reroll", nrolls)
    game_tail(bodies, rolls, "turkish-reroll", reveal_seed or seed)
    return leaves_of(key, "tavlarena-v1", game, bodies, T0)


def anc_game(key, label, nrolls, token_after_beacon=False):
    rnd = 657413
    sig, rand = BEACONS[rnd]
    match_id, game_no = "match-" + label, 3
    tokens = ["gül-" + label, "zar 🎲"]
    seed = label_bytes(label + "/seed")
    sealed = round_time(rnd) * 1000 - 60000
    from bundle_ref import iso_ms
    settings = {"opening": "western", "variant": "plakoto"}
    binding = anchored_binding(match_id, game_no, tokens, QUICKNET, rnd, bytes.fromhex(rand))
    bodies = [("commit", {"anchor": {"chain": h(QUICKNET), "round": rnd}, "fingerprint": h(sha256(seed)),
                          "gameNo": game_no, "matchId": match_id, "sealedAt": iso_ms(sealed), "settings": settings}),
              ("contribution", {"seat": 1, "token": tokens[1]}),
              ("contribution", {"seat": 0, "token": tokens[0]})]
    beacon = ("beacon", {"chain": h(QUICKNET), "randomness": rand, "round": rnd, "signature": sig})
    bodies.insert(2 if token_after_beacon else 3, beacon)
    rolls = play_rolls(lambda n: anc_roll(seed, binding, n), "western", nrolls)
    game_tail(bodies, rolls, "western", seed)
    return leaves_of(key, "anchored-v1", "nard." + label, bodies, sealed)


def pr_game(key, label, nrolls):
    match = label_uuid(label + "/match")
    bodies = [("commit", {"settings": {"variant": "portes", "matchLength": 3}})]
    for i in range(nrolls):
        seed, second = label_bytes("%s/seed/%d" % (label, i)), label_bytes("%s/second/%d" % (label, i))
        rid = label_uuid("%s/roll/%d" % (label, i))
        bodies += [("roll-commit", {"commitment": h(sha256(seed)), "rollId": rid}),
                   ("roll-second", {"rollId": rid, "second": h(second), "secondFrom": "server" if i % 3 == 2 else "client"}),
                   ("roll-reveal", {"dice": list(pr_roll(seed, match, rid, second)), "rollId": rid, "seed": h(seed)}),
                   ("move", {"n": i, "play": "24/20", "seat": i % 2})]
    bodies.append(("end", {"points": 3, "result": "finished", "winner": 1}))
    return leaves_of(key, "per-roll-v1", match, bodies, T0 + 3600000)


def filler(i):
    """Another platform's event: a contribution to a game that is not ours."""
    game = label_uuid("filler/%d" % (i // 2))
    return make_event(None, "tavlarena-v1", game, 1 + i % 2, "contribution",
                      {"contribution": h(label_bytes("filler/%d" % i)), "seat": i % 2}, T0 + i, emitter="other-platform")


class Log:
    def __init__(self, key):
        self.key, self.tree, self.leaves, self.nfill = key, Tree(), [], 0

    def append(self, leaf):
        self.leaves.append(leaf)
        return self.tree.append(leaf.encode())

    def fill(self, n):
        for _ in range(n):
            self.append(filler(self.nfill))
            self.nfill += 1

    def interleave(self, games, every):
        """Appends the games' events in turns, every-1 filler leaves before
        each; returns each game's [(index, leaf)]."""
        out = [[] for _ in games]
        pos = [0] * len(games)
        while any(pos[g] < len(evs) for g, evs in enumerate(games)):
            for g, evs in enumerate(games):
                if pos[g] < len(evs):
                    self.fill(every - 1)
                    out[g].append((self.append(evs[pos[g]]), evs[pos[g]]))
                    pos[g] += 1
        return out

    def checkpoint(self, size=None, cosigners=()):
        size = len(self.leaves) if size is None else size
        text = checkpoint_text(self.key.name, size, self.tree.root(size))
        note = text + "\n" + self.key.note_line(text)
        for i, w in enumerate(cosigners):
            note += w.cosign_line(text, COSIGNED_AT + i)
        return note, size


def bundle(log, indexed, note, size, evidence=None):
    """The proof bundle of a game's (index, leaf) list, at a checkpoint."""
    if evidence is None:
        evidence = evidence_of(replay([parse_event(l) for _, l in indexed]))
    hashes, table, entries = [], {}, []
    for idx, leaf in indexed:
        refs = []
        for x in log.tree.proof(idx, size):
            if x not in table:
                table[x] = len(hashes)
                hashes.append(x)
            refs.append(table[x])
        entries.append({"index": idx, "leaf": leaf, "proof": refs})
    ev = json.loads(json.dumps(evidence))
    ev["log"] = {"checkpoint": note, "hashes": [h(x) for x in hashes], "entries": entries}
    return ev


def pretty_bundle(ev):
    """One member per line; rolls, hashes and entries one per line."""
    def c(v):
        return json.dumps(v, ensure_ascii=False, separators=(", ", ": "))
    lines = []
    for k, v in ev.items():
        if k == "rolls" and v:
            lines.append(' %s: [\n%s\n ]' % (c(k), ",\n".join("  " + c(r) for r in v)))
        elif k == "log":
            inner = []
            for k2, v2 in v.items():
                if k2 in ("hashes", "entries") and isinstance(v2, list) and v2:
                    inner.append(' %s: [\n%s\n  ]' % (c(k2), ",\n".join("   " + c(x) for x in v2)))
                else:
                    inner.append(' %s: %s' % (c(k2), c(v2)))
            lines.append(' "log": {\n' + ",\n".join(" " + x for x in inner) + "\n }")
        else:
            lines.append(" %s: %s" % (c(k), c(v)))
    return ("{\n" + ",\n".join(lines) + "\n}\n").encode("utf-8")


def copy(ev):
    return json.loads(json.dumps(ev))


def tlog_proof(leaf, index, proof, note, extra=True):
    out = "c2sp.org/tlog-proof@v1\n"
    if extra:
        out += "extra %s\n" % b64(leaf.encode())
    out += "index %d\n" % index
    out += "".join(b64(x) + "\n" for x in proof)
    return (out + "\n" + note).encode("utf-8")


def build_bundles(V):
    emitter = Key(EMITTER, label_bytes("keys/emitter"))
    impostor = Key(EMITTER, label_bytes("keys/impostor"))  # same emitter name, another key
    other_emitter = Key("tavla-west", label_bytes("keys/other-emitter"))
    logk = Key(ORIGIN, label_bytes("keys/log"))
    wrong_logk = Key(ORIGIN, label_bytes("keys/not-the-log"))
    other_logk = Key("other.zarlog.example", label_bytes("keys/other-log"))
    witnesses = [Key("w%d.witness.example" % i, label_bytes("keys/witness/%d" % i), SIG_COSIGN_V1) for i in range(3)]
    ek = [emitter.vkey()]

    V.policy("witnesses-2-of-3", "# Two of the three witnesses must cosign.\n" +
             "".join("witness w%d %s\n" % (i, w.vkey()) for i, w in enumerate(witnesses)) +
             "group q 2 w0 w1 w2\nquorum q\n")
    V.policy("witnesses-all-3", "".join("witness w%d %s\n" % (i, w.vkey()) for i, w in enumerate(witnesses)) +
             "group q all w0 w1 w2\nquorum q\n")
    V.policy("log-and-witnesses", "log %s\n" % logk.vkey() +
             "".join("witness w%d %s\n" % (i, w.vkey()) for i, w in enumerate(witnesses)) +
             "group q any w0 w1 w2\nquorum q\n")

    # One log with five games interleaved with each other and with another
    # platform's events; the checkpoint is cosigned by two of the witnesses.
    badsig = tav_game(emitter, "bundle-badsig", 4)
    c = json.loads(badsig[0])  # the commit, signed by a key that is not the emitter's
    del c["sig"]
    from bundle_ref import SIG_CONTEXT
    from dice_ref import cjson
    c["sig"] = impostor.sign(SIG_CONTEXT + cjson(c).encode()).hex()
    badsig[0] = cjson(c)
    games = [tav_game(emitter, "bundle-tav", 10), anc_game(emitter, "bundle-anc", 8), pr_game(emitter, "bundle-pr", 4),
             badsig, tav_game(emitter, "bundle-failed", 6, reveal_seed=label_bytes("bundle-failed/not-the-seed"))]
    log = Log(logk)
    log.fill(5)
    tav, anc, pr, bad, failed = log.interleave(games, 3)
    log.fill(7)
    note, size = log.checkpoint(cosigners=witnesses[:2])
    lk = logk.vkey()

    b_tav = bundle(log, tav, note, size)
    V.add("valid", "bundle-tavlarena-10-rolls", None, [], log_key=lk, emitter_keys=ek, raw=pretty_bundle(b_tav),
          note="a tavlarena-v1 game interleaved with other games in a log of %d leaves; log and emitter keys given" % size)
    V.add("valid", "bundle-tavlarena-no-keys", None, [], raw=pretty_bundle(b_tav),
          note="the same bundle without --log-key: valid, but the summary says the log's signature was not checked")
    V.add("valid", "bundle-anchored-8-rolls", None, [], log_key=lk, emitter_keys=ek, raw=pretty_bundle(bundle(log, anc, note, size)),
          note="an anchored-v1 game: the beacon is a logged event, verified again")
    V.add("valid", "bundle-per-roll-4-rolls", None, [], log_key=lk, emitter_keys=ek, raw=pretty_bundle(bundle(log, pr, note, size)))
    V.add("valid", "bundle-witness-policy-met", None, [], log_key=lk, policy="witnesses-2-of-3", raw=pretty_bundle(b_tav),
          note="two of three witnesses cosigned; the policy asks for two")
    V.add("valid", "bundle-log-key-from-policy", None, [], policy="log-and-witnesses", raw=pretty_bundle(b_tav),
          note="no --log-key: the policy's log line checks the checkpoint signature")
    from dice_ref import seal_code
    V.add("valid", "bundle-expected-seal-code", None, [], log_key=lk,
          expected=seal_code(bytes.fromhex(b_tav["commitment"])), raw=pretty_bundle(b_tav),
          note="--expected-commitment as the seal code of the logged commitment")

    # Mutations of the tavlarena-v1 bundle, one thing at a time.
    m = copy(b_tav)
    e = m["log"]["entries"]
    last = e[0]["proof"][-1]
    i = next(i for i in range(1, len(e)) if sum(last in x["proof"] for x in e) > 1 and e[i]["proof"][-1] == last)
    e[i]["proof"].pop()
    V.add("invalid", "bundle-truncated-proof", None, ["log-inclusion"], log_key=lk, raw=pretty_bundle(m),
          note="log.entries[%d] lost the last hash of its inclusion proof (the hash stays in use by other entries)" % i)
    m = copy(b_tav)
    k = m["log"]["entries"][4]["proof"][1]
    m["log"]["hashes"][k] = h(bytes([b ^ (1 if j == 0 else 0) for j, b in enumerate(bytes.fromhex(m["log"]["hashes"][k]))]))
    V.add("invalid", "bundle-flipped-proof-hash", None, ["log-inclusion"], log_key=lk, raw=pretty_bundle(m),
          note="one bit of log.hashes[%d] flipped" % k)
    later = Log(logk)
    for l in log.leaves:
        later.append(l)
    later.fill(40)
    later_note, _ = later.checkpoint()
    m = copy(b_tav)
    m["log"]["checkpoint"] = later_note
    V.add("invalid", "bundle-swapped-checkpoint", None, ["log-inclusion"], log_key=lk, raw=pretty_bundle(m),
          note="the checkpoint of the same log 40 leaves later, correctly signed: the proofs are for the earlier tree")
    other = Log(other_logk)
    other.fill(size)
    other_note, _ = other.checkpoint()
    m = copy(b_tav)
    m["log"]["checkpoint"] = other_note
    V.add("invalid", "bundle-swapped-checkpoint-other-log", None, ["log-inclusion", "log-signature"], log_key=lk,
          raw=pretty_bundle(m), note="a checkpoint of another log of the same size, signed by that log's key")
    V.add("invalid", "bundle-wrong-log-key", None, ["log-signature"], log_key=wrong_logk.vkey(), raw=pretty_bundle(b_tav),
          note="--log-key of the same name but another key")
    m = copy(b_tav)
    e = m["log"]["entries"]
    i = next(i for i, x in enumerate(e) if json.loads(x["leaf"])["type"] == "roll" and json.loads(x["leaf"])["body"]["kind"] == "turn")
    ev = json.loads(e[i]["leaf"])
    ev["body"]["dice"][0] = other_face(ev["body"]["dice"][0])
    e[i]["leaf"] = cjson(ev)
    V.add("invalid", "bundle-leaf-tampered", None, ["log-agreement", "log-inclusion", "rolls"], log_key=lk,
          raw=pretty_bundle(m), note="the dice of the roll in log.entries[%d] changed: not in the tree, and not the seed's" % i)
    m = copy(b_tav)
    m["rolls"][7]["dice"][1] = other_face(m["rolls"][7]["dice"][1])
    V.add("invalid", "bundle-top-level-disagrees", None, ["log-agreement"], log_key=lk, raw=pretty_bundle(m),
          note="top-level roll 7 differs from the logged roll; the dice checks use the logged one and pass")
    V.add("invalid", "bundle-missing-entry", None, ["log-order"], log_key=lk,
          raw=pretty_bundle(bundle(log, tav[:6] + tav[7:], note, size, evidence=b_tav)),
          note="the event seq 6 left out (the proofs remade for the rest)")
    V.add("invalid", "bundle-missing-final-event", None, ["log-order"], log_key=lk,
          raw=pretty_bundle(bundle(log, tav[:-1], note, size, evidence=b_tav)), note="the reveal left out")
    m = copy(b_tav)
    e = m["log"]["entries"]
    e[4], e[5] = e[5], e[4]
    V.add("invalid", "bundle-reordered-entries", None, ["log-order"], log_key=lk, raw=pretty_bundle(m),
          note="entries 4 and 5 swapped, each with its own proof")
    foreign = sorted(tav + [pr[3]])
    V.add("invalid", "bundle-extra-foreign-entry", None, ["log-order"], log_key=lk,
          raw=pretty_bundle(bundle(log, foreign, note, size, evidence=b_tav)),
          note="an event of another game of the log (included, with its proof) among the entries")
    V.add("invalid", "bundle-bad-emitter-signature", None, ["log-emitter-signatures"], log_key=lk, emitter_keys=ek,
          raw=pretty_bundle(bundle(log, bad, note, size)),
          note="the commit in the log is signed by a key that is not the emitter's --emitter-key")
    V.add("valid", "bundle-bad-emitter-signature-unchecked", None, [], log_key=lk,
          raw=pretty_bundle(bundle(log, bad, note, size)),
          note="the same bundle without --emitter-key: the signatures are not checked (and the report says so)")
    V.add("invalid", "bundle-emitter-key-of-another-emitter", None, ["log-emitter-signatures"], log_key=lk,
          emitter_keys=[other_emitter.vkey()], raw=pretty_bundle(b_tav), note="--emitter-key names another emitter")
    V.add("invalid", "bundle-witness-policy-unmet", None, ["log-witnesses"], log_key=lk, policy="witnesses-all-3",
          raw=pretty_bundle(b_tav), note="two of three witnesses cosigned; the policy asks for all three")
    bare, _ = log.checkpoint()
    V.add("invalid", "bundle-not-yet-witnessed", None, ["log-witnesses"], log_key=lk, policy="witnesses-2-of-3",
          raw=pretty_bundle(bundle(log, tav, bare, size)),
          note="the checkpoint carries the log's signature alone, as a game's first bundle does before its log has it witnessed")
    V.add("invalid", "bundle-failed-game", None, ["commitment", "rolls"], log_key=lk, emitter_keys=ek,
          raw=pretty_bundle(bundle(log, failed, note, size)),
          note="an honest bundle of a game whose revealed seed is not the committed one: the log checks pass")

    # Logs that the ledger would never have written.
    car = Log(logk)
    g = tav_game(emitter, "bundle-commit-after-roll", 6)
    order = [1, 2, 3, 4, 0] + list(range(5, len(g)))
    idx = {}
    for s in order:
        car.fill(2)
        idx[s] = car.append(g[s])
    car_note, car_size = car.checkpoint()
    indexed = sorted((idx[s], g[s]) for s in range(len(g)))
    V.add("invalid", "bundle-commit-after-roll", None, ["log-order"], log_key=lk,
          raw=pretty_bundle(bundle(car, indexed, car_note, car_size, evidence=evidence_of(replay([parse_event(l) for l in g])))),
          note="a log in which the commit (seq 0) was appended after the contributions and the first rolls")
    tab = Log(logk)
    g = anc_game(emitter, "bundle-token-after-beacon", 4, token_after_beacon=True)
    [ig] = tab.interleave([g], 2)
    tab_note, tab_size = tab.checkpoint()
    V.add("invalid", "bundle-token-after-beacon", None, ["log-order"], log_key=lk,
          raw=pretty_bundle(bundle(tab, ig, tab_note, tab_size)),
          note="an anchored-v1 log with a player's token after the drand beacon")

    # Malformed log members: exit 2, naming the field.
    def bad(name, f, note=""):
        m = copy(b_tav)
        f(m["log"])
        V.add("malformed", name, None, ["format"], log_key=lk, raw=pretty_bundle(m), note=note)
    bad("bundle-checkpoint-missing", lambda l: l.pop("checkpoint"))
    bad("bundle-checkpoint-not-a-note", lambda l: l.update(checkpoint=l["checkpoint"].split("\n\n")[0] + "\n"),
        note="the checkpoint text without its signature lines")
    bad("bundle-hash-not-hex", lambda l: l["hashes"].__setitem__(2, l["hashes"][2].upper()))
    bad("bundle-duplicate-hash", lambda l: l["hashes"].append(l["hashes"][0]))
    bad("bundle-unused-hash", lambda l: l["hashes"].append(h(sha256(b"unused"))))
    bad("bundle-proof-ref-out-of-range", lambda l: l["entries"][3]["proof"].__setitem__(2, len(l["hashes"])))
    bad("bundle-proof-ref-negative", lambda l: l["entries"][3]["proof"].__setitem__(0, -1))
    bad("bundle-entries-empty", lambda l: l.update(entries=[], hashes=[]))
    bad("bundle-index-negative", lambda l: l["entries"][1].update(index=-1))
    bad("bundle-index-string", lambda l: l["entries"][1].update(index="7"))
    bad("bundle-leaf-not-string", lambda l: l["entries"][2].update(leaf=json.loads(l["entries"][2]["leaf"])))
    bad("bundle-leaf-empty", lambda l: l["entries"][2].update(leaf=""))
    bad("bundle-proof-too-long", lambda l: l["entries"][0].update(proof=l["entries"][0]["proof"] * 11))
    bad("bundle-hashes-missing", lambda l: l.pop("hashes"))

    # tlog-proof files of single events (from the tavlarena-v1 bundle).
    entries, hashes = b_tav["log"]["entries"], [bytes.fromhex(x) for x in b_tav["log"]["hashes"]]

    def tp(i, **kw):
        e = entries[i]
        return tlog_proof(kw.get("leaf", e["leaf"]), e["index"], [hashes[k] for k in e["proof"]], note, kw.get("extra", True))
    roll = next(i for i, x in enumerate(entries) if json.loads(x["leaf"])["type"] == "roll")
    V.add("valid", "tlog-proof-commit", None, [], log_key=lk, emitter_keys=ek, raw=tp(0), ext="tlog-proof",
          note="the commit of the tavlarena-v1 bundle as a C2SP tlog-proof, the leaf in the extra line")
    V.add("valid", "tlog-proof-roll", None, [], log_key=lk, policy="witnesses-2-of-3", raw=tp(roll), ext="tlog-proof")
    V.add("invalid", "tlog-proof-without-log-key", None, ["log-signature"], raw=tp(0), ext="tlog-proof",
          note="without --log-key an inclusion proof shows nothing: log-signature fails")
    V.add("invalid", "tlog-proof-wrong-log-key", None, ["log-signature"], log_key=wrong_logk.vkey(), raw=tp(0),
          ext="tlog-proof")
    t = json.loads(entries[roll]["leaf"])
    t["body"]["dice"][1] = other_face(t["body"]["dice"][1])
    V.add("invalid", "tlog-proof-extra-tampered", None, ["log-inclusion"], log_key=lk, raw=tp(roll, leaf=cjson(t)),
          ext="tlog-proof", note="the dice in the extra line changed")
    V.add("malformed", "tlog-proof-no-extra", None, ["format"], log_key=lk, raw=tp(0, extra=False), ext="tlog-proof")
    V.add("malformed", "tlog-proof-extra-not-event", None, ["format"], log_key=lk, raw=tp(0, leaf="{}"), ext="tlog-proof")

    # Plain evidence files with the bundle flags: nothing to check them on.
    worked = [v for v in V.manifest if v["name"] == "tavlarena-worked-example"][0]
    raw = V.files[worked["file"]]
    V.add("invalid", "tavlarena-witness-policy-without-log", None, ["log-witnesses"], policy="witnesses-2-of-3", raw=raw,
          note="--witness-policy given but the file has no log member")
    V.add("invalid", "tavlarena-emitter-key-without-log", None, ["log-emitter-signatures"], emitter_keys=ek, raw=raw,
          note="--emitter-key given but the file has no log member")
