package faults_test

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/zarlog/zarlog/internal/faults"
)

// testKey makes a log key with x/mod's note package.
func testKey(t *testing.T) (note.Signer, note.Verifier) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, "check.test/log")
	if err != nil {
		t.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

// sign signs a checkpoint of the tree of entries[:n].
func sign(t *testing.T, s note.Signer, entries [][]byte, n int) []byte {
	t.Helper()
	var hashes []tlog.Hash
	r := tlog.HashReaderFunc(func(ix []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(ix))
		for i, x := range ix {
			out[i] = hashes[x]
		}
		return out, nil
	})
	for i, e := range entries[:n] {
		hs, err := tlog.StoredHashes(int64(i), e, r)
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, hs...)
	}
	root, err := tlog.TreeHash(int64(n), r)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := note.Sign(&note.Note{Text: fmt.Sprintf("check.test/log\n%d\n%s\n", n, base64.StdEncoding.EncodeToString(root[:]))}, s)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func event(id string) []byte {
	return []byte(fmt.Sprintf(`{"emitter":"e1","id":%q,"type":"roll"}`, id))
}

// TestCheck shows the checker failing on each thing it promises to find:
// a receipted event missing, at another index or with other bytes, an
// event twice, a fork at one size, a checkpoint inconsistent with the
// final one, and a note not signed by the log's key.
func TestCheck(t *testing.T) {
	s, v := testKey(t)
	var entries [][]byte
	for i := range 600 {
		entries = append(entries, event(fmt.Sprintf("g:%d", i)))
	}
	final := func(es [][]byte) *faults.Log {
		cp, err := faults.ParseCheckpoint(sign(t, s, es, len(es)), v)
		if err != nil {
			t.Fatal(err)
		}
		l, err := faults.NewLog(cp, es)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	receipt := func(i int) faults.Receipt {
		return faults.Receipt{Emitter: "e1", ID: fmt.Sprintf("g:%d", i), Leaf: entries[i], Index: int64(i), Checkpoint: sign(t, s, entries, i+1)}
	}
	good := final(entries)
	notes := [][]byte{sign(t, s, entries, 1), sign(t, s, entries, 256), sign(t, s, entries, 257), sign(t, s, entries, 599)}
	if r := faults.Check(good, v, []faults.Receipt{receipt(0), receipt(300), receipt(599)}, notes); !r.OK() || r.Receipted != 3 || r.Entries != 600 || r.Checkpoints != 6 {
		t.Fatalf("a good log: %+v", r)
	}

	other := append([][]byte(nil), entries...)
	other[10] = event("g:forked")
	forked := sign(t, s, other, 300)
	strangerSigner, _ := testKey(t)
	for _, tc := range []struct {
		name     string
		log      *faults.Log
		receipts []faults.Receipt
		notes    [][]byte
		want     string
		lost     int
		dup      int
		forks    int
	}{
		{"lost", final(entries[:500]), []faults.Receipt{{Emitter: "e1", ID: "g:550", Leaf: entries[550], Index: 550, Checkpoint: sign(t, s, entries[:500], 10)}}, nil, "not in the final log", 1, 0, 0},
		{"moved", good, []faults.Receipt{{Emitter: "e1", ID: "g:5", Leaf: entries[5], Index: 6, Checkpoint: sign(t, s, entries, 7)}}, nil, "is at 5", 1, 0, 0},
		{"other bytes", good, []faults.Receipt{{Emitter: "e1", ID: "g:5", Leaf: []byte("x"), Index: 5, Checkpoint: sign(t, s, entries, 7)}}, nil, "other bytes", 1, 0, 0},
		{"twice", final(append(append([][]byte(nil), entries...), entries[3])), nil, nil, "is in the log at 3 and at 600", 0, 1, 0},
		{"fork", good, nil, [][]byte{forked, sign(t, s, entries, 300)}, "different roots", 0, 0, 2},
		{"inconsistent", good, nil, [][]byte{forked}, "inconsistent with the final one", 0, 0, 1},
		{"beyond", final(entries[:100]), nil, [][]byte{sign(t, s, entries, 200)}, "beyond the final log's 100", 0, 0, 1},
		{"unsigned", good, nil, [][]byte{sign(t, strangerSigner, entries, 20)}, "a checkpoint seen", 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := faults.Check(tc.log, v, tc.receipts, tc.notes)
			if r.OK() || !strings.Contains(strings.Join(r.Problems, "\n"), tc.want) || r.Lost != tc.lost || r.Duplicated != tc.dup || r.Forks != tc.forks {
				t.Fatalf("got %+v, want a problem saying %q, lost %d, duplicated %d, forks %d", r, tc.want, tc.lost, tc.dup, tc.forks)
			}
		})
	}
}

// TestNewLog refuses entries whose tree is not the checkpoint's.
func TestNewLog(t *testing.T) {
	s, v := testKey(t)
	entries := [][]byte{event("a:0"), event("a:1"), event("a:2")}
	cp, err := faults.ParseCheckpoint(sign(t, s, entries, 3), v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := faults.NewLog(cp, [][]byte{entries[0], entries[2], entries[1]}); err == nil {
		t.Fatal("entries in another order were accepted")
	}
	if _, err := faults.NewLog(cp, entries[:2]); err == nil {
		t.Fatal("two entries for a checkpoint of three were accepted")
	}
}

func TestEntryPath(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		w    int
		want string
	}{
		{0, 0, "tile/entries/000"},
		{0, 7, "tile/entries/000.p/7"},
		{1234067, 0, "tile/entries/x001/x234/067"},
		{1000, 255, "tile/entries/x001/000.p/255"},
	} {
		if got := faults.EntryPath(tc.n, tc.w); got != tc.want {
			t.Errorf("EntryPath(%d, %d) = %s, want %s", tc.n, tc.w, got, tc.want)
		}
	}
}
