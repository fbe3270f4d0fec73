// Package serve runs a zarlog log service, as `zarlog serve` does: the
// Pebble ledger (package ledger), the NATS JetStream ingest (ledger/ingest)
// with an embedded nats-server by default, the witnesses of a C2SP
// tlog-policy (package witness), the proof-bundle publisher and the HTTP
// read API with the audit pages (package publisher: C2SP tlog-tiles, docs/
// HTTP.md). It wires those packages together and does nothing else; the
// adapters between them are exported so that other commands (the demo,
// tests) can reuse them.
//
// The data directory holds everything the service keeps:
//
//	DIR/log.key   the log's checkpoint signer key (created on the first run, mode 0600)
//	DIR/ledger/   the ledger's Pebble database: the log and its projections
//	DIR/bundles/  the bundle store's Pebble database (derived: delete it to rebuild it)
//	DIR/nats/     the embedded nats-server's JetStream file store
//	DIR/witnessed/checkpoint  the latest witnessed checkpoint (with a witness policy)
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/zarlog/zarlog/bucket"
	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/httpserve"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/publisher"
	"github.com/zarlog/zarlog/rules/movecheck"
	"github.com/zarlog/zarlog/storage"
	"github.com/zarlog/zarlog/wire"
	"github.com/zarlog/zarlog/witness"
)

// Defaults of Config.
const (
	DefaultHTTPAddr   = "localhost:8080"
	DefaultNATSListen = "127.0.0.1:4222"
	DefaultOrigin     = "zarlog.localhost/log"
	// ShutdownTimeout bounds how long the HTTP server waits for requests in
	// flight when the service stops.
	ShutdownTimeout = 10 * time.Second
	// DefaultAdminConns bounds the admin listener's connections: it serves
	// an operator's tools, not the public.
	DefaultAdminConns = 64
)

