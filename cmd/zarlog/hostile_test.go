package main

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zarlog/zarlog/internal/testonly"
)

// The bounds docs/OPERATIONS.md §9 documents for a mirror and an auditor
// following a hostile log, with the default flags (--concurrency 8,
// --batch 16) and --max-disk hostileBudget where the log is consistent.
const (
	// hostileRSS bounds the peak RSS of `zarlog mirror` and of `zarlog
	// audit --data` whatever the log serves (measured: at most 261 MiB,
	// 110–170 MiB but where the copy fills its budget); `zarlog audit`
	// without --data may hold twice its --max-disk more (measured: 401 MiB
	// with a budget of 64 MiB).
	hostileRSS = 384 << 20
	// hostileBudget is the --max-disk of the cases where the log's tree
	// is consistent and only its size is absurd.
	hostileBudget = 64 << 20
	// hostileDiskOver bounds how far past --max-disk the copy's disk goes:
	// the write-ahead log's copy of the last steps and a table being
	// written (two steps of two full bundles, 16.8 MB each).
	hostileDiskOver = 80 << 20
	// hostileDiskEmpty bounds a data directory where nothing of the log
	// was stored (Pebble's empty stores).
	hostileDiskEmpty = 8 << 20
)

// TestHostileLogWatchers runs the built `zarlog mirror`, `zarlog audit
// --once --data` and `zarlog audit --once` (in memory) against a log that
// lies (package testonly's HostileLog, full 16.8 MB entry bundles): a
// validly signed checkpoint of 2^40, 2^63−1 and 2^64−1 leaves; entry
// bundles larger than the format allows; bundles that do not match the
// tiles; tiles that do not match the checkpoint; and a consistent tree of
// 2^30 leaves, larger than the disk budget. Each watcher reports the log as
// faulty (the mirror's /healthz and metrics, the auditor's problems; the
// budget named where the log is consistent), and its peak RSS (VmHWM, and
// the kernel's maxrss once it exited) and the bytes of its data directory
// stay under the bounds OPERATIONS.md documents. The mirror runs 3 s per
// case (30 s with ZARLOG_SLOW=1), polling every 200 ms.
func TestHostileLogWatchers(t *testing.T) {
	bin := buildZarlog(t)
	run := 3 * time.Second
	if os.Getenv("ZARLOG_SLOW") != "" {
		run = 30 * time.Second
	}
	type want struct {
		health, metric, problem string // what the mirror's /healthz, its /metrics and the auditor's output say
	}
	fault := func(limit string) want {
		return want{"the origin log is at fault (" + limit + ")", `zarlog_follow_log_fault 1`, "PROBLEM log-fault"}
	}
	entries := want{"(entries)", `zarlog_follow_refusals_total{kind="entries"}`, "PROBLEM entries"}
	budget := want{"at its disk budget (max-disk)", `zarlog_follow_limit_stops_total{limit="max-disk"}`, "max-disk"}
	for _, tc := range []struct {
		size uint64
		lie  testonly.Lie
		want want
	}{
		{1 << 40, testonly.LieNone, fault("max-size")},
		{1<<63 - 1, testonly.LieNone, fault("max-size")},
		{1<<64 - 1, testonly.LieNone, fault("max-size")},
		{1 << 30, testonly.LieOversizeBundles, fault("bundle-size")},
		{1 << 30, testonly.LieBundles, entries},
		{1 << 30, testonly.LieTiles, entries},
		{1 << 30, testonly.LieNone, budget},
	} {
		name := fmt.Sprintf("%s/size=%d", tc.lie, tc.size)
		h, err := testonly.NewHostileLog("hostile.zarlog.example/log", tc.size, tc.lie)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		extra := []string{}
		diskBound := int64(hostileDiskEmpty)
		if tc.lie == testonly.LieNone && tc.size == 1<<30 {
			extra = []string{"--max-disk", strconv.Itoa(hostileBudget)}
			diskBound = hostileBudget + hostileDiskOver
		}

		t.Run("mirror/"+name, func(t *testing.T) {
			dir := t.TempDir()
			p := start(t, bin, "healthz", append([]string{"mirror", "--from", srv.URL, "--log-key", h.VKey(), "--data", dir,
				"--http", "127.0.0.1:0", "--poll", "200ms"}, extra...)...)
			time.Sleep(run)
			code, health := get(t, p.lines["healthz"])
			_, metrics := get(t, p.lines["metrics"])
			readyCode, ready := get(t, strings.TrimSuffix(p.lines["healthz"], "healthz")+"readyz")
			if tc.want.problem != entries.problem && readyCode != http.StatusOK {
				t.Errorf("/readyz %d %q: past a limit the mirror still serves its verified copy", readyCode, ready)
			}
			if _, cp := get(t, strings.TrimSuffix(p.lines["healthz"], "healthz")+"checkpoint"); strings.Contains(cp, "hostile") {
				t.Errorf("the mirror serves the hostile log's checkpoint")
			}
			hwm := vmHWM(t, p.cmd.Process.Pid)
			p.cmd.Process.Signal(syscall.SIGINT)
			if err := p.wait(); err != nil {
				t.Errorf("zarlog mirror after SIGINT: %v", err)
			}
			peak := max(hwm, maxRSS(p))
			disk := diskUse(t, dir)
			bundles, sent := h.Served()
			t.Logf("peak RSS %.1f MiB; %d bytes in %s; the log served %d bundles (%.1f MB); /healthz %d %q", mib(peak), disk, dir, bundles, float64(sent)/1e6, code, strings.TrimSpace(health))
			if code != http.StatusServiceUnavailable || !strings.Contains(health, tc.want.health) {
				t.Errorf("/healthz: %d %q, want 503 saying %q", code, health, tc.want.health)
			}
			if !strings.Contains(metrics, tc.want.metric) {
				t.Errorf("/metrics has no %q", tc.want.metric)
			}
			checkBounds(t, peak, hostileRSS, disk, diskBound)
		})

		for _, mem := range []bool{false, true} {
			kind := "audit-data/"
			if mem {
				kind = "audit-memory/"
			}
			t.Run(kind+name, func(t *testing.T) {
				dir, ev := t.TempDir(), t.TempDir()
				args := []string{"audit", "--once", "--from", srv.URL, "--log-key", h.VKey(), "--evidence-dir", ev, "--bundle-grace", "1ms"}
				rssBound := int64(hostileRSS)
				if !mem {
					args = append(args, "--data", dir)
				} else if len(extra) > 0 {
					rssBound += 2 * hostileBudget // the copy is in memory: its tables and write-ahead log
				}
				p := start(t, bin, "evidence", append(args, extra...)...)
				out := p.rest()
				var logs strings.Builder
				for l := range p.logs {
					logs.WriteString(l + "\n")
				}
				peak := maxRSS(p)
				disk := diskUse(t, dir)
				t.Logf("peak RSS %.1f MiB; %d bytes in %s; exit %v\n%s", mib(peak), disk, dir, p.err, out)
				if p.err == nil || !strings.Contains(out+logs.String(), tc.want.problem) {
					t.Errorf("exit %v, output without %q:\n%s\n%s", p.err, tc.want.problem, out, logs.String())
				}
				if strings.Contains(out, "ok: no problem found") {
					t.Errorf("the auditor found no problem")
				}
				checkBounds(t, peak, rssBound, disk, diskBound)
			})
		}
		srv.Close()
	}
}

func checkBounds(t *testing.T, rss, rssBound, disk, diskBound int64) {
	t.Helper()
	if rss <= 0 {
		t.Errorf("no peak RSS measured")
	}
	if rss > rssBound {
		t.Errorf("peak RSS %.1f MiB, more than the documented %.1f MiB", mib(rss), mib(rssBound))
	}
	if disk > diskBound {
		t.Errorf("%d bytes on disk, more than the documented %d", disk, diskBound)
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// get returns a URL's status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// vmHWM returns a running process's peak resident set (VmHWM) in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// maxRSS returns an exited process's peak resident set (the kernel's
// maxrss) in bytes.
func maxRSS(p *proc) int64 {
	if p.cmd.ProcessState == nil {
		return 0
	}
	ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return ru.Maxrss << 10
}

// diskUse returns the bytes the files under dir take on disk.
func diskUse(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			n += st.Blocks * 512
		} else {
			n += fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
