package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/zarlog/zarlog/wire"
)

// The admission (docs/NATS.md §6): emitters publish their events on
// R.events.E as requests; the ingest's admission forwards each message to
// R.admitted.E, which the events stream captures, and hands the stream's
// publish ack back to the emitter as the reply, byte for byte. Before it
// forwards a message it checks its emitter's backlog: the bytes and the
// messages of E it has admitted that the ingest has not decided yet. A
// message that would take E past Config.BacklogBytesPerEmitter or
// BacklogMessagesPerEmitter is refused at once with the stream's own error
// for a full backlog (JetStream error 10077, "maximum bytes exceeded" or
// "maximum messages exceeded", which the SDK turns into sdk.ErrBacklog),
// naming the emitter and the limit, and counted in
// zarlog_ingest_limit_refusals_total. One emitter at its limit holds a
// bounded share of the stream; the others publish as before.
//
// The counts are kept in memory: a message leaves its emitter's backlog
// when the stream says it did not store it (an error, a duplicate) or when
// the ingest decides it. They are durable through the stream itself: when
// the admission starts, it counts each emitter's messages in the stream
// (the stream's state by subject) and gives each the stream's average size,
// so a restart does not hand an emitter a fresh budget on top of the
// backlog it already holds (TestBacklogBudgetRestart). Messages an older
// version stored on the events subject are not counted; the stream's own
// bounds still hold them.
//
// The reply subject of a message must be under its emitter's own inbox
// (wire.InboxPrefix), as for receipts: the admission publishes the reply
// with the ledger's rights. Others are dropped, counted and logged.

const admissionQueue = "zarlog-admission"

// Limit names of the backlog (the flags of `zarlog serve`).
const (
	LimitBacklogBytes    = "backlog-bytes-per-emitter"
	LimitBacklogMessages = "backlog-messages-per-emitter"
	LimitRateBytes       = "rate-bytes-per-emitter"
	LimitRateMessages    = "rate-messages-per-emitter"
	LimitRefusedBytes    = "refused-bytes-per-emitter"
)

// Defaults of the backlog budget (docs/OPERATIONS.md §9), sized for an
// emitter at its peak of 2,500 events a second (10,000 games in play) while
// the ledger stands still: each is about 40 s of it. Config.withDefaults
// takes each down to a quarter of the stream's own bound.
const (
	// DefaultBacklogBytesPerEmitter: 2,500 events a second of up to 600
	// bytes for 45 s.
	DefaultBacklogBytesPerEmitter = 64 << 20
	// DefaultBacklogMessagesPerEmitter: 2,500 messages a second (an event
	// each: the SDK packs events only once they queue up) for 40 s.
	DefaultBacklogMessagesPerEmitter = 100_000
	// DefaultRateBytesPerEmitter: four times the peak's 2,500 events a
	// second of 600 bytes.
	DefaultRateBytesPerEmitter = 6 << 20
	// DefaultRateMessagesPerEmitter: the peak's 2,500 events a second,
	// one a message (the SDK packs events into one message once they
	// queue up, so a platform past its peak sends more events in fewer
	// messages). It is what a 2-core machine holds for one emitter of
	// junk, one event a message, while another emitter's games stay
	// within 2× of their pace alone (TestTenantLoad; 5,000 and 10,000 did
	// not: docs/BENCHMARKS.md "Fair share"). One SDK emitter alone still
	// reaches the machine's capacity: it packs its events.
	DefaultRateMessagesPerEmitter = 2_500
	// DefaultRefusedBytesPerEmitter: an SDK whose whole window (32
	// messages of up to 256 KiB) is refused sends it again after 25, 50,
	// 100 ms and so on up to 2 s: 48 MiB in its first second, then 4 MiB a
	// second. Eight seconds of 8 MiB (64 MiB) hold its first seconds, and
	// its steady state is half the rate.
	DefaultRefusedBytesPerEmitter = 8 << 20
)

// The refusals an emitter may ignore (Config.RefusedBytesPerEmitter).
const (
	refusedBurst     = 8               // seconds of RefusedBytesPerEmitter
	refusedMinSize   = 512             // what a refused message counts for at least
	penaltyFirst     = 2 * time.Second // the first penalty
	penaltyMax       = time.Minute     // the longest, and the memory of a repeat
	disconnectPeriod = 100 * time.Millisecond
)

