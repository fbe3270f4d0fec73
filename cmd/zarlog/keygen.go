package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// keygenConfig is what `zarlog keygen` was asked to do.
type keygenConfig struct {
	origin  string // the log's origin, for a checkpoint signer key
	emitter string // an emitter id, for an event signer key
	out     string // the signer key file
}

func runKeygen(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zarlog keygen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg keygenConfig
	fs.StringVar(&cfg.origin, "origin", "", "make the log's checkpoint key for this origin (a key name: no spaces or '+')")
	fs.StringVar(&cfg.emitter, "emitter", "", "make an emitter's event signing key for this emitter id instead")
	fs.StringVar(&cfg.out, "out", "", "the file to write the signer key to (mode 0600; never overwritten)\n(default log.key, or EMITTER.key with --emitter)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: zarlog keygen --origin NAME [--out FILE]")
		fmt.Fprintln(stderr, "       zarlog keygen --emitter ID [--out FILE]")
		fmt.Fprintln(stderr, "\nWrites a new Ed25519 signer key (C2SP signed-note format) and prints its verifier key.")
		fmt.Fprintln(stderr, "The log's verifier key is what auditors pin; an emitter's goes into the ledger's emitter keyring.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 0 || (cfg.origin == "") == (cfg.emitter == "") {
		fs.Usage()
		return 2
	}
	vkey, err := keygen(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "zarlog keygen: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, vkey)
	return 0
}

// keygen makes the key pair, writes the signer key and returns the verifier
// key.
func keygen(cfg keygenConfig) (string, error) {
	name, out := cfg.origin, cfg.out
	if cfg.emitter != "" {
		if !events.ValidEmitter(cfg.emitter) {
			return "", fmt.Errorf("emitter id %q is not of the form [a-z0-9][a-z0-9-]{0,62}", cfg.emitter)
		}
		name = cfg.emitter
		if out == "" {
			out = cfg.emitter + ".key"
		}
	} else if out == "" {
		out = "log.key"
	}
	skey, vkey, err := merkle.GenerateKey(rand.Reader, name)
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("%s exists: refusing to overwrite a key", out)
	}
	if err != nil {
		return "", err
	}
	_, err = fmt.Fprintln(f, skey)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out)
		return "", fmt.Errorf("writing %s: %w", out, err)
	}
	return vkey, nil
}
