package ledger

import (
	"hash/maphash"
	"strings"
	"sync"
)

// RecentLookups is how many of the latest appended events the ledger keeps
// in memory by (emitter, id), for the status lookups (LocateEach, Locate):
// an SDK that follows its events asks about each one about a second after
// its acknowledgement, so at any rate this ledger sustains the event is
// one of the latest and is found without reading Pebble. About 8.5 MiB at
// the SDK's ids (136 bytes an entry: its emitter and id, its index, and the
// map's and ring's slots; BenchmarkRecentIndexMemory), at most 16 MiB with
// the longest ids (docs/OPERATIONS.md §9 "Memory"). The keys of a group's
// events with canonical ids are slices of one string (the sequencer's
// appendedKeys), kept until the index forgets the last of them: less
// than a key each, and at most one group's keys (MaxBatchEvents) more.
const RecentLookups = 1 << 16

// A recentIndex maps the (emitter, id) of the latest appended events, once
// their group is committed, to their leaf index: facts about the log that
// never change (the log only grows, and an (emitter, id) is appended
// once), kept for at most max events, the oldest forgotten first. Safe for
// concurrent use: the committer adds, the readers look up.
//
// The map is keyed by a hash of the scopedID (seeded: maphash), the ring
// holds the scopedIDs themselves, and a lookup compares the one it finds:
// forgetting an event and adding one touch the map's slot and the ring's,
// never a string that is no longer in the processor's cache (the
// committer does this once per event, RecentLookups events after it was
// added). Two keys of one hash are never both in the map: the later
// replaces the earlier, which is then not found and looked up in Pebble
// (correct, only slower; about one event in 2^48 with the index full).
type recentIndex struct {
	mu   sync.RWMutex
	max  int
	seed maphash.Seed
	m    map[uint64]int32 // hash of scopedID → its slot in ring
	ring []recentSlot     // oldest at next once full
	next int
	// testHash, if not nil, replaces the seeded hash (tests make
	// collisions with it).
	testHash func(emitter, id string) uint64
}

// A recentSlot is one event of the index: its scopedID, its hash and its
// leaf index.
type recentSlot struct {
	key   string
	hash  uint64
	index uint64
}

// A recentEntry is one appended event: its scopedID and its leaf index.
type recentEntry struct {
	key   string
	index uint64
}

func newRecentIndex(max int) *recentIndex {
	return &recentIndex{max: max, seed: maphash.MakeSeed(), m: make(map[uint64]int32)}
}

// add records the appended events of a committed group.
func (r *recentIndex) add(es []recentEntry) {
	if r == nil || r.max <= 0 || len(es) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range es {
		h := maphash.String(r.seed, e.key)
		if r.testHash != nil {
			i := strings.IndexByte(e.key, 0)
			h = r.testHash(e.key[:i], e.key[i+1:])
		}
		var slot int
		if len(r.ring) < r.max {
			slot = len(r.ring)
			r.ring = append(r.ring, recentSlot{})
		} else {
			slot = r.next
			if old := r.ring[slot].hash; r.m[old] == int32(slot) {
				delete(r.m, old)
			}
			r.next = (r.next + 1) % r.max
		}
		r.ring[slot] = recentSlot{key: e.key, hash: h, index: e.index}
		r.m[h] = int32(slot)
	}
}

// get returns the leaf index of emitter's event id, if it is one of the
// latest appended.
func (r *recentIndex) get(emitter, id string) (uint64, bool) {
	if r == nil {
		return 0, false
	}
	var sum uint64
	if r.testHash != nil {
		sum = r.testHash(emitter, id)
	} else {
		// The hash of scopedID(emitter, id), without making it.
		var h maphash.Hash
		h.SetSeed(r.seed)
		h.WriteString(emitter)
		h.WriteByte(0)
		h.WriteString(id)
		sum = h.Sum64()
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	slot, ok := r.m[sum]
	if !ok {
		return 0, false
	}
	e := &r.ring[slot]
	if k := e.key; len(k) != len(emitter)+1+len(id) || k[:len(emitter)] != emitter || k[len(emitter)] != 0 || k[len(emitter)+1:] != id {
		return 0, false // another event of the same hash
	}
	return e.index, true
}
