package main

import (
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
