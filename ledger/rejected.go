package ledger

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/events"
)

// A Rejection is one refused input as the rejected store keeps it: who sent
// what, when, and why it was refused.
type Rejection struct {
	Seq     uint64      // its number in the rejected store, from 0, never reused
	ID      string      // the event's id if the input parsed, else MsgID, else a readable "id" member (see newRejection); RejectedByID finds it by this
	Time    time.Time   // the ledger's clock when it refused the input
	Emitter string      // the authenticated emitter (Input.Emitter), at most MaxRejectedField bytes
	MsgID   string      // the transport message id (Input.MsgID), at most MaxRejectedField bytes
	Size    int         // the length of the input in bytes
	Hash    [32]byte    // SHA-256 of the whole input
	Data    []byte      // the input, or its first MaxRejectedData bytes
	Code    events.Code // why, as a stable code (FORMATS.md §1.5, or CodeInternal)
	Field   string      // the member concerned, or ""
	Reason  string      // the message, with the numbers; at most MaxRejectedReason bytes
}

// Bounds of a stored Rejection. Longer values are cut (Size and Hash still
// describe the whole input).
const (
	MaxRejectedData   = events.MaxEventSize + 1
	MaxRejectedField  = 256
	MaxRejectedReason = 4096
)

// CodeInternal is the rejection code the ledger gives an event that the
// state machine could not judge because of a fault of the ledger's own
// configuration (a MoveChecker that fails, an Env the reducer refuses), not
// of the event. Such an event is kept in the rejected store like every
// refused input, so an operator sees it; the emitter may send it again once
// the fault is fixed.
const CodeInternal events.Code = "internal"

// RejectedSummary describes the rejected store.
type RejectedSummary struct {
	Next    uint64                 // the Seq the next rejection gets: the number of rejections ever
	First   uint64                 // the oldest Seq still stored
	Bytes   uint64                 // the size of the stored records
	Dropped uint64                 // records deleted to keep the store within its bounds (First − 0)
	Counts  map[events.Code]uint64 // every rejection ever, by code (never dropped)
}

const rejectionVersion = 1

// peekID returns the "id" member of data if data is a JSON object whose
// "id" is a valid event id, else "". It reads untrusted bytes: it only
// decodes, and never fails.
func peekID(data []byte) string {
	var h struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(data, &h) != nil || !events.ValidEventID(h.ID) {
		return ""
	}
	return h.ID
}

func cut(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// newRejection builds the record of a refused input. Its ID is the event's
// id (id) if the input parsed, else the transport's message id, else, for
// an input of a multi-event message that does not parse, its "id" member if
// it is a JSON object whose id is a valid event id: the id its sender asks
// a receipt for.
func newRejection(now time.Time, in Input, id string, rej *events.RejectError) Rejection {
	if id == "" {
		id = in.MsgID
	}
	if id == "" {
		id = peekID(in.Data)
	}
	r := Rejection{
		ID:      cut(id, MaxRejectedField),
		Time:    now,
		Emitter: cut(in.Emitter, MaxRejectedField),
		MsgID:   cut(in.MsgID, MaxRejectedField),
		Size:    len(in.Data),
		Hash:    sha256.Sum256(in.Data),
		Data:    in.Data[:min(len(in.Data), MaxRejectedData)],
		Code:    rej.Code,
		Field:   cut(rej.Field, MaxRejectedField),
		Reason:  cut(rej.Msg, MaxRejectedReason),
	}
	return r
}

// MarshalBinary encodes r without its Seq (the record's key): the byte 1,
// the time (Unix ns, i64 big-endian), then uvarint-prefixed id, emitter,
// msg id, the size as a uvarint, the hash, the data, code, field and reason.
func (r *Rejection) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 64+len(r.ID)+len(r.Emitter)+len(r.MsgID)+len(r.Data)+len(r.Field)+len(r.Reason))
	b = append(b, rejectionVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(r.Time.UnixNano()))
	b = appendStr(b, r.ID)
	b = appendStr(b, r.Emitter)
	b = appendStr(b, r.MsgID)
	b = binary.AppendUvarint(b, uint64(r.Size))
	b = append(b, r.Hash[:]...)
	b = appendStr(b, string(r.Data))
	b = appendStr(b, string(r.Code))
	b = appendStr(b, r.Field)
	b = appendStr(b, r.Reason)
	return b, nil
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// UnmarshalBinary decodes what MarshalBinary returns. Anything else (a
// field over its bound, a size smaller than the data, trailing bytes) is an
// error wrapping ErrCorrupt; Seq is left as it was.
func (r *Rejection) UnmarshalBinary(b []byte) error {
	d := decoder{b: b}
	if d.u8() != rejectionVersion {
		return fmt.Errorf("rejection record: no version %d header: %w", rejectionVersion, ErrCorrupt)
	}
	t := Rejection{Seq: r.Seq}
	t.Time = time.Unix(0, int64(d.u64())).UTC()
	t.ID = d.str(MaxRejectedField)
	t.Emitter = d.str(MaxRejectedField)
	t.MsgID = d.str(MaxRejectedField)
	size := d.uvarint()
	copy(t.Hash[:], d.fixed(32))
	data := d.str(MaxRejectedData)
	t.Code = events.Code(d.str(MaxRejectedField))
	t.Field = d.str(MaxRejectedField)
	t.Reason = d.str(MaxRejectedReason)
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d trailing bytes", len(d.b))
	}
	if d.err == nil && (size < uint64(len(data)) || size > 1<<40 || (len(data) < MaxRejectedData && size != uint64(len(data)))) {
		d.err = fmt.Errorf("size %d does not fit %d bytes of data", size, len(data))
	}
	if d.err != nil {
		return fmt.Errorf("rejection record: %w: %w", d.err, ErrCorrupt)
	}
	t.Size, t.Data = int(size), []byte(data)
	*r = t
	return nil
}