// Config is what `zarlog serve` is asked to run. Dir is required; every
// other field's zero value is documented.
type Config struct {
	// Dir is the data directory (see the package doc); created with mode
	// 0700 if missing.
	Dir string

	// HTTPAddr is the HTTP listen address. Zero means DefaultHTTPAddr;
	// port 0 picks a free port.
	HTTPAddr string
	// AdminAddr is the admin listener's address (admin.go: the rejected
	// store, metrics, health; every request needs the admin token). Zero
	// means DefaultAdminAddr (loopback); port 0 picks a free port; "off"
	// runs no admin listener.
	AdminAddr string
	// AdminTokenFile holds the admin token. Zero means DIR/admin.token,
	// created on the first run (mode 0600). A file readable by others is
	// refused.
	AdminTokenFile string

	// NATSListen is the embedded nats-server's client listen address for
	// backends in other processes. Zero means DefaultNATSListen; port 0
	// picks a free port. Ignored when NATS.URL is set.
	NATSListen string
	// NATSUsers are the emitters that may connect to the embedded server,
	// each with the permissions of docs/NATS.md §7 (ParseEmitters and
	// ParseNATSUsers read them from files). The embedded server always
	// authenticates: with none, no backend can connect at all. With an
	// external NATS (NATS.URL), they name whose connections the system
	// account closes when an emitter ignores its refusals (NATSSystem):
	// an emitter's are those whose user is its id or one of its nkeys here.
	NATSUsers []ingest.EmitterAccess
	// NATS, when its URL is set, connects to an existing NATS deployment
	// instead of starting the embedded server.
	NATS ingest.DialConfig
	// NATSSystem, with NATS.URL, are the credentials of a user of the
	// deployment's system account (CredsFile or NKeySeedFile; the URL and
	// TLS settings are NATS's): an emitter that publishes on while
	// refused is then disconnected on every server, as with the embedded
	// one (ingest.SystemDisconnect). Without them it is only refused.
	NATSSystem ingest.DialConfig
	// Replicas is the events stream's replica count (external clusters).
	// Zero means 1.
	Replicas int
	// StreamMaxBytes, StreamMaxMsgs and StreamMaxAge are the events
	// stream's limits (ingest.StreamConfig). Zero StreamMaxBytes means, with
	// the embedded server, half of its store limit (JetStream's share of the
	// free disk at start) but at most ingest.DefaultMaxBytes, so that the
	// default fits any disk; with an external deployment
	// ingest.DefaultMaxBytes.
	StreamMaxBytes int64
	StreamMaxMsgs  int64
	StreamMaxAge   time.Duration
	// Subjects is the NATS subject scheme. Zero means root "zarlog".
	Subjects wire.Subjects

	// KeyFile is the log's checkpoint signer key file (`zarlog keygen`).
	// Zero means DIR/log.key, created on the first run with key name Origin.
	// A key file readable by group or others is refused.
	KeyFile string
	// Origin is the log's origin (the key's name) when a key is created;
	// with an existing key it must be the key's name. Zero means
	// DefaultOrigin for a new key, and the key's name otherwise.
	Origin string
	// EmitterKeys are the emitters' event-signing verifier keys (C2SP
	// signed-note vkeys named by emitter id): the emitters the log accepts.
	EmitterKeys []string
	// HiddenNames are the players' display names the pages do not show
	// (`--hide-names`, publisher.ParseHiddenNames, docs/PRIVACY.md); nil
	// shows every name.
	HiddenNames *publisher.HiddenNames
	// WitnessPolicy, if not empty, is a C2SP tlog-policy (PolicyFor: the
	// log's own "log" line is added if it lists no log) whose witnesses with
	// a URL are sent the latest checkpoint at most once per
	// WitnessInterval, apart from the receipts (witness.Submitter); the
	// checkpoints whose cosignatures meet its quorum are kept in
	// DIR/witnessed/ and the latest served at /checkpoint.witnessed, the
	// policy at /witness-policy.
	WitnessPolicy []byte
	// WitnessInterval is the least time between two rounds of witnessing.
	// Zero means witness.DefaultInterval (1 minute).
	WitnessInterval time.Duration
	// WitnessTimeout bounds one round of witnessing. Zero means
	// witness.DefaultRoundTimeout (10 s).
	WitnessTimeout time.Duration

	// RejectedQuotaRecords and RejectedQuotaBytes are each emitter's quota
	// in the rejected store (ledger.Config). Zero means the ledger's
	// defaults.
	RejectedQuotaRecords int
	RejectedQuotaBytes   int64

	// GameCacheBytes, MaxGameBytes, OpenGamesPerEmitter,
	// OpenGameBytesPerEmitter and OpenGameBytes bound the ledger's game
	// states (ledger.Config). Zero means the ledger's defaults.
	GameCacheBytes          int64
	MaxGameBytes            int
	OpenGamesPerEmitter     int
	OpenGameBytesPerEmitter int64
	OpenGameBytes           int64
	// ReceiptRequestsPerEmitter and ReceiptRequests bound the receipt
	// requests held for one emitter and for all of them
	// (ingest.Config.MaxReceiptRequestsPerEmitter, MaxReceiptRequests).
	// Zero means the ingest's defaults.
	ReceiptRequestsPerEmitter, ReceiptRequests int
	// BacklogBytesPerEmitter and BacklogMessagesPerEmitter bound what one
	// emitter may have in the stream undecided
	// (ingest.Config.BacklogBytesPerEmitter, BacklogMessagesPerEmitter).
	// Zero means the ingest's defaults.
	BacklogBytesPerEmitter, BacklogMessagesPerEmitter int64
	// RateBytesPerEmitter and RateMessagesPerEmitter bound how fast one
	// emitter may publish (ingest.Config.RateBytesPerEmitter,
	// RateMessagesPerEmitter). Zero means the ingest's defaults, negative
	// no limit.
	RateBytesPerEmitter, RateMessagesPerEmitter int64
	// RefusedBytesPerEmitter bounds what one emitter may go on publishing
	// while refused before it is disconnected for a penalty
	// (ingest.Config.RefusedBytesPerEmitter; disconnected with the
	// embedded NATS, or an external one with NATSSystem).
	// Zero means the ingest's default, negative no limit.
	RefusedBytesPerEmitter int64

	// CheckpointInterval is how often a grown tree is signed. Zero means
	// the ledger's default (100 ms).
	CheckpointInterval time.Duration
	// Rebuild replays the log into fresh projections before serving
	// (ledger.Rebuild).
	Rebuild bool
	// RebuildBundles deletes the bundle store first: every finished game's
	// bundle is built again, at the latest checkpoint.
	RebuildBundles bool
	// Storage, if not empty, is an s3://BUCKET[/PREFIX] URL: the log is
	// kept there too (package storage), each checkpoint published only
	// once it and its tiles are in the bucket; the ledger is brought up to
	// the bucket's log at start (a new machine starts from it), and the
	// node sequences only while it holds the log's lock. The endpoint and
	// credentials come from the environment (package bucket).
	Storage string
	// Standby, with Storage, never creates the log in an empty bucket: the
	// node follows the bucket and serves reads from its verified copy
	// until the holder's lease lapses, then takes over. It needs an
	// external NATS (NATS.URL): the one the primary ingests from. (A node
	// without Standby follows the same way when another holds the lock.)
	Standby bool
	// Lease is how long the lock may go unwritten before another node
	// takes it over. Zero means storage.DefaultLease (6 s).
	Lease time.Duration

	// ExportDir, if not empty, is kept in step with the log while serving:
	// the static tree of files of docs/HTTP.md "Export".
	ExportDir string
	// HTTPLimits and AdminLimits bound the public and the admin listener
	// (timeouts, body and header bytes, connections). Zero fields mean
	// httpserve's defaults, but for the admin listener's MaxConns, which
	// means DefaultAdminConns.
	HTTPLimits, AdminLimits httpserve.Limits

	// Now is the ledger's clock. Nil means time.Now. (`zarlog serve
	// --clock-start` sets a clock that starts at a given time, for tests
	// and demos that replay recorded drand beacons.)
	Now func() time.Time
	// Rand is the source of a created key. Nil means crypto/rand.
	Rand io.Reader
	// Logger receives every component's logs. Nil discards them.
	Logger *slog.Logger
	// Ready, if not nil, is called once everything is running, with what
	// the command prints.
	Ready func(Info)
}

