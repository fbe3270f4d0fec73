package witness

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/zarlog/zarlog/merkle"
)

// ErrResponse marks a witness response the Client cannot use: a 200 without
// a valid cosignature by the witness's key, a 409 whose body is not a size,
// or a status the protocol does not define.
var ErrResponse = errors.New("bad witness response")

// A StatusError is a witness's answer other than 200 and 409: the HTTP
// status and the first line of the body. It wraps the error the status stands
// for (ErrMalformed for 400, ErrForbidden for 403, ErrUnknownLog for 404,
// ErrInconsistent for 422, ErrResponse for anything else), so callers branch
// with errors.Is.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("witness answered %d %s: %s", e.Code, http.StatusText(e.Code), e.Body)
}

// Unwrap returns the sentinel error of the status.
func (e *StatusError) Unwrap() error {
	switch e.Code {
	case http.StatusBadRequest:
		return ErrMalformed
	case http.StatusForbidden:
		return ErrForbidden
	case http.StatusNotFound:
		return ErrUnknownLog
	case http.StatusUnprocessableEntity:
		return ErrInconsistent
	}
	return ErrResponse
}

// maxResponseSize bounds what the Client reads of a response.
const maxResponseSize = 64 << 10

// A Client submits checkpoints to one witness. It is safe for concurrent use
// and holds no state besides its configuration.
type Client struct {
	url string // the add-checkpoint URL
	v   *merkle.CosignatureVerifier
	hc  *http.Client
}

// NewClient returns a client for the witness with the given submission
// prefix (the add-checkpoint URL is prefix + "/add-checkpoint") and
// cosignature verifier (see merkle.NewCosignatureVerifier). hc is the HTTP
// client to use, with the timeouts the caller wants; nil means a new
// http.Client without a timeout (pass a ctx with a deadline then).
func NewClient(submissionPrefix string, v *merkle.CosignatureVerifier, hc *http.Client) (*Client, error) {
	if !strings.HasPrefix(submissionPrefix, "http://") && !strings.HasPrefix(submissionPrefix, "https://") {
		return nil, fmt.Errorf("witness client for %s: submission prefix %q is not an http or https URL", v.Name(), submissionPrefix)
	}
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{url: strings.TrimSuffix(submissionPrefix, "/") + "/add-checkpoint", v: v, hc: hc}, nil
}

// Name returns the witness's key name.
func (c *Client) Name() string { return c.v.Name() }

// URL returns the witness's add-checkpoint URL.
func (c *Client) URL() string { return c.url }

