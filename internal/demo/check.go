package demo

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/verifier"
	"github.com/zarlog/zarlog/wire"
)

// bundleTimeout bounds the wait for a finished game's bundle.
const bundleTimeout = 2 * time.Minute

// pollInterval is how often proof.json is asked for when no announcement
// came (announcements are best effort).
const pollInterval = time.Second

// announcements notes the games whose bundles the publisher announced on
// NATS (docs/NATS.md §5a), so that the checker fetches each as soon as it
// exists.
type announcements struct {
	mu   sync.Mutex
	seen map[string]chan struct{}
}

func (a *announcements) ch(id string) chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen == nil {
		a.seen = map[string]chan struct{}{}
	}
	c, ok := a.seen[id]
	if !ok {
		c = make(chan struct{})
		a.seen[id] = c
	}
	return c
}

func (a *announcements) handle(m *nats.Msg) {
	id := m.Header.Get(wire.HeaderGame)
	if id == "" {
		return
	}
	c := a.ch(id)
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

// A checker fetches a finished game's proof bundle over HTTP, as a
// player's browser does, and verifies it with package verifier.
type checker struct {
	base      string // the service's base URL
	hc        *http.Client
	ann       *announcements
	options   verifier.Options // with the log's witness policy
	witnesses int              // how many witnesses the policy has
}

// A verdict is the outcome of checking one game's bundle.
type verdict struct {
	ok        bool
	size      int // bytes of proof.json
	events    int
	cosigned  int // the policy's witnesses that cosigned the bundle's checkpoint
	witnesses int
	report    *verifier.Report
	err       error // the bundle could not be fetched
}

// witnessPoll is how often proof.json is asked for again while the game's
// bundle is not witnessed yet.
const witnessPoll = 250 * time.Millisecond

// fetch waits for the game's bundle and returns it.
func (c *checker) fetch(ctx context.Context, id string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, bundleTimeout)
	defer cancel()
	announced := c.ann.ch(id)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	url := c.base + "/games/" + id + "/proof.json"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", url, err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, verifier.MaxEvidenceSize+1))
		resp.Body.Close()
		switch {
		case err != nil:
			return nil, fmt.Errorf("GET %s: %w", url, err)
		case resp.StatusCode == http.StatusOK:
			return body, nil
		case resp.StatusCode != http.StatusNotFound:
			return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("GET %s: no bundle after %s: %w", url, bundleTimeout, ctx.Err())
		case <-announced:
			announced = nil // fetch now, then poll
		case <-tick.C:
		}
	}
}

// check fetches and verifies the bundle of g: against the log's key, the
// bot's emitter key, the seal code the players were shown and the log's
// witness policy; the moves too when they are logged. Every one of those
// checks must pass, not be skipped: the bundle is fetched again until it is
// witnessed (the log builds it again at a witnessed checkpoint), or
// bundleTimeout is over.
func (c *checker) check(ctx context.Context, g *played) verdict {
	ctx, cancel := context.WithTimeout(ctx, bundleTimeout)
	defer cancel()
	opt := c.options
	var err error
	if opt.Expected, err = verifier.ParseExpected(g.seal); err != nil {
		return verdict{err: fmt.Errorf("seal code %q: %w", g.seal, err)}
	}
	// Not witnessed yet is said, not failed, while waiting.
	opt.WitnessesPending = true
	for {
		bundle, err := c.fetch(ctx, g.id)
		if err != nil {
			return verdict{err: err}
		}
		v := verdict{size: len(bundle), report: verifier.Verify(bundle, opt), witnesses: c.witnesses}
		if ev, err := verifier.Parse(bundle); err == nil && ev.Log != nil {
			v.events = len(ev.Log.Entries)
			if opt.WitnessPolicy != nil {
				cs, _ := merkle.VerifyCosignatures(ev.Log.Checkpoint, opt.WitnessPolicy.Witnesses())
				v.cosigned = len(cs)
			}
		}
		v.ok = v.report.Exit() == 0
		for _, name := range required(g.plan, opt.WitnessPolicy != nil) {
			if ch, found := v.report.Check(name); !found || ch.Status != verifier.Pass {
				v.ok = false
			}
		}
		if wc, _ := v.report.Check(verifier.CheckLogWitnesses); v.ok || v.report.Exit() != 0 || opt.WitnessPolicy == nil || wc.Status != verifier.Skipped {
			return v
		}
		t := time.NewTimer(witnessPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return v
		case <-t.C:
		}
	}
}

// required lists the checks that must pass for a game of plan p, the
// witnesses' with a policy.
func required(p plan, witnessed bool) []string {
	names := []string{verifier.CheckCommitment, verifier.CheckExpected, verifier.CheckRolls,
		verifier.CheckLogInclusion, verifier.CheckLogSignature, verifier.CheckLogOrder, verifier.CheckLogAgreement,
		verifier.CheckLogEmitter}
	if witnessed {
		names = append(names, verifier.CheckLogWitnesses)
	}
	if p.scheme != events.PerRoll {
		names = append(names, verifier.CheckSequence)
	}
	if p.scheme == events.Anchored {
		names = append(names, verifier.CheckAnchor)
	}
	if p.variant != "" {
		names = append(names, verifier.CheckMoves)
	}
	return names
}

// summary says what a verdict is, in one line.
func (v verdict) summary() string {
	if v.err != nil {
		return "NOT VERIFIED: " + v.err.Error()
	}
	if !v.ok {
		failed := v.report.Failed()
		var skipped []string
		for _, c := range v.report.Checks {
			if c.Status == verifier.Skipped {
				skipped = append(skipped, c.Name)
			}
		}
		return fmt.Sprintf("NOT VERIFIED: failed %s; skipped %s", list(failed), list(skipped))
	}
	passed := 0
	for _, c := range v.report.Checks {
		if c.Status == verifier.Pass {
			passed++
		}
	}
	if v.witnesses > 0 {
		return fmt.Sprintf("verified: %d checks passed, with the log's key, the bot's key and the seal code; witnessed by %d of %d witnesses (%d events, proof.json %s)",
			passed, v.cosigned, v.witnesses, v.events, kB(v.size))
	}
	return fmt.Sprintf("verified: %d checks passed, with the log's key, the bot's key and the seal code (%d events, proof.json %s)",
		passed, v.events, kB(v.size))
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func kB(n int) string { return fmt.Sprintf("%.1f kB", float64(n)/1000) }
