package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/serve"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/wire"
)

func runEmit(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return emit(ctx, args, os.Stdin, stdout, stderr)
}

// emitConfig is what the flags of zarlog emit say.
type emitConfig struct {
	url, emitter, root       string
	creds, nkey, key         string
	tlsCA, tlsCert, tlsKey   string
	wait, noCheck, jsonLines bool
	timeout                  time.Duration
	file                     string
	logKey, receipts         string
}

func emit(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zarlog emit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: zarlog emit --emitter NAME [--nats URL] [--creds FILE | --nkey FILE] [--key FILE] [--tls-ca FILE]")
		fmt.Fprintln(stderr, "                   [--wait [--log-key VKEY] [--receipts DIR]] [FILE|-]")
		fmt.Fprintln(stderr, "\nPublish events, one canonical event (JSON) per line, from FILE or standard input, as emitter NAME")
		fmt.Fprintln(stderr, "on the subject ROOT.events.NAME (docs/NATS.md); with --key, binding events without a sig are signed.")
		fmt.Fprintln(stderr, "Prints one line per event: acknowledged (JetStream's ack), or with --wait logged (its receipt, a")
		fmt.Fprintln(stderr, "C2SP tlog-proof of the line's bytes: leaf index, inclusion proof and signed checkpoint, checked")
		fmt.Fprintln(stderr, "against the line and, with --log-key, the log's signature) or rejected (the ledger's code and")
		fmt.Fprintln(stderr, "reason). Exits 1 if any line failed.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	var c emitConfig
	fs.StringVar(&c.url, "nats", "nats://127.0.0.1:4222", "NATS server `URL`s, comma-separated")
	fs.StringVar(&c.emitter, "emitter", "", "emitter `id` to publish as (the subject token; each event's emitter must be it)")
	fs.StringVar(&c.root, "subject-root", wire.DefaultRoot, "subject `root`")
	fs.StringVar(&c.creds, "creds", "", "NATS credentials `file` (user JWT and nkey seed)")
	fs.StringVar(&c.nkey, "nkey", "", "`file` holding a user nkey seed (SU…): the EMITTER.nkey zarlog keygen --emitter wrote")
	fs.StringVar(&c.key, "key", "", "the emitter's event signer key `file` (zarlog keygen --emitter): sign binding events that have no sig")
	fs.StringVar(&c.tlsCA, "tls-ca", "", "CA certificate `file` to verify the servers")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "client certificate `file` (mutual TLS)")
	fs.StringVar(&c.tlsKey, "tls-key", "", "client key `file` (mutual TLS)")
	fs.BoolVar(&c.wait, "wait", false, "wait for each event's receipt (a tlog-proof of the event, checked) or rejection")
	fs.StringVar(&c.logKey, "log-key", "", "the log's verifier key `VKEY` (zarlog serve prints it): check each receipt's signature too")
	fs.StringVar(&c.receipts, "receipts", "", "with --wait, write each receipt to `DIR`/ID.tlog-proof (zarlog-verify checks it)")
	fs.BoolVar(&c.noCheck, "no-check", false, "publish lines as they are, without checking them as events first")
	fs.BoolVar(&c.jsonLines, "json", false, "print one JSON object per line instead of text")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "how long each event may take to be acknowledged (and, with --wait, logged)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() > 1:
		fmt.Fprintln(stderr, "zarlog emit: one FILE at most")
		fs.Usage()
		return 2
	case fs.NArg() == 1:
		c.file = fs.Arg(0)
	}
	if err := wire.CheckEmitter(c.emitter); err != nil {
		fmt.Fprintln(stderr, "zarlog emit: --emitter:", err)
		return 2
	}
	if c.creds != "" && c.nkey != "" {
		fmt.Fprintln(stderr, "zarlog emit: give --creds or --nkey, not both")
		return 2
	}
	if c.timeout <= 0 {
		fmt.Fprintln(stderr, "zarlog emit: --timeout must be positive")
		return 2
	}
	if (c.logKey != "" || c.receipts != "") && !c.wait {
		fmt.Fprintln(stderr, "zarlog emit: --log-key and --receipts need --wait")
		return 2
	}
	if c.logKey != "" {
		if _, err := merkle.NewVerifier(c.logKey); err != nil {
			fmt.Fprintln(stderr, "zarlog emit: --log-key:", err)
			return 2
		}
	}
	if c.receipts != "" {
		if fi, err := os.Stat(c.receipts); err != nil || !fi.IsDir() {
			fmt.Fprintf(stderr, "zarlog emit: --receipts %s is not a directory\n", c.receipts)
			return 2
		}
	}
	in := stdin
	if c.file != "" && c.file != "-" {
		f, err := os.Open(c.file)
		if err != nil {
			fmt.Fprintln(stderr, "zarlog emit:", err)
			return 2
		}
		defer f.Close()
		in = f
	}
	if err := doEmit(ctx, c, in, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "zarlog emit:", err)
		return 1
	}
	return 0
}

