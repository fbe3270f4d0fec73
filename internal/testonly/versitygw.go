package testonly

// This file starts a real S3 server for tests: versitygw
// (github.com/versity/versitygw, Apache-2.0), pinned at VersitygwVersion,
// serving a temporary directory (its posix backend) on loopback, with
// conditional writes (If-Match, If-None-Match) as AWS S3 has them. The
// binary is built once from the Go module proxy into the user's cache
// (`go install github.com/versity/versitygw/cmd/versitygw@v1.8.0`, about a
// minute), under a file lock so that test processes running at once build
// it once; ZARLOG_VERSITYGW names a binary to use instead. .ci/deps builds
// it before the tests.

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// VersitygwVersion is the versitygw the tests run.
const VersitygwVersion = "v1.8.0"

// An S3Server is a running versitygw.
type S3Server struct {
	// Endpoint is its URL (http://127.0.0.1:PORT), AccessKey and SecretKey
	// its root credentials, Root the directory it serves: a bucket is a
	// directory in it.
	Endpoint, AccessKey, SecretKey, Root string

	cmd  *exec.Cmd
	done chan struct{}
	log  lockedBuffer
}

// A lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Reset()
}

var versitygwOnce struct {
	sync.Mutex
	path string
}

// VersitygwBinary returns the path of the pinned versitygw, building it
// first if needed.
func VersitygwBinary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("ZARLOG_VERSITYGW"); p != "" {
		return p
	}
	versitygwOnce.Lock()
	defer versitygwOnce.Unlock()
	if versitygwOnce.path != "" {
		return versitygwOnce.path
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("versitygw: %v", err)
	}
	dir := filepath.Join(cache, "zarlog-tools", "versitygw-"+VersitygwVersion)
	bin := filepath.Join(dir, "versitygw")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("versitygw: %v", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatalf("versitygw: %v", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("versitygw: locking %s: %v", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(bin); err != nil {
		t.Logf("building versitygw %s into %s (once; about a minute)", VersitygwVersion, dir)
		goTool, err := exec.LookPath("go")
		if err != nil {
			t.Fatalf("versitygw: the go command is needed to build it: %v", err)
		}
		cmd := exec.Command(goTool, "install", "github.com/versity/versitygw/cmd/versitygw@"+VersitygwVersion)
		cmd.Dir = dir // outside any module
		cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-buildvcs=false", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("versitygw: go install: %v\n%s", err, out)
		}
	}
	versitygwOnce.path = bin
	return bin
}

// StartVersitygw starts a versitygw serving a fresh temporary directory
// on loopback, with the given buckets, and stops it when the test ends.
func StartVersitygw(t testing.TB, buckets ...string) *S3Server {
	t.Helper()
	bin := VersitygwBinary(t)
	s := &S3Server{AccessKey: "zarlog-" + rand.Text()[:8], SecretKey: rand.Text(), Root: t.TempDir(), done: make(chan struct{})}
	for _, b := range buckets {
		s.MakeBucket(t, b)
	}
	for attempt := 0; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		s.Endpoint = "http://" + addr
		s.log.Reset()
		s.cmd = exec.Command(bin, "--port", addr, "--quiet", "posix", s.Root)
		s.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+s.AccessKey, "ROOT_SECRET_KEY="+s.SecretKey)
		s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
		if err := s.cmd.Start(); err != nil {
			t.Fatalf("starting versitygw: %v", err)
		}
		s.done = make(chan struct{})
		go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(s.cmd, s.done)
		if s.waitReady(addr) {
			break
		}
		s.cmd.Process.Kill()
		<-s.done
		if attempt == 3 {
			t.Fatalf("versitygw did not start on %s:\n%s", addr, s.log.String())
		}
	}
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
	})
	return s
}

// waitReady waits until the server answers HTTP, or exits.
func (s *S3Server) waitReady(addr string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for d := 5 * time.Millisecond; ; d = min(2*d, 200*time.Millisecond) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			return true
		}
		select {
		case <-s.done:
			return false
		case <-ctx.Done():
			return false
		case <-time.After(d):
		}
	}
}

// MakeBucket creates a bucket (a directory of the posix backend).
func (s *S3Server) MakeBucket(t testing.TB, name string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(s.Root, name), 0o755); err != nil {
		t.Fatalf("versitygw: bucket %s: %v", name, err)
	}
}

// Env returns the environment an S3 client takes the server from.
func (s *S3Server) Env() []string {
	return []string{"AWS_ENDPOINT_URL_S3=" + s.Endpoint, "AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey, "AWS_REGION=us-east-1"}
}

// Setenv sets Env for the rest of the test (t.Setenv: not in parallel
// tests).
func (s *S3Server) Setenv(t testing.TB) {
	t.Helper()
	for _, kv := range s.Env() {
		k, v, _ := bytes.Cut([]byte(kv), []byte("="))
		t.Setenv(string(k), string(v))
	}
}

// Log returns what the server printed.
func (s *S3Server) Log() string { return s.log.String() }

// String names the server.
func (s *S3Server) String() string {
	return fmt.Sprintf("versitygw %s at %s", VersitygwVersion, s.Endpoint)
}

// PublicURL makes bucket readable by anyone, as a public log's bucket is
// (a bucket policy allowing s3:GetObject to every principal, set through
// the S3 API), and returns the bucket's HTTP base URL, ending in "/":
// what a reader, a CDN or tessera's client fetches the objects from,
// without credentials.
func (s *S3Server) PublicURL(t testing.TB, bucket string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, "")})
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::%s/*"]}]}`, bucket)
	if _, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(policy)}); err != nil {
		t.Fatalf("versitygw: making bucket %s public: %v", bucket, err)
	}
	return s.Endpoint + "/" + bucket + "/"
}
