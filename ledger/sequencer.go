package ledger

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
)

// The append path has two goroutines after the callers' parallel checks:
//
//   - the sequencer takes the callers' requests in order, groups those
//     waiting, and turns each group into one Pebble batch: the leaves, the
//     tree's changed tiles and state, the projections and the rejections.
//     It keeps in memory whatever the groups it prepared changed, so it can
//     prepare the next group while the last one is being committed;
//   - the committer commits the batches in order, each with one fsync, and
//     only then installs the new read view and answers the group's callers.
//
// A failed commit stops the ledger: the committer fails that group and every
// later one, and the sequencer's in-memory state is discarded with the
// Ledger (recovery is Close and Open).

// maxRecentIDs bounds the event ids of committed groups that the sequencer
// keeps to validate the callers' dedup hints (the ids of uncommitted groups
// are always kept). A hint older than the oldest group kept is not used: the
// sequencer looks the id up again.
const maxRecentIDs = 1 << 16

// A sequencer is the ledger's single writer: the tree builder and the
// projections' working state. Only the sequencer goroutine uses it (and
// Open, before that goroutine starts).
type sequencer struct {
	l     *Ledger
	b     *merkle.Builder
	games *gameCache
	stats Stats
	// open is each emitter's open games and their bytes, as the prepared
	// groups left them (written by each group that changes them:
	// openDirty); openBytes is their sum over every emitter.
	open      map[string]openCount
	openBytes uint64
	openDirty map[string]bool
	rej       rejWriter
	group     uint64 // the number of the last group prepared (groups count from 1)

	// What prepared groups changed, tagged with the group's number, so that
	// the next groups see it before it is committed. Pruned once committed.
	inflight map[string]taggedGame // game states
	flight   []flightLog           // per group, oldest first
	recent   map[string]taggedID   // appended event ids (but canonical ones), of every group > floor, by scopedID
	idLog    []idLog               // per group, oldest first
	nRecent  int
	floor    uint64
	maxIDs   int // maxRecentIDs; tests lower it

	// The leaves of the groups not yet known to be committed, from leaf
	// fFirst on (and those of the group being prepared): how a canonical id
	// is found before Pebble has its leaf (canonical). Pruned with flight.
	fLeaves []flightLeaf
	fFirst  uint64

	// The group being prepared.
	pend   map[string]pendGame // games changed by the group
	ids    []string            // event ids appended by the group (scopedID)
	leaves [][]byte
	hashes []merkle.Hash // the leaves' hashes, computed by the checks
	fin    []events.FinishedGame
	counts groupCounts

	// appended are the group's appended events, for the ledger's
	// recentIndex once the group is committed. The keys of those with
	// their canonical ids are written in keys as they come (keyEnds says
	// where), and made one string for the group (appendedKeys): one
	// allocation a group instead of one an event (the others' keys are
	// strings of their own, which recent keeps too).
	appended []recentEntry
	keys     []byte
	keyEnds  []appendedKey

	// free are game states that nothing refers to any more, for the next
	// events' states (events.NextInto) instead of new ones: an
	// intermediate state of a game within a group, which the game's next
	// event in the group replaced in pend (only the group's last state of
	// a game goes to inflight and the cache), and, once a group is
	// prepared, the states its games had before it (pendGame.old), which
	// its new states replaced in inflight and in the cache. At a human
	// pace a group holds one event of each of its games, so it is the
	// second kind that spares a new state per event. At most maxFree,
	// each cleared (it holds no history of a game that ended).
	free []*events.Game
	// reused counts the events whose state was written into a free one
	// (for tests).
	reused uint64

	// names holds one string of each emitter name that began a game:
	// the states the sequencer makes share it (intern), so that comparing
	// a state's emitter with an event's, or with its cache share's, reads
	// bytes that every event of the emitter touches, not the bytes of the
	// game's commit, parsed seconds ago (a cache miss of the processor's
	// at a human pace). As many as the emitters, whose keys are
	// configured.
	names map[string]string

	keyBuf, valBuf []byte      // scratch for encoding batch records
	pendSorted     []pendEntry // scratch: pend's games in key order
	idBuf          []byte      // scratch for looking up a scopedID
	// batchSize is the size of the last group's batch: the next one is
	// allocated a little larger at once, instead of growing by doubling
	// (a group of a few thousand events writes megabytes, beyond what
	// Pebble's batch pool keeps).
	batchSize int

	// loads counts the game states read back from Pebble (the cache and
	// the prepared groups did not hold them, or held them cut and the
	// event needed more: next); onBatch, if not nil, sees
	// each group's batch before it is committed. Both are for benchmarks.
	loads   uint64
	onBatch func(*pebble.Batch)
	// onRelease, if not nil, sees each state release puts on the free
	// list, once it is cleared (for tests: TestReleasedStatesUnread
	// spoils them, so that a read of a released state shows).
	onRelease func(*events.Game)
}

