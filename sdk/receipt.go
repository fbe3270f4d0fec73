package sdk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/wire"
)

// A Receipt is the ledger's promise about one event, as a C2SP
// tlog-proof@v1 (https://c2sp.org/tlog-proof) of it: the event's leaf bytes
// (Extra), its leaf Index, its inclusion Proof and the signed Checkpoint
// (with whatever cosignatures it had) that the proof leads to. It says: the
// log signed a checkpoint of a tree whose leaf Index is exactly these bytes.
// The log cannot later drop the event without signing a checkpoint
// inconsistent with this one, which is evidence against it.
//
// Format gives the tlog-proof file: the file `zarlog-verify` checks, the
// JavaScript package's checkReceipt checks, and, when the checkpoint is the
// same, byte for byte what the log serves as
// /games/<game>/proofs/<seq>.tlog-proof. ParseReceipt reads it back.
//
// The Client checks every receipt it returns against the event bytes it
// published (and, with Config.LogKey, the log's signature), so a Receipt
// from the Client always proves its own event. A receipt from elsewhere —
// a snapshot, a file, another party — is checked with CheckReceipt.
type Receipt struct {
	// EventID is the event's id.
	EventID string
	// TlogProof holds the leaf (Extra), Index, Proof and Checkpoint.
	merkle.TlogProof
	// SignatureChecked reports whether the checkpoint's signature was
	// checked against the log's key (Config.LogKey, or CheckReceipt's
	// key). When false, the inclusion proof was checked against the
	// checkpoint's root, but nothing showed that the log signed that root:
	// check it with CheckReceipt before showing the receipt as proof.
	SignatureChecked bool
}

// ErrBadReceipt wraps every error of a receipt that does not prove its
// event: the ledger's reply to the Client, or a receipt given to
// CheckReceipt or ParseReceipt. The Client never returns such a receipt.
var ErrBadReceipt = errors.New("receipt does not prove the event")

// ParseReceipt reads a receipt from its tlog-proof file (Receipt.Format):
// strictly (merkle.ParseTlogProof), with the event's leaf in its extra line,
// which must be a zarlog event (its id is the receipt's EventID). It checks
// neither the proof nor the signature: CheckReceipt does.
func ParseReceipt(b []byte) (Receipt, error) {
	p, err := merkle.ParseTlogProof(b)
	if err != nil {
		return Receipt{}, fmt.Errorf("sdk: %w: %w", ErrBadReceipt, err)
	}
	if len(p.Extra) == 0 {
		return Receipt{}, fmt.Errorf("sdk: %w: the tlog-proof has no extra line holding the event", ErrBadReceipt)
	}
	ev, err := events.Parse(p.Extra)
	if err != nil {
		return Receipt{}, fmt.Errorf("sdk: %w: its extra line is not an event: %w", ErrBadReceipt, err)
	}
	return Receipt{EventID: ev.ID, TlogProof: p}, nil
}

// CheckReceipt checks a receipt as a player's app does before it trusts
// that an event was logged: that leaf, the event's bytes as the caller knows
// them, is the receipt's leaf (its Extra, if the receipt holds one), that its
// leaf hash is at r.Index in the tree of r.Checkpoint's size (the inclusion
// proof leads to the checkpoint's root), and that the checkpoint is a
// checkpoint note signed by logKey, the log's verifier key (its name is the
// log's origin). It returns the checkpoint. Errors wrap ErrBadReceipt, and
// merkle.ErrProof or merkle.ErrSignature as the case is. Witness
// cosignatures are the caller's policy (merkle.Policy). A receipt for
// another event's index fails, whatever its checkpoint.
func CheckReceipt(r Receipt, leaf []byte, logKey note.Verifier) (merkle.Checkpoint, error) {
	if logKey == nil {
		return merkle.Checkpoint{}, fmt.Errorf("sdk: receipt of %s: %w: no log key to check its signature", r.EventID, ErrBadReceipt)
	}
	if err := checkLeaf(r, leaf); err != nil {
		return merkle.Checkpoint{}, err
	}
	c, err := merkle.CheckTlogProof(r.TlogProof, merkle.LeafHash(leaf), logKey)
	if err != nil {
		return merkle.Checkpoint{}, fmt.Errorf("sdk: receipt of %s: %w: %w", r.EventID, ErrBadReceipt, err)
	}
	return c, nil
}

