package follow

import (
	"bytes"
	"context"
	"encoding/binary"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/zarlog/zarlog/events"
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
	s := Stats{Leaves: 1000, NonEvents: 10, Tally: events.Tally{Events: 990, Games: 7, Finished: 5, Failed: 1}}
	s.Opening.Pairs[2][4] = 300
	s.Play.Pairs[5][5] = 1 << 40
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

// FuzzFollowGarbage: a log that serves arbitrary bytes for its checkpoint
// or an entry bundle never makes the follower panic, and never makes it
// accept anything but the log's true tree.
func FuzzFollowGarbage(f *testing.F) {
	m := newMemLog(f)
	m.addN(300, "a")
	good := m.sign()
	srv := serve(f, m)
	paths := []string{"/checkpoint", "/tile/entries/000", "/tile/entries/001.p/44"}
	for i, p := range paths {
		switch p {
		case "/checkpoint":
			f.Add(uint8(i), good)
			f.Add(uint8(i), bytes.Replace(good, []byte("300"), []byte("301"), 1))
		default:
			tl, _ := merkle.ParseTilePath(p[1:])
			b := m.tile(f, tl)
			f.Add(uint8(i), b)
			f.Add(uint8(i), b[:len(b)-1])
			f.Add(uint8(i), append(bytes.Clone(b), 0, 1, 'x'))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		path := paths[int(which)%len(paths)]
		srv.setHook(func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == path {
				w.Write(data)
				return true
			}
			return false
		})
		fl := newFollower(t, srv.URL, m.vkey, nil, func(c *Config) {
			src, _ := NewSource(SourceConfig{URL: srv.URL, Attempts: 1})
			c.Source = src
		})
		res, err := fl.Update(context.Background())
		if err == nil && res.Accepted {
			if res.Checkpoint.Size != 300 || res.Checkpoint.Hash != m.b.Root() {
				t.Fatalf("accepted a checkpoint of size %d that is not the log's", res.Checkpoint.Size)
			}
			sameTiles(t, m, fl.store, 300)
		}
	})
}
