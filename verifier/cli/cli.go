// Package cli is the command line of zarlog-verify, the offline verifier of
// dice-proof-v1 evidence files and proof bundles, and of C2SP tlog-proof
// files of single events (docs/SCHEMES.md, "The verifier"):
//
//	zarlog-verify [--json] [--lang en|tr|ar] [--expected-commitment HEX|SEALCODE]
//	    [--log-key VKEY] [--witness-policy FILE] [--emitter-key VKEY]... [--leaf FILE] FILE|-
//
// A player's export (verifier.IsExport: every bundle of one player, as
// JSON lines) is checked whole: one verdict per game and a summary.
//
// Run parses the arguments into a Config and calls Execute; cmd/zarlog-verify
// only wires the process to Run. Exit codes: 0 every check that applies
// passed, 1 the proof is invalid, 2 bad input (unreadable file, not JSON,
// wrong types, unknown scheme, bad flag). Flags may come before or after
// the file; "--" ends the flags.
package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/verifier"
)

// A Config is a parsed command line.
type Config struct {
	File    string           // the evidence file; "-" is standard input
	JSON    bool             // print one JSON object instead of text
	Lang    verifier.Lang    // language of every message; English if not given
	Options verifier.Options // --expected-commitment, --log-key, --emitter-key; the policy once loaded
	// PolicyFile is the file of --witness-policy, "" if not given. Run
	// reads it into Options.WitnessPolicy.
	PolicyFile string
	// LeafFile is the file of --leaf (an event's bytes, for a tlog-proof
	// without an extra line), "" if not given. Run reads it into
	// Options.Leaf.
	LeafFile string
}

// A UsageError is a bad command line; its message is translatable.
type UsageError struct {
	Lang verifier.Lang // the language asked for, as far as it could be read
	id   cliMsg
	args []any
}

func (e *UsageError) Error() string { return e.In(verifier.English) }

// In renders the error in language l.
func (e *UsageError) In(l verifier.Lang) string { return render(l, e.id, e.args...) }

// errHelp is returned by ParseArgs for -h and --help.
type errHelp struct{ lang verifier.Lang }

func (errHelp) Error() string { return "help requested" }

// ParseArgs parses the arguments (without the program name), in English
// unless --lang says otherwise. It returns a *UsageError for a bad command
// line.
func ParseArgs(args []string) (Config, error) { return ParseArgsIn(args, verifier.English) }

