// Command zarlog-verify checks a dice-proof-v1 evidence file offline: it
// recomputes the commitment and every die, checks the drand anchor and the
// roll-sequence rules, and says in English, Turkish or Arabic what the
// evidence proves and what it does not. See docs/SCHEMES.md.
//
//	zarlog-verify [--json] [--lang en|tr|ar] [--expected-commitment HEX|SEALCODE] [--log-key VKEY] FILE|-
//
// Exit codes: 0 every check that applies passed, 1 the proof is invalid,
// 2 bad input. It imports neither NATS nor Pebble nor the ledger.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/zarlog/zarlog/verifier/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