// checkLeaf checks that leaf is not empty and is the receipt's leaf, if the
// receipt holds one.
func checkLeaf(r Receipt, leaf []byte) error {
	if len(leaf) == 0 {
		return fmt.Errorf("sdk: receipt of %s: %w: no event bytes to check it against", r.EventID, ErrBadReceipt)
	}
	if len(r.Extra) > 0 && !bytes.Equal(r.Extra, leaf) {
		return fmt.Errorf("sdk: receipt of %s: %w: it holds other bytes than the event's (%d bytes, the event %d)", r.EventID, ErrBadReceipt, len(r.Extra), len(leaf))
	}
	return nil
}

// checkInclusion checks r's inclusion proof for leaf against the root of
// r's checkpoint, without its signature: what the Client checks when it has
// no log key.
func checkInclusion(r Receipt, leaf []byte) error {
	if err := checkLeaf(r, leaf); err != nil {
		return err
	}
	c, err := merkle.ParseSignedCheckpoint(r.Checkpoint)
	if err != nil {
		return fmt.Errorf("sdk: receipt of %s: %w: %w", r.EventID, ErrBadReceipt, err)
	}
	if err := merkle.CheckInclusion(merkle.LeafHash(leaf), r.Index, c.Size, r.Proof, c.Hash); err != nil {
		return fmt.Errorf("sdk: receipt of %s: %w: %w", r.EventID, ErrBadReceipt, err)
	}
	return nil
}

// check checks a receipt the ledger sent for ev: with the log's key if the
// Client has one (CheckReceipt), else its inclusion proof alone.
//
// The checkpoint's signature is checked once per note: a ledger signs a
// checkpoint every 100 ms or so, and every receipt it serves meanwhile
// carries the same note, byte for byte. The Client remembers the last
// notes it opened with its key (checkedNotes) and, for a receipt whose
// checkpoint is one of them, exactly the same bytes, reuses the
// checkpoint they opened to instead of checking the same signature again;
// the receipts of one batched reply, checked by their callers at once,
// share one check of their note. The leaf and the inclusion proof are
// checked for every receipt, as CheckReceipt does. (A signature check is
// an Ed25519 verification, the largest part of the SDK's CPU per receipt:
// docs/BENCHMARKS.md, issue 31.)
func (c *Client) check(r *Receipt, leaf []byte) error {
	if c.cfg.LogKey == nil {
		return checkInclusion(*r, leaf)
	}
	if err := checkLeaf(*r, leaf); err != nil {
		return err
	}
	cp, err := c.notes.open(r.Checkpoint, c.cfg.LogKey)
	if err != nil {
		return fmt.Errorf("sdk: receipt of %s: %w: tlog-proof of leaf %d: %w", r.EventID, ErrBadReceipt, r.Index, err)
	}
	if err := merkle.CheckInclusion(merkle.LeafHash(leaf), r.Index, cp.Size, r.Proof, cp.Hash); err != nil {
		return fmt.Errorf("sdk: receipt of %s: %w: tlog-proof: %w", r.EventID, ErrBadReceipt, err)
	}
	r.SignatureChecked = true
	return nil
}

// checkedNotesSize is how many checkpoint notes a Client remembers having
// opened with its log key: receipts answered within a few checkpoint
// intervals of one another share one of them.
const checkedNotesSize = 8

// checkedNotes are the checkpoint notes a Client opened with its log key
// (their whole bytes, signatures and cosignatures included), and what they
// opened to, the last checkedNotesSize of them, and the notes being opened
// now.
type checkedNotes struct {
	mu    sync.Mutex
	notes [checkedNotesSize]checkedNote
	next  int
	// opening are the notes being opened: a call that finds its note
	// here waits for that check's outcome instead of checking it again.
	opening []*noteCheck
}

type checkedNote struct {
	note string
	cp   merkle.Checkpoint
}

// A noteCheck is one note being opened; cp and err are set before done is
// closed.
type noteCheck struct {
	note string
	done chan struct{}
	cp   merkle.Checkpoint
	err  error
}

// open returns what the note msg opens to with key (merkle.Open): what it
// opened to before if msg, byte for byte, is one of the notes remembered, else
// the outcome of opening it now, remembered if it opened. Calls with the
// same bytes at once share one check (the receipts of a batched reply are
// checked by their callers together): the later ones wait for the first's
// outcome, which for the same bytes and key is theirs too. A note that
// fails is not remembered: the next call checks it again. Each call gets
// a checkpoint of its own (copyCheckpoint).
func (n *checkedNotes) open(msg []byte, key note.Verifier) (merkle.Checkpoint, error) {
	n.mu.Lock()
	for i := range n.notes {
		if e := &n.notes[i]; e.note != "" && e.note == string(msg) {
			cp := e.cp
			n.mu.Unlock()
			return copyCheckpoint(cp), nil
		}
	}
	for _, o := range n.opening {
		if o.note == string(msg) {
			n.mu.Unlock()
			<-o.done
			return copyCheckpoint(o.cp), o.err
		}
	}
	o := &noteCheck{note: string(msg), done: make(chan struct{})}
	n.opening = append(n.opening, o)
	n.mu.Unlock()

	o.cp, o.err = merkle.Open(msg, key)

	n.mu.Lock()
	for i, p := range n.opening {
		if p == o {
			n.opening = append(n.opening[:i], n.opening[i+1:]...)
			break
		}
	}
	if o.err == nil {
		n.notes[n.next] = checkedNote{note: o.note, cp: o.cp}
		n.next = (n.next + 1) % len(n.notes)
	}
	n.mu.Unlock()
	close(o.done)
	return copyCheckpoint(o.cp), o.err
}