// Info is what a running service tells its operator: the log's identity
// and every URL it serves.
type Info struct {
	KeyFile     string
	KeyCreated  bool
	VerifierKey string // the log's vkey: what auditors pin (zarlog-verify --log-key)
	Origin      string
	HTTP        string // the base URL, without a trailing slash
	NATS        string // the URL backends connect to
	ExportDir   string
	Admin       string // the admin listener's base URL, or "" if off
	// Storage is the bucket's URL (s3://BUCKET/PREFIX/), Node this node's
	// id in its lock, and Standby whether it started as a standby.
	Storage, Node string
	Standby       bool
	AdminToken    string // the admin token's file
	// WitnessPolicy is the witness policy as served (nil: none), and
	// WitnessInterval the least time between two rounds of witnessing.
	WitnessPolicy   []byte
	WitnessInterval time.Duration
}

// Lines returns the lines `zarlog serve` prints on start, label first.
func (i Info) Lines() []string {
	var out []string
	if i.KeyCreated {
		out = append(out, "key "+i.KeyFile+" created")
	} else {
		out = append(out, "key "+i.KeyFile)
	}
	out = append(out,
		"vkey "+i.VerifierKey,
		"origin "+i.Origin,
		"pages "+i.HTTP+"/",
		"checkpoint "+i.HTTP+"/checkpoint",
		"tiles "+i.HTTP+"/tile/",
		"entries "+i.HTTP+"/tile/entries/",
		"game "+i.HTTP+"/games/{id}",
		"player "+i.HTTP+"/players/{emitter}/{id}",
		"export "+i.HTTP+"/players/{emitter}/{id}/export",
		"proof "+i.HTTP+"/games/{id}/proof.json",
		"tlog-proof "+i.HTTP+"/games/{id}/proofs/{seq}.tlog-proof",
		"auditor "+i.HTTP+"/auditor.html",
		"stats "+i.HTTP+"/stats",
		"emitter-keys "+i.HTTP+"/"+publisher.EmitterKeysPath,
	)
	if i.WitnessPolicy != nil {
		out = append(out,
			"witnessed "+i.HTTP+"/"+publisher.WitnessedPath+" (every "+i.WitnessInterval.String()+" at most)",
			"witness-policy "+i.HTTP+"/"+publisher.WitnessPolicyPath)
	}
	out = append(out,
		"metrics "+i.HTTP+"/metrics",
		"healthz "+i.HTTP+"/healthz",
		"readyz "+i.HTTP+"/readyz",
	)
	if i.Admin != "" {
		out = append(out, "admin "+i.Admin, "admin-token "+i.AdminToken)
	}
	if i.ExportDir != "" {
		out = append(out, "export "+i.ExportDir)
	}
	if i.Storage != "" {
		role := "primary (follows as a standby while another node holds the lock)"
		if i.Standby {
			role = "standby (takes the log over when the primary's lease lapses)"
		}
		out = append(out, "storage "+i.Storage, "node "+i.Node+" "+role)
	}
	out = append(out, "nats "+i.NATS)
	return out
}

// paths of the data directory.
func (c *Config) ledgerDir() string  { return filepath.Join(c.Dir, "ledger") }
func (c *Config) bundlesDir() string { return filepath.Join(c.Dir, "bundles") }
func (c *Config) natsDir() string    { return filepath.Join(c.Dir, "nats") }

