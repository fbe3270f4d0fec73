package ledger

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/merkle"
)

// storedBundles returns the raw records of the entry bundles: the 'e' keys'
// values by bundle, and the 'p' pieces' values by bundle in key order.
func storedBundles(t testing.TB, r pebble.Reader) (whole map[uint64][]byte, pieces map[uint64][][]byte) {
	t.Helper()
	whole, pieces = map[uint64][]byte{}, map[uint64][][]byte{}
	for _, p := range []byte{prefixBundle, prefixPiece} {
		it, err := r.NewIter(&pebble.IterOptions{LowerBound: []byte{p}, UpperBound: prefixEnd(p)})
		if err != nil {
			t.Fatal(err)
		}
		for it.First(); it.Valid(); it.Next() {
			n := binary.BigEndian.Uint64(it.Key()[1:9])
			v := slices.Clone(it.Value())
			if p == prefixBundle {
				whole[n] = v
			} else {
				pieces[n] = append(pieces[n], v)
			}
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return whole, pieces
}

// checkBundles checks that every entry bundle of the log reads back as
// the leaves it holds (readBundle, Leaves, LeavesAt, ReadTile), that a full
// bundle is one 'e' record with no pieces, and that the growing one is
// stored as pieces after the 'e' record of an upgraded store (legacy), if
// any, each piece holding the entries of one group: the group's sizes are
// groups, those of the groups into the growing bundle last.
func checkBundles(t *testing.T, l *Ledger, leaves [][]byte, legacy int, groups []int) {
	t.Helper()
	size := uint64(len(leaves))
	whole, pieces := storedBundles(t, l.db)
	for n := uint64(0); n*merkle.TileWidth < size; n++ {
		es := leaves[n*merkle.TileWidth : min(size, (n+1)*merkle.TileWidth)]
		want, err := merkle.FormatBundle(es)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readBundle(l.db, n)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("size %d: bundle %d reads %d bytes (%v), want %d", size, n, len(got), err, len(want))
		}
		tile, _ := merkle.TileAt(merkle.EntriesLevel, n, size)
		served, err := l.ReadTile(context.Background(), tile)
		if err != nil || !bytes.Equal(served, want) {
			t.Fatalf("size %d: %s serves %d bytes (%v), want %d", size, tile.Path(), len(served), err, len(want))
		}
		if len(es) == merkle.TileWidth {
			if !bytes.Equal(whole[n], want) || len(pieces[n]) > 0 {
				t.Fatalf("size %d: full bundle %d is stored as %d bytes and %d pieces, want whole", size, n, len(whole[n]), len(pieces[n]))
			}
			continue
		}
		// The growing bundle: the legacy record, then a piece a group.
		if legacy > 0 {
			if w, _ := bundleEntries(whole[n]); w != legacy {
				t.Fatalf("size %d: the upgraded store's growing bundle %d has %d entries in its 'e' record, want %d", size, n, w, legacy)
			}
		} else if whole[n] != nil {
			t.Fatalf("size %d: growing bundle %d has an 'e' record of %d bytes", size, n, len(whole[n]))
		}
		at := legacy
		for i, p := range pieces[n] {
			m, err := bundleEntries(p)
			if err != nil {
				t.Fatal(err)
			}
			// A group's entries are one piece: all of them, or for the
			// first piece the tail of a group that filled the bundle before.
			if k := len(groups) - len(pieces[n]) + i; k < 0 || m > groups[k] || i > 0 && m != groups[k] {
				t.Fatalf("size %d: piece %d of bundle %d holds %d entries; the groups appended %v", size, i, n, m, groups)
			}
			at += m
		}
		if at != len(es) {
			t.Fatalf("size %d: growing bundle %d stores %d entries, want %d", size, n, at, len(es))
		}
	}
	for n := range whole {
		if n*merkle.TileWidth >= size {
			t.Fatalf("size %d: an 'e' record for bundle %d past the log", size, n)
		}
	}
	for n := range pieces {
		if n != size/merkle.TileWidth {
			t.Fatalf("size %d: pieces of bundle %d, which is not the growing one", size, n)
		}
	}
	got, err := l.Leaves(context.Background(), 0, size)
	if err != nil || len(got) != len(leaves) {
		t.Fatalf("size %d: Leaves: %d, %v", size, len(got), err)
	}
	for i := range got {
		if !bytes.Equal(got[i], leaves[i]) {
			t.Fatalf("size %d: Leaves: leaf %d differs", size, i)
		}
	}
	for i := range size {
		leaf, ok, err := readLeaf(l.db, i)
		if err != nil || !ok || !bytes.Equal(leaf, leaves[i]) {
			t.Fatalf("size %d: readLeaf(%d): ok %v, %v", size, i, ok, err)
		}
	}
	if _, ok, err := readLeaf(l.db, size); ok || err != nil {
		t.Fatalf("size %d: readLeaf(%d) past the log: ok %v, %v", size, size, ok, err)
	}
	at, err := l.LeavesAt(context.Background(), []uint64{size - 1, 0})
	if err != nil || !bytes.Equal(at[0], leaves[size-1]) || !bytes.Equal(at[1], leaves[0]) {
		t.Fatalf("size %d: LeavesAt: %v", size, err)
	}
}

// TestBundlePieces appends in groups of varied sizes, across bundle
// boundaries, and checks after each that the growing entry bundle is
// stored a group's entries at a time, a full one whole, and every bundle
// reads back (store format 6, bundle.go); then that a reopened store
// continues it.
func TestBundlePieces(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	gen := newStreamGen(t, e.k, "pieces", 3, 4)
	var leaves [][]byte
	var groups []int
	for _, n := range []int{1, 1, 7, 100, 200, 255, 1, 300, 2, 256, 3} {
		in := gen.take(n)
		appendAll(t, l, in, n)
		leaves = append(leaves, in...)
		groups = append(groups, n)
		checkBundles(t, l, leaves, 0, groups)
	}
	l.Close()
	e.cfg.Check = CheckEntries
	l = e.open()
	in := gen.take(5)
	appendAll(t, l, in, 5)
	leaves = append(leaves, in...)
	checkBundles(t, l, leaves, 0, append(groups, 5))
}

// TestBundleFormat5 opens a format-5 store, whose growing entry bundle is
// one 'e' record rewritten by each group: Open marks it format 6 (and then
// 7, splitting its game heads), the next
// groups add pieces after that record, and the group that fills the bundle
// writes it whole and deletes them. An older version refuses a format-6
// store by its format record.
func TestBundleFormat5(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	gen := newStreamGen(t, e.k, "format5", 5, 4)
	leaves := gen.take(300)
	appendAll(t, l, leaves, 100)
	mustSign(t, l)
	l.Close()

	// What format 5 stored: the growing bundle 1 (44 entries) whole.
	db := openRaw(t, e)
	d, err := readBundle(db, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	b.Set(tileKey(merkle.Tile{Level: merkle.EntriesLevel, Index: 1}), d, nil)
	b.DeleteRange(pieceKey(1, 0), piecesEnd(1), nil)
	f, err := get(db, keyFormat)
	if err != nil {
		t.Fatal(err)
	}
	f[0] = 5
	b.Set(keyFormat, f, nil)
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	format6Heads(t, db, nil)
	db.Close()

	e.cfg.Check = CheckEntries
	h := new(recordingHandler)
	e.cfg.Logger = slog.New(h)
	l = e.open()
	e.cfg.Logger = nil
	if from, resumed := headsLog(t, h); from != 5 || resumed {
		t.Errorf("the split of the heads logged from %d, resumed %v, want from 5", from, resumed)
	}
	if f, err := get(l.db, keyFormat); err != nil || f[0] != storeFormat || storeFormat != 7 {
		t.Fatalf("format record %x (%v), want 7", f[:1], err)
	}
	if split, old := splitHeads(t, l.db); split == 0 || old != 0 {
		t.Fatalf("%d heads split, %d of format 6", split, old)
	}
	checkBundles(t, l, leaves, 44, nil)
	groups := []int{}
	for _, n := range []int{10, 3} {
		in := gen.take(n)
		appendAll(t, l, in, n)
		leaves, groups = append(leaves, in...), append(groups, n)
		checkBundles(t, l, leaves, 44, groups)
	}
	l.Close()
	l = e.open()
	in := gen.take(250) // fills bundle 1 and starts bundle 2
	appendAll(t, l, in, 250)
	leaves = append(leaves, in...)
	checkBundles(t, l, leaves, 0, []int{250})
}

// BenchmarkAppendAfterBigLeaves measures a group of one small leaf (the
// tree builder and Pebble, with fsync: appendRaw) while the growing entry
// bundle is empty, and while it holds 140 leaves of 60,000 bytes (what an
// emitter opening games with the largest settings puts there before its
// open-game-bytes-per-emitter budget of 8 MiB refuses it), in the same run:
// the ratio is what every emitter's group pays for the big leaves. Before
// store format 6 each group rewrote the growing bundle whole (8 MiB a
// group): 40× on the loaded 2-core machine (1.8 ms against 72 ms). Run
// with -benchtime=1x.
func BenchmarkAppendAfterBigLeaves(b *testing.B) {
	per := map[int]time.Duration{}
	for b.Loop() {
		for _, big := range []int{0, 140} {
			b.StopTimer()
			l := benchLedger(b, b.TempDir())
			for range big {
				if err := l.appendRaw([][]byte{bytes.Repeat([]byte{'x'}, 60_000)}); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
			start := time.Now()
			const groups = 100
			for i := range groups {
				if err := l.appendRaw([][]byte{fmt.Appendf(nil, "a small leaf of about the size of an event, %d", i)}); err != nil {
					b.Fatal(err)
				}
			}
			per[big] += time.Since(start) / groups
			b.StopTimer()
			l.Close()
			b.StartTimer()
		}
	}
	n := time.Duration(b.N)
	b.ReportMetric(float64(per[0]/n)/1e6, "ms/group-empty")
	b.ReportMetric(float64(per[140]/n)/1e6, "ms/group-after-big")
	b.ReportMetric(float64(per[140])/float64(per[0]), "ratio")
}

// FuzzBundleEntries holds bundleEntries, which counts the entries of a
// stored bundle or piece, to merkle.ParseBundle: the same count where that
// accepts the data, an error where it finds an entry cut short.
func FuzzBundleEntries(f *testing.F) {
	for _, es := range [][][]byte{{[]byte("a")}, {{}, []byte("bc")}, {bytes.Repeat([]byte{'x'}, 300), []byte("y")}} {
		d, _ := merkle.FormatBundle(es)
		f.Add(d)
		f.Add(d[:len(d)-1])
	}
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := bundleEntries(data)
		es, perr := merkle.ParseBundle(data)
		switch {
		case len(data) == 0:
			if n != 0 || err != nil {
				t.Fatalf("no data: %d entries, %v", n, err)
			}
		case perr == nil:
			if err != nil || n != len(es) {
				t.Fatalf("%d entries (%v), ParseBundle %d", n, err, len(es))
			}
		case n > merkle.TileWidth:
			// More entries than a bundle holds: ParseBundle refuses it,
			// readBundle's pieces never hold that many.
		case err == nil:
			t.Fatalf("%d entries, but ParseBundle: %v", n, perr)
		}
	})
}

// TestReadBundleCorrupt: a growing bundle whose pieces do not follow each
// other (one lost in between), or a piece that is not entries, is
// ErrCorrupt, naming the bundle.
func TestReadBundleCorrupt(t *testing.T) {
	db, err := pebble.Open("db", &pebble.Options{FS: vfs.NewMem(), Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	two, _ := merkle.FormatBundle([][]byte{[]byte("a"), []byte("b")})
	one, _ := merkle.FormatBundle([][]byte{[]byte("d")})
	for _, tc := range []struct {
		name   string
		pieces map[int][]byte
		want   string
	}{
		{"a piece lost", map[int][]byte{0: two, 3: one}, "a piece starts at entry 3, the entries before it end at 2"},
		{"a piece cut short", map[int][]byte{0: two[:len(two)-1]}, "the piece from entry 0"},
		{"an empty piece", map[int][]byte{0: two, 2: {}}, "the piece from entry 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := db.NewBatch()
			b.DeleteRange(pieceKey(7, 0), piecesEnd(7), nil)
			for s, v := range tc.pieces {
				b.Set(pieceKey(7, s), v, nil)
			}
			if err := b.Commit(pebble.Sync); err != nil {
				t.Fatal(err)
			}
			_, err := readBundle(db, 7)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "entry bundle 7") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("readBundle: %v, want ErrCorrupt saying %q", err, tc.want)
			}
		})
	}
	if _, err := readBundle(db, 8); !errors.Is(err, pebble.ErrNotFound) {
		t.Errorf("a bundle not stored: %v, want not found", err)
	}
}