// A penalty is an emitter's time of refusal for ignoring its refusals.
type penalty struct {
	until time.Time     // refused at once until then
	last  time.Duration // the penalty's length, doubled at a repeat
	// kicked is when its connections were last closed: at most once a
	// disconnectPeriod.
	kicked time.Time
}

// pendingAge is how long the admission waits for the stream's ack of a
// forwarded message before it forgets it (and takes it out of its
// emitter's backlog).
const pendingAge = 30 * time.Second

type admission struct {
	in     *Ingester
	prefix string // the admission's reply subjects: prefix.<n>

	mu      sync.Mutex
	by      map[string]*backlogCount
	pending map[uint64]forwarded
	rates   map[string]*bucket
	// refused holds each refused emitter's budget of refused bytes
	// (bucket.bytes), penalties the emitters that ignored their refusals.
	refused   map[string]*bucket
	penalties map[string]*penalty
	next      uint64
	log       rateLog
}

type backlogCount struct{ bytes, msgs int64 }

// rateBurst is how many seconds of its rate an emitter may publish at once.
const rateBurst = 2

// A bucket holds an emitter's tokens of its rate budget: bytes and
// messages it may publish now.
type bucket struct {
	bytes, msgs float64
	at          time.Time
}

// overRate takes size bytes and one message from emitter's rate budget
// (a.mu held), or returns the limit it is over and the refusal's words.
func (a *admission) overRate(emitter string, size int) (limit, desc string) {
	cfg := &a.in.cfg
	if cfg.RateBytesPerEmitter < 0 && cfg.RateMessagesPerEmitter < 0 {
		return "", ""
	}
	now := cfg.Now()
	maxBytes := float64(max(rateBurst*cfg.RateBytesPerEmitter, maxMessageSize))
	maxMsgs := float64(max(rateBurst*cfg.RateMessagesPerEmitter, 1))
	k := a.rates[emitter]
	if k == nil {
		k = &bucket{bytes: maxBytes, msgs: maxMsgs, at: now}
		a.rates[emitter] = k
	}
	if dt := now.Sub(k.at).Seconds(); dt > 0 {
		k.bytes = min(maxBytes, k.bytes+dt*float64(cfg.RateBytesPerEmitter))
		k.msgs = min(maxMsgs, k.msgs+dt*float64(cfg.RateMessagesPerEmitter))
		k.at = now
	}
	switch {
	case cfg.RateBytesPerEmitter >= 0 && k.bytes < float64(size):
		return LimitRateBytes, fmt.Sprintf("maximum rate exceeded: emitter %s publishes more than its limit of bytes a second (%s %d, a burst of %d s); publish again later",
			emitter, LimitRateBytes, cfg.RateBytesPerEmitter, rateBurst)
	case cfg.RateMessagesPerEmitter >= 0 && k.msgs < 1:
		return LimitRateMessages, fmt.Sprintf("maximum rate exceeded: emitter %s publishes more than its limit of messages a second (%s %d, a burst of %d s); publish again later",
			emitter, LimitRateMessages, cfg.RateMessagesPerEmitter, rateBurst)
	}
	if cfg.RateBytesPerEmitter >= 0 {
		k.bytes -= float64(size)
	}
	if cfg.RateMessagesPerEmitter >= 0 {
		k.msgs--
	}
	return "", ""
}

// ignored takes a refused message of size bytes from emitter's budget of
// refused bytes (a.mu held) and reports whether its connections are to be
// closed now: it is past the budget, or in its penalty and not closed
// within the last disconnectPeriod.
func (a *admission) ignored(emitter string, size int, now time.Time) (kick bool) {
	cfg := &a.in.cfg
	if cfg.RefusedBytesPerEmitter < 0 {
		return false
	}
	p := a.penalties[emitter]
	if p != nil && now.Before(p.until) {
		if now.Sub(p.kicked) < disconnectPeriod {
			return false
		}
		p.kicked = now
		return cfg.Disconnect != nil
	}
	most := float64(refusedBurst * cfg.RefusedBytesPerEmitter)
	k := a.refused[emitter]
	if k == nil {
		k = &bucket{bytes: most, at: now}
		a.refused[emitter] = k
	}
	if dt := now.Sub(k.at).Seconds(); dt > 0 {
		k.bytes = min(most, k.bytes+dt*float64(cfg.RefusedBytesPerEmitter))
		k.at = now
	}
	k.bytes -= float64(max(size, refusedMinSize))
	if k.bytes >= 0 {
		return false
	}
	// Past its budget: a penalty, twice the last if that ended within
	// penaltyMax.
	d := penaltyFirst
	if p != nil && now.Sub(p.until) < penaltyMax {
		d = min(2*p.last, penaltyMax)
	}
	a.penalties[emitter] = &penalty{until: now.Add(d), last: d, kicked: now}
	delete(a.refused, emitter) // a full budget after the penalty
	a.in.m.penalties.WithLabelValues(emitter).Inc()
	a.log.log(a.in.log, "an emitter publishes on while its messages are refused: refused at once for a penalty, and disconnected",
		"emitter", emitter, "limit", LimitRefusedBytes, "penalty", d)
	return cfg.Disconnect != nil
}

