// This file is the follower: a Client keeps every event it accepted until
// the ledger reports it logged (a signed checkpoint covers it) or refused,
// asks the ledger about the messages that carried them
// (wire.MessageStatusRequest: one answer confirms a message's events) and
// about the events no message answer settles in batches
// (wire.StatusRequest), and publishes again every event that the events stream lost after
// acknowledging it: JetStream's lazy fsync on a power loss, a truncated or
// corrupted stream file, a stream deleted and created again, or a ledger
// that decided the message and died before its checkpoint reached the
// bucket (docs/NATS.md §5, "Resending"). The ledger deduplicates by
// (emitter, id), so a copy it already has costs nothing but the message.
//
// The bound: the ledger tells, with every answer, how far it has read the
// stream (wire.StreamState: Decided, its cursor, and Last, the stream's
// last sequence). An event the ledger holds no record of, whose latest
// copy was acknowledged at stream sequence S, is lost once Decided > S (the
// ledger has decided every message up to S, and none held it) or Last < S
// and Last < Decided (the stream ends below S, and the ledger has read all
// of it). Until then it is only not read yet, and the Client waits.

package sdk

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/wire"
)

// FollowStats counts what a Client's following did (Client.FollowStats).
type FollowStats struct {
	// Held is the number of events held now: accepted, and not yet
	// reported logged or refused. HeldBytes is their size.
	Held, HeldBytes int
	// Logged and Rejected count the events the ledger reported logged
	// (covered by a signed checkpoint) or refused; Resent counts the
	// copies the Client published again because the stream had lost the
	// event (or, once, after a refusal caused by a lost predecessor).
	Logged, Rejected, Resent uint64
	// Requests counts the status requests sent: about events
	// (wire.StatusRequest) and about messages
	// (wire.MessageStatusRequest). ByMessage counts the events reported
	// logged by an answer about their message.
	Requests, ByMessage uint64
}

// ErrFollowUnsupported is given to Config.OnRetry once when the ledger
// does not serve status requests (receipt protocol version 3): the Client
// then stops following and holds nothing.
var ErrFollowUnsupported = errors.New("the ledger does not answer status requests (receipt protocol version 3); the Client does not follow its events")

// A held is one event the Client holds until the ledger reports it logged
// or refused. Its fields are guarded by follower.mu.
type held struct {
	ev Event
	n  uint64 // acceptance number, for WaitLogged
	// seq is the stream sequence of the latest copy's acknowledgement, 0
	// until one is acknowledged; acked is when. bound stands for seq when
	// the event is followed without its acknowledgement (Follow): the
	// stream's last sequence in the first answer, which no copy
	// acknowledged before the question can be above.
	seq, bound uint64
	acked      time.Time
	// appended is set once the ledger reported the event durable at
	// index, at appendedAt: not covered by a checkpoint yet. It is asked
	// about again once a reply's checkpoint is larger than index, or
	// after appendedAgain, and only a reply that says logged makes it
	// logged: the ledger that reported it appended may lose it (a primary
	// fenced before it published the checkpoint, whose leaves the new
	// primary never had; a ledger restored from an older copy), and then
	// a checkpoint of the new primary's larger tree covers another leaf at
	// that index.
	appended   bool
	index      uint64
	appendedAt time.Time
	// copies is the number of copies being published (not yet
	// acknowledged or failed): no resend while one is under way.
	copies int
	// resends and resentAt pace the resends of this event.
	resends  int
	resentAt time.Time
	// retriedOrder: the event was sent again once after an out-of-order or
	// unknown-game refusal (its predecessor had been lost). orderRefusedAt
	// is when that copy was first answered with such a refusal, every
	// earlier event of its order key logged: the refusal is final once
	// it has stood for Config.OrderSettle.
	retriedOrder   bool
	orderRefusedAt time.Time
	// floor is the highest stream sequence the Client had seen (an ack,
	// or a reply's last sequence) when it published the latest copy
	// again: a stream that has not lost acknowledged messages gives that
	// copy a higher one. reused is set when it did not: the stream gave
	// the copy a sequence it had given before (a truncated block file),
	// so a ledger whose cursor is past it may have decided another message
	// there, and a refusal it answers may be an earlier copy's
	// (docs/NATS.md §5, "Sequences given twice").
	floor  uint64
	reused bool
	done   bool
	// msg is the message by which the event is followed: the latest
	// acknowledged message that carried a copy of it, while the ledger
	// may answer about it whole (sentMsg). Nil: the event is asked about
	// by its id.
	msg *sentMsg
	// keyPrev and keyNext link the held events of one order key in
	// acceptance order (follower.byKey names the last).
	keyPrev, keyNext *held
}