// A decoder reads the binary records of this package and keeps the first
// error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fixed(n int) []byte {
	if d.err != nil {
		return make([]byte, n)
	}
	if len(d.b) < n {
		d.err = fmt.Errorf("cut short: %d bytes left, want %d", len(d.b), n)
		return make([]byte, n)
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) u8() byte    { return d.fixed(1)[0] }
func (d *decoder) u64() uint64 { return binary.BigEndian.Uint64(d.fixed(8)) }

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, rest, err := uvarint(d.b)
	if err != nil {
		d.err = err
		return 0
	}
	d.b = rest
	return v
}

// uvarint reads a minimal uvarint.
func uvarint(b []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, fmt.Errorf("bad uvarint: %w", ErrCorrupt)
	}
	if n != uvarintLen(v) {
		return 0, nil, fmt.Errorf("non-minimal uvarint: %w", ErrCorrupt)
	}
	return v, b[n:], nil
}

func uvarintLen(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

func (d *decoder) str(max int) string {
	n := d.uvarint()
	if d.err == nil && n > uint64(max) {
		d.err = fmt.Errorf("string of %d bytes, the limit is %d", n, max)
	}
	if d.err != nil {
		return ""
	}
	return string(d.fixed(int(n)))
}

const rejMetaVersion = 1

func (s *RejectedSummary) marshal() []byte {
	b := []byte{rejMetaVersion}
	b = binary.AppendUvarint(b, s.Next)
	b = binary.AppendUvarint(b, s.First)
	b = binary.AppendUvarint(b, s.Bytes)
	b = binary.AppendUvarint(b, s.Dropped)
	codes := slices.Sorted(maps.Keys(s.Counts))
	b = binary.AppendUvarint(b, uint64(len(codes)))
	for _, c := range codes {
		b = appendStr(b, string(c))
		b = binary.AppendUvarint(b, s.Counts[c])
	}
	return b
}

func parseRejMeta(b []byte) (RejectedSummary, error) {
	d := decoder{b: b}
	if d.u8() != rejMetaVersion {
		return RejectedSummary{}, fmt.Errorf("rejected-store counters: no version %d header: %w", rejMetaVersion, ErrCorrupt)
	}
	s := RejectedSummary{Next: d.uvarint(), First: d.uvarint(), Bytes: d.uvarint(), Dropped: d.uvarint(), Counts: map[events.Code]uint64{}}
	n := d.uvarint()
	if d.err == nil && n > 1024 {
		d.err = fmt.Errorf("%d codes", n)
	}
	var prev string
	for i := uint64(0); i < n && d.err == nil; i++ {
		c := d.str(MaxRejectedField)
		v := d.uvarint()
		if d.err == nil && i > 0 && cmp.Compare(prev, c) >= 0 {
			d.err = fmt.Errorf("codes out of order: %q after %q", c, prev)
		}
		prev = c
		s.Counts[events.Code(c)] = v
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d trailing bytes", len(d.b))
	}
	if d.err == nil && (s.First > s.Next || s.Dropped != s.First) {
		d.err = fmt.Errorf("first %d, next %d, dropped %d do not agree", s.First, s.Next, s.Dropped)
	}
	if d.err != nil {
		return RejectedSummary{}, fmt.Errorf("rejected-store counters: %w: %w", d.err, ErrCorrupt)
	}
	return s, nil
}

func (s RejectedSummary) clone() RejectedSummary {
	s.Counts = maps.Clone(s.Counts)
	if s.Counts == nil {
		s.Counts = map[events.Code]uint64{}
	}
	return s
}

// rejWriter adds rejections to a group's batch and keeps the store within
// its bounds by deleting the oldest records.
type rejWriter struct {
	sum        RejectedSummary
	maxRecords uint64
	maxBytes   uint64
	pending    map[uint64]pendingRej // records of groups not yet committed
	added      []uint64              // records added by the group being prepared
	dirty      bool
}

type pendingRej struct {
	size int
	id   string
}

// rejIDKey is the by-id index entry of rejection seq: 'x' id 0x00 seq.
// Ids holding a 0x00 byte (a transport's message id can) are not indexed.
func rejIDKey(id string, seq uint64) []byte {
	if id == "" || strings.IndexByte(id, 0) >= 0 {
		return nil
	}
	k := append([]byte{prefixRejectedID}, id...)
	return binary.BigEndian.AppendUint64(append(k, 0), seq)
}

func (w *rejWriter) add(b *pebble.Batch, r *Rejection) (uint64, error) {
	r.Seq = w.sum.Next
	v, _ := r.MarshalBinary()
	k := u64Key(prefixRejected, r.Seq)
	if err := b.Set(k, v, nil); err != nil {
		return 0, err
	}
	if ik := rejIDKey(r.ID, r.Seq); ik != nil {
		if err := b.Set(ik, nil, nil); err != nil {
			return 0, err
		}
	}
	w.pending[r.Seq] = pendingRej{len(k) + len(v), r.ID}
	w.added = append(w.added, r.Seq)
	w.sum.Next++
	w.sum.Bytes += uint64(len(k) + len(v))
	w.sum.Counts[r.Code]++
	w.dirty = true
	return r.Seq, nil
}

// evict deletes the oldest records (and their by-id entries) while the
// store is over a bound, keeping at least the newest one. get reads a
// stored record.
func (w *rejWriter) evict(b *pebble.Batch, get func(key []byte) ([]byte, error)) (int, error) {
	n := 0
	for w.sum.Next-w.sum.First > 1 && (w.sum.Next-w.sum.First > w.maxRecords || w.sum.Bytes > w.maxBytes) {
		seq := w.sum.First
		k := u64Key(prefixRejected, seq)
		p, ok := w.pending[seq]
		if !ok {
			v, err := get(k)
			if errors.Is(err, pebble.ErrNotFound) {
				return n, fmt.Errorf("evicting rejected record %d: missing: %w", seq, ErrCorrupt)
			}
			if err != nil {
				return n, fmt.Errorf("evicting rejected record %d: %w", seq, err)
			}
			r := Rejection{Seq: seq}
			if err := r.UnmarshalBinary(v); err != nil {
				return n, fmt.Errorf("evicting rejected record %d: %w", seq, err)
			}
			p = pendingRej{len(k) + len(v), r.ID}
		}
		if err := b.Delete(k, nil); err != nil {
			return n, err
		}
		if ik := rejIDKey(p.id, seq); ik != nil {
			if err := b.Delete(ik, nil); err != nil {
				return n, err
			}
		}
		w.sum.Bytes -= min(w.sum.Bytes, uint64(p.size))
		w.sum.First++
		w.sum.Dropped++
		w.dirty = true
		n++
	}
	return n, nil
}

// Rejected returns up to limit stored rejections with Seq ≥ from, oldest
// first. The next page starts at the last Seq + 1. Records older than
// RejectedSummary.First were deleted to bound the store.
func (l *Ledger) Rejected(ctx context.Context, from uint64, limit int) ([]Rejection, error) {
	v, err := l.acquire()
	if err != nil {
		return nil, err
	}
	defer v.release()
	it, err := v.snap.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: u64Key(prefixRejected, from), UpperBound: prefixEnd(prefixRejected)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []Rejection
	for ok := it.First(); ok && len(out) < limit; ok = it.Next() {
		r := Rejection{Seq: binary.BigEndian.Uint64(it.Key()[1:])}
		if err := r.UnmarshalBinary(it.Value()); err != nil {
			return out, fmt.Errorf("rejected record %d: %w", r.Seq, err)
		}
		out = append(out, r)
	}
	return out, it.Error()
}

// RejectedByID returns the latest stored rejection of the input with the
// given id (the event's id, or the transport's message id of an input that
// did not parse), or ErrNotFound. The ingest's receipts use it with Lookup.
func (l *Ledger) RejectedByID(ctx context.Context, id string) (Rejection, error) {
	lo := rejIDKey(id, 0)
	if lo == nil {
		return Rejection{}, fmt.Errorf("rejection of %q: %w", id, ErrNotFound)
	}
	v, err := l.acquire()
	if err != nil {
		return Rejection{}, err
	}
	defer v.release()
	hi := append(lo[:len(lo)-8:len(lo)-8], 0xff)
	it, err := v.snap.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return Rejection{}, err
	}
	defer it.Close()
	if !it.Last() {
		return Rejection{}, errors.Join(fmt.Errorf("rejection of %q: %w", id, ErrNotFound), it.Error())
	}
	key := it.Key()
	seq := binary.BigEndian.Uint64(key[len(key)-8:])
	d, err := get(v.snap, u64Key(prefixRejected, seq))
	if err != nil {
		return Rejection{}, errNotFound(err, fmt.Sprintf("rejected record %d", seq))
	}
	r := Rejection{Seq: seq}
	if err := r.UnmarshalBinary(d); err != nil {
		return Rejection{}, fmt.Errorf("rejected record %d: %w", seq, err)
	}
	return r, nil
}

// RejectedSummary returns the rejected store's counters as of the last
// committed group.
func (l *Ledger) RejectedSummary() (RejectedSummary, error) {
	v, err := l.acquire()
	if err != nil {
		return RejectedSummary{}, err
	}
	defer v.release()
	return v.rejected.clone(), nil
}
