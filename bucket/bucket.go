// Package bucket reads and writes the objects of one prefix of an
// S3-compatible bucket: what `zarlog serve --storage s3://BUCKET[/PREFIX]`
// keeps there (docs/OPERATIONS.md "Running two nodes"). It is a thin layer
// over the AWS SDK for Go v2 (github.com/aws/aws-sdk-go-v2/service/s3) that
// adds what the log needs and nothing else: whole-object GET and PUT, the
// conditional writes of S3 (If-None-Match: * to create an object only if it
// is absent, If-Match: ETAG to replace only the version read), and errors a
// caller branches on (ErrNotFound, ErrPrecondition, ErrNotModified).
//
// The endpoint, the credentials and the region come from the environment,
// the way every S3 tool takes them (the SDK's default chain):
// AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL), AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, or the shared
// config files. With an endpoint set (a versitygw, a MinIO, any S3 other
// than AWS's) requests are path-style (http://host/BUCKET/KEY).
//
// Mem is an in-memory Store with the same semantics, and hooks to inject
// faults, for unit tests; the tests that back the docs' promises run
// against a real S3 server (versitygw, internal/testonly).
package bucket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Errors a caller branches on with errors.Is.
var (
	// ErrNotFound: the object does not exist (HTTP 404).
	ErrNotFound = errors.New("no such object")
	// ErrPrecondition: a conditional write's condition failed (HTTP 412:
	// the object exists for If-None-Match, or has another ETag for
	// If-Match), or it raced another conditional write of the same key
	// (HTTP 409 ConditionalRequestConflict). Nothing was written.
	ErrPrecondition = errors.New("precondition failed")
	// ErrNotModified: a GET with IfNoneMatch found the object unchanged
	// (HTTP 304).
	ErrNotModified = errors.New("not modified")
)

// MaxObjectSize bounds what Get reads: no object of a log is larger (an
// entry bundle is at most 256 × 65,537 bytes; a page or a proof bundle is
// far smaller).
const MaxObjectSize = 64 << 20

// A Store holds objects by key. Keys are relative to the store's prefix.
// Implementations are safe for concurrent use; a Put is durable, as the
// store defines it, when it returns.
type Store interface {
	// Get returns the object's bytes and ETag. With ifNoneMatch not empty
	// it returns ErrNotModified if the object's ETag is still that one.
	// A missing object is ErrNotFound.
	Get(ctx context.Context, key, ifNoneMatch string) ([]byte, string, error)
	// Put writes the object whole and returns its new ETag; o's
	// conditions make it a compare-and-swap (ErrPrecondition).
	Put(ctx context.Context, key string, data []byte, o PutOptions) (string, error)
	// URL names the store's prefix: s3://BUCKET/PREFIX/ (or mem://…).
	URL() string
}

// PutOptions are the headers of a Put. The zero value writes
// unconditionally with no content type.
type PutOptions struct {
	// IfNoneMatch creates the object only if no object has its key
	// (If-None-Match: *).
	IfNoneMatch bool
	// IfMatch, if not empty, replaces the object only if its ETag is
	// still this one (If-Match).
	IfMatch string
	// ContentType and CacheControl are stored with the object and served
	// with it.
	ContentType  string
	CacheControl string
}

// A Bucket is one prefix of an S3 bucket, reached through the AWS SDK.
type Bucket struct {
	c      *s3.Client
	name   string
	prefix string // "" or ends in "/"
}

// ParseURL splits s3://BUCKET[/PREFIX] into the bucket's name and the
// prefix (without leading or trailing slashes).
func ParseURL(u string) (name, prefix string, err error) {
	rest, ok := strings.CutPrefix(u, "s3://")
	if !ok {
		return "", "", fmt.Errorf("bucket: %q is not an s3://BUCKET[/PREFIX] URL", u)
	}
	name, prefix, _ = strings.Cut(rest, "/")
	prefix = strings.Trim(prefix, "/")
	if name == "" || strings.ContainsAny(name, " \t\r\n?#") || strings.Contains(prefix, "//") || strings.ContainsAny(prefix, "?#\r\n") {
		return "", "", fmt.Errorf("bucket: %q is not an s3://BUCKET[/PREFIX] URL", u)
	}
	return name, prefix, nil
}

