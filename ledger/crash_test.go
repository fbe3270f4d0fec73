package ledger

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zarlog/zarlog/merkle"
)

// The crash test's stream: crashWorkers goroutines, each appending its own
// games (crashEvents events), so their order within a worker is fixed.
const (
	crashWorkers = 4
	crashEvents  = 2500
	crashEnvDir  = "ZARLOG_CRASH_CHILD"
)

func crashStreams(t testing.TB, k *testKeys) [][][]byte {
	s := make([][][]byte, crashWorkers)
	for w := range s {
		s[w] = newStreamGen(t, k, fmt.Sprintf("crash-w%d", w), uint64(1000+w), 4).take(crashEvents)
	}
	return s
}

// TestCrash runs a child process that appends a known stream of events and
// prints every acknowledged index and every published checkpoint, kills it
// with SIGKILL at random moments (at least 20 times; ZARLOG_SLOW=1 for 100),
// restarts it each time, and lets the last run finish. Then it checks the
// store: every acknowledged event is present exactly once at the index it
// was acknowledged with, every index from 0 holds one event of the stream,
// and every checkpoint any run published is consistent with the final tree.
func TestCrash(t *testing.T) {
	if os.Getenv(crashEnvDir) != "" {
		t.Skip("in the child")
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	kills := 20
	if os.Getenv("ZARLOG_SLOW") != "" {
		kills = 100
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(20261130, 7))
	total := crashWorkers * crashEvents

	acked := map[[2]int]uint64{} // (worker, position) → index
	var notes [][]byte
	runs, killed := 0, 0
	for killed < kills+1 {
		last := killed == kills
		// When to kill: after the child opened the store, after its
		// first checkpoint, or after a random number of acks.
		var killAfter func(kind string, acks int) bool
		switch r := rng.IntN(10); {
		case last:
			killAfter = func(string, int) bool { return false }
		case r == 0:
			killAfter = func(kind string, _ int) bool { return kind == "ready" }
		case r == 1:
			killAfter = func(kind string, _ int) bool { return kind == "cp" }
		default:
			n := 1 + rng.IntN(total)
			killAfter = func(kind string, acks int) bool { return kind == "ack" && acks >= n }
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnvDir+"="+dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		runs++
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		acks, done, wasKilled := 0, false, false
		for sc.Scan() {
			kind, rest, _ := strings.Cut(sc.Text(), " ")
			switch kind {
			case "ack":
				var w, pos int
				var index uint64
				if _, err := fmt.Sscan(rest, &w, &pos, &index); err != nil {
					t.Fatalf("run %d: bad line %q", runs, sc.Text())
				}
				k := [2]int{w, pos}
				if prev, ok := acked[k]; ok && prev != index {
					t.Fatalf("run %d: worker %d event %d acknowledged at index %d, earlier at %d", runs, w, pos, index, prev)
				}
				acked[k] = index
				acks++
			case "cp":
				n, err := base64.StdEncoding.DecodeString(rest)
				if err != nil {
					t.Fatal(err)
				}
				notes = append(notes, n)
			case "done":
				done = true
			}
			if !wasKilled && killAfter(kind, acks) {
				cmd.Process.Kill() // SIGKILL
				wasKilled = true
			}
		}
		err = cmd.Wait()
		switch {
		case wasKilled:
			killed++
		case last && done && err == nil:
			killed++ // the final, complete run
		case done && err == nil:
			// The child finished before the kill point: run again.
		default:
			t.Fatalf("run %d: child failed: %v\n%s", runs, err, stderr.Bytes())
		}
	}
	t.Logf("%d runs, %d kills, %d acknowledged events, %d checkpoints reported", runs, kills, len(acked), len(notes))

	k := newTestKeys(t)
	streams := crashStreams(t, k)
	l, err := Open(context.Background(), Config{Dir: dir, Signer: k.signer, Verifier: k.verifier, Emitters: k.keyring,
		Beacons: testBeacons, CheckpointInterval: -1, Check: CheckEntries})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	final := mustSign(t, l)
	if final.Size != uint64(total) || len(acked) != total {
		t.Fatalf("final tree has %d leaves and %d events were acknowledged; the stream has %d", final.Size, len(acked), total)
	}
	seen := make([]bool, total)
	for w, s := range streams {
		for pos, leaf := range s {
			ev := parse(t, leaf)
			index, _, err := l.Lookup(ctx, ev.Emitter, ev.ID)
			if err != nil {
				t.Fatalf("worker %d event %d: %v", w, pos, err)
			}
			if a := acked[[2]int{w, pos}]; a != index {
				t.Fatalf("worker %d event %d is at %d, acknowledged at %d", w, pos, index, a)
			}
			got, err := l.LeavesAt(ctx, []uint64{index})
			if err != nil || !bytes.Equal(got[0], leaf) {
				t.Fatalf("leaf %d is not worker %d event %d: %v", index, w, pos, err)
			}
			if seen[index] {
				t.Fatalf("index %d holds two events", index)
			}
			seen[index] = true
		}
	}
	if len(notes) < kills/2 {
		t.Errorf("only %d checkpoints reported over %d runs", len(notes), runs)
	}
	for _, n := range notes {
		cp, err := merkle.Open(n, k.verifier)
		if err != nil {
			t.Fatal(err)
		}
		p, err := l.ConsistencyProof(ctx, cp.Size, final.Size)
		if err != nil {
			t.Fatal(err)
		}
		if err := merkle.CheckConsistency(cp.Size, final.Size, cp.Hash, final.Hash, p); err != nil {
			t.Fatalf("checkpoint of size %d is not consistent with the final tree: %v", cp.Size, err)
		}
	}
	// The projections written as the log grew, across every kill (the
	// games' heads and history chunks among them), are what the log gives:
	// the same after a Rebuild.
	before := dumpProjections(t, l)
	if err := l.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	diffDumps(t, before, dumpProjections(t, l))
}

// TestCrashChild is the child process of TestCrash. It appends the crash
// streams from the beginning (what was appended before comes back as
// Duplicate with its index) and prints "ack worker position index" for each
// acknowledged event and "cp <base64 note>" for each published checkpoint.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashEnvDir)
	if dir == "" {
		t.Skip("run by TestCrash")
	}
	k := newTestKeys(t)
	streams := crashStreams(t, k)
	ctx := context.Background()
	l, err := Open(ctx, Config{Dir: dir, Signer: k.signer, Verifier: k.verifier, Emitters: k.keyring,
		Beacons: testBeacons, CheckpointInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	say := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		os.Stdout.WriteString(line + "\n") // unbuffered: a printed ack survives the kill
	}
	say("ready")
	stopWatch := make(chan struct{})
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for {
			n, _, next := l.Latest()
			if n != nil {
				say("cp " + base64.StdEncoding.EncodeToString(n))
			}
			select {
			case <-next:
			case <-stopWatch:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w, s := range streams {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for i := 0; i < len(s); {
				n := min(1+rng.IntN(8), len(s)-i)
				out, err := l.Append(ctx, inputs(t, s[i:i+n]...))
				if err != nil {
					t.Error(err)
					return
				}
				for j, o := range out {
					if o.Result == Rejected {
						t.Errorf("worker %d event %d rejected: %v", w, i+j, o.Reject)
						return
					}
					say("ack " + strconv.Itoa(w) + " " + strconv.Itoa(i+j) + " " + strconv.FormatUint(o.Index, 10))
				}
				i += n
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	close(stopWatch)
	<-watchDone
	if !t.Failed() {
		say("done")
	}
}
