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

// A bundleLayout says how the entry bundles of a log are stored: which
// full bundles are whole 'e' records (formats 6 and 7 wrote them), which
// one starts with a format-5 store's growing bundle, and where the groups
// that wrote pieces began.
type bundleLayout struct {
	whole   uint64   // the bundles below it are whole 'e' records with no pieces
	legacyN uint64   // the bundle whose 'e' record holds legacy entries, if legacy > 0
	legacy  int      // the entries of that record
	cuts    []uint64 // the first leaf of each group, if known (nil: not checked)
}

// checkBundles checks that every entry bundle of the log reads back as the
// leaves it holds (readBundle, Leaves, LeavesAt, ReadTile at every width,
// readLeaf), and that it is stored as the layout says: below lay.whole one
// 'e' record with no pieces; from there on (store format 8) the 'e' record
// of a format-5 store's growing bundle, if it is lay.legacyN, then a piece
// a group, each starting where a group began (lay.cuts) or at the bundle's
// start; nothing past the log.
func checkBundles(t *testing.T, l *Ledger, leaves [][]byte, lay bundleLayout) {
	t.Helper()
	size := uint64(len(leaves))
	whole, pieces := storedBundles(t, l.db)
	starts := map[uint64][]int{} // the piece starts by bundle
	it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixPiece}, UpperBound: prefixEnd(prefixPiece)})
	if err != nil {
		t.Fatal(err)
	}
	for it.First(); it.Valid(); it.Next() {
		n := binary.BigEndian.Uint64(it.Key()[1:9])
		starts[n] = append(starts[n], int(it.Key()[9]))
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
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
		for w := 1; w <= len(es); w++ {
			tile := merkle.Tile{Level: merkle.EntriesLevel, Index: n, Width: w}
			served, err := l.ReadTile(context.Background(), tile)
			if wantW, _ := merkle.FormatBundle(es[:w]); err != nil || !bytes.Equal(served, wantW) {
				t.Fatalf("size %d: %s serves %d bytes (%v), want %d", size, tile.Path(), len(served), err, len(wantW))
			}
		}
		if n < lay.whole {
			if len(es) != merkle.TileWidth || !bytes.Equal(whole[n], want) || len(pieces[n]) > 0 {
				t.Fatalf("size %d: full bundle %d of the upgraded store is stored as %d bytes and %d pieces, want whole", size, n, len(whole[n]), len(pieces[n]))
			}
			continue
		}
		at := 0
		if lay.legacy > 0 && n == lay.legacyN {
			if w, _ := bundleEntries(whole[n]); w != lay.legacy {
				t.Fatalf("size %d: the upgraded store's bundle %d has %d entries in its 'e' record, want %d", size, n, w, lay.legacy)
			}
			at = lay.legacy
		} else if whole[n] != nil {
			t.Fatalf("size %d: bundle %d (of %d entries) has an 'e' record of %d bytes", size, n, len(es), len(whole[n]))
		}
		if lay.cuts != nil {
			wantStarts := []int{}
			if at < len(es) {
				wantStarts = append(wantStarts, at)
			}
			for _, c := range lay.cuts {
				if c > n*merkle.TileWidth+uint64(at) && c < n*merkle.TileWidth+uint64(len(es)) {
					wantStarts = append(wantStarts, int(c-n*merkle.TileWidth))
				}
			}
			if !slices.Equal(starts[n], wantStarts) {
				t.Fatalf("size %d: bundle %d's pieces start at %v; the groups began at %v, want %v", size, n, starts[n], lay.cuts, wantStarts)
			}
		}
		for _, p := range pieces[n] {
			m, err := bundleEntries(p)
			if err != nil {
				t.Fatal(err)
			}
			at += m
		}
		if at != len(es) {
			t.Fatalf("size %d: bundle %d stores %d entries, want %d", size, n, at, len(es))
		}
	}
	for n := range whole {
		if n*merkle.TileWidth >= size {
			t.Fatalf("size %d: an 'e' record for bundle %d past the log", size, n)
		}
	}
	for n := range pieces {
		if n*merkle.TileWidth >= size {
			t.Fatalf("size %d: pieces of bundle %d past the log", size, n)
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

// wholeBundles makes db's entry bundles what store formats 6 and 7 wrote:
// each full bundle stored as pieces is written whole under 'e' and its
// pieces deleted. It returns how many it rewrote.
func wholeBundles(t testing.TB, db *pebble.DB) int {
	t.Helper()
	_, pieces := storedBundles(t, db)
	b := db.NewBatch()
	defer b.Close()
	n := 0
	for i := range pieces {
		d, err := readBundle(db, i)
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := bundleEntries(d); m < merkle.TileWidth {
			continue
		}
		b.Set(tileKey(merkle.Tile{Level: merkle.EntriesLevel, Index: i}), d, nil)
		if err := b.DeleteRange(pieceKey(i, 0), piecesEnd(i), nil); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if err := b.Commit(pebble.Sync); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBundlePieces appends in groups of varied sizes, across bundle
// boundaries, and checks after each that every entry bundle, full or
// growing, is stored a group's entries at a time (store format 8,
// bundle.go) and reads back; then that a reopened store continues it.
func TestBundlePieces(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	gen := newStreamGen(t, e.k, "pieces", 3, 4)
	var leaves [][]byte
	var cuts []uint64
	for _, n := range []int{1, 1, 7, 100, 200, 255, 1, 300, 2, 256, 3, 253, 512} {
		in := gen.take(n)
		cuts = append(cuts, uint64(len(leaves)))
		appendAll(t, l, in, n)
		leaves = append(leaves, in...)
		checkBundles(t, l, leaves, bundleLayout{cuts: cuts})
	}
	l.Close()
	e.cfg.Check = CheckEntries
	l = e.open()
	in := gen.take(5)
	cuts = append(cuts, uint64(len(leaves)))
	appendAll(t, l, in, 5)
	leaves = append(leaves, in...)
	checkBundles(t, l, leaves, bundleLayout{cuts: cuts})
}

// TestBundleFormat5 opens a format-5 store, whose growing entry bundle is
// one 'e' record rewritten by each group: Open marks it format 6 (and then
// 7, splitting its game heads, and 8), the next groups add pieces after
// that record, and so does the group that fills the bundle: its 'e' record
// and pieces stay. An older version refuses a format-6 store by its format
// record.
func TestBundleFormat5(t *testing.T) {
	e := newTestEnv(t)
	l := e.open()
	gen := newStreamGen(t, e.k, "format5", 5, 4)
	leaves := gen.take(300)
	appendAll(t, l, leaves, 100)
	mustSign(t, l)
	l.Close()

	// What format 5 stored: the full bundle 0 and the growing bundle 1
	// (44 entries) whole.
	db := openRaw(t, e)
	if n := wholeBundles(t, db); n != 1 {
		t.Fatalf("%d full bundles", n)
	}
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
	if f, err := get(l.db, keyFormat); err != nil || f[0] != storeFormat || storeFormat != 9 {
		t.Fatalf("format record %x (%v), want 9", f[:1], err)
	}
	if split, old := splitHeads(t, l.db); split == 0 || old != 0 {
		t.Fatalf("%d heads split, %d of format 6", split, old)
	}
	lay := bundleLayout{whole: 1, legacyN: 1, legacy: 44, cuts: []uint64{}}
	checkBundles(t, l, leaves, lay)
	for _, n := range []int{10, 3} {
		in := gen.take(n)
		lay.cuts = append(lay.cuts, uint64(len(leaves)))
		appendAll(t, l, in, n)
		leaves = append(leaves, in...)
		checkBundles(t, l, leaves, lay)
	}
	l.Close()
	l = e.open()
	in := gen.take(250) // fills bundle 1 and starts bundle 2
	lay.cuts = append(lay.cuts, uint64(len(leaves)))
	appendAll(t, l, in, 250)
	leaves = append(leaves, in...)
	checkBundles(t, l, leaves, lay)
}

// TestBundleFormat7 builds one log twice, with groups of varied sizes, and
// makes the second store what format 7 wrote (each full entry bundle whole
// under 'e', wholeBundles): the format-7 store opens, logs its upgrade
// from 7, says the current format and serves every entry bundle, at every
// width, byte for byte as the store written in the current format does; both take the same
// groups after that, each filled bundle staying as its pieces, and still
// serve the same bytes, also after a reopen that checks every entry and
// a Rebuild.
func TestBundleFormat7(t *testing.T) {
	e := newTestEnv(t)
	e7 := &testEnv{t: t, k: e.k, fs: vfs.NewMem(), clock: newFakeClock()}
	e7.cfg = e.cfg
	e7.cfg.FS, e7.cfg.Now = e7.fs, e7.clock.Now
	l, l7 := e.open(), e7.open()
	gen := newStreamGen(t, e.k, "format7", 7, 4)
	var leaves [][]byte
	var cuts []uint64
	add := func(ls []*Ledger, sizes ...int) {
		for _, n := range sizes {
			in := gen.take(n)
			cuts = append(cuts, uint64(len(leaves)))
			for _, l := range ls {
				appendAll(t, l, in, n)
			}
			leaves = append(leaves, in...)
		}
	}
	add([]*Ledger{l, l7}, 1, 300, 100, 3, 200, 40)
	mustSign(t, l7)
	l7.Close()
	db := openRaw(t, e7)
	if n := wholeBundles(t, db); n != 2 {
		t.Fatalf("%d full bundles", n)
	}
	format8Games(t, db, nil) // format 7's layout of the games
	if err := db.Set(keyFormat, append([]byte{7}, l.origin...), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	db.Close()

	h := new(recordingHandler)
	e7.cfg.Logger = slog.New(h)
	l7 = e7.open()
	e7.cfg.Logger = nil
	if from := upgradeFrom(t, h, "upgrading the store: a full entry bundle is kept as its pieces"); from != 7 {
		t.Errorf("the upgrade logged from %d, want 7", from)
	}
	if f, err := get(l7.db, keyFormat); err != nil || f[0] != storeFormat || storeFormat != 9 {
		t.Fatalf("format record %x (%v), want 9", f[:1], err)
	}
	same := func(what string) {
		t.Helper()
		size := uint64(len(leaves))
		for n := uint64(0); n*merkle.TileWidth < size; n++ {
			full, _ := merkle.TileAt(merkle.EntriesLevel, n, size)
			for w := 1; w <= full.Width; w++ {
				tile := merkle.Tile{Level: merkle.EntriesLevel, Index: n, Width: w}
				a, err := l.ReadTile(context.Background(), tile)
				if err != nil {
					t.Fatalf("%s: %s: %v", what, tile.Path(), err)
				}
				b, err := l7.ReadTile(context.Background(), tile)
				if err != nil || !bytes.Equal(a, b) {
					t.Fatalf("%s: %s: the upgraded format-7 store serves %d bytes (%v), the format-8 one %d", what, tile.Path(), len(b), err, len(a))
				}
			}
		}
	}
	same("upgraded")
	checkBundles(t, l7, leaves, bundleLayout{whole: 2})
	checkBundles(t, l, leaves, bundleLayout{cuts: cuts})

	add([]*Ledger{l, l7}, 1, 300, 2, 256)
	same("after appends")
	checkBundles(t, l7, leaves, bundleLayout{whole: 2})
	checkBundles(t, l, leaves, bundleLayout{cuts: cuts})
	_, pieces := storedBundles(t, l7.db)
	if len(pieces[2]) != 4 || len(pieces[3]) != 3 {
		t.Fatalf("the upgraded store's bundles 2 and 3, filled since, are %d and %d pieces, want 4 and 3", len(pieces[2]), len(pieces[3]))
	}
	l.Close()
	l7.Close()

	e.cfg.Check, e7.cfg.Check = CheckEntries, CheckEntries
	l, l7 = e.open(), e7.open()
	defer l.Close()
	defer l7.Close()
	if err := l7.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	same("reopened")
	checkBundles(t, l7, leaves, bundleLayout{whole: 2})
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

// BenchmarkReadBundle reads full entry bundles of 256 leaves of 220 bytes
// (about an event's size) with readBundle, as ReadTile serves them to
// mirrors and tlog-tiles clients, and single leaves with readLeaf (the
// sequencer's read-back of a logged canonical id), from a store compacted
// to sstables with the ledger's Pebble options: stored whole under 'e' (as
// formats 6 and 7 wrote a full bundle: one point lookup) and as 1 to 256
// pieces (format 8 keeps the pieces its groups wrote: a lookup that finds
// no 'e' record, then a scan). A bundle filled by groups of 128 is two
// pieces; one filled by one-event groups (a log at a trickle) is 256.
func BenchmarkReadBundle(b *testing.B) {
	const bundles = 32
	leaves := make([][]byte, bundles*merkle.TileWidth)
	for i := range leaves {
		leaves[i] = bytes.Repeat([]byte{byte(i)}, 220)
	}
	for _, pieces := range []int{0, 1, 2, 16, 256} {
		db, err := pebble.Open(b.TempDir(), pebbleOptions(&Config{}, slog.New(slog.DiscardHandler)))
		if err != nil {
			b.Fatal(err)
		}
		batch := db.NewBatch()
		for n := range uint64(bundles) {
			es := leaves[n*merkle.TileWidth : (n+1)*merkle.TileWidth]
			if pieces == 0 {
				d, _ := merkle.FormatBundle(es)
				batch.Set(tileKey(merkle.Tile{Level: merkle.EntriesLevel, Index: n}), d, nil)
				continue
			}
			per := merkle.TileWidth / pieces
			for s := 0; s < merkle.TileWidth; s += per {
				d, _ := merkle.FormatBundle(es[s : s+per])
				batch.Set(pieceKey(n, s), d, nil)
			}
		}
		if err := errors.Join(batch.Commit(pebble.NoSync), batch.Close()); err != nil {
			b.Fatal(err)
		}
		if err := db.Compact(context.Background(), []byte{0}, []byte{0xff}, true); err != nil {
			b.Fatal(err)
		}
		name := "whole"
		if pieces > 0 {
			name = fmt.Sprintf("pieces=%d", pieces)
		}
		b.Run("bundle/"+name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				d, err := readBundle(db, uint64(i%bundles))
				if err != nil || len(d) != merkle.TileWidth*222 {
					b.Fatalf("bundle %d: %d bytes, %v", i%bundles, len(d), err)
				}
			}
		})
		b.Run("leaf/"+name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				j := uint64(i*97) % uint64(len(leaves))
				if leaf, ok, err := readLeaf(db, j); err != nil || !ok || len(leaf) != 220 {
					b.Fatalf("leaf %d: %d bytes, %v, %v", j, len(leaf), ok, err)
				}
			}
		})
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
