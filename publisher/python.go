package publisher

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/verifier"
)

// PythonChecker returns a short Python 3 program (standard library only)
// that checks a game's dice from its published numbers: the commitment
// (tavlarena-v1) or fingerprint (anchored-v1) recomputed from the seed, or
// each roll's commitment (per-roll-v1), and every roll recomputed as
// docs/SCHEMES.md says. The game's numbers are written into the program, so
// it needs no file and no network; it prints a line starting "Every roll
// checked" and exits 0, or names the first wrong value and exits 1. It is
// for people who trust no page at all (seeds 001 and 004).
//
// For a proof bundle, pass the evidence verifier.Parse returns: its
// top-level numbers are those the program checks (the browser and
// zarlog-verify check that they agree with the logged events).
func PythonChecker(ev *verifier.Evidence) ([]byte, error) {
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	h := func(x []byte) string { return `bytes.fromhex("` + hex.EncodeToString(x) + `")` }
	dicePrelude := func() {
		w(`def dice(mac):  # bytes of blocks 0, 1, ...: skip those >= 252, die = byte %% 6 + 1`)
		w(`    ok = [x %% 6 + 1 for k in range(4) for x in mac(k.to_bytes(4, "big")) if x < 252]`)
		w(`    return ok[0], ok[1]`)
		w(`def fail(what):`)
		w(`    sys.exit("FAIL " + what)`)
	}
	switch {
	case ev.Tavlarena != nil:
		t := ev.Tavlarena
		w(`# zarlog: check the dice of game %s (tavlarena-v1) yourself.`, t.GameID)
		w(`# Python 3, standard library only. docs/SCHEMES.md section 2 is the method.`)
		w(`import hashlib, hmac, sys`)
		w(`settings = %s.encode()  # canonical JSON`, pyString(string(ev.Settings)))
		w(`game, seats = %s, %s`, h(t.GameID[:]), h(append(append([]byte{}, t.Seats[0][:]...), t.Seats[1][:]...)))
		w(`seed = %s`, h(t.Seed[:]))
		w(`c0, c1 = %s, %s`, h(t.Contributions[0][:]), h(t.Contributions[1][:]))
		w(`commitment = "%s"  # seal code %s`, hex.EncodeToString(t.Commitment[:]), dice.SealCode(t.Commitment))
		w(`rolls = [%s]  # n = 0, 1, 2, ...`, pyRolls(t.Rolls))
		dicePrelude()
		w(`got = hashlib.sha256(b"tavlarena-dice-commit-v1" + game + hashlib.sha256(settings).digest() + seats + seed).hexdigest()`)
		w(`if got != commitment: fail("commitment: the seed gives " + got)`)
		w(`for n, played in enumerate(rolls):`)
		w(`    msg = b"tavlarena-dice-roll-v1" + game + c0 + c1 + n.to_bytes(4, "big")`)
		w(`    roll = dice(lambda k: hmac.new(seed, msg + k, "sha256").digest())`)
		w(`    if roll != played: fail("roll %%d: played %%d-%%d, the seed gives %%d-%%d" %% ((n + 1,) + played + roll))`)
		w(`print("Every roll checked: %%d rolls; commitment %%s" %% (len(rolls), commitment))`)
	case ev.Anchored != nil:
		a := ev.Anchored
		w(`# zarlog: check the dice of match %s game %d (anchored-v1) yourself.`, pyComment(a.MatchID), a.GameNo)
		w(`# Python 3, standard library only. docs/SCHEMES.md section 3 is the method.`)
		w(`# The drand beacon's BLS signature needs a BLS12-381 library: zarlog-verify checks it.`)
		w(`import hashlib, hmac, sys`)
		w(`match, game_no = %s.encode(), %d`, pyString(a.MatchID), a.GameNo)
		w(`tokens = [%s.encode(), %s.encode()]`, pyString(a.Tokens[0]), pyString(a.Tokens[1]))
		w(`chain, round_ = %s, %d  # drand quicknet`, h(a.Anchor.Chain[:]), a.Anchor.Round)
		w(`signature = %s`, h(a.Anchor.Signature))
		w(`seed, fingerprint = %s, "%s"`, h(a.Seed[:]), hex.EncodeToString(a.Fingerprint[:]))
		w(`rolls = [%s]  # n = 0, 1, 2, ...`, pyRolls(a.Rolls))
		dicePrelude()
		w(`if hashlib.sha256(seed).hexdigest() != fingerprint: fail("fingerprint: SHA-256 of the seed is " + hashlib.sha256(seed).hexdigest())`)
		w(`lp = lambda x: len(x).to_bytes(4, "big") + x`)
		w(`randomness = hashlib.sha256(signature).digest()  # the beacon's randomness`)
		w(`binding = lp(match) + lp(game_no.to_bytes(4, "big")) + lp(tokens[0]) + lp(tokens[1]) + lp(chain) + lp(round_.to_bytes(8, "big")) + lp(randomness)`)
		w(`for n, played in enumerate(rolls):`)
		w(`    roll = dice(lambda k: hmac.new(seed, binding + n.to_bytes(4, "big") + k, "sha256").digest())`)
		w(`    if roll != played: fail("roll %%d: played %%d-%%d, the seed gives %%d-%%d" %% ((n + 1,) + played + roll))`)
		w(`print("Every roll checked: %%d rolls; fingerprint %%s" %% (len(rolls), fingerprint))`)
	case ev.PerRoll != nil:
		p := ev.PerRoll
		w(`# zarlog: check the dice of match %s (per-roll-v1) yourself.`, p.MatchID)
		w(`# Python 3, standard library only. docs/SCHEMES.md section 4 is the method.`)
		w(`import hashlib, hmac, sys`)
		w(`match = %s`, h(p.MatchID[:]))
		w(`rolls = [  # rollId, commitment, seed, second number, dice`)
		for _, x := range p.Rolls {
			w(`  ("%s", "%s", "%s", "%s", (%d, %d)),`, hex.EncodeToString(x.RollID[:]), hex.EncodeToString(x.Commitment[:]),
				hex.EncodeToString(x.Seed[:]), hex.EncodeToString(x.Second[:]), x.Dice[0], x.Dice[1])
		}
		w(`]`)
		dicePrelude()
		w(`for i, (roll_id, commitment, seed, second, played) in enumerate(rolls):`)
		w(`    seed, second, roll_id = bytes.fromhex(seed), bytes.fromhex(second), bytes.fromhex(roll_id)`)
		w(`    if hashlib.sha256(seed).hexdigest() != commitment: fail("roll %%d: the seed does not match its commitment" %% (i + 1))`)
		w(`    roll = dice(lambda k: hmac.new(seed, match + roll_id + k + second, "sha256").digest())`)
		w(`    if roll != played: fail("roll %%d: played %%d-%%d, the seed gives %%d-%%d" %% ((i + 1,) + played + roll))`)
		w(`print("Every roll checked: %%d rolls, each seed matches its commitment" %% len(rolls))`)
	default:
		return nil, errors.New("publisher: python checker: the evidence has no scheme")
	}
	return b.Bytes(), nil
}

func pyRolls(rolls []dice.Roll) string {
	parts := make([]string, len(rolls))
	for i, r := range rolls {
		parts[i] = fmt.Sprintf("(%d, %d)", r.Dice[0], r.Dice[1])
	}
	return strings.Join(parts, ", ")
}

// pyString writes s as a Python 3 string literal. Go's quoting uses only
// escapes Python shares (\a \b \f \n \r \t \v \\ \" \xNN \uNNNN
// \UNNNNNNNN), and s is valid UTF-8 (the evidence parser refuses anything
// else), so the literal is exactly s.
func pyString(s string) string { return strconv.Quote(s) }

// pyComment makes s safe on a comment line.
func pyComment(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
