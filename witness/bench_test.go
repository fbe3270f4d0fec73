package witness

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/merkle"
)

// A benchStep is one add-checkpoint request of a growing log.
type benchStep struct {
	old   uint64
	proof []merkle.Hash
	cp    []byte
}

// benchSteps returns n requests that grow a log one leaf at a time from a
// size of 1000, each from the previous size (after a first from 0).
func benchSteps(b *testing.B, l *testLog, n int) []benchStep {
	l.grow(1000)
	steps := []benchStep{{0, nil, l.notes[1000]}}
	for range n - 1 {
		old := l.size()
		cp := l.grow(1)
		steps = append(steps, benchStep{old, l.proof(old), cp})
	}
	return steps
}

// benchWitness runs the steps against a witness on fs, reopening it on a
// new directory each time the steps run out.
func benchAdd(b *testing.B, fs vfs.FS, dirs func() string) {
	a := newTestLog(b, "zarlog.example/a", 1, "a")
	steps := benchSteps(b, a, 500)
	ctx := context.Background()
	w := openWitness(b, fs, dirs(), a)
	j := 0
	for b.Loop() {
		if j == len(steps) {
			b.StopTimer()
			w.Close()
			w = openWitness(b, fs, dirs(), a)
			j = 0
			b.StartTimer()
		}
		s := steps[j]
		j++
		if _, err := w.AddCheckpoint(ctx, s.old, s.proof, s.cp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAddCheckpoint measures add-checkpoint on the real file system,
// with its two fsyncs: the rate one log can be cosigned at.
func BenchmarkAddCheckpoint(b *testing.B) {
	benchAdd(b, vfs.Default, b.TempDir)
}

// BenchmarkAddCheckpointMem is the same in memory: the CPU cost alone
// (signature and proof verification, cosigning, formatting).
func BenchmarkAddCheckpointMem(b *testing.B) {
	n := 0
	benchAdd(b, vfs.NewMem(), func() string { n++; return fmt.Sprint("/w", n) })
}

// BenchmarkAddCheckpointHTTP measures add-checkpoint through the HTTP
// handler and Client on a loopback server (keep-alive), with fsync.
func BenchmarkAddCheckpointHTTP(b *testing.B) {
	a := newTestLog(b, "zarlog.example/a", 1, "a")
	steps := benchSteps(b, a, 500)
	ctx := context.Background()
	var h atomic.Pointer[http.Handler]
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(rw, r) }))
	defer srv.Close()
	open := func() {
		handler := openWitness(b, vfs.Default, b.TempDir(), a).Handler()
		h.Store(&handler)
	}
	open()
	c, err := NewClient(srv.URL, witnessVerifier(b), srv.Client())
	if err != nil {
		b.Fatal(err)
	}
	j := 0
	for b.Loop() {
		if j == len(steps) {
			b.StopTimer()
			open()
			j = 0
			b.StartTimer()
		}
		s := steps[j]
		j++
		if _, err := c.AddCheckpoint(ctx, s.old, s.proof, s.cp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAddCheckpointParallel cosigns 8 logs concurrently on the real
// file system, one request per log per iteration: requests for different
// logs do not wait for each other. It reports requests/s over all logs.
func BenchmarkAddCheckpointParallel(b *testing.B) {
	const nlogs = 8
	var logs []*testLog
	var steps [][]benchStep
	for i := range nlogs {
		l := newTestLog(b, fmt.Sprintf("zarlog.example/%d", i), byte(10+i), "l")
		logs = append(logs, l)
		steps = append(steps, benchSteps(b, l, 200))
	}
	w := openWitness(b, vfs.Default, b.TempDir(), logs...)
	ctx := context.Background()
	j, n := 0, 0
	for b.Loop() {
		if j == len(steps[0]) {
			b.StopTimer()
			w.Close()
			w = openWitness(b, vfs.Default, b.TempDir(), logs...)
			j = 0
			b.StartTimer()
		}
		var wg sync.WaitGroup
		for i := range nlogs {
			s := steps[i][j]
			wg.Go(func() {
				if _, err := w.AddCheckpoint(ctx, s.old, s.proof, s.cp); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		j++
		n += nlogs
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "requests/s")
}
