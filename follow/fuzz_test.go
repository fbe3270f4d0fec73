package follow

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
	"time"

	"github.com/zarlog/zarlog/merkle"
)

// evidenceSeeds returns evidence files of every kind, signed by the test
// log's key.
func evidenceSeeds(t testing.TB) [][]byte {
	a, b := newMemLog(t), newMemLog(t)
	a.addN(10, "same")
	b.addN(10, "same")
	a.addN(5, "honest")
	b.addN(3, "forked")
	an, bn := a.sign(), b.sign()
	ac, _ := merkle.ParseSignedCheckpoint(an)
	bc, _ := merkle.ParseSignedCheckpoint(bn)
	va := observe(merkle.SignedCheckpoint{Checkpoint: ac, Note: an}, "https://log.example/checkpoint")
	vb := observe(merkle.SignedCheckpoint{Checkpoint: bc, Note: bn}, "https://mirror.example/checkpoint")
	at := b64(ac.Hash)
	var out [][]byte
	for _, e := range []Evidence{
		{Kind: KindFork, Origin: testOrigin, Time: time.Unix(1_800_000_000, 0).UTC(), Error: "fork", Verified: &va, Conflicting: va, Proof: []string{}},
		{Kind: KindInconsistent, Origin: testOrigin, Time: time.Unix(1_800_000_000, 0).UTC(), Error: "x", Verified: &va, Conflicting: vb,
			Proof: []string{at, at}, ProofFrom: ProofFromVerified, RootAtSmaller: at},
		{Kind: KindEntries, Origin: testOrigin, Error: "entries", Conflicting: vb, Proof: []string{}, Detail: "entry 3"},
	} {
		d, err := e.Format()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// FuzzParseEvidence: ParseEvidence never panics, and what it accepts
// formats to a file it parses to the same record.
func FuzzParseEvidence(f *testing.F) {
	seeds := evidenceSeeds(f)
	if len(seeds) == 0 {
		f.Fatal("no seeds")
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Add([]byte(`{"kind":"fork"}`))
	key, err := merkle.NewVerifier(newMemLog(f).vkey)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseEvidence(b)
		if err != nil {
			return
		}
		d, err := e.Format()
		if err != nil {
			t.Fatal(err)
		}
		e2, err := ParseEvidence(d)
		if err != nil {
			t.Fatalf("a formatted record does not parse: %v", err)
		}
		if !reflect.DeepEqual(e, e2) {
			t.Fatalf("round trip changed the record:\n%+v\n%+v", e, e2)
		}
		// Checking it never panics either.
		CheckEvidence(e, key)
	})
}

// FuzzStats: Stats.UnmarshalBinary never panics and accepts only the
// canonical encoding.
func FuzzStats(f *testing.F) {
	s := Stats{Leaves: 1000, Events: 990, NonEvents: 10, Games: 7, Finished: 5, Failed: 1}
	s.Opening[2][4] = 300
	s.Play[5][5] = 1 << 40
	b, _ := s.MarshalBinary()
	f.Add(b)
	z, _ := (&Stats{}).MarshalBinary()
	f.Add(z)
	f.Fuzz(func(t *testing.T, b []byte) {
		var s Stats
		if err := s.UnmarshalBinary(b); err != nil {
			return
		}
		again, _ := s.MarshalBinary()
		if !bytes.Equal(again, b) {
			t.Fatalf("accepted a non-canonical encoding %x (canonical %x)", b, again)
		}
	})
}

// FuzzRecords: the finished-game and unusable-leaf records never panic, and
// a finished-game record round-trips.
func FuzzRecords(f *testing.F) {
	f.Add(binary.BigEndian.AppendUint64([]byte{keyFinished}, 77), []byte("\x01game-1"))
	f.Add(binary.BigEndian.AppendUint64([]byte{keyUnusable}, 3), []byte("rnot allowed"))
	f.Fuzz(func(t *testing.T, k, v []byte) {
		if g, err := parseFinished(k, v); err == nil {
			if got := marshalFinished(g.Status, g.Game); !bytes.Equal(got, v) {
				t.Fatalf("finished record %x reads as %+v, which writes as %x", v, g, got)
			}
		}
		parseUnusable(k, v)
	})
}
