package witness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/merkle"
)

// testNow is the fixed clock of the tests.
var testNow = time.Date(2026, 11, 30, 10, 37, 31, 0, time.UTC)

func testClock() time.Time { return testNow }

func testRand(seed byte) *rand.ChaCha8 { return rand.NewChaCha8([32]byte{seed}) }

// A tileMap keeps one growing tile per (level, index), as a log's store does.
type tileMap map[[2]int64][]byte

func (m tileMap) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		d, ok := m[[2]int64{int64(t.Level), int64(t.Index)}]
		if !ok {
			return nil, fmt.Errorf("%s: %w", t.Path(), merkle.ErrNotFound)
		}
		out[i] = d
	}
	return out, nil
}

// A testLog is an in-memory log: a tree built with merkle.Builder and its
// signed checkpoints. Two testLogs with the same key seed and different
// leaf prefixes are a forked log.
type testLog struct {
	t      testing.TB
	origin string
	prefix string // distinguishes the leaves of a fork
	signer note.Signer
	vkey   string
	b      *merkle.Builder
	tiles  tileMap
	notes  map[uint64][]byte // signed checkpoints by size
}

func newTestLog(t testing.TB, origin string, keySeed byte, prefix string) *testLog {
	t.Helper()
	skey, vkey, err := merkle.GenerateKey(testRand(keySeed), origin)
	if err != nil {
		t.Fatal(err)
	}
	return newTestLogKey(t, skey, vkey, prefix)
}

// newTestLogKey is newTestLog with the log's key given (its name is the
// origin).
func newTestLogKey(t testing.TB, skey, vkey, prefix string) *testLog {
	t.Helper()
	s, err := merkle.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	b, err := merkle.NewBuilder(context.Background(), nil, merkle.State{})
	if err != nil {
		t.Fatal(err)
	}
	l := &testLog{t: t, origin: s.Name(), prefix: prefix, signer: s, vkey: vkey, b: b, tiles: tileMap{}, notes: map[uint64][]byte{}}
	l.sign()
	return l
}

func (l *testLog) verifier() note.Verifier {
	v, err := merkle.NewVerifier(l.vkey)
	if err != nil {
		l.t.Fatal(err)
	}
	return v
}

// grow appends n leaves and returns the signed checkpoint of the new size.
func (l *testLog) grow(n int) []byte {
	l.t.Helper()
	leaves := make([][]byte, n)
	for i := range leaves {
		leaves[i] = fmt.Appendf(nil, `{"log":%q,"i":%d}`, l.prefix, l.b.Size()+uint64(i))
	}
	tds, err := l.b.Append(leaves)
	if err != nil {
		l.t.Fatal(err)
	}
	for _, td := range tds {
		l.tiles[[2]int64{int64(td.Tile.Level), int64(td.Tile.Index)}] = td.Data
	}
	return l.sign()
}

func (l *testLog) sign() []byte {
	l.t.Helper()
	msg, err := merkle.Sign(merkle.Checkpoint{Origin: l.origin, Size: l.b.Size(), Hash: l.b.Root()}, l.signer)
	if err != nil {
		l.t.Fatal(err)
	}
	l.notes[l.b.Size()] = msg
	return msg
}

func (l *testLog) size() uint64 { return l.b.Size() }

// proof returns the consistency proof from old to the current size.
func (l *testLog) proof(old uint64) []merkle.Hash {
	l.t.Helper()
	return l.proofTo(old, l.size())
}

func (l *testLog) proofTo(old, size uint64) []merkle.Hash {
	l.t.Helper()
	if old == 0 || old == size {
		return nil
	}
	p, err := merkle.ConsistencyProof(context.Background(), l.tiles, old, size)
	if err != nil {
		l.t.Fatal(err)
	}
	return p
}

// testWitnessKey is the witness key of the tests.
func testWitnessKey(t testing.TB, name string, seed byte) (skey string, v *merkle.CosignatureVerifier) {
	t.Helper()
	skey, vkey, err := merkle.GenerateCosignerKey(testRand(seed), name)
	if err != nil {
		t.Fatal(err)
	}
	v, err = merkle.NewCosignatureVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return skey, v
}

// openWitness opens a witness on fs/dir for the logs, with the test clock.
func openWitness(t testing.TB, fs vfs.FS, dir string, logs ...*testLog) *Witness {
	t.Helper()
	w, err := openWitnessErr(fs, dir, logs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func openWitnessErr(fs vfs.FS, dir string, logs ...*testLog) (*Witness, error) {
	skey, _, err := merkle.GenerateCosignerKey(testRand(99), "witness.example/w1")
	if err != nil {
		return nil, err
	}
	var vs []note.Verifier
	for _, l := range logs {
		v, err := merkle.NewVerifier(l.vkey)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	return New(context.Background(), Config{Dir: dir, FS: fs, Logs: vs, Key: skey, Clock: testClock})
}

// witnessVerifier returns the verifier of the key openWitness uses.
func witnessVerifier(t testing.TB) *merkle.CosignatureVerifier {
	_, v := testWitnessKey(t, "witness.example/w1", 99)
	return v
}

// post sends an add-checkpoint body to h and returns the status, content
// type and body.
func post(t testing.TB, h http.Handler, body []byte) (int, string, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/add-checkpoint", bytes.NewReader(body)))
	out, _ := io.ReadAll(rec.Body)
	return rec.Code, rec.Header().Get("Content-Type"), out
}

// request formats an add-checkpoint body.
func request(t testing.TB, old uint64, proof []merkle.Hash, msg []byte) []byte {
	t.Helper()
	b, err := Request{OldSize: old, Proof: proof, Checkpoint: msg}.Format()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// cosignedSize returns the size of the witness's latest cosigned checkpoint
// of origin, or 0.
func cosignedSize(t testing.TB, w *Witness, origin string) uint64 {
	t.Helper()
	msg, err := w.Checkpoint(origin)
	if err != nil {
		t.Fatal(err)
	}
	if msg == nil {
		return 0
	}
	text, err := noteText(msg)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := merkle.ParseCheckpoint(text)
	if err != nil {
		t.Fatal(err)
	}
	return cp.Size
}