// Run runs the service until ctx ends, then shuts it down and returns nil
// after a clean shutdown. It returns an error if a component cannot start,
// or if one fails for good while running (the ledger stops after a failed
// write, the ingest loses its NATS connection for good, the HTTP server
// fails); it shuts the others down first.
//
// Start order: the key, the ledger (and Rebuild), the witnessing, the
// bundle store, NATS (the embedded server, or a connection), the ingest,
// the bundler, the exporter, the HTTP server; then Ready.
//
// Shutdown order, on ctx's end or a failure:
//  1. the ingest stops taking messages: the Submit in progress returns and
//     its messages are acknowledged (or redelivered to the next run);
//  2. the bundler, the exporter and the witnessing stop (a round in
//     progress is either durable or not written; the next run resumes from
//     the cursor, and from the witnessed checkpoint kept);
//  3. the HTTP server stops accepting and waits for the requests in flight
//     (up to ShutdownTimeout);
//  4. the NATS connections close, then the embedded server shuts down
//     (JetStream flushes its file store);
//  5. the bundle store closes;
//  6. the ledger closes: queued groups are committed, a last checkpoint
//     covering every appended event is signed, Pebble is closed.
func Run(ctx context.Context, cfg Config) error {
	log := logger(cfg.Logger)
	if err := cfg.check(); err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	lcfg, err := cfg.ledgerConfig(log, reg)
	if err != nil {
		return err
	}
	key, err := loadOrCreateKey(&cfg)
	if err != nil {
		return err
	}
	lcfg.Signer, lcfg.Verifier = key.signer, key.verifier
	var (
		l    *ledger.Ledger
		node *storage.Node
		bkt  bucket.Store
	)
	if cfg.Storage != "" {
		if node, bkt, err = openStorage(ctx, &cfg, key, log, reg); err != nil {
			return err
		}
		l, err = openLedgerOnBucket(ctx, &cfg, lcfg, node, log)
	} else {
		l, err = ledger.Open(ctx, lcfg)
	}
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	closers := []func() error{l.Close}
	shutdown := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
	fail := func(err error) error { return errors.Join(err, shutdown()) }

	if cfg.Rebuild {
		log.Info("rebuilding the projections")
		if err := l.Rebuild(ctx); err != nil {
			return fail(fmt.Errorf("serve: rebuilding: %w", err))
		}
	}
	wit, err := newWitnessing(&cfg, key, l, log, reg)
	if err != nil {
		return fail(err)
	}
	store, err := openStore(ctx, &cfg, l.Origin(), log)
	if err != nil {
		return fail(err)
	}
	closers = append(closers, store.Close)

	// NATS.
	var (
		nc      *nats.Conn
		natsURL string
		srv     *ingest.Server
	)
	if cfg.NATS.URL == "" {
		host, port, err := listenAddr(cfg.NATSListen)
		if err != nil {
			return fail(err)
		}
		srv, err = ingest.StartServer(ctx, ingest.ServerConfig{StoreDir: cfg.natsDir(), Host: host, Port: port,
			Emitters: cfg.NATSUsers, Subjects: cfg.Subjects, Logger: log})
		if err != nil {
			return fail(fmt.Errorf("serve: starting the embedded nats-server: %w", err))
		}
		closers = append(closers, func() error { srv.Shutdown(); return nil })
		if nc, err = srv.Connect(nats.Name("zarlog-ledger")); err != nil {
			return fail(fmt.Errorf("serve: connecting to the embedded nats-server: %w", err))
		}
		natsURL = srv.ClientURL()
	} else {
		d := cfg.NATS
		d.Logger = log.With("component", "nats")
		if nc, err = ingest.Dial(d); err != nil {
			return fail(fmt.Errorf("serve: %w", err))
		}
		natsURL = cfg.NATS.URL
	}
	closers = append(closers, func() error { nc.Close(); return nil })

	streamCfg := ingest.StreamConfig{Replicas: cfg.Replicas, MaxBytes: cfg.StreamMaxBytes, MaxMsgs: cfg.StreamMaxMsgs, MaxAge: cfg.StreamMaxAge}
	if streamCfg.MaxBytes == 0 && srv != nil {
		streamCfg.MaxBytes = srv.StreamBytes()
	}
	// With the embedded server, an emitter that publishes on while refused
	// is disconnected; with an external NATS deployment, through its
	// system account when serve has a user of it (NATSSystem), and
	// otherwise the deployment bounds it in front.
	var disconnect func(string) (int, error)
	if srv != nil {
		disconnect = srv.DisconnectEmitter
	} else if cfg.NATSSystem.CredsFile != "" || cfg.NATSSystem.NKeySeedFile != "" {
		d := cfg.NATSSystem
		d.URL, d.CAFile, d.CertFile, d.KeyFile = cfg.NATS.URL, cfg.NATS.CAFile, cfg.NATS.CertFile, cfg.NATS.KeyFile
		d.Name, d.Logger = "zarlog-system", log.With("component", "nats-system")
		sys, err := ingest.Dial(d)
		if err != nil {
			return fail(fmt.Errorf("serve: the NATS system account: %w", err))
		}
		closers = append(closers, func() error { sys.Close(); return nil })
		n, err := ingest.CheckSystem(ctx, sys)
		if err != nil {
			flag := "--nats-system-creds " + d.CredsFile
			if d.CredsFile == "" {
				flag = "--nats-system-nkey " + d.NKeySeedFile
			}
			return fail(fmt.Errorf("serve: %s: %w", flag, err))
		}
		log.Info("nats system account: an emitter that ignores its refusals is disconnected", "servers", n)
		users := map[string][]string{}
		for _, a := range cfg.NATSUsers {
			if a.NKey != "" {
				users[a.Emitter] = append(users[a.Emitter], a.NKey)
			}
		}
		disconnect = ingest.SystemDisconnect(sys, func(emitter string) []string { return append([]string{emitter}, users[emitter]...) })
	} else {
		log.Info("external NATS without a system account user: an emitter that ignores its refusals is refused, not disconnected (docs/NATS.md §6)")
	}
	// A node on a bucket ingests and answers receipts only while its lease
	// is fresh (storage.Node.Fresh): one that cannot renew its lock, or was
	// paused past it, may have been replaced and must not answer from its
	// ledger. Without a bucket the node is the only one: never held.
	var hold func() error
	if node != nil {
		hold = node.Hold
	}
	in, err := ingest.New(nc, ingest.Config{Sink: l, Locator: l, Checkpoints: l, Hold: hold,
		Subjects: cfg.Subjects, Stream: streamCfg,
		MaxReceiptRequestsPerEmitter: cfg.ReceiptRequestsPerEmitter, MaxReceiptRequests: cfg.ReceiptRequests,
		BacklogBytesPerEmitter: cfg.BacklogBytesPerEmitter, BacklogMessagesPerEmitter: cfg.BacklogMessagesPerEmitter,
		RateBytesPerEmitter: cfg.RateBytesPerEmitter, RateMessagesPerEmitter: cfg.RateMessagesPerEmitter,
		RefusedBytesPerEmitter: cfg.RefusedBytesPerEmitter, Disconnect: disconnect,
		Linger: ingest.DefaultLinger, Logger: log.With("component", "ingest"), Registerer: reg})
	if err != nil {
		return fail(fmt.Errorf("serve: %w", err))
	}
	// stored and bstored wake the exporters (of --export and of the
	// bucket) when a bundle is stored: a game's witnessed bundle may come
	// without a new checkpoint.
	stored, bstored := make(chan struct{}, 1), make(chan struct{}, 1)
	announce := publisher.NATSAnnouncer(nc, cfg.Subjects)
	bundler, err := publisher.NewBundler(publisher.BundlerConfig{Source: NewBundleSource(l), Store: store, Witnessed: wit.source(),
		Announce: func(ctx context.Context, a publisher.Announcement) error {
			for _, c := range []chan struct{}{stored, bstored} {
				select {
				case c <- struct{}{}:
				default:
				}
			}
			return announce(ctx, a)
		},
		Logger: log.With("component", "bundler"), Registerer: reg})
	if err != nil {
		return fail(fmt.Errorf("serve: %w", err))
	}

	// HTTP. /healthz fails when anything stops events from moving: a
	// stopped ledger, the NATS connection down, the embedded server's
	// JetStream disabled (its store failed), the ingest without a session,
	// failing or stalled; and when a witness refuses the log's checkpoint as
	// inconsistent with what it cosigned. /readyz also while the stream is
	// full.
	health := func(ctx context.Context) error {
		if err := l.Err(); err != nil {
			return err
		}
		if wit != nil && wit.sub != nil {
			if err := wit.sub.Health(); err != nil {
				return err
			}
		}
		if err := l.Degraded(); err != nil {
			return err
		}
		if s := nc.Status(); s != nats.CONNECTED {
			return fmt.Errorf("nats connection is %s", s)
		}
		if srv != nil {
			if !srv.NATS().JetStreamEnabled() {
				return errors.New("the embedded nats-server's JetStream is disabled (its store failed: see the log)")
			}
			if err := srv.StreamHealth(""); err != nil {
				return fmt.Errorf("%w (the embedded server is restarted once its disk has room again)", err)
			}
		}
		return in.Health(ctx)
	}
	ready := func(ctx context.Context) error {
		if err := health(ctx); err != nil {
			return err
		}
		if err := diskRoom(cfg.ledgerDir()); err != nil {
			return err
		}
		if srv != nil {
			if err := diskRoom(cfg.natsDir()); err != nil {
				return err
			}
		}
		return in.Ready(ctx)
	}
	mux, err := Handler(l, store, wit.reader(), key.vkey, cfg.EmitterKeys, cfg.HiddenNames, log, reg, health, ready)
	if err != nil {
		return fail(err)
	}
	var exp *publisher.Exporter
	if cfg.ExportDir != "" {
		exp, err = publisher.NewExporter(publisher.ExportConfig{Dir: cfg.ExportDir, Log: NewSource(l, store), Bundles: store, Witness: wit.reader(), EmitterKeys: append([]string{}, cfg.EmitterKeys...), Pages: mux,
			Logger: log.With("component", "export")})
		if err != nil {
			return fail(fmt.Errorf("serve: %w", err))
		}
	}
	// With a bucket, what the read API serves beside the log goes there
	// too, written by the node that holds the lock.
	var bexp *publisher.Exporter
	if bkt != nil {
		bexp, err = publisher.NewExporter(publisher.ExportConfig{Target: bucketTarget{bkt}, StateFile: cfg.bucketExportState(), NoLog: true,
			Log: NewSource(l, store), Bundles: store, Witness: wit.reader(), EmitterKeys: append([]string{}, cfg.EmitterKeys...), Pages: mux,
			Logger: log.With("component", "bucket-export")})
		if err != nil {
			return fail(fmt.Errorf("serve: %w", err))
		}
	}
	ln, err := net.Listen("tcp", orDefault(cfg.HTTPAddr, DefaultHTTPAddr))
	if err != nil {
		return fail(fmt.Errorf("serve: %w", err))
	}
	ln = httpserve.Listen(ln, cfg.HTTPLimits.WithDefaults().MaxConns)
	hs := httpserve.Server(mux, cfg.HTTPLimits, slog.NewLogLogger(log.With("component", "http").Handler(), slog.LevelWarn))
	var (
		adminLn          net.Listener
		adminURL, tokenF string
	)
	if cfg.AdminAddr != "off" {
		tokenF = cfg.AdminTokenFile
		if tokenF == "" {
			tokenF = filepath.Join(cfg.Dir, "admin.token")
		}
		token, _, err := loadOrCreateToken(tokenF, randRead)
		if err != nil {
			ln.Close()
			return fail(err)
		}
		if adminLn, err = net.Listen("tcp", orDefault(cfg.AdminAddr, DefaultAdminAddr)); err != nil {
			ln.Close()
			return fail(fmt.Errorf("serve: the admin listener: %w", err))
		}
		adminURL = baseURL(adminLn.Addr())
		admin := AdminHandler(l, token, reg, func(r *http.Request) error { return health(r.Context()) },
			func(r *http.Request) error { return ready(r.Context()) })
		adminH, err := publisher.Instrument(admin, reg, "admin")
		if err != nil {
			adminLn.Close()
			ln.Close()
			return fail(fmt.Errorf("serve: %w", err))
		}
		alim := cfg.AdminLimits
		if alim.MaxConns == 0 {
			alim.MaxConns = DefaultAdminConns
		}
		as := httpserve.Server(adminH, alim, slog.NewLogLogger(log.With("component", "admin").Handler(), slog.LevelWarn))
		go as.Serve(httpserve.Listen(adminLn, alim.MaxConns))
		closers = append(closers, func() error { as.Close(); return nil })
	}

	// Run the components; each reports how it ended.
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	type ended struct {
		what string
		err  error
	}
	endedCh := make(chan ended, 8)
	var wg sync.WaitGroup
	ingestCtx, stopIngest := context.WithCancel(runCtx)
	ingestDone := make(chan struct{})
	// leading is closed once this node sequences: at once without a
	// bucket, once it holds the lock with one.
	var leading <-chan struct{}
	if node == nil {
		c := make(chan struct{})
		close(c)
		leading = c
	} else {
		leading = node.Leading()
	}
	go func() {
		defer close(ingestDone)
		select {
		case <-leading:
		case <-ingestCtx.Done():
			return
		}
		endedCh <- ended{"ingest", in.Run(ingestCtx)}
	}()
	pubCtx, stopPub := context.WithCancel(runCtx)
	if node != nil {
		wg.Go(func() {
			if err := node.Run(pubCtx); err != nil {
				endedCh <- ended{"storage", err}
			}
		})
	}
	wg.Go(func() { endedCh <- ended{"bundler", bundler.Run(pubCtx)} })
	if srv != nil {
		wg.Go(func() { healStream(pubCtx, srv, cfg.natsDir(), log.With("component", "nats")) })
	}
	if exp != nil {
		wg.Go(func() { endedCh <- ended{"export", follow(pubCtx, l, exp, stored, 0, log)} })
	}
	if bkt != nil && wit != nil {
		wg.Go(func() {
			copyWitnessed(pubCtx, bkt, l, wit.store, key.verifier, leading, log.With("component", "storage"))
		})
	}
	if bexp != nil {
		wg.Go(func() {
			select {
			case <-leading:
			case <-pubCtx.Done():
				return
			}
			endedCh <- ended{"bucket export", follow(pubCtx, l, bexp, bstored, bucketExportEvery, log)}
		})
	}
	if wit != nil && wit.sub != nil {
		wg.Go(func() {
			select {
			case <-leading:
			case <-pubCtx.Done():
				return
			}
			if err := wit.sub.Run(pubCtx); !errors.Is(err, context.Canceled) {
				endedCh <- ended{"witnessing", err}
			}
		})
	}
	httpDone := make(chan struct{})
	go func() {
		defer close(httpDone)
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			endedCh <- ended{"http", err}
		}
	}()

	if cfg.Ready != nil {
		info := Info{KeyFile: key.file, KeyCreated: key.created, VerifierKey: key.vkey, Origin: l.Origin(),
			HTTP: baseURL(ln.Addr()), NATS: natsURL, ExportDir: cfg.ExportDir, Admin: adminURL, AdminToken: tokenF}
		if node != nil {
			info.Storage, info.Node, info.Standby = node.URL(), node.ID(), cfg.Standby
		}
		if wit != nil {
			info.WitnessPolicy, info.WitnessInterval = wit.store.PolicyText(), orDefaultDuration(cfg.WitnessInterval, witness.DefaultInterval)
		}
		cfg.Ready(info)
	}
	log.Info("serving", "origin", l.Origin(), "http", ln.Addr().String(), "nats", natsURL)

	var runErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case <-l.Done():
		runErr = fmt.Errorf("serve: %w", l.Err())
	case e := <-endedCh:
		runErr = fmt.Errorf("serve: the %s stopped: %w", e.what, e.err)
	}
	if runErr != nil {
		log.Error("shutting down after a failure", "err", runErr)
	}
	// 1. The ingest.
	stopIngest()
	<-ingestDone
	// 2. The bundler and the exporter.
	stopPub()
	wg.Wait()
	// 3. HTTP.
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	if err := hs.Shutdown(sctx); err != nil {
		log.Warn("http shutdown", "err", err)
		hs.Close()
	}
	cancel()
	<-httpDone
	// 4–6. NATS connection, embedded server, bundle store, ledger.
	if err := shutdown(); err != nil && runErr == nil && !errors.Is(err, ledger.ErrClosed) {
		runErr = fmt.Errorf("serve: shutting down: %w", err)
	}
	log.Info("stopped")
	return runErr
}