// A pendGame is a game changed by the group being prepared: its new state,
// its state before the group (nil for a game the group begins), whose head
// Pebble holds, and how much of its history Pebble holds already (its state's
// before the group: every group that changes a game writes its history up
// to the group's end).
type pendGame struct {
	g    *events.Game
	size int // g.Size()
	old  *events.Game
	from events.History
}

// An appendedKey says where in keys the key of appended[i] is.
type appendedKey struct{ i, start, end int }

// A pendEntry is a game of pend, its id and its number (its first leaf:
// writeProjections).
type pendEntry struct {
	id string
	p  pendGame
	n  uint64
}

type taggedGame struct {
	g     *events.Game
	size  int
	group uint64
}

type taggedID struct {
	rec   dedupRecord
	group uint64
	canon bool // the event's id is its canonical id: the index has no record of it
}

// A flightLeaf is a leaf of an uncommitted group: its hash, and whether its
// event has its canonical id.
type flightLeaf struct {
	hash  merkle.Hash
	canon bool
}

// A flightLog is what a group with leaves changed: its games, and the
// tree size after it.
type flightLog struct {
	group uint64
	games []string
	end   uint64
}

type idLog struct {
	group uint64
	ids   []string
}

type groupCounts struct {
	appended, duplicates int
	rejected             []events.Code
}

func newSequencer(l *Ledger, b *merkle.Builder, stats Stats, rej RejectedSummary, open map[string]openCount) *sequencer {
	s := &sequencer{
		l:         l,
		b:         b,
		games:     newGameCache(l.cfg.GameCacheBytes),
		stats:     stats,
		open:      open,
		openDirty: map[string]bool{},
		rej: rejWriter{sum: rej, maxRecords: uint64(l.cfg.RejectedQuotaRecords), maxBytes: uint64(l.cfg.RejectedQuotaBytes),
			namespace: l.rejectedNamespace, overQuota: l.overQuota},
		inflight: map[string]taggedGame{},
		recent:   map[string]taggedID{},
		pend:     map[string]pendGame{},
		maxIDs:   maxRecentIDs,
		fFirst:   b.Size(),
	}
	for e, o := range open {
		s.openBytes += o.Bytes
		l.setOpen(e, o)
	}
	return s
}

// A prepared group is a batch for the committer, with what to do once it is
// durable. A barrier (Rebuild's) only waits for the groups before it.
type prepared struct {
	group   uint64
	batch   *pebble.Batch // nil if the group writes nothing (all duplicates)
	what    string
	reqs    []*request
	n       int
	install bool // the view changed: install size, root, stats, rej
	size    uint64
	root    merkle.Hash
	stats   Stats
	rej     RejectedSummary
	counts  groupCounts
	start   time.Time
	barrier chan struct{}
	// appended: the group's appended events (recentIndex).
	appended []recentEntry
}

// sequence is the sequencer goroutine.
func (l *Ledger) sequence() {
	defer close(l.seqDone)
	go l.commitLoop()
	defer func() {
		close(l.commits)
		<-l.commitDone
	}()
	var held *request
	for {
		r := held
		held = nil
		if r == nil {
			var ok bool
			if r, ok = <-l.reqs; !ok {
				return
			}
		}
		if r.rebuild != nil {
			l.barrier()
			l.runRebuild(r)
			continue
		}
		if r.imp != nil {
			l.barrier()
			l.runImport(r)
			continue
		}
		group := []*request{r}
		n, size := len(r.items), r.bytes()
	collect:
		for n < l.cfg.MaxBatchEvents && size < l.cfg.MaxBatchBytes {
			select {
			case r2, ok := <-l.reqs:
				if !ok {
					break collect
				}
				if r2.rebuild != nil || r2.imp != nil || n+len(r2.items) > l.cfg.MaxBatchEvents || size+r2.bytes() > l.cfg.MaxBatchBytes {
					held = r2
					break collect
				}
				group = append(group, r2)
				n += len(r2.items)
				size += r2.bytes()
			default:
				break collect
			}
		}
		l.seq.prepareGroup(group)
	}
}

func (r *request) bytes() int {
	n := 0
	for _, it := range r.items {
		n += len(it.in.Data)
	}
	return n
}

// barrier waits until the committer has finished every group sent to it.
func (l *Ledger) barrier() {
	b := make(chan struct{})
	l.commits <- &prepared{barrier: b}
	<-b
}

// commitLoop is the committer goroutine.
func (l *Ledger) commitLoop() {
	defer close(l.commitDone)
	for p := range l.commits {
		if p.barrier != nil {
			close(p.barrier)
			continue
		}
		if p.batch != nil {
			err := l.commit(p.batch, p.what)
			p.batch.Close()
			if err != nil {
				for _, r := range p.reqs {
					r.finish(err)
				}
				continue
			}
		}
		l.committed.Store(p.group)
		if p.install {
			l.install(p.size, p.root, &p.stats, &p.rej)
		}
		l.recent.add(p.appended)
		l.met.group(p.n, p.counts, time.Since(p.start))
		for _, r := range p.reqs {
			r.finish(nil)
		}
	}
}

