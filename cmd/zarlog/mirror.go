package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/zarlog/zarlog/follow"
	"github.com/zarlog/zarlog/mirror"
	"github.com/zarlog/zarlog/publisher"
)

func runMirror(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zarlog mirror", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: zarlog mirror --from URL --log-key VKEY --data DIR [--http ADDR] [--witness-policy FILE] [--poll D] [--max-size N] [--max-disk BYTES]")
		fmt.Fprintln(stderr, "\nFollow a tlog-tiles log over HTTP, verify every checkpoint by rebuilding the tree from its entries,")
		fmt.Fprintln(stderr, "and serve the verified copy read-only: the same read API and game pages as the origin (docs/WATCHERS.md).")
		fmt.Fprintln(stderr, "Prints the log's verifier key and every URL it serves, one per line, label first.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	var (
		cfg        mirror.Config
		policyFile string
		hideNames  string
		logs       logFlags
	)
	fs.StringVar(&cfg.From, "from", "", "the origin's tlog-tiles `URL` prefix (its /checkpoint and /tile/ are under it)")
	fs.StringVar(&cfg.LogKey, "log-key", "", "the origin's checkpoint verifier `key` (vkey)")
	fs.StringVar(&cfg.Dir, "data", "", "data `directory` (created, mode 0700): the verified copy, the bundles, the evidence")
	fs.StringVar(&cfg.HTTPAddr, "http", mirror.DefaultHTTPAddr, "HTTP listen `address` (port 0: any free port)")
	fs.StringVar(&policyFile, "witness-policy", "", "C2SP tlog-policy `file`: accept only checkpoints with its witness quorum")
	fs.StringVar(&hideNames, "hide-names", "", "`file` of the players' display names the pages do not show (as zarlog serve --hide-names)")
	fs.DurationVar(&cfg.Poll, "poll", mirror.DefaultPoll, "how often to fetch the origin's checkpoint")
	fs.IntVar(&cfg.Concurrency, "concurrency", 8, "entry bundles fetched at once")
	fs.IntVar(&cfg.Chunk, "batch", 16, "entry bundles stored per durable write while catching up (a killed process fetches at most this many again, and those in flight)")
	fs.Uint64Var(&cfg.MaxSize, "max-size", follow.DefaultMaxSize, "the largest tree `size` accepted: a larger checkpoint is refused as the origin's fault, before anything is fetched")
	fs.Int64Var(&cfg.MaxDisk, "max-disk", mirror.DefaultMaxDisk, "the verified copy's disk budget in `bytes` (DIR/log): past it the mirror stops fetching, says so in /healthz, and serves what it verified (-1: none)")
	logs.register(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 || cfg.From == "" || cfg.LogKey == "" || cfg.Dir == "" {
		fs.Usage()
		return 2
	}
	if err := checkFrom(cfg.From); err != nil {
		fmt.Fprintln(stderr, "zarlog mirror:", err)
		return 2
	}
	if policyFile != "" {
		b, err := os.ReadFile(policyFile)
		if err != nil {
			fmt.Fprintln(stderr, "zarlog mirror: --witness-policy:", err)
			return 2
		}
		cfg.WitnessPolicy = b
	}
	if hideNames != "" {
		b, err := os.ReadFile(hideNames)
		if err == nil {
			cfg.HiddenNames, err = publisher.ParseHiddenNames(b)
		}
		if err != nil {
			fmt.Fprintln(stderr, "zarlog mirror: --hide-names:", err)
			return 2
		}
	}
	logger, err := logs.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "zarlog mirror:", err)
		return 2
	}
	cfg.Logger = logger
	cfg.Progress = newProgress(stderr, cfg.Logger).Report
	cfg.Ready = func(info mirror.Info) {
		for _, l := range info.Lines() {
			fmt.Fprintln(stdout, l)
		}
	}
	if err := mirror.Run(ctx, cfg); err != nil {
		fmt.Fprintln(stderr, "zarlog mirror:", err)
		return 1
	}
	return 0
}

// checkFrom refuses a --from that is not an http:// or https:// URL (a
// usage error, exit 2), naming what was given.
func checkFrom(from string) error {
	u, err := url.Parse(from)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--from %q: want the log's URL prefix with its scheme, such as https://log.example.com/", from)
	}
	return nil
}

// newProgress shows catch-up progress as a bar when stderr is a terminal,
// as log lines every 5 s otherwise.
func newProgress(stderr io.Writer, log *slog.Logger) *progressPrinter {
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		return newProgressPrinter(f, log, 100*time.Millisecond, nil)
	}
	return newProgressPrinter(nil, log, 5*time.Second, nil)
}
