package bench

// This file splits the end-to-end run's CPU time by stage, from a CPU
// profile of the run (runtime/pprof, 100 samples a second per core), so
// that a run on any machine shows where the time goes: the backends'
// publishing, NATS (server and client), the ingest, and inside the ledger's
// append the parse, the signatures, the game state, the tree and Pebble;
// then the checkpoint signer, the garbage collector and the rest.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// Stages, in the order reports list them.
var stageOrder = []string{"publish", "nats", "ingest", "parse", "signature", "state", "tree", "pebble", "ledger-other", "checkpoint", "gc", "other"}

// stageRules name a stage by the function-name prefixes of its frames: a
// sample that no owner claims belongs to the innermost frame that matches
// a rule.
var stageRules = []struct {
	stage    string
	prefixes []string
}{
	{"signature", []string{"crypto/ed25519.", "crypto/internal/fips140/ed25519", "crypto/internal/fips140/edwards25519", "github.com/zarlog/zarlog/events.Verify",
		"github.com/oasisprotocol/curve25519-voi/", "github.com/zarlog/zarlog/ledger.sigKeys"}},
	{"parse", []string{"github.com/zarlog/zarlog/events.Parse", "github.com/zarlog/zarlog/events.parse", "github.com/zarlog/zarlog/events/cjson."}},
	{"state", []string{"github.com/zarlog/zarlog/events.Apply", "github.com/zarlog/zarlog/events.(*Game)", "github.com/zarlog/zarlog/events.(*Tally)",
		"github.com/zarlog/zarlog/events.apply", "github.com/zarlog/zarlog/rules", "github.com/zarlog/zarlog/events/dice."}},
	{"tree", []string{"github.com/zarlog/zarlog/merkle."}},
	{"pebble", []string{"github.com/cockroachdb/pebble"}},
	{"ledger-other", []string{"github.com/zarlog/zarlog/ledger."}},
	{"ingest", []string{"github.com/zarlog/zarlog/ledger/ingest."}},
	{"nats", []string{"github.com/nats-io/"}},
	{"gc", []string{"runtime.gcBgMarkWorker", "runtime.bgsweep", "runtime.bgscavenge", "runtime.gcStart", "runtime.markroot"}},
}

// owners are stages that own every sample with one of their frames on
// the stack, whatever runs below: the backends' publishing (which runs NATS
// code), and the checkpoint signer (which signs with Ed25519 and reads the
// tree). The benchmark's own frames are named whole (exact), not by prefix:
// EndToEnd's closures include the goroutine that runs the ingest, whose
// work is not the backends'.
var owners = []struct {
	stage    string
	prefixes []string
	exact    []string
}{
	{"publish", []string{"github.com/zarlog/zarlog/sdk."},
		[]string{"github.com/zarlog/zarlog/internal/bench.EndToEnd", "github.com/zarlog/zarlog/internal/bench.awaitAcks",
			"github.com/zarlog/zarlog/internal/bench.(*humanScheduler).run", "github.com/zarlog/zarlog/internal/bench.(*humanScheduler).send",
			"github.com/zarlog/zarlog/internal/bench.(*humanScheduler).ack", "github.com/zarlog/zarlog/internal/bench.(*humanScheduler).receiptWait"}},
	{"checkpoint", []string{"github.com/zarlog/zarlog/ledger.(*Ledger).sign", "github.com/zarlog/zarlog/ledger.(*Ledger).signLoop"}, nil},
}

// stageOf names the stage of one sample's stack (leaf first).
func stageOf(funcs []string) string {
	for _, o := range owners {
		for _, f := range funcs {
			for _, p := range o.prefixes {
				if strings.HasPrefix(f, p) {
					return o.stage
				}
			}
			if slices.Contains(o.exact, f) {
				return o.stage
			}
		}
	}
	for _, f := range funcs {
		for _, r := range stageRules {
			for _, p := range r.prefixes {
				if strings.HasPrefix(f, p) {
					return r.stage
				}
			}
		}
	}
	return "other"
}

// The sides of the process's CPU, by the pprof label sideLabel of the
// goroutine a sample was taken in: the log's (the embedded nats-server,
// the ingest, the ledger and its Pebble store, started under
// setSide(sideLog)) and the emitters' (the SDK clients and their NATS
// connections, the benchmark's own players, under setSide(sideEmitters)).
// Goroutines inherit their creator's labels, so each side is every
// goroutine its starters started, and theirs; the goroutines the
// nats-server and Pebble label themselves are the log's too (logLabels).
// Samples without a label are the runtime's own goroutines (the garbage
// collector's background workers, the scheduler between goroutines):
// sideRuntime.
const (
	sideLabel    = "zarlog-bench-side"
	sideLog      = "log"
	sideEmitters = "emitters"
	sideRuntime  = "runtime"
	// sideHarness is the part of sideEmitters with neither an SDK nor a
	// NATS frame on its stack: the benchmark's own players (scheduling,
	// waiting, recording), not what a backend's SDK costs.
	sideHarness = "harness"
)

// setSide labels the calling goroutine as side ("": no label), so that
// the goroutines it starts from then on are side's (cpuSplit.Sides).
func setSide(side string) {
	ctx := context.Background()
	if side != "" {
		ctx = pprof.WithLabels(ctx, pprof.Labels(sideLabel, side))
	}
	pprof.SetGoroutineLabels(ctx)
}

// logLabels are the pprof labels the log's libraries set on their own
// goroutines, replacing those the goroutines inherited (sideLabel among
// them): the embedded nats-server's streams, consumers and accounts
// (server.startGoRoutine), Pebble's flushes, compactions and WAL syncs. In
// this process only the log runs a nats-server or Pebble, so a sample with
// one of them is the log's.
var logLabels = []string{"account", "stream", "consumer", "type", "pebble"}

