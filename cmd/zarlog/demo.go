package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/zarlog/zarlog/internal/demo"
)

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zarlog demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: zarlog demo [--games N] [--concurrency N] [--http ADDR] [--data DIR] [--drand-relay URL]... [--exit | --continuous] [-v]")
		fmt.Fprintln(stderr, "\nRun everything on this machine: an embedded NATS server, the ledger in a fresh folder under DIR")
		fmt.Fprintln(stderr, "with a fresh log key, the HTTP read API and audit pages, and a bot backend playing real games of")
		fmt.Fprintln(stderr, "the three dice schemes through the SDK. Each finished game's proof bundle is fetched over HTTP")
		fmt.Fprintln(stderr, "and verified. Then it prints the pages to open and serves them, quietly, until Ctrl-C (exit 0);")
		fmt.Fprintln(stderr, "with --continuous the bot goes on playing a game every "+demo.Pause.String()+"; with --exit it stops at once.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	var (
		cfg     demo.Config
		relays  repeated
		verbose bool
	)
	fs.IntVar(&cfg.Games, "games", demo.DefaultGames, "how many games the bot plays and the demo verifies")
	fs.IntVar(&cfg.Concurrency, "concurrency", demo.DefaultConcurrency, "how many games are played at once")
	fs.StringVar(&cfg.HTTPAddr, "http", "", "HTTP listen `address` (default "+demo.DefaultHTTPAddr+", or a free port if it is taken)")
	fs.StringVar(&cfg.Dir, "data", demo.DefaultDir, "the `folder` in which each run makes a fresh data directory")
	fs.IntVar(&cfg.Keep, "keep", demo.DefaultKeep, "keep the newest `N` run directories in the folder, delete older ones (-1: keep all)")
	fs.Var(&relays, "drand-relay", "a drand HTTP relay `URL` for live quicknet rounds (repeatable; default: replay a recorded round offline)")
	fs.BoolVar(&cfg.Exit, "exit", false, "stop once the games are published and verified; exit 0 only if every one verified")
	fs.BoolVar(&cfg.Continuous, "continuous", false, "after the games, keep the bot playing (and reporting) a game every "+demo.Pause.String()+" until Ctrl-C")
	fs.BoolVar(&verbose, "v", false, "show the service's logs (info level) on standard error; without -v only errors")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	if cfg.Games < 1 || cfg.Concurrency < 1 {
		fmt.Fprintln(stderr, "zarlog demo: --games and --concurrency must be at least 1")
		return 2
	}
	if cfg.Exit && cfg.Continuous {
		fmt.Fprintln(stderr, "zarlog demo: --exit stops once the games are verified, --continuous keeps playing: give one of them")
		return 2
	}
	cfg.Relays = relays
	// The embedded nats-server warns about the in-process ledger user's
	// random password; the demo shows errors only, unless -v.
	level := slog.LevelError
	if verbose {
		level = slog.LevelInfo
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	cfg.Out = stdout
	res, err := demo.Run(ctx, cfg)
	if err != nil && !(ctx.Err() != nil && errors.Is(err, ctx.Err())) {
		fmt.Fprintln(stderr, "zarlog demo:", err)
		return 1
	}
	if !res.OK() {
		return 1
	}
	return 0
}
