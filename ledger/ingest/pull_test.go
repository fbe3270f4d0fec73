package ingest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zarlog/zarlog/sdk"
)

// TestLostPull: a pull request of the ingest's that the server never gets
// (here dropped on the way; in CI, one that nats.go's Messages iterator
// skipped: see pullHeartbeat) is asked again once the pull's idle
// heartbeat has been missed, and the message it would have fetched is
// decided. The ingest pulls one message at a time, and its second pull
// request, sent once the first message is taken, is dropped: the server
// holds no request of the ingest's, and the iterator believes it has one
// waiting. With nats.go's default heartbeat (15 s) the session noticed
// after 30 s; this test waits 15 s.
func TestLostPull(t *testing.T) {
	ctx := testContext(t)
	s := startServer(t, ServerConfig{})
	sink := newFakeSink()
	sink.publishCheckpoint(1 << 20)
	pd := &pullDropper{s: s, skip: 1, drop: 1}
	nc, err := s.Connect(nats.InProcessServer(pd))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	in := newIngester(t, nc, Config{Sink: sink, Locator: sink, Checkpoints: sink, MaxBatch: 1, Prefetch: 1})
	runIngest(t, in)
	c := newClient(t, clientConn(t, s, "e1"), sdk.Config{Emitter: "e1", MaxBatchEvents: 1})

	id, data := makeEvent("e1", "lost-pull", 0)
	if _, err := c.Publish(ctx, sdk.Event{ID: id, Data: data}); err != nil {
		t.Fatal(err)
	}
	sink.waitLen(t, ctx, 1)
	// The ingest sends its next pull request as it takes the next message
	// from its iterator, at once: wait until it is dropped.
	for pd.dropped() == 0 {
		if ctx.Err() != nil {
			t.Fatal("the ingest's second pull request was never sent")
		}
		time.Sleep(10 * time.Millisecond)
	}

	id, data = makeEvent("e1", "lost-pull", 1)
	if _, err := c.Publish(ctx, sdk.Event{ID: id, Data: data}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	sink.waitLen(t, wctx, 2)
	t.Logf("decided %v after its publication", time.Since(start).Round(time.Millisecond))
}

// A pullDropper gives a connection to s whose client drops its pull
// requests ($JS.API.CONSUMER.MSG.NEXT) after the first skip: drop of them.
type pullDropper struct {
	s *Server

	mu         sync.Mutex
	skip, drop int
	n          int // dropped
}

func (p *pullDropper) InProcessConn() (net.Conn, error) {
	c, err := p.s.InProcessConn()
	if err != nil {
		return nil, err
	}
	return &dropConn{Conn: c, p: p}, nil
}

func (p *pullDropper) dropped() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// take reports whether the pull request now sent is dropped.
func (p *pullDropper) take() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.skip > 0 {
		p.skip--
		return false
	}
	if p.drop > 0 {
		p.drop--
		p.n++
		return true
	}
	return false
}

// A dropConn passes the client's protocol operations to the server, but
// for the pull requests its pullDropper drops. An operation split across
// writes waits for its end.
type dropConn struct {
	net.Conn
	p   *pullDropper
	buf []byte
}

var pullSubject = []byte("$JS.API.CONSUMER.MSG.NEXT.")

func (c *dropConn) Write(b []byte) (int, error) {
	c.buf = append(c.buf, b...)
	var out []byte
	for {
		i := bytes.Index(c.buf, []byte("\r\n"))
		if i < 0 {
			break
		}
		line := c.buf[:i]
		end := i + 2
		f := bytes.Fields(line)
		isPub := len(f) > 0 && (bytes.EqualFold(f[0], []byte("PUB")) || bytes.EqualFold(f[0], []byte("HPUB")))
		if isPub {
			n, err := strconv.Atoi(string(f[len(f)-1]))
			if err != nil || len(f) < 3 {
				return 0, fmt.Errorf("dropConn: a publish line %q", line)
			}
			end += n + 2
			if len(c.buf) < end {
				break // its payload comes in the next write
			}
		}
		if !(isPub && bytes.HasPrefix(f[1], pullSubject) && c.p.take()) {
			out = append(out, c.buf[:end]...)
		}
		c.buf = c.buf[end:]
	}
	if len(out) > 0 {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}
