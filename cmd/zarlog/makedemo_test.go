//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY opens a pseudo-terminal: its controlling side and the terminal a
// program is given.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Fatalf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Fatalf("ptsname: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// A ttyReader collects what a program writes to its terminal.
type ttyReader struct {
	mu    sync.Mutex
	b     bytes.Buffer
	grown chan struct{} // closed and replaced at every write
}

func (r *ttyReader) read(f *os.File) {
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		r.mu.Lock()
		r.b.Write(buf[:n])
		close(r.grown)
		r.grown = make(chan struct{})
		r.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// waitFor returns once the output holds s, or fails the test when done
// closes (the program exited) or after a generous bound.
func (r *ttyReader) waitFor(t *testing.T, s string, done <-chan struct{}) {
	t.Helper()
	bound := time.After(5 * time.Minute)
	for {
		r.mu.Lock()
		has, grown := strings.Contains(r.b.String(), s), r.grown
		r.mu.Unlock()
		if has {
			return
		}
		select {
		case <-grown:
		case <-done:
			t.Fatalf("the program exited before printing %q:\n%s", s, r.String())
		case <-bound:
			t.Fatalf("no %q after 5 minutes:\n%s", s, r.String())
		}
	}
}

func (r *ttyReader) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.b.String()
}

// TestMakeDemoCtrlC runs `make demo` as a person does, on a terminal (a
// pseudo-terminal whose session make leads), waits for the demo to play its
// games and say "serving until Ctrl-C", types Ctrl-C, and checks that make
// exits with status 0 (before, make died of the SIGINT: 130 in the shell)
// and that the demo said it stopped.
func TestMakeDemoCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo")
	}
	for _, tool := range []string{"make", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: %v", tool, err)
		}
	}
	master, tty := openPTY(t)
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	cmd := exec.Command("make", "--no-print-directory", "demo", "ARGS=--games 3 --http 127.0.0.1:0 --data "+data)
	cmd.Dir = abs
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	out := &ttyReader{grown: make(chan struct{})}
	go out.read(master)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the program holds its own copies
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		select {
		case <-done:
		default:
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	out.waitFor(t, "serving until Ctrl-C", done)
	if _, err := master.Write([]byte{0x03}); err != nil { // Ctrl-C, as the terminal's line discipline sees it
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("make demo did not stop within 2 minutes of Ctrl-C:\n%s", out)
	}
	var exit *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &exit):
		t.Fatalf("make demo after Ctrl-C: %v (exit status %d), want exit status 0:\n%s", waitErr, exit.ExitCode(), out)
	default:
		t.Fatal(waitErr)
	}
	if !strings.Contains(out.String(), "3 of 3 games verified") || !strings.HasSuffix(strings.TrimRight(out.String(), "\r\n"), "stopped") {
		t.Errorf("the demo's output does not end with its count, the pages and \"stopped\":\n%s", out)
	}
}
