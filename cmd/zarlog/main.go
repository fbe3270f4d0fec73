// Command zarlog runs the zarlog ledger and its companions.
//
//	zarlog serve    run the ledger: NATS ingest, Pebble log, HTTP publisher
//	zarlog demo     run everything locally with bot backends playing real games
//	zarlog emit     publish JSON-lines events from a file or stdin
//	zarlog keygen   create a log signing key and print its verifier key
//	zarlog mirror   follow a log over HTTP and serve a verified read-only copy
//	zarlog audit    verify every finished game of a log, detect split views
//	zarlog witness  cosign checkpoints (C2SP tlog-witness)
//	zarlog bench    measure ingest throughput, latency and proof sizes
//	zarlog rejected read the rejected store of a running service
//
// Each subcommand is in its own file: it parses its flags into a config and
// calls into the packages that do the work.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// A command is one zarlog subcommand. run parses args (without the
// subcommand name) and returns the process exit code.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() map[string]command {
	return map[string]command{
		"serve":    {"run the ledger: NATS ingest, Pebble log, HTTP publisher", runServe},
		"demo":     {"run everything locally with bot backends playing real games", runDemo},
		"emit":     {"publish JSON-lines events from a file or stdin", runEmit},
		"keygen":   {"create a log signing key and print its verifier key", runKeygen},
		"mirror":   {"follow a log over HTTP and serve a verified read-only copy", runMirror},
		"audit":    {"verify every finished game of a log and detect split views", runAudit},
		"witness":  {"cosign checkpoints (C2SP tlog-witness)", runWitness},
		"bench":    {"measure ingest throughput, latency and proof sizes", runBench},
		"rejected": {"read the rejected store of a running service (its admin listener)", runRejected},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr, cmds)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "zarlog: unknown command %q\n\n", args[0])
		usage(stderr, cmds)
		return 2
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: zarlog <command> [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'zarlog <command> -h' for a command's flags.")
}
