package ingest

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zarlog/zarlog/sdk"
)

const childDirEnv, childPortEnv = "ZARLOG_TEST_NATS_CHILD_DIR", "ZARLOG_TEST_NATS_CHILD_PORT"

// TestHelperNATSProcess is not a test: it is the embedded server process
// TestKill9 starts and kills. It serves until killed.
func TestHelperNATSProcess(t *testing.T) {
	dir := os.Getenv(childDirEnv)
	if dir == "" {
		t.Skip("runs only as TestKill9's child process")
	}
	port, err := strconv.Atoi(os.Getenv(childPortEnv))
	if err != nil {
		t.Fatal(err)
	}
	// The default settings: what `zarlog serve` runs with.
	s, err := StartServer(context.Background(), ServerConfig{StoreDir: dir, Port: port, InsecureNoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("ready %s\n", s.ClientURL())
	select {}
}

// startChild starts the embedded server in a child process and returns its
// client URL.
func startChild(t *testing.T, dir string, port int) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperNATSProcess$", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir, childPortEnv+"="+strconv.Itoa(port))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "ready "); ok {
			go func() {
				for sc.Scan() {
				}
			}()
			return u, cmd
		}
	}
	t.Fatalf("child process ended before it was ready: %v", sc.Err())
	return "", nil
}

// TestKill9 publishes events to the embedded server with its default
// settings, kills the server's process with SIGKILL once every publish is
// acknowledged, restarts it on the same store, and checks that the ingest
// then receives every acknowledged event: with the default (non-fsync)
// settings, a publish ack survives the death of the process.
func TestKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx := testContext(t)
	dir := t.TempDir()
	u, cmd := startChild(t, dir, -1)
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(pu.Port())
	if err != nil {
		t.Fatal(err)
	}

	nc, err := sdk.Dial(u, "e1")
	if err != nil {
		t.Fatal(err)
	}
	ensureStream(t, nc, StreamConfig{})
	anc, err := nats.Connect(u)
	if err != nil {
		t.Fatal(err)
	}
	admitOnly(t, anc) // closed with the child, killed below
	c := newClient(t, nc, sdk.Config{Emitter: "e1"})
	ids, _ := publishGames(t, ctx, c, "e1", "g", 50, 60)
	c.Close()
	nc.Close()

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	u2, _ := startChild(t, dir, port)

	inc, err := Dial(DialConfig{URL: u2, Logger: testLogger(t), Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer inc.Close()
	sink := newFakeSink()
	stop := runIngest(t, newIngester(t, inc, Config{Sink: sink}))
	defer stop()
	sink.waitLen(t, ctx, len(ids))
	sink.checkExactlyOnce(t, ids)
}
