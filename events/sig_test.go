package events

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
)

func TestSignVerify(t *testing.T) {
	f := newFixture(t)
	evs := allEvents(t, f)
	signed := 0
	for _, ev := range evs {
		b := mustFormat(t, ev)
		p, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := Verify(p, f.keyring); err != nil {
			t.Errorf("%s: Verify: %v", ev.ID, err)
		}
		if !ev.Type.Binding() {
			continue
		}
		signed++
		// The signature is a plain Ed25519 signature of the prefix and the
		// leaf without its "sig" member, checked here without Verify.
		i := bytes.Index(b, []byte(`,"sig":"`))
		unsigned := append(bytes.Clone(b[:i]), b[i+len(`,"sig":"`)+128+1:]...)
		vkey := strings.SplitN(mustVKey(t, f), "+", 3)[2]
		raw, _ := base64.StdEncoding.DecodeString(vkey)
		if !ed25519.Verify(ed25519.PublicKey(raw[1:]), append([]byte("zarlog-event-v1\n"), unsigned...), p.Sig) {
			t.Errorf("%s: the sig is not an Ed25519 signature of the documented message", ev.ID)
		}
	}
	if signed < 10 {
		t.Fatalf("only %d binding events in the games", signed)
	}
}

func mustVKey(t *testing.T, f *fixture) string {
	_, vkey := testKey(t, emitter, 0x11)
	return vkey
}

func TestVerifyRejects(t *testing.T) {
	f := newFixture(t)
	tav := tavlarenaGame(t, f)
	commit := mustFormat(t, tav[0])
	end := mustFormat(t, tav[len(tav)-2])
	roll := mustFormat(t, tav[3])
	otherSigner, _ := testKey(t, "other", 0x22)
	_, strangerKey := testKey(t, emitter, 0x33)
	onlyOther, err := NewKeyring(func() string { _, v := testKey(t, "other", 0x22); return v }())
	if err != nil {
		t.Fatal(err)
	}
	strangers, err := NewKeyring(strangerKey)
	if err != nil {
		t.Fatal(err)
	}

	// An end event signed by "other" but claiming to be from emitter.
	forged, err := New(Header{Scheme: Tavlarena, Game: exGame, Seq: 9, Emitter: "other"}, End{Result: Abandoned, Winner: NoWinner})
	if err != nil {
		t.Fatal(err)
	}
	if err := Sign(forged, otherSigner); err != nil {
		t.Fatal(err)
	}
	forged.Emitter = emitter

	for _, tt := range []struct {
		name string
		b    []byte
		kr   *Keyring
		code Code
	}{
		{"tampered body", mutate(t, commit, "body.settings.matchLength", int64(7)), f.keyring, CodeBadSignature},
		{"tampered seq", mutate(t, end, "seq", int64(99)), f.keyring, CodeBadSignature},
		{"tampered time", mutate(t, end, "time", "2030-01-01T00:00:00.000Z"), f.keyring, CodeBadSignature},
		{"flipped sig", mutate(t, end, "sig", flipHex(hexOf(tav[len(tav)-2].Sig))), f.keyring, CodeBadSignature},
		{"another emitter's key", mustFormat(t, forged), f.keyring, CodeBadSignature},
		{"a stranger's key under the name", commit, strangers, CodeBadSignature},
		{"unknown emitter, binding", commit, onlyOther, CodeUnknownEmitter},
		{"unknown emitter, not binding", roll, onlyOther, CodeUnknownEmitter},
		{"nil keyring", roll, nil, CodeUnknownEmitter},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := Parse(tt.b)
			if err != nil {
				t.Fatal(err)
			}
			err = Verify(ev, tt.kr)
			if code, _ := CodeOf(err); code != tt.code {
				t.Errorf("Verify: %v, want code %s", err, tt.code)
			}
		})
	}
}

func flipHex(s string) string {
	b := []byte(s)
	if b[0] == '0' {
		b[0] = '1'
	} else {
		b[0] = '0'
	}
	return string(b)
}