// prune forgets what committed groups changed: it is in Pebble now.
func (s *sequencer) prune() {
	c := s.l.committed.Load()
	end := s.fFirst
	for len(s.flight) > 0 && s.flight[0].group <= c {
		f := s.flight[0]
		for _, id := range f.games {
			if t, ok := s.inflight[id]; ok && t.group == f.group {
				delete(s.inflight, id)
			}
		}
		end = f.end
		s.flight = s.flight[1:]
	}
	if end > s.fFirst {
		s.fLeaves = append(s.fLeaves[:0], s.fLeaves[end-s.fFirst:]...)
		s.fFirst = end
	}
	for len(s.idLog) > 0 && s.idLog[0].group <= c && s.nRecent > s.maxIDs {
		g := s.idLog[0]
		for _, id := range g.ids {
			delete(s.recent, id)
		}
		s.nRecent -= len(g.ids)
		s.floor = g.group
		s.idLog = s.idLog[1:]
	}
}

// forget drops every in-memory record of prepared groups; the caller has
// waited for them to be committed (barrier).
func (s *sequencer) forget() {
	clear(s.inflight)
	clear(s.recent)
	s.flight, s.idLog, s.nRecent = nil, nil, 0
	s.floor = s.group
	s.fLeaves, s.fFirst = s.fLeaves[:0], s.b.Size()
	s.games.clear()
	clear(s.free)
	s.free = s.free[:0]
}

func (s *sequencer) reset() {
	clear(s.pend)
	clear(s.leaves)
	s.leaves, s.hashes = s.leaves[:0], s.hashes[:0]
	s.ids = nil
	s.appended = nil
	s.keys, s.keyEnds = s.keys[:0], s.keyEnds[:0]
	s.fin = s.fin[:0]
	clear(s.openDirty)
	s.counts = groupCounts{}
	s.rej.dirty = false
}

// prepareGroup sequences a group of requests into one batch and hands it to
// the committer.
func (s *sequencer) prepareGroup(group []*request) {
	l := s.l
	fail := func(err error) {
		for _, r := range group {
			r.finish(err)
		}
	}
	if err := l.Err(); err != nil {
		fail(err)
		return
	}
	start := time.Now()
	s.prune()
	s.reset()
	now := l.now().UTC().Round(0)
	env := events.Env{Now: now, ClockSkew: l.cfg.ClockSkew, Beacons: l.cfg.Beacons, Moves: l.cfg.Moves}
	batch := l.db.NewBatchWithSize(s.batchSize + s.batchSize/8)
	first := s.b.Size()
	n := 0
	for _, r := range group {
		n += len(r.items)
	}
	// One slice for the group's appended events (the committer hands it to
	// the recent index), not one grown by doubling.
	s.appended = make([]recentEntry, 0, n)
	n = 0
	for _, r := range group {
		r.out = make([]Outcome, len(r.items))
		for i := range r.items {
			it := &r.items[i]
			var err error
			if it.rej != nil {
				r.out[i], err = s.reject(batch, now, it, it.rej)
			} else {
				env.Emitter = it.in.Emitter
				env.Index = first + uint64(len(s.leaves))
				r.out[i], err = s.accept(batch, it, &env)
			}
			if err != nil {
				batch.Close()
				l.stop(err)
				fail(l.Err())
				return
			}
		}
		n += len(r.items)
	}
	if err := s.write(batch, first, now); err != nil {
		batch.Close()
		l.stop(err)
		fail(l.Err())
		return
	}
	s.appendedKeys()
	s.group++
	p := &prepared{group: s.group, reqs: group, n: n, counts: s.counts, start: start, appended: s.appended,
		what: fmt.Sprintf("committing a group of %d inputs (leaves %d to %d)", n, first, s.b.Size())}
	s.batchSize = batch.Len()
	if s.onBatch != nil {
		s.onBatch(batch)
	}
	if batch.Empty() {
		batch.Close()
	} else {
		p.batch = batch
	}
	if len(s.leaves) > 0 || s.rej.dirty {
		p.install, p.size, p.root, p.stats, p.rej = true, s.b.Size(), s.b.Root(), s.stats, s.rej.sum.clone()
	}
	// Remember what the group changed until it is committed.
	f := flightLog{group: s.group, end: s.b.Size()}
	for id, p := range s.pend {
		s.inflight[id] = taggedGame{p.g, p.size, s.group}
		s.cache(id, p.g, p.size)
		f.games = append(f.games, id)
		// The game's state before the group: inflight and the cache
		// hold p.g instead now, and the batch holds its encoding.
		s.release(p.old)
	}
	l.met.gameCache.Set(float64(s.games.bytes))
	if len(f.games) > 0 {
		s.flight = append(s.flight, f)
	}
	if len(s.ids) > 0 {
		s.idLog = append(s.idLog, idLog{group: s.group, ids: s.ids})
	}
	l.commits <- p
}

