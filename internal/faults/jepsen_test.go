package faults_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/internal/faults"
	"github.com/zarlog/zarlog/internal/testonly"
)

const (
	bucketName = "zarlog-jepsen"
	streamName = "ZARLOG_EVENTS"
	httpPort   = "8080"
	s3Port     = "7070"
)

// A zarlog node: one `zarlog serve --storage` in its namespace.
type zNode struct {
	name string
	host *faults.Host
	proc *faults.Proc
	dir  string

	mu      sync.Mutex
	primary bool
	hold    bool      // not restarted by the supervisor
	ready   chan bool // closed once it printed its URLs
	took    []time.Time
	lost    int
}

func (n *zNode) base() string { return "http://" + n.host.IP + ":" + httpPort + "/" }

func (n *zNode) isPrimary() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.primary
}

// The deployment under test.
type deployment struct {
	t     *testing.T
	start time.Time
	net   *faults.Net
	bins  map[string]string

	natsHosts []*faults.Host
	nats      []*faults.Proc
	natsDirs  []string
	s3Host    *faults.Host
	s3        *faults.Proc
	s3Root    string
	nodes     []*zNode
	vkey      string
	verifier  note.Verifier

	mu       sync.Mutex
	schedule []string
	spans    []span
	notes    map[string][]byte
	finished bool
	holder   *zNode // the node that took the log last

	backendErr func() string
}

// setHolder records the node that took the log last: another node that
// still thinks it holds it (cut off, say) has lost it.
func (d *deployment) setHolder(nd *zNode) {
	d.mu.Lock()
	d.holder = nd
	d.mu.Unlock()
}

func (d *deployment) isHolder(nd *zNode) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.holder == nd
}

// dump logs the last lines of every process, for a failure.
func (d *deployment) dump() {
	var ps []*faults.Proc
	ps = append(ps, d.nats...)
	if d.s3 != nil {
		ps = append(ps, d.s3)
	}
	for _, nd := range d.nodes {
		ps = append(ps, nd.proc)
	}
	for _, p := range ps {
		tail := p.Tail()
		if len(tail) > 8000 {
			tail = tail[len(tail)-8000:]
		}
		d.t.Logf("--- %s (started %d times):\n%s", p.Name, p.Starts(), tail)
	}
	if d.backendErr != nil {
		e := d.backendErr()
		if len(e) > 8000 {
			e = e[len(e)-8000:]
		}
		d.t.Logf("--- the backend's stderr:\n%s", e)
	}
}

func (d *deployment) logf(format string, args ...any) {
	line := fmt.Sprintf("%7.1fs ", time.Since(d.start).Seconds()) + fmt.Sprintf(format, args...)
	d.mu.Lock()
	d.schedule = append(d.schedule, line)
	d.mu.Unlock()
	d.t.Log(line)
}