// sideOf returns the side of a sample with the labels of its goroutine.
func sideOf(labels map[string][]string) string {
	if l := labels[sideLabel]; len(l) == 1 && (l[0] == sideLog || l[0] == sideEmitters) {
		return l[0]
	}
	for _, k := range logLabels {
		if len(labels[k]) > 0 {
			return sideLog
		}
	}
	return sideRuntime
}

// pprofGoroutines writes the goroutine profile, with each goroutine's
// labels (pprof format).
func pprofGoroutines(w io.Writer) error { return pprof.Lookup("goroutine").WriteTo(w, 0) }

// A cpuSplit is a profile's CPU time per event, in microseconds, by stage
// (stageOf) and by side (sideLog, sideEmitters, sideRuntime; and
// sideHarness, part of sideEmitters). The stages sum to the same total as
// the three sides.
type cpuSplit struct {
	Stages map[string]float64
	Sides  map[string]float64
}

// A cpuProfile records a CPU profile of the process until stop.
type cpuProfile struct {
	buf     bytes.Buffer
	on      bool
	stopped bool
}

// startProfile starts profiling; if the process is profiled already (go
// test -cpuprofile), the run has no stages.
func startProfile() *cpuProfile {
	p := &cpuProfile{}
	p.on = pprof.StartCPUProfile(&p.buf) == nil
	return p
}

// stop stops the profile (a run's measured time ends), if it runs; stages
// parses it later.
func (p *cpuProfile) stop() {
	if p.on && !p.stopped {
		pprof.StopCPUProfile()
		p.stopped = true
	}
}

// stages stops the profile if stop has not, and returns each stage's and side's CPU time per
// event, in microseconds, or empty maps if there was no profile. If save
// is not nil, the profile is written to it too.
func (p *cpuProfile) stages(events int, save io.Writer) (cpuSplit, error) {
	if !p.on {
		return cpuSplit{}, nil
	}
	p.stop()
	if save != nil {
		if _, err := save.Write(p.buf.Bytes()); err != nil {
			return cpuSplit{}, fmt.Errorf("bench: writing the CPU profile: %w", err)
		}
	}
	prof, err := profile.Parse(&p.buf)
	if err != nil {
		return cpuSplit{}, fmt.Errorf("bench: reading the CPU profile: %w", err)
	}
	return splitProfile(prof, events), nil
}

// splitProfile splits prof's CPU time by stage and by side, per event.
func splitProfile(prof *profile.Profile, events int) cpuSplit {
	ns := 1 // the sample value that is CPU nanoseconds
	for i, st := range prof.SampleType {
		if st.Type == "cpu" {
			ns = i
		}
	}
	out := cpuSplit{Stages: map[string]float64{}, Sides: map[string]float64{sideLog: 0, sideEmitters: 0, sideRuntime: 0, sideHarness: 0}}
	for _, s := range prof.Sample {
		var funcs []string
		for _, loc := range s.Location {
			for i := range loc.Line { // the inlined callee first, its caller last
				if loc.Line[i].Function != nil {
					funcs = append(funcs, loc.Line[i].Function.Name)
				}
			}
		}
		v := float64(s.Value[ns]) / 1e3 / float64(max(events, 1))
		out.Stages[stageOf(funcs)] += v
		side := sideOf(s.Label)
		out.Sides[side] += v
		if side == sideEmitters && !slices.ContainsFunc(funcs, func(f string) bool {
			return strings.HasPrefix(f, "github.com/zarlog/zarlog/sdk.") || strings.HasPrefix(f, "github.com/nats-io/")
		}) {
			out.Sides[sideHarness] += v
		}
	}
	return out
}

// An allocProfile records the allocations of a run: the process's
// allocation profile (runtime.MemProfile, sampled every
// runtime.MemProfileRate bytes) at its start, subtracted from the one at
// its end, so that only the run's allocations are left (what `go tool
// pprof -base` does with two profiles). The runtime publishes the
// allocations of a GC cycle when it ends, so each snapshot follows a
// collection.
type allocProfile struct {
	base *profile.Profile
	err  error
}

// startAllocs takes the allocation profile at a run's start, or does
// nothing if save is nil.
func startAllocs(save io.Writer) *allocProfile {
	if save == nil {
		return nil
	}
	a := &allocProfile{}
	a.base, a.err = allocsNow()
	return a
}

// allocsNow collects garbage and returns the allocation profile so far.
func allocsNow() (*profile.Profile, error) {
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&buf, 0); err != nil {
		return nil, fmt.Errorf("bench: writing the allocation profile: %w", err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		return nil, fmt.Errorf("bench: reading the allocation profile: %w", err)
	}
	return p, nil
}

// write writes the allocations since startAllocs to save (pprof format:
// alloc_objects and alloc_space are the run's; inuse_* are the change of
// the live heap). It does nothing if a is nil.
func (a *allocProfile) write(save io.Writer) error {
	if a == nil {
		return nil
	}
	if a.err != nil {
		return a.err
	}
	end, err := allocsNow()
	if err != nil {
		return err
	}
	a.base.Scale(-1)
	delta, err := profile.Merge([]*profile.Profile{end, a.base})
	if err != nil {
		return fmt.Errorf("bench: subtracting the allocation profile at the start: %w", err)
	}
	delta.TimeNanos, delta.DurationNanos = end.TimeNanos, end.TimeNanos-a.base.TimeNanos
	if err := delta.Write(save); err != nil {
		return fmt.Errorf("bench: writing the allocation profile: %w", err)
	}
	return nil
}