// reject records a refused input in the rejected store.
func (s *sequencer) reject(batch *pebble.Batch, now time.Time, it *item, rej *events.RejectError) (Outcome, error) {
	r := newRejection(now, it.in, it.id, rej)
	stored, err := s.rej.add(batch, &r)
	if err != nil {
		return Outcome{}, fmt.Errorf("storing a rejection: %w", err)
	}
	s.counts.rejected = append(s.counts.rejected, rej.Code)
	return Outcome{Result: Rejected, ID: it.id, Reject: rej, Seq: r.Seq, RecordID: r.ID, OverQuota: !stored}, nil
}

// accept checks an event's id and history and, if it may follow, adds it
// to the group. A non-nil error is a failure of the ledger (a read), not a
// rejection.
func (s *sequencer) accept(batch *pebble.Batch, it *item, env *events.Env) (Outcome, error) {
	ev := it.ev
	g, size, err := s.game(ev.Game)
	if err != nil {
		return Outcome{}, err
	}
	rec, ok, err := s.dedup(it, g)
	if err != nil {
		return Outcome{}, err
	}
	if ok {
		if rec.LeafHash == it.hash {
			s.counts.duplicates++
			return Outcome{Result: Duplicate, ID: ev.ID, Index: rec.Index}, nil
		}
		logged := rec.LeafHash // a copy: slicing rec would move it to the heap for every event
		return s.reject(batch, env.Now, it, &events.RejectError{Code: events.CodeDuplicateID, Field: "id",
			Msg: fmt.Sprintf("%q is emitter %s's leaf %d of the log, with other bytes (leaf hash %x…, these hash to %x…)", ev.ID, ev.Emitter, rec.Index, logged[:8], it.hash[:8])})
	}
	// Next, not Apply: the sequencer keeps one line of states per game
	// (pend, inflight, the cache and Pebble all hold the latest), so the
	// new state may grow the old one's slices in place.
	e := *env
	if it.beacon != nil {
		e.Beacons = it.beacon.beacons(env.Beacons) // its BLS check ran before (checkBeacon)
	}
	var dst *events.Game
	if n := len(s.free); n > 0 {
		dst = s.free[n-1]
	}
	if dst == g {
		dst = nil // unreachable: a free state is in no map
	}
	g, ng, err := s.next(dst, g, ev, e)
	if errors.Is(err, errFault) {
		return Outcome{}, err
	}
	if err != nil {
		var re *events.RejectError
		if !errors.As(err, &re) {
			s.l.log.Error("the state machine failed on an event; it is rejected as internal", "id", ev.ID, "game", ev.Game, "err", err)
			re = &events.RejectError{Code: CodeInternal, Msg: err.Error(), Err: err}
		}
		return s.reject(batch, env.Now, it, re)
	}
	nsize := events.SizeAfter(size, g, ng)
	if re := s.overLimit(ev, g, ng, size, nsize); re != nil {
		return s.reject(batch, env.Now, it, re)
	}
	s.add(ev, it.in.Data, it.hash, g, ng, env.Index, size, nsize)
	s.fLeaves = append(s.fLeaves, flightLeaf{it.hash, ev.HasCanonicalID()})
	s.counts.appended++
	return Outcome{Result: Appended, ID: ev.ID, Index: env.Index}, nil
}

// dedup returns the dedup record of an event's id, if the id is in the log
// or in a prepared group. A canonical id has no record in the index: it is
// found through its game g (canonical). The other ids of prepared groups,
// and of committed groups after floor, are in recent; the caller's hint
// covers the groups up to the one it was made after; if the hint is older
// than floor (or a Rebuild ran since), the index is read again. (While the
// log holds legacy ids, canonical ids take that path too: the index may
// name them.)
func (s *sequencer) dedup(it *item, g *events.Game) (dedupRecord, bool, error) {
	ev := it.ev
	if ev.HasCanonicalID() && !s.l.legacyIDs.Load() {
		return s.canonical(ev, g, &it.hash)
	}
	s.idBuf = appendScopedID(s.idBuf[:0], ev.Emitter, ev.ID)
	if t, ok := s.recent[string(s.idBuf)]; ok {
		return t.rec, true, nil
	}
	if s.l.indexed(ev) {
		rec, ok, err := s.indexLookup(it)
		if ok || err != nil || !ev.HasCanonicalID() {
			return rec, ok, err
		}
	}
	return byGame(s.l.db, ev.Emitter, ev.ID, g, ev.Seq, &it.hash)
}