// Config configures Open beyond the environment. Every field may be zero.
type Config struct {
	// HTTPClient is the SDK's HTTP client. Nil means the SDK's default.
	HTTPClient *http.Client
	// Endpoint, if not empty, is the S3 endpoint, in place of the
	// environment's AWS_ENDPOINT_URL_S3 (tests).
	Endpoint string
}

// Open returns the Bucket of url (s3://BUCKET[/PREFIX]), configured from
// the environment (see the package doc). It does not touch the network.
func Open(ctx context.Context, url string, cfg Config) (*Bucket, error) {
	name, prefix, err := ParseURL(url)
	if err != nil {
		return nil, err
	}
	var opts []func(*config.LoadOptions) error
	if cfg.HTTPClient != nil {
		opts = append(opts, config.WithHTTPClient(cfg.HTTPClient))
	}
	// Checksums only where S3 requires them: S3-compatible servers differ
	// in which of the newer checksum headers they know.
	opts = append(opts,
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired))
	ac, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("bucket: loading the S3 configuration: %w", err)
	}
	if ac.Region == "" {
		// Most S3-compatible servers ignore the region but sign with one.
		ac.Region = "us-east-1"
	}
	custom := cfg.Endpoint != "" || os.Getenv("AWS_ENDPOINT_URL_S3") != "" || os.Getenv("AWS_ENDPOINT_URL") != ""
	c := s3.NewFromConfig(ac, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = custom
	})
	if prefix != "" {
		prefix += "/"
	}
	return &Bucket{c: c, name: name, prefix: prefix}, nil
}

// URL returns s3://BUCKET/PREFIX/.
func (b *Bucket) URL() string { return "s3://" + b.name + "/" + b.prefix }

// Get implements Store.
func (b *Bucket) Get(ctx context.Context, key, ifNoneMatch string) ([]byte, string, error) {
	in := &s3.GetObjectInput{Bucket: &b.name, Key: aws.String(b.prefix + key)}
	if ifNoneMatch != "" {
		in.IfNoneMatch = aws.String(ifNoneMatch)
	}
	out, err := b.c.GetObject(ctx, in)
	if err != nil {
		return nil, "", b.err("GET", key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(io.LimitReader(out.Body, MaxObjectSize+1))
	if err != nil {
		return nil, "", fmt.Errorf("bucket: GET %s: reading the body: %w", b.URL()+key, err)
	}
	if len(data) > MaxObjectSize {
		return nil, "", fmt.Errorf("bucket: GET %s: the object is larger than %d bytes", b.URL()+key, MaxObjectSize)
	}
	return data, aws.ToString(out.ETag), nil
}

// Put implements Store.
func (b *Bucket) Put(ctx context.Context, key string, data []byte, o PutOptions) (string, error) {
	in := &s3.PutObjectInput{Bucket: &b.name, Key: aws.String(b.prefix + key), Body: bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data)))}
	if o.IfNoneMatch {
		in.IfNoneMatch = aws.String("*")
	}
	if o.IfMatch != "" {
		in.IfMatch = aws.String(o.IfMatch)
	}
	if o.ContentType != "" {
		in.ContentType = aws.String(o.ContentType)
	}
	if o.CacheControl != "" {
		in.CacheControl = aws.String(o.CacheControl)
	}
	out, err := b.c.PutObject(ctx, in)
	if err != nil {
		return "", b.err("PUT", key, err)
	}
	return aws.ToString(out.ETag), nil
}

// err turns an SDK error into one wrapping this package's sentinels.
func (b *Bucket) err(op, key string, err error) error {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		switch re.HTTPStatusCode() {
		case http.StatusNotFound:
			return fmt.Errorf("bucket: %s %s: %w", op, b.URL()+key, ErrNotFound)
		case http.StatusPreconditionFailed, http.StatusConflict:
			return fmt.Errorf("bucket: %s %s: %w (HTTP %d)", op, b.URL()+key, ErrPrecondition, re.HTTPStatusCode())
		case http.StatusNotModified:
			return fmt.Errorf("bucket: %s %s: %w", op, b.URL()+key, ErrNotModified)
		}
	}
	return fmt.Errorf("bucket: %s %s: %w", op, b.URL()+key, err)
}
