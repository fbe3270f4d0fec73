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
	Next    uint64                 // the Seq the next stored rejection gets: the number of records ever stored
	First   uint64                 // the oldest Seq still stored (0 unless a store of an older version evicted records)
	Bytes   uint64                 // the size of the stored records
	Dropped uint64                 // records an older version deleted to bound its store (First − 0); this version deletes none
	Counts  map[events.Code]uint64 // every rejection ever, by code, stored or over quota (never dropped)
	// Emitters holds each quota namespace's share: the namespace of an input
	// is its authenticated emitter if that emitter is configured (the
	// ledger's Keyring has it), and "" for every other input (unknown
	// emitters, bad subjects), which share one quota.
	Emitters map[string]EmitterRejections
}

// EmitterRejections is one quota namespace of the rejected store: what it
// stores, and the rejections it refused to store because the namespace was
// over its quota (Config.RejectedQuotaRecords, RejectedQuotaBytes). A
// flood from one emitter fills its own quota and is then only counted
// here; it never takes room from another emitter.
type EmitterRejections struct {
	Stored uint64 // records stored
	Bytes  uint64 // their size
	// OverQuota counts the rejections not stored because the quota was
	// full; FirstID/LastID and FirstTime/LastTime are the first and the
	// latest of them (ids as newRejection reads them, possibly "").
	OverQuota           uint64
	FirstID, LastID     string
	FirstTime, LastTime time.Time
}

// String says what the namespace refused, for logs and the CLI.
func (e EmitterRejections) String() string {
	if e.OverQuota == 0 {
		return fmt.Sprintf("%d stored (%d bytes)", e.Stored, e.Bytes)
	}
	return fmt.Sprintf("%d stored (%d bytes); over its rejection quota: %d more refused, ids %q…%q, %s…%s",
		e.Stored, e.Bytes, e.OverQuota, e.FirstID, e.LastID,
		e.FirstTime.UTC().Format(time.RFC3339), e.LastTime.UTC().Format(time.RFC3339))
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

// The counters record: version 1 (older stores) has no per-emitter part;
// Open migrates it (migrateRejected).
const (
	rejMetaV1      = 1
	rejMetaVersion = 2
)

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
	names := slices.Sorted(maps.Keys(s.Emitters))
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, n := range names {
		e := s.Emitters[n]
		b = appendStr(b, n)
		b = binary.AppendUvarint(b, e.Stored)
		b = binary.AppendUvarint(b, e.Bytes)
		b = binary.AppendUvarint(b, e.OverQuota)
		b = appendStr(b, e.FirstID)
		b = appendStr(b, e.LastID)
		b = binary.BigEndian.AppendUint64(b, unixNano(e.FirstTime))
		b = binary.BigEndian.AppendUint64(b, unixNano(e.LastTime))
	}
	return b
}

// parseRejMeta decodes the counters record. A version 1 record comes back
// with v1 set and no Emitters.
func parseRejMeta(b []byte) (s RejectedSummary, v1 bool, err error) {
	d := decoder{b: b}
	ver := d.u8()
	if ver != rejMetaVersion && ver != rejMetaV1 {
		return RejectedSummary{}, false, fmt.Errorf("rejected-store counters: no version %d header: %w", rejMetaVersion, ErrCorrupt)
	}
	s = RejectedSummary{Next: d.uvarint(), First: d.uvarint(), Bytes: d.uvarint(), Dropped: d.uvarint(),
		Counts: map[events.Code]uint64{}, Emitters: map[string]EmitterRejections{}}
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
	if ver == rejMetaVersion {
		n := d.uvarint()
		if d.err == nil && n > 1<<20 {
			d.err = fmt.Errorf("%d emitters", n)
		}
		prev = ""
		for i := uint64(0); i < n && d.err == nil; i++ {
			name := d.str(MaxRejectedField)
			e := EmitterRejections{Stored: d.uvarint(), Bytes: d.uvarint(), OverQuota: d.uvarint(),
				FirstID: d.str(MaxRejectedField), LastID: d.str(MaxRejectedField)}
			e.FirstTime, e.LastTime = fromUnixNano(d.u64()), fromUnixNano(d.u64())
			if d.err == nil && i > 0 && cmp.Compare(prev, name) >= 0 {
				d.err = fmt.Errorf("emitters out of order: %q after %q", name, prev)
			}
			prev = name
			s.Emitters[name] = e
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d trailing bytes", len(d.b))
	}
	if d.err == nil && (s.First > s.Next || s.Dropped != s.First) {
		d.err = fmt.Errorf("first %d, next %d, dropped %d do not agree", s.First, s.Next, s.Dropped)
	}
	if d.err != nil {
		return RejectedSummary{}, false, fmt.Errorf("rejected-store counters: %w: %w", d.err, ErrCorrupt)
	}
	return s, ver == rejMetaV1, nil
}

// unixNano encodes a summary's time: 0 for the zero time.
func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

func fromUnixNano(n uint64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(n)).UTC()
}