// errLinesFailed says some lines failed (each was reported).
var errLinesFailed = errors.New("lines failed")

func doEmit(ctx context.Context, c emitConfig, in io.Reader, stdout, stderr io.Writer) error {
	var opts []nats.Option
	if c.creds != "" {
		opts = append(opts, nats.UserCredentials(c.creds))
	}
	if c.nkey != "" {
		o, err := nats.NkeyOptionFromSeed(c.nkey)
		if err != nil {
			return fmt.Errorf("reading the nkey seed %s: %w", c.nkey, err)
		}
		opts = append(opts, o)
	}
	if c.tlsCA != "" {
		opts = append(opts, nats.RootCAs(c.tlsCA))
	}
	if c.tlsCert != "" || c.tlsKey != "" {
		opts = append(opts, nats.ClientCert(c.tlsCert, c.tlsKey))
	}
	nc, err := sdk.Dial(c.url, c.emitter, opts...)
	if err != nil {
		return err
	}
	defer nc.Close()
	cfg := sdk.Config{Emitter: c.emitter, Subjects: wire.Subjects{Root: c.root}, AckTimeout: min(5*time.Second, c.timeout)}
	if c.logKey != "" {
		if cfg.LogKey, err = merkle.NewVerifier(c.logKey); err != nil {
			return fmt.Errorf("--log-key: %w", err)
		}
	}
	client, err := sdk.New(nc, cfg)
	if err != nil {
		return err
	}
	defer client.Close()

	var failedLines []int
	report := func(r sdk.LineResult) {
		if r.Receipt != nil && c.receipts != "" {
			if err := writeReceipt(c.receipts, r.Receipt); err != nil {
				r.Err = err
			}
		}
		if r.Err != nil {
			failedLines = append(failedLines, r.Line)
		}
		if c.jsonLines {
			writeJSONResult(stdout, r)
		} else {
			writeTextResult(stdout, r)
		}
	}
	lc := sdk.LinesConfig{NoCheck: c.noCheck, Wait: c.wait, Timeout: c.timeout}
	if c.key != "" {
		b, err := serve.ReadSecretFile(c.key)
		if err != nil {
			return fmt.Errorf("the event key: %w", err)
		}
		s, err := note.NewSigner(strings.TrimSpace(string(b)))
		if err != nil {
			return fmt.Errorf("the event key %s: %w", c.key, err)
		}
		if s.Name() != c.emitter {
			return fmt.Errorf("the event key %s is emitter %q's, publishing as %q", c.key, s.Name(), c.emitter)
		}
		lc.Signer = s
	}
	failed, err := sdk.PublishLines(ctx, client, in, lc, report)
	if err != nil {
		return err
	}
	if failed > 0 {
		lines := make([]string, len(failedLines))
		for i, n := range failedLines {
			lines[i] = fmt.Sprint(n)
		}
		return fmt.Errorf("%d %w (lines %s)", failed, errLinesFailed, strings.Join(lines, ", "))
	}
	return nil
}

// receiptSummary describes a receipt in one line: its checkpoint's origin
// and tree size, and what was checked (the receipt itself is printed by
// --json and written by --receipts).
func receiptSummary(r *sdk.Receipt) string {
	c, err := merkle.ParseSignedCheckpoint(r.Checkpoint)
	if err != nil {
		return "unparsable checkpoint"
	}
	sig := "log signature not checked: no --log-key"
	if r.SignatureChecked {
		sig = "log signature checked"
	}
	return fmt.Sprintf("checkpoint %s, tree size %d; inclusion proof checked, %s", c.Origin, c.Size, sig)
}

