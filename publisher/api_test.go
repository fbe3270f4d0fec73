package publisher

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/merkle"
)

// apiLog is a memLog served through the read API: its checkpoint is the
// one last signed, and its tiles may run ahead of it as the ledger's do.
type apiLog struct {
	*memLog
	note []byte
}

func (l *apiLog) Checkpoint(ctx context.Context) ([]byte, error) {
	if l.note == nil {
		return nil, fmt.Errorf("none: %w", merkle.ErrNotFound)
	}
	return l.note, nil
}

func (l *apiLog) sign(t testing.TB) []byte {
	l.note = l.checkpoint(t)
	return l.note
}

// fillerLeaf is leaf i of a test log.
func fillerLeaf(i int) []byte { return []byte(fmt.Sprintf("leaf %d of the API test log", i)) }

// naiveRoot is the RFC 6962 Merkle tree hash of leaves, computed
// recursively from the definition (an oracle independent of package
// merkle's tiles).
func naiveRoot(leaves [][]byte) merkle.Hash {
	switch len(leaves) {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return sha256.Sum256(append([]byte{0}, leaves[0]...))
	}
	k := 1
	for k*2 < len(leaves) {
		k *= 2
	}
	l, r := naiveRoot(leaves[:k]), naiveRoot(leaves[k:])
	return sha256.Sum256(append(append([]byte{1}, l[:]...), r[:]...))
}

func newAPIServer(t testing.TB, cfg APIConfig) *httptest.Server {
	t.Helper()
	api, err := NewAPI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.Register(mux)
	srv := httptest.NewServer(CORS(mux))
	t.Cleanup(srv.Close)
	return srv
}

// TestTesseraClient serves logs of sizes around the tile boundaries through
// the API and reads them with github.com/transparency-dev/tessera/client:
// the checkpoint verifies, every entry bundle holds the leaves, the
// inclusion proof of every leaf built from our tiles verifies, and so do
// consistency proofs from earlier checkpoints whose roots are computed
// independently. The stored tiles run ahead of the checkpoint, as the
// ledger's do.
func TestTesseraClient(t *testing.T) {
	sizes := []int{1, 2, 255, 256, 257, 511, 513, 1000}
	if !testing.Short() {
		sizes = append(sizes, 256*256+300)
	}
	for _, size := range sizes {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			ctx := context.Background()
			l := &apiLog{memLog: newMemLog(t)}
			leaves := make([][]byte, size+10)
			for i := range leaves {
				leaves[i] = fillerLeaf(i)
			}
			l.append(t, leaves[:size]...)
			l.sign(t)
			l.append(t, leaves[size:]...) // durable, not yet signed
			var earlier [][]byte
			for _, m := range []int{1, size / 3, size - 1, size} {
				if m < 1 || m > size {
					continue
				}
				n, err := merkle.Sign(merkle.Checkpoint{Origin: testOrigin, Size: uint64(m), Hash: naiveRoot(leaves[:m])}, l.signer)
				if err != nil {
					t.Fatal(err)
				}
				earlier = append(earlier, n)
			}
			srv := newAPIServer(t, APIConfig{Log: l})
			got, err := testonly.Fetch(ctx, srv.URL+"/", srv.Client(), l.vkey, earlier...)
			if err != nil {
				t.Fatal(err)
			}
			if got.Checkpoint.Size != uint64(size) || [32]byte(got.Checkpoint.Hash) != naiveRoot(leaves[:size]) {
				t.Fatalf("checkpoint size %d root %x, want %d %x", got.Checkpoint.Size, got.Checkpoint.Hash, size, naiveRoot(leaves[:size]))
			}
			if len(got.Entries) != size {
				t.Fatalf("%d entries, want %d", len(got.Entries), size)
			}
			for i, e := range got.Entries {
				if !bytes.Equal(e, leaves[i]) {
					t.Fatalf("entry %d is %q, want %q", i, e, leaves[i])
				}
			}
		})
	}
}

