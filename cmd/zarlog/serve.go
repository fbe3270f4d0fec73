package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/zarlog/zarlog/internal/serve"
	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/publisher"
	"github.com/zarlog/zarlog/storage"
	"github.com/zarlog/zarlog/wire"
	"github.com/zarlog/zarlog/witness"
)

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zarlog serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: zarlog serve --data DIR [--http ADDR] [--nats-listen ADDR | --nats URL [--nats-creds FILE | --nats-nkey FILE] [--nats-system-creds FILE | --nats-system-nkey FILE] [TLS flags]]")
		fmt.Fprintln(stderr, "                    [--key FILE] [--emitters FILE] [--emitter VKEY]... [--witness-policy FILE [--witness-interval D]]")
		fmt.Fprintln(stderr, "                    [--checkpoint-interval D] [--rebuild] [--rebuild-bundles] [--export DIR [--export-once]]")
		fmt.Fprintln(stderr, "\nRun the ledger: the NATS ingest (an embedded nats-server unless --nats is given), the Pebble log in DIR,")
		fmt.Fprintln(stderr, "the proof-bundle publisher and the HTTP read API with the audit pages (docs/HTTP.md, docs/NATS.md).")
		fmt.Fprintln(stderr, "Prints the log's verifier key and every URL it serves, one per line, label first.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	var (
		cfg                          serve.Config
		emittersFile, natsUsers      string
		hideNames                    string
		policyFile, root, clockStart string
		exportDir                    string
		exportOnce                   bool
		memoryLimit                  int64
		logs                         logFlags
		emitterKeys                  repeated
	)
	fs.StringVar(&cfg.Dir, "data", "", "data `directory` (created, mode 0700): the key, the ledger, the bundle store, the NATS store")
	fs.StringVar(&cfg.HTTPAddr, "http", serve.DefaultHTTPAddr, "HTTP listen `address` (port 0: any free port)")
	fs.StringVar(&cfg.AdminAddr, "admin", serve.DefaultAdminAddr, "the admin listener's `address` (the rejected store, metrics; token-protected; \"off\": none)")
	fs.StringVar(&cfg.AdminTokenFile, "admin-token", "", "the admin token `file` (default DIR/admin.token, created on the first run, mode 0600)")
	fs.StringVar(&cfg.NATSListen, "nats-listen", serve.DefaultNATSListen, "the embedded nats-server's listen `address` for backends (port 0: any free port)")
	fs.StringVar(&natsUsers, "nats-users", "", "`file` (mode 0600) of more emitters allowed to connect to the embedded server, \"<emitter> password|nkey <value>\" per line\n(the embedded server always authenticates: the emitters of --emitters lines with an nkey, and these)")
	fs.StringVar(&cfg.NATS.URL, "nats", "", "use the NATS deployment at `URL`s (comma-separated) instead of the embedded server")
	fs.StringVar(&cfg.NATS.CredsFile, "nats-creds", "", "NATS credentials `file` (with --nats)")
	fs.StringVar(&cfg.NATS.NKeySeedFile, "nats-nkey", "", "`file` holding a user nkey seed (with --nats)")
	fs.StringVar(&cfg.NATSSystem.CredsFile, "nats-system-creds", "", "NATS credentials `file` of a user of the deployment's system account (with --nats): an emitter that ignores its refusals\nis then disconnected on every server (docs/NATS.md §6)")
	fs.StringVar(&cfg.NATSSystem.NKeySeedFile, "nats-system-nkey", "", "`file` holding the nkey seed of a user of the deployment's system account (with --nats), as --nats-system-creds")
	fs.StringVar(&cfg.NATS.CAFile, "nats-tls-ca", "", "CA certificate `file` to verify the NATS servers (with --nats)")
	fs.StringVar(&cfg.NATS.CertFile, "nats-tls-cert", "", "client certificate `file` for mutual TLS (with --nats)")
	fs.StringVar(&cfg.NATS.KeyFile, "nats-tls-key", "", "client key `file` for mutual TLS (with --nats)")
	fs.IntVar(&cfg.Replicas, "nats-replicas", 1, "replicas of the events stream (3 or 5 on a cluster)")
	fs.Int64Var(&cfg.StreamMaxBytes, "stream-max-bytes", 0, "the events stream's backlog bound in `bytes` (default: half the embedded server's store limit, at most 8 GiB)")
	fs.Int64Var(&cfg.StreamMaxMsgs, "stream-max-msgs", ingest.DefaultMaxMsgs, "the events stream's backlog bound in `messages`; past it publishers are refused")
	fs.DurationVar(&cfg.StreamMaxAge, "stream-max-age", 0, "drop stream messages older than this `duration`, decided or not (default never; an undecided event is then lost from the stream)")
	fs.StringVar(&root, "subject-root", wire.DefaultRoot, "NATS subject `root`")
	fs.StringVar(&cfg.KeyFile, "key", "", "the log's checkpoint signer key `file` (zarlog keygen --origin)\n(default DIR/log.key, created on the first run)")
	fs.StringVar(&cfg.Origin, "origin", "", "the log's origin for a created key (default "+serve.DefaultOrigin+"); checked against an existing key")
	fs.StringVar(&emittersFile, "emitters", "", "`file` of the emitters: \"<verifier key> [<NATS user nkey>]\" per line, as zarlog keygen --emitter prints them")
	fs.StringVar(&hideNames, "hide-names", "", "`file` of the players' display names the pages do not show: \"*\", \"<emitter>\" or \"<emitter> <player id>\" per line\n(the log keeps them for ever: docs/PRIVACY.md)")
	fs.Var(&emitterKeys, "emitter", "an emitter verifier `key` (repeatable; added to --emitters)")
	fs.StringVar(&policyFile, "witness-policy", "", "C2SP tlog-policy `file`: its witnesses with a URL are sent the latest checkpoint every --witness-interval;\nthe witnessed one is served at /checkpoint.witnessed, the policy at /witness-policy (docs/WITNESS.md)")
	fs.DurationVar(&cfg.WitnessInterval, "witness-interval", witness.DefaultInterval, "with --witness-policy: the least `time` between two requests to a witness (1m: 1,440 a day)")
	fs.DurationVar(&cfg.WitnessTimeout, "witness-timeout", witness.DefaultRoundTimeout, "with --witness-policy: how long a round of witnessing may wait for the witnesses")
	fs.DurationVar(&cfg.CheckpointInterval, "checkpoint-interval", 0, "how often a grown tree is signed (default 100ms)")
	fs.IntVar(&cfg.RejectedQuotaRecords, "rejected-quota", ledger.DefaultRejectedQuotaRecords, "each emitter's quota of `records` in the rejected store (past it: counted, not stored)")
	fs.Int64Var(&cfg.RejectedQuotaBytes, "rejected-quota-bytes", ledger.DefaultRejectedQuotaBytes, "each emitter's quota of `bytes` in the rejected store")
	fs.IntVar(&cfg.OpenGamesPerEmitter, "open-games-per-emitter", ledger.DefaultOpenGamesPerEmitter, "the `games` one emitter may have open at once (past it: its commits are refused over-limit)")
	fs.Int64Var(&cfg.OpenGameBytesPerEmitter, "open-game-bytes-per-emitter", ledger.DefaultOpenGameBytesPerEmitter, "the `bytes` the states of one emitter's open games may hold")
	fs.Int64Var(&cfg.OpenGameBytes, "open-game-bytes", ledger.DefaultOpenGameBytes, "the `bytes` the states of all emitters' open games may hold")
	fs.IntVar(&cfg.MaxGameBytes, "max-game-bytes", ledger.DefaultMaxGameBytes, "the `bytes` one game's state may hold (past it: refused game-too-large, but for what finishes it)")
	fs.Int64Var(&cfg.GameCacheBytes, "game-cache-bytes", ledger.DefaultGameCacheBytes, "the `bytes` of open games' states the ledger keeps decoded in memory (shared fairly among emitters)")
	fs.IntVar(&cfg.ReceiptRequestsPerEmitter, "receipt-requests-per-emitter", ingest.DefaultMaxReceiptRequestsPerEmitter, "the receipt `requests` one emitter may have held at once (past it: answered busy)")
	fs.IntVar(&cfg.ReceiptRequests, "receipt-requests", ingest.DefaultMaxReceiptRequests, "the receipt `requests` all emitters together may have held at once")
	fs.Int64Var(&cfg.BacklogBytesPerEmitter, "backlog-bytes-per-emitter", 0, "the `bytes` of one emitter's messages the stream may hold undecided (past it: refused at once, sdk.ErrBacklog);\ndefault 64 MiB, at most a quarter of the stream's byte bound")
	fs.Int64Var(&cfg.RateBytesPerEmitter, "rate-bytes-per-emitter", ingest.DefaultRateBytesPerEmitter, "the `bytes` a second one emitter may publish, with a burst of 2 s (past it: refused at once, the SDK sends again later; -1: no limit)")
	fs.Int64Var(&cfg.RefusedBytesPerEmitter, "refused-bytes-per-emitter", ingest.DefaultRefusedBytesPerEmitter, "the `bytes` a second one emitter may go on publishing while its messages are refused, with a burst of 8 s\n(past it: disconnected, and refused at once for a penalty of 2 s, doubled at each repeat up to 1 min; -1: no limit)")
	fs.Int64Var(&cfg.RateMessagesPerEmitter, "rate-messages-per-emitter", ingest.DefaultRateMessagesPerEmitter, "the `messages` a second one emitter may publish, with a burst of 2 s (-1: no limit)")
	fs.Int64Var(&cfg.BacklogMessagesPerEmitter, "backlog-messages-per-emitter", 0, "the `messages` of one emitter the stream may hold undecided; default 100,000, at most a quarter of --stream-max-msgs")
	fs.Int64Var(&memoryLimit, "memory-limit", 0, "the Go runtime's soft memory limit in `bytes` (default: from the bound of memory at the budgets above,\ndocs/OPERATIONS.md §9 \"Memory\", unless GOMEMLIMIT is set; -1: none)")
	fs.BoolVar(&cfg.Rebuild, "rebuild", false, "replay the log into fresh projections before serving")
	fs.BoolVar(&cfg.RebuildBundles, "rebuild-bundles", false, "delete the bundle store: build every finished game's bundle again")
	fs.StringVar(&exportDir, "export", "", "keep a static copy of the read API and the pages in `directory` (docs/HTTP.md)")
	fs.StringVar(&cfg.Storage, "storage", "", "keep the log in S3-compatible object storage at `s3://BUCKET[/PREFIX]` (endpoint and credentials from\nAWS_ENDPOINT_URL_S3, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION); a checkpoint is published only\nonce it and its tiles are there, and a new machine starts from it (docs/OPERATIONS.md \"Running two nodes\")")
	fs.BoolVar(&cfg.Standby, "standby", false, "with --storage and --nats: follow the bucket and serve reads; take the log over when the primary's lease lapses")
	fs.DurationVar(&cfg.Lease, "lease", storage.DefaultLease, "with --storage: how long the log's lock may go unwritten before a standby takes it over (renewed every lease/4)")
	fs.BoolVar(&exportOnce, "export-once", false, "with --export: write the directory and exit, without serving (stop the service first)")
	fs.StringVar(&clockStart, "clock-start", "", "start the ledger's clock at this RFC 3339 `time` (it then runs at the real rate);\nfor tests and demos that replay recorded drand beacons, never in production")
	logs.register(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 || cfg.Dir == "" {
		fs.Usage()
		return 2
	}
	bad := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "zarlog serve: "+format+"\n", args...)
		return 2
	}
	if exportOnce && cfg.Storage != "" {
		return bad("--export-once and --storage: export a stopped node's data directory without --storage")
	}
	if exportOnce && exportDir == "" {
		return bad("--export-once needs --export DIR")
	}
	if cfg.NATS.URL == "" && (cfg.NATS.CredsFile != "" || cfg.NATS.NKeySeedFile != "" || cfg.NATS.CAFile != "" || cfg.NATS.CertFile != "" || cfg.NATS.KeyFile != "") {
		return bad("--nats-creds, --nats-nkey and the TLS flags need --nats URL")
	}
	if cfg.NATS.URL == "" && (cfg.NATSSystem.CredsFile != "" || cfg.NATSSystem.NKeySeedFile != "") {
		return bad("--nats-system-creds and --nats-system-nkey need --nats URL (the embedded server disconnects by itself)")
	}
	if cfg.NATSSystem.CredsFile != "" && cfg.NATSSystem.NKeySeedFile != "" {
		return bad("--nats-system-creds and --nats-system-nkey: give one")
	}
	if cfg.NATS.URL != "" && natsUsers != "" {
		return bad("--nats-users configures the embedded server; with --nats the deployment's own authorization applies")
	}
	cfg.Subjects = wire.Subjects{Root: root}
	var fromEmitters []ingest.EmitterAccess
	if emittersFile != "" {
		b, err := os.ReadFile(emittersFile)
		if err != nil {
			return bad("--emitters: %s", err)
		}
		if cfg.EmitterKeys, fromEmitters, err = serve.ParseEmitters(b); err != nil {
			return bad("--emitters %s: %s", emittersFile, err)
		}
	}
	cfg.EmitterKeys = append(cfg.EmitterKeys, emitterKeys...)
	var fromUsers []ingest.EmitterAccess
	if natsUsers != "" {
		b, err := serve.ReadSecretFile(natsUsers)
		if err != nil {
			return bad("--nats-users: %s", err)
		}
		if fromUsers, err = serve.ParseNATSUsers(b); err != nil {
			return bad("--nats-users %s: %s", natsUsers, err)
		}
	}
	if cfg.NATS.URL == "" {
		var err error
		if cfg.NATSUsers, err = serve.MergeAccess(fromEmitters, fromUsers); err != nil {
			return bad("%s", err)
		}
	} else {
		cfg.NATSUsers = fromEmitters // the users --nats-system-* disconnects
	}
	if hideNames != "" {
		b, err := os.ReadFile(hideNames)
		if err != nil {
			return bad("--hide-names: %s", err)
		}
		if cfg.HiddenNames, err = publisher.ParseHiddenNames(b); err != nil {
			return bad("--hide-names %s: %s", hideNames, err)
		}
	}
	if policyFile != "" {
		b, err := os.ReadFile(policyFile)
		if err != nil {
			return bad("--witness-policy: %s", err)
		}
		cfg.WitnessPolicy = b
	}
	if clockStart != "" {
		start, err := time.Parse(time.RFC3339Nano, clockStart)
		if err != nil {
			return bad("--clock-start: %s", err)
		}
		t0 := time.Now()
		cfg.Now = func() time.Time { return start.Add(time.Since(t0)) }
	}
	logger, err := logs.logger(stderr)
	if err != nil {
		return bad("%s", err)
	}
	cfg.Logger = logger

	if exportOnce {
		info, res, err := serve.Export(ctx, cfg, exportDir)
		if err != nil {
			fmt.Fprintln(stderr, "zarlog serve:", err)
			return 1
		}
		fmt.Fprintln(stdout, "key", info.KeyFile)
		fmt.Fprintln(stdout, "vkey", info.VerifierKey)
		fmt.Fprintln(stdout, "origin", info.Origin)
		fmt.Fprintln(stdout, "export", info.ExportDir)
		fmt.Fprintf(stdout, "exported tree size %d (from %d: %d tiles, %d games)\n", res.Size, res.OldSize, res.Tiles, res.Games)
		return 0
	}
	cfg.ExportDir = exportDir
	setMemoryLimit(cfg, memoryLimit, logger)
	cfg.Ready = func(info serve.Info) {
		for _, line := range info.Lines() {
			fmt.Fprintln(stdout, line)
		}
	}
	if err := serve.Run(ctx, cfg); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return 0 // stopped while starting
		}
		fmt.Fprintln(stderr, "zarlog serve:", err)
		return 1
	}
	return 0
}