// canonical looks up the canonical id of ev, game:seq, in the game's state
// g (nil: no events): the id is ev's emitter's if the game is that
// emitter's and its event seq exists and has its canonical id. A leaf of
// an uncommitted group is looked up in fLeaves, a committed one in Pebble
// (byGame). Without legacy ids no other event can hold the id
// (reserved-id). Another emitter's game holds none of ev's emitter's ids:
// its event is then not found, and Apply refuses it (foreign-game).
func (s *sequencer) canonical(ev *events.Event, g *events.Game, hash *merkle.Hash) (dedupRecord, bool, error) {
	if g == nil || g.Emitter != ev.Emitter || ev.Seq >= g.NextSeq() {
		return dedupRecord{}, false, nil
	}
	// (A leaf that a cut state leaves out is committed, next says why:
	// byGame.)
	if index, ok := g.Leaf(ev.Seq); ok && index >= s.fFirst && index-s.fFirst < uint64(len(s.fLeaves)) {
		f := s.fLeaves[index-s.fFirst]
		return dedupRecord{Index: index, LeafHash: f.hash}, f.canon, nil
	}
	return byGame(s.l.db, ev.Emitter, ev.ID, g, ev.Seq, hash)
}

func (s *sequencer) indexLookup(it *item) (dedupRecord, bool, error) {
	if h := it.hint; h.ok && h.epoch == s.l.epoch.Load() && h.gen >= s.floor {
		return h.rec, h.found, nil
	}
	return lookupID(s.l.db, it.ev.Emitter, it.ev.ID)
}

// byGame looks up emitter's id of the form of a canonical id, game:seq, in
// that game's state g (nil: no events): it is in the log if the game is
// emitter's (every event of a game is its committing emitter's) and the
// game's event seq is logged and has it. The caller has looked among the uncommitted
// groups (canonical, or recent), so an event with this id, if there is
// one, is committed; an event at game:seq that is not (yet) readable has
// another id. Only ids whose event is logged already (a duplicate, or a
// seq that is not the game's next) read the log: if hash is the logged
// leaf's hash (a retry: the same bytes, so the same id), its hash tile;
// else the leaf itself, for its id.
func byGame(r pebble.Reader, emitter, id string, g *events.Game, seq uint64, hash *merkle.Hash) (dedupRecord, bool, error) {
	if g == nil || g.Emitter != emitter || seq >= g.NextSeq() {
		return dedupRecord{}, false, nil
	}
	index, ok := g.Leaf(seq)
	if !ok {
		// A cut state leaves the leaf out; it is committed (sequencer.next
		// says why), and the game's history in r has it.
		var err error
		if index, ok, err = gameLeaf(r, emitter, g.ID, seq); err != nil || !ok {
			if err == nil {
				err = fmt.Errorf("game %q: event %d, which its state counts, is not in its stored history: %w", g.ID, seq, ErrCorrupt)
			}
			return dedupRecord{}, false, err
		}
	}
	if hash != nil {
		if same, err := leafHashIs(r, index, *hash); err != nil || same {
			return dedupRecord{Index: index, LeafHash: *hash}, same, err
		}
	}
	leaf, ok, err := readLeaf(r, index)
	if err != nil || !ok {
		return dedupRecord{}, false, err
	}
	ev, err := events.Parse(leaf)
	if err != nil {
		return dedupRecord{}, false, fmt.Errorf("leaf %d, event %d of game %q: %w: %w", index, seq, g.ID, ErrCorrupt, err)
	}
	if ev.ID != id {
		return dedupRecord{}, false, nil
	}
	return dedupRecord{Index: index, LeafHash: merkle.LeafHash(leaf)}, true, nil
}

// leafHashIs reports whether r's level-0 hash tile holds hash for leaf
// index; false if r does not hold the leaf (yet).
func leafHashIs(r pebble.Reader, index uint64, hash merkle.Hash) (bool, error) {
	v, c, err := r.Get(tileKey(merkle.Tile{Level: 0, Index: index / merkle.TileWidth}))
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the hash tile of leaf %d: %w", index, err)
	}
	defer c.Close()
	off := int(index%merkle.TileWidth) * merkle.HashSize
	return off+merkle.HashSize <= len(v) && merkle.Hash(v[off:off+merkle.HashSize]) == hash, nil
}

// readLeaf reads leaf index from r's entry bundles, as a new slice; ok is
// false if r does not hold it (yet).
func readLeaf(r pebble.Reader, index uint64) (leaf []byte, ok bool, err error) {
	ok, err = withEntry(r, index, func(e []byte) { leaf = append([]byte(nil), e...) })
	return leaf, ok, err
}

