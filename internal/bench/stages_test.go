package bench

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/nats-io/nats.go"

	"github.com/zarlog/zarlog/internal/workload"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/sdk"
)

// TestStageOf: a sample is the innermost stage among its frames, whatever
// helpers lie below it (hashing, allocation), and the backends' own work is
// theirs even where it runs NATS code.
func TestStageOf(t *testing.T) {
	for _, c := range []struct {
		stack []string // leaf first
		want  string
	}{
		{[]string{"crypto/sha256.block", "crypto/internal/fips140/ed25519.verify", "crypto/ed25519.Verify", "github.com/zarlog/zarlog/events.Verify", "github.com/zarlog/zarlog/ledger.(*Ledger).Append"}, "signature"},
		{[]string{"github.com/oasisprotocol/curve25519-voi/internal/field.feMul", "github.com/oasisprotocol/curve25519-voi/primitives/ed25519.VerifyExpandedWithOptions", "github.com/zarlog/zarlog/ledger.sigKeys.verify", "github.com/zarlog/zarlog/events.VerifyWith", "github.com/zarlog/zarlog/ledger.(*Ledger).check"}, "signature"},
		{[]string{"runtime.mallocgc", "github.com/zarlog/zarlog/events.parseCanonicalFast", "github.com/zarlog/zarlog/events.Parse", "github.com/zarlog/zarlog/ledger.(*Ledger).Append"}, "parse"},
		{[]string{"crypto/sha256.block", "github.com/zarlog/zarlog/merkle.(*Builder).Append", "github.com/zarlog/zarlog/ledger.(*Ledger).Append"}, "tree"},
		{[]string{"syscall.Syscall", "github.com/cockroachdb/pebble/v2/vfs.(*syncingFile).Sync", "github.com/cockroachdb/pebble/v2.(*DB).Apply", "github.com/zarlog/zarlog/ledger.(*Ledger).Append"}, "pebble"},
		{[]string{"github.com/zarlog/zarlog/rules.LegalPlays", "github.com/zarlog/zarlog/events.Apply"}, "state"},
		{[]string{"runtime.memmove", "github.com/zarlog/zarlog/ledger.(*Ledger).Append"}, "ledger-other"},
		{[]string{"github.com/nats-io/nats-server/v2/server.(*client).processInboundMsg"}, "nats"},
		{[]string{"github.com/nats-io/nats.go.(*Conn).publish", "github.com/zarlog/zarlog/sdk.(*Client).PublishAsync"}, "publish"},
		{[]string{"github.com/zarlog/zarlog/ledger/ingest.(*Ingester).split"}, "ingest"},
		{[]string{"runtime.memmove", "github.com/zarlog/zarlog/internal/bench.EndToEnd"}, "publish"},
		{[]string{"runtime.chanrecv", "github.com/zarlog/zarlog/sdk.(*Pending).Wait", "github.com/zarlog/zarlog/internal/bench.awaitAcks"}, "publish"},
		// The ingest runs in a goroutine EndToEnd starts: its work is the
		// ingest's and the ledger's, not the backends'.
		{[]string{"runtime.memmove", "github.com/zarlog/zarlog/ledger.copyInputs", "github.com/zarlog/zarlog/ledger.(*Ledger).Append", "github.com/zarlog/zarlog/internal/bench.(*sink).Append",
			"github.com/zarlog/zarlog/ledger/ingest.(*Ingester).submit", "github.com/zarlog/zarlog/ledger/ingest.(*Ingester).Run", "github.com/zarlog/zarlog/internal/bench.EndToEnd.func1"}, "ledger-other"},
		{[]string{"github.com/nats-io/nats.go/jetstream.(*pullConsumer).Fetch", "github.com/zarlog/zarlog/ledger/ingest.(*Ingester).session", "github.com/zarlog/zarlog/internal/bench.EndToEnd.func1"}, "nats"},
		{[]string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"}, "gc"},
		{[]string{"runtime.futex", "runtime.mcall"}, "other"},
		{[]string{"crypto/internal/fips140/ed25519.sign", "crypto/ed25519.Sign", "github.com/zarlog/zarlog/merkle.Sign", "github.com/zarlog/zarlog/ledger.(*Ledger).sign", "github.com/zarlog/zarlog/ledger.(*Ledger).signLoop"}, "checkpoint"},
	} {
		if got := stageOf(c.stack); got != c.want {
			t.Errorf("%v: %s, want %s", c.stack, got, c.want)
		}
	}
}

// TestPositions: an event's position from its id, canonical or not, in
// order or not.
func TestPositions(t *testing.T) {
	evs := []workload.Event{
		{ID: "g1:0", Game: "g1"}, {ID: "g2:0", Game: "g2"}, {ID: "g1:1", Game: "g1"},
		{ID: "g1:3", Game: "g1"}, {ID: "custom-id", Game: "g2"}, {ID: "g1:2", Game: "g1"}, {ID: "g3:1", Game: "g3"},
	}
	p := newPositions(evs)
	for i, e := range evs {
		if got, ok := p.of(e.ID); !ok || got != i {
			t.Errorf("%s: position %d, %v; want %d", e.ID, got, ok, i)
		}
	}
	for _, id := range []string{"g1:4", "g2:1", "g9:0", "nope"} {
		if got, ok := p.of(id); ok {
			t.Errorf("%s: position %d of an id not in the workload", id, got)
		}
	}
}

// TestSplitProfile: a profile's samples split by side by their goroutine's
// label, the unlabelled ones the runtime's, the emitters' without an SDK or
// NATS frame the harness's, and the sides sum to the stages' total.
func TestSplitProfile(t *testing.T) {
	fn := func(name string) *profile.Location {
		return &profile.Location{Line: []profile.Line{{Function: &profile.Function{Name: name}}}}
	}
	sample := func(ns int64, side string, funcs ...string) *profile.Sample {
		s := &profile.Sample{Value: []int64{1, ns}}
		for _, f := range funcs {
			s.Location = append(s.Location, fn(f))
		}
		if side != "" {
			s.Label = map[string][]string{sideLabel: {side}}
		}
		return s
	}
	prof := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples"}, {Type: "cpu", Unit: "nanoseconds"}}, Sample: []*profile.Sample{
		sample(10_000, sideLog, "github.com/nats-io/nats-server/v2/server.(*client).processInboundMsg"),
		sample(20_000, sideLog, "github.com/cockroachdb/pebble/v2.(*DB).Apply", "github.com/zarlog/zarlog/ledger.(*Ledger).Append"),
		sample(30_000, sideEmitters, "github.com/nats-io/nats.go.(*Conn).publish", "github.com/zarlog/zarlog/sdk.(*Client).PublishAsync"),
		sample(40_000, sideEmitters, "runtime.newproc", "github.com/zarlog/zarlog/internal/bench.(*humanScheduler).send"),
		sample(50_000, "", "runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"),
		// Pebble and the nats-server label their own goroutines, replacing
		// the side's label: those are the log's.
		sample(60_000, "", "github.com/cockroachdb/pebble/v2.(*DB).compact1"),
		sample(70_000, "", "github.com/nats-io/nats-server/v2/server.(*stream).internalLoop"),
	}}
	prof.Sample[5].Label = map[string][]string{"pebble": {"compact"}, "output-level": {"L3"}}
	prof.Sample[6].Label = map[string][]string{"account": {"$G"}, "stream": {"ZARLOG_EVENTS"}, "type": {"stream"}}
	got := splitProfile(prof, 10)
	want := map[string]float64{sideLog: 16, sideEmitters: 7, sideHarness: 4, sideRuntime: 5}
	for k, v := range want {
		if got.Sides[k] != v {
			t.Errorf("side %s: %v µs per event, want %v (%v)", k, got.Sides[k], v, got.Sides)
		}
	}
	checkSides(t, "profile", got.Stages, got.Sides, true)
}

