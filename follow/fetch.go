package follow

// This file reads a tlog-tiles log over HTTP: one GET with a size limit,
// retried with exponential backoff on what may pass (network errors, 5xx,
// 408, 429), and the fallback from a partial tile that is gone to the full
// one (C2SP tlog-tiles lets a log delete partial tiles once the full tile
// exists).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/zarlog/zarlog/merkle"
)

// ErrFetch marks a resource that could not be fetched: a network error or an
// HTTP status other than 200 and 404 (a 404 wraps merkle.ErrNotFound), after
// the retries.
var ErrFetch = errors.New("fetch failed")

// ErrTooLarge marks a response larger than the format allows for what was
// asked (an entry bundle over 256 × (2 + 65,535) bytes, a hash tile over
// 8,192, a note over 64 KiB): a fault of the server, never tried again. It
// is refused as soon as its Content-Length says so, and otherwise after
// reading one byte more than the limit.
var ErrTooLarge = errors.New("response larger than the format allows")

// Limits of what is read from a log.
const (
	// maxBundleBytes is the largest entry bundle: 256 entries of 65,535
	// bytes with their length prefixes.
	maxBundleBytes = merkle.TileWidth * (2 + merkle.MaxEntrySize)
	maxTileBytes   = merkle.TileWidth * merkle.HashSize
)

// A Source reads one tlog-tiles log (or one checkpoint URL) over HTTP. Create
// it with NewSource; it is safe for concurrent use.
type Source struct {
	prefix   string // ends in "/"
	hc       *http.Client
	attempts int
	min, max time.Duration
	retried  func() // called for each retry (metrics); may be nil
	fetch    func(ctx context.Context, path string) ([]byte, error)
}

// SourceConfig configures a Source. Every field but URL may be zero.
type SourceConfig struct {
	// URL is the log's tlog-tiles prefix (for a witness or another mirror:
	// its monitoring prefix); "/checkpoint" and "/tile/…" are appended to it.
	URL string
	// Client is the HTTP client. Nil means one with a 60 s timeout.
	Client *http.Client
	// Attempts is how many times a request is tried. Zero means 6.
	Attempts int
	// RetryMin and RetryMax bound the backoff between attempts, which
	// doubles from RetryMin. Zero means 200 ms and 10 s.
	RetryMin, RetryMax time.Duration
	// Get, if not nil, reads a path under the prefix instead of an HTTP
	// GET (a log kept in object storage, read with the bucket's API: the
	// standby of package storage). It returns an error wrapping
	// merkle.ErrNotFound for a missing object; any other error is tried
	// again as a network error is. URL then only names the log in
	// messages, and may have any scheme.
	Get func(ctx context.Context, path string) ([]byte, error)
}

// NewSource returns a Source for cfg. It fails if the URL is not an http or
// https URL.
func NewSource(cfg SourceConfig) (*Source, error) {
	u := cfg.URL
	if cfg.Get == nil && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, fmt.Errorf("follow: source %q is not an http(s) URL", u)
	}
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	s := &Source{prefix: u, hc: cfg.Client, attempts: cfg.Attempts, min: cfg.RetryMin, max: cfg.RetryMax, fetch: cfg.Get}
	if s.hc == nil {
		s.hc = &http.Client{Timeout: 60 * time.Second}
	}
	if s.attempts <= 0 {
		s.attempts = 6
	}
	if s.min <= 0 {
		s.min = 200 * time.Millisecond
	}
	if s.max <= 0 {
		s.max = 10 * time.Second
	}
	return s, nil
}

// URL returns the URL of path under the source's prefix.
func (s *Source) URL(path string) string { return s.prefix + path }

// Checkpoint fetches the source's checkpoint note, unverified.
func (s *Source) Checkpoint(ctx context.Context) ([]byte, error) {
	return s.get(ctx, "checkpoint", merkle.MaxNoteSize)
}

// Get fetches path (relative to the prefix), at most limit bytes, trying
// again after errors that may pass. A 404 is an error wrapping
// merkle.ErrNotFound; other failures wrap ErrFetch.
func (s *Source) Get(ctx context.Context, path string, limit int) ([]byte, error) {
	return s.get(ctx, path, limit)
}

// get fetches path, trying again after errors that may pass.
func (s *Source) get(ctx context.Context, path string, limit int) ([]byte, error) {
	backoff := s.min
	for attempt := 1; ; attempt++ {
		b, retry, err := s.getOnce(ctx, path, limit)
		if err == nil {
			return b, nil
		}
		if !retry || attempt >= s.attempts || ctx.Err() != nil {
			if retry && ctx.Err() == nil {
				err = fmt.Errorf("%w (after %d attempts)", err, attempt)
			}
			return nil, err
		}
		if s.retried != nil {
			s.retried()
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, s.max)
	}
}

