// Command zarlog-verify checks a dice-proof-v1 evidence file or proof bundle
// offline: it recomputes the commitment and every die, checks the drand
// anchor and the roll-sequence rules, and for a bundle every leaf's
// inclusion, the checkpoint's signature, the order of the logged events and
// that every checked value is the logged one; it says in English, Turkish or
// Arabic what the evidence proves and what it does not. It also checks a
// C2SP tlog-proof of one event. See docs/SCHEMES.md and docs/FORMATS.md §3.
//
//	zarlog-verify [--json] [--lang en|tr|ar] [--expected-commitment HEX|SEALCODE]
//	    [--log-key VKEY] [--witness-policy FILE] [--emitter-key VKEY]... FILE|-
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