// buildBinaries builds zarlog, zarlog-verify and nats-server (the version
// go.mod pins, from the module cache or the proxy), and versitygw.
func buildBinaries(t *testing.T) map[string]string {
	dir := t.TempDir()
	bins := map[string]string{}
	for name, pkg := range map[string]string{
		"zarlog": "../../cmd/zarlog", "zarlog-verify": "../../cmd/zarlog-verify", "nats-server": "github.com/nats-io/nats-server/v2",
	} {
		bins[name] = filepath.Join(dir, name)
		if out, err := exec.Command("go", "build", "-o", bins[name], pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	bins["versitygw"] = testonly.VersitygwBinary(t)
	return bins
}

// TestJepsen runs a whole two-node deployment under faults, as Jepsen's
// analysis of NATS 2.12.1 did, and checks it from the outside: three
// nats-servers with an R3 stream, versitygw, a primary and a standby
// `zarlog serve --storage s3://…`, and a backend process, each in its own
// network namespace. A seeded random schedule (the seed is printed; set
// ZARLOG_FAULTS_SEED to replay one) isolates the stream's leader, cuts a
// minority off, cuts the primary off from NATS and the bucket, pauses the
// primary and NATS nodes (SIGSTOP), kills NATS nodes and the primary
// (SIGKILL) and restarts a NATS node with its newest block file truncated.
// Then the checker (package faults, on x/mod's tlog) asserts that every
// receipted event is in the final log once with its bytes, that every
// checkpoint signed by either node (polled from both nodes and the bucket,
// and in every receipt) is consistent with the final one and unique for
// its size, and zarlog-verify checks every finished game's bundle. About
// two minutes of faults; ZARLOG_SLOW=1 runs ten.
func TestJepsen(t *testing.T) {
	if os.Getenv(backendEnv) != "" {
		t.Skip("in the backend process")
	}
	if testing.Short() {
		t.Skip("runs a NATS cluster, versitygw and two zarlog nodes in network namespaces")
	}
	if err := faults.Available(); err != nil {
		t.Skipf("skipped: %v", err)
	}
	faults.CleanStale()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ZARLOG_FAULTS_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("ZARLOG_FAULTS_SEED: %v", err)
		}
	}
	duration := 75 * time.Second
	if os.Getenv("ZARLOG_SLOW") != "" {
		duration = 10 * time.Minute
	}
	if s := os.Getenv("ZARLOG_FAULTS_DURATION"); s != "" {
		var err error
		if duration, err = time.ParseDuration(s); err != nil {
			t.Fatalf("ZARLOG_FAULTS_DURATION: %v", err)
		}
	}
	t.Logf("seed %d (ZARLOG_FAULTS_SEED=%d replays this schedule), %v of faults", seed, seed, duration)
	rng := rand.New(rand.NewPCG(seed, 29))

	d := &deployment{t: t, bins: buildBinaries(t), notes: map[string][]byte{}}
	n, err := faults.NewNet(rng)
	if err != nil {
		t.Fatal(err)
	}
	d.net = n
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("removing the namespaces: %v", err)
		}
	})
	if !n.Iptables() {
		t.Log("no iptables: a partition takes the host's link down (cut off from everything)")
	}
	d.start = time.Now()
	t.Cleanup(func() {
		if t.Failed() {
			d.dump()
		}
	})
	d.startNATS()
	d.startS3()
	d.startNodes()
	d.logf("deployment up: NATS %s, versitygw %s, primary %s, standby %s", d.natsURLs(), d.s3Host.IP, d.nodes[0].host.IP, d.nodes[1].host.IP)

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var pollers sync.WaitGroup // stopped before the processes are
	pollers.Go(func() { d.supervise(ctx) })
	pollers.Go(func() { d.pollCheckpoints(ctx) })
	t.Cleanup(func() { cancel(); pollers.Wait() })

	rec := d.startBackend(ctx)
	// The first receipts before the faults.
	rec.waitReceipts(t, 20, 2*time.Minute)
	d.logf("first receipts: %d", rec.count())

	takeovers := d.nemesis(ctx, rng, duration, rec)

	// Heal everything, let the backend finish its games and get every
	// receipt.
	d.healAll()
	d.logf("faults over: healed, every process running; the backend finishes its games")
	rec.stop()
	if err := rec.wait(5 * time.Minute); err != nil {
		t.Fatalf("the backend: %v", err)
	}
	d.logf("backend done: %d events acknowledged, %d receipted, %d copies published again by the SDK (%d distinct events), %d games finished, %d failed",
		len(rec.acks), len(rec.receipts), rec.resent, len(rec.resentIDs), len(rec.finished), len(rec.failed))
	for _, f := range rec.failed {
		t.Errorf("a game failed: %s", f)
	}
	for _, r := range rec.rejected {
		t.Errorf("an acknowledged event was refused: %s", r)
	}

	// The final log, from the primary, once the bucket has it.
	primary := d.waitPrimary(2 * time.Minute)
	log := d.finalLog(ctx, primary, rec)
	d.mu.Lock()
	d.finished = true
	var notes [][]byte
	for _, n := range d.notes {
		notes = append(notes, n)
	}
	d.mu.Unlock()
	var receipts []faults.Receipt
	for _, r := range rec.receipts {
		receipts = append(receipts, faults.Receipt{Emitter: emitterName, ID: r.id, Leaf: rec.acks[r.id], Index: r.index, Checkpoint: r.checkpoint})
	}
	res := faults.Check(log, d.verifier, receipts, notes)
	for _, p := range res.Problems {
		t.Error(p)
	}
	unreceipted := 0
	for id := range rec.acks {
		if !rec.receipted[id] {
			unreceipted++
		}
	}
	if unreceipted > 0 {
		t.Errorf("%d acknowledged events have no receipt", unreceipted)
	}
	d.logf("the events stream as each NATS node has it: %s", d.streamStates())
	// The standby follows to the same checkpoint.
	d.standbyCatchesUp(ctx, primary, log)
	d.bucketHoldsLog(ctx, log)

	verified := d.verifyBundles(ctx, primary, rec)

	// The report.
	windows := rec.windows(d.start, time.Second)
	var lines []string
	lines = append(lines, fmt.Sprintf("seed %d, %v of faults, %d faults: %s", seed, duration, len(d.faultsDone()), strings.Join(d.faultsDone(), ", ")))
	lines = append(lines, fmt.Sprintf("events: %d acknowledged, %d receipted (%d copies published again by the SDK, of %d distinct events), %d in the final log (size %d); lost %d, duplicated %d, forks %d; %d distinct checkpoints checked; %d games finished, %d bundles verified by zarlog-verify",
		len(rec.acks), res.Receipted, rec.resent, len(rec.resentIDs), res.Entries, log.Checkpoint.Size, res.Lost, res.Duplicated, res.Forks, res.Checkpoints, len(rec.finished), verified))
	lines = append(lines, "takeovers after kill -9 of the primary: "+takeovers.String())
	var ws []string
	var longest time.Duration
	for _, w := range windows {
		ws = append(ws, w.String())
		longest = max(longest, w.length)
	}
	lines = append(lines, fmt.Sprintf("unavailability windows (no receipt for 1 s or more): %d, longest %v: %s", len(windows), longest.Round(100*time.Millisecond), strings.Join(ws, "; ")))
	t.Log("schedule:\n" + strings.Join(d.schedule, "\n"))
	t.Log("report:\n" + strings.Join(lines, "\n"))
}

