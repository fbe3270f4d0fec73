package sdk

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/cjson"
	"github.com/zarlog/zarlog/wire"
)

// LinesConfig configures PublishLines. Every field's zero value is
// documented.
type LinesConfig struct {
	// NoCheck publishes each line as it is, without parsing it as an event
	// first (only its "id", and "game" for the order, are read): the
	// ledger's rejection then says what is wrong. By default a line that is
	// not a valid canonical event of the Client's emitter is not published.
	NoCheck bool
	// Wait waits for each event's receipt (a tlog-proof of the line's
	// bytes, checked: see Client.Receipt) or the ledger's rejection,
	// instead of only JetStream's ack.
	Wait bool
	// Timeout bounds each line's publication (and receipt, with Wait), from
	// the moment it is read. Zero means 30 s.
	Timeout time.Duration
	// Signer, if not nil, signs every line that is a binding event without
	// a "sig" member (events.Sign), so that events made elsewhere can be
	// published by the emitter that holds the key (`zarlog emit --key`).
	// Its name must be the Client's emitter. Lines that carry a sig are
	// published as they are. Ignored with NoCheck.
	Signer events.Signer
}

// A LineResult is the outcome of one line of PublishLines.
type LineResult struct {
	Line    int    // 1-based line number
	EventID string // "" if the line has none
	// Ack is JetStream's acknowledgement, if the event was published.
	Ack *Ack
	// Receipt is the ledger's receipt (LinesConfig.Wait).
	Receipt *Receipt
	// Err is why the line failed: not an event (a *events.RejectError),
	// not published, or rejected by the ledger (a *RejectedError). Nil
	// means it succeeded.
	Err error
}

// ErrLine wraps the errors of lines that are not events PublishLines can
// publish.
var ErrLine = errors.New("line is not a publishable event")

// maxLine bounds a line: an event and its newline, with room for a "\r".
const maxLine = events.MaxEventSize + 2

// PublishLines publishes the events of r, one canonical event (JSON) per
// line, through c, and calls report with the outcome of every line in line
// order (empty lines are skipped without a report). Each game's events keep
// their order (OrderKey); events of different games travel concurrently.
// It returns how many lines failed, and an error only if reading r failed or
// ctx ended.
func PublishLines(ctx context.Context, c *Client, r io.Reader, cfg LinesConfig, report func(LineResult)) (failed int, err error) {
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	type item struct {
		res    LineResult
		ev     Event // what was published: its receipt proves these bytes
		p      *Pending
		cancel context.CancelFunc
		ctx    context.Context
	}
	items := make(chan item, 4096)
	done := make(chan int)
	go func() {
		failed := 0
		for it := range items {
			if it.p != nil {
				ack, err := it.p.Wait(it.ctx)
				if err != nil {
					it.res.Err = fmt.Errorf("not acknowledged: %w", err)
				} else {
					it.res.Ack = &ack
					if cfg.Wait {
						rc, err := c.ReceiptOf(it.ctx, it.ev, ack)
						if err != nil {
							it.res.Err = err
						} else {
							it.res.Receipt = &rc
						}
					}
				}
			}
			if it.cancel != nil {
				it.cancel()
			}
			if it.res.Err != nil {
				failed++
			}
			report(it.res)
		}
		done <- failed
	}()

	br := bufio.NewReaderSize(r, 64<<10)
	var readErr error
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br)
		if err != nil && !(errors.Is(err, io.EOF) && (len(line) > 0 || tooLong)) {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 && !tooLong {
			continue
		}
		it := item{res: LineResult{Line: n}}
		var ev Event
		switch {
		case tooLong:
			it.res.Err = fmt.Errorf("%w: longer than %d bytes", ErrLine, events.MaxEventSize)
		default:
			ev, it.res.Err = lineEvent(line, c.cfg.Emitter, cfg.NoCheck, cfg.Signer)
			it.res.EventID = ev.ID
		}
		if it.res.Err == nil {
			it.ctx, it.cancel = context.WithTimeout(ctx, cfg.Timeout)
			it.ev = ev
			it.p, it.res.Err = c.PublishAsync(it.ctx, ev)
			if it.res.Err != nil {
				it.p = nil
			}
		}
		select {
		case items <- it:
		case <-ctx.Done():
			if it.cancel != nil {
				it.cancel()
			}
			readErr = ctx.Err()
		}
		if readErr != nil {
			break
		}
	}
	close(items)
	failed = <-done
	return failed, readErr
}

// readLine reads one line without its "\n", at most maxLine bytes of it;
// tooLong reports that it was longer (the rest is skipped).
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > maxLine+1 {
			tooLong = true
		} else {
			line = append(line, frag...)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(line, []byte("\n")), tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return line, tooLong, err
		}
	}
}

// lineEvent makes the Event to publish for one line.
func lineEvent(line []byte, emitter string, noCheck bool, signer events.Signer) (Event, error) {
	data := bytes.Clone(line)
	if signer != nil && !noCheck {
		var err error
		if data, err = signLine(data, signer); err != nil {
			return Event{}, fmt.Errorf("%w: signing: %w", ErrLine, err)
		}
	}
	if noCheck {
		var h struct {
			ID   string `json:"id"`
			Game string `json:"game"`
		}
		if err := json.Unmarshal(data, &h); err != nil {
			return Event{}, fmt.Errorf("%w: no event id: %w", ErrLine, err)
		}
		if err := wire.CheckEventID(h.ID); err != nil {
			return Event{ID: h.ID}, fmt.Errorf("%w: %w", ErrLine, err)
		}
		if err := wire.CheckBatchable(data); err != nil {
			return Event{ID: h.ID}, fmt.Errorf("%w: %w", ErrLine, err)
		}
		return Event{ID: h.ID, Data: data, OrderKey: h.Game}, nil
	}
	ev, err := events.Parse(data)
	if err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrLine, err)
	}
	if ev.Emitter != emitter {
		return Event{ID: ev.ID}, fmt.Errorf("%w: the event is emitter %q's, publishing as %q", ErrLine, ev.Emitter, emitter)
	}
	return Event{ID: ev.ID, Data: data, OrderKey: ev.Game}, nil
}

// signLine returns data signed by signer if it is a binding event without
// a "sig" member, and data unchanged otherwise.
func signLine(data []byte, signer events.Signer) ([]byte, error) {
	v, err := cjson.Decode(data)
	if err != nil {
		return data, nil // Parse reports it
	}
	obj, ok := v.(cjson.Object)
	if !ok {
		return data, nil
	}
	if _, has := obj.Get("sig"); has {
		return data, nil
	}
	typ, _ := obj.Get("type")
	if t, ok := typ.(string); !ok || !events.Type(t).Binding() {
		return data, nil
	}
	// A placeholder signature makes it parse; Sign replaces it.
	placeholder, err := cjson.Marshal(append(slices.Clone(obj), cjson.Member{Key: "sig", Value: strings.Repeat("00", ed25519.SignatureSize)}))
	if err != nil {
		return nil, err
	}
	ev, err := events.Parse(placeholder)
	if err != nil {
		return nil, err
	}
	if err := events.Sign(ev, signer); err != nil {
		return nil, err
	}
	return events.Format(ev)
}