// copyCheckpoint returns cp with its own Extensions (its Hash is an array,
// copied with it): a caller of checkedNotes.open that changes what it got
// changes neither what the note is remembered as opening to nor what the
// other calls got.
func copyCheckpoint(cp merkle.Checkpoint) merkle.Checkpoint {
	cp.Extensions = slices.Clone(cp.Extensions)
	return cp
}

// A RejectedError says the ledger refused the event, and why.
type RejectedError struct {
	EventID string
	Code    string // machine-readable, e.g. "bad-signature"
	Reason  string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("event %s rejected by the ledger: %s: %s", e.EventID, e.Code, e.Reason)
}

// ErrReceipt wraps a receipt request the ledger refused to serve (a bad
// request); temporary refusals ("busy", "unavailable") are retried.
var ErrReceipt = errors.New("receipt request refused")

// receiptWait is how long one request asks the ledger to hold it, and
// receiptSlack how much longer the Client waits for the answer. A request
// held by a ledger that dies (a primary killed, whose standby takes the
// log over: docs/OPERATIONS.md §10) is never answered, and nothing tells
// the Client: it asks again after receiptWait+receiptSlack, so these bound
// how late a backend learns of the new primary's receipt (with 20 s and
// 5 s, TestServeTakeover's backends had their first receipt 25 s after
// the kill; the new primary had signed it after 6.3 s).
const (
	receiptWait  = 5 * time.Second
	receiptSlack = 2 * time.Second
)

// Receipt waits until the event ev (its ID and Data; OrderKey orders a
// copy it publishes) is durable and covered by a signed checkpoint, and
// returns its receipt: a tlog-proof of ev.Data, checked (see Receipt). It
// asks again as long as the answer is "pending" or the ledger does not
// answer, until ctx ends, and publishes the event again when the ledger's
// answer shows that the stream lost it (wire.StreamState.Lost; docs/NATS.md
// §5, "Resending"): an event the Client holds is sent again through it,
// with its order key's later events; another is published as ev. It fails
// with a *RejectedError if the ledger rejected the event, and with an
// error wrapping ErrBadReceipt if the ledger's receipt does not prove
// ev.Data (a log that answers for other bytes, or a broken proof).
func (c *Client) Receipt(ctx context.Context, ev Event) (Receipt, error) {
	return c.ReceiptOf(ctx, ev, Ack{})
}

