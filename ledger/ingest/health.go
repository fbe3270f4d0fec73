package ingest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The ingest's own view of whether events move, for /healthz and /readyz
// (docs/NATS.md §6 "Health"). It is kept from what the ingest sees anyway:
// its consumer session, each batch it decides, each failed Append, and the
// consumer's and the stream's state read every InfoInterval. Nothing here
// polls the ledger or publishes anything.
type health struct {
	now func() time.Time

	mu            sync.Mutex
	sessionUp     bool
	sessionErr    error
	sessionSince  time.Time // when sessionUp last changed
	lastProgress  time.Time // the last batch decided, or the session's start
	waiting       uint64    // messages in the stream or delivered, not yet acknowledged (last poll)
	infoErr       error
	infoErrSince  time.Time
	submitErr     error
	submitErrFrom time.Time
	full          string // why the stream refuses new messages, or ""
}

func (h *health) sessionStarted() {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	h.sessionUp, h.sessionErr, h.sessionSince, h.lastProgress = true, nil, now, now
}

func (h *health) sessionEnded(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sessionUp, h.sessionErr, h.sessionSince = false, err, h.now()
}

func (h *health) sessionFailed(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.sessionUp {
		h.sessionErr = err
	}
}

func (h *health) progressed() {
	h.mu.Lock()
	h.lastProgress = h.now()
	h.mu.Unlock()
}

func (h *health) submitFailed(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.submitErr == nil {
		h.submitErrFrom = h.now()
	}
	h.submitErr = err
}

func (h *health) submitOK() {
	h.mu.Lock()
	h.submitErr = nil
	h.mu.Unlock()
}

// polled records one reading of the consumer's and the stream's state.
func (h *health) polled(ci *jetstream.ConsumerInfo, si *jetstream.StreamInfo, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		if h.infoErr == nil {
			h.infoErrSince = h.now()
		}
		h.infoErr = err
		return
	}
	h.infoErr = nil
	h.waiting = ci.NumPending + uint64(ci.NumAckPending)
	h.full = ""
	c, st := si.Config, si.State
	switch {
	case c.MaxMsgs > 0 && int64(st.Msgs) >= c.MaxMsgs:
		h.full = fmt.Sprintf("the stream %s holds %d messages, its limit: publishers are refused", c.Name, st.Msgs)
	case c.MaxBytes > 0 && int64(st.Bytes)+int64(c.MaxMsgSize) > c.MaxBytes:
		h.full = fmt.Sprintf("the stream %s holds %d of its %d bytes: publishers are refused", c.Name, st.Bytes, c.MaxBytes)
	}
}

// check is Health: an error when ingest cannot progress.
func (h *health) check(cfg *Config) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	grace := 2 * max(cfg.InfoInterval, time.Second)
	switch {
	case !h.sessionUp && now.Sub(h.sessionSince) >= grace:
		if h.sessionErr != nil {
			return fmt.Errorf("ingest: no consumer session for %v: %w", now.Sub(h.sessionSince).Round(time.Second), h.sessionErr)
		}
		return fmt.Errorf("ingest: no consumer session for %v", now.Sub(h.sessionSince).Round(time.Second))
	case h.submitErr != nil && now.Sub(h.submitErrFrom) >= time.Second:
		return fmt.Errorf("ingest: the ledger has refused to take a batch for %v: %w", now.Sub(h.submitErrFrom).Round(time.Second), h.submitErr)
	case h.infoErr != nil && now.Sub(h.infoErrSince) >= grace:
		return fmt.Errorf("ingest: reading the consumer's state: %w", h.infoErr)
	case h.sessionUp && h.waiting > 0 && now.Sub(h.lastProgress) >= cfg.StallAfter:
		return fmt.Errorf("ingest: stalled: %d messages waiting and none decided for %v", h.waiting, now.Sub(h.lastProgress).Round(time.Second))
	}
	return nil
}

// Health returns nil while events can move from the stream into the
// ledger, and otherwise says why not: no consumer session (the stream or
// the consumer cannot be created or read, NATS is down) for a few seconds,
// an Append that keeps failing, the consumer's state unreadable, or messages
// waiting and none decided for Config.StallAfter. It turns non-nil within
// seconds of the cause and nil again once the ingest resumes by itself.
func (in *Ingester) Health(context.Context) error { return in.health.check(&in.cfg) }

// Ready is Health, and also fails while the stream is full (it refuses new
// messages: Config.Stream's limits), so that a load balancer stops sending
// backends to a ledger that cannot take their events.
func (in *Ingester) Ready(ctx context.Context) error {
	if err := in.Health(ctx); err != nil {
		return err
	}
	in.health.mu.Lock()
	defer in.health.mu.Unlock()
	if in.health.full != "" {
		return fmt.Errorf("ingest: %s", in.health.full)
	}
	return nil
}
