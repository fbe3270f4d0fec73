package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A Proc is a program run in a Host, which can be paused, killed and
// started again with the same command line.
type Proc struct {
	Name string
	Host *Host
	Path string
	Args []string
	Env  []string // added to the calling process's environment
	// OnLine, if not nil, is called with every line the program writes,
	// stream "out" or "err", from the Proc's goroutines.
	OnLine func(p *Proc, stream, line string)

	mu     sync.Mutex
	pid    int
	done   chan struct{}
	err    error
	tail   []string // the last lines written, for failure messages
	starts int
}

// tailLines is how many of its last lines a Proc keeps.
const tailLines = 200

// Start starts the program. It fails if it is running.
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done != nil {
		select {
		case <-p.done:
		default:
			return fmt.Errorf("%s: already running", p.Name)
		}
	}
	cmd := p.Host.Command(context.Background(), p.Path, p.Args...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	p.starts++
	p.pid = cmd.Process.Pid
	done := make(chan struct{})
	p.done = done
	var wg sync.WaitGroup
	for _, s := range []struct {
		name string
		r    io.Reader
	}{{"out", stdout}, {"err", stderr}} {
		wg.Go(func() {
			sc := bufio.NewScanner(s.r)
			sc.Buffer(make([]byte, 64<<10), 4<<20)
			for sc.Scan() {
				line := sc.Text()
				p.mu.Lock()
				p.tail = append(p.tail, line)
				if len(p.tail) > 2*tailLines {
					p.tail = append(p.tail[:0], p.tail[len(p.tail)-tailLines:]...)
				}
				p.mu.Unlock()
				if p.OnLine != nil {
					p.OnLine(p, s.name, line)
				}
			}
			io.Copy(io.Discard, s.r)
		})
	}
	go func() {
		wg.Wait()
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// Starts counts the times the program was started.
func (p *Proc) Starts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

// Running says whether the program has been started and has not ended.
func (p *Proc) Running() bool {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Done returns a channel closed when the current run ends (nil before the
// first Start).
func (p *Proc) Done() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// Err returns how the last run ended (nil while it runs).
func (p *Proc) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Signal sends sig to the running program.
func (p *Proc) Signal(sig syscall.Signal) error {
	if !p.Running() {
		return fmt.Errorf("%s: %w", p.Name, ErrNotRunning)
	}
	p.mu.Lock()
	pid := p.pid
	p.mu.Unlock()
	if err := syscall.Kill(pid, sig); err != nil {
		return fmt.Errorf("%s: %v: %w", p.Name, sig, err)
	}
	return nil
}

// Pause stops the program with SIGSTOP.
func (p *Proc) Pause() error { return p.Signal(syscall.SIGSTOP) }

// Resume continues it with SIGCONT.
func (p *Proc) Resume() error { return p.Signal(syscall.SIGCONT) }

// Kill kills the program with SIGKILL (kill -9) and waits for it to end.
// A program not running is left alone.
func (p *Proc) Kill() error {
	if !p.Running() {
		return nil
	}
	if err := p.Signal(syscall.SIGKILL); err != nil && p.Running() {
		return err
	}
	return p.Wait(30 * time.Second)
}

// Stop sends SIGTERM (after SIGCONT, in case it is paused) and waits up to
// d for the program to end, then kills it.
func (p *Proc) Stop(d time.Duration) error {
	if !p.Running() {
		return nil
	}
	p.Signal(syscall.SIGCONT)
	p.Signal(syscall.SIGTERM)
	if p.Wait(d) != nil {
		return p.Kill()
	}
	return nil
}

// Wait waits up to d for the current run to end.
func (p *Proc) Wait(d time.Duration) error {
	done := p.Done()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-time.After(d):
		return fmt.Errorf("%s: still running after %v", p.Name, d)
	}
}

// Tail returns the last lines the program wrote.
func (p *Proc) Tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tail
	if len(t) > tailLines {
		t = t[len(t)-tailLines:]
	}
	return strings.Join(t, "\n")
}

// ErrNotRunning is returned by a signal to a program that has ended.
var ErrNotRunning = errors.New("not running")
