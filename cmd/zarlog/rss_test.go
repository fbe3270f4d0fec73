package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/internal/serve"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/sdk"
)

// serveRSSBound is the documented bound of `zarlog serve`'s resident
// memory with the budgets of cfg: the sum of serve.MemoryBudget's terms
// (docs/OPERATIONS.md §9 "Memory"), from which the binary sets the Go
// runtime's soft memory limit.
func serveRSSBound(cfg serve.Config) int64 {
	return serve.MemoryBound(serve.MemoryBudget(cfg))
}

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
// and one emitter opening small games until its count's limit; then every
// emitter goes on sending commits, all refused, until the flood has lasted
// its hold. The service's peak resident memory (VmHWM) stays at most the
// documented bound of its budgets (serveRSSBound), and the memory is
// logged every interval (ZARLOG_RSS_PROFILES=DIR also saves heap profiles
// from the admin listener there).
//
// By default the budgets are scaled down (16 MiB of states per emitter,
// 48 MiB for all, 500 games, a 16 MiB cache), the hold is 30 s and it
// takes about a minute; with ZARLOG_SLOW=1 it runs the defaults (256 MiB
// per emitter, 1 GiB for all, 20,000 games, 128 MiB of cache) with a hold
// of 12 minutes.
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
	args := []string{"--data", filepath.Join(dir, "data"), "--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--admin", "127.0.0.1:0"}
	var budgets serve.Config // the defaults
	if !slow {
		big = big[:4]
		budgets.GameCacheBytes = 16 << 20
		args = append(args, "--open-game-bytes-per-emitter", fmt.Sprint(16<<20), "--open-game-bytes", fmt.Sprint(48<<20),
			"--open-games-per-emitter", "500", "--game-cache-bytes", fmt.Sprint(budgets.GameCacheBytes))
	}
	bound := serveRSSBound(budgets)
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
	every := 15 * time.Second
	if slow {
		every = time.Minute
	}
	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		sampleMemory(sampleCtx, t, p, every, os.Getenv("ZARLOG_RSS_PROFILES"))
	}()

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
	refusedPeak, _ := procMemory(t, pid)
	t.Logf("every emitter refused after %v: peak %d MiB", time.Since(start).Round(time.Second), refusedPeak>>20)
	// Then every emitter goes on sending what is refused (the states at
	// their limits, each new game over-limit and kept in the rejected
	// store), until the flood has lasted hold: what the service holds
	// must not grow with the flood's duration.
	hold := 30 * time.Second
	if slow {
		hold = 12 * time.Minute
	}
	var sent atomic.Int64
	hctx, stopHold := context.WithDeadline(ctx, start.Add(hold))
	for _, name := range names {
		s := settings
		if name == "small" {
			s = `{}`
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			floodRefused(hctx, t, env(name), s, &sent)
		}()
	}
	wg.Wait()
	stopHold()
	stopSampling()
	<-sampled
	peak, now := procMemory(t, pid)
	t.Logf("zarlog serve: %d MiB resident idle, %d MiB after, peak %d MiB, %v; %d commits sent after every emitter was refused",
		idle>>20, now>>20, peak>>20, time.Since(start).Round(time.Second), sent.Load())
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
	if peak > bound {
		t.Errorf("zarlog serve's peak resident memory %d MiB is above the documented bound %d MiB", peak>>20, bound>>20)
	}
}

// memorySeries are the metrics sampleMemory logs: the Go heap, Pebble's
// memory, and what the budgets count.
var memorySeries = []string{
	"go_gc_gomemlimit_bytes", "go_memstats_heap_inuse_bytes", "go_memstats_heap_idle_bytes", "go_memstats_heap_released_bytes", "go_memstats_sys_bytes",
	"zarlog_ledger_pebble_block_cache_bytes", "zarlog_ledger_pebble_memtable_bytes", "zarlog_ledger_pebble_zombie_memtable_bytes",
	"zarlog_ledger_pebble_file_cache_bytes", "zarlog_ledger_game_cache_bytes", "zarlog_ledger_open_game_bytes", "zarlog_ingest_backlog_bytes",
}

