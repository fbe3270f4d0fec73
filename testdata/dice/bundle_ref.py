"""An independent reference implementation of zarlog's proof bundles in
Python 3 (standard library only), written from docs/FORMATS.md (§1 events,
§2 the log, §3 proof bundles), docs/SCHEMES.md §8 (the checks) and the C2SP
specifications (signed-note, tlog-checkpoint, tlog-cosignature, tlog-proof,
tlog-policy), not from the Go code:

  - keys, signed notes, checkpoints and witness cosignatures (Ed25519 from
    ed25519_ref.py);
  - the RFC 6962 Merkle tree, inclusion proofs and their verification
    (RFC 9162 §2.1.3.2);
  - zarlog events: canonical JSON leaves and their signatures;
  - a small replay of a game's events (the rules of FORMATS.md §1.4 that
    matter for the dice) that derives the evidence the leaves give;
  - the verifier of proof bundles and of tlog-proof files that gen.py uses
    to compute every bundle vector's expected exit code and failing checks.
"""

import base64
import json
import re

from dice_ref import (BEACONS, InputError, MAX_SAFE, QUICKNET, cjson, load_strict, parse_evidence, parse_time,
                      round_time, sha256, verify)
import ed25519_ref as ed

# ---------------------------------------------------------------------------
# Keys and signed notes (C2SP signed-note, tlog-checkpoint, tlog-cosignature)

SIG_ED25519 = 0x01
SIG_COSIGN_V1 = 0x04


def b64(b):
    return base64.b64encode(b).decode()


class Key:
    """An Ed25519 key with a signed-note name: type 0x01 for logs and
    emitters, 0x04 (cosignature/v1) for witnesses."""

    def __init__(self, name, seed, typ=SIG_ED25519):
        self.name, self.seed, self.typ = name, seed, typ
        self.pub = ed.public_key(seed)
        self.id = sha256(name.encode() + b"\n" + bytes([typ]) + self.pub)[:4]

    def vkey(self):
        return "%s+%s+%s" % (self.name, self.id.hex(), b64(bytes([self.typ]) + self.pub))

    def sign(self, msg):
        return ed.sign(self.seed, msg)

    def note_line(self, text):
        """A signature line of a signed note over text."""
        assert self.typ == SIG_ED25519
        return "— %s %s\n" % (self.name, b64(self.id + self.sign(text.encode())))

    def cosign_line(self, text, timestamp):
        """A tlog-cosignature/v1 line: the signature covers the header line,
        the timestamp line and the checkpoint text."""
        assert self.typ == SIG_COSIGN_V1
        msg = ("cosignature/v1\ntime %d\n" % timestamp).encode() + text.encode()
        return "— %s %s\n" % (self.name, b64(self.id + timestamp.to_bytes(8, "big") + self.sign(msg)))


def parse_vkey(s):
    """name+hash+base64(type ‖ key) -> (name, id, type, public key)."""
    parts = s.split("+", 2)
    if len(parts) != 3 or not re.fullmatch(r"[0-9a-f]{8}", parts[1]):
        raise ValueError("not a verifier key: %r" % s)
    raw = base64.b64decode(parts[2], validate=True)
    name, kid, typ, pub = parts[0], bytes.fromhex(parts[1]), raw[0], raw[1:]
    if len(pub) != 32 or sha256(name.encode() + b"\n" + bytes([typ]) + pub)[:4] != kid:
        raise ValueError("bad verifier key %r" % s)
    return name, kid, typ, pub


def checkpoint_text(origin, size, root):
    return "%s\n%d\n%s\n" % (origin, size, b64(root))


def split_note(note):
    """A signed note -> (text, [(name, signature bytes)]); raises InputError."""
    if len(note.encode()) > 64 << 10 or any(ord(c) < 0x20 and c != "\n" for c in note):
        raise InputError("not a note")
    i = note.rfind("\n\n")
    if i < 0:
        raise InputError("note without signatures")
    text, sigs = note[:i + 1], note[i + 2:]
    if not sigs.endswith("\n"):
        raise InputError("note without signature lines")
    out = []
    for line in sigs[:-1].split("\n"):
        m = re.fullmatch(r"— ([^\s+]+) (\S+)", line)
        if not m:
            raise InputError("bad signature line %r" % line)
        try:
            raw = base64.b64decode(m.group(2), validate=True)
        except ValueError:
            raise InputError("signature not base64")
        if len(raw) < 5:
            raise InputError("signature too short")
        out.append((m.group(1), raw))
    return text, out


