// Command torchwood-verify checks C2SP tlog-proof files
// (https://c2sp.org/tlog-proof) with torchwood's VerifyProof
// (filippo.io/torchwood v0.10.0), an implementation independent of zarlog's:
// zarlog's tests run it on the receipts the SDK returns
// (TestTorchwoodVerifyProof in package sdk). It is a module of its own
// because torchwood v0.10.0 needs Go 1.27, newer than zarlog's go.mod: the
// test builds it with GOTOOLCHAIN=go1.27.3.
//
// Usage:
//
//	torchwood-verify VKEY LEAF PROOF [LEAF PROOF]...
//
// VKEY is the log's verifier key: the policy is torchwood.ParsePolicy of
// "log VKEY" with "quorum none" (the log's signature and origin). Each LEAF
// is a file of the entry's bytes, each PROOF a tlog-proof file; the proof is
// checked for tlog.RecordHash of the leaf. It prints one line per pair, "ok"
// or "fail: " and torchwood's error, and exits 1 if any pair failed, 2 on bad
// usage.
package main

import (
	"fmt"
	"os"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/tlog"
)

func main() {
	args := os.Args[1:]
	if len(args) < 3 || len(args)%2 != 1 {
		fmt.Fprintln(os.Stderr, "usage: torchwood-verify VKEY LEAF PROOF [LEAF PROOF]...")
		os.Exit(2)
	}
	policy, err := torchwood.ParsePolicy([]byte("log " + args[0] + "\nquorum none\n"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "torchwood-verify: the policy:", err)
		os.Exit(2)
	}
	failed := false
	for i := 1; i < len(args); i += 2 {
		leaf, err := os.ReadFile(args[i])
		if err != nil {
			fmt.Fprintln(os.Stderr, "torchwood-verify:", err)
			os.Exit(2)
		}
		proof, err := os.ReadFile(args[i+1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "torchwood-verify:", err)
			os.Exit(2)
		}
		if err := torchwood.VerifyProof(policy, tlog.RecordHash(leaf), proof); err != nil {
			fmt.Printf("fail: %s\n", err)
			failed = true
			continue
		}
		fmt.Println("ok")
	}
	if failed {
		os.Exit(1)
	}
}
