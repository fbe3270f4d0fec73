package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nats-io/nkeys"

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
		fmt.Fprintln(stderr, "The log's verifier key is what auditors pin. With --emitter it also writes the emitter's")
		fmt.Fprintln(stderr, "NATS credentials next to the key (FILE without .key, plus .nkey: a user nkey seed), and")
		fmt.Fprintln(stderr, "prints the line for zarlog serve --emitters: the verifier key and the public nkey.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 || (cfg.origin == "") == (cfg.emitter == "") {
		fs.Usage()
		return 2
	}
	res, err := keygen(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "zarlog keygen: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "wrote %s (signer key, mode 0600)\n", res.keyFile)
	if res.nkeyFile != "" {
		fmt.Fprintf(stderr, "wrote %s (NATS user nkey seed, mode 0600: zarlog emit --nkey, sdk.Dial with nats.NkeyOptionFromSeed)\n", res.nkeyFile)
		fmt.Fprintf(stderr, "add the line below to the file of zarlog serve --emitters\n")
		fmt.Fprintln(stdout, res.vkey, res.nkey)
		return 0
	}
	fmt.Fprintln(stdout, res.vkey)
	return 0
}

// keygenResult is what keygen wrote.
type keygenResult struct {
	keyFile, vkey  string
	nkeyFile, nkey string // --emitter: the NATS user seed's file and public key
}

// keygen makes the key pair and writes the signer key; for an emitter it
// also makes and writes the emitter's NATS user nkey, a key of its own (the
// event key never signs a NATS server's nonce, so no server can obtain an
// event signature).
func keygen(cfg keygenConfig) (keygenResult, error) {
	name, out := cfg.origin, cfg.out
	if cfg.emitter != "" {
		if !events.ValidEmitter(cfg.emitter) {
			return keygenResult{}, fmt.Errorf("emitter id %q is not of the form [a-z0-9][a-z0-9-]{0,62}", cfg.emitter)
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
		return keygenResult{}, err
	}
	res := keygenResult{keyFile: out, vkey: vkey}
	if cfg.emitter != "" {
		res.nkeyFile = strings.TrimSuffix(out, ".key") + ".nkey"
		if _, err := os.Stat(res.nkeyFile); err == nil {
			return keygenResult{}, fmt.Errorf("%s exists: refusing to overwrite a key", res.nkeyFile)
		}
	}
	if err := writeSecret(out, []byte(skey+"\n")); err != nil {
		return keygenResult{}, err
	}
	if cfg.emitter != "" {
		kp, err := nkeys.CreateUser()
		if err == nil {
			res.nkey, err = kp.PublicKey()
		}
		var seed []byte
		if err == nil {
			seed, err = kp.Seed()
		}
		if err == nil {
			err = writeSecret(res.nkeyFile, append(seed, '\n'))
		}
		if err != nil {
			os.Remove(out)
			return keygenResult{}, fmt.Errorf("the NATS user nkey: %w", err)
		}
	}
	return res, nil
}

// writeSecret creates path with mode 0600 (never overwriting) and syncs it.
func writeSecret(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists: refusing to overwrite a key", path)
	}
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