def parse_checkpoint(text):
    """Checkpoint text -> (origin, size, root); raises InputError."""
    if not text.endswith("\n"):
        raise InputError("checkpoint without final newline")
    lines = text[:-1].split("\n")
    if len(lines) < 3 or any(l == "" for l in lines):
        raise InputError("checkpoint lines")
    if not re.fullmatch(r"0|[1-9][0-9]*", lines[1]) or int(lines[1]) >= 2**64:
        raise InputError("checkpoint size")
    try:
        root = base64.b64decode(lines[2], validate=True)
    except ValueError:
        raise InputError("checkpoint root")
    if len(root) != 32 or b64(root) != lines[2]:
        raise InputError("checkpoint root")
    return lines[0], int(lines[1]), root


def note_signed_by(note, vkey):
    """Whether the note carries a valid Ed25519 signature by vkey (a type
    0x01 key named like the checkpoint's origin)."""
    name, kid, typ, pub = parse_vkey(vkey)
    text, sigs = split_note(note)
    origin, _, _ = parse_checkpoint(text)
    if typ != SIG_ED25519 or origin != name:
        return False
    ok = False
    for n, raw in sigs:
        if n == name and raw[:4] == kid:
            if not ed.verify(pub, text.encode(), raw[4:]):
                return False  # a known key's bad signature: reject the note
            ok = True
    return ok


def valid_cosigners(note, witnesses):
    """The names of the witnesses (name -> vkey) with a valid cosignature/v1
    on the note; None if one of them has an invalid one."""
    text, sigs = split_note(note)
    good = set()
    for wname, vkey in witnesses.items():
        name, kid, typ, pub = parse_vkey(vkey)
        for n, raw in sigs:
            if n != name or raw[:4] != kid:
                continue
            ts = raw[4:12]
            msg = ("cosignature/v1\ntime %d\n" % int.from_bytes(ts, "big")).encode() + text.encode()
            if len(raw) != 4 + 8 + 64 or not ed.verify(pub, msg, raw[12:]):
                return None
            good.add(wname)
    return good


def parse_policy(text):
    """A C2SP tlog-policy (the subset the vectors use) -> (log vkeys,
    witnesses name -> vkey, quorum evaluator)."""
    logs, witnesses, groups, quorum = [], {}, {}, None
    for line in text.split("\n"):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        if f[0] == "log":
            logs.append(f[1])
        elif f[0] == "witness":
            witnesses[f[1]] = f[2]
        elif f[0] == "group":
            members = f[3:]
            k = {"all": len(members), "any": 1}.get(f[2]) or int(f[2])
            groups[f[1]] = (k, members)
        elif f[0] == "quorum":
            quorum = f[1]

    def satisfied(name, signed):
        if name in witnesses:
            return name in signed
        k, members = groups[name]
        return sum(1 for m in members if satisfied(m, signed)) >= k

    return logs, witnesses, (lambda signed: quorum == "none" or satisfied(quorum, signed))


# ---------------------------------------------------------------------------
# The RFC 6962 Merkle tree

def leaf_hash(leaf):
    return sha256(b"\x00" + leaf)


def node_hash(left, right):
    return sha256(b"\x01" + left + right)


def _split(n):
    k = 1
    while k * 2 < n:
        k *= 2
    return k


class Tree:
    """A Merkle tree over leaf hashes, with memoized subtree hashes."""

    def __init__(self):
        self.leaves = []  # leaf hashes
        self._memo = {}

    def append(self, leaf):
        self.leaves.append(leaf_hash(leaf))
        return len(self.leaves) - 1

    def mth(self, lo, hi):
        if hi - lo == 1:
            return self.leaves[lo]
        if (lo, hi) not in self._memo:
            k = _split(hi - lo)
            self._memo[(lo, hi)] = node_hash(self.mth(lo, lo + k), self.mth(lo + k, hi))
        return self._memo[(lo, hi)]

    def root(self, size):
        return self.mth(0, size) if size else sha256(b"")

    def proof(self, m, size):
        """RFC 6962 PATH(m, D[size]): from the leaf's sibling up."""
        def path(m, lo, hi):
            if hi - lo == 1:
                return []
            k = _split(hi - lo)
            if m < lo + k:
                return path(m, lo, lo + k) + [self.mth(lo + k, hi)]
            return path(m, lo + k, hi) + [self.mth(lo, lo + k)]
        return path(m, 0, size)


