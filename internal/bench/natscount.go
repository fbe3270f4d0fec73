package bench

import (
	"fmt"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// This file counts the NATS messages of a measured window by kind, from the
// embedded server's own counters: the messages each client connection's
// subscriptions received, and the messages each connection published. The
// kinds are named by who receives what (docs/NATS.md §1, §5, §6): the
// emitters' publishes as the admission receives them, the admission's
// forwards into the stream, the stream's publish acks to the admission and
// their forwards to the emitters, the consumer's deliveries and the
// ingest's acknowledgements, the receipt and message status requests and
// their replies. The JetStream internals (the stream's and the consumer's
// own goroutines) have no connection and are not counted.

// natsCounts are a server's message counters at one moment, by kind.
type natsCounts map[string]uint64

// readNATSCounts reads ns's counters: for each client connection, the
// messages it published (kind "pub:<connection>") and the messages each of
// its subscriptions received (kind "sub:<connection>:<subject>", the
// subject's random tokens replaced by "x": subjectKind). The connections
// are named "emitters" (every SDK client's, summed) and "ingest" (every
// other: the ledger's, which has the admission's, the receipts' and the
// consumer's subscriptions).
func readNATSCounts(ns *server.Server) (natsCounts, error) {
	cz, err := ns.Connz(&server.ConnzOptions{SubscriptionsDetail: true, Limit: 1 << 16})
	if err != nil {
		return nil, fmt.Errorf("bench: the server's connections: %w", err)
	}
	c := natsCounts{}
	for _, ci := range cz.Conns {
		who := "ingest"
		if strings.HasPrefix(ci.Name, "zarlog-emitter-") {
			who = "emitters"
		}
		c["pub:"+who] += uint64(ci.InMsgs)
		for _, s := range ci.SubsDetail {
			c["sub:"+who+":"+subjectKind(s.Subject)] += uint64(s.Msgs)
		}
	}
	return c, nil
}

// subjectKind names a subscription's subject by its kind: the zarlog
// subjects as they are, an inbox by its prefix and what it carries.
func subjectKind(subject string) string {
	t := strings.Split(subject, ".")
	switch {
	case len(t) >= 2 && t[0] == "_INBOX" && t[1] == "ZARLOG_ADMISSION":
		return "admission-acks"
	case len(t) >= 1 && t[0] == "_INBOX":
		// An emitter's inbox (_INBOX.<emitter>.<nuid>...) or the ledger's:
		// keep the shape, not the random tokens.
		for i := 1; i < len(t); i++ {
			if t[i] != "*" && t[i] != ">" {
				t[i] = "x"
			}
		}
		return strings.Join(t, ".")
	}
	// R.events.*, R.receipts.*: the emitter token is a wildcard already.
	return subject
}

// perEvent is the change of each counter from c0 to c1 divided by n.
func (c1 natsCounts) perEvent(c0 natsCounts, n int) map[string]float64 {
	out := map[string]float64{}
	for k, v := range c1 {
		if v > c0[k] {
			out[k] = float64(v-c0[k]) / float64(max(n, 1))
		}
	}
	return out
}
