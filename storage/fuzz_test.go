package storage_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/storage"
)

const testNote = "zarlog.storage.test/log\n12\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— zarlog.storage.test/log AAAAAAAAAA==\n"

// FuzzParseLock: ParseLock never panics, and what it accepts formats back
// to the same bytes.
func FuzzParseLock(f *testing.F) {
	f.Add(storage.Lock{Holder: "node-a", Term: 3, Renewal: 17, Lease: 6 * time.Second, Note: []byte(testNote)}.Format())
	f.Add([]byte("zarlog-lock v1\nholder x\nterm 01\nrenewal 1\nlease 1\n\nn"))
	f.Add([]byte("zarlog-lock v1\nholder a b\nterm 1\nrenewal 1\nlease 0\n\nn"))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := storage.ParseLock(b)
		if err != nil {
			return
		}
		if got := k.Format(); !bytes.Equal(got, b) {
			t.Fatalf("Format(ParseLock(%q)) = %q", b, got)
		}
	})
}

// FuzzParseTimes: ParseTimes never panics, and what it accepts formats back
// to the same bytes.
func FuzzParseTimes(f *testing.F) {
	tile := merkle.Tile{Level: merkle.EntriesLevel, Index: 2, Width: 17}
	f.Add(storage.FormatTimes([]ledger.AppendTime{{Index: 512, Time: time.Unix(1, 5)}, {Index: 520, Time: time.Unix(2, 0)}}))
	f.Add([]byte("512 1\n512 2\n"))
	f.Add([]byte("512 -1\n"))
	f.Add([]byte("0512 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := storage.ParseTimes(tile, b)
		if err != nil {
			return
		}
		if got := storage.FormatTimes(ts); !bytes.Equal(got, b) {
			t.Fatalf("FormatTimes(ParseTimes(%q)) = %q", b, got)
		}
	})
}

func TestLockRefuses(t *testing.T) {
	good := storage.Lock{Holder: "node-a", Term: 1, Renewal: 1, Lease: time.Second, Note: []byte(testNote)}.Format()
	if _, err := storage.ParseLock(good); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"", "zarlog-lock v2\n", string(good[:20]),
		"zarlog-lock v1\nholder a/b\nterm 1\nrenewal 1\nlease 1\n\nx",
		"zarlog-lock v1\nholder a\nterm 1\nrenewal 1\nlease 0\n\nx",
		"zarlog-lock v1\nholder a\nterm +1\nrenewal 1\nlease 1\n\nx",
		"zarlog-lock v1\nholder a\nterm 1\nrenewal 1\nlease 1\nx",
		"zarlog-lock v1\nholder a\nterm 1\nrenewal 1\nlease 1\n\n",
	} {
		if _, err := storage.ParseLock([]byte(bad)); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