// setMemoryLimit sets the Go runtime's soft memory limit: flag if positive,
// none if negative, and otherwise (unless GOMEMLIMIT is set) the part of
// the bound of serve.MemoryBudget that the runtime counts, so that the
// collector keeps the process within the documented bound rather than
// letting garbage double the live heap (docs/OPERATIONS.md §9 "Memory").
func setMemoryLimit(cfg serve.Config, flag int64, log *slog.Logger) {
	terms := serve.MemoryBudget(cfg)
	bound := serve.MemoryBound(terms)
	if serve.CgoBuild() {
		log.Warn("this zarlog is built with cgo: Pebble's memory is C's malloc, whose arenas are not within the documented bound (measured on a CGO_ENABLED=0 build, as make and the image build it: docs/OPERATIONS.md §9)",
			"bound_bytes", bound)
	}
	switch {
	case flag > 0:
		debug.SetMemoryLimit(flag)
		log.Info("memory limit", "go_limit_bytes", flag, "bound_bytes", bound, "from", "--memory-limit")
	case flag < 0:
		log.Info("memory limit", "go_limit", "none", "bound_bytes", bound, "from", "--memory-limit -1")
	case os.Getenv("GOMEMLIMIT") != "":
		log.Info("memory limit", "go_limit", os.Getenv("GOMEMLIMIT"), "bound_bytes", bound, "from", "GOMEMLIMIT")
	default:
		limit := serve.GoMemoryLimit(terms)
		debug.SetMemoryLimit(limit)
		log.Info("memory limit", "go_limit_bytes", limit, "bound_bytes", bound, "from", "the budgets (docs/OPERATIONS.md §9)")
	}
}
