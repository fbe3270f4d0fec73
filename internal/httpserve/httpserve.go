// Package httpserve bounds what an HTTP client can make a zarlog listener
// hold: every server it makes has read, write and idle timeouts, a limit on
// header and body bytes, and a cap on the connections open at once. The
// listeners of `zarlog serve` (public and admin), `zarlog mirror`, `zarlog
// audit` and `zarlog witness` are all made here, so that a slow client, or
// one that declares a body and never sends it, holds a connection (a
// goroutine and a file descriptor, which the process shares with NATS and
// Pebble) for at most Limits.ReadTimeout, and never more than MaxConns of
// them at once (docs/SECURITY.md, "Slow and never-finished requests").
package httpserve

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits bound one listener. Every field's zero value is its default.
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's headers. Zero means
	// 10 s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, its body included: a
	// client that declares a body and does not send it is disconnected
	// after it. Zero means 30 s.
	ReadTimeout time.Duration
	// WriteTimeout bounds writing a response, from the end of its request's
	// headers: it must let the largest response (an entry bundle of
	// 16.8 MB) reach a slow client. Zero means 2 min.
	WriteTimeout time.Duration
	// IdleTimeout bounds how long a kept-alive connection waits for its
	// next request. Zero means 2 min.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers. Zero means 16 KiB.
	MaxHeaderBytes int
	// MaxBodyBytes bounds a request's body: a request that declares more
	// is answered 413 at once and its connection closed; a body that grows
	// past it while it is read fails the read (http.MaxBytesError). Zero
	// means DefaultMaxBody.
	MaxBodyBytes int64
	// MaxConns bounds the connections the listener holds at once; more
	// wait in the kernel's accept queue. Zero means DefaultMaxConns.
	MaxConns int
}

// Defaults of Limits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 2 * time.Minute
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxHeaderBytes    = 16 << 10
	// DefaultMaxBody is the body limit of a listener whose routes take no
	// body (zarlog's read APIs are GET only).
	DefaultMaxBody = 64 << 10
	// DefaultMaxConns is a share of a process's usual 65,536 descriptors
	// that leaves most of them to NATS and Pebble.
	DefaultMaxConns = 4096
)

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = DefaultReadTimeout
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = DefaultWriteTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = DefaultMaxBody
	}
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	l.ReadHeaderTimeout = min(l.ReadHeaderTimeout, l.ReadTimeout)
	return l
}

// Server returns an http.Server for h with the limits l (defaults for the
// zero fields), logging its own errors to errorLog (nil: the standard
// logger). Serve it on a listener from Listen.
func Server(h http.Handler, l Limits, errorLog *log.Logger) *http.Server {
	l = l.WithDefaults()
	return &http.Server{
		Handler:           LimitBody(h, l.MaxBodyBytes),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ErrorLog:          errorLog,
	}
}

// LimitBody answers 413, and closes the connection, for a request that
// declares a body larger than max, and limits the body of every other
// request to max bytes.
func LimitBody(h http.Handler, max int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			w.Header().Set("Connection", "close")
			http.Error(w, fmt.Sprintf("request body of %d bytes: the limit is %d", r.ContentLength, max), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, max)
		h.ServeHTTP(w, r)
	})
}

// Listen wraps ln so that it holds at most max connections at once (zero:
// DefaultMaxConns): Accept waits while max are open.
func Listen(ln net.Listener, max int) net.Listener {
	if max <= 0 {
		max = DefaultMaxConns
	}
	return &limitListener{Listener: ln, sem: make(chan struct{}, max), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
