package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// logFlags are the logging flags every long-running subcommand takes:
// --log-format text|json, --log-level debug|info|warn|error, and -v (the
// same as --log-level debug).
type logFlags struct {
	format, level string
	verbose       bool
}

func (l *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.format, "log-format", "text", "log `format` on standard error: text (logfmt) or json (one object per line)")
	fs.StringVar(&l.level, "log-level", "info", "the least `level` logged: debug, info, warn or error")
	fs.BoolVar(&l.verbose, "v", false, "log debug messages (--log-level debug)")
}

// logger returns the logger the flags ask for, writing to w, or an error
// naming the bad flag.
func (l *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(l.level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", l.level)
	}
	if l.verbose {
		level = slog.LevelDebug
	}
	o := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(l.format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, o)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, o)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", l.format)
}

// parseFlags parses args with fs. With -h it prints fs's whole usage and
// returns (0, false); on a bad flag it prints the flag package's one-line
// error and a pointer to -h (not the whole usage) and returns (2, false).
// Every subcommand parses its flags with it, so that all share one
// convention: exit 2 for usage errors, 1 for failures.
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	full := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = full
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		full()
		return 0, false
	}
	fmt.Fprintf(fs.Output(), "run '%s -h' to see its flags\n", fs.Name())
	return 2, false
}
