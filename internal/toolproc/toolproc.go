// Package toolproc builds and runs the third-party programs that zarlog's
// go.mod pins as tools (torchwood's litewitness and witnessctl, Sigsum's
// sigsum-witness) beside a zarlog process: the demo's second witness and
// the tests' independent ones. It is what packages litewitness and
// sigsumwitness share: finding the binary, a free loopback address, and a
// process that is up once it accepts connections and is stopped with
// SIGKILL.
package toolproc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// StartTimeout is how long Start waits for a program to listen.
const StartTimeout = 30 * time.Second

// Path returns the path of the binary of tool, a program that the go.mod
// of the module in dir pins as a tool, building it with the go command
// (go tool -n: from the build cache after the first time). Empty dir means
// the current directory.
func Path(ctx context.Context, dir, tool string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "tool", "-n", tool)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building %s with the go command: %w: %s", tool, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// FreeAddr returns a loopback TCP address that was free a moment ago.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// A Proc is a running program.
type Proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // cmd.Wait's, once done is closed
	once sync.Once
}

// Start starts bin with args, its standard output and error to out (nil
// discards them), and returns once it accepts TCP connections on addr. It
// fails, leaving nothing running, if the program exits first or does not
// listen within StartTimeout or before ctx ends.
func Start(ctx context.Context, bin string, args []string, out io.Writer, addr string) (*Proc, error) {
	if out == nil {
		out = io.Discard
	}
	p := &Proc{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	timeout := time.NewTimer(StartTimeout)
	defer timeout.Stop()
	for {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return p, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s exited at start: %v", bin, p.err)
		case <-ctx.Done():
			p.Stop()
			return nil, fmt.Errorf("%s does not listen on %s: %w", bin, addr, ctx.Err())
		case <-timeout.C:
			p.Stop()
			return nil, fmt.Errorf("%s does not listen on %s after %v", bin, addr, StartTimeout)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop kills the program (SIGKILL) and waits for it to exit. It may be
// called more than once.
func (p *Proc) Stop() {
	p.once.Do(func() {
		p.cmd.Process.Kill()
		<-p.done
	})
}