// Handler returns the HTTP handler of the service: the read API and the
// pages of ledger l and bundle store store, with CORS. wit, if not nil, is
// the log's witnessing (/checkpoint.witnessed, /witness-policy). vkey is
// the log's verifier key (shown on the pages) and emitterKeys the
// emitters' (the pages check the games' signatures with them); hidden the
// players' names the pages do not show; reg is
// served at /metrics and receives the API's metrics; health is /healthz
// and ready /readyz.
func Handler(l *ledger.Ledger, store *publisher.Store, wit publisher.WitnessReader, vkey string, emitterKeys []string, hidden *publisher.HiddenNames, log *slog.Logger, reg *prometheus.Registry, health, ready func(context.Context) error) (http.Handler, error) {
	src := NewSource(l, store)
	pcfg := publisher.Config{Games: src, Stats: src, Witness: wit, LogKey: vkey, EmitterKeys: emitterKeys, HiddenNames: hidden, Origin: l.Origin(), Logger: log.With("component", "pages")}
	if store != nil {
		pcfg.Index = store
	}
	pages, err := publisher.NewPages(pcfg)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	keys := append([]string{}, emitterKeys...)
	api, err := publisher.NewAPI(publisher.APIConfig{Log: src, Games: src, Witness: wit, EmitterKeys: func() []string { return keys },
		Metrics: reg, Registerer: reg,
		Health: health, Ready: ready, Logger: log.With("component", "api")})
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	mux := http.NewServeMux()
	api.Register(mux)
	pages.Register(mux)
	h, err := publisher.Instrument(mux, reg, "public")
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return publisher.CORS(h), nil
}

