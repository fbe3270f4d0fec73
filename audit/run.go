package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/httpserve"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/wire"
)

// RunConfig is what `zarlog audit` is asked to run: an Auditor's Config and
// how to run it. Every field's zero value is documented.
type RunConfig struct {
	Config
	// Once runs one complete pass (catch up, every undecided game, with the
	// grace period for missing bundles) and returns; otherwise Run passes
	// every Poll until ctx ends.
	Once bool
	// Poll is the time between passes. Zero means DefaultPoll.
	Poll time.Duration
	// HTTPAddr, if not empty, serves /metrics and /healthz there (port 0:
	// any free port).
	HTTPAddr string
	// HTTPLimits bound that listener (timeouts, body and header bytes,
	// connections). Zero fields mean httpserve's defaults, but for
	// MaxConns, which means 64.
	HTTPLimits httpserve.Limits
	// NATS, if not empty, is the URL of the log's NATS deployment: the
	// proof bundles announced on <root>.proofs.* are verified as they come.
	NATS string
	// NATSCreds is a NATS credentials file. Empty: none.
	NATSCreds string
	// Subjects is the NATS subject scheme. Zero means root "zarlog".
	Subjects wire.Subjects
	// Ready, if not nil, is called once everything runs, before the first
	// pass, with what the command prints.
	Ready func(Info)
}

// Info is what a running auditor tells its operator.
type Info struct {
	VerifierKey string
	Origin      string
	From        string
	Dir         string // "" when the state is in memory
	Evidence    string
	HTTP        string // the base URL of /metrics and /healthz; "" if none
	NATS        string // the subject listened to; "" if none
}

// Lines returns the lines `zarlog audit` prints on start, label first.
func (i Info) Lines() []string {
	out := []string{"vkey " + i.VerifierKey, "origin " + i.Origin, "from " + i.From}
	if i.Dir != "" {
		out = append(out, "data "+i.Dir)
	} else {
		out = append(out, "data (in memory: nothing is kept)")
	}
	out = append(out, "evidence "+i.Evidence)
	if i.HTTP != "" {
		out = append(out, "metrics "+i.HTTP+"/metrics", "healthz "+i.HTTP+"/healthz")
	}
	if i.NATS != "" {
		out = append(out, "nats "+i.NATS)
	}
	return out
}

// A Summary is what a run found.
type Summary struct {
	Checkpoint merkle.Checkpoint // the verified view at the end
	Finished   uint64            // finished games in the view
	// NotWitnessed counts the finished games whose bundles are not
	// witnessed yet, while the log's witnessing moves: not decided, not a
	// problem (a later run decides them).
	NotWitnessed int
	Problems     []Problem // every problem found, earlier runs included
}

