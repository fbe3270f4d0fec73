package bucket_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zarlog/zarlog/bucket"
	"github.com/zarlog/zarlog/internal/testonly"
)

// TestConditionalWrites holds a real S3 server (versitygw) and Mem to the
// semantics the log's lock and its create-only tiles rely on: If-None-Match
// creates only, If-Match replaces only the version read, the ETag changes
// with the content (and only with it: the lock's content must change at
// every write), and a GET with the current ETag is not modified.
func TestConditionalWrites(t *testing.T) {
	srv := testonly.StartVersitygw(t, "zarlog-test")
	srv.Setenv(t)
	s3b, err := bucket.Open(context.Background(), "s3://zarlog-test/some/prefix", bucket.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s3b.URL(); got != "s3://zarlog-test/some/prefix/" {
		t.Fatalf("URL %q", got)
	}
	for _, c := range []struct {
		name  string
		store bucket.Store
	}{{"versitygw", s3b}, {"mem", bucket.NewMem()}} {
		t.Run(c.name, func(t *testing.T) { conditional(t, c.store) })
	}
}

func conditional(t *testing.T, s bucket.Store) {
	ctx := context.Background()
	if _, _, err := s.Get(ctx, "lock", ""); !errors.Is(err, bucket.ErrNotFound) {
		t.Fatalf("GET of a missing object: %v", err)
	}
	if _, err := s.Put(ctx, "lock", []byte("x"), bucket.PutOptions{IfMatch: `"0123"`}); err == nil {
		t.Fatal("If-Match on a missing object succeeded")
	}
	e1, err := s.Put(ctx, "lock", []byte("one"), bucket.PutOptions{IfNoneMatch: true, ContentType: "text/plain"})
	if err != nil || e1 == "" {
		t.Fatalf("create: %q, %v", e1, err)
	}
	if _, err := s.Put(ctx, "lock", []byte("other"), bucket.PutOptions{IfNoneMatch: true}); !errors.Is(err, bucket.ErrPrecondition) {
		t.Fatalf("a second create: %v", err)
	}
	if _, err := s.Put(ctx, "lock", []byte("other"), bucket.PutOptions{IfMatch: `"0123"`}); !errors.Is(err, bucket.ErrPrecondition) {
		t.Fatalf("If-Match with another ETag: %v", err)
	}
	e2, err := s.Put(ctx, "lock", []byte("two"), bucket.PutOptions{IfMatch: e1})
	if err != nil || e2 == e1 {
		t.Fatalf("If-Match with the ETag read: %q, %v", e2, err)
	}
	if _, err := s.Put(ctx, "lock", []byte("three"), bucket.PutOptions{IfMatch: e1}); !errors.Is(err, bucket.ErrPrecondition) {
		t.Fatalf("If-Match with a superseded ETag: %v", err)
	}
	d, e, err := s.Get(ctx, "lock", "")
	if err != nil || string(d) != "two" || e != e2 {
		t.Fatalf("GET: %q %q %v", d, e, err)
	}
	if _, _, err := s.Get(ctx, "lock", e2); !errors.Is(err, bucket.ErrNotModified) {
		t.Fatalf("GET If-None-Match the current ETag: %v", err)
	}
	if d, _, err := s.Get(ctx, "lock", e1); err != nil || string(d) != "two" {
		t.Fatalf("GET If-None-Match an old ETag: %q %v", d, err)
	}
	// The same bytes again keep the ETag: a write that must be seen
	// changes the content.
	if e3, err := s.Put(ctx, "lock", []byte("two"), bucket.PutOptions{IfMatch: e2}); err != nil || e3 != e2 {
		t.Fatalf("rewriting the same bytes: %q (was %q), %v", e3, e2, err)
	}
}

func TestParseURL(t *testing.T) {
	for _, c := range []struct{ in, name, prefix string }{
		{"s3://b", "b", ""}, {"s3://b/", "b", ""}, {"s3://b/p", "b", "p"}, {"s3://b/p/q/", "b", "p/q"},
	} {
		n, p, err := bucket.ParseURL(c.in)
		if err != nil || n != c.name || p != c.prefix {
			t.Errorf("%q: %q %q %v", c.in, n, p, err)
		}
	}
	for _, bad := range []string{"", "b", "http://b/p", "s3://", "s3:///p", "s3://b/p//q", "s3://b?x"} {
		if _, _, err := bucket.ParseURL(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