// add adds an accepted event to the group's projections. What is counted,
// and which event finishes a game, is events.Tally.Count, as in the
// watchers' projection (follow/games.go says why the replays
// themselves stay apart).
func (s *sequencer) add(ev *events.Event, data []byte, hash merkle.Hash, g, ng *events.Game, index uint64, size, nsize int) {
	if g == nil { // a commit: later states copy its emitter's string
		ng.Emitter = s.intern(ng.Emitter)
	}
	s.leaves = append(s.leaves, data)
	s.hashes = append(s.hashes, hash)
	if canon := ev.HasCanonicalID(); !canon || s.l.legacyIDs.Load() {
		// A canonical id is found through its game (canonical), unless
		// legacy ids send it through recent too.
		key := scopedID(ev.Emitter, ev.ID)
		s.appended = append(s.appended, recentEntry{key, index})
		s.recent[key] = taggedID{dedupRecord{Index: index, LeafHash: hash}, s.group + 1, canon}
		s.ids = append(s.ids, key)
		s.nRecent++
	} else {
		// Its key for the recent index is written in the group's keys
		// (appendedKeys), and made a string with the others' once the
		// group is prepared.
		start := len(s.keys)
		s.keys = appendScopedID(s.keys, ev.Emitter, ev.ID)
		s.appended = append(s.appended, recentEntry{index: index})
		s.keyEnds = append(s.keyEnds, appendedKey{len(s.appended) - 1, start, len(s.keys)})
	}
	if n := len(s.free); n > 0 && ng == s.free[n-1] {
		s.free[n-1] = nil
		s.free = s.free[:n-1]
		s.reused++
	}
	s.count(ng.Emitter, g, ng, size, nsize)
	if f, ok := s.stats.observe(ev, g, ng); ok {
		s.fin = append(s.fin, f)
	}
	p, pending := s.pend[ev.Game]
	if !pending && g != nil {
		p.old, p.from = g, g.History()
	}
	p.g, p.size = ng, nsize
	s.pend[ev.Game] = p
	if pending {
		// g is the state an earlier event of this group made (p.g until
		// now, or the full state next read back for this event): ng
		// replaces it, and nothing else refers to it (p.old, the state
		// before the group, which the cache may hold, is another).
		// Released last: release clears it, and the next event may
		// write into it, so nothing may read g after this.
		s.release(g)
	}
}

// appendedKeys gives the group's appended events with their canonical ids
// their keys: one string of the group's keys, which each slices. The
// recent index keeps it until it forgets the last of them.
func (s *sequencer) appendedKeys() {
	if len(s.keyEnds) == 0 {
		return
	}
	all := string(s.keys)
	for _, k := range s.keyEnds {
		s.appended[k.i].key = all[k.start:k.end]
	}
}

// maxFree bounds the free game states the sequencer keeps (about 600 bytes
// each): more than a group of the human pace uses.
const maxFree = 4096

// release adds g, a state nothing refers to any more, to the free states
// (unless it is nil, or there are maxFree already).
func (s *sequencer) release(g *events.Game) {
	if g == nil || len(s.free) >= maxFree {
		return
	}
	*g = events.Game{}
	if s.onRelease != nil {
		s.onRelease(g)
	}
	s.free = append(s.free, g)
}

// lookupID reads the dedup index for emitter's event id.
func lookupID(r pebble.Reader, emitter, id string) (dedupRecord, bool, error) {
	v, c, err := r.Get(appendDedupKey(nil, emitter, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return dedupRecord{}, false, nil
	}
	if err != nil {
		return dedupRecord{}, false, fmt.Errorf("reading the dedup index for %s's %q: %w", emitter, id, err)
	}
	rec, err := parseDedup(v)
	c.Close()
	if err != nil {
		return dedupRecord{}, false, fmt.Errorf("dedup index for %s's %q: %w", emitter, id, err)
	}
	return rec, true, nil
}

// game returns a game's current state and its size, or nil if it has no
// events.
func (s *sequencer) game(id string) (*events.Game, int, error) {
	if p, ok := s.pend[id]; ok {
		return p.g, p.size, nil
	}
	if t, ok := s.inflight[id]; ok {
		return t.g, t.size, nil
	}
	if g, size, ok := s.games.get(id); ok {
		return g, size, nil
	}
	g, err := loadGame(s.l.db, id)
	if err != nil || g == nil {
		return nil, 0, err
	}
	s.loads++
	s.l.met.gameLoads.Inc()
	g.Emitter = s.intern(g.Emitter)
	size := g.Size()
	s.cache(id, g, size)
	return g, size, nil
}

// intern returns the sequencer's string of emitter name e (names).
func (s *sequencer) intern(e string) string {
	if n, ok := s.names[e]; ok {
		return n
	}
	if s.names == nil {
		s.names = map[string]string{}
	}
	e = strings.Clone(e) // not the event's strings, which it would keep
	s.names[e] = e
	return e
}

// errFault marks next's errors that are the ledger's, not the event's.
var errFault = errors.New("ledger fault")

// next applies ev to g, the game's state (nil: no events), as
// events.NextInto into dst does, and returns the state it applied it to and
// the new one. If g is a cut state (events.Game.Cut) whose history does not
// hold what the event's checks need (events.ErrCut), it reads the game's
// state back from the store and applies ev to g.Uncut of it.
//
// That read is sound even while groups that changed the game are in flight
// (prepared, not committed), when the store's state lacks their events:
// Uncut takes from the store only the part of the history g leaves out,
// and that part is always committed. Only the cache cuts states
// (gameCache.put), and game reads the cache only when neither pend nor
// inflight holds the game, that is once the game's last prepared group is
// committed (prune drops a game from inflight only then, and the committer
// marks a group committed only once Pebble holds its batch). So a cut state
// read from the cache leaves out committed history only, and the states
// that this group and the ones in flight made from it (NextInto keeps its
// cut part and never cuts more) leave out that same part and hold their
// uncommitted events in their slices. The cut copy that put makes of a
// group's new state may leave out that group's events before they are
// committed, but it is not read until they are: inflight holds the group's
// own state (put does not change it) meanwhile. Rebuild's replay caches
// only states it read back or that flushRebuild has committed. Uncut
// checks that the store's state and g agree where both hold history
// (TestCutReadInFlight: events that read the state back while the group
// before them waits on the committer).
//
// An error wrapping errFault is a failure of the ledger; any other is
// NextInto's.
func (s *sequencer) next(dst, g *events.Game, ev *events.Event, env events.Env) (*events.Game, *events.Game, error) {
	ng, err := events.NextInto(dst, g, ev, env)
	if err == nil || !errors.Is(err, events.ErrCut) {
		return g, ng, err
	}
	stored, err := loadGame(s.l.db, g.ID)
	if err == nil && stored == nil {
		err = fmt.Errorf("game %q has a state in memory but none in the store: %w", g.ID, ErrCorrupt)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", errFault, err)
	}
	s.loads++
	s.l.met.gameLoads.Inc()
	full, err := g.Uncut(stored)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: game %q: %w: %w", errFault, g.ID, ErrCorrupt, err)
	}
	ng, err = events.NextInto(dst, full, ev, env)
	return full, ng, err
}