// disconnect closes emitter's connections (Config.Disconnect).
func (a *admission) disconnect(emitter string) {
	n, err := a.in.cfg.Disconnect(emitter)
	if err != nil {
		a.log.log(a.in.log, "disconnecting an emitter that ignores its refusals failed", "emitter", emitter, "err", err)
		return
	}
	a.in.m.disconnects.WithLabelValues(emitter).Add(float64(n))
}

// maxMessageSize is the largest message a stream takes by default: an
// emitter's burst of bytes holds at least one.
const maxMessageSize = 1 << 20

// A forwarded message waits for the stream's ack.
type forwarded struct {
	emitter string
	size    int
	reply   string // the emitter's reply subject
	at      time.Time
}

func newAdmission(in *Ingester) *admission {
	// Upper case: no emitter's inbox (wire.InboxPrefix of an emitter id,
	// which is lower case) can cover the admission's.
	return &admission{in: in, prefix: "_INBOX.ZARLOG_ADMISSION." + nuid.Next(), by: map[string]*backlogCount{}, pending: map[uint64]forwarded{}, rates: map[string]*bucket{},
		refused: map[string]*bucket{}, penalties: map[string]*penalty{}}
}

// run subscribes to the emitters' events subjects and to the stream's acks,
// and forgets acks that never come, until ctx ends.
func (a *admission) run(ctx context.Context) (stop func(), err error) {
	nc := a.in.nc
	if err := a.count(ctx); err != nil {
		// Not fatal: the stream's own bounds still hold what it holds.
		a.in.log.Warn("counting the emitters' backlog in the stream failed; what it holds now is not counted", "err", err)
	}
	acks, err := nc.Subscribe(a.prefix+".*", a.acked)
	if err != nil {
		return nil, fmt.Errorf("subscribing to the stream's acks on %s.*: %w", a.prefix, err)
	}
	sub, err := nc.QueueSubscribe(a.in.cfg.Subjects.EventsWildcard(), admissionQueue, a.admit)
	if err != nil {
		acks.Unsubscribe()
		return nil, fmt.Errorf("subscribing to the events on %s: %w", a.in.cfg.Subjects.EventsWildcard(), err)
	}
	for _, s := range []*nats.Subscription{sub, acks} {
		// A burst of one emitter's messages must not drop another's: the
		// callbacks are quick, and the buffer is bounded by bytes anyway.
		s.SetPendingLimits(-1, 256<<20)
	}
	// The subscriptions are the server's once it answers a ping: a message
	// published after run returns reaches the admission (TestAdmissionReply
	// publishes at once). On a connection that is down they are sent again
	// when it comes back, so a failed flush is only said.
	if err := nc.FlushTimeout(5 * time.Second); err != nil {
		a.in.log.Warn("the admission's subscriptions are not confirmed by the server yet", "err", err)
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(pendingAge / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case now := <-t.C:
				a.forget(now)
			}
		}
	}()
	return func() {
		close(done)
		sub.Unsubscribe()
		acks.Unsubscribe()
	}, nil
}