// natsURLs returns the client URLs of the cluster.
func (d *deployment) natsURLs() string {
	var us []string
	for _, h := range d.natsHosts {
		us = append(us, "nats://"+h.IP+":4222")
	}
	return strings.Join(us, ",")
}

func (d *deployment) startNATS() {
	t := d.t
	for i := range 3 {
		h, err := d.net.AddHost(fmt.Sprintf("n%d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		d.natsHosts = append(d.natsHosts, h)
	}
	for i, h := range d.natsHosts {
		dir := t.TempDir()
		var routes []string
		for j, o := range d.natsHosts {
			if j != i {
				routes = append(routes, fmt.Sprintf("nats://%s:6222", o.IP))
			}
		}
		conf := fmt.Sprintf(`server_name: n%d
listen: %s:4222
http: %s:8222
ping_interval: "2s"
ping_max: 3
jetstream {
  store_dir: %q
  max_memory_store: 64MB
  max_file_store: 2GB
}
cluster {
  name: zarlog-jepsen
  listen: %s:6222
  routes: [%s]
}
`, i+1, h.IP, h.IP, dir, h.IP, strings.Join(routes, ", "))
		file := filepath.Join(dir, "nats.conf")
		if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		p := &faults.Proc{Name: fmt.Sprintf("nats n%d", i+1), Host: h, Path: d.bins["nats-server"], Args: []string{"-c", file}}
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Kill() })
		d.nats = append(d.nats, p)
		d.natsDirs = append(d.natsDirs, dir)
	}
	// JetStream is ready once the cluster has a meta leader.
	nc, err := nats.Connect(d.natsURLs(), nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	deadline := time.Now().Add(time.Minute)
	for {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := js.AccountInfo(cctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the NATS cluster has no JetStream meta leader after a minute: %v\n%s\n%s", err, d.nats[0].Tail(), d.nats[1].Tail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (d *deployment) startS3() {
	t := d.t
	h, err := d.net.AddHost("s3")
	if err != nil {
		t.Fatal(err)
	}
	d.s3Host = h
	d.s3Root = t.TempDir()
	if err := os.Mkdir(filepath.Join(d.s3Root, bucketName), 0o755); err != nil {
		t.Fatal(err)
	}
	p := &faults.Proc{Name: "versitygw", Host: h, Path: d.bins["versitygw"], Args: []string{"--port", h.IP + ":" + s3Port, "--quiet", "posix", d.s3Root},
		Env: []string{"ROOT_ACCESS_KEY=jepsen", "ROOT_SECRET_KEY=jepsen-secret-" + strconv.Itoa(os.Getpid())}}
	d.s3 = p
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill() })
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get("http://" + h.IP + ":" + s3Port + "/")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) || !p.Running() {
			t.Fatalf("versitygw did not start: %v\n%s", err, p.Tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (d *deployment) s3Env() []string {
	return []string{"AWS_ENDPOINT_URL_S3=http://" + d.s3Host.IP + ":" + s3Port, "AWS_ACCESS_KEY_ID=jepsen",
		"AWS_SECRET_ACCESS_KEY=jepsen-secret-" + strconv.Itoa(os.Getpid()), "AWS_REGION=us-east-1"}
}

func (d *deployment) startNodes() {
	t := d.t
	keyDir := t.TempDir()
	key := filepath.Join(keyDir, "log.key")
	if out, err := exec.Command(d.bins["zarlog"], "keygen", "--origin", "jepsen.zarlog.localhost/log", "--out", key).CombinedOutput(); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	_, evkey, err := testonly.Key(emitterName)
	if err != nil {
		t.Fatal(err)
	}
	emitters := filepath.Join(keyDir, "emitters")
	if err := os.WriteFile(emitters, []byte(evkey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"za", "zb"} {
		h, err := d.net.AddHost(name)
		if err != nil {
			t.Fatal(err)
		}
		nd := &zNode{name: name, host: h, dir: t.TempDir()}
		args := []string{"serve", "--data", nd.dir, "--key", key, "--emitters", emitters, "--http", h.IP + ":" + httpPort,
			"--admin", "off", "--nats", d.natsURLs(), "--nats-replicas", "3", "--stream-max-bytes", strconv.Itoa(256 << 20), "--storage", "s3://" + bucketName}
		if i == 1 {
			args = append(args, "--standby")
		}
		nd.proc = &faults.Proc{Name: "zarlog " + name, Host: h, Path: d.bins["zarlog"], Args: args, Env: d.s3Env(), OnLine: d.nodeLine(nd)}
		d.nodes = append(d.nodes, nd)
		d.startNode(nd)
		if !d.waitReady(nd, time.Minute) {
			t.Fatalf("%s did not start:\n%s", nd.proc.Name, nd.proc.Tail())
		}
		if i == 0 {
			d.waitPrimary(time.Minute)
		}
	}
}

// startNode starts a node's process (again).
func (d *deployment) startNode(nd *zNode) {
	nd.mu.Lock()
	nd.ready = make(chan bool)
	nd.primary = false
	nd.mu.Unlock()
	if err := nd.proc.Start(); err != nil {
		d.t.Errorf("starting %s: %v", nd.proc.Name, err)
		return
	}
	d.t.Cleanup(func() { nd.proc.Stop(5 * time.Second) })
}

func (d *deployment) waitReady(nd *zNode, timeout time.Duration) bool {
	nd.mu.Lock()
	ready := nd.ready
	nd.mu.Unlock()
	select {
	case <-ready:
		return true
	case <-nd.proc.Done():
		return false
	case <-time.After(timeout):
		return false
	}
}

// nodeLine follows a node's output: its startup lines, and the storage
// log lines that say who holds the log.
func (d *deployment) nodeLine(nd *zNode) func(p *faults.Proc, stream, line string) {
	return func(p *faults.Proc, stream, line string) {
		nd.mu.Lock()
		defer nd.mu.Unlock()
		switch {
		case stream == "out" && strings.HasPrefix(line, "vkey "):
			d.mu.Lock()
			if d.vkey == "" {
				d.vkey = strings.TrimPrefix(line, "vkey ")
				v, err := note.NewVerifier(d.vkey)
				if err != nil {
					d.t.Errorf("vkey %q: %v", d.vkey, err)
				}
				d.verifier = v
			}
			d.mu.Unlock()
		case stream == "out" && strings.HasPrefix(line, "nats "):
			select {
			case <-nd.ready:
			default:
				close(nd.ready)
			}
		case strings.Contains(line, "storage: took over the log"):
			nd.primary = true
			d.setHolder(nd)
			nd.took = append(nd.took, time.Now())
			d.logf("%s: took over the log (%s)", nd.name, afterField(line))
		case strings.Contains(line, "storage: this node is the primary"):
			nd.primary = true
			d.setHolder(nd)
		case strings.Contains(line, "LOST THE LEASE"):
			nd.primary = false
			nd.lost++
			d.logf("%s: lost the lease, stops", nd.name)
		}
	}
}

// lastLines returns the last n lines of s, on one line.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}

// afterField returns the after=… of a log line.
func afterField(line string) string {
	for _, f := range strings.Fields(line) {
		if strings.HasPrefix(f, "after=") {
			return f
		}
	}
	return ""
}

// waitPrimary waits until one running node holds the log.
func (d *deployment) waitPrimary(timeout time.Duration) *zNode {
	deadline := time.Now().Add(timeout)
	for {
		for _, nd := range d.nodes {
			if nd.isPrimary() && d.isHolder(nd) && nd.proc.Running() {
				return nd
			}
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("no node holds the log after %v:\n%s\n---\n%s", timeout, d.nodes[0].proc.Tail(), d.nodes[len(d.nodes)-1].proc.Tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// supervise starts again, as systemd's Restart=always would, a node that
// ended (fenced, say) and is not held down.
func (d *deployment) supervise(ctx context.Context) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, nd := range d.nodes {
			nd.mu.Lock()
			hold := nd.hold
			nd.mu.Unlock()
			if !hold && !nd.proc.Running() && ctx.Err() == nil {
				d.logf("%s ended (%v: %s); restarted", nd.name, nd.proc.Err(), lastLines(nd.proc.Tail(), 2))
				d.startNode(nd)
			}
		}
	}
}

// pollCheckpoints collects every checkpoint both nodes serve and the
// bucket holds, every 200 ms.
func (d *deployment) pollCheckpoints(ctx context.Context) {
	c := &http.Client{Timeout: time.Second}
	get := func(u string) []byte {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := c.Do(req)
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return nil
		}
		return b
	}
	for ctx.Err() == nil {
		var got [][]byte
		for _, nd := range d.nodes {
			got = append(got, get(nd.base()+"checkpoint"))
		}
		if b, err := os.ReadFile(filepath.Join(d.s3Root, bucketName, "checkpoint")); err == nil {
			got = append(got, b)
		}
		d.mu.Lock()
		v := d.verifier
		for _, b := range got {
			if len(b) == 0 || v == nil {
				continue
			}
			if _, err := faults.ParseCheckpoint(b, v); err != nil {
				continue // a torn read of the bucket's file; a bad note from a node is caught by the receipts
			}
			d.notes[string(b)] = b
		}
		d.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// A receipt the backend reported.
type gotReceipt struct {
	at         time.Time
	id         string
	index      int64
	checkpoint []byte
}

// recorder records what the backend process reports.
type recorder struct {
	d     *deployment
	stdin io.WriteCloser
	wait  func(timeout time.Duration) error // for the process to end, done

	mu        sync.Mutex
	acks      map[string][]byte // event id → bytes
	receipts  []gotReceipt
	receipted map[string]bool
	finished  []string // game ids
	failed    []string
	resent    int             // copies the SDK published again
	resentIDs map[string]bool // the events it published again
	rejected  []string
	done      bool
	changed   chan struct{}
}

func (d *deployment) startBackend(ctx context.Context) *recorder {
	t := d.t
	cfg, _ := json.Marshal(backendConfig{NATS: d.natsURLs(), LogKey: d.vkey, Concurrency: 4, Rolls: 12})
	r := &recorder{d: d, acks: map[string][]byte{}, receipted: map[string]bool{}, resentIDs: map[string]bool{}, changed: make(chan struct{})}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBackendChild$", "-test.count=1", "-test.timeout=0")
	cmd.Env = append(os.Environ(), backendEnv+"="+string(cfg))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.stdin = stdin
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &lockedWriter{w: &stderr}
	d.backendErr = func() string { return stderr.String() }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			r.line(sc.Text())
		}
		done <- cmd.Wait()
	}()
	r.wait = func(timeout time.Duration) error {
		select {
		case err := <-done:
			done <- err
			r.mu.Lock()
			ok := r.done
			r.mu.Unlock()
			if err != nil || !ok {
				return fmt.Errorf("ended before it was done: %v\n%s", err, stderr.String())
			}
			return nil
		case <-time.After(timeout):
			r.mu.Lock()
			n := 0
			for id := range r.acks {
				if !r.receipted[id] {
					n++
				}
			}
			r.mu.Unlock()
			return fmt.Errorf("not done after %v: %d events without a receipt", timeout, n)
		}
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		done <- nil
	})
	return r
}

// lockedWriter is an io.Writer safe for concurrent use.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (r *recorder) line(line string) {
	f := strings.Fields(line)
	r.mu.Lock()
	defer r.mu.Unlock()
	bad := func() { r.d.t.Errorf("the backend printed %q", line) }
	if len(f) == 0 {
		return
	}
	at := func() time.Time {
		ms, _ := strconv.ParseInt(f[1], 10, 64)
		return time.UnixMilli(ms)
	}
	switch f[0] {
	case "ack":
		if len(f) != 4 {
			bad()
			return
		}
		b, err := base64.StdEncoding.DecodeString(f[3])
		if err != nil {
			bad()
			return
		}
		r.acks[f[2]] = b
	case "receipt":
		if len(f) != 5 {
			bad()
			return
		}
		i, err1 := strconv.ParseInt(f[3], 10, 64)
		cp, err2 := base64.StdEncoding.DecodeString(f[4])
		if err1 != nil || err2 != nil {
			bad()
			return
		}
		r.receipts = append(r.receipts, gotReceipt{at: at(), id: f[2], index: i, checkpoint: cp})
		r.receipted[f[2]] = true
		close(r.changed)
		r.changed = make(chan struct{})
	case "finished":
		r.finished = append(r.finished, f[2])
	case "resend":
		r.resent++
		r.resentIDs[f[2]] = true
	case "rejected":
		r.rejected = append(r.rejected, strings.Join(f[2:], " "))
	case "failed":
		r.failed = append(r.failed, strings.Join(f[2:], " "))
	case "played":
	case "done":
		r.done = true
	default:
		bad()
	}
}

// stop tells the backend to finish its games.
func (r *recorder) stop() { r.stdin.Close() }

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.receipts)
}

// waitReceipts waits until the backend has n receipts.
func (r *recorder) waitReceipts(t *testing.T, n int, timeout time.Duration) {
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		got, ch := len(r.receipts), r.changed
		r.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%d receipts after %v, want %d", got, timeout, n)
		}
	}
}