// cache keeps the state of an open game in the cache. A closed game
// accepts no event any more, so it is dropped: the cache holds the games in
// play, and memory does not grow with the number of finished games.
func (s *sequencer) cache(id string, g *events.Game, size int) {
	if g.Closed {
		s.games.remove(id)
	} else {
		s.games.put(id, g, size)
	}
}

// finishing reports whether an event of type t finishes its game or its
// pending roll: such events are never refused for a limit of size, so that
// a game at its limit can always end.
func finishing(t events.Type) bool {
	switch t {
	case events.TypeEnd, events.TypeReveal, events.TypeRollSecond, events.TypeRollReveal:
		return true
	}
	return false
}

// overLimit returns why ev, which takes its game from g (of size size; nil
// for a commit) to ng (of size nsize), is refused for a limit of its
// emitter's or of the service's, or nil if it is within them all.
func (s *sequencer) overLimit(ev *events.Event, g, ng *events.Game, size, nsize int) *events.RejectError {
	if finishing(ev.Type) || ng.Closed {
		return nil
	}
	cfg := &s.l.cfg
	e := ng.Emitter
	o := s.open[e]
	refuse := func(code events.Code, limit string, format string, args ...any) *events.RejectError {
		s.l.met.limitRefusals.WithLabelValues(e, limit).Inc()
		return &events.RejectError{Code: code, Msg: fmt.Sprintf(format, args...)}
	}
	if nsize > cfg.MaxGameBytes && nsize > size {
		return refuse(CodeGameTooLarge, LimitMaxGameBytes, "game %q of emitter %s would hold %d bytes with this event, past the limit (%s %d); only events that finish it or its pending roll may follow",
			ev.Game, e, nsize, LimitMaxGameBytes, cfg.MaxGameBytes)
	}
	if g == nil && o.Games >= uint64(cfg.OpenGamesPerEmitter) {
		return refuse(CodeOverLimit, LimitOpenGamesPerEmitter, "emitter %s has %d open games, its limit (%s %d); one must end before another begins",
			e, o.Games, LimitOpenGamesPerEmitter, cfg.OpenGamesPerEmitter)
	}
	if grow := nsize - size; grow > 0 {
		if o.Bytes+uint64(grow) > uint64(cfg.OpenGameBytesPerEmitter) {
			return refuse(CodeOverLimit, LimitOpenGameBytesPerEmitter, "emitter %s's open games hold %d bytes, and this event would take them past its limit (%s %d); they must end first",
				e, o.Bytes, LimitOpenGameBytesPerEmitter, cfg.OpenGameBytesPerEmitter)
		}
		if s.openBytes+uint64(grow) > uint64(cfg.OpenGameBytes) {
			return refuse(CodeOverLimit, LimitOpenGameBytes, "the open games of all emitters hold %d bytes, and this event of emitter %s would take them past the service's limit (%s %d)",
				s.openBytes, e, LimitOpenGameBytes, cfg.OpenGameBytes)
		}
	}
	return nil
}

// count moves emitter's open-game counts from g (of size size) to ng (of
// size nsize).
func (s *sequencer) count(emitter string, g, ng *events.Game, size, nsize int) {
	o := s.open[emitter]
	if g != nil && !g.Closed {
		o.Games--
		o.Bytes -= uint64(size)
		s.openBytes -= uint64(size)
	}
	if !ng.Closed {
		o.Games++
		o.Bytes += uint64(nsize)
		s.openBytes += uint64(nsize)
	}
	if s.open == nil {
		s.open = map[string]openCount{}
	}
	s.open[emitter] = o
	s.openDirty[emitter] = true
}

