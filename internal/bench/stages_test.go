package bench

import (
	"testing"

	"github.com/zarlog/zarlog/internal/workload"
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
