package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/api"
	"github.com/transparency-dev/tessera/client"
	"github.com/transparency-dev/tessera/fsck"
	"golang.org/x/mod/sumdb/note"
	"sigsum.org/sigsum-go/pkg/checkpoint"
	"sigsum.org/sigsum-go/pkg/crypto"

	"github.com/zarlog/zarlog/internal/sigsumwitness"
	"github.com/zarlog/zarlog/internal/testlog"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/verifier"
)

// tlogTilesLeafHashes is the bundle parser Tessera's cmd/fsck gives its
// fsck (defaultMerkleLeafHasher there, unexported): Tessera's own C2SP
// tlog-tiles entry bundle parser (api.EntryBundle: each entry a big-endian
// uint16 length and the entry's bytes) and the RFC 6962 leaf hash of each
// entry. zarlog's entry bundles are in that format (docs/FORMATS.md §2), so
// fsck needs no zarlog-specific parser.
func tlogTilesLeafHashes(bundle []byte) ([][]byte, error) {
	eb := &api.EntryBundle{}
	if err := eb.UnmarshalText(bundle); err != nil {
		return nil, fmt.Errorf("unmarshal: %v", err)
	}
	r := make([][]byte, 0, len(eb.Entries))
	for _, e := range eb.Entries {
		h := rfc6962.DefaultHasher.HashLeaf(e)
		r = append(r, h[:])
	}
	return r, nil
}

// runFsck runs Tessera's fsck (github.com/transparency-dev/tessera/fsck
// v1.0.4) over the tlog-tiles log at base, with the log's verifier key.
func runFsck(ctx context.Context, base, vkey string) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	f, err := client.NewHTTPFetcher(u, nil)
	if err != nil {
		return err
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return err
	}
	return fsck.New(v.Name(), v, f, tlogTilesLeafHashes, fsck.Opts{N: 4}).Check(ctx)
}

// A tamperProxy stands in front of a log and alters one resource's bytes.
type tamperProxy struct {
	rp     *httputil.ReverseProxy
	mu     sync.Mutex
	path   string
	tamper func([]byte) []byte
	hits   int
}

func newTamperProxy(t *testing.T, base string) (*tamperProxy, string) {
	t.Helper()
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	p := &tamperProxy{rp: &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Header.Del("Accept-Encoding") // the bytes as they are, to alter
	}}}
	p.rp.ModifyResponse = func(resp *http.Response) error {
		p.mu.Lock()
		defer p.mu.Unlock()
		if resp.Request.URL.Path != "/"+p.path || p.tamper == nil || resp.StatusCode != 200 {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		b = p.tamper(b)
		p.hits++
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	return p, newServer(t, p.rp)
}

func (p *tamperProxy) set(path string, tamper func([]byte) []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.path, p.tamper, p.hits = path, tamper, 0
}

func (p *tamperProxy) hit() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits
}

// flip returns a tamper function flipping the lowest bit of the byte at i
// (from the end if negative).
func flip(i int) func([]byte) []byte {
	return func(b []byte) []byte {
		b = bytes.Clone(b)
		if i < 0 {
			i += len(b)
		}
		b[i] ^= 1
		return b
	}
}