// write adds the group's leaves, tiles, tree state and projections to the
// batch.
func (s *sequencer) write(batch *pebble.Batch, first uint64, now time.Time) error {
	if len(s.leaves) > 0 {
		tiles, err := s.b.AppendHashed(s.leaves, s.hashes)
		if err != nil {
			return fmt.Errorf("appending %d leaves at %d to the tree: %w", len(s.leaves), first, err)
		}
		if err := setTiles(batch, tiles, first); err != nil {
			return err
		}
		st, err := s.b.State().MarshalBinary()
		if err != nil {
			return err
		}
		batch.Set(keyState, st, nil)
		batch.Set(u64Key(prefixTime, first), marshalTime(now), nil)
		if err := s.writeProjections(batch); err != nil {
			return err
		}
	}
	if s.rej.dirty {
		batch.Set(keyRejMeta, s.rej.sum.marshal(), nil)
	}
	return nil
}

// writeProjections adds the group's projection records to the batch. The
// keys and values are encoded in scratch buffers, which Set copies.
func (s *sequencer) writeProjections(batch *pebble.Batch) error {
	key, val := s.keyBuf[:0], s.valBuf[:0]
	for _, id := range s.ids {
		t := s.recent[id]
		if t.canon {
			continue
		}
		key = append(append(key[:0], prefixDedup), id...) // id is a scopedID
		val = t.rec.append(val[:0])
		batch.Set(key, val, nil)
	}
	// The games' records go into the batch in key order: the heads ('g'),
	// by game id, then the history chunks ('h'), then the live parts
	// ('l'), each by game number (its first leaf). Pebble inserts a
	// batch's keys into the memtable's skiplist in the batch's order,
	// starting each search from where the last insert left off when the
	// next key lies just after it: in key order a group's hundreds of
	// games cost a short search each instead of one from the top
	// (BenchmarkHumanWrites; docs/BENCHMARKS.md "Issue 31, the store's
	// writes in key order").
	games := s.pendSorted[:0]
	for id, p := range s.pend {
		n, ok := p.g.FirstLeaf()
		if !ok || n >= maxGameNumber { // unreachable: a change is an event, and a log holds fewer leaves
			return fmt.Errorf("game %q changed, and its first leaf is %d (%v)", id, n, ok)
		}
		games = append(games, pendEntry{id, p, n})
	}
	slices.SortFunc(games, func(a, b pendEntry) int { return strings.Compare(a.id, b.id) })
	s.pendSorted = games
	for _, e := range games {
		// The head, written when the game begins and when it changes.
		if e.p.old != nil && events.SameHead(e.p.old, e.p.g) {
			continue
		}
		var err error
		if val, err = e.p.g.AppendHead(appendHeadRecord(val[:0], e.n)); err != nil {
			return fmt.Errorf("encoding the head of game %q: %w", e.id, err)
		}
		key = append(append(key[:0], prefixGame), e.id...)
		batch.Set(key, val, nil)
	}
	slices.SortFunc(games, func(a, b pendEntry) int { return cmp.Compare(a.n, b.n) })
	for _, e := range games {
		// The history since the last group that changed the game,
		// written once.
		g, from := e.p.g, e.p.from
		first, ok := g.Leaf(uint64(from.Leaves))
		if !ok { // unreachable: a change is an event, which the state holds
			return fmt.Errorf("game %q changed without a leaf", e.id)
		}
		var err error
		if val, err = g.AppendHistory(val[:0], from); err != nil {
			return fmt.Errorf("encoding the history of game %q: %w", e.id, err)
		}
		key = appendHistoryKey(key[:0], e.n, first)
		batch.Set(key, val, nil)
	}
	for _, e := range games {
		// The live part, rewritten.
		var err error
		if val, err = e.p.g.AppendLive(val[:0]); err != nil {
			return fmt.Errorf("encoding the state of game %q: %w", e.id, err)
		}
		key = appendLiveKey(key[:0], e.n)
		batch.Set(key, val, nil)
	}
	clear(games) // no state kept alive past its group
	s.keyBuf, s.valBuf = key, val
	for e := range s.openDirty {
		o := s.open[e]
		if o == (openCount{}) {
			batch.Delete(strKey(prefixOpen, e), nil)
			delete(s.open, e)
		} else {
			batch.Set(strKey(prefixOpen, e), o.marshal(), nil)
		}
		s.l.setOpen(e, o)
	}
	for _, f := range s.fin {
		batch.Set(u64Key(prefixFinished, f.Index), marshalFinished(f.Status, f.Game), nil)
	}
	if len(s.leaves) > 0 {
		st, _ := s.stats.MarshalBinary()
		batch.Set(keyStats, st, nil)
	}
	return nil
}
