package witness

import (
	"context"
	cryptorand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zarlog/zarlog/internal/httpserve"
	"github.com/zarlog/zarlog/merkle"
)

// LoadKey returns the witness's signer key stored in the file at path (the
// key text, a trailing newline allowed). If the file does not exist and
// create is set, it generates a key with the given key name (a schema-less
// URL naming the witness, such as "witness.example/w1") from rand, writes it
// to path with mode 0600 (created exclusively, then synced with its
// directory) and reports created. A key file readable by others is refused.
func LoadKey(path string, create bool, name string, rand io.Reader) (skey string, created bool, err error) {
	data, err := os.ReadFile(path)
	if err == nil {
		st, err := os.Stat(path)
		if err != nil {
			return "", false, err
		}
		if st.Mode().Perm()&0o077 != 0 {
			return "", false, fmt.Errorf("witness key file %s has mode %v: it must not be readable by group or others (chmod 600)", path, st.Mode().Perm())
		}
		skey = strings.TrimSuffix(string(data), "\n")
		if _, err := merkle.NewCosigner(skey, time.Now); err != nil {
			return "", false, fmt.Errorf("witness key file %s: %w", path, err)
		}
		return skey, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, fmt.Errorf("reading witness key: %w", err)
	}
	if !create {
		return "", false, fmt.Errorf("witness key file %s does not exist (create it with --init --name NAME)", path)
	}
	if name == "" {
		return "", false, fmt.Errorf("creating witness key %s: no key name given (--name, a schema-less URL such as witness.example/w1)", path)
	}
	skey, _, err = merkle.GenerateCosignerKey(rand, name)
	if err != nil {
		return "", false, fmt.Errorf("creating witness key: %w", err)
	}
	if err := mkdirSynced(vfs.Default, filepath.Dir(path)); err != nil {
		return "", false, fmt.Errorf("creating witness key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("creating witness key: %w", err)
	}
	_, err = io.WriteString(f, skey+"\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		var d *os.File
		if d, err = os.Open(filepath.Dir(path)); err == nil {
			err = d.Sync()
			d.Close()
		}
	}
	if err != nil {
		os.Remove(path)
		return "", false, fmt.Errorf("writing witness key %s: %w", path, err)
	}
	return skey, true, nil
}

// A ServeConfig is the configuration of Serve: the flags of "zarlog witness".
type ServeConfig struct {
	// Dir is the data directory (Config.Dir). Required.
	Dir string
	// Addr is the TCP address to listen on, as for net.Listen; port 0 picks
	// a free port. Required.
	Addr string
	// LogsFile is the configuration file read by ParseLogs. Required.
	LogsFile string
	// KeyFile is the witness's key file (LoadKey). Zero: Dir/witness.key.
	KeyFile string
	// Init creates the key file if it does not exist, with key name Name.
	Init bool
	Name string
	// Clock, Rand and Logger are injected for tests. Zero: time.Now,
	// crypto/rand, nothing logged.
	Clock  func() time.Time
	Rand   io.Reader
	Logger *slog.Logger
	// HTTPLimits bound the listener (timeouts, header bytes, connections;
	// the body limit is MaxRequestSize). Zero fields mean httpserve's
	// defaults, but for WriteTimeout (30 s: a witness writes one line).
	HTTPLimits httpserve.Limits
	// Ready, if set, is called once the witness is listening, before it
	// serves, with what the command prints: its verifier key and URLs.
	Ready func(Info)
}

// An Info is what a running witness tells its operator.
type Info struct {
	VerifierKey      string            // the cosignature verifier key, type 0x04
	AddCheckpointURL string            // submission prefix + "/add-checkpoint"
	CheckpointURLs   map[string]string // by origin: the monitoring URL of its latest cosigned checkpoint
	MetricsURL       string
	HealthURL        string
	KeyFile          string // the key file
	KeyCreated       bool   // the key file was created now
}

// Serve runs a witness until ctx is done: it loads (or creates) the key,
// reads the logs, opens the witness, listens on cfg.Addr, calls cfg.Ready
// and serves Handler plus GET /metrics (the witness's metrics and the Go
// runtime's, on a registry of its own). On ctx done it stops accepting
// requests, waits up to 10 s for those in flight (each finishes its durable
// write), then closes the witness. It returns nil after a clean shutdown.
func Serve(ctx context.Context, cfg ServeConfig) error {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	keyFile := cfg.KeyFile
	if keyFile == "" {
		keyFile = filepath.Join(cfg.Dir, "witness.key")
	}
	if cfg.Dir == "" || cfg.Addr == "" || cfg.LogsFile == "" {
		return errors.New("witness: the data directory, the listen address and the configuration file are required")
	}
	text, err := os.ReadFile(cfg.LogsFile)
	if err != nil {
		return fmt.Errorf("witness: reading configuration: %w", err)
	}
	logs, err := ParseLogs(text)
	if err != nil {
		return fmt.Errorf("witness: %s: %w", cfg.LogsFile, err)
	}
	rand := cfg.Rand
	if rand == nil {
		rand = cryptorand.Reader
	}
	skey, created, err := LoadKey(keyFile, cfg.Init, cfg.Name, rand)
	if err != nil {
		return fmt.Errorf("witness: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	w, err := New(ctx, Config{Dir: cfg.Dir, Logs: logs, Key: skey, Clock: cfg.Clock, Logger: logger, Registerer: reg})
	if err != nil {
		return err
	}
	defer w.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("witness: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", w.Handler())
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	lim := cfg.HTTPLimits
	if lim.WriteTimeout == 0 {
		lim.WriteTimeout = 30 * time.Second
	}
	lim.MaxBodyBytes = int64(MaxRequestSize)
	ln = httpserve.Listen(ln, lim.MaxConns)
	srv := httpserve.Server(mux, lim, slog.NewLogLogger(logger.Handler(), slog.LevelWarn))
	base := "http://" + hostPort(ln.Addr())
	info := Info{
		VerifierKey:      w.VerifierKey(),
		AddCheckpointURL: base + "/add-checkpoint",
		CheckpointURLs:   map[string]string{},
		MetricsURL:       base + "/metrics",
		HealthURL:        base + "/healthz",
		KeyFile:          keyFile,
		KeyCreated:       created,
	}
	for origin, hash := range w.Origins() {
		info.CheckpointURLs[origin] = base + "/" + hash + "/checkpoint"
	}
	logger.Info("witness: serving", "vkey", info.VerifierKey, "url", info.AddCheckpointURL, "logs", len(info.CheckpointURLs), "dir", cfg.Dir)
	if cfg.Ready != nil {
		cfg.Ready(info)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("witness: serving: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdown)
	<-errc
	if err != nil {
		return fmt.Errorf("witness: shutting down: %w", err)
	}
	logger.Info("witness: stopped")
	return w.Close()
}

// hostPort returns the address to print for a listener: an unspecified IP
// (listening on all interfaces) is shown as localhost.
func hostPort(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "localhost"
	}
	return net.JoinHostPort(host, fmt.Sprint(tcp.Port))
}
