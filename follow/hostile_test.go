package follow

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/merkle"
)

// TestHostileLog follows a log whose operator signs what it likes (package
// testonly's HostileLog, full 16.8 MB entry bundles): a checkpoint of
// absurd size is refused before anything is fetched; bundles larger than
// the format allows, bundles that do not match the tiles and tiles that do
// not match the checkpoint are refused after one step, with nothing stored;
// a consistent log larger than the disk budget stops at the budget. The
// copy never accepts anything and never holds a leaf it has not verified.
func TestHostileLog(t *testing.T) {
	const budget = 40 << 20
	for _, tc := range []struct {
		size  uint64
		lie   testonly.Lie
		check func(t *testing.T, err error)
	}{
		{1 << 40, testonly.LieNone, limit("max-size", true)},
		{1<<63 - 1, testonly.LieNone, limit("max-size", true)},
		{1<<64 - 1, testonly.LieNone, limit("max-size", true)},
		{1 << 30, testonly.LieOversizeBundles, limit("bundle-size", true)},
		{1 << 30, testonly.LieBundles, refusal(KindEntries, "hashes to")},
		{1 << 30, testonly.LieTiles, refusal(KindEntries, "own hash tiles do not match its checkpoint")},
		{1 << 30, testonly.LieNone, limit("max-disk", false)},
	} {
		t.Run(fmt.Sprintf("%s/size=%d", tc.lie, tc.size), func(t *testing.T) {
			h, err := testonly.NewHostileLog(testOrigin, tc.size, tc.lie)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			f := newFollower(t, srv.URL, h.VKey(), vfs.Default, func(c *Config) {
				c.Concurrency, c.Chunk, c.StepBytes, c.MaxBytes = 2, 4, 4<<20, budget
			})
			var first int64
			for i := range 2 { // the second call changes nothing
				res, err := f.Update(context.Background())
				if res.Accepted || res.Checkpoint.Size != 0 {
					t.Fatalf("accepted %+v", res)
				}
				tc.check(t, err)
				n, _ := h.Served()
				if i == 0 {
					first = n
				} else if n != first && tc.lie != testonly.LieNone {
					t.Errorf("the same lying checkpoint again: %d bundles fetched again", n-first)
				}
			}
			bundles, sent := h.Served()
			stored := f.store.State().Size
			use := f.store.DiskUsage()
			t.Logf("served %d bundles (%d bytes); stored %d leaves, %d bytes on disk; requests %v", bundles, sent, stored, use, h.Requests())
			switch {
			case tc.size > DefaultMaxSize && bundles != 0:
				t.Errorf("fetched %d bundles for a checkpoint larger than max-size", bundles)
			case tc.lie != testonly.LieNone && stored != 0:
				t.Errorf("stored %d leaves of a lying log", stored)
			case tc.lie != testonly.LieNone && bundles > int64(2*(2+4)):
				t.Errorf("fetched %d bundles of a lying log: more than two steps and those in flight", bundles)
			case use > budget+2*maxBundleBytes:
				t.Errorf("the store holds %d bytes, more than its budget %d and a step", use, budget)
			}
			if tc.lie == testonly.LieNone && tc.size < DefaultMaxSize && stored == 0 {
				t.Errorf("nothing stored below the budget")
			}
		})
	}
}

// limit checks a *LimitError of the given limit.
func limit(name string, logFault bool) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var le *LimitError
		if !errors.As(err, &le) || le.Limit != name || le.LogFault() != logFault || errors.Is(err, ErrLogFault) != logFault || errors.Is(err, ErrBudget) == logFault {
			t.Fatalf("got %v, want a limit error of %s (log's fault: %v)", err, name, logFault)
		}
		if !strings.Contains(err.Error(), name) {
			t.Errorf("%q does not name the limit %s", err, name)
		}
		t.Log(err)
	}
}

// refusal checks a *Refusal of kind with detail.
func refusal(kind, detail string) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var ref *Refusal
		if !errors.As(err, &ref) || ref.Evidence.Kind != kind || !strings.Contains(ref.Evidence.Detail, detail) {
			t.Fatalf("got %v, want a refusal of kind %s saying %q", err, kind, detail)
		}
		t.Log(err, "; ", ref.Evidence.Detail)
	}
}

// TestDeclaredTooLarge: a response whose Content-Length is more than the
// format allows is refused without reading it, and one sent without a
// Content-Length is refused once it goes past the limit.
func TestDeclaredTooLarge(t *testing.T) {
	for _, lying := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if lying { // no Content-Length: read up to one byte past the limit
				w.Write(make([]byte, 100))
				w.(http.Flusher).Flush()
				w.Write(make([]byte, 9000))
				return
			}
			w.Header().Set("Content-Length", fmt.Sprint(maxBundleBytes+1))
		}))
		src, err := NewSource(SourceConfig{URL: srv.URL, Attempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = src.Bundle(context.Background(), merkle.Tile{Level: merkle.EntriesLevel, Index: 3, Width: merkle.TileWidth})
		if lying {
			_, err = src.ReadTiles(context.Background(), []merkle.Tile{{Level: 0, Index: 3, Width: merkle.TileWidth}})
		}
		if !errors.Is(err, ErrTooLarge) || errors.Is(err, ErrFetch) {
			t.Errorf("lying %v: got %v, want ErrTooLarge", lying, err)
		}
		t.Log(err)
		srv.Close()
	}
}

// TestCheckpointTooLarge: a /checkpoint over 64 KiB is the log's fault.
func TestCheckpointTooLarge(t *testing.T) {
	m := newMemLog(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, merkle.MaxNoteSize+1))
	}))
	defer srv.Close()
	f := newFollower(t, srv.URL, m.vkey, nil)
	_, err := f.Update(context.Background())
	limit("checkpoint-size", true)(t, err)
}