// writeReceipt writes a receipt's tlog-proof to dir/<id>.tlog-proof.
func writeReceipt(dir string, r *sdk.Receipt) error {
	b, err := r.Format()
	if err != nil {
		return fmt.Errorf("formatting the receipt of %s: %w", r.EventID, err)
	}
	name := filepath.Join(dir, r.EventID+".tlog-proof")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		return fmt.Errorf("writing the receipt: %w", err)
	}
	return nil
}

func writeTextResult(w io.Writer, r sdk.LineResult) {
	id := r.EventID
	if id == "" {
		id = "-"
	}
	var rej *sdk.RejectedError
	switch {
	case errors.As(r.Err, &rej):
		fmt.Fprintf(w, "line %d: %s: rejected: %s: %s\n", r.Line, id, rej.Code, oneLine(rej.Reason))
	case r.Err != nil:
		status := "not published"
		if r.Ack != nil {
			status = "acknowledged, no receipt"
		}
		if c, ok := events.CodeOf(r.Err); ok {
			fmt.Fprintf(w, "line %d: %s: %s: %s: %s\n", r.Line, id, status, c, oneLine(r.Err.Error()))
		} else {
			fmt.Fprintf(w, "line %d: %s: %s: %s\n", r.Line, id, status, oneLine(r.Err.Error()))
		}
	case r.Receipt != nil:
		fmt.Fprintf(w, "line %d: %s: logged at index %d (%s)\n", r.Line, id, r.Receipt.Index, receiptSummary(r.Receipt))
	default:
		dup := ""
		if r.Ack.Duplicate {
			dup = ", duplicate"
		}
		fmt.Fprintf(w, "line %d: %s: acknowledged (stream %s, seq %d%s)\n", r.Line, id, r.Ack.Stream, r.Ack.Seq, dup)
	}
}

// jsonResult is one line of --json output.
type jsonResult struct {
	Line       int     `json:"line"`
	ID         string  `json:"id,omitempty"`
	Status     string  `json:"status"` // acknowledged, logged, rejected, error
	Stream     string  `json:"stream,omitempty"`
	Seq        uint64  `json:"seq,omitempty"`
	Duplicate  bool    `json:"duplicate,omitempty"`
	Index      *uint64 `json:"index,omitempty"`
	Checkpoint string  `json:"checkpoint,omitempty"`
	// Receipt is the receipt's tlog-proof file; SignatureChecked says
	// whether its log signature was checked (--log-key).
	Receipt          string `json:"receipt,omitempty"`
	SignatureChecked *bool  `json:"signatureChecked,omitempty"`
	Code             string `json:"code,omitempty"`
	Reason           string `json:"reason,omitempty"`
}

func writeJSONResult(w io.Writer, r sdk.LineResult) {
	j := jsonResult{Line: r.Line, ID: r.EventID}
	if r.Ack != nil {
		j.Stream, j.Seq, j.Duplicate = r.Ack.Stream, r.Ack.Seq, r.Ack.Duplicate
	}
	var rej *sdk.RejectedError
	switch {
	case errors.As(r.Err, &rej):
		j.Status, j.Code, j.Reason = "rejected", rej.Code, rej.Reason
	case r.Err != nil:
		j.Status, j.Reason = "error", r.Err.Error()
		if c, ok := events.CodeOf(r.Err); ok {
			j.Code = string(c)
		}
	case r.Receipt != nil:
		j.Status, j.Index, j.Checkpoint = "logged", &r.Receipt.Index, string(r.Receipt.Checkpoint)
		if b, err := r.Receipt.Format(); err == nil {
			j.Receipt = string(b)
		}
		j.SignatureChecked = &r.Receipt.SignatureChecked
	default:
		j.Status = "acknowledged"
	}
	b, _ := json.Marshal(j) // plain strings and numbers
	fmt.Fprintf(w, "%s\n", b)
}

// oneLine keeps a message on one output line.
func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