// TestSidesLabelled: the goroutines of the embedded nats-server, those it
// starts for each connection after it started included, are the log's
// side (by the side's label, or by the labels the server sets on its own
// goroutines, logLabels), and an SDK client's the emitters', as Human and
// EndToEnd label them (setSide before starting each).
func TestSidesLabelled(t *testing.T) {
	ctx := context.Background()
	access := []ingest.EmitterAccess{{Emitter: "emitter-0", Password: "pw-0-abcdefghijklmnop"}}
	setSide(sideLog)
	srv, err := ingest.StartServer(ctx, ingest.ServerConfig{StoreDir: filepath.Join(t.TempDir(), "nats"), Port: -1, Emitters: access})
	if err != nil {
		setSide("")
		t.Fatal(err)
	}
	defer srv.Shutdown()
	setSide(sideEmitters)
	enc, err := sdk.Dial(srv.ClientURL(), "emitter-0", nats.UserInfo("emitter-0", access[0].Password))
	setSide("")
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	var buf bytes.Buffer
	if err := pprofGoroutines(&buf); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	server, client := 0, 0
	for _, s := range p.Sample {
		var funcs []string
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				funcs = append(funcs, l.Function.Name)
			}
		}
		side := sideOf(s.Label)
		switch {
		case slices.ContainsFunc(funcs, func(f string) bool { return strings.HasPrefix(f, "github.com/nats-io/nats-server/") }):
			server += int(s.Value[0])
			if side != sideLog {
				t.Errorf("a nats-server goroutine of the %s side (labels %v): %v", side, s.Label, funcs)
			}
		case slices.ContainsFunc(funcs, func(f string) bool { return strings.HasPrefix(f, "github.com/nats-io/nats%2ego.") }): // pprof's escaped name
			client += int(s.Value[0])
			if side != sideEmitters {
				t.Errorf("a NATS client goroutine of the %s side (labels %v): %v", side, s.Label, funcs)
			}
		}
	}
	// The server's per-connection goroutines (read and write loops) were
	// started by its accept loop after setSide("").
	if server < 3 || client < 1 {
		t.Errorf("%d nats-server goroutines, %d NATS client goroutines", server, client)
	}
}
