package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/internal/workload"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/sdk"
)

// TestRun runs a small bench with the Tessera comparison and checks that
// every figure of the report was measured: the end-to-end passes, the disk,
// the bundles of both schemes built and verified, the same-run comparison;
// and that the scratch directory is removed.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir() + "/scratch"
	var mu sync.Mutex
	steps := map[string]int{}
	rep, err := Run(ctx, Config{Dir: dir, Events: 4000, Games: 8, Bundles: 3, Tessera: true,
		Progress: func(step string, done, total int) {
			mu.Lock()
			defer mu.Unlock()
			if done > total {
				t.Errorf("%s: %d of %d", step, done, total)
			}
			steps[step] = max(steps[step], done)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Workload.Events != 4000 || rep.Workload.Emitters != DefaultEmitters || rep.Workload.MeanBytes <= 0 {
		t.Errorf("workload: %+v", rep.Workload)
	}
	e := rep.EndToEnd
	if e.Events != 4000 || e.EventsPerSec <= 0 || e.P50ms <= 0 || e.P99ms < e.P50ms || e.MaxMs < e.P99ms {
		t.Errorf("end to end: %+v", e)
	}
	// The SDK packs at most 256 events into a message (its default
	// MaxBatchEvents), and the ingest hands the ledger whole messages.
	if e.EventsPerMessage < 1 || e.EventsPerMessage > 256 || e.EventsPerAppend < e.EventsPerMessage {
		t.Errorf("batching: %.1f events per message, %.1f per Append", e.EventsPerMessage, e.EventsPerAppend)
	}
	// Every event is at least parsed into a new Event: something is
	// allocated for each.
	if e.AllocBytesPerEvent < 100 || e.AllocsPerEvent < 1 {
		t.Errorf("allocation: %.0f bytes in %.1f allocations per event", e.AllocBytesPerEvent, e.AllocsPerEvent)
	}
	if p := rep.Paced; p == nil || p.OfferedPerSec <= 0 || p.P99ms < p.P50ms {
		t.Errorf("paced: %+v", p)
	}
	// The paced pass asks for the receipts of every game's commit and of
	// every ReceiptSample-th event: each a tlog-proof of at least the
	// event, a checkpoint and a proof line.
	if p := rep.Paced; p != nil && (p.Receipts < 4000/ReceiptSample || p.ReceiptP50ms <= 0 || p.ReceiptP99ms < p.ReceiptP50ms ||
		p.ReceiptMaxMs < p.ReceiptP99ms || p.ReceiptBytes < 300 || p.ReceiptBytesMax < p.ReceiptBytes) {
		t.Errorf("receipts: %+v", p)
	}
	if e.Receipts != 0 {
		t.Errorf("the pass as fast as possible asked for %d receipts", e.Receipts)
	}
	if rep.DiskBytesPerEvent <= 0 {
		t.Errorf("disk per event: %v", rep.DiskBytesPerEvent)
	}
	// The production configuration by default: real beacons, so the
	// anchored-v1 games' bundles verify too.
	if c := rep.Config; c.Checks != ChecksProduction || c.Moves != "rules" || c.Beacons != "bls" || c.Pace != "saturated" || c.CheckpointIntervalMs != 100 ||
		c.BeaconGamesPerRound != workload.DefaultBeaconGamesPerRound || c.BeaconCache != ledger.DefaultBeaconCache || c.Follow != "every 500 ms" {
		t.Errorf("config: %+v", c)
	}
	// Anchored-v1 games share rounds, 8 a round: the ledger's cache
	// answers most of their beacons, but a round's first is a pairing
	// check (the stream's rounds, not four reused ones).
	if e.BeaconPairings < 1 || e.BeaconCached < 1 || e.BeaconPairings*workload.DefaultBeaconGamesPerRound < e.BeaconPairings+e.BeaconCached {
		t.Errorf("beacons: %d pairing checks, %d cached", e.BeaconPairings, e.BeaconCached)
	}
	if len(rep.Bundles) != 3 {
		t.Fatalf("bundles: %+v", rep.Bundles)
	}
	for _, b := range rep.Bundles {
		if b.Games != 3 || b.MeanBytes <= 0 || b.MeanEvents <= 0 || b.MeanVerifyMs <= 0 {
			t.Errorf("bundles: %+v", b)
		}
	}
	if rep.Ledger == nil || rep.Ledger.EventsPerSec <= 0 || len(rep.Tessera) != 2 || rep.Tessera[0].EventsPerSec <= 0 {
		t.Errorf("comparison: %+v %+v", rep.Ledger, rep.Tessera)
	}
	for _, step := range []string{"end to end", "end to end, paced", "ledger alone"} {
		if steps[step] != 4000 {
			t.Errorf("progress of %q reached %d", step, steps[step])
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the scratch directory is still there: %v", err)
	}
	var back Report
	if err := json.Unmarshal(rep.JSON(), &back); err != nil || !reflect.DeepEqual(back.EndToEnd, rep.EndToEnd) {
		t.Errorf("JSON round trip: %v", err)
	}
	// The CPU split by stage: known stages, adding up to no more than the
	// CPU time measured allows (the run is short: a few dozen samples of
	// 10 ms; TestStageOf checks the attribution itself).
	var sum float64
	for k, v := range rep.EndToEnd.CPUStagesMicros {
		if !slices.Contains(stageOrder, k) || v < 0 {
			t.Errorf("stage %q: %v", k, v)
		}
		sum += v
	}
	if cpu := rep.EndToEnd.CPUMicrosPerEvent; sum <= 0 || sum > 2*cpu {
		t.Errorf("the stages sum to %.1f µs per event, the CPU time is %.1f: %v", sum, cpu, rep.EndToEnd.CPUStagesMicros)
	}
	// The same profile by side sums to the stages' total, in both passes;
	// each pass's settled CPU is its measured CPU and its settling's,
	// nothing else (the human pace's has the same boundaries).
	for name, m := range map[string]*Measure{"end to end": &rep.EndToEnd, "paced": rep.Paced} {
		if m == nil {
			continue
		}
		checkSides(t, name, m.CPUStagesMicros, m.CPUSidesMicros, false)
		checkSettled(t, name, m.CPUMicrosPerEvent, m.SettleCPUMicros, m.CPUMicrosPerEventSettled, m.SettleS)
	}
	if _, err := note.NewVerifier(rep.LogKey); err != nil {
		t.Errorf("the report's log key %q is not a C2SP verifier key: %v", rep.LogKey, err)
	}
	text := rep.Text()
	for _, want := range []string{"log        " + rep.LogKey, "config     production: every roll, move and end checked by the rules engine", "8 anchored-v1 games a round, a cache of 1024 verified beacons", "the SDK clients follow their events (a status request every 500 ms)", "no emitter's rate limited", "bundle     anchored-v1", "machine ", "end to end ", "latency ", "receipt    publish → receipt", "batching ", "beacons    ", "memory ", "by side (µs per event, CPU profile): the log's", "with the store work its writes left due", "disk ", "bundle     per-roll-v1", "bundle     tavlarena-v1", "tessera-posix"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
}

// TestRunStructural runs the configuration of the benchmarks until issue
// 31 (--checks structural), with the SDK clients not following their
// events (NoFollow): the report says so, and the anchored-v1 games, on the
// fake drand chain, get no bundle.
func TestRunStructural(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Dir: t.TempDir() + "/scratch", Events: 3000, Games: 8, Bundles: 2, Rate: 20000, Checks: ChecksStructural, NoFollow: true, EmitterRates: true})
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Config; c.Checks != ChecksStructural || c.Moves != "structural" || c.Beacons != "fake" || c.Pace != "rate" || c.Follow != "off" ||
		c.EmitterRates != "2500 messages and 6291456 bytes a second per emitter (the ingest's defaults)" {
		t.Errorf("config: %+v", c)
	}
	if e := rep.EndToEnd; e.Events != 3000 {
		t.Errorf("with the default rates, %d events of 3000 end to end", e.Events)
	}
	for _, b := range rep.Bundles {
		if b.Scheme == "anchored-v1" {
			t.Errorf("an anchored-v1 bundle on the fake chain: %+v", b)
		}
	}
	if text := rep.Text(); !strings.Contains(text, "config     structural: moves checked structurally") || !strings.Contains(text, "the SDK clients do not follow their events") ||
		!strings.Contains(text, "each emitter limited to 2500 messages") {
		t.Errorf("text:\n%s", rep.Text())
	}
	if _, err := Run(ctx, Config{Checks: "lenient"}); err == nil || !strings.Contains(err.Error(), `unknown checks "lenient"`) {
		t.Errorf("unknown checks: %v", err)
	}
}

// TestRecordedBeacons: the quicknet beacons of the production workload are
// the SDK's recorded ones (the demo's), and real: the SDK verifies each.
func TestRecordedBeacons(t *testing.T) {
	rounds, sigs := workload.QuicknetRecorded()
	if !slices.Equal(rounds, sdk.QuicknetRounds()) {
		t.Fatalf("rounds %v, the SDK's %v", rounds, sdk.QuicknetRounds())
	}
	src := sdk.QuicknetBeacons()
	for i, r := range rounds {
		b, err := src.Beacon(context.Background(), drand.Quicknet().Hash(), r)
		if err != nil || !bytes.Equal(b.Signature, sigs[i]) {
			t.Errorf("round %d: the SDK has %x (%v), the workload %x", r, b.Signature, err, sigs[i])
		}
	}
}

// TestRatios: end to end and the ledger alone over each Tessera setting,
// as the report prints them.
func TestRatios(t *testing.T) {
	e := Measure{Name: "end to end", EventsPerSec: 100}
	l := &Measure{Name: "ledger", EventsPerSec: 150}
	got := ratios(e, l, []Measure{{Name: "tessera 256", EventsPerSec: 50}, {Name: "tessera 4096", EventsPerSec: 80}, {Name: "broken"}})
	want := []Ratio{{"end to end", "tessera 256", 2}, {"ledger", "tessera 256", 3}, {"end to end", "tessera 4096", 1.25}, {"ledger", "tessera 4096", 1.875}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ratios %+v, want %+v", got, want)
	}
	r := &Report{EndToEnd: e, Ledger: l, Ratios: want}
	if text := r.Text(); !strings.Contains(text, "ratio      end to end               / tessera 256               2.00×") {
		t.Errorf("the report does not print the ratios:\n%s", text)
	}
}

// checkSides checks that a profile's split by side sums to the stages'
// total (the same samples, split two ways), with the harness within the
// emitters'; and, if busy (a profile of seconds, not of a few samples),
// that both the log and the emitters have some.
func checkSides(t *testing.T, name string, stages, sides map[string]float64, busy bool) {
	t.Helper()
	var total, bySide float64
	for _, v := range stages {
		total += v
	}
	for _, k := range []string{sideLog, sideEmitters, sideRuntime} {
		bySide += sides[k]
	}
	if total <= 0 || math.Abs(bySide-total) > 1e-9*total {
		t.Errorf("%s: the sides sum to %v µs per event, the stages to %v: %v, %v", name, bySide, total, sides, stages)
	}
	if busy && (sides[sideLog] <= 0 || sides[sideEmitters] <= 0) || sides[sideHarness] < 0 || sides[sideHarness] > sides[sideEmitters] {
		t.Errorf("%s: sides %v", name, sides)
	}
}
