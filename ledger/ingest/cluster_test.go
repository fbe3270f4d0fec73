package ingest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

// freePorts returns n TCP ports that were free a moment ago.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// startCluster starts n in-process nats-servers with JetStream, routed to
// each other, and returns them and a comma-separated client URL list.
func startCluster(t testing.TB, n int) ([]*Server, string) {
	t.Helper()
	ports := freePorts(t, n)
	var routes []*url.URL
	for _, p := range ports {
		routes = append(routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", p)})
	}
	servers := make([]*Server, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			servers[i] = startServer(t, ServerConfig{ServerName: fmt.Sprintf("n%d", i), Configure: func(o *server.Options) {
				o.Cluster = server.ClusterOpts{Name: "zc", Host: "127.0.0.1", Port: ports[i]}
				o.Routes = routes
			}})
		})
	}
	wg.Wait()
	var urls []string
	for _, s := range servers {
		urls = append(urls, s.ClientURL())
	}
	return servers, strings.Join(urls, ",")
}

// TestCluster runs the ingest against a 3-node cluster with a 3-replica
// stream, stops the stream leader while backends publish, and checks that
// every acknowledged event ends in the sink exactly once.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster formation and leader election take seconds")
	}
	ctx := testContext(t)
	servers, urls := startCluster(t, 3)

	inc, err := Dial(DialConfig{URL: urls, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(inc.Close)
	stream := testStream(StreamConfig{Replicas: 3})
	// The stream can be created once the cluster has a meta leader.
	js, err := jetstream.New(inc)
	if err != nil {
		t.Fatal(err)
	}
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := EnsureStream(cctx, js, wire.Subjects{}, stream)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("creating the replicated stream: %v", err)
		}
	}
	t.Logf("stream created")
	sink := newFakeSink()
	runIngest(t, newIngester(t, inc, Config{Sink: sink, Stream: stream}))

	cnc, err := sdk.Dial(urls, "e1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cnc.Close)
	c := newClient(t, cnc, sdk.Config{Emitter: "e1", AckTimeout: time.Second})

	// Publish in the background; stop the stream leader after the first
	// 300 acks.
	const games, perGame = 30, 50
	var ids []string
	var pending []*sdk.Pending
	for s := range perGame {
		for g := range games {
			game := fmt.Sprintf("g%d", g)
			id, data := makeEvent("e1", game, s)
			p, err := c.PublishAsync(ctx, sdk.Event{ID: id, Data: data, OrderKey: game})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
			pending = append(pending, p)
		}
	}
	for _, p := range pending[:300] {
		if _, err := p.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	info, err := js.Stream(ctx, "ZARLOG_EVENTS")
	if err != nil {
		t.Fatal(err)
	}
	leader := info.CachedInfo().Cluster.Leader
	stopped := false
	for _, s := range servers {
		if s.NATS().Name() == leader {
			t.Logf("stopping the stream leader %s", leader)
			s.Shutdown()
			stopped = true
		}
	}
	if !stopped {
		t.Fatalf("stream leader %q is none of the servers", leader)
	}
	for i, p := range pending {
		if _, err := p.Wait(ctx); err != nil {
			t.Fatalf("event %s: %v", ids[i], err)
		}
	}
	t.Logf("all acked")
	sink.waitLen(t, ctx, len(ids))
	sink.checkExactlyOnce(t, ids)
}
