package ingest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// benchEvent returns an event of about size bytes whose "t" member is the
// publication time in nanoseconds, at a fixed offset (see eventTime).
func benchEvent(emitter string, n int, t time.Time, size int) (string, []byte) {
	id := emitter + ":" + strconv.Itoa(n)
	b := fmt.Appendf(nil, `{"t":%019d,"emitter":%q,"id":%q,"pad":"`, t.UnixNano(), emitter, id)
	for len(b) < size-2 {
		b = append(b, 'x')
	}
	return id, append(b, `"}`...)
}

// eventTime reads the "t" member benchEvent wrote.
func eventTime(e []byte) time.Time {
	if len(e) < 25 || !bytes.HasPrefix(e, []byte(`{"t":`)) {
		return time.Time{}
	}
	n, err := strconv.ParseInt(string(e[5:24]), 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// BenchmarkJetStreamPublish measures what a publish ack costs on this
// machine with the embedded server's default settings and with SyncAlways
// (an fsync per message): async publishes of 400-byte events over TCP
// with a window of 256, no consumer.
func BenchmarkJetStreamPublish(b *testing.B) {
	for _, sync := range []bool{false, true} {
		for _, window := range []int{1, 256} {
			name := fmt.Sprintf("sync_always=%v/window=%d", sync, window)
			b.Run(name, func(b *testing.B) {
				s := startServer(b, ServerConfig{SyncAlways: sync})
				ensureStream(b, connect(b, s), StreamConfig{})
				nc, err := nats.Connect(s.ClientURL())
				if err != nil {
					b.Fatal(err)
				}
				defer nc.Close()
				js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(window))
				if err != nil {
					b.Fatal(err)
				}
				subj := wire.Subjects{}.Events("e1")
				n := 0
				start := time.Now()
				for b.Loop() {
					id, data := benchEvent("e1", n, time.Time{}, 400)
					n++
					m := nats.NewMsg(subj)
					m.Data = data
					m.Header.Set(wire.HeaderMsgID, id)
					if _, err := js.PublishMsgAsync(m, jetstream.WithStallWait(time.Minute)); err != nil {
						b.Fatal(err)
					}
				}
				select {
				case <-js.PublishAsyncComplete():
				case <-time.After(time.Minute):
					b.Fatal("acks did not arrive")
				}
				b.ReportMetric(float64(n)/time.Since(start).Seconds(), "msgs/s")
			})
		}
	}
}

// benchSink is the durable fake of the end-to-end benchmark: it writes every
// event to a file with one fsync per Submit and records, for every event,
// the time from its publication to its durability.
type benchSink struct {
	f       *os.File
	buf     []byte
	next    uint64
	mu      sync.Mutex
	lat     []time.Duration
	batches int
	total   atomic.Int64
	done    chan struct{}
	want    atomic.Int64
}

func (s *benchSink) Append(ctx context.Context, subs []ledger.Input) ([]ledger.Outcome, error) {
	s.buf = s.buf[:0]
	for _, sub := range subs {
		s.buf = binaryAppendLen(s.buf, sub.Data)
	}
	if _, err := s.f.Write(s.buf); err != nil {
		return nil, err
	}
	if err := s.f.Sync(); err != nil {
		return nil, err
	}
	now := time.Now()
	outs := make([]ledger.Outcome, len(subs))
	s.mu.Lock()
	for i, sub := range subs {
		outs[i] = ledger.Outcome{Result: ledger.Appended, Index: s.next}
		s.next++
		if t := eventTime(sub.Data); !t.IsZero() {
			s.lat = append(s.lat, now.Sub(t))
		}
	}
	s.batches++
	s.mu.Unlock()
	if w := s.want.Load(); s.total.Add(int64(len(subs))) >= w && w > 0 {
		select {
		case <-s.done:
		default:
			close(s.done)
		}
	}
	return outs, nil
}

func binaryAppendLen(b, e []byte) []byte {
	return append(append(b, byte(len(e)>>8), byte(len(e))), e...)
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, int(p*float64(len(d))))]
}

