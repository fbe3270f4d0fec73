package httpserve

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestListenCapsConnections: with max connections open, the next one is
// not accepted until one of them closes.
func TestListenCapsConnections(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := Listen(inner, 2)
	defer ln.Close()
	accepted := make(chan net.Conn, 3)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	a, b := <-accepted, <-accepted
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted while two were open")
	case <-time.After(100 * time.Millisecond):
	}
	a.Close()
	c := <-accepted // released by the close
	b.Close()
	c.Close()
	ln.Close()
	if _, ok := <-accepted; ok {
		t.Fatal("Accept after Close")
	}
}

// TestLimitBody: a declared body over the limit is refused with 413 before
// the handler runs; a body that grows past it fails the handler's read.
func TestLimitBody(t *testing.T) {
	ran := false
	h := LimitBody(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ran = true
		b := make([]byte, 100)
		n := 0
		for {
			k, err := r.Body.Read(b)
			n += k
			if err != nil {
				if strings.Contains(err.Error(), "too large") {
					w.WriteHeader(http.StatusRequestEntityTooLarge)
					return
				}
				break
			}
		}
		w.WriteHeader(http.StatusOK)
	}), 10)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", 11))))
	if w.Code != http.StatusRequestEntityTooLarge || ran || w.Header().Get("Connection") != "close" {
		t.Errorf("declared 11 bytes: %d, handler ran %v, Connection %q", w.Code, ran, w.Header().Get("Connection"))
	}
	r := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("x", 11)))
	r.ContentLength = -1 // chunked: not declared
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusRequestEntityTooLarge || !ran {
		t.Errorf("undeclared 11 bytes: %d, handler ran %v", w.Code, ran)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/", strings.NewReader("0123456789")))
	if w.Code != http.StatusOK {
		t.Errorf("10 bytes: %d", w.Code)
	}
}

// TestDefaults: every zero field gets its default, and the server carries
// them.
func TestDefaults(t *testing.T) {
	s := Server(http.NotFoundHandler(), Limits{}, nil)
	if s.ReadTimeout != DefaultReadTimeout || s.WriteTimeout != DefaultWriteTimeout || s.IdleTimeout != DefaultIdleTimeout ||
		s.ReadHeaderTimeout != DefaultReadHeaderTimeout || s.MaxHeaderBytes != DefaultMaxHeaderBytes {
		t.Errorf("server %+v", s)
	}
	l := Limits{ReadTimeout: time.Second}.WithDefaults()
	if l.ReadHeaderTimeout != time.Second {
		t.Errorf("a read timeout below the header timeout: header timeout %v", l.ReadHeaderTimeout)
	}
}
