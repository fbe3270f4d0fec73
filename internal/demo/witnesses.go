package demo

// The demo's witnesses: a zarlog witness in this process and torchwood's
// litewitness beside it (package internal/litewitness), the log's
// checkpoints cosigned by both every WitnessInterval.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zarlog/zarlog/internal/litewitness"
	"github.com/zarlog/zarlog/witness"
)

// A demoWitness is one of the demo's witnesses, as the report names it.
type demoWitness struct {
	name, vkey, url string
	what            string // what it is, in words
}

// startWitnesses starts the demo's two witnesses of the log with verifier
// key logVkey, in dir, and returns them, the policy that needs both, a
// note to print if the second one is not litewitness, and a function that
// stops them.
func startWitnesses(ctx context.Context, dir, logVkey string) (ws []demoWitness, policy []byte, note string, stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	var stops []func()
	stop = func() {
		cancel()
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	zw := func(i int) (demoWitness, error) {
		wdir := filepath.Join(dir, fmt.Sprintf("witness%d", i))
		if err := os.MkdirAll(wdir, 0o700); err != nil {
			return demoWitness{}, err
		}
		logs := filepath.Join(wdir, "logs")
		if err := os.WriteFile(logs, []byte("log "+logVkey+"\n"), 0o600); err != nil {
			return demoWitness{}, err
		}
		ready := make(chan witness.Info, 1)
		done := make(chan error, 1)
		name := fmt.Sprintf("witness%d.zarlog.localhost", i)
		go func() {
			done <- witness.Serve(ctx, witness.ServeConfig{Dir: filepath.Join(wdir, "data"), Addr: "127.0.0.1:0", LogsFile: logs,
				Init: true, Name: name, Ready: func(i witness.Info) { ready <- i }})
		}()
		select {
		case i := <-ready:
			stops = append(stops, func() { <-done })
			return demoWitness{name: name, vkey: i.VerifierKey, url: strings.TrimSuffix(i.AddCheckpointURL, "/add-checkpoint"),
				what: "a zarlog witness, in this process"}, nil
		case err := <-done:
			return demoWitness{}, fmt.Errorf("the zarlog witness: %w", err)
		}
	}
	w0, err := zw(0)
	if err != nil {
		stop()
		return nil, nil, "", nil, err
	}
	ws = append(ws, w0)
	lw, lerr := litewitness.Start(ctx, litewitness.Config{Dir: filepath.Join(dir, "litewitness"), Name: "litewitness.zarlog.localhost", Logs: []string{logVkey}})
	if lerr == nil {
		stops = append(stops, func() { lw.Stop() })
		ws = append(ws, demoWitness{name: "litewitness.zarlog.localhost", vkey: lw.VerifierKey, url: lw.URL,
			what: litewitness.Version + "'s litewitness, beside it: another implementation of C2SP tlog-witness"})
	} else {
		note = fmt.Sprintf("torchwood's litewitness could not be started (%v): a second zarlog witness instead", lerr)
		w1, err := zw(1)
		if err != nil {
			stop()
			return nil, nil, "", nil, err
		}
		ws = append(ws, w1)
	}
	var b strings.Builder
	var names []string
	for i, w := range ws {
		fmt.Fprintf(&b, "witness W%d %s %s\n", i, w.vkey, w.url)
		names = append(names, fmt.Sprintf("W%d", i))
	}
	fmt.Fprintf(&b, "group both all %s\nquorum both\n", strings.Join(names, " "))
	return ws, []byte(b.String()), note, stop, nil
}