// count sets each emitter's backlog to what the stream holds of it on its
// admitted subject: its messages, and the stream's average message size for
// each (the stream keeps no bytes by subject). A stream not created yet
// holds nothing.
func (a *admission) count(ctx context.Context) error {
	in := a.in
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := in.js.Stream(ctx, in.cfg.Stream.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading stream %s: %w", in.cfg.Stream.Name, err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(in.cfg.Subjects.AdmittedWildcard()))
	if err != nil {
		return fmt.Errorf("reading stream %s's subjects: %w", in.cfg.Stream.Name, err)
	}
	if info.State.Msgs == 0 {
		return nil
	}
	avg := int64(info.State.Bytes / info.State.Msgs)
	a.mu.Lock()
	defer a.mu.Unlock()
	for subject, n := range info.State.Subjects {
		emitter, err := in.cfg.Subjects.EmitterOf("admitted", subject)
		if err != nil || n == 0 {
			continue
		}
		b := a.by[emitter]
		if b == nil {
			b = &backlogCount{}
			a.by[emitter] = b
		}
		b.msgs += int64(n)
		b.bytes += int64(n) * avg
		in.m.backlogBytes.WithLabelValues(emitter).Add(float64(int64(n) * avg))
		in.m.backlogMsgs.WithLabelValues(emitter).Add(float64(n))
	}
	return nil
}

// admit handles one message an emitter published.
func (a *admission) admit(m *nats.Msg) {
	in := a.in
	emitter, err := in.cfg.Subjects.EmitterOf("events", m.Subject)
	if err == nil && m.Reply != "" && !strings.HasPrefix(m.Reply, wire.InboxPrefix(emitter)+".") {
		err = fmt.Errorf("reply subject %q is not in emitter %s's inbox %s.>", truncate(m.Reply, 128), emitter, wire.InboxPrefix(emitter))
	}
	if err != nil {
		in.m.admissions.WithLabelValues("refused").Inc()
		in.refusedLog.log(in.log, "message refused and not answered", "subject", truncate(m.Subject, 128), "err", err)
		return
	}
	size := len(m.Data)
	a.mu.Lock()
	b := a.by[emitter]
	if b == nil {
		b = &backlogCount{}
		a.by[emitter] = b
	}
	limit, desc := "", ""
	now := in.cfg.Now()
	switch p := a.penalties[emitter]; {
	case p != nil && now.Before(p.until):
		limit = LimitRefusedBytes
		desc = fmt.Sprintf("maximum rate exceeded: emitter %s published on while its messages were refused, past its limit (%s %d, a burst of %d s): it is disconnected, and refused until %s; publish again later, after a backoff",
			emitter, LimitRefusedBytes, in.cfg.RefusedBytesPerEmitter, refusedBurst, p.until.UTC().Format(time.RFC3339Nano))
	case b.bytes+int64(size) > in.cfg.BacklogBytesPerEmitter && b.msgs > 0:
		limit = LimitBacklogBytes
		desc = fmt.Sprintf("maximum bytes exceeded: emitter %s has %d bytes in the backlog (admitted, not yet decided), and this message of %d bytes would take it past its limit (%s %d)",
			emitter, b.bytes, size, LimitBacklogBytes, in.cfg.BacklogBytesPerEmitter)
	case b.msgs+1 > in.cfg.BacklogMessagesPerEmitter:
		limit = LimitBacklogMessages
		desc = fmt.Sprintf("maximum messages exceeded: emitter %s has %d messages in the backlog (admitted, not yet decided), its limit (%s %d)",
			emitter, b.msgs, LimitBacklogMessages, in.cfg.BacklogMessagesPerEmitter)
	default:
		limit, desc = a.overRate(emitter, size)
	}
	if limit != "" {
		kick := a.ignored(emitter, size, now)
		a.mu.Unlock()
		if kick {
			go a.disconnect(emitter)
		}
		in.m.admissions.WithLabelValues("over-limit").Inc()
		in.m.limitRefusals.WithLabelValues(emitter, limit).Inc()
		a.log.log(in.log, "message over a limit of its emitter, refused", "emitter", emitter, "limit", limit, "reason", desc)
		if m.Reply != "" {
			b, _ := json.Marshal(struct {
				Error apiError `json:"error"`
			}{apiError{Code: 503, ErrCode: 10077, Description: desc}})
			in.nc.Publish(m.Reply, b)
		}
		return
	}
	b.bytes += int64(size)
	b.msgs++
	reply := ""
	if m.Reply != "" {
		a.next++
		a.pending[a.next] = forwarded{emitter: emitter, size: size, reply: m.Reply, at: time.Now()}
		reply = a.prefix + "." + strconv.FormatUint(a.next, 10)
	}
	a.mu.Unlock()
	in.m.backlogBytes.WithLabelValues(emitter).Add(float64(size))
	in.m.backlogMsgs.WithLabelValues(emitter).Inc()
	in.m.admissions.WithLabelValues("admitted").Inc()
	fwd := &nats.Msg{Subject: in.cfg.Subjects.Admitted(emitter), Reply: reply, Header: m.Header, Data: m.Data}
	if err := in.nc.PublishMsg(fwd); err != nil {
		// Not forwarded: out of the backlog; the emitter hears nothing and
		// publishes again.
		in.log.Warn("forwarding an admitted message failed", "emitter", emitter, "err", err)
		a.release(emitter, size)
	}
}

type apiError struct {
	Code        int    `json:"code"`
	ErrCode     int    `json:"err_code"`
	Description string `json:"description"`
}

// acked hands the stream's ack of a forwarded message to its emitter. A
// message the stream did not store (an error, a duplicate, no stream)
// leaves the backlog at once.
func (a *admission) acked(m *nats.Msg) {
	n, err := strconv.ParseUint(m.Subject[strings.LastIndexByte(m.Subject, '.')+1:], 10, 64)
	if err != nil {
		return
	}
	a.mu.Lock()
	f, ok := a.pending[n]
	delete(a.pending, n)
	a.mu.Unlock()
	if !ok {
		return // forgotten: too late
	}
	if !stored(m) {
		a.release(f.emitter, f.size)
	}
	if err := a.in.nc.PublishMsg(&nats.Msg{Subject: f.reply, Header: m.Header, Data: m.Data}); err != nil {
		a.in.log.Warn("handing a publish ack to its emitter failed", "emitter", f.emitter, "err", err)
	}
}

// stored reports whether a stream's reply says it stored the message: a
// publish ack, a JSON object without an error and not a duplicate. An ack
// that does not mention a duplicate at all (the common case,
// {"stream":"...","seq":N}) is only checked to be a JSON object, not
// decoded: decoding every ack was 0.9 % of the CPU of `zarlog bench --pace
// human` (docs/BENCHMARKS.md, issue 31), the check is 0.3 %.
func stored(m *nats.Msg) bool {
	if m.Header.Get("Status") != "" || len(m.Data) == 0 {
		return false // no responders, or another status
	}
	if bytes.Contains(m.Data, []byte(`"error"`)) {
		return false
	}
	if !bytes.Contains(m.Data, []byte("duplicate")) {
		d := bytes.TrimSpace(m.Data)
		return len(d) > 0 && d[0] == '{' && json.Valid(d)
	}
	var ack struct {
		Duplicate bool `json:"duplicate"`
	}
	return json.Unmarshal(m.Data, &ack) == nil && !ack.Duplicate
}

// release takes a message of size bytes out of emitter's backlog: it was
// not stored, or the ingest decided it. The counts never go below zero (a
// message admitted before a restart).
func (a *admission) release(emitter string, size int) {
	a.mu.Lock()
	b := a.by[emitter]
	if b == nil {
		a.mu.Unlock()
		return
	}
	dBytes, dMsgs := min(int64(size), b.bytes), min(1, b.msgs)
	b.bytes -= dBytes
	b.msgs -= dMsgs
	if b.msgs == 0 {
		dBytes += b.bytes // a message admitted before a restart counted none
		b.bytes = 0
		delete(a.by, emitter)
	}
	a.mu.Unlock()
	a.in.m.backlogBytes.WithLabelValues(emitter).Sub(float64(dBytes))
	a.in.m.backlogMsgs.WithLabelValues(emitter).Sub(float64(dMsgs))
}

// forget drops the forwarded messages whose ack never came.
func (a *admission) forget(now time.Time) {
	var old []forwarded
	a.mu.Lock()
	for n, f := range a.pending {
		if now.Sub(f.at) > pendingAge {
			old = append(old, f)
			delete(a.pending, n)
		}
	}
	// An emitter idle for longer than its burst has a full bucket again.
	for e, k := range a.rates {
		if a.in.cfg.Now().Sub(k.at) > rateBurst*time.Second {
			delete(a.rates, e)
		}
	}
	for e, k := range a.refused {
		if a.in.cfg.Now().Sub(k.at) > refusedBurst*time.Second {
			delete(a.refused, e)
		}
	}
	// A penalty is remembered for a repeat until penaltyMax after its end.
	for e, p := range a.penalties {
		if a.in.cfg.Now().Sub(p.until) > penaltyMax {
			delete(a.penalties, e)
		}
	}
	a.mu.Unlock()
	for _, f := range old {
		a.release(f.emitter, f.size)
	}
}

// backlog returns emitter's admitted, undecided bytes and messages.
func (a *admission) backlog(emitter string) (bytes, msgs int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if b := a.by[emitter]; b != nil {
		return b.bytes, b.msgs
	}
	return 0, 0
}
