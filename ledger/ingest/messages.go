package ingest

import (
	"context"
	"crypto/sha256"
	"hash/maphash"
	"sync"
	"time"
	"unsafe"

	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/wire"
)

// Following per message (docs/NATS.md §5): the ingest keeps, in memory, a
// record of each of the latest messageRecords messages it decided: its
// stream sequence, its emitter, the SHA-256 of its payload, its number of
// events, whether every one of them was appended (or was a duplicate of an
// event in the log) and the largest of their leaf indexes. A
// wire.MessageStatusRequest is answered from these records alone, without
// looking any event up: an SDK confirms a message of a few hundred events
// with one entry. What the records cannot say for sure, they do not say:
// a message of which an event was refused is answered "mixed", one without
// a record (evicted, decided before this session, another payload at its
// sequence, not decided yet) "unknown", and the SDK asks about its events
// one by one (wire.StatusRequest).
//
// A record is made once the message's events are durable, and only if
// Config.Hold still allows this node to serve the log; the records are
// dropped when a session starts, so that they never outlive the ledger
// state they were made from (a node that lost its lease and got it back
// answers from records made after).

// MessageRecords is the number of decided messages whose records are kept,
// MessageRecordBytes each (no pointers: 2 MiB, allocated once). At
// saturation (about 200 events a message) that is millions of events; at a
// human pace (one or two a message) some seconds at 8,000 messages a
// second, past which the SDK asks event by event, as without the records.
const (
	MessageRecords     = 1 << 15
	MessageRecordBytes = int(unsafe.Sizeof(msgRecord{}))
)

// A msgRecord is what the ingest decided of one message.
type msgRecord struct {
	seq     uint64 // 0: an empty slot
	emitter uint64 // the emitter's hash (msgRecords.seed)
	sum     wire.Hash
	max     uint64 // the largest leaf index of its events, if all
	n       int32  // its number of events
	all     bool   // every event was appended or a duplicate
}

// A msgRecords is a ring of records, by stream sequence.
type msgRecords struct {
	mu   sync.Mutex
	ring []msgRecord
	// seed hashes emitter ids: a record holds no string. Two emitters
	// whose ids collide (2^-64 for two given ids) could only confuse a
	// question whose sequence and payload SHA-256 are both the other's.
	seed maphash.Seed
}

func newMsgRecords(n int) *msgRecords {
	return &msgRecords{ring: make([]msgRecord, n), seed: maphash.MakeSeed()}
}

func (r *msgRecords) emitterHash(emitter string) uint64 {
	return maphash.String(r.seed, emitter)
}

// put records the decisions of a batch's messages.
func (r *msgRecords) put(items []item, outs []ledger.Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range items {
		it := &items[i]
		if it.ackOnly || it.n == 0 {
			continue
		}
		rec := msgRecord{seq: it.seq, emitter: r.emitterHash(it.emitter), sum: it.sum, n: int32(it.n), all: true}
		for _, o := range outs[it.first : it.first+it.n] {
			if o.Result != ledger.Appended && o.Result != ledger.Duplicate {
				rec.all = false
				break
			}
			rec.max = max(rec.max, o.Index)
		}
		r.ring[it.seq%uint64(len(r.ring))] = rec
	}
}

// get returns the record of the message at seq, if it is kept.
func (r *msgRecords) get(seq uint64) (msgRecord, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.ring[seq%uint64(len(r.ring))]
	return rec, rec.seq == seq && seq != 0
}

// reset drops every record.
func (r *msgRecords) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.ring)
}

// payloadSum is the SHA-256 of a message's payload, as the SDK computes it
// for a wire.MessageQuery.
func payloadSum(data []byte) wire.Hash {
	return sha256.Sum256(data)
}

// messageStatus answers a message status request that arrived at arrived:
// the stream's state and the latest signed checkpoint, read first, then
// each message's record.
func (in *Ingester) messageStatus(ctx context.Context, emitter string, q wire.MessageStatusRequest, arrived time.Time) wire.MessageStatusReply {
	fail := func(code, reason string) wire.MessageStatusReply {
		return wire.MessageStatusReply{Status: wire.StatusError, Code: code, Reason: truncate(reason, wire.MaxReasonLength), V: wire.MessageStatusVersion}
	}
	if in.cfg.Locator == nil || in.cfg.Checkpoints == nil {
		return fail("unavailable", "this ledger serves no receipts")
	}
	p := wire.MessageStatusReply{Status: wire.StatusOK, V: wire.MessageStatusVersion, Messages: make([]wire.MessageStatus, len(q.Messages))}
	if st, ok := in.streamState(ctx, arrived); ok {
		p.Decided, p.Last = &st.Decided, &st.Last
	}
	cp, size, err := in.latestCheckpoint(ctx)
	if err != nil {
		return fail("unavailable", err.Error())
	}
	p.Checkpoint = string(cp)
	for i, m := range q.Messages {
		s := &p.Messages[i]
		s.Seq, s.Status = m.Seq, wire.MessageUnknown
		rec, ok := in.msgs.get(m.Seq)
		if !ok || rec.emitter != in.msgs.emitterHash(emitter) || rec.sum != m.SHA256 {
			continue
		}
		if !rec.all {
			s.Status = wire.MessageMixed
			continue
		}
		index := rec.max
		s.Index, s.Events, s.Status = &index, int(rec.n), wire.MessageAppended
		if index < size {
			s.Status = wire.MessageLogged
		}
	}
	return p
}