// nextReceiptAfter waits until a receipt comes later than t0 and returns
// its time.
func (r *recorder) nextReceiptAfter(t0 time.Time, timeout time.Duration) (time.Time, bool) {
	deadline := time.After(timeout)
	for {
		r.mu.Lock()
		ch := r.changed
		var first time.Time
		for _, rc := range r.receipts {
			if rc.at.After(t0) && (first.IsZero() || rc.at.Before(first)) {
				first = rc.at
			}
		}
		r.mu.Unlock()
		if !first.IsZero() {
			return first, true
		}
		select {
		case <-ch:
		case <-deadline:
			return time.Time{}, false
		}
	}
}

// A window is a time without a receipt.
type window struct {
	from   time.Duration // since the start
	length time.Duration
	fault  string
}

func (w window) String() string {
	s := fmt.Sprintf("at %.1fs for %.1fs", w.from.Seconds(), w.length.Seconds())
	if w.fault != "" {
		s += " (" + w.fault + ")"
	}
	return s
}

// windows returns the gaps of at least min between receipts.
func (r *recorder) windows(start time.Time, least time.Duration) []window {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ts []time.Time
	for _, rc := range r.receipts {
		ts = append(ts, rc.at)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	var out []window
	for i := 1; i < len(ts); i++ {
		if gap := ts[i].Sub(ts[i-1]); gap >= least {
			out = append(out, window{from: ts[i-1].Sub(start), length: gap, fault: r.d.faultsDuring(ts[i-1], ts[i])})
		}
	}
	return out
}