// TestAPI checks every response of the read API: status, content type,
// caching, CORS, compression and the bytes, for good and bad paths.
func TestAPI(t *testing.T) {
	ctx := context.Background()
	signer, _ := testKey(t, testEmitter)
	l := &apiLog{memLog: newMemLog(t)}
	games := l.interleave(t, fillerLeaf, 2, tavlarenaGame(t, signer, "api", 6))
	for l.builder.Size() < 300 {
		l.append(t, fillerLeaf(int(l.builder.Size())))
	}
	note := l.sign(t)
	for l.builder.Size() < 310 {
		l.append(t, fillerLeaf(int(l.builder.Size())))
	}
	bundle, err := BuildBundle(ctx, l, games[0], note)
	if err != nil {
		t.Fatal(err)
	}
	proofs, err := TlogProofs(bundle)
	if err != nil {
		t.Fatal(err)
	}
	gameID := gameIDOf(t, games[0][0].Leaf)
	src := mapGames{gameID: {Status: GameFinished, Bundle: bundle}, "in-play": {Status: GameInPlay, Events: [][]byte{games[0][0].Leaf}}}
	unhealthy := errors.New("the ledger stopped")
	healthy := true
	reg := prometheus.NewRegistry()
	srv := newAPIServer(t, APIConfig{Log: l, Games: src, Metrics: reg, Registerer: reg,
		Health: func(context.Context) error {
			if healthy {
				return nil
			}
			return unhealthy
		}})

	tile := func(level int, index uint64, width int) []byte {
		d, err := l.ReadTiles(ctx, []merkle.Tile{{Level: level, Index: index, Width: width}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := TileAtWidth(merkle.Tile{Level: level, Index: index, Width: width}, d[0])
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	type want struct {
		code     int
		ctype    string
		cache    string
		encoding string
		body     []byte
	}
	notFound := want{code: 404, cache: "no-store"}
	for _, tc := range []struct {
		name, method, path string
		gzip               bool
		want               want
	}{
		{"checkpoint", "GET", "/checkpoint", false, want{200, ContentTypeCheckpoint, CacheCheckpoint, "", note}},
		{"checkpoint head", "HEAD", "/checkpoint", false, want{200, ContentTypeCheckpoint, CacheCheckpoint, "", nil}},
		{"full tile", "GET", "/tile/0/000", false, want{200, ContentTypeTile, CacheImmutable, "", tile(0, 0, 256)}},
		{"partial tile", "GET", "/tile/0/001.p/44", false, want{200, ContentTypeTile, CachePartial, "", tile(0, 1, 44)}},
		{"narrower partial tile", "GET", "/tile/0/001.p/1", false, want{200, ContentTypeTile, CachePartial, "", tile(0, 1, 1)}},
		{"partial tile ahead of the checkpoint", "GET", "/tile/0/001.p/54", false, want{200, ContentTypeTile, CachePartial, "", tile(0, 1, 54)}},
		{"partial tile wider than stored", "GET", "/tile/0/001.p/55", false, notFound},
		{"full tile not yet full", "GET", "/tile/0/001", false, notFound},
		{"level 1", "GET", "/tile/1/000.p/1", false, want{200, ContentTypeTile, CachePartial, "", tile(1, 0, 1)}},
		{"no such level", "GET", "/tile/2/000.p/1", false, notFound},
		{"entries", "GET", "/tile/entries/000", false, want{200, ContentTypeTile, CacheImmutable, "", tile(-1, 0, 256)}},
		{"entries gzip", "GET", "/tile/entries/000", true, want{200, ContentTypeTile, CacheImmutable, "gzip", tile(-1, 0, 256)}},
		{"entries gzip again (cached)", "GET", "/tile/entries/000", true, want{200, ContentTypeTile, CacheImmutable, "gzip", tile(-1, 0, 256)}},
		{"partial entries gzip", "GET", "/tile/entries/001.p/44", true, want{200, ContentTypeTile, CachePartial, "gzip", tile(-1, 1, 44)}},
		{"partial entries", "GET", "/tile/entries/001.p/44", false, want{200, ContentTypeTile, CachePartial, "", tile(-1, 1, 44)}},
		{"entries wider than stored", "GET", "/tile/entries/001.p/55", false, notFound},
		{"index not in 3 digits", "GET", "/tile/0/0", false, notFound},
		{"level with a leading zero", "GET", "/tile/00/000", false, notFound},
		{"width 0", "GET", "/tile/0/001.p/0", false, notFound},
		{"width with a leading zero", "GET", "/tile/0/001.p/044", false, notFound},
		{"width 256", "GET", "/tile/0/000.p/256", false, notFound},
		{"leading x000 group", "GET", "/tile/0/x000/000", false, notFound},
		{"escaped digits", "GET", "/tile/0/%30%30%30", false, notFound},
		{"level 64", "GET", "/tile/64/000", false, notFound},
		{"tile root", "GET", "/tile/", false, notFound},
		{"trailing slash", "GET", "/tile/0/000/", false, notFound},
		{"entries without index", "GET", "/tile/entries/", false, notFound},
		{"post", "POST", "/checkpoint", false, want{code: 405}},
		{"tlog-proof 0", "GET", "/games/" + gameID + "/proofs/0.tlog-proof", false, want{200, ContentTypeTlogProof, CacheBundle, "", proofs[0]}},
		{"tlog-proof last", "GET", fmt.Sprintf("/games/%s/proofs/%d.tlog-proof", gameID, len(proofs)-1), false, want{200, ContentTypeTlogProof, CacheBundle, "", proofs[len(proofs)-1]}},
		{"tlog-proof beyond", "GET", fmt.Sprintf("/games/%s/proofs/%d.tlog-proof", gameID, len(proofs)), false, notFound},
		{"tlog-proof leading zero", "GET", "/games/" + gameID + "/proofs/00.tlog-proof", false, notFound},
		{"tlog-proof no seq", "GET", "/games/" + gameID + "/proofs/.tlog-proof", false, notFound},
		{"tlog-proof other suffix", "GET", "/games/" + gameID + "/proofs/0.json", false, notFound},
		{"tlog-proof game in play", "GET", "/games/in-play/proofs/0.tlog-proof", false, notFound},
		{"tlog-proof no game", "GET", "/games/nope/proofs/0.tlog-proof", false, notFound},
		{"tlog-proof bad game id", "GET", "/games/.x/proofs/0.tlog-proof", false, notFound},
		{"healthz", "GET", "/healthz", false, want{200, "text/plain; charset=utf-8", "no-store", "", []byte("ok\n")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.gzip {
				req.Header.Set("Accept-Encoding", "gzip")
			} else {
				req.Header.Set("Accept-Encoding", "identity")
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.want.code {
				t.Fatalf("status %d, want %d (%s)", resp.StatusCode, tc.want.code, body)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" {
				t.Errorf("Access-Control-Allow-Origin %q", got)
			}
			if tc.want.code != 200 {
				if tc.want.cache != "" && resp.Header.Get("Cache-Control") != tc.want.cache {
					t.Errorf("Cache-Control %q, want %q", resp.Header.Get("Cache-Control"), tc.want.cache)
				}
				return
			}
			for h, w := range map[string]string{"Content-Type": tc.want.ctype, "Cache-Control": tc.want.cache, "Content-Encoding": tc.want.encoding} {
				if got := resp.Header.Get(h); got != w {
					t.Errorf("%s %q, want %q", h, got, w)
				}
			}
			if strings.HasPrefix(tc.path, "/tile/entries/") && resp.Header.Get("Vary") != "Accept-Encoding" {
				t.Errorf("entries without Vary: Accept-Encoding")
			}
			if tc.want.encoding == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if tc.method == "HEAD" {
				if len(body) != 0 {
					t.Errorf("HEAD returned %d bytes", len(body))
				}
				return
			}
			if !bytes.Equal(body, tc.want.body) {
				t.Errorf("body of %d bytes differs from the %d expected", len(body), len(tc.want.body))
			}
		})
	}

	// A tlog-proof served verifies with the log's key, for the leaf it holds.
	p, err := merkle.ParseTlogProof(proofs[2])
	if err != nil {
		t.Fatal(err)
	}
	v, err := merkle.NewVerifier(l.vkey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := merkle.CheckTlogProof(p, merkle.LeafHash(games[0][2].Leaf), v); err != nil {
		t.Errorf("served tlog-proof: %v", err)
	}

	t.Run("preflight", func(t *testing.T) {
		req, _ := http.NewRequest("OPTIONS", srv.URL+"/tile/entries/000", nil)
		req.Header.Set("Origin", "https://auditor.example")
		req.Header.Set("Access-Control-Request-Method", "GET")
		req.Header.Set("Access-Control-Request-Headers", "accept-encoding")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Methods") != "GET, HEAD" ||
			resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Access-Control-Allow-Headers") != "accept-encoding" {
			t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
		}
	})
	t.Run("unhealthy", func(t *testing.T) {
		healthy = false
		defer func() { healthy = true }()
		code, body := apiGet(t, srv, "/healthz")
		if code != 503 || !strings.Contains(body, unhealthy.Error()) {
			t.Errorf("healthz: %d %q", code, body)
		}
	})
	t.Run("metrics", func(t *testing.T) {
		code, body := apiGet(t, srv, "/metrics")
		if code != 200 || !strings.Contains(body, `zarlog_http_log_requests_total{code="200",resource="entries"}`) ||
			!strings.Contains(body, `zarlog_http_log_requests_total{code="404",resource="tile"}`) {
			t.Errorf("metrics: %d\n%s", code, body)
		}
	})
	t.Run("no checkpoint", func(t *testing.T) {
		srv := newAPIServer(t, APIConfig{Log: &apiLog{memLog: newMemLog(t)}})
		if code, _ := apiGet(t, srv, "/checkpoint"); code != 404 {
			t.Errorf("checkpoint of a log without one: %d", code)
		}
		if code, _ := apiGet(t, srv, "/tile/0/000.p/1"); code != 404 {
			t.Errorf("a tile of an empty log: %d", code)
		}
		if code, _ := apiGet(t, srv, "/metrics"); code != 404 {
			t.Errorf("/metrics without a registry: %d", code)
		}
	})
}

func apiGet(t testing.TB, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// mapGames is a GameSource over a map.
type mapGames map[string]Game

func (m mapGames) Game(ctx context.Context, id string) (Game, error) {
	g, ok := m[id]
	if !ok {
		return Game{}, fmt.Errorf("%s: %w", id, ErrNoGame)
	}
	return g, nil
}

func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"GZIP", true},
		{"identity", false},
		{"deflate, gzip;q=1.0, *;q=0.5", true},
		{"gzip;q=0", false},
		{"gzip; q=0", false},
		{"gzip;q=0.001", true},
		{"*", true},
		{"br, zstd", false},
		{"xgzip", false},
	} {
		h := http.Header{}
		if tc.header != "" {
			h.Set("Accept-Encoding", tc.header)
		}
		if got := acceptsGzip(h); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %t, want %t", tc.header, got, tc.want)
		}
	}
}

func TestTileAtWidth(t *testing.T) {
	hashes := bytes.Repeat([]byte{7}, 10*merkle.HashSize)
	bundle, err := merkle.FormatBundle([][]byte{[]byte("a"), {}, []byte("ccc")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		t    merkle.Tile
		data []byte
		want []byte
		err  error
	}{
		{"hash prefix", merkle.Tile{Level: 0, Width: 3}, hashes, hashes[:3*32], nil},
		{"hash exact", merkle.Tile{Level: 2, Width: 10}, hashes, hashes, nil},
		{"hash narrower", merkle.Tile{Level: 0, Width: 11}, hashes, nil, merkle.ErrNotFound},
		{"hash ragged", merkle.Tile{Level: 0, Width: 1}, hashes[:40], nil, merkle.ErrMalformed},
		{"hash too wide", merkle.Tile{Level: 0, Width: 1}, make([]byte, 257*32), nil, merkle.ErrMalformed},
		{"bundle prefix", merkle.Tile{Level: -1, Width: 2}, bundle, bundle[:3+2], nil},
		{"bundle exact", merkle.Tile{Level: -1, Width: 3}, bundle, bundle, nil},
		{"bundle narrower", merkle.Tile{Level: -1, Width: 4}, bundle, nil, merkle.ErrNotFound},
		{"bundle cut in a length", merkle.Tile{Level: -1, Width: 3}, bundle[:len(bundle)-4], nil, merkle.ErrMalformed},
		{"bundle cut in an entry", merkle.Tile{Level: -1, Width: 3}, bundle[:len(bundle)-1], nil, merkle.ErrMalformed},
	} {
		got, err := TileAtWidth(tc.t, tc.data)
		if !errors.Is(err, tc.err) || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: %x, %v; want %x, %v", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// gameIDOf returns the game id of an event leaf.
func gameIDOf(t testing.TB, leaf []byte) string {
	t.Helper()
	ev, err := events.Parse(leaf)
	if err != nil {
		t.Fatal(err)
	}
	return ev.Game
}

// FuzzTileAtWidth: any stored bytes and any width never panic; a result is
// a prefix of the stored bytes with exactly the asked width.
func FuzzTileAtWidth(f *testing.F) {
	bundle, _ := merkle.FormatBundle([][]byte{[]byte("a"), {}, []byte("ccc")})
	f.Add(true, 2, bundle)
	f.Add(false, 1, bytes.Repeat([]byte{1}, 64))
	f.Add(true, 1, []byte{0})
	f.Fuzz(func(t *testing.T, entries bool, width int, data []byte) {
		if width < 1 || width > merkle.TileWidth {
			return
		}
		tile := merkle.Tile{Level: 0, Width: width}
		if entries {
			tile.Level = merkle.EntriesLevel
		}
		got, err := TileAtWidth(tile, data)
		if err != nil {
			if !errors.Is(err, merkle.ErrNotFound) && !errors.Is(err, merkle.ErrMalformed) {
				t.Fatalf("error %v wraps neither ErrNotFound nor ErrMalformed", err)
			}
			return
		}
		if !bytes.HasPrefix(data, got) {
			t.Fatal("the result is not a prefix of the stored tile")
		}
		if entries {
			es, err := merkle.ParseBundle(got)
			if err != nil || len(es) != width {
				t.Fatalf("the result is a bundle of %d entries (%v), want %d", len(es), err, width)
			}
		} else if len(got) != width*merkle.HashSize {
			t.Fatalf("%d bytes for width %d", len(got), width)
		}
	})
}

// FuzzParseProofFile: a name that parses is the canonical spelling of its
// number.
func FuzzParseProofFile(f *testing.F) {
	for _, s := range []string{"0.tlog-proof", "17.tlog-proof", "01.tlog-proof", ".tlog-proof", "x.tlog-proof", "18446744073709551615.tlog-proof"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		n, ok := parseProofFile(name)
		if ok && fmt.Sprintf("%d.tlog-proof", n) != name {
			t.Fatalf("%q parsed as %d", name, n)
		}
	})
}

// FuzzAcceptsGzip never panics.
func FuzzAcceptsGzip(f *testing.F) {
	f.Add("gzip;q=0.5, br")
	f.Add(";;,q=")
	f.Fuzz(func(t *testing.T, v string) {
		acceptsGzip(http.Header{"Accept-Encoding": {v}})
	})
}

// TestInstrument counts and times requests by the route that answered and
// their status, for the pages and the API alike.
func TestInstrument(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /games/{id}", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("page")) })
	mux.HandleFunc("GET /checkpoint", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "none yet", http.StatusServiceUnavailable) })
	reg := prometheus.NewRegistry()
	h, err := Instrument(mux, reg, "public")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/games/a", "/games/b", "/checkpoint", "/nothing"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	want := `
# HELP zarlog_http_requests_total HTTP requests by route (the pattern that answered) and status.
# TYPE zarlog_http_requests_total counter
zarlog_http_requests_total{code="200",listener="public",route="GET /games/{id}"} 2
zarlog_http_requests_total{code="404",listener="public",route="none"} 1
zarlog_http_requests_total{code="503",listener="public",route="GET /checkpoint"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "zarlog_http_requests_total"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(reg, "zarlog_http_request_duration_seconds"); err != nil || n != 3 {
		t.Errorf("duration series: %d, %v", n, err)
	}
}
