// Package faults is zarlog's Jepsen-style fault harness (issue 29): the
// pieces TestJepsen puts together to run a whole deployment under faults
// and check it from the outside.
//
//   - Net: Linux network namespaces on one bridge, joined by veth pairs
//     (`ip netns`, `ip link`), with partitions made by iptables DROP rules
//     inside a namespace (or, without iptables, by taking the host's link
//     down), and cleaned up even after a crashed run (CleanStale).
//   - Proc: a process run inside a namespace (`ip netns exec`, which execs,
//     so the process's pid is the program's), paused with SIGSTOP, resumed
//     with SIGCONT, killed with SIGKILL and started again.
//   - Check: an outside checker of the final log, built on
//     golang.org/x/mod/sumdb/tlog and note (not zarlog's merkle package):
//     every receipted event is in the final log once, at its index, with
//     its bytes; every checkpoint seen is signed by the log's key and
//     consistent with the final tree; no two checkpoints of one size
//     differ.
//
// TestJepsen (faults_test.go) runs three nats-servers (built from the
// module go.mod pins), versitygw, a primary and a standby `zarlog serve
// --storage s3://…` and a backend process that records every
// acknowledgement and receipt, each in its own namespace, under a seeded
// random schedule of partitions, pauses, kills and truncated JetStream
// block files. docs/FAULTS.md reports what it shows.
package faults