// Timings of healStream.
const (
	healEvery    = 2 * time.Second
	healInterval = 30 * time.Second // at most one restart per this
)

// healStream clears a write error of the embedded server's stream (a full
// disk, no descriptor left), which nats-server keeps until it restarts:
// once the stream's filesystem has room again, it restarts the embedded
// server (Server.Restart; the ledger's connection and the backends
// reconnect by themselves, the ingest starts a new session), at most once
// every healInterval, until ctx ends.
func healStream(ctx context.Context, srv *ingest.Server, dir string, log *slog.Logger) {
	t := time.NewTicker(healEvery)
	defer t.Stop()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := srv.StreamHealth("")
		if err == nil || diskRoom(dir) != nil || time.Since(last) < healInterval {
			continue
		}
		last = time.Now()
		log.Warn("restarting the embedded nats-server to clear its stream's write error", "err", err)
		if err := srv.Restart(ctx); err != nil {
			log.Error("restarting the embedded nats-server", "err", err)
		}
	}
}

// follow keeps the export in step with the log: a Sync after each new
// checkpoint and each bundle stored (coalesced: a Sync covers every
// checkpoint published and bundle stored while the one before ran), at
// most one every every.
func follow(ctx context.Context, l *ledger.Ledger, exp *publisher.Exporter, stored <-chan struct{}, every time.Duration, log *slog.Logger) error {
	for {
		last := time.Now()
		note, _, next := l.Latest()
		if note != nil {
			if res, err := exp.Sync(ctx); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				log.Error("export failed; retrying at the next checkpoint", "err", err)
			} else if res.Size != res.OldSize || res.Games > 0 {
				log.Debug("exported", "size", res.Size, "tiles", res.Tiles, "games", res.Games)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-next:
		case <-stored:
		}
		if wait := every - time.Since(last); wait > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(wait):
			}
		}
	}
}

