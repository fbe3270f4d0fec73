package ingest

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/zarlog/zarlog/wire"
)

// ServerConfig configures the embedded nats-server. Every field's zero value
// is documented.
type ServerConfig struct {
	// StoreDir is the directory of JetStream's file store. Required;
	// `zarlog serve --data DIR` uses DIR/nats.
	StoreDir string
	// Host and Port are the client listen address for backends in other
	// processes. Zero Host means "127.0.0.1"; zero Port means 4222, -1 a
	// random free port (see Server.ClientURL).
	Host string
	Port int
	// DontListen accepts in-process connections only (Server.Connect);
	// Host and Port are then ignored.
	DontListen bool
	// ServerName names the server. Zero means "zarlog".
	ServerName string

	// SyncAlways makes JetStream fsync every write before it acknowledges a
	// publish, so that a publish ack survives a power loss. It is off by
	// default: every write still reaches the operating system before the
	// ack (so it survives kill -9 of zarlog), and the file store is fsynced
	// every SyncInterval; the ledger's batch fsync and the receipt are what
	// make an event durable (docs/NATS.md, with the measured cost).
	SyncAlways bool
	// SyncInterval is JetStream's background fsync interval. Zero means the
	// nats-server default (2 min).
	SyncInterval time.Duration
	// MaxStore and MaxMemory bound JetStream's file and memory storage, in
	// bytes. Zero means the server's defaults (a share of the disk and of
	// the RAM).
	MaxStore, MaxMemory int64

	// Emitters are the emitters that may connect, each with the
	// permissions of docs/NATS.md §7 (publish its own events, read its own
	// rejections, replies and proof bundles, ask for its own receipts).
	// Authentication is always on: besides these, only the in-process
	// ledger user (whose password is drawn at every start) may connect, and
	// no one else reaches any subject or the JetStream API. Empty means no
	// emitter can connect.
	Emitters []EmitterAccess
	// InsecureNoAuth turns authentication off: any client, in process or
	// over the network, may publish anywhere and call the whole JetStream
	// API (delete the stream, pause the consumer). It exists for tests in
	// one process; no zarlog command sets it.
	InsecureNoAuth bool
	// Subjects, StreamName and ConsumerName are what the permissions are
	// written for; they must match the Ingester's Config. Zero means root
	// "zarlog", "ZARLOG_EVENTS" and "zarlog-ledger".
	Subjects     wire.Subjects
	StreamName   string
	ConsumerName string

	// TLS, if not nil, is the listener's TLS configuration.
	TLS *tls.Config
	// Logger receives the server's log. Nil means discard.
	Logger *slog.Logger
	// Rand is the source of the in-process ledger user's password. Nil
	// means crypto/rand.
	Rand io.Reader
	// Configure, if not nil, may adjust the server options last (clustering
	// in tests, for example).
	Configure func(*server.Options)
}

// An EmitterAccess lets one emitter connect to the embedded server. Exactly
// one of Password and NKey is set.
type EmitterAccess struct {
	// Emitter is the emitter id (wire.CheckEmitter); it is also the user
	// name when Password is used.
	Emitter string
	// Password authenticates the user named Emitter.
	Password string
	// NKey is the emitter's public user nkey ("U…"); the emitter signs the
	// server's nonce with its seed.
	NKey string
}

// EmitterPermissions returns the NATS permissions docs/NATS.md prescribes
// for emitter: publish only its own events and receipt requests, subscribe
// only to its own rejections, its own proof bundles and the inbox prefix
// "_INBOX.<emitter>" (the SDK's; see sdk.Dial).
func EmitterPermissions(subjects wire.Subjects, emitter string) *server.Permissions {
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			subjects.Events(emitter),
			subjects.Receipts(emitter),
		}},
		Subscribe: &server.SubjectPermission{Allow: []string{
			subjects.Rejected(emitter),
			subjects.Proofs(emitter),
			wire.InboxPrefix(emitter) + ".>",
		}},
	}
}

// LedgerPermissions returns the NATS permissions docs/NATS.md prescribes
// for the ledger's own user: manage and read the events stream and its
// consumer, acknowledge, announce rejections and proof bundles, serve
// receipts. Receipt replies may go to inbox subjects only ("_INBOX.>"),
// never to a subject a requester names, so a request cannot make the ledger
// publish on an events subject; the ingest also answers only replies under
// the requesting emitter's own inbox.
func LedgerPermissions(subjects wire.Subjects, stream, consumer string) *server.Permissions {
	api := "$JS.API."
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			api + "STREAM.CREATE." + stream,
			api + "STREAM.UPDATE." + stream,
			api + "STREAM.INFO." + stream,
			api + "STREAM.MSG.GET." + stream,
			api + "CONSUMER.CREATE." + stream + "." + consumer,
			api + "CONSUMER.CREATE." + stream + "." + consumer + ".>",
			api + "CONSUMER.INFO." + stream + "." + consumer,
			api + "CONSUMER.RESET." + stream + "." + consumer,
			api + "CONSUMER.MSG.NEXT." + stream + "." + consumer,
			"$JS.ACK." + stream + "." + consumer + ".>",
			subjects.AdmittedWildcard(),
			subjects.Rejected("*"),
			subjects.Proofs("*"),
			"_INBOX.>",
		}},
		Subscribe: &server.SubjectPermission{Allow: []string{
			subjects.EventsWildcard(),
			subjects.ReceiptsWildcard(),
			"_INBOX.>",
		}},
	}
}