// ParseArgsIn is ParseArgs with def as the language when --lang is absent
// (Run takes it from the environment: LangFromEnv).
func ParseArgsIn(args []string, def verifier.Lang) (Config, error) {
	cfg := Config{Lang: def}
	// The language first, so that every later error is in it.
	for i := 0; i < len(args); i++ {
		if args[i] == "--" {
			break
		}
		name, val, hasVal := splitFlag(args[i])
		if name == "lang" {
			if !hasVal && i+1 < len(args) {
				val, hasVal = args[i+1], true
			}
			if l, ok := verifier.ParseLang(val); hasVal && ok {
				cfg.Lang = l
			}
		}
	}
	bad := func(id cliMsg, a ...any) (Config, error) {
		return Config{}, &UsageError{Lang: cfg.Lang, id: id, args: a}
	}
	var files, emitterKeys []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			files = append(files, args[i+1:]...)
			break
		}
		name, val, hasVal := splitFlag(a)
		if name == "" { // a file, or "-"
			files = append(files, a)
			continue
		}
		value := func() (string, bool) {
			if hasVal {
				return val, true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		switch name {
		case "h", "help":
			return Config{}, errHelp{cfg.Lang}
		case "json":
			switch {
			case !hasVal || val == "true":
				cfg.JSON = true
			case val == "false":
				cfg.JSON = false
			default:
				return bad(mBadBool, a)
			}
		case "lang":
			v, ok := value()
			if !ok {
				return bad(mNoValue, a)
			}
			l, ok := verifier.ParseLang(v)
			if !ok {
				return bad(mBadLang, v)
			}
			cfg.Lang = l
		case "expected-commitment":
			v, ok := value()
			if !ok {
				return bad(mNoValue, a)
			}
			e, err := verifier.ParseExpected(v)
			if err != nil {
				return bad(mBadExpected, v)
			}
			cfg.Options.Expected = e
		case "log-key":
			v, ok := value()
			if !ok {
				return bad(mNoValue, a)
			}
			k, err := verifier.ParseLogKey(v)
			if err != nil {
				return bad(mBadLogKey, v)
			}
			cfg.Options.LogKey = k
		case "emitter-key":
			v, ok := value()
			if !ok {
				return bad(mNoValue, a)
			}
			if _, err := verifier.ParseEmitterKeys(v); err != nil {
				return bad(mBadEmitterKey, v)
			}
			emitterKeys = append(emitterKeys, v)
		case "witness-policy":
			v, ok := value()
			if !ok || v == "" {
				return bad(mNoValue, a)
			}
			cfg.PolicyFile = v
		case "leaf":
			v, ok := value()
			if !ok || v == "" {
				return bad(mNoValue, a)
			}
			cfg.LeafFile = v
		default:
			return bad(mUnknownFlag, a)
		}
	}
	if len(emitterKeys) > 0 {
		k, err := verifier.ParseEmitterKeys(emitterKeys...)
		if err != nil { // each key parsed alone: the same key twice
			return bad(mBadEmitterKeys)
		}
		cfg.Options.EmitterKeys = k
	}
	switch len(files) {
	case 0:
		return bad(mNoFile)
	case 1:
		cfg.File = files[0]
	default:
		return bad(mTooManyFiles, len(files))
	}
	return cfg, nil
}

// splitFlag splits "-name", "--name" or "--name=value". A plain word and
// "-" are not flags (name is empty).
func splitFlag(a string) (name, val string, hasVal bool) {
	if len(a) < 2 || a[0] != '-' {
		return "", "", false
	}
	s := strings.TrimPrefix(a[1:], "-")
	if s == "" {
		return "", "", false
	}
	name, val, hasVal = strings.Cut(s, "=")
	return name, val, hasVal
}

// Run runs zarlog-verify with the given arguments (without the program
// name) and returns the process exit code. Help goes to stdout (exit 0);
// usage errors go to stderr (exit 2).
//
// Without --lang the language is the environment's (LangFromEnv).
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := ParseArgsIn(args, LangFromEnv(os.Getenv))
	if h, ok := err.(errHelp); ok {
		io.WriteString(stdout, render(h.lang, mUsage))
		return 0
	}
	if err == nil && cfg.PolicyFile != "" {
		cfg.Options.WitnessPolicy, err = loadPolicy(cfg)
	}
	if err == nil && cfg.LeafFile != "" {
		cfg.Options.Leaf, err = loadLeaf(cfg)
	}
	if err != nil {
		ue := err.(*UsageError)
		fmt.Fprintf(stderr, "zarlog-verify: %s\n\n%s", ue.In(ue.Lang), render(ue.Lang, mUsage))
		return 2
	}
	return Execute(ctx, cfg, stdin, stdout)
}

// maxPolicySize bounds the --witness-policy file read.
const maxPolicySize = 1 << 20

// loadLeaf reads the --leaf file: the event's bytes, without the one
// trailing newline a text editor or echo adds (canonical JSON never ends in
// one).
func loadLeaf(cfg Config) ([]byte, error) {
	f, err := os.Open(cfg.LeafFile)
	if err != nil {
		return nil, &UsageError{Lang: cfg.Lang, id: mLeafUnreadable, args: []any{cfg.LeafFile, err.Error()}}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, events.MaxEventSize+2))
	if err != nil {
		return nil, &UsageError{Lang: cfg.Lang, id: mLeafUnreadable, args: []any{cfg.LeafFile, err.Error()}}
	}
	b = bytes.TrimSuffix(bytes.TrimSuffix(b, []byte("\n")), []byte("\r"))
	return b, nil
}