// sampleMemory logs serve's resident memory (VmRSS, VmHWM) and the metrics
// of memorySeries (each summed over its labels) every interval until ctx
// ends; with profiles set it also saves a heap profile from the admin
// listener's /debug/pprof/heap there each time (ZARLOG_RSS_PROFILES).
func sampleMemory(ctx context.Context, t *testing.T, p *serveProc, every time.Duration, profiles string) {
	token, err := os.ReadFile(p.lines["admin-token"])
	if err != nil {
		t.Errorf("the admin token: %v", err)
		return
	}
	get := func(path string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", p.lines["admin"]+path, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s", path, resp.Status)
		}
		return b, err
	}
	start := time.Now()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for i := 1; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		peak, now := procMemory(t, p.cmd.Process.Pid)
		line := fmt.Sprintf("memory at %v: rss %d MiB, peak %d MiB", time.Since(start).Round(time.Second), now>>20, peak>>20)
		if b, err := get("/metrics"); err == nil {
			sums := map[string]float64{}
			for _, l := range strings.Split(string(b), "\n") {
				name, rest, _ := strings.Cut(l, " ")
				name, _, _ = strings.Cut(name, "{")
				if i := strings.LastIndexByte(rest, ' '); i >= 0 && strings.HasPrefix(l, name+"{") {
					rest = rest[i+1:]
				}
				if v, err := strconv.ParseFloat(rest, 64); err == nil {
					sums[name] += v
				}
			}
			for _, n := range memorySeries {
				line += fmt.Sprintf(", %s %.0f MiB", strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(n, "zarlog_"), "go_memstats_"), "_bytes"), sums[n]/(1<<20))
			}
		} else if ctx.Err() == nil {
			line += fmt.Sprintf(" (metrics: %v)", err)
		}
		t.Log(line)
		if profiles != "" {
			if b, err := get("/debug/pprof/heap"); err == nil {
				os.WriteFile(filepath.Join(profiles, fmt.Sprintf("heap-%02d.pb.gz", i)), b, 0o644)
			} else if ctx.Err() == nil {
				t.Logf("heap profile: %v", err)
			}
		}
	}
}

// floodRefused opens games with settings as fast as the stream takes them
// (four at a time) until ctx ends, counting them in sent: past the limits,
// each is refused by the ledger; one refused by the backlog's budget is
// sent again after a pause.
func floodRefused(ctx context.Context, t *testing.T, f *floodEnv, settings string, sent *atomic.Int64) {
	emitter := f.signer.Name()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ctx.Err() == nil; k++ {
				seats := [2]dice.UUID{testonly.LabelUUID(fmt.Sprintf("%s/r%d/%d/0", emitter, g, k)), testonly.LabelUUID(fmt.Sprintf("%s/r%d/%d/1", emitter, g, k))}
				_, err := f.b.NewTavlarena(ctx, sdk.TavlarenaSpec{Seats: seats, Settings: []byte(settings)})
				if err == nil {
					err = f.c.Flush(ctx)
				}
				switch {
				case ctx.Err() != nil:
					return
				case errors.Is(err, sdk.ErrBacklog):
					time.Sleep(100 * time.Millisecond)
				case err != nil:
					t.Errorf("%s: commit: %v", emitter, err)
					return
				default:
					sent.Add(1)
				}
			}
		}()
	}
	wg.Wait()
}

// TestSetMemoryLimit: zarlog serve's Go memory limit is the budgets' terms
// but the headroom by default, --memory-limit when given, and unchanged
// with --memory-limit -1 or a GOMEMLIMIT in the environment.
func TestSetMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := serve.Config{GameCacheBytes: 16 << 20}
	const unset = math.MaxInt64
	for _, c := range []struct {
		name string
		flag int64
		env  string
		want int64
	}{
		{"default", 0, "", serve.GoMemoryLimit(serve.MemoryBudget(cfg))},
		{"flag", 3 << 30, "", 3 << 30},
		{"none", -1, "", unset},
		{"GOMEMLIMIT", 0, "5GiB", unset},
		{"flag over GOMEMLIMIT", 2 << 30, "5GiB", 2 << 30},
	} {
		debug.SetMemoryLimit(unset)
		t.Setenv("GOMEMLIMIT", c.env)
		setMemoryLimit(cfg, c.flag, log)
		if got := debug.SetMemoryLimit(-1); got != c.want {
			t.Errorf("%s: limit %d, want %d", c.name, got, c.want)
		}
	}
	if d := serve.GoMemoryLimit(serve.MemoryBudget(cfg)); d >= serve.MemoryBound(serve.MemoryBudget(cfg)) || d <= 0 {
		t.Errorf("the default limit %d is not below the bound %d", d, serve.MemoryBound(serve.MemoryBudget(cfg)))
	}
}
