package ledger

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/merkle"
)

// TestTamperedStore changes one stored record at a time and checks that
// Open refuses the store at the check level that can see the change, naming
// what differs. The log has 1030 leaves, a checkpoint signed at 1000.
func TestTamperedStore(t *testing.T) {
	tile := func(level int, n uint64) []byte {
		return tileKey(merkle.Tile{Level: level, Index: n, Width: 1})
	}
	flip := func(at int) func([]byte) []byte {
		return func(v []byte) []byte {
			if at < 0 {
				at += len(v)
			}
			v[at] ^= 1
			return v
		}
	}
	cases := []struct {
		name  string
		key   []byte
		edit  func([]byte) []byte // nil deletes the record
		level CheckLevel
		want  []string // substrings of the error; none means Open succeeds
	}{
		{"checkpoint signature", keyCheckpoint, flip(-5), CheckRoot, []string{"checkpoint signature"}},
		{"checkpoint deleted is not detectable", keyCheckpoint, nil, CheckRoot, nil},
		{"state range hash", keyState, flip(-1), CheckRoot, []string{"tree state against its partial tiles", "range hash"}},
		{"state size", keyState, flip(8), CheckRoot, []string{"tree state"}},
		{"tile under the checkpoint, right edge", tile(0, 3), flip(100), CheckRoot,
			[]string{"root of the stored tiles at the checkpoint's size", "tile/0/003", "tile/1/000.p/4"}},
		{"tile beyond the checkpoint", tile(0, 4), flip(3), CheckRoot, []string{"partial tiles", "entry 1024"}},
		{"partial entry bundle", pieceKey(4, 0), flip(-1), CheckRoot, []string{"partial tiles", "entry 1029"}},
		{"partial entry bundle's piece deleted", pieceKey(4, 0), nil, CheckRoot, []string{"tile/entries/004.p/6", "not found"}},
		{"level-1 tile", tile(1, 0), flip(40), CheckRoot, []string{"root of the stored tiles", "tile/0/001 ", "hash 1 of tile/1/000.p/4"}},
		{"missing tile", tile(0, 3), nil, CheckRoot, []string{"tile/0/003.p/232", "not found"}},
		{"old full tile, root check", tile(0, 1), flip(7), CheckRoot, nil},
		{"old full tile, tile check", tile(0, 1), flip(7), CheckTiles, []string{"tile/0/001 ", "hash 1 of tile/1/000.p/4"}},
		{"old entry bundle, tile check", pieceKey(1, 0), flip(50), CheckTiles, nil},
		{"old entry bundle, entry check", pieceKey(1, 0), flip(50), CheckEntries, []string{"entry 256 ", "tile/entries/001 entry 0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t)
			l := e.open()
			gen := newStreamGen(t, e.k, "tamper", 17, 5)
			appendAll(t, l, gen.take(1000), 100)
			mustSign(t, l)
			appendAll(t, l, gen.take(30), 30)
			l.Close()

			db := openRaw(t, e)
			v, err := get(db, tc.key)
			if err != nil {
				t.Fatalf("%q: %v", tc.key, err)
			}
			if tc.edit == nil {
				err = db.Delete(tc.key, pebble.Sync)
			} else {
				err = db.Set(tc.key, tc.edit(v), pebble.Sync)
			}
			if err != nil {
				t.Fatal(err)
			}
			db.Close()

			e.cfg.Check = tc.level
			l, err = Open(context.Background(), e.cfg)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				l.Close()
				return
			}
			if err == nil {
				l.Close()
				t.Fatal("Open accepted the store")
			}
			var te *TamperError
			if !errors.Is(err, ErrTampered) || !errors.As(err, &te) {
				t.Errorf("Open: %v, want a *TamperError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Open: %v\nwant it to mention %q", err, w)
				}
			}
		})
	}
}