// loadPolicy reads and parses the --witness-policy file.
func loadPolicy(cfg Config) (*merkle.Policy, error) {
	f, err := os.Open(cfg.PolicyFile)
	if err != nil {
		return nil, &UsageError{Lang: cfg.Lang, id: mPolicyUnreadable, args: []any{cfg.PolicyFile, err.Error()}}
	}
	defer f.Close()
	text, err := io.ReadAll(io.LimitReader(f, maxPolicySize+1))
	if err != nil {
		return nil, &UsageError{Lang: cfg.Lang, id: mPolicyUnreadable, args: []any{cfg.PolicyFile, err.Error()}}
	}
	p, err := verifier.ParseWitnessPolicy(text)
	if err != nil {
		return nil, &UsageError{Lang: cfg.Lang, id: mBadPolicy, args: []any{cfg.PolicyFile, err.Error()}}
	}
	return p, nil
}

// Execute verifies the file named by cfg — an evidence file, a proof
// bundle, or a C2SP tlog-proof of one event (verifier.Verify tells them
// apart) — and writes the report to stdout, as text or as one JSON object. It returns the report's exit code; a file
// that cannot be read is bad input (2) and is reported like any other.
func Execute(ctx context.Context, cfg Config, stdin io.Reader, stdout io.Writer) int {
	var rep *verifier.Report
	data, err := readInput(ctx, cfg.File, stdin)
	var pe *fs.PathError
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist) && errors.As(err, &pe):
		rep = verifier.FileErrorReport(verifier.FileMissing, pe.Path)
	case errors.Is(err, fs.ErrPermission) && errors.As(err, &pe):
		rep = verifier.FileErrorReport(verifier.FileNotAllowed, pe.Path)
	case errors.Is(err, errIsDirectory) && errors.As(err, &pe):
		rep = verifier.FileErrorReport(verifier.FileIsFolder, pe.Path)
	default:
		rep = verifier.InputErrorReport(err)
	}
	if rep == nil && verifier.IsExport(data) {
		x := verifier.VerifyExport(data, cfg.Options)
		if cfg.JSON {
			stdout.Write(x.JSON(cfg.Lang))
		} else {
			io.WriteString(stdout, x.Text(cfg.Lang))
		}
		return x.Exit()
	}
	if rep == nil {
		rep = verifier.Verify(data, cfg.Options)
	}
	if cfg.JSON {
		stdout.Write(rep.JSON(cfg.Lang))
	} else {
		io.WriteString(stdout, rep.Text(cfg.Lang))
	}
	return rep.Exit()
}

// errIsDirectory is the error of reading a folder as a file.
var errIsDirectory = errors.New("is a directory")

// readInput reads at most one byte more than verifier.MaxExportSize (a
// player's export holds many bundles; a single evidence file larger than
// verifier.MaxEvidenceSize is reported as such by Parse), so that an
// oversized file is reported as such rather than read whole.
func readInput(ctx context.Context, file string, stdin io.Reader) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return nil, &fs.PathError{Op: "read", Path: file, Err: errIsDirectory}
		}
		r = f
	}
	return io.ReadAll(io.LimitReader(r, verifier.MaxExportSize+1))
}

// LangFromEnv returns the language of the POSIX locale variables, in their
// order of precedence: LC_ALL, then LC_MESSAGES, then LANG, the first one
// set deciding ("tr_TR.UTF-8" is Turkish, "ar_EG.UTF-8" Arabic). A locale
// zarlog-verify has no messages for, "C" and "POSIX" included, is English.
func LangFromEnv(getenv func(string) string) verifier.Lang {
	for _, name := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		v := getenv(name)
		if v == "" {
			continue
		}
		lang, _, _ := strings.Cut(v, ".")
		lang, _, _ = strings.Cut(lang, "@")
		lang, _, _ = strings.Cut(lang, "_")
		if l, ok := verifier.ParseLang(strings.ToLower(lang)); ok {
			return l
		}
		return verifier.English
	}
	return verifier.English
}
