package ingest

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zarlog/zarlog/wire"
)

// TestStreamBytes: the events stream sized by StreamBytes fits the
// embedded server's store, where DefaultMaxBytes does not (JetStream
// reserves a stream's MaxBytes when it creates it: `zarlog bench` asked
// for 8 GiB and failed on a disk with 11 GB free), and a server with room
// gets DefaultMaxBytes.
func TestStreamBytes(t *testing.T) {
	const store = 64 << 20
	s := startServer(t, ServerConfig{MaxStore: store})
	if got := s.StoreLimit(); got != store {
		t.Fatalf("StoreLimit %d, want %d", got, store)
	}
	if got, want := s.StreamBytes(), int64(store/2); got != want {
		t.Fatalf("StreamBytes %d, want %d", got, want)
	}
	js, err := jetstream.New(connect(t, s))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	_, err = EnsureStream(ctx, js, wire.Subjects{}, StreamConfig{})
	if err == nil || !strings.Contains(err.Error(), "insufficient storage") {
		t.Fatalf("a stream of DefaultMaxBytes on a store of %d bytes: %v, want insufficient storage", store, err)
	}
	st, err := EnsureStream(ctx, js, wire.Subjects{}, StreamConfig{MaxBytes: s.StreamBytes()})
	if err != nil {
		t.Fatalf("a stream of StreamBytes: %v", err)
	}
	if info, err := st.Info(ctx); err != nil || info.Config.MaxBytes != store/2 {
		t.Errorf("the stream's MaxBytes: %v, %v", info, err)
	}

	roomy := startServer(t, ServerConfig{MaxStore: 4 * DefaultMaxBytes})
	if got := roomy.StreamBytes(); got != DefaultMaxBytes {
		t.Errorf("StreamBytes with a store of %d bytes: %d, want DefaultMaxBytes", 4*DefaultMaxBytes, got)
	}
}