// BenchmarkEndToEnd measures the NATS hop end to end: concurrent emitters
// (each an SDK client on its own TCP connection to the embedded server)
// publish 400-byte events, each game's in order; the ingest submits them to
// a sink that writes them to a file with one fsync per batch; the messages
// are then acknowledged. It reports events/s (including the drain at the
// end), publish→JetStream-ack latency and publish→durable latency.
// Sub-benchmarks vary the number of emitters and whether the SDK packs
// several events into one NATS message; "rate=" ones offer a fixed load.
func BenchmarkEndToEnd(b *testing.B) {
	for _, bc := range []struct {
		emitters, pack, window, rate int
	}{
		{1, 1, 256, 0},
		{16, 1, 256, 0},
		{1, 64, 32, 0},
		{4, 64, 32, 0},
		{16, 64, 256, 0},
		{16, 64, 16, 0},
		{16, 64, 4, 0},
		{16, 256, 4, 0},
		{64, 64, 4, 0},
		{16, 64, 256, 50000},
		{16, 64, 4, 50000},
		{16, 64, 4, 100000},
	} {
		name := fmt.Sprintf("emitters=%d/pack=%d/window=%d", bc.emitters, bc.pack, bc.window)
		if bc.rate > 0 {
			name += fmt.Sprintf("/rate=%d", bc.rate)
		}
		b.Run(name, func(b *testing.B) { benchEndToEnd(b, bc.emitters, bc.pack, bc.window, bc.rate) })
	}
}

func benchEndToEnd(b *testing.B, emitters, pack, window, rate int) {
	ctx := context.Background()
	s := startServer(b, ServerConfig{})
	f, err := os.Create(filepath.Join(b.TempDir(), "log"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sink := &benchSink{f: f, done: make(chan struct{})}
	in, err := New(connect(b, s), Config{Sink: sink, InfoInterval: -1, Stream: testStream(StreamConfig{})})
	if err != nil {
		b.Fatal(err)
	}
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- in.Run(ictx) }()
	defer func() { cancel(); <-ran }()

	clients := make([]*sdk.Client, emitters)
	names := make([]string, emitters)
	for i := range clients {
		names[i] = fmt.Sprintf("e%d", i)
		nc, err := sdk.Dial(s.ClientURL(), names[i])
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		c, err := sdk.New(nc, sdk.Config{Emitter: names[i], MaxBatchEvents: pack, Window: window})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		clients[i] = c
	}

	var ackLat []time.Duration
	var ackMu sync.Mutex
	acks := make(chan *sdk.Pending, 1<<16)
	pubTimes := make(chan time.Time, 1<<16)
	ackDone := make(chan struct{})
	go func() {
		defer close(ackDone)
		var local []time.Duration
		for p := range acks {
			t := <-pubTimes
			<-p.Done()
			if _, err := p.Result(); err != nil {
				b.Error(err)
				return
			}
			local = append(local, time.Since(t))
		}
		ackMu.Lock()
		ackLat = local
		ackMu.Unlock()
	}()

	// Warm up: the ingest's session is set up and every client has
	// published once.
	for i, c := range clients {
		id, data := benchEvent(names[i], -1, time.Time{}, 400)
		if _, err := c.Publish(ctx, sdk.Event{ID: id, Data: data}); err != nil {
			b.Fatal(err)
		}
	}
	for sink.total.Load() < int64(emitters) {
		runtime.Gosched()
	}
	sink.total.Store(0)

	const gamesPerEmitter = 1000
	n := 0
	start := time.Now()
	for b.Loop() {
		if rate > 0 && n%100 == 0 {
			if d := time.Until(start.Add(time.Duration(n) * time.Second / time.Duration(rate))); d > 0 {
				time.Sleep(d)
			}
		}
		e := n % emitters
		now := time.Now()
		id, data := benchEvent(names[e], n, now, 400)
		p, err := clients[e].PublishAsync(ctx, sdk.Event{ID: id, Data: data, OrderKey: strconv.Itoa(n / emitters % gamesPerEmitter)})
		if err != nil {
			b.Fatal(err)
		}
		acks <- p
		pubTimes <- now
		n++
	}
	close(acks)
	sink.want.Store(int64(n))
	if sink.total.Load() < int64(n) {
		select {
		case <-sink.done:
		case <-time.After(2 * time.Minute):
			b.Fatalf("sink has %d of %d events", sink.total.Load(), n)
		}
	}
	elapsed := time.Since(start)
	<-ackDone

	sink.mu.Lock()
	defer sink.mu.Unlock()
	b.ReportMetric(float64(n)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(n)/float64(max(sink.batches, 1)), "events/batch")
	ackMu.Lock()
	defer ackMu.Unlock()
	b.ReportMetric(float64(percentile(ackLat, 0.5).Microseconds())/1000, "ack-p50-ms")
	b.ReportMetric(float64(percentile(ackLat, 0.99).Microseconds())/1000, "ack-p99-ms")
	b.ReportMetric(float64(percentile(sink.lat, 0.5).Microseconds())/1000, "durable-p50-ms")
	b.ReportMetric(float64(percentile(sink.lat, 0.99).Microseconds())/1000, "durable-p99-ms")
}

// BenchmarkDiskFsync measures this machine's disk: one 400-byte append and
// fsync per operation (what SyncAlways costs per message, at least).
func BenchmarkDiskFsync(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "f"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := bytes.Repeat([]byte("x"), 400)
	for b.Loop() {
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
}
