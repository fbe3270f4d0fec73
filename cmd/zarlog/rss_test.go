package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/sdk"
)

// ServeRSSBound is the documented bound of `zarlog serve`'s peak resident
// memory under TestServeRSS's worst case with the test's budgets
// (docs/OPERATIONS.md §9: measured 955 and 1,032 MiB).
const ServeRSSBound = 1536 << 20

// ServeRSSTarget is the bound wanted with the default budgets
// (ZARLOG_SLOW=1). It is not met yet: docs/OPERATIONS.md §9 has the
// measurement (past 5.3 GiB and growing).
const ServeRSSTarget = 2 << 30

// procMemory returns a process's peak and current resident memory in
// bytes (VmHWM and VmRSS of /proc/PID/status).
func procMemory(t *testing.T, pid int) (peak, now int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmHWM" && k != "VmRSS") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			t.Fatalf("/proc/%d/status: %s: %v", pid, line, err)
		}
		if k == "VmHWM" {
			peak = n << 10
		} else {
			now = n << 10
		}
	}
	return peak, now
}

// TestServeRSS: the worst case of open games for a built `zarlog serve`:
// emitters opening games with the largest settings (60,000 bytes) until
// each is refused at its own bytes' limit and then at all emitters' limit,
// and one emitter opening small games until its count's limit. The
// service's peak resident memory (VmHWM) stays at most ServeRSSBound.
//
// By default the budgets are scaled down (16 MiB of states per emitter,
// 48 MiB for all, 500 games, a 16 MiB cache) and it takes about a minute;
// with ZARLOG_SLOW=1 it runs the defaults (256 MiB per emitter, 1 GiB for
// all, 20,000 games, 128 MiB of cache) and asserts ServeRSSTarget, which
// is not met yet (docs/OPERATIONS.md §9).
func TestServeRSS(t *testing.T) {
	bin, _ := tools(t)
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc: peak RSS is read from /proc/PID/status")
	}
	slow := os.Getenv("ZARLOG_SLOW") != ""
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	dir := t.TempDir()
	big := []string{"big1", "big2", "big3", "big4", "big5"}
	args := []string{"--data", filepath.Join(dir, "data"), "--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0"}
	if !slow {
		big = big[:4]
		args = append(args, "--open-game-bytes-per-emitter", fmt.Sprint(16<<20), "--open-game-bytes", fmt.Sprint(48<<20),
			"--open-games-per-emitter", "500", "--game-cache-bytes", fmt.Sprint(16<<20))
	}
	names := append([]string{"small"}, big...)
	var lines []string
	signers := map[string]note.Signer{}
	nkeys := map[string]string{}
	for _, n := range names {
		s, _, line, nk := emitterKey(t, bin, dir, n)
		signers[n], nkeys[n] = s, nk
		lines = append(lines, line)
	}
	emitters := filepath.Join(dir, "emitters")
	if err := os.WriteFile(emitters, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, bin, append(args, "--emitters", emitters)...)
	pid := p.cmd.Process.Pid
	_, idle := procMemory(t, pid)

	env := func(name string) *floodEnv {
		auth, err := nats.NkeyOptionFromSeed(nkeys[name])
		if err != nil {
			t.Fatal(err)
		}
		nc, err := sdk.Dial(p.lines["nats"], name, auth)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		c, err := sdk.New(nc, sdk.Config{Emitter: name, RetryMin: 5 * time.Millisecond, RetryMax: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		b, err := sdk.NewBackend(c, sdk.GameConfig{Signer: signers[name]})
		if err != nil {
			t.Fatal(err)
		}
		return &floodEnv{signer: signers[name], nkey: nkeys[name], b: b, c: c, nc: nc}
	}
	// open floods one emitter until a refusal names one of limits.
	open := func(name, settings string, limits ...string) string {
		fctx, stop := context.WithCancel(ctx)
		defer stop()
		got := make(chan string, len(limits))
		done := make(chan struct{})
		var once sync.Once
		go func() {
			defer close(done)
			openGames(fctx, t, env(name), settings, limits, func(s string) { once.Do(func() { got <- s }) })
		}()
		var refusal string
		select {
		case refusal = <-got:
		case <-ctx.Done():
			t.Fatalf("%s was never refused naming %v", name, limits)
		}
		stop()
		<-done
		return refusal
	}
	settings := `{"pad":"` + strings.Repeat("x", 60_000) + `"}`
	start := time.Now()
	// The most open games first (small ones, up to the count's limit),
	// then the largest states.
	small := open("small", `{}`, "open-games-per-emitter", "open-game-bytes ")
	var wg sync.WaitGroup
	refusals := make([]string, len(big))
	for i, name := range big {
		wg.Add(1)
		go func() {
			defer wg.Done()
			refusals[i] = open(name, settings, "open-game-bytes-per-emitter", "open-game-bytes ")
		}()
	}
	wg.Wait()
	peak, now := procMemory(t, pid)
	t.Logf("zarlog serve: %d MiB resident idle, %d MiB after, peak %d MiB, %v", idle>>20, now>>20, peak>>20, time.Since(start).Round(time.Second))
	for i, r := range refusals {
		t.Logf("%s: %s", big[i], r)
	}
	t.Logf("small: %s", small)
	if !strings.Contains(small, "(open-games-per-emitter") {
		t.Errorf("small was not refused at its count of open games: %s", small)
	}
	all := false
	for _, r := range refusals {
		all = all || strings.Contains(r, "(open-game-bytes ")
	}
	if !all {
		t.Errorf("no emitter was refused at all emitters' limit (open-game-bytes): %q", refusals)
	}
	bound := int64(ServeRSSBound)
	if slow {
		bound = ServeRSSTarget
	}
	if peak > bound {
		t.Errorf("zarlog serve's peak resident memory %d MiB is above the documented bound %d MiB", peak>>20, bound>>20)
	}
}
