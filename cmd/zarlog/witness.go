package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"

	"github.com/zarlog/zarlog/witness"
)

func runWitness(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zarlog witness", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: zarlog witness --data DIR --http ADDR --config FILE [--key FILE] [--init --name NAME]")
		fmt.Fprintln(stderr, "\nCosign the checkpoints of the logs listed in FILE (C2SP tlog-witness add-checkpoint).")
		fmt.Fprintln(stderr, "FILE holds C2SP tlog-policy lines \"log <vkey> [<url>]\"; see docs/WITNESS.md.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	var cfg witness.ServeConfig
	fs.StringVar(&cfg.Dir, "data", "", "data `directory`: the latest cosigned checkpoints, evidence files, the key by default")
	fs.StringVar(&cfg.Addr, "http", "localhost:8090", "HTTP listen `address` (port 0: any free port)")
	fs.StringVar(&cfg.LogsFile, "config", "", "`file` listing the logs to witness, as tlog-policy log lines")
	fs.StringVar(&cfg.KeyFile, "key", "", "witness key `file` (default DIR/witness.key)")
	fs.BoolVar(&cfg.Init, "init", false, "create the key file if it does not exist (mode 0600)")
	fs.StringVar(&cfg.Name, "name", "", "key `name` of a key created by --init: a schema-less URL such as witness.example/w1")
	var logs logFlags
	logs.register(fs)
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 || cfg.Dir == "" || cfg.LogsFile == "" {
		fs.Usage()
		return 2
	}
	logger, err := logs.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "zarlog witness:", err)
		return 2
	}
	cfg.Logger = logger
	cfg.Ready = func(info witness.Info) {
		if info.KeyCreated {
			fmt.Fprintln(stdout, "key", info.KeyFile, "created")
		} else {
			fmt.Fprintln(stdout, "key", info.KeyFile)
		}
		fmt.Fprintln(stdout, "vkey", info.VerifierKey)
		fmt.Fprintln(stdout, "add-checkpoint", info.AddCheckpointURL)
		origins := make([]string, 0, len(info.CheckpointURLs))
		for o := range info.CheckpointURLs {
			origins = append(origins, o)
		}
		sort.Strings(origins)
		for _, o := range origins {
			fmt.Fprintln(stdout, "checkpoint", info.CheckpointURLs[o], o)
		}
		fmt.Fprintln(stdout, "metrics", info.MetricsURL)
		fmt.Fprintln(stdout, "healthz", info.HealthURL)
	}
	if err := witness.Serve(ctx, cfg); err != nil {
		fmt.Fprintln(stderr, "zarlog witness:", err)
		return 1
	}
	return 0
}
