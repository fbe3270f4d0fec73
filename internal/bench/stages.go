package bench

// This file splits the end-to-end run's CPU time by stage, from a CPU
// profile of the run (runtime/pprof, 100 samples a second per core), so
// that a run on any machine shows where the time goes: the backends'
// publishing, NATS (server and client), the ingest, and inside the ledger's
// append the parse, the signatures, the game state, the tree and Pebble;
// then the checkpoint signer, the garbage collector and the rest.

import (
	"bytes"
	"fmt"
	"io"
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
			"github.com/zarlog/zarlog/internal/bench.(*humanScheduler).humanWait"}},
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

// A cpuProfile records a CPU profile of the process until stop.
type cpuProfile struct {
	buf bytes.Buffer
	on  bool
}

// startProfile starts profiling; if the process is profiled already (go
// test -cpuprofile), the run has no stages.
func startProfile() *cpuProfile {
	p := &cpuProfile{}
	p.on = pprof.StartCPUProfile(&p.buf) == nil
	return p
}

// stages stops the profile and returns each stage's CPU time per event, in
// microseconds, or nil if there was no profile. If save is not nil, the
// profile is written to it too.
func (p *cpuProfile) stages(events int, save io.Writer) (map[string]float64, error) {
	if !p.on {
		return nil, nil
	}
	pprof.StopCPUProfile()
	if save != nil {
		if _, err := save.Write(p.buf.Bytes()); err != nil {
			return nil, fmt.Errorf("bench: writing the CPU profile: %w", err)
		}
	}
	prof, err := profile.Parse(&p.buf)
	if err != nil {
		return nil, fmt.Errorf("bench: reading the CPU profile: %w", err)
	}
	ns := 1 // the sample value that is CPU nanoseconds
	for i, st := range prof.SampleType {
		if st.Type == "cpu" {
			ns = i
		}
	}
	out := map[string]float64{}
	for _, s := range prof.Sample {
		var funcs []string
		for _, loc := range s.Location {
			for i := range loc.Line { // the inlined callee first, its caller last
				if loc.Line[i].Function != nil {
					funcs = append(funcs, loc.Line[i].Function.Name)
				}
			}
		}
		out[stageOf(funcs)] += float64(s.Value[ns]) / 1e3 / float64(events)
	}
	return out, nil
}