// A Server is a running embedded nats-server with JetStream.
type Server struct {
	opts *server.Options // as configured; each start uses a copy
	log  *slog.Logger

	mu sync.Mutex
	ns *server.Server // the server running now (Restart replaces it)
	// ledgerKey is the in-process ledger user's nkey, drawn at every
	// start (nil with InsecureNoAuth).
	ledgerKey nkeys.KeyPair
	ledgerPub string
	// users maps each emitter to its user on the server: its nkey, or
	// its name (DisconnectEmitter).
	users map[string]string
}

// ledgerUser names the in-process ledger connection.
const ledgerUser = "zarlog-ledger"

// StartServer starts the embedded nats-server and returns when it accepts
// connections and JetStream is up, or fails if ctx ends first. Stop it with
// Shutdown, after the Ingester using it has returned.
func StartServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.StoreDir == "" {
		return nil, errors.New("embedded nats: ServerConfig.StoreDir is empty")
	}
	if err := cfg.Subjects.Check(); err != nil {
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	opts := &server.Options{
		ServerName:   cfg.ServerName,
		Host:         cfg.Host,
		Port:         cfg.Port,
		DontListen:   cfg.DontListen,
		JetStream:    true,
		StoreDir:     cfg.StoreDir,
		SyncAlways:   cfg.SyncAlways,
		SyncInterval: cfg.SyncInterval,
		NoSigs:       true,
		MaxPayload:   1 << 20,
	}
	if opts.ServerName == "" {
		opts.ServerName = "zarlog"
	}
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	if opts.Port == 0 {
		opts.Port = 4222
	}
	if cfg.MaxStore > 0 {
		opts.JetStreamMaxStore = cfg.MaxStore
	}
	if cfg.MaxMemory > 0 {
		opts.JetStreamMaxMemory = cfg.MaxMemory
	}
	if cfg.TLS != nil {
		opts.TLSConfig = cfg.TLS
		opts.TLS = true
	}
	s := &Server{users: map[string]string{}}
	if !cfg.InsecureNoAuth {
		r := cfg.Rand
		if r == nil {
			r = rand.Reader
		}
		var seed [32]byte
		if _, err := io.ReadFull(r, seed[:]); err != nil {
			return nil, fmt.Errorf("embedded nats: drawing the ledger user's nkey: %w", err)
		}
		kp, err := nkeys.FromRawSeed(nkeys.PrefixByteUser, seed[:])
		if err != nil {
			return nil, fmt.Errorf("embedded nats: the ledger user's nkey: %w", err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return nil, fmt.Errorf("embedded nats: the ledger user's nkey: %w", err)
		}
		s.ledgerKey, s.ledgerPub = kp, pub
		stream, consumer := cfg.StreamName, cfg.ConsumerName
		if stream == "" {
			stream = StreamConfig{}.withDefaults().Name
		}
		if consumer == "" {
			consumer = ConsumerConfig{}.withDefaults().Name
		}
		opts.Nkeys = []*server.NkeyUser{{Nkey: pub, Permissions: LedgerPermissions(cfg.Subjects, stream, consumer)}}
		for _, e := range cfg.Emitters {
			if err := wire.CheckEmitter(e.Emitter); err != nil {
				return nil, fmt.Errorf("embedded nats: %w", err)
			}
			perms := EmitterPermissions(cfg.Subjects, e.Emitter)
			switch {
			case e.Password != "" && e.NKey == "":
				if e.Emitter == ledgerUser {
					return nil, fmt.Errorf("embedded nats: emitter name %q is reserved", e.Emitter)
				}
				opts.Users = append(opts.Users, &server.User{Username: e.Emitter, Password: e.Password, Permissions: perms})
				s.users[e.Emitter] = e.Emitter
			case e.NKey != "" && e.Password == "":
				if !nkeys.IsValidPublicUserKey(e.NKey) {
					return nil, fmt.Errorf("embedded nats: emitter %s: %q is not a public user nkey", e.Emitter, e.NKey)
				}
				opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: e.NKey, Permissions: perms})
				s.users[e.Emitter] = e.NKey
			default:
				return nil, fmt.Errorf("embedded nats: emitter %s needs exactly one of Password and NKey", e.Emitter)
			}
		}
	}
	if cfg.Configure != nil {
		cfg.Configure(opts)
	}

	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s.opts, s.log = opts, logger.With("component", "nats-server")
	ns, err := s.launch(ctx)
	if err != nil {
		return nil, err
	}
	s.ns = ns
	if a, ok := ns.Addr().(*net.TCPAddr); ok && opts.Port == -1 {
		s.opts.Port = a.Port // a restart listens where backends connect
	}
	return s, nil
}