// AddCheckpoint asks the witness to cosign signedCheckpoint, given the
// consistency proof from oldSize, the size of the latest checkpoint the
// witness cosigned for the log (0 if none or unknown). It returns the
// witness's cosignature lines, verified against its key and ready to append
// to the signed note (see MergeCosignatures); lines by other keys in the
// response are dropped.
//
// It makes exactly one HTTP request and never retries. A 409 (with the
// Content-Type text/x.tlog.size that C2SP tlog-witness requires; any other
// is ErrResponse) is a *ConflictError carrying the witness's size: the caller
// retries with a proof from that size (Group does), unless RootMismatch says
// the witness has a checkpoint of this very size with another root. Other refusals are a *StatusError wrapping
// ErrMalformed, ErrForbidden, ErrUnknownLog or ErrInconsistent; an unusable
// response wraps ErrResponse; anything else is a transport error, after which
// the witness may or may not have cosigned (the next request's 409 says).
func (c *Client) AddCheckpoint(ctx context.Context, oldSize uint64, proof []merkle.Hash, signedCheckpoint []byte) ([]byte, error) {
	text, err := noteText(signedCheckpoint)
	if err != nil {
		return nil, fmt.Errorf("witness %s: %w", c.Name(), err)
	}
	cp, err := merkle.ParseCheckpoint(text)
	if err != nil {
		return nil, fmt.Errorf("witness %s: %w", c.Name(), err)
	}
	cpSize := cp.Size
	body, err := Request{OldSize: oldSize, Proof: proof, Checkpoint: signedCheckpoint}.Format()
	if err != nil {
		return nil, fmt.Errorf("witness %s: %w", c.Name(), err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("witness %s: %w", c.Name(), err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("witness %s: %w", c.Name(), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseSize+1))
	if err != nil {
		return nil, fmt.Errorf("witness %s: reading response: %w", c.Name(), err)
	}
	if len(data) > maxResponseSize {
		return nil, fmt.Errorf("witness %s: response larger than %d bytes: %w", c.Name(), maxResponseSize, ErrResponse)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		lines, err := c.cosignatures(text, data)
		if err != nil {
			return nil, fmt.Errorf("witness %s: %w", c.Name(), err)
		}
		return lines, nil
	case http.StatusConflict:
		// C2SP tlog-witness: the body of a 409 is the witness's size, with
		// Content-Type text/x.tlog.size. A 409 without it (a proxy's, say)
		// is not the witness's answer.
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != contentTypeSize {
			return nil, fmt.Errorf("witness %s: 409 with Content-Type %q, not %s: %w", c.Name(), resp.Header.Get("Content-Type"), contentTypeSize, ErrResponse)
		}
		num, ok := bytes.CutSuffix(data, []byte("\n"))
		size, ok2 := parseDecimal(string(num))
		if !ok || !ok2 {
			return nil, fmt.Errorf("witness %s: 409 body %q is not a size: %w", c.Name(), truncate(string(data)), ErrResponse)
		}
		// The witness's size is the old size sent: the other 409, a
		// checkpoint of that size with another root hash.
		mismatch := size == oldSize && cpSize == oldSize
		return nil, fmt.Errorf("witness %s, old size %d: %w", c.Name(), oldSize, &ConflictError{Size: size, RootMismatch: mismatch})
	default:
		first, _, _ := strings.Cut(string(data), "\n")
		return nil, fmt.Errorf("witness %s: %w", c.Name(), &StatusError{Code: resp.StatusCode, Body: truncate(first)})
	}
}

// cosignatures returns the lines of a 200 response that are the witness's
// valid cosignatures of the checkpoint text.
func (c *Client) cosignatures(text, body []byte) ([]byte, error) {
	var out []byte
	for rest := body; len(rest) > 0; {
		line, r, ok := bytes.Cut(rest, []byte("\n"))
		if !ok {
			return nil, fmt.Errorf("response does not end in a newline: %w", ErrResponse)
		}
		rest = r
		name, id, ok := sigLineKey(line)
		if !ok {
			return nil, fmt.Errorf("response line %q is not a note signature: %w", truncate(string(line)), ErrResponse)
		}
		if name != c.v.Name() || id != c.v.KeyHash() {
			continue // another key: ignored, as C2SP tlog-witness says
		}
		msg := make([]byte, 0, len(text)+1+len(line)+1)
		msg = append(append(append(append(msg, text...), '\n'), line...), '\n')
		if _, err := merkle.VerifyCosignatures(msg, []*merkle.CosignatureVerifier{c.v}); err != nil {
			return nil, fmt.Errorf("cosignature does not verify: %w: %w", ErrResponse, err)
		}
		out = append(append(out, line...), '\n')
	}
	if out == nil {
		return nil, fmt.Errorf("no cosignature by %s+%08x in the response: %w", c.v.Name(), c.v.KeyHash(), ErrResponse)
	}
	return out, nil
}

// sigLineKey returns the key name and key ID of a note signature line
// "— <name> <base64(key ID ‖ signature)>" (without its newline).
func sigLineKey(line []byte) (name string, id uint32, ok bool) {
	body, ok := bytes.CutPrefix(line, []byte("— "))
	if !ok {
		return "", 0, false
	}
	name, b64, ok := strings.Cut(string(body), " ")
	sig, err := base64.StdEncoding.DecodeString(b64)
	if !ok || err != nil || len(sig) < 5 || name == "" || strings.ContainsAny(name, " +") {
		return "", 0, false
	}
	return name, binary.BigEndian.Uint32(sig), true
}

// MergeCosignatures returns the signed note msg with the signature lines
// appended (each "— <name> <base64>\n", as Client.AddCheckpoint returns
// them), skipping any line by a key (name and key ID) that already signed
// the note or an earlier line. It does not verify signatures. It returns an
// error if msg is not a signed note, a line is not a signature line, or the
// result would be larger than merkle.MaxNoteSize.
func MergeCosignatures(msg []byte, lines ...[]byte) ([]byte, error) {
	if _, err := noteText(msg); err != nil {
		return nil, err
	}
	type key struct {
		name string
		id   uint32
	}
	have := map[key]bool{}
	sigs := msg[bytes.LastIndex(msg, []byte("\n\n"))+2:]
	for rest := sigs; len(rest) > 0; {
		line, r, _ := bytes.Cut(rest, []byte("\n"))
		rest = r
		name, id, _ := sigLineKey(line)
		have[key{name, id}] = true
	}
	out := bytes.Clone(msg)
	for _, ls := range lines {
		for rest := ls; len(rest) > 0; {
			line, r, ok := bytes.Cut(rest, []byte("\n"))
			if !ok {
				return nil, fmt.Errorf("signature lines do not end in a newline: %w", ErrMalformed)
			}
			rest = r
			name, id, ok := sigLineKey(line)
			if !ok {
				return nil, fmt.Errorf("%q is not a note signature line: %w", truncate(string(line)), ErrMalformed)
			}
			if have[key{name, id}] {
				continue
			}
			have[key{name, id}] = true
			out = append(append(out, line...), '\n')
		}
	}
	if len(out) > merkle.MaxNoteSize {
		return nil, fmt.Errorf("cosigned note of %d bytes is larger than %d: %w", len(out), merkle.MaxNoteSize, ErrMalformed)
	}
	return out, nil
}
