"""An independent reference implementation of docs/SCHEMES.md in Python 3
(standard library only): encodings, the three dice schemes, the drand
timing rules, and a small strict verifier of dice-proof-v1 files that
gen.py uses to compute every vector's expected exit code and failing
checks. Written from the text of the contract, not from the Go code."""

import datetime
import hashlib
import hmac
import json
import re
import struct
# ---------------------------------------------------------------------------
# Common encodings (SCHEMES.md §1)

MAX_SAFE = 2**53 - 1
MAX_DEPTH = 64
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def h(b):
    return b.hex()


def sha256(b):
    return hashlib.sha256(b).digest()


def label_bytes(label, n=32):
    """Deterministic pseudo-random bytes for a label."""
    out = b""
    i = 0
    while len(out) < n:
        out += sha256(("zarlog-vectors/%s/%d" % (label, i)).encode())
        i += 1
    return out[:n]


def label_uuid(label):
    b = bytearray(label_bytes("uuid/" + label, 16))
    b[6] = (b[6] & 0x0F) | 0x40  # version 4 shape, for looks only
    b[8] = (b[8] & 0x3F) | 0x80
    return uuid_str(bytes(b))


def seq_bytes(start, n=32):
    return bytes((start + i) & 0xFF for i in range(n))


def u32be(n):
    return struct.pack(">I", n)


def u64be(n):
    return struct.pack(">Q", n)


UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def uuid_bytes(s):
    if not UUID_RE.match(s):
        raise ValueError("not a lowercase UUID: %r" % s)
    return bytes.fromhex(s.replace("-", ""))


def uuid_str(b):
    x = b.hex()
    return "%s-%s-%s-%s-%s" % (x[0:8], x[8:12], x[12:16], x[16:20], x[20:32])


