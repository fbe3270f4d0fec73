package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/zarlog/zarlog/audit"
	"github.com/zarlog/zarlog/follow"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/wire"
)

func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zarlog audit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: zarlog audit --from URL --log-key VKEY [--data DIR] [--once] [--witness-policy FILE] [--evidence-dir DIR]")
		fmt.Fprintln(stderr, "                    [--also URL]... [--nats URL [--nats-creds FILE]] [--http ADDR] [--poll D] [--bundle-grace D]\n"+
			"                    [--max-size N] [--max-disk BYTES]")
		fmt.Fprintln(stderr, "\nFollow a zarlog log, verify every finished game's proof bundle and every signed checkpoint seen against")
		fmt.Fprintln(stderr, "a verified copy of the log; keep evidence of split views (docs/WATCHERS.md).")
		fmt.Fprintln(stderr, "--once: catch up, verify everything, print what was found; exit 0 if all is good, 1 if a problem was")
		fmt.Fprintln(stderr, "found or the log could not be audited, 2 for bad flags.")
		fmt.Fprintln(stderr, "\n       zarlog audit --check-evidence FILE --log-key VKEY")
		fmt.Fprintln(stderr, "\nCheck an evidence file of a watcher: exit 0 if it holds (it says whether it proves a split view by")
		fmt.Fprintln(stderr, "itself or points at one), 1 if it does not show what it claims, 2 if it is not an evidence file.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	var (
		cfg        audit.RunConfig
		policyFile string
		root       string
		also       repeated
		logs       logFlags
	)
	fs.StringVar(&cfg.From, "from", "", "the log's tlog-tiles `URL` prefix (its /checkpoint, /tile/ and /games/ are under it)")
	fs.StringVar(&cfg.LogKey, "log-key", "", "the log's checkpoint verifier `key` (vkey)")
	fs.StringVar(&cfg.Dir, "data", "", "data `directory` (created, mode 0700) to keep the verified copy and the audit's state;\nwithout it everything is kept in memory and the next run starts over")
	fs.BoolVar(&cfg.Once, "once", false, "catch up, verify everything, and exit (0 all good, 1 a problem found)")
	fs.StringVar(&policyFile, "witness-policy", "", "C2SP tlog-policy `file`: checkpoints and bundles must carry its witness quorum")
	fs.StringVar(&cfg.EvidenceDir, "evidence-dir", "", "`directory` for evidence files (default DIR/evidence, or ./zarlog-evidence without --data)")
	fs.Var(&also, "also", "another source of the log's signed checkpoints (a mirror's `URL` prefix, a witness's monitoring prefix); repeatable")
	fs.StringVar(&cfg.NATS, "nats", "", "verify the proof bundles announced on the log's NATS at `URL`")
	fs.StringVar(&cfg.NATSCreds, "nats-creds", "", "NATS credentials `file` (with --nats)")
	fs.StringVar(&root, "subject-root", wire.DefaultRoot, "NATS subject `root`")
	fs.StringVar(&cfg.HTTPAddr, "http", "", "serve /metrics and /healthz at `address` (port 0: any free port)")
	fs.DurationVar(&cfg.Poll, "poll", audit.DefaultPoll, "time between passes (follow mode)")
	fs.DurationVar(&cfg.BundleGrace, "bundle-grace", audit.DefaultBundleGrace, "how long a finished game may go without its proof bundle before that is a problem")
	fs.DurationVar(&cfg.WitnessGrace, "witness-grace", audit.DefaultWitnessGrace, "how long the log's witnessed checkpoint may stay behind a log that grew, and a game's bundle not witnessed, before that is a problem")
	fs.IntVar(&cfg.Concurrency, "concurrency", 8, "entry bundles fetched at once")
	fs.IntVar(&cfg.Chunk, "batch", 16, "entry bundles stored per durable write while catching up (a killed process fetches at most this many again, and those in flight)")
	fs.Uint64Var(&cfg.MaxSize, "max-size", follow.DefaultMaxSize, "the largest tree `size` accepted: a larger checkpoint is a problem (log-fault), found before anything is fetched")
	fs.Int64Var(&cfg.MaxDisk, "max-disk", 0, "the verified copy's budget in `bytes` (DIR/log, or memory without --data): past it the catch-up stops and says so (default 100 GiB with --data, 1 GiB without; -1: none)")
	logs.register(fs)
	checkFile := fs.String("check-evidence", "", "check an evidence `file` with --log-key instead of auditing, and say what it proves")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *checkFile != "" && cfg.LogKey != "" && fs.NArg() == 0 {
		return checkEvidence(*checkFile, cfg.LogKey, stdout, stderr)
	}
	if fs.NArg() > 0 || cfg.From == "" || cfg.LogKey == "" {
		fs.Usage()
		return 2
	}
	if err := checkFrom(cfg.From); err != nil {
		fmt.Fprintln(stderr, "zarlog audit:", err)
		return 2
	}
	cfg.Also = also
	cfg.Subjects = wire.Subjects{Root: root}
	if err := cfg.Subjects.Check(); err != nil {
		fmt.Fprintln(stderr, "zarlog audit: --subject-root:", err)
		return 2
	}
	if policyFile != "" {
		b, err := os.ReadFile(policyFile)
		if err != nil {
			fmt.Fprintln(stderr, "zarlog audit: --witness-policy:", err)
			return 2
		}
		cfg.WitnessPolicy = b
	}
	logger, err := logs.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "zarlog audit:", err)
		return 2
	}
	cfg.Logger = logger
	cfg.Progress = newProgress(stderr, cfg.Logger).Report
	cfg.Ready = func(info audit.Info) {
		for _, l := range info.Lines() {
			fmt.Fprintln(stdout, l)
		}
	}
	if !cfg.Once {
		cfg.Found = func(p audit.Problem) { fmt.Fprintln(stdout, "PROBLEM", p) }
	}
	sum, err := audit.Run(ctx, cfg)
	if err != nil {
		// Said once, and nothing is claimed verified.
		fmt.Fprintln(stderr, "zarlog audit: FAIL: the log could not be audited:", err)
		return 1
	}
	if cfg.Once {
		fmt.Fprintf(stdout, "checkpoint %d verified\n", sum.Checkpoint.Size)
		fmt.Fprintf(stdout, "games %d finished\n", sum.Finished)
		if sum.NotWitnessed > 0 {
			fmt.Fprintf(stdout, "games %d not witnessed yet (the log's witnessing moves: a later run decides them)\n", sum.NotWitnessed)
		}
		for _, p := range sum.Problems {
			fmt.Fprintln(stdout, "PROBLEM", p)
		}
	}
	switch {
	case cfg.Once && len(sum.Problems) > 0:
		fmt.Fprintf(stdout, "FAIL: %d problems found\n", len(sum.Problems))
		return 1
	}
	if cfg.Once {
		fmt.Fprintln(stdout, "ok: no problem found")
	}
	return 0
}

// checkEvidence checks an evidence file (follow.CheckEvidence) and says
// what it shows.
func checkEvidence(path, vkey string, stdout, stderr io.Writer) int {
	key, err := merkle.NewVerifier(vkey)
	if err != nil {
		fmt.Fprintln(stderr, "zarlog audit: --log-key:", err)
		return 2
	}
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(stderr, "zarlog audit:", err)
		return 2
	}
	e, err := follow.ParseEvidence(data)
	if err != nil {
		fmt.Fprintln(stderr, "zarlog audit:", path+":", err)
		return 2
	}
	proven, err := follow.CheckEvidence(e, key)
	if err != nil {
		fmt.Fprintf(stdout, "INVALID %s: %s\n", e.Kind, err)
		return 1
	}
	if proven {
		fmt.Fprintf(stdout, "PROVEN %s: the log %s signed two checkpoints that cannot both be true (sizes %d and %d)\n",
			e.Kind, e.Origin, e.Verified.Size, e.Conflicting.Size)
	} else {
		fmt.Fprintf(stdout, "LEAD %s: the signatures hold; the claim rests on what the log served: %s\n", e.Kind, e.Error)
	}
	return 0
}