// ReceiptOf is Receipt for the copy of the event that ack acknowledged:
// the ledger answers from its decision of that message (ack.Seq), never
// from an earlier copy of the same id, so an event refused once and sent
// again after its game allowed it gets its new answer, not the old
// refusal. Once a later copy is acknowledged (the Client published the
// event again), the answer is that copy's. A zero Ack is Receipt.
func (c *Client) ReceiptOf(ctx context.Context, ev Event, ack Ack) (Receipt, error) {
	id := ev.ID
	if err := wire.CheckEventID(id); err != nil {
		return Receipt{}, fmt.Errorf("sdk: %w: %w", ErrInvalidEvent, err)
	}
	if len(ev.Data) == 0 {
		return Receipt{}, fmt.Errorf("sdk: %w: the event's bytes are needed to check its receipt", ErrInvalidEvent)
	}
	backoff := c.cfg.RetryMin
	// seq is the stream sequence asked about: the latest acknowledged
	// copy's, or, for an event published elsewhere, the stream's last
	// sequence in the first answer (no copy acknowledged before the first
	// request can be above it).
	seq := ack.Seq
	var copying *Pending // a copy this call published, until acknowledged
	// retried: this call published a copy after an order refusal of an
	// event the Client does not hold, and settling is when that copy was
	// first refused so. wasHeld: the Client held the event during the
	// call (its follower decides when a refusal is final).
	retried, wasHeld := false, false
	var settling time.Time
	for {
		busy := false
		if hs, hbusy, ok := c.heldSeq(id); ok {
			busy, wasHeld = hbusy, true
			if hs != 0 {
				seq = hs
			}
		}
		if copying != nil {
			select {
			case <-copying.Done():
				if a, err := copying.Result(); err == nil {
					seq = a.Seq
				}
				copying = nil
			default:
				busy = true
			}
		}
		wait := receiptWait
		if d, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(d))
		}
		if wait <= 0 {
			<-ctx.Done() // the deadline has passed; ctx ends at once
			return Receipt{}, ctx.Err()
		}
		v := int(c.receiptV.Load())
		var req []byte
		if v != wire.ReceiptBatchVersion {
			var err error
			if req, err = wire.MarshalReceiptRequest(wire.ReceiptRequest{ID: id, WaitMillis: wait.Milliseconds(), Seq: seq, V: v}); err != nil {
				return Receipt{}, fmt.Errorf("sdk: %w", err)
			}
		}
		start := time.Now()
		var rep wire.ReceiptReply
		var err error
		if v == wire.ReceiptBatchVersion {
			// Asked together with the Client's other receipt requests
			// (receipts.go), which also asks again at once after a
			// reconnect; the answer about this event is the same.
			rep, err = c.askBatched(ctx, id, seq, wait)
		} else {
			rctx, cancel := context.WithTimeout(ctx, wait+receiptSlack)
			// A reconnect while the request is held means the server that
			// held it may be gone: ask again at once rather than after the
			// wait.
			reconn := c.reconnects()
			go func() {
				select {
				case <-reconn:
					cancel()
				case <-rctx.Done():
				}
			}()
			var msg *nats.Msg
			if msg, err = c.nc.RequestWithContext(rctx, c.cfg.Subjects.Receipts(c.cfg.Emitter), req); err == nil {
				rep, err = wire.ParseReceiptReply(msg.Data)
			}
			reconnected := rctx.Err() != nil && ctx.Err() == nil && isClosed(reconn)
			cancel()
			if reconnected {
				backoff = c.cfg.RetryMin
				continue
			}
		}
		switch {
		case ctx.Err() != nil:
			return Receipt{}, ctx.Err()
		case errors.Is(err, nats.ErrConnectionClosed):
			return Receipt{}, fmt.Errorf("sdk: receipt for %s: %w", id, err)
		case err != nil:
			// No ledger listening, a timeout, or a garbled reply: ask again.
		case rep.Status == wire.StatusOK && rep.V < wire.ReceiptProofVersion:
			return Receipt{}, fmt.Errorf("sdk: receipt for %s: %w: the ledger answered with receipt protocol version 1, without the inclusion proof", id, ErrBadReceipt)
		case rep.Status == wire.StatusOK:
			r := Receipt{EventID: id, TlogProof: merkle.TlogProof{Extra: bytes.Clone(ev.Data), Index: *rep.Index, Checkpoint: []byte(rep.Checkpoint)}}
			if len(rep.Proof) > 0 {
				r.Proof = make([]merkle.Hash, len(rep.Proof)) // one allocation, not one at each doubling
				for i, h := range rep.Proof {
					r.Proof[i] = merkle.Hash(h)
				}
			}
			if err := c.check(&r, ev.Data); err != nil {
				return Receipt{}, err
			}
			return r, nil
		case rep.Status == wire.StatusRejected && (busy || c.refusalOpen(id, rep.Code, seq)):
			// The refusal of an older copy, or of an order refusal that the
			// copies the Client publishes again may undo (a lost
			// predecessor): ask again.
			err = fmt.Errorf("refused (%s: %s) while the Client publishes it, or an earlier event of its order key, again", rep.Code, rep.Reason)
		case rep.Status == wire.StatusRejected && !wasHeld && retried && copying == nil && orderCode(ev, rep.Code) &&
			(settling.IsZero() || time.Since(settling) < c.cfg.OrderSettle):
			// The copy refused too: final once the refusal has stood for
			// Config.OrderSettle (a fenced primary answers from its own state
			// until it stops).
			if settling.IsZero() {
				settling = time.Now()
			}
			err = fmt.Errorf("refused (%s: %s) again after a copy: final once it has stood for %v", rep.Code, rep.Reason, c.cfg.OrderSettle)
		case rep.Status == wire.StatusRejected && !wasHeld && !retried && orderCode(ev, rep.Code):
			// An order refusal of an event the Client does not hold
			// (following off, or published elsewhere): the ledger may have
			// decided this copy before a lost predecessor was published
			// again (a takeover). Its game's earlier events are receipted
			// (a backend asks in a game's order), so a copy published now
			// is judged after them: publish one, once, and its answer is
			// the one.
			p, err := c.PublishAsync(ctx, ev)
			if err != nil {
				return Receipt{}, fmt.Errorf("sdk: receipt for %s: refused %s, and publishing it again failed: %w", id, rep.Code, err)
			}
			copying, retried = p, true
			c.noteResend(id)
			backoff = c.cfg.RetryMin
			continue
		case rep.Status == wire.StatusRejected:
			return Receipt{}, &RejectedError{EventID: id, Code: rep.Code, Reason: rep.Reason}
		case rep.Status == wire.StatusError && rep.Code == "bad-request" && v == wire.ReceiptBatchVersion && rep.V != wire.ReceiptBatchVersion:
			// A ledger that predates batched receipts answers a batched
			// request with its own reply, "bad-request": ask as version 3
			// from now on, one request an event.
			c.receiptV.CompareAndSwap(wire.ReceiptBatchVersion, wire.ReceiptStateVersion)
			continue
		case rep.Status == wire.StatusError && rep.Code == "bad-request" && v == wire.ReceiptStateVersion && strings.Contains(rep.Reason, "version"):
			// A ledger of receipt protocol version 2: ask as version 2
			// from now on (no stream state: nothing to resend by).
			c.receiptV.CompareAndSwap(wire.ReceiptStateVersion, wire.ReceiptProofVersion)
			continue
		case rep.Status == wire.StatusError && rep.Code == "bad-request":
			return Receipt{}, fmt.Errorf("sdk: receipt for %s: %w: %s", id, ErrReceipt, rep.Reason)
		case rep.Status == wire.StatusPending && rep.Index == nil && rep.Decided != nil:
			st, _ := rep.State()
			if seq == 0 {
				// Published elsewhere, or before this Client: from now on
				// the ledger waits until it has read past the stream's
				// last sequence, and then says whether it has the event.
				seq = max(st.Last, 1)
				backoff = c.cfg.RetryMin
				continue
			}
			if !st.Lost(seq) || busy {
				// Not read yet, or a copy is on its way: ask again, at
				// once if the ledger held the request.
				if time.Since(start) >= wait/2 {
					backoff = c.cfg.RetryMin
					continue
				}
				break
			}
			if c.wakeFor(id) {
				// The follower publishes it again, in its order key's
				// order: ask again after a pause.
				err = fmt.Errorf("the stream lost the event (its message %d; the ledger has decided the stream up to %d, and it ends at %d): the Client publishes it again", seq, st.Decided, st.Last)
				break
			}
			p, err := c.PublishAsync(ctx, ev)
			if err != nil {
				return Receipt{}, fmt.Errorf("sdk: receipt for %s: the stream lost the event, and publishing it again failed: %w", id, err)
			}
			copying = p
			c.noteResend(id)
			if c.cfg.OnRetry != nil {
				c.cfg.OnRetry(fmt.Errorf("receipt for %s: the stream lost the event (its message %d; the ledger has decided the stream up to %d, and it ends at %d): published again", id, seq, st.Decided, st.Last))
			}
			backoff = c.cfg.RetryMin
			continue
		case rep.Status == wire.StatusPending && time.Since(start) >= wait/2:
			backoff = c.cfg.RetryMin // the ledger held the request: ask again at once
			continue
		}
		if c.cfg.OnRetry != nil {
			if err == nil {
				err = fmt.Errorf("status %q, code %q: %s", rep.Status, rep.Code, rep.Reason)
			}
			c.cfg.OnRetry(fmt.Errorf("receipt for %s: %w", id, err))
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Receipt{}, ctx.Err()
		}
		backoff = min(2*backoff, c.cfg.RetryMax)
	}
}

// orderCode reports whether code refuses ev only for what came before it
// under its order key (out-of-order, unknown-game).
func orderCode(ev Event, code string) bool {
	return ev.OrderKey != "" && (events.Code(code) == events.CodeOutOfOrder || events.Code(code) == events.CodeUnknownGame)
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Rejections calls handle with every rejection the ledger announces for
// this emitter's events, until the subscription is drained or unsubscribed.
// Announcements are best effort (not stored); a Receipt request reports a
// rejection durably.
func (c *Client) Rejections(handle func(wire.Rejection)) (*nats.Subscription, error) {
	sub, err := c.nc.Subscribe(c.cfg.Subjects.Rejected(c.cfg.Emitter), func(m *nats.Msg) {
		if r, err := wire.ParseRejection(m.Data); err == nil {
			handle(r)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("sdk: subscribing to rejections: %w", err)
	}
	return sub, nil
}