func (s RejectedSummary) clone() RejectedSummary {
	s.Counts = maps.Clone(s.Counts)
	if s.Counts == nil {
		s.Counts = map[events.Code]uint64{}
	}
	s.Emitters = maps.Clone(s.Emitters)
	if s.Emitters == nil {
		s.Emitters = map[string]EmitterRejections{}
	}
	return s
}

// rejWriter adds rejections to a group's batch, within each quota
// namespace's bounds: a rejection that does not fit is counted in its
// namespace's EmitterRejections instead of stored. Nothing stored is ever
// deleted.
type rejWriter struct {
	sum        RejectedSummary
	maxRecords uint64 // per namespace
	maxBytes   uint64 // per namespace
	namespace  func(emitter string) string
	dirty      bool
	// overQuota is called (in the sequencer's goroutine) with a namespace
	// that refused a record, for the log line and the metric.
	overQuota func(ns string, e EmitterRejections)
}

// rejIDKey is the by-id index entry of rejection seq of emitter:
// 'y' emitter 0x00 id 0x00 seq. Receipts look a rejection up by the
// emitter that asks and the id, so one emitter's rejections never answer
// another's receipt requests. Emitters or ids holding a 0x00 byte (a
// transport's message id can) are not indexed.
func rejIDKey(emitter, id string, seq uint64) []byte {
	if id == "" || strings.IndexByte(id, 0) >= 0 || strings.IndexByte(emitter, 0) >= 0 {
		return nil
	}
	k := make([]byte, 0, 1+len(emitter)+1+len(id)+1+8)
	k = append(append(append(k, prefixRejectedID), emitter...), 0)
	k = append(append(k, id...), 0)
	return binary.BigEndian.AppendUint64(k, seq)
}

// add stores r (setting its Seq) if its namespace has room, and reports
// whether it did; otherwise it counts r in the namespace's summary.
func (w *rejWriter) add(b *pebble.Batch, r *Rejection) (bool, error) {
	ns := w.namespace(r.Emitter)
	e := w.sum.Emitters[ns]
	v, _ := r.MarshalBinary()
	size := uint64(9 + len(v))
	w.sum.Counts[r.Code]++
	w.dirty = true
	if e.Stored >= w.maxRecords || e.Bytes+size > w.maxBytes {
		if e.OverQuota == 0 {
			e.FirstID, e.FirstTime = r.ID, r.Time.UTC()
		}
		e.OverQuota++
		e.LastID, e.LastTime = r.ID, r.Time.UTC()
		w.sum.Emitters[ns] = e
		if w.overQuota != nil {
			w.overQuota(ns, e)
		}
		return false, nil
	}
	r.Seq = w.sum.Next
	if err := b.Set(u64Key(prefixRejected, r.Seq), v, nil); err != nil {
		return false, err
	}
	if ik := rejIDKey(r.Emitter, r.ID, r.Seq); ik != nil {
		if err := b.Set(ik, nil, nil); err != nil {
			return false, err
		}
	}
	w.sum.Next++
	w.sum.Bytes += size
	e.Stored++
	e.Bytes += size
	w.sum.Emitters[ns] = e
	return true, nil
}