def check_inclusion(index, size, lh, proof, root):
    """RFC 9162 §2.1.3.2."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, lh
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


# ---------------------------------------------------------------------------
# Events (FORMATS.md §1)

BINDING = {"commit", "end", "reveal", "roll-commit", "roll-reveal"}
SIG_CONTEXT = b"zarlog-event-v1\n"


def iso_ms(ms):
    """Unix milliseconds -> YYYY-MM-DDTHH:MM:SS.mmmZ."""
    import datetime
    t = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (ms % 1000)


def make_event(key, scheme, game, seq, typ, body, ms, emitter=None):
    """The canonical leaf of an event; binding events signed by key."""
    ev = {"v": 1, "id": "%s:%d" % (game, seq), "type": typ, "scheme": scheme, "game": game, "seq": seq,
          "emitter": emitter or key.name, "time": iso_ms(ms), "body": body}
    if typ in BINDING:
        ev["sig"] = key.sign(SIG_CONTEXT + cjson(ev).encode()).hex()
    return cjson(ev)


def parse_event(leaf):
    """A leaf -> the event as a dict; raises ValueError if it is not a
    canonical event (envelope members exactly, sig exactly on binding types)."""
    v = json.loads(leaf)
    if not isinstance(v, dict) or cjson(v) != leaf:
        raise ValueError("not canonical JSON")
    want = {"v", "id", "type", "scheme", "game", "seq", "emitter", "time", "body"}
    if v.get("type") in BINDING:
        want.add("sig")
    if set(v) != want or v["v"] != 1 or not isinstance(v["body"], dict):
        raise ValueError("not an event")
    if "sig" in v and not re.fullmatch(r"[0-9a-f]{128}", v["sig"]):
        raise ValueError("bad sig")
    return v


def event_signed_by(ev, vkey):
    _, _, _, pub = parse_vkey(vkey)
    body = {k: x for k, x in ev.items() if k != "sig"}
    return ed.verify(pub, SIG_CONTEXT + cjson(body).encode(), bytes.fromhex(ev["sig"]))


# ---------------------------------------------------------------------------
# Replaying a game's events into its evidence

class Refused(Exception):
    pass


def want_kind(rolls, opening):
    want = "opening"
    for r in rolls:
        d = r["dice"]
        if want == "opening" and d[0] != d[1]:
            want = "reroll" if opening == "turkish-reroll" else "turn"
        elif want == "reroll":
            want = "turn"
    return want


def replay(evs):
    """Applies a game's events in log order as an auditor does (no clock
    checks) and returns the state; raises Refused for an event the game's
    rules do not allow."""
    g = None
    for ev in evs:
        t, b = ev["type"], ev["body"]
        if t == "commit":
            if g is not None:
                raise Refused("second commit")
            g = {"scheme": ev["scheme"], "game": ev["game"], "emitter": ev["emitter"], "settings": b["settings"],
                 "contrib": [None, None], "rolls": [], "beacon": None, "moves": [], "end": False, "closed": False,
                 "seed": None, "records": [], "pending": None}
            if ev["scheme"] != "per-roll-v1":
                g["opening"] = b["settings"].get("opening", "western")
                if g["opening"] not in ("western", "turkish-reroll"):
                    raise Refused("opening")
            if ev["scheme"] == "tavlarena-v1":
                g.update(commitment=b["commitment"], seats=b["seats"])
            elif ev["scheme"] == "anchored-v1":
                if bytes.fromhex(b["anchor"]["chain"]) != QUICKNET:
                    raise Refused("unknown chain")
                if round_time(b["anchor"]["round"]) * 10**9 <= parse_time(b["sealedAt"]):
                    raise Refused("round not after sealedAt")
                g.update(anchor=b["anchor"], fingerprint=b["fingerprint"], gameNo=b["gameNo"], matchId=b["matchId"],
                         sealedAt=b["sealedAt"])
            continue
        if g is None or ev["game"] != g["game"] or ev["scheme"] != g["scheme"] or ev["emitter"] != g["emitter"]:
            raise Refused("not this game's event")
        if g["closed"] or (g["end"] and t != "reveal"):
            raise Refused("after the end")
        if t == "contribution":
            seat = b["seat"]
            if g["contrib"][seat] is not None:
                raise Refused("seat contributed twice")
            g["contrib"][seat] = b["contribution"] if g["scheme"] == "tavlarena-v1" else b["token"]
        elif t == "beacon":
            a = g["anchor"]
            if g["beacon"] or b["chain"] != a["chain"] or b["round"] != a["round"] or b["round"] not in BEACONS:
                raise Refused("beacon")
            if BEACONS[b["round"]][0] != b["signature"] or sha256(bytes.fromhex(b["signature"])).hex() != b["randomness"]:
                raise Refused("beacon does not verify")
            g["beacon"] = b
        elif t == "roll":
            if None in g["contrib"] or (g["scheme"] == "anchored-v1" and not g["beacon"]):
                raise Refused("roll too early")
            if b["n"] != len(g["rolls"]) or b["kind"] != want_kind(g["rolls"], g["opening"]):
                raise Refused("bad sequence")
            g["rolls"].append({"n": b["n"], "dice": b["dice"], "kind": b["kind"]})
        elif t == "move":
            if g["scheme"] == "per-roll-v1":
                if b["n"] >= len(g["records"]):
                    raise Refused("move of an unrevealed roll")
            else:
                if b["n"] >= len(g["rolls"]):
                    raise Refused("move of an unlogged roll")
                r = g["rolls"][b["n"]]
                if r["kind"] == "opening" and (r["dice"][0] == r["dice"][1] or g["opening"] == "turkish-reroll"):
                    raise Refused("move of an unplayed roll")
            if g["moves"] and b["n"] <= g["moves"][-1]:
                raise Refused("move out of order")
            g["moves"].append(b["n"])
        elif t == "end":
            if g["pending"]:
                raise Refused("end with a roll pending")
            g["end"] = True
            g["closed"] = g["scheme"] == "per-roll-v1"
        elif t == "reveal":
            if not g["end"]:
                raise Refused("reveal before the end")
            g["seed"], g["closed"] = b["seed"], True
        elif t == "roll-commit":
            if g["pending"] or any(r["rollId"] == b["rollId"] for r in g["records"]):
                raise Refused("roll-commit")
            g["pending"] = {"rollId": b["rollId"], "commitment": b["commitment"], "stage": 1}
        elif t == "roll-second":
            pr = g["pending"]
            if not pr or pr["rollId"] != b["rollId"] or pr["stage"] != 1:
                raise Refused("roll-second")
            pr.update(second=b["second"], secondFrom=b["secondFrom"], stage=2)
        elif t == "roll-reveal":
            pr = g["pending"]
            if not pr or pr["rollId"] != b["rollId"] or pr["stage"] != 2:
                raise Refused("roll-reveal")
            g["records"].append({"rollId": pr["rollId"], "commitment": pr["commitment"], "seed": b["seed"],
                                 "second": pr["second"], "secondFrom": pr["secondFrom"], "dice": b["dice"]})
            g["pending"] = None
        else:
            raise Refused("unknown type")
    return g


def evidence_of(g):
    """The dice-proof-v1 evidence (without log) of a closed game; raises
    Refused if the game cannot have one."""
    if g is None or not g["closed"]:
        raise Refused("not over")
    s = g["settings"]
    if s.get("opening", "western") not in ("western", "turkish-reroll") or \
            s.get("opponent", "human") not in ("human", "computer"):
        raise Refused("settings")
    ev = {"format": "dice-proof-v1", "scheme": g["scheme"]}
    if g["scheme"] == "tavlarena-v1":
        ev.update(gameId=g["game"], settings=s, seats=g["seats"], commitment=g["commitment"], seed=g["seed"],
                  contributions=g["contrib"], rolls=g["rolls"])
    elif g["scheme"] == "anchored-v1":
        if not g["beacon"]:
            raise Refused("no beacon")
        b = g["beacon"]
        ev.update(matchId=g["matchId"], gameNo=g["gameNo"], settings=s, tokens=g["contrib"],
                  fingerprint=g["fingerprint"], seed=g["seed"],
                  anchor={"chain": b["chain"], "round": b["round"], "signature": b["signature"],
                          "randomness": b["randomness"]},
                  sealedAt=g["sealedAt"], rolls=g["rolls"])
    else:
        ev.update(matchId=g["game"], settings=s, rolls=g["records"])
    return ev


def normal(ev):
    """The fields of an evidence file the verifier compares, normalized:
    known members only, times as instants."""
    keys = {"tavlarena-v1": ["gameId", "settings", "seats", "commitment", "seed", "contributions"],
            "anchored-v1": ["matchId", "gameNo", "settings", "tokens", "fingerprint", "seed", "anchor", "sealedAt"],
            "per-roll-v1": ["matchId", "settings"]}[ev["scheme"]]
    out = {k: ev.get(k) for k in keys}
    if "sealedAt" in out and out["sealedAt"] is not None:
        out["sealedAt"] = str(parse_time(out["sealedAt"]))
    if "anchor" in out and out["anchor"] is not None:
        out["anchor"] = {k: out["anchor"][k] for k in ("chain", "round", "signature", "randomness")}
    rk = ["rollId", "commitment", "seed", "second", "secondFrom", "dice"] if ev["scheme"] == "per-roll-v1" else \
        ["n", "dice", "kind"]
    out["rolls"] = [{k: r[k] for k in rk} for r in ev["rolls"]]
    return cjson(out)


# ---------------------------------------------------------------------------
# The bundle verifier

HEX64 = re.compile(r"^[0-9a-f]{64}$")


def parse_log(log):
    """The log member -> (note, (origin, size, root), hashes, entries);
    raises InputError like the strict parser."""
    note = log.get("checkpoint")
    if not isinstance(note, str):
        raise InputError("log.checkpoint")
    cp = parse_checkpoint(split_note(note)[0])
    hashes = log.get("hashes")
    if not isinstance(hashes, list) or not all(isinstance(x, str) and HEX64.match(x) for x in hashes):
        raise InputError("log.hashes")
    if len(set(hashes)) != len(hashes):
        raise InputError("duplicate hash")
    entries = log.get("entries")
    if not isinstance(entries, list) or not entries:
        raise InputError("log.entries")
    used = set()
    out = []
    for e in entries:
        if not isinstance(e, dict):
            raise InputError("entry")
        i, leaf, proof = e.get("index"), e.get("leaf"), e.get("proof")
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i <= MAX_SAFE:
            raise InputError("index")
        if not isinstance(leaf, str) or not 1 <= len(leaf.encode()) <= 65535:
            raise InputError("leaf")
        if not isinstance(proof, list) or len(proof) > 64 or \
                not all(isinstance(k, int) and not isinstance(k, bool) and 0 <= k < len(hashes) for k in proof):
            raise InputError("proof")
        used.update(proof)
        out.append((i, leaf, proof))
    if len(used) != len(hashes):
        raise InputError("unused hash")
    return note, cp, [bytes.fromhex(x) for x in hashes], out


def signature_status(note, log_key, policy):
    """log-signature: 'pass', 'fail' or 'skipped'."""
    if log_key is not None:
        return "pass" if note_signed_by(note, log_key) else "fail"
    if policy is not None and policy[0]:
        return "pass" if any(note_signed_by(note, k) for k in policy[0]) else "fail"
    return "skipped"


def witness_status(note, policy):
    if policy is None:
        return "skipped"
    good = valid_cosigners(note, policy[1])
    return "pass" if good is not None and policy[2](good) else "fail"


def emitter_status(evs, emitter_keys):
    if emitter_keys is None:
        return "skipped"
    keys = {}
    for k in emitter_keys:
        keys.setdefault(parse_vkey(k)[0], []).append(k)
    for ev in evs:
        if ev is None:
            continue
        if ev["emitter"] not in keys:
            return "fail"
        if "sig" in ev and not any(event_signed_by(ev, k) for k in keys[ev["emitter"]]):
            return "fail"
    return "pass"


def order_ok(entries, evs):
    if any(entries[i][0] <= entries[i - 1][0] for i in range(1, len(entries))):
        return False
    if None in evs:
        return False
    commits = [i for i, ev in enumerate(evs) if ev["type"] == "commit"]
    if not commits:
        return False
    game = evs[commits[0]]["game"]
    if any(ev["game"] != game for ev in evs) or commits[0] != 0:
        return False
    beacon = None
    for i, ev in enumerate(evs):
        if ev["seq"] != i:
            return False
        if ev["type"] == "beacon" and beacon is None:
            beacon = i
        if ev["type"] == "contribution" and ev["scheme"] == "anchored-v1" and beacon is not None:
            return False
    final = "end" if evs[-1]["scheme"] == "per-roll-v1" else "reveal"
    return evs[-1]["type"] == final


def verify_bundle(ev, expected, log_key, emitter_keys, policy):
    """The failing checks of a parsed bundle (its log parsed already)."""
    note, (origin, size, root), hashes, entries = ev["_log"]
    fails = set()
    for i, leaf, proof in entries:
        if not check_inclusion(i, size, leaf_hash(leaf.encode()), [hashes[k] for k in proof], root):
            fails.add("log-inclusion")
    if signature_status(note, log_key, policy) == "fail":
        fails.add("log-signature")
    if witness_status(note, policy) == "fail":
        fails.add("log-witnesses")
    evs = []
    for _, leaf, _ in entries:
        try:
            evs.append(parse_event(leaf))
        except ValueError:
            evs.append(None)
    if emitter_status(evs, emitter_keys) == "fail":
        fails.add("log-emitter-signatures")
    if not order_ok(entries, evs):
        fails.add("log-order")
        return fails  # log-agreement and the dice checks are skipped
    try:
        derived = evidence_of(replay(evs))
    except Refused:
        fails.add("log-agreement")
        return fails  # the dice checks are skipped: no values
    if normal(derived) != normal(ev):
        fails.add("log-agreement")
    _, dice_fails = verify(cjson(derived).encode(), expected)
    return fails | set(dice_fails)


def verify_tlog_proof(raw, log_key, emitter_keys, policy):
    """(exit code, failing checks) of a tlog-proof file of one event."""
    try:
        text = raw.decode("utf-8")
        lines = text.split("\n")
        if lines[0] != "c2sp.org/tlog-proof@v1" or not lines[1].startswith("extra "):
            raise InputError("header or no extra")
        extra = base64.b64decode(lines[1][6:], validate=True)
        m = re.fullmatch(r"index (0|[1-9][0-9]*)", lines[2])
        if not m:
            raise InputError("index")
        index = int(m.group(1))
        proof, i = [], 3
        while lines[i] != "":
            h = base64.b64decode(lines[i], validate=True)
            if len(h) != 32 or b64(h) != lines[i]:
                raise InputError("hash")
            proof.append(h)
            i += 1
        note = "\n".join(lines[i + 1:])
        origin, size, root = parse_checkpoint(split_note(note)[0])
        ev = parse_event(extra.decode("utf-8"))
    except (InputError, ValueError, IndexError, UnicodeDecodeError):
        return 2, ["format"]
    fails = set()
    if not check_inclusion(index, size, leaf_hash(extra), proof, root):
        fails.add("log-inclusion")
    if signature_status(note, log_key, policy) != "pass":
        fails.add("log-signature")  # without a key it fails: nothing is shown
    if witness_status(note, policy) == "fail":
        fails.add("log-witnesses")
    if emitter_status([ev], emitter_keys) == "fail":
        fails.add("log-emitter-signatures")
    return (1 if fails else 0), sorted(fails)


def verify_file(raw, expected=None, log_key=None, emitter_keys=None, policy_text=None):
    """(exit code, sorted failing checks) of any file zarlog-verify reads."""
    policy = parse_policy(policy_text) if policy_text is not None else None
    if raw.startswith(b"c2sp.org/tlog-proof@v1\n"):
        return verify_tlog_proof(raw, log_key, emitter_keys, policy)
    try:
        ev = parse_evidence(raw)
        if "log" in ev:
            ev["_log"] = parse_log(ev["log"])
    except InputError:
        return 2, ["format"]
    if "log" not in ev:
        code, fails = verify(raw, expected, log_key)
        fails = set(fails)
        if policy is not None:
            fails.add("log-witnesses")
        if emitter_keys is not None:
            fails.add("log-emitter-signatures")
        return (1 if fails else 0), sorted(fails)
    fails = verify_bundle(ev, expected, log_key, emitter_keys, policy)
    return (1 if fails else 0), sorted(fails)
