package wire

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// ErrBatch is wrapped by every framing error of a multi-event message.
var ErrBatch = errors.New("malformed multi-event message")

// A multi-event message carries n ≥ 2 events in one NATS message, so that
// JetStream stores, delivers and acknowledges one message instead of n. Its
// HeaderEvents is n in decimal and its payload is the n events joined by
// single '\n' bytes (no trailing newline). An event in such a message may
// not contain '\n', which canonical JSON never does. It carries no
// HeaderMsgID: every event keeps its own id inside, which the ledger
// deduplicates exactly as if it had come alone.

// AppendBatch appends the payload of a multi-event message holding events
// to dst. It fails, wrapping ErrBatch, if there are fewer than 2 or more
// than MaxBatchEvents events, or one is empty, larger than MaxEventSize or
// contains '\n'.
func AppendBatch(dst []byte, events [][]byte) ([]byte, error) {
	if len(events) < 2 || len(events) > MaxBatchEvents {
		return dst, fmt.Errorf("%w: %d events is not 2…%d", ErrBatch, len(events), MaxBatchEvents)
	}
	for i, e := range events {
		if err := checkPart(e); err != nil {
			return dst, fmt.Errorf("%w: event %d: %w", ErrBatch, i, err)
		}
	}
	for i, e := range events {
		if i > 0 {
			dst = append(dst, '\n')
		}
		dst = append(dst, e...)
	}
	return dst, nil
}

// CheckBatchable returns nil if event may be part of a multi-event message.
func CheckBatchable(event []byte) error {
	if err := checkPart(event); err != nil {
		return fmt.Errorf("%w: %w", ErrBatch, err)
	}
	return nil
}

func checkPart(e []byte) error {
	switch {
	case len(e) == 0:
		return errors.New("empty event")
	case len(e) > MaxEventSize:
		return fmt.Errorf("event of %d bytes exceeds %d", len(e), MaxEventSize)
	case bytes.IndexByte(e, '\n') >= 0:
		return errors.New("event contains a newline")
	}
	return nil
}

// SplitBatch splits the payload of a multi-event message whose HeaderEvents
// is count. The events alias payload. It fails, wrapping ErrBatch, unless
// count is the canonical decimal of a number n in 2…MaxBatchEvents and
// payload is exactly n non-empty events of at most MaxEventSize bytes joined
// by '\n'.
func SplitBatch(count string, payload []byte) ([][]byte, error) {
	n, err := ParseCount(count)
	if err != nil {
		return nil, err
	}
	if c := bytes.Count(payload, []byte{'\n'}) + 1; c != n {
		return nil, fmt.Errorf("%w: header says %d events, payload has %d", ErrBatch, n, c)
	}
	events := make([][]byte, 0, n)
	for i := 0; i < n; i++ {
		e := payload
		if j := bytes.IndexByte(payload, '\n'); j >= 0 {
			e, payload = payload[:j:j], payload[j+1:]
		}
		if err := checkPart(e); err != nil {
			return nil, fmt.Errorf("%w: event %d: %w", ErrBatch, i, err)
		}
		events = append(events, e)
	}
	return events, nil
}

// FormatCount returns the HeaderEvents value for n events.
func FormatCount(n int) string { return strconv.Itoa(n) }

// ParseCount parses a HeaderEvents value: the canonical decimal (no sign,
// no leading zero) of a number in 2…MaxBatchEvents.
func ParseCount(s string) (int, error) {
	if len(s) == 0 || len(s) > 4 || s[0] == '0' {
		return 0, fmt.Errorf("%w: %s %q is not a canonical count", ErrBatch, HeaderEvents, s)
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%w: %s %q is not a canonical count", ErrBatch, HeaderEvents, s)
		}
		n = n*10 + int(s[i]-'0')
	}
	if n < 2 || n > MaxBatchEvents {
		return 0, fmt.Errorf("%w: %s %d is not 2…%d", ErrBatch, HeaderEvents, n, MaxBatchEvents)
	}
	return n, nil
}