// signedReveal returns a tavlarena-v1 reveal signed by s, as Parse returns
// it.
func signedReveal(t *testing.T, s note.Signer) *Event {
	t.Helper()
	ev, err := NewSigned(Header{Scheme: Tavlarena, Game: exGame, Seq: 4, Emitter: emitter}, Reveal{}, s)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(mustFormat(t, ev))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestKeyringRotation(t *testing.T) {
	f := newFixture(t)
	newSigner, newKey := testKey(t, emitter, 0x44)
	_, oldKey := testKey(t, emitter, 0x11)
	kr, err := NewKeyring(oldKey, newKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []note.Signer{f.signer, newSigner} {
		if err := Verify(signedReveal(t, s), kr); err != nil {
			t.Errorf("key %08x: %v", s.KeyHash(), err)
		}
	}
	if got := kr.Emitters(); len(got) != 1 || got[0] != emitter {
		t.Errorf("Emitters = %v", got)
	}
}

// TestVerifyWith: the SigFunc is asked about each of the emitter's keys in
// order, with its index, until one accepts; Keys lists them in that order,
// as a copy.
func TestVerifyWith(t *testing.T) {
	f := newFixture(t)
	_, oldKey := testKey(t, emitter, 0x33)
	_, curKey := testKey(t, emitter, 0x11)
	kr, err := NewKeyring(oldKey, curKey)
	if err != nil {
		t.Fatal(err)
	}
	p := signedReveal(t, f.signer)
	keys := kr.Keys(emitter)
	if len(keys) != 2 {
		t.Fatalf("Keys = %d keys, want 2", len(keys))
	}
	var asked []int
	spy := func(name string, i int, pub ed25519.PublicKey, msg, sig []byte) bool {
		if name != emitter || !pub.Equal(keys[i]) {
			t.Errorf("asked about %s's key %d = %x", name, i, pub)
		}
		asked = append(asked, i)
		return StdSig(name, i, pub, msg, sig)
	}
	if err := VerifyWith(p, kr, spy); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []int{0, 1}) {
		t.Errorf("keys asked about: %v, want [0 1] (the old key refuses, the current one accepts)", asked)
	}
	asked = nil
	never := func(name string, i int, pub ed25519.PublicKey, msg, sig []byte) bool {
		asked = append(asked, i)
		return false
	}
	if err := VerifyWith(p, kr, never); err == nil || !strings.Contains(err.Error(), "2 key(s) tried") {
		t.Errorf("VerifyWith with a checker that refuses all: %v", err)
	}
	keys[0][0] ^= 1
	if kr.Keys(emitter)[0].Equal(keys[0]) {
		t.Error("Keys returned the keyring's own slice")
	}
	if kr.Keys("nobody") != nil {
		t.Error("Keys of an unknown emitter is not nil")
	}
}

func TestNewKeyringRejects(t *testing.T) {
	_, good := testKey(t, "emitter-1", 0x55)
	_, upper := testKey(t, "Emitter", 0x55)
	parts := strings.SplitN(good, "+", 3)
	raw, _ := base64.StdEncoding.DecodeString(parts[2])
	raw[0] = 2
	for name, vkey := range map[string]string{
		"empty":          "",
		"garbage":        "emitter-1+zz+abc",
		"wrong hash":     parts[0] + "+00000000+" + parts[2],
		"upper name":     upper,
		"algorithm 2":    parts[0] + "+" + parts[1] + "+" + base64.StdEncoding.EncodeToString(raw),
		"duplicate key":  good + "\x00", // replaced below
		"truncated key":  parts[0] + "+" + parts[1] + "+" + parts[2][:20],
		"private key":    "PRIVATE+KEY+" + good,
		"trailing field": good + "+x",
	} {
		keys := []string{vkey}
		if name == "duplicate key" {
			keys = []string{good, good}
		}
		if _, err := NewKeyring(keys...); err == nil {
			t.Errorf("%s: NewKeyring(%q) succeeded", name, keys)
		}
	}
	if kr, err := NewKeyring(" " + good + "\n"); err != nil || !kr.Has("emitter-1") {
		t.Errorf("NewKeyring(good) = %v, %v", kr, err)
	}
}

func TestSignRefuses(t *testing.T) {
	f := newFixture(t)
	roll, err := New(Header{Scheme: Tavlarena, Game: exGame, Seq: 3, Emitter: emitter}, Roll{Dice: [2]int{1, 2}, Kind: "opening"})
	if err != nil {
		t.Fatal(err)
	}
	if err := Sign(roll, f.signer); !errors.Is(err, errNotBinding) {
		t.Errorf("Sign(roll) = %v", err)
	}
	end, err := New(Header{Scheme: Tavlarena, Game: exGame, Seq: 3, Emitter: "other"}, End{Result: Finished, Winner: 0, Points: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := Sign(end, f.signer); err == nil {
		t.Error("Sign with another emitter's key succeeded")
	}
	if end.Sig != nil {
		t.Error("a refused Sign set the sig")
	}
}
