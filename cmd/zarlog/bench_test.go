package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/zarlog/zarlog/internal/bench"
)

// TestBench runs `zarlog bench --json` on a few events and reads the
// report back; without --json the same figures are printed as text, and
// --cpuprofile writes the end-to-end run's CPU profile, which pprof reads,
// and --memprofile its allocations: the run's own, the ledger's among
// them, and not the workload's generation before it.
func TestBench(t *testing.T) {
	for _, asJSON := range []bool{true, false} {
		args := []string{"bench", "--events", "3000", "--games", "8", "--bundles", "2", "--dir", t.TempDir() + "/b"}
		prof := filepath.Join(t.TempDir(), "cpu.pprof")
		mprof := filepath.Join(t.TempDir(), "allocs.pprof")
		if asJSON {
			args = append(args, "--json")
		} else {
			args = append(args, "--cpuprofile", prof, "--memprofile", mprof)
		}
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
			t.Fatalf("zarlog %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
		}
		if !asJSON {
			if want := "zarlog bench: the CPU profile of the end-to-end run is in " + prof + " (go tool pprof " + prof + ")\n" +
				"zarlog bench: the allocations of the end-to-end run are in " + mprof + " (go tool pprof -sample_index=alloc_objects " + mprof + ")\n"; stderr.String() != want {
				t.Errorf("standard error, not a terminal: %q, want %q", stderr.String(), want)
			}
			f, err := os.Open(prof)
			if err != nil {
				t.Fatal(err)
			}
			p, err := profile.Parse(f)
			f.Close()
			if err != nil {
				t.Errorf("--cpuprofile: %v", err)
			} else if len(p.Sample) == 0 {
				t.Error("--cpuprofile: no samples")
			}
			checkAllocProfile(t, mprof)
			if !strings.Contains(stdout.String(), "end to end ") || !strings.Contains(stdout.String(), "bundle     tavlarena-v1") {
				t.Errorf("text report:\n%s", stdout.String())
			}
			continue
		}
		if stderr.Len() != 0 {
			t.Errorf("standard error, not a terminal: %q", stderr.String())
		}
		var rep bench.Report
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatalf("%v: %s", err, stdout.String())
		}
		if rep.EndToEnd.Events != 3000 || rep.EndToEnd.EventsPerSec <= 0 || rep.Paced == nil || len(rep.Bundles) != 3 || rep.Ledger != nil || rep.Config.Moves != "rules" || rep.Config.Beacons != "bls" {
			t.Errorf("report: %s", stdout.String())
		}
	}
}

// checkAllocProfile checks that the allocation profile at path counts the
// end-to-end run's allocations (the ledger's appends), not the workload's
// generation (internal/workload), which happened before the run.
func checkAllocProfile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(f)
	f.Close()
	if err != nil {
		t.Fatalf("--memprofile: %v", err)
	}
	objects := -1
	for i, st := range p.SampleType {
		if st.Type == "alloc_objects" {
			objects = i
		}
	}
	if objects < 0 {
		t.Fatalf("--memprofile: no alloc_objects in %v", p.SampleType)
	}
	in := func(s *profile.Sample, prefix string) bool {
		for _, loc := range s.Location {
			for _, ln := range loc.Line {
				if strings.HasPrefix(ln.Function.Name, prefix) {
					return true
				}
			}
		}
		return false
	}
	var appends, generation int64
	for _, s := range p.Sample {
		if in(s, "github.com/zarlog/zarlog/ledger.") {
			appends += s.Value[objects]
		}
		if in(s, "github.com/zarlog/zarlog/internal/workload.") {
			generation += s.Value[objects]
		}
	}
	if appends <= 0 || generation != 0 {
		t.Errorf("--memprofile: %d objects allocated by the ledger (want some), %d under the workload's generation (want none)", appends, generation)
	}
}