// launch starts a nats-server with s.opts and waits until it takes
// connections with JetStream up.
func (s *Server) launch(ctx context.Context) (*server.Server, error) {
	ns, err := server.NewServer(s.opts.Clone())
	if err != nil {
		return nil, fmt.Errorf("embedded nats: configuring: %w", err)
	}
	ns.SetLoggerV2(&slogAdapter{l: s.log}, false, false, false)
	ns.Start()
	timeout := 10 * time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	if !ns.ReadyForConnections(timeout) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("embedded nats: not ready for connections after %v", timeout)
	}
	if !ns.JetStreamEnabled() {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, errors.New("embedded nats: JetStream did not start (see the server log)")
	}
	return ns, nil
}

// Restart stops the server and starts it again on the same store and
// address, with the same users. nats-server keeps a stream's write error
// (a full disk, no descriptor left) until it restarts; once the cause is
// gone, a restart clears it, JetStream recovers the stream from its files,
// and every client reconnects by itself: the in-process ledger connection
// (Connect) too, to the new server.
func (s *Server) Restart(ctx context.Context) error {
	old := s.current()
	old.Shutdown()
	old.WaitForShutdown()
	ns, err := s.launch(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.ns = ns
	s.mu.Unlock()
	return nil
}

func (s *Server) current() *server.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ns
}

// InProcessConn implements nats.InProcessConnProvider for Connect: a
// connection to the server running now (after a Restart, the new one).
func (s *Server) InProcessConn() (net.Conn, error) { return s.current().InProcessConn() }

// NATS returns the underlying nats-server (for tests and diagnostics).
func (s *Server) NATS() *server.Server { return s.current() }

// StoreLimit returns the most bytes JetStream may store (ServerConfig.MaxStore,
// or the server's default: a share of the free disk at start), or 0 if
// JetStream is not running.
func (s *Server) StoreLimit() int64 {
	if c := s.current().JetStreamConfig(); c != nil {
		return c.MaxStore
	}
	return 0
}

// StreamBytes returns the events stream's MaxBytes that fits this server's
// store: half its store limit, at most DefaultMaxBytes (DefaultMaxBytes if
// JetStream reports no limit). JetStream reserves a stream's MaxBytes when
// the stream is created, and refuses a stream it cannot reserve
// ("insufficient storage resources"), so DefaultMaxBytes alone does not fit
// a disk with less than about 11 GB free.
func (s *Server) StreamBytes() int64 {
	if limit := s.StoreLimit(); limit > 0 {
		return min(DefaultMaxBytes, limit/2)
	}
	return DefaultMaxBytes
}

// StreamHealth returns the embedded server's own verdict on the stream
// (nats-server's healthz for it): nil, or why it cannot take messages, such
// as a write error of its file store (a full disk). nats-server keeps such an
// error until it restarts.
func (s *Server) StreamHealth(stream string) error {
	if stream == "" {
		stream = StreamConfig{}.withDefaults().Name
	}
	h := s.current().Healthz(&server.HealthzOptions{Account: server.DEFAULT_GLOBAL_ACCOUNT, Stream: stream})
	if h.Status != "ok" && h.Error != "" && !strings.Contains(h.Error, "not found") {
		return fmt.Errorf("embedded nats: %s", h.Error)
	}
	return nil
}

// ClientURL returns the URL backends in other processes connect to, or ""
// if the server does not listen.
func (s *Server) ClientURL() string {
	ns := s.current()
	if ns.Addr() == nil {
		return ""
	}
	return ns.ClientURL()
}

// Addr returns the client listen address, or nil.
func (s *Server) Addr() net.Addr { return s.current().Addr() }