// TestServeTesseraFsck runs Tessera's fsck (the fsck package of
// github.com/transparency-dev/tessera v1.0.4, with the C2SP tlog-tiles
// bundle parser its cmd/fsck uses) against the built `zarlog serve` over
// HTTP: the checkpoint verified with the log's key, every entry bundle
// read, the tree rebuilt from the leaves, every hash tile compared with
// the one the log serves, the root compared with the checkpoint's. It does
// so while games are being played (the log growing under it) and once they
// stop, on a log of more than two full entry bundles with a partial one,
// and a second level of tiles. fsck must find the log consistent, and so
// the copy a `zarlog mirror` of it serves. Then a
// proxy in front of the log alters one served resource at a time (a byte of
// a full hash tile, of a leaf in a full and in the partial entry bundle, of
// the level-1 tile, of the checkpoint's root) and fsck must fail each time.
func TestServeTesseraFsck(t *testing.T) {
	bin, _ := tools(t)
	ctx := testContext(t)
	dir := t.TempDir()
	signer, nkey, emitters := oneEmitter(t, bin, dir)
	p := startServe(t, bin, "--data", filepath.Join(dir, "data"), "--emitters", emitters,
		"--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--admin", "127.0.0.1:0")
	vkey, base := p.lines["vkey"], p.base()+"/"
	b, _, _ := sdkBackend(t, p.lines["nats"], signer, nil, nkey)

	size := func() uint64 {
		t.Helper()
		code, cp := p.get("/checkpoint")
		if code == http.StatusNotFound {
			return 0 // no checkpoint signed yet
		}
		if code != 200 {
			t.Fatalf("/checkpoint: %d", code)
		}
		v, err := merkle.NewVerifier(vkey)
		if err != nil {
			t.Fatal(err)
		}
		c, err := merkle.Open(cp, v)
		if err != nil {
			t.Fatal(err)
		}
		return c.Size
	}

	// Games played by three backends until the log holds 700 leaves;
	// fsck runs once while they play.
	const want = 700
	playCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for n := 0; playCtx.Err() == nil; n++ {
				id, err := testlog.Tavlarena(playCtx, b, fmt.Sprintf("fsck-%d-%d", w, n), `{}`, 12, nil)
				if err != nil {
					if playCtx.Err() == nil {
						t.Errorf("game %s: %v", id, err)
					}
					return
				}
			}
		})
	}
	live, started := false, time.Now()
	for s := size(); s < want; s = size() {
		if !live && s > 300 {
			t0 := time.Now()
			if err := runFsck(ctx, base, vkey); err != nil {
				t.Errorf("Tessera's fsck on the live log (about %d leaves, growing): %v", s, err)
			}
			t.Logf("Tessera's fsck on the live log of %d leaves (growing): consistent, in %s", s, time.Since(t0).Round(time.Millisecond))
			live = true
		}
		if ctx.Err() != nil {
			t.Fatalf("the log reached %d leaves, not %d", s, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	wg.Wait()
	t.Logf("games played to %d leaves in %s", want, time.Since(started).Round(time.Millisecond))
	if !live {
		t.Error("fsck did not run on the live log")
	}
	// The last events' checkpoint.
	time.Sleep(time.Second)
	n := size()
	t0 := time.Now()
	if err := runFsck(ctx, base, vkey); err != nil {
		t.Fatalf("Tessera's fsck on the log of %d leaves: %v", n, err)
	}
	t.Logf("Tessera's fsck: the log of %d leaves is consistent, in %s", n, time.Since(t0).Round(time.Millisecond))

	// A `zarlog mirror` of the log serves tiles and bundles it built from
	// its verified copy: fsck finds them consistent too.
	m := start(t, bin, "healthz", "mirror", "--from", p.base(), "--log-key", vkey, "--data", t.TempDir(), "--http", "127.0.0.1:0", "--poll", "50ms")
	m.waitLog(t, "checkpoint verified", "size="+strconv.FormatUint(n, 10))
	if err := runFsck(ctx, strings.TrimSuffix(m.lines["checkpoint"], "checkpoint"), vkey); err != nil {
		t.Fatalf("Tessera's fsck on zarlog mirror's copy of the log of %d leaves: %v", n, err)
	}
	t.Logf("Tessera's fsck: zarlog mirror's copy of the log of %d leaves is consistent", n)

	// Through a proxy, unaltered: consistent; then each alteration fails.
	px, pbase := newTamperProxy(t, p.base())
	if err := runFsck(ctx, pbase+"/", vkey); err != nil {
		t.Fatalf("fsck through the proxy, nothing altered: %v", err)
	}
	partial := fmt.Sprintf("tile/entries/%03d.p/%d", n/256, n%256)
	if n%256 == 0 {
		t.Fatalf("the log of %d leaves has no partial bundle", n)
	}
	for _, tc := range []struct {
		name, path string
		tamper     func([]byte) []byte
	}{
		{"a hash of the full tile 0/000", "tile/0/000", flip(100)},
		{"a leaf of the full entry bundle 000", "tile/entries/000", flip(20)},
		{"the last leaf of the partial entry bundle", partial, flip(-3)},
		{"a hash of the level-1 tile", fmt.Sprintf("tile/1/000.p/%d", n/256), flip(5)},
		{"the checkpoint's root hash (its signature kept)", "checkpoint", func(b []byte) []byte {
			lines := bytes.SplitN(bytes.Clone(b), []byte("\n"), 4)
			lines[2][0] ^= 1
			return bytes.Join(lines, []byte("\n"))
		}},
	} {
		px.set(tc.path, tc.tamper)
		err := runFsck(ctx, pbase+"/", vkey)
		if px.hit() == 0 {
			t.Errorf("%s: fsck never fetched %s", tc.name, tc.path)
			continue
		}
		if err == nil {
			t.Errorf("%s (%s) altered: fsck found the log consistent", tc.name, tc.path)
			continue
		}
		t.Logf("%s (%s) altered: fsck: %.200s", tc.name, tc.path, err)
	}
}

// TestServeSigsumWitness runs the built `zarlog serve` with Sigsum's
// witness (sigsum-witness of sigsum-go v0.14.1, go.mod's tool) as the only
// witness of its policy. sigsum-witness cosigns only a log whose origin is
// sigsum.org/v1/tree/<SHA-256 of its key> (docs/WITNESS.md), so the log's
// key is made so (sigsumwitness.LogKey) and given as DIR/log.key. Games are
// played through the SDK; every finished game's bundle ends up at a
// checkpoint cosigned by sigsum-witness, which the built zarlog-verify
// --witness-policy (with the policy the log serves) accepts, saying it is
// witnessed by 1 of 1; the same bundle with the cosignature altered fails;
// and sigsum-go's own verifier accepts the cosignature on the log's
// /checkpoint.witnessed.
func TestServeSigsumWitness(t *testing.T) {
	bin, verify := tools(t)
	ctx := testContext(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	skey, logVkey, err := sigsumwitness.LogKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "log.key"), []byte(skey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var wlogs bytes.Buffer
	sw, err := sigsumwitness.Start(ctx, sigsumwitness.Config{Dir: filepath.Join(dir, "sigsum"), Log: logVkey, Out: &lockedWriter{w: &wlogs}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sw.Stop()
		if t.Failed() {
			t.Logf("sigsum-witness said:\n%s", wlogs.String())
		}
	})
	policyFile := filepath.Join(dir, "witness.policy")
	if err := os.WriteFile(policyFile, fmt.Appendf(nil, "witness sigsum %s %s\nquorum sigsum\n", sw.VerifierKey, sw.URL), 0o644); err != nil {
		t.Fatal(err)
	}
	signer, nkey, emitters := oneEmitter(t, bin, dir)
	interval := 2 * time.Second
	p := startServe(t, bin, "--data", data, "--emitters", emitters, "--witness-policy", policyFile,
		"--witness-interval", interval.String(), "--witness-timeout", "3s",
		"--http", "127.0.0.1:0", "--nats-listen", "127.0.0.1:0", "--admin", "127.0.0.1:0")
	logName, _, _ := strings.Cut(logVkey, "+")
	if p.lines["vkey"] != logVkey || p.lines["origin"] != logName {
		t.Fatalf("zarlog serve printed %v", p.lines)
	}
	code, served := p.get("/witness-policy")
	if code != 200 {
		t.Fatalf("/witness-policy: %d %s", code, served)
	}
	servedFile := filepath.Join(dir, "served.policy")
	if err := os.WriteFile(servedFile, served, 0o644); err != nil {
		t.Fatal(err)
	}
	pol, err := merkle.ParsePolicy(served)
	if err != nil {
		t.Fatal(err)
	}
	logKey, err := verifier.ParseLogKey(logVkey)
	if err != nil {
		t.Fatal(err)
	}

	b, _, _ := sdkBackend(t, p.lines["nats"], signer, nil, nkey)
	var ids []string
	for n := range 4 {
		id, err := testlog.Tavlarena(ctx, b, fmt.Sprintf("sigsum-%d", n), `{}`, 12, nil)
		if err != nil {
			t.Fatalf("game %d: %v", n, err)
		}
		ids = append(ids, id)
	}

	// Every game's bundle is witnessed within a few intervals.
	bundles := map[string][]byte{}
	deadline := time.Now().Add(6*interval + 30*time.Second)
	for len(bundles) < len(ids) {
		for _, id := range ids {
			if bundles[id] != nil {
				continue
			}
			code, bundle := p.get("/games/" + id + "/proof.json")
			if code == 200 && verifier.Verify(bundle, verifier.Options{LogKey: logKey, WitnessPolicy: pol}).Exit() == 0 {
				bundles[id] = bundle
			}
		}
		if time.Now().After(deadline) {
			_, metrics := p.get("/metrics")
			var wm []string
			for _, l := range strings.Split(string(metrics), "\n") {
				if strings.Contains(l, "witness") && !strings.HasPrefix(l, "#") {
					wm = append(wm, l)
				}
			}
			t.Fatalf("%d of %d games witnessed by sigsum-witness; the log's witnessing metrics:\n%s\nits log:\n%s", len(bundles), len(ids), strings.Join(wm, "\n"), p.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The built zarlog-verify with the policy the log serves.
	for _, id := range ids {
		f := filepath.Join(dir, id+".json")
		if err := os.WriteFile(f, bundles[id], 0o644); err != nil {
			t.Fatal(err)
		}
		out, stderr, code := runBin(t, dir, verify, "--log-key", logVkey, "--witness-policy", servedFile, f)
		if code != 0 || !strings.Contains(out, "PASS  log-witnesses: 1 of the 1 in the policy's list of witnesses cosigned the checkpoint") {
			t.Fatalf("zarlog-verify --witness-policy %s: exit %d\n%s%s", id, code, out, stderr)
		}
	}
	// The cosignature altered: refused.
	i := bytes.Index(bundles[ids[0]], []byte("— "+sw.Name+" "))
	if i < 0 {
		t.Fatalf("no cosignature line of %s in the bundle:\n%s", sw.Name, bundles[ids[0]])
	}
	bad := bytes.Clone(bundles[ids[0]])
	j := i + len("— "+sw.Name+" ") + 30
	if bad[j] == 'A' {
		bad[j] = 'B'
	} else {
		bad[j] = 'A'
	}
	f := filepath.Join(dir, "altered.json")
	if err := os.WriteFile(f, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, code := runBin(t, dir, verify, "--log-key", logVkey, "--witness-policy", servedFile, f); code != 1 {
		t.Fatalf("zarlog-verify of the bundle with sigsum-witness's cosignature altered: exit %d, want 1\n%s", code, out)
	}

	// sigsum-go's own code accepts the cosignature the log serves.
	code, witnessed := p.get("/checkpoint.witnessed")
	if code != 200 {
		t.Fatalf("/checkpoint.witnessed: %d", code)
	}
	var cp checkpoint.Checkpoint
	if err := cp.FromASCII(bytes.NewReader(witnessed)); err != nil {
		t.Fatalf("sigsum-go's parser on /checkpoint.witnessed: %v\n%s", err, witnessed)
	}
	_, sigs, _ := bytes.Cut(witnessed, []byte("\n\n"))
	lines, err := checkpoint.CosignatureLinesFromASCII(bytes.NewReader(sigs))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.SplitN(sw.VerifierKey, "+", 3)[2])
	if err != nil {
		t.Fatal(err)
	}
	var wpub crypto.PublicKey
	copy(wpub[:], raw[1:])
	if _, err := cp.VerifyCosignatureByKey(lines, &wpub); err != nil {
		t.Fatalf("sigsum-go's verifier on /checkpoint.witnessed: %v\n%s", err, witnessed)
	}
	t.Logf("%d games witnessed by sigsum-witness; /checkpoint.witnessed at size %d", len(ids), cp.Size)
}