def cjson(v):
    """Canonical JSON: RFC 8785 restricted to safe integers."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        if abs(v) > MAX_SAFE:
            raise ValueError("unsafe integer")
        return str(v)
    if isinstance(v, str):
        return cjson_str(v)
    if isinstance(v, list):
        return "[" + ",".join(cjson(e) for e in v) + "]"
    if isinstance(v, dict):
        keys = sorted(v.keys(), key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(cjson_str(k) + ":" + cjson(v[k]) for k in keys) + "}"
    raise TypeError(type(v))


def cjson_str(s):
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif c < 0x20:
            out.append("\\u%04x" % c)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def settings_hash(settings):
    return sha256(cjson(settings).encode("utf-8"))


def seal_code(commitment):
    v = int.from_bytes(commitment[:5], "big")
    s = "".join(CROCKFORD[(v >> (35 - 5 * i)) & 31] for i in range(8))
    return s[:4] + "-" + s[4:]


def parse_seal(text):
    """Decode a typed seal code: case-insensitive, O->0, I/L->1, hyphens and spaces ignored."""
    v = 0
    n = 0
    for ch in text:
        if ch in "- ":
            continue
        c = ch.upper() if "a" <= ch <= "z" else ch
        c = {"O": "0", "I": "1", "L": "1"}.get(c, c)
        i = CROCKFORD.find(c) if len(c) == 1 and ord(c) < 128 else -1
        if i < 0:
            raise ValueError("bad seal symbol %r" % ch)
        v = (v << 5) | i
        n += 1
    if n != 8:
        raise ValueError("seal code needs 8 symbols")
    return v.to_bytes(5, "big")


def dice_from_blocks(block):
    """block(k) -> 32 bytes. Returns ((die1, die2), blocks read)."""
    got = []
    k = 0
    while True:
        for b in block(k):
            if b >= 252:
                continue
            got.append(b % 6 + 1)
            if len(got) == 2:
                return (got[0], got[1]), k + 1
        k += 1


# ---------------------------------------------------------------------------
# The schemes (SCHEMES.md §2-4)

CTX_COMMIT = b"tavlarena-dice-commit-v1"
CTX_ROLL = b"tavlarena-dice-roll-v1"


def tav_commitment(game, shash, seats, seed):
    return sha256(CTX_COMMIT + uuid_bytes(game) + shash + uuid_bytes(seats[0]) + uuid_bytes(seats[1]) + seed)


def tav_block(seed, game, contribs, n, k):
    msg = CTX_ROLL + uuid_bytes(game) + contribs[0] + contribs[1] + u32be(n) + u32be(k)
    return hmac.new(seed, msg, hashlib.sha256).digest()


def tav_roll(seed, game, contribs, n):
    return dice_from_blocks(lambda k: tav_block(seed, game, contribs, n, k))[0]


def lp(x):
    return u32be(len(x)) + x


def anchored_binding(match_id, game_no, tokens, chain, rnd, randomness):
    return (lp(match_id.encode("utf-8")) + lp(u32be(game_no)) + lp(tokens[0].encode("utf-8"))
            + lp(tokens[1].encode("utf-8")) + lp(chain) + lp(u64be(rnd)) + lp(randomness))


def anc_block(seed, binding, n, k):
    return hmac.new(seed, binding + u32be(n) + u32be(k), hashlib.sha256).digest()


def anc_roll(seed, binding, n):
    return dice_from_blocks(lambda k: anc_block(seed, binding, n, k))[0]


def pr_block(seed, match, roll_id, k, second):
    return hmac.new(seed, uuid_bytes(match) + uuid_bytes(roll_id) + u32be(k) + second, hashlib.sha256).digest()


def pr_roll(seed, match, roll_id, second):
    return dice_from_blocks(lambda k: pr_block(seed, match, roll_id, k, second))[0]


def play_rolls(roll, opening, count):
    """The rolls of an honest game: kinds assigned by the sequence rules."""
    rolls = []
    want = "opening"
    for n in range(count):
        d = roll(n)
        rolls.append({"n": n, "dice": list(d), "kind": want})
        if want == "opening" and d[0] != d[1]:
            want = "reroll" if opening == "turkish-reroll" else "turn"
        elif want == "reroll":
            want = "turn"
    return rolls


# ---------------------------------------------------------------------------
# drand (DRAND.md): Python cannot verify BLS, so the real beacons are the
# only signatures taken as valid.

QUICKNET = bytes.fromhex("52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971")
QUICKNET_T = bytes.fromhex("cc9c398442737cbd141526600919edd69f1d6f9b4adb67e4d912fbc64341a9a5")
GENESIS = 1692803367
PERIOD = 3
BEACONS = {
    8: ("a0c06b9964123d2e6036aa004c140fc301f4edd3ea6b8396a15dfd7dfd70cc0dce0b4a97245995767ab72cf59de58c47",
        "996f280fcd832b382ea43338549f108fae303bdb9f781fe99fc062f554a036f1"),
    10: ("ac415e508c484053efed1c6c330e3ae0bf20185b66ed088864dac1ff7d6f927610824986390d3239dac4dd73e6f865f5",
         "850f2d84fec6935508464a33f5389b3103087bc44599d782b83cbe2eaa8451e3"),
    123: ("b75c69d0b72a5d906e854e808ba7e2accb1542ac355ae486d591aa9d43765482e26cd02df835d3546d23c4b13e0dfc92",
          "fb8f7bc29bf24db51871ec8c79f3a1e4bd0557bc0dfcee9ed1d924e69d1c60dc"),
    657413: ("b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b",
             "fc1873a13f3545aeade8401532ef5519920652eee6b0d2b19ca12643b87b3587"),
}
for _r, (_s, _rand) in BEACONS.items():
    assert h(sha256(bytes.fromhex(_s))) == _rand, "DRAND.md randomness is SHA-256 of the signature"


def round_time(r):
    return GENESIS + (r - 1) * PERIOD


def rfc3339(unix_ms, offset_minutes=0):
    tz = datetime.timezone(datetime.timedelta(minutes=offset_minutes))
    t = datetime.datetime.fromtimestamp(unix_ms / 1000, tz)
    s = t.strftime("%Y-%m-%dT%H:%M:%S")
    if unix_ms % 1000:
        s += ".%03d" % (unix_ms % 1000)
    if offset_minutes == 0:
        return s + "Z"
    sign = "+" if offset_minutes > 0 else "-"
    return s + "%s%02d:%02d" % (sign, abs(offset_minutes) // 60, abs(offset_minutes) % 60)


TIME_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$")


def parse_time(s):
    """RFC 3339 time -> Unix time in nanoseconds (an int)."""
    m = TIME_RE.match(s)
    if not m:
        raise ValueError("not an RFC 3339 time")
    y, mo, d, hh, mi, ss = (int(m.group(i)) for i in range(1, 7))
    frac = m.group(7) or ""
    tz = m.group(8).upper()
    off = 0
    if tz != "Z":
        oh, om = int(tz[1:3]), int(tz[4:6])
        if oh > 23 or om > 59:
            raise ValueError("bad offset")
        off = (oh * 60 + om) * (1 if tz[0] == "+" else -1)
    t = datetime.datetime(y, mo, d, hh, mi, ss, tzinfo=datetime.timezone(datetime.timedelta(minutes=off)))
    ns = int((frac[1:] + "000000000")[:9]) if frac else 0
    return int(t.timestamp()) * 10**9 + ns


# ---------------------------------------------------------------------------
# The independent verifier that computes every vector's expectation.

class InputError(Exception):
    pass


def load_strict(raw):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("not UTF-8")

    def pairs(ps):
        d = {}
        for k, v in ps:
            if k in d:
                raise InputError("duplicate key %r" % k)
            d[k] = v
        return d

    def pint(s):
        v = int(s)
        if abs(v) > MAX_SAFE:
            raise InputError("unsafe integer")
        return v

    def bad(s):
        raise InputError("not an integer: %s" % s)

    try:
        v = json.loads(text, object_pairs_hook=pairs, parse_int=pint, parse_float=bad, parse_constant=bad)
    except InputError:
        raise
    except (ValueError, RecursionError) as e:
        raise InputError("not JSON: %s" % e)
    if text[:1] not in "{[\"-0123456789tfn \t\r\n" or text.startswith("\ufeff"):
        raise InputError("not JSON")

    def walk(x, depth):
        if depth > MAX_DEPTH:
            raise InputError("too deep")
        if isinstance(x, str):
            if any(0xD800 <= ord(c) <= 0xDFFF for c in x):
                raise InputError("lone surrogate")
        elif isinstance(x, list):
            for e in x:
                walk(e, depth + 1)
        elif isinstance(x, dict):
            for k, e in x.items():
                walk(k, depth + 1)
                walk(e, depth + 1)

    walk(v, 0)
    return v


HEX64 = re.compile(r"^[0-9a-f]{64}$")
HEXANY = re.compile(r"^(?:[0-9a-f]{2})*$")


def need(obj, key, pred, what):
    if not isinstance(obj, dict) or key not in obj:
        raise InputError("missing %s" % key)
    v = obj[key]
    if not pred(v):
        raise InputError("%s: want %s" % (key, what))
    return v


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_str(v):
    return isinstance(v, str)


def is_uuid(v):
    return isinstance(v, str) and bool(UUID_RE.match(v))


def is_hex32(v):
    return isinstance(v, str) and bool(HEX64.match(v))


def is_pair(pred):
    return lambda v: isinstance(v, list) and len(v) == 2 and all(pred(e) for e in v)


def is_die(v):
    return is_int(v) and 1 <= v <= 6


def is_token(v):
    return isinstance(v, str) and 1 <= len(v.encode("utf-8")) <= 256


def is_time(v):
    if not isinstance(v, str):
        return False
    try:
        parse_time(v)
        return True
    except ValueError:
        return False


def parse_evidence(raw):
    """Strict dice-proof-v1 parsing; raises InputError."""
    ev = load_strict(raw)
    if not isinstance(ev, dict):
        raise InputError("not an object")
    need(ev, "format", lambda v: v == "dice-proof-v1", "dice-proof-v1")
    scheme = need(ev, "scheme", lambda v: v in ("tavlarena-v1", "anchored-v1", "per-roll-v1"), "a known scheme")
    settings = None
    if scheme != "per-roll-v1" or "settings" in ev:
        settings = need(ev, "settings", lambda v: isinstance(v, dict), "object")
        if settings.get("opening", "western") not in ("western", "turkish-reroll"):
            raise InputError("settings.opening")
        if settings.get("opponent", "human") not in ("human", "computer"):
            raise InputError("settings.opponent")
    if "log" in ev and not isinstance(ev["log"], dict):
        raise InputError("log")
    if scheme == "tavlarena-v1":
        need(ev, "gameId", is_uuid, "uuid")
        need(ev, "seats", is_pair(is_uuid), "2 uuids")
        need(ev, "commitment", is_hex32, "hex32")
        need(ev, "seed", is_hex32, "hex32")
        need(ev, "contributions", is_pair(is_hex32), "2 hex32")
    elif scheme == "anchored-v1":
        need(ev, "matchId", is_str, "string")
        need(ev, "gameNo", lambda v: is_int(v) and 0 <= v <= 2**32 - 1, "u32")
        need(ev, "tokens", is_pair(is_token), "2 tokens")
        need(ev, "fingerprint", is_hex32, "hex32")
        need(ev, "seed", is_hex32, "hex32")
        a = need(ev, "anchor", lambda v: isinstance(v, dict), "object")
        need(a, "chain", is_hex32, "hex32")
        need(a, "round", lambda v: is_int(v) and v >= 0, "round")
        need(a, "signature", lambda v: isinstance(v, str) and bool(HEXANY.match(v)), "hex")
        need(a, "randomness", is_hex32, "hex32")
        need(ev, "sealedAt", is_time, "time")
    else:
        need(ev, "matchId", is_uuid, "uuid")
    rolls = need(ev, "rolls", lambda v: isinstance(v, list), "array")
    for r in rolls:
        if not isinstance(r, dict):
            raise InputError("roll not an object")
        if scheme == "per-roll-v1":
            need(r, "rollId", is_uuid, "uuid")
            need(r, "commitment", is_hex32, "hex32")
            need(r, "seed", is_hex32, "hex32")
            need(r, "second", is_hex32, "hex32")
            need(r, "secondFrom", lambda v: v in ("client", "server"), "client|server")
        else:
            need(r, "n", lambda v: is_int(v) and 0 <= v <= 2**32 - 1, "u32")
            need(r, "kind", lambda v: v in ("opening", "reroll", "turn"), "kind")
        need(r, "dice", is_pair(is_die), "two dice")
    return ev


def sequence_ok(rolls, opening):
    want = "opening"
    for i, r in enumerate(rolls):
        if r["n"] != i or r["kind"] != want:
            return False
        d = r["dice"]
        if want == "opening" and d[0] != d[1]:
            want = "reroll" if opening == "turkish-reroll" else "turn"
        elif want == "reroll":
            want = "turn"
    return True


def expected_matches(expected, commitment):
    e = expected.replace(" ", "")
    if len(e) == 64:
        return bytes.fromhex(e.lower()) == commitment
    return parse_seal(expected) == commitment[:5]


def verify(raw, expected=None, log_key=None):
    """Returns (exit code, sorted list of failing checks)."""
    try:
        ev = parse_evidence(raw)
    except InputError:
        return 2, ["format"]
    fails = set()
    scheme = ev["scheme"]
    settings = ev.get("settings")
    rolls = ev["rolls"]
    if scheme == "tavlarena-v1":
        seed = bytes.fromhex(ev["seed"])
        c = tav_commitment(ev["gameId"], settings_hash(settings), ev["seats"], seed)
        if c != bytes.fromhex(ev["commitment"]):
            fails.add("commitment")
        contribs = [bytes.fromhex(x) for x in ev["contributions"]]
        for r in rolls:
            if list(tav_roll(seed, ev["gameId"], contribs, r["n"])) != r["dice"]:
                fails.add("rolls")
        if expected is not None and not expected_matches(expected, bytes.fromhex(ev["commitment"])):
            fails.add("expected-commitment")
    elif scheme == "anchored-v1":
        seed = bytes.fromhex(ev["seed"])
        if sha256(seed) != bytes.fromhex(ev["fingerprint"]):
            fails.add("commitment")
        a = ev["anchor"]
        ok = (bytes.fromhex(a["chain"]) == QUICKNET and a["round"] in BEACONS
              and BEACONS[a["round"]][0] == a["signature"]
              and h(sha256(bytes.fromhex(a["signature"]))) == a["randomness"]
              and parse_time(ev["sealedAt"]) < round_time(a["round"]) * 10**9)
        if not ok:
            fails.add("anchor")
        binding = anchored_binding(ev["matchId"], ev["gameNo"], ev["tokens"], bytes.fromhex(a["chain"]),
                                   a["round"], bytes.fromhex(a["randomness"]))
        for r in rolls:
            if list(anc_roll(seed, binding, r["n"])) != r["dice"]:
                fails.add("rolls")
        if expected is not None and not expected_matches(expected, bytes.fromhex(ev["fingerprint"])):
            fails.add("expected-commitment")
    else:
        ids = set()
        for r in rolls:
            seed = bytes.fromhex(r["seed"])
            if sha256(seed) != bytes.fromhex(r["commitment"]):
                fails.add("commitment")
            if list(pr_roll(seed, ev["matchId"], r["rollId"], bytes.fromhex(r["second"]))) != r["dice"]:
                fails.add("rolls")
            if r["rollId"] in ids:
                fails.add("sequence")
            ids.add(r["rollId"])
        if expected is not None and not any(expected_matches(expected, bytes.fromhex(r["commitment"])) for r in rolls):
            fails.add("expected-commitment")
    if scheme != "per-roll-v1" and not sequence_ok(rolls, settings.get("opening", "western")):
        fails.add("sequence")
    if log_key is not None:
        fails.add("log-signature")  # no vector carries a log member yet
    return (1 if fails else 0), sorted(fails)