// A sentMsg is one acknowledged message whose events are followed by
// asking about the message (wire.MessageStatusRequest): its stream
// sequence and the SHA-256 of its payload name it, and one answer
// confirms its events. Its fields are guarded by follower.mu.
type sentMsg struct {
	seq   uint64
	sum   wire.Hash
	n     int     // its events
	hs    []*held // the held events it carried
	acked time.Time
	// live is the number of held events followed by this message
	// (held.msg); none left, it is not asked about.
	live int
	// appended, index, appendedAt: as held's, for the largest leaf index
	// of its events.
	appended   bool
	index      uint64
	appendedAt time.Time
	done       bool
}

// A follower is the Client's set of held events.
type follower struct {
	mu   sync.Mutex
	byID map[string]*held
	// byKey is the last held event of each order key; the key's held
	// events are linked through held.keyPrev and keyNext, in acceptance
	// order. (A list of its own for each key cost an allocation and a map
	// write per event at a human pace, where each game holds one or two.)
	byKey    map[string]*held
	order    []*held // in acceptance order; done ones are dropped from the front lazily
	accepted uint64
	bytes    int
	count    int
	room     chan struct{} // closed and replaced when room is made, if roomWanted
	// roomWanted: a reserve waits on room (a drop then closes it).
	roomWanted bool
	idle       []logWaiter // WaitLogged callers
	off        bool        // following is off, or the ledger does not support it
	stats      FollowStats
	wake       chan struct{} // wakes the loop early (a Receipt found a loss)
	// decided and last are the stream's state in the latest reply that
	// carried one, and size the largest checkpoint seen: a round asks only
	// about the events they leave open (round).
	decided, last, size uint64
	// hiSeq is the highest stream sequence seen: of an ack, or a reply's
	// last sequence (held.floor).
	hiSeq uint64
	// msgs are the messages followed whole, in acknowledgement order;
	// done ones are dropped at each round. byEvent is set once the ledger
	// answered a message status request "bad-request" (a ledger that
	// predates it): every event is then asked about by its id.
	msgs    []*sentMsg
	byEvent bool
	// loose is the number of held events not followed by their message
	// (held.msg nil): none, a round does not look for events to ask
	// about by id.
	loose int
}

type logWaiter struct {
	n  uint64
	ch chan struct{}
}

func newFollower(off bool) *follower {
	return &follower{byID: map[string]*held{}, byKey: map[string]*held{}, room: make(chan struct{}), off: off, wake: make(chan struct{}, 1)}
}

// reserve waits until the Client may hold one more event of size bytes.
func (c *Client) reserve(ctx context.Context, size int) error {
	f := c.follow
	for {
		f.mu.Lock()
		if f.off || f.count < c.cfg.MaxHeld && (f.count == 0 || f.bytes+size <= c.cfg.MaxHeldBytes) {
			f.mu.Unlock()
			return nil
		}
		room := f.room
		f.roomWanted = true
		f.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.closed:
			return ErrClosed
		}
	}
}

// hold returns the held record of ev, making one if the Client holds no
// event with its id (or holds other bytes under it: the newer replaces
// it), in spare if it is not nil, and counts one more copy on its way. It
// returns nil when following is off.
func (c *Client) hold(ev Event, spare *held) *held {
	f := c.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.off {
		return nil
	}
	if h := f.byID[ev.ID]; h != nil && !h.done {
		if string(h.ev.Data) == string(ev.Data) {
			h.copies++
			return h
		}
		c.dropLocked(h)
	}
	f.accepted++
	h := spare
	if h == nil {
		h = new(held)
	}
	*h = held{ev: ev, n: f.accepted, copies: 1}
	f.loose++
	f.byID[ev.ID] = h
	if k := ev.OrderKey; k != "" {
		if t := f.byKey[k]; t != nil {
			t.keyNext, h.keyPrev = h, t
		}
		f.byKey[k] = h
	}
	f.order = append(f.order, h)
	f.count++
	f.bytes += len(ev.Data)
	f.stats.Held, f.stats.HeldBytes = f.count, f.bytes
	return h
}