// migrateRejected brings a store whose counters are of version 1 (one
// global bound, oldest records evicted, a by-id index without the emitter)
// to this version: it deletes the old index, indexes every stored record by
// emitter and id, and counts each namespace's records. It runs once, in
// Open, before anything is appended.
func migrateRejected(db *pebble.DB, sum *RejectedSummary, namespace func(string) string) error {
	b := db.NewBatch()
	defer b.Close()
	if err := b.DeleteRange([]byte{prefixRejectedIDv1}, prefixEnd(prefixRejectedIDv1), nil); err != nil {
		return err
	}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixRejected}, UpperBound: prefixEnd(prefixRejected)})
	if err != nil {
		return err
	}
	sum.Emitters = map[string]EmitterRejections{}
	for ok := it.First(); ok; ok = it.Next() {
		r := Rejection{Seq: binary.BigEndian.Uint64(it.Key()[1:])}
		if err := r.UnmarshalBinary(it.Value()); err != nil {
			it.Close()
			return fmt.Errorf("rejected record %d: %w", r.Seq, err)
		}
		ns := namespace(r.Emitter)
		e := sum.Emitters[ns]
		e.Stored++
		e.Bytes += uint64(len(it.Key()) + len(it.Value()))
		sum.Emitters[ns] = e
		if ik := rejIDKey(r.Emitter, r.ID, r.Seq); ik != nil {
			if err := b.Set(ik, nil, nil); err != nil {
				it.Close()
				return err
			}
		}
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return err
	}
	if err := b.Set(keyRejMeta, sum.marshal(), nil); err != nil {
		return err
	}
	return b.Commit(pebble.Sync)
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

// RejectedByID returns the latest stored rejection of emitter's input with
// the given id (the event's id, or the transport's message id of an input
// that did not parse), or ErrNotFound. Only emitter's own rejections are
// found: another emitter's junk under the same id is not. The ingest's
// receipts use it with Lookup.
func (l *Ledger) RejectedByID(ctx context.Context, emitter, id string) (Rejection, error) {
	lo := rejIDKey(emitter, id, 0)
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

// rejectedNamespace is the quota namespace of an input's authenticated
// emitter: the emitter if it is configured, else "" (shared by the rest).
func (l *Ledger) rejectedNamespace(emitter string) string {
	if l.cfg.Emitters.Has(emitter) {
		return emitter
	}
	return ""
}

// overQuotaLogEvery is how often, at most, the ledger logs that a
// namespace refuses rejections (the metric counts every one).
const overQuotaLogEvery = time.Minute

// overQuota counts and, at most once per overQuotaLogEvery and namespace,
// logs a rejection that was not stored.
func (l *Ledger) overQuota(ns string, e EmitterRejections) {
	label := ns
	if label == "" {
		label = "(unconfigured)"
	}
	l.met.overQuota.WithLabelValues(label).Inc()
	l.overQuotaMu.Lock()
	defer l.overQuotaMu.Unlock()
	if last, ok := l.overQuotaLogged[ns]; ok && l.cfg.Now().Sub(last) < overQuotaLogEvery {
		return
	}
	if l.overQuotaLogged == nil {
		l.overQuotaLogged = map[string]time.Time{}
	}
	l.overQuotaLogged[ns] = l.cfg.Now()
	l.log.Warn("rejected store: emitter over its rejection quota; further rejections are counted, not stored",
		"emitter", label, "summary", e.String())
}

// Locate returns the durable outcome of emitter's event by id, for receipts
// (the ingest's Locator): Appended with its leaf index if the log holds
// emitter's event with that id, else the Rejected outcome of emitter's own
// input with that id if the rejected store holds one, else an error
// wrapping ErrNotFound. Event ids are per emitter: another emitter's event
// or rejected input under the same id is never returned. An event among the
// latest RecentLookups appended is found in memory (LocateEach).
func (l *Ledger) Locate(ctx context.Context, emitter, id string) (Outcome, error) {
	if v, err := l.acquire(); err == nil {
		index, ok := l.recent.get(emitter, id)
		size := v.size
		v.release()
		if ok && index < size {
			return Outcome{Result: Appended, ID: id, Index: index}, nil
		}
	}
	idx, _, err := l.Lookup(ctx, emitter, id)
	if err == nil {
		return Outcome{Result: Appended, ID: id, Index: idx}, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return Outcome{}, err
	}
	r, err := l.RejectedByID(ctx, emitter, id)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Result: Rejected, RecordID: id, Seq: r.Seq,
		Reject: &events.RejectError{Code: r.Code, Field: r.Field, Msg: r.Reason}}, nil
}