// Connect opens an in-process connection to the server (no network), with
// the ledger's own credentials when authentication is on.
func (s *Server) Connect(opts ...nats.Option) (*nats.Conn, error) {
	o := []nats.Option{nats.InProcessServer(s), nats.Name(ledgerUser),
		nats.MaxReconnects(-1), nats.ReconnectWait(100 * time.Millisecond)}
	if s.ledgerKey != nil {
		o = append(o, nats.Nkey(s.ledgerPub, s.ledgerKey.Sign))
	}
	nc, err := nats.Connect("", append(o, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("embedded nats: connecting in process: %w", err)
	}
	return nc, nil
}

// Shutdown stops the server and waits until it has stopped. JetStream
// DisconnectEmitter closes every connection of emitter's user and returns
// how many it closed: the admission's answer to an emitter that publishes
// on while its messages are refused (Config.Disconnect). The emitter's
// client connects again (the SDK's does within 100 ms); what it published
// meanwhile was never admitted. An emitter without a user here (with
// InsecureNoAuth, every one) is an error.
func (s *Server) DisconnectEmitter(emitter string) (int, error) {
	user, ok := s.users[emitter]
	if !ok {
		return 0, fmt.Errorf("embedded nats: emitter %s has no user on this server", emitter)
	}
	ns := s.current()
	cz, err := ns.Connz(&server.ConnzOptions{User: user, Limit: 1 << 16})
	if err != nil {
		return 0, fmt.Errorf("embedded nats: the connections of emitter %s: %w", emitter, err)
	}
	n := 0
	for _, c := range cz.Conns {
		if ns.DisconnectClientByID(c.Cid) == nil {
			n++
		}
	}
	return n, nil
}

// flushes its file store on the way.
func (s *Server) Shutdown() {
	ns := s.current()
	ns.Shutdown()
	ns.WaitForShutdown()
}

// slogAdapter is the nats-server Logger on top of log/slog.
type slogAdapter struct{ l *slog.Logger }

// Noticef is nats-server's informational output (its start-up banner,
// each listener): debug here, so that a start prints zarlog's lines only.
func (a *slogAdapter) Noticef(format string, v ...any) { a.l.Debug(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Warnf(format string, v ...any)   { a.l.Warn(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Fatalf(format string, v ...any)  { a.l.Error(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Errorf(format string, v ...any)  { a.l.Error(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Debugf(format string, v ...any)  { a.l.Debug(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Tracef(format string, v ...any)  { a.l.Debug(fmt.Sprintf(format, v...)) }

// DialConfig configures a connection to an existing NATS deployment. Every
// field's zero value is documented.
type DialConfig struct {
	// URL is one or more comma-separated server URLs. Required.
	URL string
	// CredsFile is a NATS credentials file (user JWT and nkey seed), for
	// deployments using decentralized JWT authentication.
	CredsFile string
	// NKeySeedFile is a file holding a user nkey seed ("SU…").
	NKeySeedFile string
	// CAFile verifies the servers' certificates; CertFile and KeyFile are a
	// client certificate for mutual TLS. Zero means system roots and no
	// client certificate; TLS is used if the URL says tls:// or the server
	// requires it.
	CAFile, CertFile, KeyFile string
	// Name is the connection name shown by the servers. Zero means
	// "zarlog-ledger".
	Name string
	// Timeout bounds the initial connection. Zero means 10 s.
	Timeout time.Duration
	// Logger receives connection events. Nil means discard.
	Logger *slog.Logger
}

// Dial connects to an existing NATS deployment (no embedded server). The
// connection reconnects forever, buffering publishes meanwhile.
func Dial(cfg DialConfig) (*nats.Conn, error) {
	if cfg.URL == "" {
		return nil, errors.New("nats: DialConfig.URL is empty")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	name := cfg.Name
	if name == "" {
		name = ledgerUser
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	opts := []nats.Option{
		nats.Name(name),
		nats.Timeout(timeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			logger.Warn("nats disconnected", "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			logger.Info("nats reconnected", "url", nc.ConnectedUrlRedacted())
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subj := ""
			if sub != nil {
				subj = sub.Subject
			}
			logger.Warn("nats async error", "subject", subj, "err", err)
		}),
	}
	if cfg.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(cfg.CredsFile))
	}
	if cfg.NKeySeedFile != "" {
		o, err := nats.NkeyOptionFromSeed(cfg.NKeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("nats: reading nkey seed %s: %w", cfg.NKeySeedFile, err)
		}
		opts = append(opts, o)
	}
	if cfg.CAFile != "" {
		opts = append(opts, nats.RootCAs(cfg.CAFile))
	}
	if cfg.CertFile != "" || cfg.KeyFile != "" {
		opts = append(opts, nats.ClientCert(cfg.CertFile, cfg.KeyFile))
	}
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("nats: connecting to %s: %w", redactURL(cfg.URL), err)
	}
	return nc, nil
}

// redactURL hides passwords in URLs for error messages.
func redactURL(u string) string {
	parts := strings.Split(u, ",")
	for i, p := range parts {
		if pu, err := url.Parse(strings.TrimSpace(p)); err == nil {
			parts[i] = pu.Redacted()
		} else {
			parts[i] = "(unparsable url)"
		}
	}
	return strings.Join(parts, ",")
}