// Export writes the static tree of files of the log in cfg.Dir (docs/
// HTTP.md "Export") to dir, or brings a previous export up to date, and
// returns what it wrote. It opens the ledger without signing anything and
// starts neither NATS nor HTTP: stop the service first (the ledger's
// directory is locked while it runs), or use Config.ExportDir.
func Export(ctx context.Context, cfg Config, dir string) (Info, publisher.ExportResult, error) {
	log := logger(cfg.Logger)
	if cfg.Dir == "" {
		return Info{}, publisher.ExportResult{}, errors.New("serve: export: the data directory is required")
	}
	if _, err := os.Stat(cfg.ledgerDir()); err != nil {
		return Info{}, publisher.ExportResult{}, fmt.Errorf("serve: export: no log in %s: %w", cfg.Dir, err)
	}
	key, err := loadKey(&cfg)
	if err != nil {
		return Info{}, publisher.ExportResult{}, err
	}
	lcfg, err := cfg.ledgerConfig(log, nil)
	if err != nil {
		return Info{}, publisher.ExportResult{}, err
	}
	lcfg.Signer, lcfg.Verifier = key.signer, key.verifier
	lcfg.CheckpointInterval = -1
	l, err := ledger.Open(ctx, lcfg)
	if err != nil {
		return Info{}, publisher.ExportResult{}, fmt.Errorf("serve: export: %w", err)
	}
	defer l.Close()
	store, err := openStore(ctx, &cfg, l.Origin(), log)
	if err != nil {
		return Info{}, publisher.ExportResult{}, err
	}
	defer store.Close()
	var wit *witnessing
	if len(cfg.WitnessPolicy) > 0 {
		text, _, err := PolicyFor(cfg.WitnessPolicy, key.vkey)
		if err != nil {
			return Info{}, publisher.ExportResult{}, err
		}
		ws, err := witness.OpenWitnessed(nil, cfg.witnessedDir(), key.verifier, text)
		if err != nil {
			return Info{}, publisher.ExportResult{}, fmt.Errorf("serve: export: %w", err)
		}
		wit = &witnessing{store: ws}
	}
	mux, err := Handler(l, store, wit.reader(), key.vkey, cfg.EmitterKeys, cfg.HiddenNames, log, prometheus.NewRegistry(), nil, nil)
	if err != nil {
		return Info{}, publisher.ExportResult{}, err
	}
	exp, err := publisher.NewExporter(publisher.ExportConfig{Dir: dir, Log: NewSource(l, store), Bundles: store, Witness: wit.reader(), EmitterKeys: append([]string{}, cfg.EmitterKeys...), Pages: mux, Logger: log})
	if err != nil {
		return Info{}, publisher.ExportResult{}, err
	}
	res, err := exp.Sync(ctx)
	info := Info{KeyFile: key.file, VerifierKey: key.vkey, Origin: l.Origin(), ExportDir: dir}
	if err != nil {
		return info, res, fmt.Errorf("serve: %w", err)
	}
	return info, res, nil
}