// getOnce makes one request and says whether a failure may pass.
func (s *Source) getOnce(ctx context.Context, path string, limit int) ([]byte, bool, error) {
	url := s.prefix + path
	if s.fetch != nil {
		b, err := s.fetch(ctx, path)
		switch {
		case errors.Is(err, merkle.ErrNotFound):
			return nil, false, fmt.Errorf("%s: %w", url, err)
		case err != nil:
			return nil, ctx.Err() == nil, fmt.Errorf("%w: %s: %w", ErrFetch, url, err)
		case len(b) > limit:
			return nil, false, fmt.Errorf("%w: %s is more than the %d bytes it may have", ErrTooLarge, url, limit)
		}
		return b, false, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, false, fmt.Errorf("%w: GET %s: %w", ErrFetch, url, err)
	}
	req.Header.Set("User-Agent", "zarlog-follow/1")
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, ctx.Err() == nil, fmt.Errorf("%w: GET %s: %w", ErrFetch, url, err)
	}
	defer resp.Body.Close()
	switch c := resp.StatusCode; {
	case c == http.StatusOK:
	case c == http.StatusNotFound:
		return nil, false, fmt.Errorf("GET %s: 404: %w", url, merkle.ErrNotFound)
	default:
		retry := c >= 500 || c == http.StatusTooManyRequests || c == http.StatusRequestTimeout
		return nil, retry, fmt.Errorf("%w: GET %s: %s", ErrFetch, url, resp.Status)
	}
	if resp.ContentLength > int64(limit) {
		return nil, false, fmt.Errorf("%w: GET %s: Content-Length %d is more than the %d bytes it may have", ErrTooLarge, url, resp.ContentLength, limit)
	}
	b, err := readBody(resp.Body, resp.ContentLength, limit)
	if errors.Is(err, ErrTooLarge) {
		return nil, false, fmt.Errorf("%w: GET %s: the body is more than the %d bytes it may have", ErrTooLarge, url, limit)
	}
	if err != nil {
		return nil, ctx.Err() == nil, fmt.Errorf("%w: GET %s: reading the body: %w", ErrFetch, url, err)
	}
	return b, false, nil
}

// readBody reads at most limit bytes of a body whose declared length is n
// (-1: unknown) into one buffer of that size, so that a large body is not
// copied through a growing buffer; it fails with ErrTooLarge if the body
// has more than limit bytes.
func readBody(r io.Reader, n int64, limit int) ([]byte, error) {
	if n < 0 {
		b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
		if err == nil && len(b) > limit {
			err = ErrTooLarge
		}
		return b, err
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	var one [1]byte
	if k, _ := r.Read(one[:]); k > 0 {
		return nil, ErrTooLarge // more than declared: the body is not what it said
	}
	return b, nil
}

// Bundle fetches entry bundle t and returns its entries, exactly t.Width of
// them. If a partial bundle is gone (404), the full bundle of the same index
// is fetched and its first t.Width entries are used.
func (s *Source) Bundle(ctx context.Context, t merkle.Tile) ([][]byte, int, error) {
	data, err := s.tile(ctx, t, maxBundleBytes)
	if err != nil {
		return nil, 0, err
	}
	entries, err := merkle.ParseBundle(data)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", s.URL(t.Path()), err)
	}
	if len(entries) != t.Width {
		return nil, 0, fmt.Errorf("%s has %d entries, want %d: %w", s.URL(t.Path()), len(entries), t.Width, merkle.ErrMalformed)
	}
	return entries, len(data), nil
}

// tile fetches a tile or bundle at exactly t.Width, falling back to the
// full one for a partial t that is gone.
func (s *Source) tile(ctx context.Context, t merkle.Tile, limit int) ([]byte, error) {
	data, err := s.get(ctx, t.Path(), limit)
	if errors.Is(err, merkle.ErrNotFound) && !t.IsFull() {
		full := t
		full.Width = merkle.TileWidth
		d, ferr := s.get(ctx, full.Path(), limit)
		if ferr != nil {
			return nil, errors.Join(err, ferr)
		}
		if t.IsEntries() {
			data, err = merkle.BundlePrefix(d, t.Width)
		} else {
			data, err = merkle.TilePrefix(d, t.Width)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.URL(full.Path()), err)
		}
	}
	return data, err
}

// ReadTiles implements merkle.TileReader over HTTP, fetching the tiles
// concurrently. A hash tile must be exactly its width.
func (s *Source) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	errs := make([]error, len(tiles))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, t := range tiles {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			limit := maxTileBytes
			if t.IsEntries() {
				limit = maxBundleBytes
			}
			d, err := s.tile(ctx, t, limit)
			if err == nil && !t.IsEntries() && len(d) != t.Width*merkle.HashSize {
				err = fmt.Errorf("%s is %d bytes, want %d: %w", s.URL(t.Path()), len(d), t.Width*merkle.HashSize, merkle.ErrMalformed)
			}
			out[i], errs[i] = d, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// A tileCache keeps the hash tiles a catch-up reads for its steps'
// consistency proofs, which mostly ask for the same few tiles again: at
// most n of them (8 KiB each), all dropped when it is full. What it holds
// is as unverified as the source's tiles; it only saves requests.
type tileCache struct {
	r  merkle.TileReader
	n  int
	mu sync.Mutex
	m  map[merkle.Tile][]byte
}

func newTileCache(r merkle.TileReader, n int) *tileCache {
	return &tileCache{r: r, n: n, m: map[merkle.Tile][]byte{}}
}

func (c *tileCache) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	var miss []merkle.Tile
	var at []int
	c.mu.Lock()
	for i, t := range tiles {
		if d, ok := c.m[t]; ok && !t.IsEntries() {
			out[i] = d
		} else {
			miss = append(miss, t)
			at = append(at, i)
		}
	}
	c.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	got, err := c.r.ReadTiles(ctx, miss)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for j, i := range at {
		out[i] = got[j]
		if !miss[j].IsEntries() {
			if len(c.m) >= c.n {
				clear(c.m)
			}
			c.m[miss[j]] = got[j]
		}
	}
	return out, nil
}
