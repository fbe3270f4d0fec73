package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zarlog/zarlog/internal/serve"
)

// runRejected reads the rejected store of a running `zarlog serve` through
// its admin listener.
func runRejected(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zarlog rejected", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: zarlog rejected [--admin URL] (--data DIR | --admin-token FILE) [--emitter E] [--since T] [--limit N] [--summary] [--json]")
		fmt.Fprintln(stderr, "\nPrint the rejected inputs a running zarlog serve keeps (its admin listener, docs/SECURITY.md),")
		fmt.Fprintln(stderr, "oldest first, and each emitter's counts, over-quota refusals included.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	var (
		admin, dir, tokenFile, emitter, since string
		limit                                 int
		summaryOnly, jsonOut                  bool
	)
	fs.StringVar(&admin, "admin", "http://"+serve.DefaultAdminAddr, "the admin listener's base `URL` (zarlog serve prints it on its admin line)")
	fs.StringVar(&dir, "data", "", "the service's data `directory`: its admin.token is used")
	fs.StringVar(&tokenFile, "admin-token", "", "the admin token `file` (instead of --data)")
	fs.StringVar(&emitter, "emitter", "", "only this `emitter`'s records (\"-\": inputs of emitters the log has no key for)")
	fs.StringVar(&since, "since", "", "only records from this RFC 3339 `time`, or this long ago (a duration such as 1h)")
	fs.IntVar(&limit, "limit", 100, "print at most `N` records")
	fs.BoolVar(&summaryOnly, "summary", false, "print only the counts")
	fs.BoolVar(&jsonOut, "json", false, "print one JSON object per record, then the summary object")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "zarlog rejected: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() != 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	if (dir == "") == (tokenFile == "") {
		return bad("give --data DIR or --admin-token FILE")
	}
	if tokenFile == "" {
		tokenFile = filepath.Join(dir, "admin.token")
	}
	if limit < 1 {
		return bad("--limit must be at least 1")
	}
	q := url.Values{}
	if emitter != "" {
		if emitter == "-" {
			emitter = ""
		}
		q.Set("emitter", emitter)
	}
	if since != "" {
		t, err := time.Parse(time.RFC3339Nano, since)
		if err != nil {
			d, derr := time.ParseDuration(since)
			if derr != nil || d < 0 {
				return bad("--since %q is neither an RFC 3339 time nor a duration", since)
			}
			t = time.Now().Add(-d)
		}
		q.Set("since", t.UTC().Format(time.RFC3339Nano))
	}
	token, err := serve.ReadSecretFile(tokenFile)
	if err != nil {
		return bad("the admin token: %s", err)
	}
	c := adminClient{base: strings.TrimSuffix(admin, "/"), token: strings.TrimSpace(string(token))}
	if !summaryOnly {
		printed := 0
		for printed < limit {
			q.Set("limit", strconv.Itoa(min(limit-printed, serve.MaxRejectedPage)))
			var page serve.RejectedPage
			if err := c.get(ctx, "/rejected?"+q.Encode(), &page); err != nil {
				fmt.Fprintln(stderr, "zarlog rejected:", err)
				return 1
			}
			for _, r := range page.Records {
				printRecord(stdout, r, jsonOut)
			}
			printed += len(page.Records)
			if page.Next == nil || len(page.Records) == 0 {
				break
			}
			q.Set("from", strconv.FormatUint(*page.Next, 10))
		}
	}
	var sum serve.RejectedSummary
	if err := c.get(ctx, "/rejected/summary", &sum); err != nil {
		fmt.Fprintln(stderr, "zarlog rejected:", err)
		return 1
	}
	printSummary(stdout, sum, jsonOut)
	return 0
}

type adminClient struct{ base, token string }

func (c adminClient) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the admin listener: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("the admin listener: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the admin listener answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("the admin listener's answer: %w", err)
	}
	return nil
}

func printRecord(w io.Writer, r serve.RejectedRecord, jsonOut bool) {
	if jsonOut {
		b, _ := json.Marshal(r)
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	id := r.ID
	if id == "" {
		id = "-"
	}
	emitter := r.Emitter
	if emitter == "" {
		emitter = "-"
	}
	fmt.Fprintf(w, "%d %s emitter %s id %s: %s: %s (%d bytes, sha256 %.16s…)\n", r.Seq, r.Time.Format(time.RFC3339),
		emitter, id, r.Code, oneLine(r.Reason), r.Size, r.SHA256)
}

func printSummary(w io.Writer, s serve.RejectedSummary, jsonOut bool) {
	if jsonOut {
		b, _ := json.Marshal(s)
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	fmt.Fprintf(w, "stored %d records (%d bytes)", s.Stored, s.Bytes)
	if s.Dropped > 0 {
		fmt.Fprintf(w, "; %d deleted by an older version", s.Dropped)
	}
	fmt.Fprintln(w)
	for _, n := range slices.Sorted(maps.Keys(s.Emitters)) {
		e := s.Emitters[n]
		label := n
		if label == "" {
			label = "(emitters without a key)"
		}
		fmt.Fprintf(w, "emitter %s: %d stored (%d bytes)", label, e.Stored, e.Bytes)
		if e.OverQuota > 0 {
			fmt.Fprintf(w, "; over its rejection quota: %d more refused, ids %s…%s", e.OverQuota, e.FirstID, e.LastID)
		}
		fmt.Fprintln(w)
	}
	for _, c := range slices.Sorted(maps.Keys(s.Codes)) {
		fmt.Fprintf(w, "code %s: %d\n", c, s.Codes[c])
	}
}