// Run runs an auditor until ctx ends (or, with Once, for one pass) and
// returns what it found. An error means it could not audit (bad
// configuration, the log unreachable in Once mode, a failed store).
//
// Shutdown order: the NATS subscription, the pass in progress (its
// decisions are durable or not written), the HTTP server, the stores.
func Run(ctx context.Context, cfg RunConfig) (Summary, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	cfg.Registerer = reg
	a, err := New(ctx, cfg.Config)
	if err != nil {
		return Summary{}, err
	}
	defer a.Close()
	info := Info{VerifierKey: cfg.LogKey, Origin: a.key.Name(), From: cfg.From, Dir: cfg.Dir, Evidence: a.EvidenceDir()}

	if cfg.HTTPAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			if err := a.Health(r.Context()); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintf(w, "unhealthy: %s\n", err)
				return
			}
			w.Write([]byte("ok\n"))
		})
		ln, err := net.Listen("tcp", cfg.HTTPAddr)
		if err != nil {
			return Summary{}, fmt.Errorf("audit: %w", err)
		}
		lim := cfg.HTTPLimits
		if lim.MaxConns == 0 {
			lim.MaxConns = 64
		}
		hs := httpserve.Server(mux, lim, nil)
		go hs.Serve(httpserve.Listen(ln, lim.MaxConns))
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			hs.Shutdown(sctx)
		}()
		info.HTTP = baseURL(ln.Addr())
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	if cfg.NATS != "" {
		opts := []nats.Option{nats.Name("zarlog-audit"), nats.MaxReconnects(-1)}
		if cfg.NATSCreds != "" {
			opts = append(opts, nats.UserCredentials(cfg.NATSCreds))
		}
		nc, err := nats.Connect(cfg.NATS, opts...)
		if err != nil {
			return Summary{}, fmt.Errorf("audit: connecting to NATS: %w", err)
		}
		defer nc.Close()
		subject := strings.TrimSuffix(cfg.Subjects.Proofs("x"), "x") + "*"
		ch := make(chan *nats.Msg, 256)
		sub, err := nc.ChanSubscribe(subject, ch)
		if err != nil {
			return Summary{}, fmt.Errorf("audit: subscribing to %s: %w", subject, err)
		}
		defer sub.Unsubscribe()
		info.NATS = subject
		wg.Go(func() { a.announcements(runCtx, ch) })
	}
	if cfg.Ready != nil {
		cfg.Ready(info)
	}
	log.Info("auditing", "origin", info.Origin, "from", cfg.From, "verified_size", a.Checkpoint().Size)

	if cfg.Once {
		err := a.once(runCtx)
		stop()
		wg.Wait()
		return a.summary(ctx), err
	}
	poll := cfg.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	for {
		if n, err := a.Pass(runCtx, false); err != nil {
			if runCtx.Err() != nil {
				break
			}
			log.Warn("audit: pass", "err", err)
		} else if n > 0 {
			log.Info("audit: finished games waiting for their bundle", "count", n)
		}
		t := time.NewTimer(poll)
		select {
		case <-runCtx.Done():
			t.Stop()
		case <-t.C:
			continue
		}
		break
	}
	stop()
	wg.Wait()
	return a.summary(context.Background()), nil
}

// once passes until every game is decided, or the grace period is over
// and a final pass decides what is left.
func (a *Auditor) once(ctx context.Context) error {
	deadline := a.cfg.Now().Add(a.cfg.BundleGrace)
	for {
		n, err := a.Pass(ctx, false)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		left := deadline.Sub(a.cfg.Now())
		if left <= 0 {
			_, err := a.Pass(ctx, true)
			return err
		}
		a.log.Info("audit: finished games waiting for their bundle", "count", n, "grace_left", left.Round(time.Second))
		t := time.NewTimer(min(left, time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (a *Auditor) summary(ctx context.Context) Summary {
	a.mu.Lock()
	waiting := a.waiting
	a.mu.Unlock()
	s := Summary{Checkpoint: a.Checkpoint(), Finished: a.copy.Stats().Finished, NotWitnessed: waiting}
	ps, err := a.Problems()
	if err != nil {
		a.log.Error("audit: reading the problems", "err", err)
	}
	s.Problems = ps
	return s
}

// announcements verifies the bundles announced on NATS as they come.
func (a *Auditor) announcements(ctx context.Context, ch <-chan *nats.Msg) {
	for {
		var m *nats.Msg
		select {
		case <-ctx.Done():
			return
		case m = <-ch:
		}
		game := m.Header.Get(wire.HeaderGame)
		if !events.ValidGameID(game) {
			a.log.Warn("audit: an announcement without a valid game id", "subject", m.Subject, "game", game)
			continue
		}
		if d, err := a.st.decided(game); err != nil || d != 0 {
			continue
		}
		var bundle []byte
		if len(m.Data) > 0 {
			bundle = m.Data
		}
		d, ps, err := a.verifyGame(ctx, game, bundle, "nats "+m.Subject, false)
		if errors.Is(err, errWaitingWitnesses) {
			continue // a later announcement, or pass, brings the witnessed bundle
		}
		if err != nil {
			if ctx.Err() == nil {
				a.log.Warn("audit: verifying an announced bundle", "game", game, "err", err)
			}
			continue
		}
		var ds []decision
		if d != nil {
			if prev, err := a.st.decided(game); err == nil && prev == 0 {
				ds = append(ds, *d)
			}
		}
		if err := a.store(ds, ps, nil, nil); err != nil {
			a.log.Error("audit: storing a decision", "game", game, "err", err)
		}
	}
}

// baseURL returns the http URL of a listener's address.
func baseURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
