package testonly

// This file is the test of a listener's limits (internal/httpserve) that
// every zarlog HTTP server runs against itself: slow and never-finished
// requests are closed by the server, and an honest request is served
// meanwhile.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// A SlowClient is one kind of request that never finishes.
type SlowClient struct {
	Name string
	// Request is what the client sends, and then nothing more (or one
	// byte of Trickle every Every).
	Request string
	Trickle bool
}

// SlowClients are the requests SlowClientsClosed sends n of each: headers
// never finished, a body declared (200,000 bytes, over the default body
// limit; 1,000 bytes, within it) and never sent, and a body sent one byte
// at a time.
func SlowClients(path string) []SlowClient {
	return []SlowClient{
		{Name: "headers never finished", Request: "GET " + path + " HTTP/1.1\r\nHost: zarlog\r\nX-Slow: "},
		{Name: "200000-byte body never sent", Request: "POST " + path + " HTTP/1.1\r\nHost: zarlog\r\nContent-Length: 200000\r\n\r\n"},
		{Name: "1000-byte body never sent", Request: "POST " + path + " HTTP/1.1\r\nHost: zarlog\r\nContent-Length: 1000\r\n\r\n"},
		{Name: "body trickled", Request: "POST " + path + " HTTP/1.1\r\nHost: zarlog\r\nContent-Length: 1000\r\n\r\n", Trickle: true},
	}
}

// SlowClientsClosed opens n connections of each SlowClients kind to addr
// (host:port) for path, checks that an honest GET of honest (with header)
// is answered 200 while they are
// open, and returns an error unless the server closes every one of them
// before patience passes (the test's own bound, far beyond the listener's
// read timeout: a server that never closes them fails, however slow the
// machine). It says, for each kind, what the server answered before it
// closed them.
func SlowClientsClosed(addr, path, honest string, header http.Header, n int, trickleEvery, patience time.Duration) (string, error) {
	var report []string
	for _, kind := range SlowClients(path) {
		conns := make([]net.Conn, 0, n)
		closeAll := func() {
			for _, c := range conns {
				c.Close()
			}
		}
		for range n {
			c, err := net.DialTimeout("tcp", addr, patience)
			if err != nil {
				closeAll()
				return "", fmt.Errorf("%s: dialing %s: %w", kind.Name, addr, err)
			}
			if _, err := io.WriteString(c, kind.Request); err != nil {
				c.Close()
				closeAll()
				return "", fmt.Errorf("%s: writing: %w", kind.Name, err)
			}
			conns = append(conns, c)
		}
		// An honest request is served while they are open.
		hc := &http.Client{Timeout: patience}
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+honest, nil)
		if err != nil {
			closeAll()
			return "", err
		}
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := hc.Do(req)
		if err != nil {
			closeAll()
			return "", fmt.Errorf("%s: an honest GET %s while %d slow clients are open: %w", kind.Name, honest, n, err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			closeAll()
			return "", fmt.Errorf("%s: an honest GET %s while %d slow clients are open: %s: %q", kind.Name, honest, n, resp.Status, body)
		}
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			answers = map[string]int{}
			errs    []error
		)
		deadline := time.Now().Add(patience)
		for i, c := range conns {
			wg.Go(func() {
				status, err := waitClosed(c, kind, trickleEvery, deadline)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					errs = append(errs, fmt.Errorf("%s: connection %d: %w", kind.Name, i, err))
				case status != "":
					answers["answered "+strings.TrimPrefix(strings.TrimPrefix(status, "HTTP/1.1 "), "HTTP/1.0 ")+", then closed"]++
				default:
					answers["closed unanswered"]++
				}
			})
		}
		wg.Wait()
		closeAll()
		if err := errors.Join(errs...); err != nil {
			return "", err
		}
		var parts []string
		for a, k := range answers {
			parts = append(parts, fmt.Sprintf("%d %s", k, a))
		}
		slices.Sort(parts)
		report = append(report, kind.Name+": "+strings.Join(parts, ", "))
	}
	return strings.Join(report, "; "), nil
}

// waitClosed reads from c until the server closes it, trickling a byte of
// body every trickleEvery if the kind says so. It returns the status line
// the server answered with, if any; an error if deadline passes first.
func waitClosed(c net.Conn, kind SlowClient, trickleEvery time.Duration, deadline time.Time) (string, error) {
	stop := make(chan struct{})
	defer close(stop)
	if kind.Trickle {
		go func() {
			t := time.NewTicker(trickleEvery)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					if _, err := c.Write([]byte{'x'}); err != nil {
						return
					}
				}
			}
		}()
	}
	c.SetReadDeadline(deadline)
	r := bufio.NewReader(c)
	status := ""
	for {
		line, err := r.ReadString('\n')
		if status == "" && strings.HasPrefix(line, "HTTP/") {
			status = strings.TrimSpace(line)
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return "", fmt.Errorf("still open when the test's patience ran out (answered %q)", status)
			}
			return status, nil // closed by the server (EOF or reset)
		}
	}
}