// copyAcked records the acknowledgement of a copy of h, and, if m is not
// nil, follows h from now on by m, the message that carried the copy
// (attachLocked), in the same hold of the lock: no round sees h
// acknowledged and not yet followed by its message.
func (c *Client) copyAcked(h *held, seq uint64, m *sentMsg) {
	f := c.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	h.copies--
	f.hiSeq = max(f.hiSeq, seq)
	if h.done {
		return
	}
	h.seq, h.acked = seq, time.Now()
	h.reused = seq <= h.floor
	if m != nil {
		f.attachLocked(h, m)
	}
}

// copyFailed records that a copy of h failed. An event no copy of which
// was ever acknowledged is dropped: its publisher got the error (it may be
// in the stream or not, and publishing it again is the publisher's call,
// as before following).
func (c *Client) copyFailed(h *held) {
	f := c.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	h.copies--
	if !h.done && h.seq == 0 && h.bound == 0 && h.copies == 0 {
		c.dropLocked(h)
	}
}

// dropLocked forgets h without a verdict.
func (c *Client) dropLocked(h *held) {
	f := c.follow
	if h.done {
		return
	}
	h.done = true
	if h.msg == nil {
		f.loose--
	}
	f.unfollowMsg(h)
	if f.byID[h.ev.ID] == h {
		delete(f.byID, h.ev.ID)
	}
	if k := h.ev.OrderKey; k != "" {
		if h.keyPrev != nil {
			h.keyPrev.keyNext = h.keyNext
		}
		if h.keyNext != nil {
			h.keyNext.keyPrev = h.keyPrev
		} else if h.keyPrev != nil {
			f.byKey[k] = h.keyPrev
		} else {
			delete(f.byKey, k)
		}
		h.keyPrev, h.keyNext = nil, nil
	}
	f.count--
	f.bytes -= len(h.ev.Data)
	f.stats.Held, f.stats.HeldBytes = f.count, f.bytes
	if f.roomWanted {
		close(f.room)
		f.room = make(chan struct{})
		f.roomWanted = false
	}
	// Advance the front of the acceptance order and wake WaitLogged.
	for len(f.order) > 0 && f.order[0].done {
		f.order[0] = nil
		f.order = f.order[1:]
	}
	if len(f.order) == 0 {
		f.order = nil
	}
	first := f.accepted + 1
	if len(f.order) > 0 {
		first = f.order[0].n
	}
	kept := f.idle[:0]
	for _, w := range f.idle {
		if w.n < first {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	f.idle = kept
}

// unfollowMsg stops following h by its message: it is asked about by its
// id from now on.
func (f *follower) unfollowMsg(h *held) {
	m := h.msg
	if m == nil {
		return
	}
	h.msg = nil
	if !h.done {
		f.loose++
	}
	if m.live--; m.live <= 0 {
		m.done = true
	}
}

// dissolve stops following m whole: its events still held are asked
// about by their ids (the per-event path decides what the message could
// not: refusals, losses, reused sequences).
func (f *follower) dissolve(m *sentMsg) {
	m.done = true
	for _, h := range m.hs {
		if h.msg == m {
			h.msg = nil
			if !h.done {
				f.loose++
			}
		}
	}
	m.live = 0
	m.hs = nil
}

// newSentMsg returns the record of the message (payload data) JetStream
// acknowledged at stream sequence seq, carrying n events, by which its
// held events are followed (acknowledged attaches them, followMessage
// starts asking about it); nil if the ledger does not answer such
// questions or following is off.
func (c *Client) newSentMsg(seq uint64, data []byte, n int) *sentMsg {
	f := c.follow
	f.mu.Lock()
	skip := f.off || f.byEvent
	f.mu.Unlock()
	if skip || seq == 0 {
		return nil
	}
	return &sentMsg{seq: seq, sum: sha256.Sum256(data), n: n, acked: time.Now(), hs: make([]*held, 0, n)}
}

// attachLocked makes the follower follow h, whose copy m carried and
// JetStream just acknowledged (copyAcked), by asking about m. The caller
// holds f.mu.
func (f *follower) attachLocked(h *held, m *sentMsg) {
	if f.off || f.byEvent || h.done || h.seq != m.seq {
		return
	}
	f.unfollowMsg(h)
	h.msg = m
	f.loose--
	m.live++
	m.hs = append(m.hs, h)
}

// followMessage starts asking about m, once its events are attached.
func (c *Client) followMessage(m *sentMsg) {
	if m == nil {
		return
	}
	f := c.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.off {
		return
	}
	if f.byEvent {
		f.dissolve(m) // the ledger turned out not to answer meanwhile
		return
	}
	if m.live > 0 {
		f.msgs = append(f.msgs, m)
	}
}

// Follow makes the Client hold ev (its ID, Data and OrderKey) as if it had
// published it, without publishing it: the Client asks the ledger about it
// and publishes it again if the stream lost it. A backend that restarted
// calls it for the events it had published and holds no receipt for
// (ResumeTavlarena and the others do it for a game's acknowledged events).
// It returns at once; WaitLogged waits for the verdicts. It does nothing if
// following is off (a negative Config.FollowInterval).
func (c *Client) Follow(ev Event) error {
	if err := wire.CheckEventID(ev.ID); err != nil {
		return fmt.Errorf("sdk: %w: %w", ErrInvalidEvent, err)
	}
	if err := wire.CheckBatchable(ev.Data); err != nil {
		return fmt.Errorf("sdk: %w: event %s: %w", ErrInvalidEvent, ev.ID, err)
	}
	h := c.hold(ev, nil)
	if h == nil {
		return nil
	}
	f := c.follow
	f.mu.Lock()
	h.copies--
	if h.seq == 0 && h.acked.IsZero() {
		h.acked = time.Now().Add(-c.cfg.FollowAfter) // ask at the next round
	}
	f.mu.Unlock()
	return nil
}

// WaitLogged waits until the ledger has reported every event the Client
// accepted (or was given to Follow) before the call logged, covered by a
// signed checkpoint, or refused, or until ctx ends. Events whose
// publication failed before any copy was acknowledged are not waited for.
// A backend calls it before Close to be sure that nothing it published is
// held in its memory only. With following off it returns at once.
func (c *Client) WaitLogged(ctx context.Context) error {
	f := c.follow
	f.mu.Lock()
	if f.off || len(f.order) == 0 {
		f.mu.Unlock()
		return nil
	}
	w := logWaiter{n: f.accepted, ch: make(chan struct{})}
	f.idle = append(f.idle, w)
	f.mu.Unlock()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closed:
		return ErrClosed
	}
}

// FollowStats returns the follower's counters.
func (c *Client) FollowStats() FollowStats {
	f := c.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

// appendedAgain is how long after the ledger reported an event appended,
// without a checkpoint covering it since, the follower asks about it again.
const appendedAgain = 30 * time.Second

// statusTimeout bounds one status request.
const statusTimeout = 5 * time.Second

// followLoop asks the ledger about the held events every FollowInterval.
func (c *Client) followLoop() {
	t := time.NewTicker(c.cfg.FollowInterval)
	defer t.Stop()
	for {
		select {
		case <-c.closed:
			return
		case <-t.C:
		case <-c.follow.wake:
		}
		c.round()
	}
}

// round asks about the messages due, then about the events due that are
// not followed by their message, oldest first, in batches.
func (c *Client) round() {
	f := c.follow
	now := time.Now()
	f.mu.Lock()
	if f.off {
		f.mu.Unlock()
		return
	}
	if !f.byEvent && len(f.msgs) > 0 {
		// As for events below: the oldest due message is asked about
		// every round, the others once the ledger has decided past them
		// (or they are gone from the stream), one appended not before a
		// checkpoint covers its largest index or appendedAgain.
		var due []*sentMsg
		kept := f.msgs[:0]
		for _, m := range f.msgs {
			if m.done {
				continue
			}
			kept = append(kept, m)
			if now.Sub(m.acked) < c.cfg.FollowAfter {
				continue
			}
			if m.appended && m.index >= f.size && now.Sub(m.appendedAt) < appendedAgain {
				continue
			}
			if len(due) > 0 && f.decided <= m.seq && m.seq <= f.last {
				continue
			}
			due = append(due, m)
		}
		clear(f.msgs[len(kept):])
		f.msgs = kept
		f.mu.Unlock()
		for len(due) > 0 {
			n := min(len(due), wire.MaxStatusMessages)
			batch := due[:n]
			due = due[n:]
			progress, err := c.askMessages(batch)
			if err != nil {
				if c.cfg.OnRetry != nil {
					c.cfg.OnRetry(fmt.Errorf("following %d messages: %w", len(batch), err))
				}
				return
			}
			if !progress {
				break
			}
		}
		now = time.Now()
		f.mu.Lock()
		if f.off {
			f.mu.Unlock()
			return
		}
	}
	if f.loose == 0 {
		f.mu.Unlock()
		return // every held event is followed by its message
	}
	var due []*held
	// Every due event, however many: a cap on a round would cap the
	// events a Client can confirm per FollowInterval, and so (through
	// MaxHeld) its sustained publish rate. A round asks about the oldest
	// first, one request at a time, and stops at the first batch the
	// ledger has not read past yet. What the last replies said spares the
	// ledger a lookup of each event per round: one appended is not asked
	// about again before a checkpoint covers its index, or appendedAgain
	// (a checkpoint covering its index does not make it logged: only the
	// ledger's reply does; see held.appended); one whose message the
	// ledger has not decided yet and that is still in the stream (by the
	// latest state) is not asked about, but for the oldest due event,
	// which is asked about every round to learn the state.
	for _, h := range f.order {
		if h.done || h.msg != nil || h.acked.IsZero() || now.Sub(h.acked) < c.cfg.FollowAfter {
			continue
		}
		if h.appended && h.index >= f.size && now.Sub(h.appendedAt) < appendedAgain {
			continue
		}
		if len(due) > 0 && h.seq != 0 && f.decided <= h.seq && h.seq <= f.last {
			continue
		}
		due = append(due, h)
	}
	f.mu.Unlock()
	for len(due) > 0 {
		n := min(len(due), wire.MaxStatusEvents)
		batch := due[:n]
		due = due[n:]
		progress, err := c.ask(batch)
		if err != nil {
			if c.cfg.OnRetry != nil {
				c.cfg.OnRetry(fmt.Errorf("following %d events: %w", len(batch), err))
			}
			return
		}
		if !progress {
			return // the ledger has not read past these yet: the later ones wait too
		}
	}
}

// request sends req on the emitter's receipts subject and returns the
// reply's payload.
func (c *Client) request(req []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
	defer cancel()
	go func() {
		select {
		case <-c.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	msg, err := c.nc.RequestWithContext(ctx, c.cfg.Subjects.Receipts(c.cfg.Emitter), req)
	if err != nil {
		return nil, err
	}
	return msg.Data, nil
}

// askMessages sends one message status request about batch and acts on
// the reply. It reports whether the ledger has read past any of them.
// Only an answer that names the message by its sequence and payload, every
// event of it appended, confirms its events; anything else hands them to
// the per-event path (dissolve), which decides losses and refusals as
// before.
func (c *Client) askMessages(batch []*sentMsg) (progress bool, err error) {
	f := c.follow
	q := wire.MessageStatusRequest{V: wire.MessageStatusVersion, Messages: make([]wire.MessageQuery, len(batch))}
	f.mu.Lock()
	for i, m := range batch {
		q.Messages[i] = wire.MessageQuery{Seq: m.seq, SHA256: m.sum}
	}
	f.stats.Requests++
	f.mu.Unlock()
	req, err := wire.MarshalMessageStatusRequest(q)
	if err != nil {
		return false, err
	}
	data, err := c.request(req)
	if err != nil {
		return false, err
	}
	rep, err := wire.ParseMessageStatusReply(data)
	if err != nil {
		if old, err2 := wire.ParseReceiptReply(data); err2 == nil && old.Status == wire.StatusError && old.Code == "bad-request" {
			// A ledger that predates message status requests: follow
			// every event by its id.
			f.mu.Lock()
			f.byEvent = true
			for _, m := range f.msgs {
				f.dissolve(m)
			}
			f.msgs = nil
			f.mu.Unlock()
			return true, nil
		}
		return false, err
	}
	if rep.Status != wire.StatusOK {
		return false, fmt.Errorf("status %s, code %s: %s", rep.Status, rep.Code, rep.Reason)
	}
	if len(rep.Messages) != len(batch) {
		return false, fmt.Errorf("%w: %d statuses for %d messages", wire.ErrMessage, len(rep.Messages), len(batch))
	}
	for i, m := range batch {
		if rep.Messages[i].Seq != m.seq {
			return false, fmt.Errorf("%w: status %d is of the message at %d, not %d", wire.ErrMessage, i, rep.Messages[i].Seq, m.seq)
		}
	}
	var size uint64
	if rep.Checkpoint != "" {
		cp, err := c.openCheckpoint([]byte(rep.Checkpoint))
		if err != nil {
			return false, fmt.Errorf("the message status reply's checkpoint: %w", err)
		}
		size = cp.Size
	}
	st, stOK := rep.State()
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if stOK {
		f.decided, f.last = st.Decided, st.Last
		f.hiSeq = max(f.hiSeq, st.Last)
	}
	f.size = max(f.size, size)
	for i, m := range batch {
		s := rep.Messages[i]
		if m.done {
			continue
		}
		switch s.Status {
		case wire.MessageLogged:
			progress = true
			if s.Events != m.n {
				f.dissolve(m) // not the message we sent, whatever the sum says
				continue
			}
			if *s.Index >= size {
				continue // a reply that contradicts itself: ask again
			}
			for _, h := range m.hs {
				if !h.done {
					f.stats.Logged++
					f.stats.ByMessage++
					c.dropLocked(h)
				}
			}
			m.done, m.hs = true, nil
		case wire.MessageAppended:
			progress = true
			if s.Events != m.n {
				f.dissolve(m)
				continue
			}
			if !m.appended || m.appendedAt.IsZero() {
				m.appendedAt = now
			}
			m.appended, m.index = true, *s.Index
		case wire.MessageMixed:
			progress = true
			f.dissolve(m)
		case wire.MessageUnknown:
			m.appended = false // a ledger that reported it appended lost it since (a takeover)
			if stOK && st.Lost(m.seq) {
				progress = true
				f.dissolve(m)
			}
		}
	}
	return progress, nil
}

// ask sends one status request about batch and acts on the reply. It
// reports whether the ledger has read past any of them (a verdict, or a
// loss), which tells the round whether asking about later events is worth
// it.
func (c *Client) ask(batch []*held) (progress bool, err error) {
	f := c.follow
	q := wire.StatusRequest{V: wire.ReceiptStateVersion, Events: make([]wire.StatusQuery, len(batch))}
	f.mu.Lock()
	for i, h := range batch {
		q.Events[i] = wire.StatusQuery{ID: h.ev.ID, Seq: h.seq}
	}
	f.stats.Requests++
	f.mu.Unlock()
	req, err := wire.MarshalStatusRequest(q)
	if err != nil {
		return false, err
	}
	data, err := c.request(req)
	if err != nil {
		return false, err
	}
	rep, err := wire.ParseStatusReply(data)
	if err != nil {
		if old, err2 := wire.ParseReceiptReply(data); err2 == nil && old.Status == wire.StatusError && old.Code == "bad-request" {
			c.stopFollowing()
			return false, ErrFollowUnsupported
		}
		return false, err
	}
	if rep.Status != wire.StatusOK {
		return false, fmt.Errorf("status %s, code %s: %s", rep.Status, rep.Code, rep.Reason)
	}
	if len(rep.Events) != len(batch) {
		return false, fmt.Errorf("%w: %d statuses for %d events", wire.ErrMessage, len(rep.Events), len(batch))
	}
	var size uint64
	if rep.Checkpoint != "" {
		cp, err := c.openCheckpoint([]byte(rep.Checkpoint))
		if err != nil {
			return false, fmt.Errorf("the status reply's checkpoint: %w", err)
		}
		size = cp.Size
	}
	st, stOK := rep.State()
	f.mu.Lock()
	if stOK {
		f.decided, f.last = st.Decided, st.Last
		f.hiSeq = max(f.hiSeq, st.Last)
	}
	f.size = max(f.size, size)
	f.mu.Unlock()
	var resend []*held
	var rejected []*RejectedError
	now := time.Now()
	f.mu.Lock()
	for i, h := range batch {
		s := rep.Events[i]
		if h.done || s.ID != h.ev.ID {
			continue
		}
		if s.Status != wire.EventLogged && s.Status != wire.EventAppended && h.seq != q.Events[i].Seq {
			// A copy acknowledged since the question (Receipt published
			// it again): this answer is about the older one.
			continue
		}
		switch s.Status {
		case wire.EventLogged:
			if *s.Index >= size {
				continue // a reply that contradicts itself: ask again
			}
			f.stats.Logged++
			c.dropLocked(h)
			progress = true
		case wire.EventAppended:
			if !h.appended || h.appendedAt.IsZero() {
				h.appendedAt = now
			}
			h.appended, h.index = true, *s.Index
			progress = true
		case wire.EventRejected:
			progress = true
			if h.copies > 0 {
				continue // the refusal of an older copy: the new one's answer is the one
			}
			if h.reused {
				// The copy's sequence was given before: the refusal may
				// be of an earlier copy, decided there. Send it again
				// (paced); a copy at a new sequence gets its own answer.
				if now.Sub(h.resentAt) >= c.resendWait(h) {
					resend = append(resend, c.claimLocked(f.tail(h))...)
				}
				continue
			}
			code := events.Code(s.Code)
			if orderRefusal(h, code) {
				if f.predecessorHeld(h) {
					continue // refused because an earlier event is missing: wait for it
				}
				if !h.retriedOrder && h.copies == 0 {
					h.retriedOrder = true
					resend = append(resend, c.claimLocked(f.tail(h))...)
					continue
				}
				if h.orderRefusedAt.IsZero() {
					h.orderRefusedAt = now
				}
				if now.Sub(h.orderRefusedAt) < c.cfg.OrderSettle {
					continue // asked again each round until it has stood
				}
			}
			f.stats.Rejected++
			rejected = append(rejected, &RejectedError{EventID: h.ev.ID, Code: s.Code, Reason: s.Reason})
			c.dropLocked(h)
		case wire.EventUnknown:
			h.appended = false // a ledger that reported it appended lost it since (a takeover)
			h.orderRefusedAt = time.Time{}
			if !stOK || h.copies > 0 {
				continue
			}
			seq := h.seq
			if seq == 0 {
				if h.bound == 0 {
					h.bound = max(st.Last, 1)
				}
				seq = h.bound
			}
			if !st.Lost(seq) {
				continue
			}
			progress = true
			if wait := c.resendWait(h); now.Sub(h.resentAt) < wait {
				continue
			}
			resend = append(resend, c.claimLocked(f.tail(h))...)
		}
	}
	f.mu.Unlock()
	c.resend(resend)
	if c.cfg.OnRejected != nil {
		for _, r := range rejected {
			c.cfg.OnRejected(r)
		}
	}
	return progress, nil
}

// resendWait is how long after its last resend an event may be sent again:
// FollowAfter, doubling with each resend, at most a minute.
func (c *Client) resendWait(h *held) time.Duration {
	if h.resends == 0 {
		return 0
	}
	return min(c.cfg.FollowAfter<<min(h.resends-1, 10), time.Minute)
}

// first returns the first held event of order key k, in acceptance order
// (nil if none).
func (f *follower) first(k string) *held {
	o := f.byKey[k]
	for o != nil && o.keyPrev != nil {
		o = o.keyPrev
	}
	return o
}

// predecessorHeld reports whether an event accepted before h with its
// order key is still held: not reported logged (nor refused). One that a
// ledger reported appended counts: a primary fenced before its checkpoint
// reached the bucket appended it, and the new primary that refused h never
// had it (docs/FAULTS.md §4, run 7). Such a predecessor is asked about at
// the next round, rather than after appendedAgain: if the ledger has lost
// it, the follower finds it lost and publishes it again with its order
// key's later events, h among them.
func (f *follower) predecessorHeld(h *held) bool {
	found := false
	for o := f.first(h.ev.OrderKey); o != nil; o = o.keyNext {
		if o == h {
			break
		}
		if !o.done {
			found = true
			if o.appended {
				o.appendedAt = time.Time{} // ask about it again at once
			}
			f.unfollowMsg(o) // by its id: its message's record may be another ledger's
		}
	}
	return found
}

// tail returns h and the events held after it with its order key that are
// not logged and not on their way already: sent again in this order after
// h, they cannot land before it (a refusal of theirs caused by h's loss is
// then judged anew). Those a ledger reported appended go too: the ledger
// that lost h may have lost them with it (a fenced primary's leaves), and
// a copy of one the ledger has costs a duplicate.
func (f *follower) tail(h *held) []*held {
	out := []*held{h}
	if k := h.ev.OrderKey; k != "" {
		after := false
		for o := f.first(k); o != nil; o = o.keyNext {
			if o == h {
				after = true
				continue
			}
			if after && !o.done && o.copies == 0 && !o.acked.IsZero() {
				out = append(out, o)
			}
		}
	}
	return out
}

// claimLocked counts one more copy on its way of each of hs that is not
// done and has none on its way, once each, and returns those: the copies
// to publish (resend). Claiming under the lock that chose them keeps two
// rounds or Receipt calls from sending the same event twice.
func (c *Client) claimLocked(hs []*held) []*held {
	f := c.follow
	now := time.Now()
	var live []*held
	for _, h := range hs {
		if h.done || h.copies > 0 {
			continue // a lost event's tail may hold another lost event
		}
		h.copies++
		h.resends++
		h.resentAt = now
		h.floor = f.hiSeq
		f.stats.Resent++
		live = append(live, h)
	}
	return live
}

// resend publishes a copy of each of hs, which claimLocked returned, in
// order. The copies go through the Client's queue with their order key, so
// a key's copies keep their order.
func (c *Client) resend(hs []*held) {
	for _, h := range hs {
		if c.cfg.OnResend != nil {
			c.cfg.OnResend(h.ev.ID)
		}
		if _, err := c.publish(c.life, h.ev, h); err != nil {
			c.copyFailed(h)
		}
	}
}

// noteResend counts a copy of id that Receipt published for an event the
// Client does not hold, and tells OnResend.
func (c *Client) noteResend(id string) {
	f := c.follow
	f.mu.Lock()
	f.stats.Resent++
	f.mu.Unlock()
	if c.cfg.OnResend != nil {
		c.cfg.OnResend(id)
	}
}

// wakeFor wakes the follower for a Receipt that found the held event id
// lost: the follower asks about every held event in acceptance order and
// publishes again the lost ones, each with its order key's later events,
// so the copies go in their order. It returns false if the Client does
// not hold the event (Receipt then publishes it itself).
func (c *Client) wakeFor(id string) bool {
	f := c.follow
	f.mu.Lock()
	h := f.byID[id]
	held := h != nil && !h.done
	if held && h.appended {
		h.appendedAt = time.Time{} // reported appended by a ledger that lost it since: ask now
	}
	if held {
		f.unfollowMsg(h) // asked about by its id, at once
	}
	f.mu.Unlock()
	if held {
		select {
		case f.wake <- struct{}{}:
		default:
		}
	}
	return held
}

// Config.OrderSettle is how long an order refusal of a copy sent after an
// earlier one, every earlier event of its order key logged, must stand
// before it is final (10 s by default). A primary fenced by a takeover (cut off past its lease, or
// paused) answers from its own state, which lacks what the new primary
// logged since, until it learns at its next write to the lock that it has
// lost the log, and then stops; its refusals are not in the new primary's
// ledger, which has no record of the copy, and the Client finds the copy
// lost and sends it again (docs/FAULTS.md §4, run 11). A lock is renewed
// every 1.5 s by default: 10 s is well past that.

// orderRefusal reports whether code refuses h only for what came before it
// under its order key (out-of-order, unknown-game): a lost predecessor
// published again undoes it.
func orderRefusal(h *held, code events.Code) bool {
	return h.ev.OrderKey != "" && (code == events.CodeOutOfOrder || code == events.CodeUnknownGame)
}

// refusalOpen reports whether the refusal (code) of the held event id,
// answered for its copy at stream sequence seq, may still be undone, so
// that Receipt asks again rather than return it: a newer copy of the event
// is on its way or acknowledged, or the refusal is an order refusal while
// an earlier event of its order key is held without the ledger having it,
// or before the follower's one retry of it. It wakes the follower.
func (c *Client) refusalOpen(id, code string, seq uint64) bool {
	f := c.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.byID[id]
	if h == nil || h.done {
		return false
	}
	// An order refusal is open until the follower takes it as final
	// (ask: after its retry, once it has stood for Config.OrderSettle) and drops
	// the event.
	open := h.copies > 0 || h.seq != 0 && h.seq != seq || h.reused || orderRefusal(h, events.Code(code))
	if open {
		select {
		case f.wake <- struct{}{}:
		default:
		}
	}
	return open
}

// heldSeq returns the stream sequence of the latest acknowledged copy of
// the held event id (or its bound), and whether a copy is on its way.
func (c *Client) heldSeq(id string) (seq uint64, busy, ok bool) {
	f := c.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.byID[id]
	if h == nil || h.done {
		return 0, false, false
	}
	if h.seq != 0 {
		return h.seq, h.copies > 0, true
	}
	return h.bound, h.copies > 0, true
}

// stopFollowing turns following off for good: the ledger cannot answer.
func (c *Client) stopFollowing() {
	f := c.follow
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.off {
		return
	}
	for _, h := range append([]*held(nil), f.order...) {
		c.dropLocked(h)
	}
	f.off = true
	f.msgs = nil
	for _, w := range f.idle {
		close(w.ch)
	}
	f.idle = nil
}

// openCheckpoint parses a signed checkpoint note, checking its signature
// with the log's key when the Client has one (once per note: the receipts'
// checkedNotes).
func (c *Client) openCheckpoint(b []byte) (merkle.Checkpoint, error) {
	if c.cfg.LogKey != nil {
		return c.notes.open(b, c.cfg.LogKey)
	}
	return merkle.ParseSignedCheckpoint(b)
}