func (c *Config) check() error {
	if c.Dir == "" {
		return errors.New("serve: the data directory is required")
	}
	if err := c.Subjects.Check(); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if c.Standby && c.Storage == "" {
		return errors.New("serve: --standby needs --storage s3://BUCKET[/PREFIX]: the bucket the primary writes")
	}
	if c.Standby && c.NATS.URL == "" {
		return errors.New("serve: --standby needs --nats URL: the NATS the primary ingests from (an embedded server would be this node's alone)")
	}
	if c.Storage != "" {
		if _, _, err := bucket.ParseURL(c.Storage); err != nil {
			return fmt.Errorf("serve: --storage: %w", err)
		}
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// ledgerConfig returns the ledger's Config without its keys.
func (c *Config) ledgerConfig(log *slog.Logger, reg prometheus.Registerer) (ledger.Config, error) {
	kr, err := events.NewKeyring(c.EmitterKeys...)
	if err != nil {
		return ledger.Config{}, fmt.Errorf("serve: emitter keys: %w", err)
	}
	lc := ledger.Config{Dir: c.ledgerDir(), Emitters: kr,
		Moves: movecheck.Checker{}, CheckpointInterval: c.CheckpointInterval,
		RejectedQuotaRecords: c.RejectedQuotaRecords, RejectedQuotaBytes: c.RejectedQuotaBytes,
		GameCacheBytes: c.GameCacheBytes, MaxGameBytes: c.MaxGameBytes,
		OpenGamesPerEmitter: c.OpenGamesPerEmitter, OpenGameBytesPerEmitter: c.OpenGameBytesPerEmitter, OpenGameBytes: c.OpenGameBytes,
		Now: c.Now, Logger: log.With("component", "ledger"), Metrics: reg}
	return lc, nil
}

func openStore(ctx context.Context, cfg *Config, origin string, log *slog.Logger) (*publisher.Store, error) {
	store, err := publisher.OpenStore(publisher.StoreConfig{Dir: cfg.bundlesDir(), Origin: origin, Logger: log.With("component", "bundles")})
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if cfg.RebuildBundles {
		log.Info("deleting the bundle store: every bundle is built again")
		if err := store.Reset(ctx); err != nil {
			return nil, errors.Join(fmt.Errorf("serve: %w", err), store.Close())
		}
	}
	return store, nil
}