// TestBenchHuman runs `zarlog bench --pace human --json` tiny (100 games of
// 8 rolls, --human-rolls, gaps of 0.2–1 s, 4 s) and checks that the report
// carries the human pace
// beside the saturated run, with its configuration, and that
// --human-cpuprofile and --human-memprofile (and its .base, the allocations
// at the window's start) write profiles pprof reads. No
// timing is asserted.
func TestBenchHuman(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "human.pprof")
	heap := filepath.Join(t.TempDir(), "heap.pprof")
	args := []string{"bench", "--events", "2000", "--games", "8", "--bundles", "1", "--dir", t.TempDir() + "/b", "--json",
		"--pace", "human", "--human-games", "100", "--human-duration", "4s", "--human-gap-min", "200ms", "--human-gap-max", "1s",
		"--human-rolls", "8", "--human-cpuprofile", prof, "--human-memprofile", heap, "--game-cache-bytes", "65536"}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("zarlog %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	var rep bench.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	h := rep.Human
	if h == nil || h.Games != 100 || h.Rolls != 8 || h.MinGapMs != 200 || h.MaxGapMs != 1000 || h.Events <= 0 || h.ReceiptCount <= 0 || h.CPUMicrosPerEvent <= 0 ||
		rep.HumanCPURatio <= 0 || rep.Config.Pace != "saturated+human" || rep.Config.Moves != "rules" || rep.EndToEnd.Events != 2000 {
		t.Errorf("report: %s", stdout.String())
	}
	// 100 games of about 3 KB do not fit in a game cache of 64 KiB: the
	// ledger reads games back, and says so.
	if rep.Config.GameCacheBytes != 65536 || h.GameCacheBytes != 65536 || h.GameLoads <= 0 {
		t.Errorf("--game-cache-bytes 65536: config %d, human pace %d bytes and %d games read back", rep.Config.GameCacheBytes, h.GameCacheBytes, h.GameLoads)
	}
	for _, k := range []string{`"gamesInPlay": 100`, `"receiptP99ms"`, `"rssBytes"`, `"eventsPerAppend"`, `"eventsPerMessage"`, `"humanCpuRatio"`, `"rollsPerGame": 8`, `"setupSeconds"`, `"heldEventBytesStart"`,
		`"humanCpuRatioSettled"`, `"humanCpuRatioDefinitions"`, `"cpuMicrosPerEventSettled"`, `"cpuSidesMicrosPerEvent"`, `"cpuHarnessMicrosPerEvent"`} {
		if !strings.Contains(stdout.String(), k) {
			t.Errorf("report without %s: %s", k, stdout.String())
		}
	}
	if h.AllocBytesPerEvent <= 0 || h.AllocsPerEvent <= 0 {
		t.Errorf("the window's allocations: %.0f bytes in %.1f allocations an event", h.AllocBytesPerEvent, h.AllocsPerEvent)
	}
	for flag, file := range map[string]string{"--human-cpuprofile": prof, "--human-memprofile": heap, "--human-memprofile's base": heap + ".base"} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", flag, err)
		} else if len(p.Sample) == 0 {
			t.Errorf("%s: no samples", flag)
		}
	}
}

func TestBenchUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"bench", "-h"}, 0},
		{[]string{"bench", "--events", "0"}, 2},
		{[]string{"bench", "--rate", "-1"}, 2},
		{[]string{"bench", "extra"}, 2},
		{[]string{"bench", "--nope"}, 2},
		{[]string{"bench", "--mix", "dominoes"}, 2},
		{[]string{"bench", "--checks", "lenient"}, 2},
		{[]string{"bench", "--pace", "leisurely"}, 2},
		{[]string{"bench", "--pace", "human", "--human-games", "0"}, 2},
		{[]string{"bench", "--pace", "human", "--human-rolls", "0"}, 2},
		{[]string{"bench", "--pace", "human", "--human-gap-min", "3s", "--human-gap-max", "2s"}, 2},
		{[]string{"bench", "--pace", "human", "--human-duration", "5s"}, 2},
		{[]string{"bench", "--cpuprofile", "/nonexistent/dir/cpu.pprof"}, 2},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), tt.args, &bytes.Buffer{}, &stderr); code != tt.code {
			t.Errorf("zarlog %q: exit %d, want %d: %s", tt.args, code, tt.code, stderr.String())
		}
	}
}
