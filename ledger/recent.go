package ledger

import "sync"

// RecentLookups is how many of the latest appended events the ledger keeps
// in memory by (emitter, id), for the status lookups (LocateEach, Locate):
// an SDK that follows its events asks about each one about a second after
// its acknowledgement, so at any rate this ledger sustains the event is
// one of the latest and is found without reading Pebble. About 8.5 MiB at
// the SDK's ids (136 bytes an entry: its emitter and id, its index, and the
// map's and ring's slots; BenchmarkRecentIndexMemory), at most 16 MiB with
// the longest ids (docs/OPERATIONS.md §9 "Memory").
const RecentLookups = 1 << 16

// A recentIndex maps the (emitter, id) of the latest appended events, once
// their group is committed, to their leaf index: facts about the log that
// never change (the log only grows, and an (emitter, id) is appended
// once), kept for at most max events, the oldest forgotten first. Safe for
// concurrent use: the committer adds, the readers look up.
type recentIndex struct {
	mu   sync.RWMutex
	max  int
	m    map[string]uint64 // scopedID → leaf index
	ring []string          // the keys, oldest at next once full
	next int
}

// A recentEntry is one appended event: its scopedID and its leaf index.
type recentEntry struct {
	key   string
	index uint64
}

func newRecentIndex(max int) *recentIndex {
	return &recentIndex{max: max, m: make(map[string]uint64)}
}

// add records the appended events of a committed group.
func (r *recentIndex) add(es []recentEntry) {
	if r == nil || r.max <= 0 || len(es) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range es {
		if len(r.ring) < r.max {
			r.ring = append(r.ring, e.key)
		} else {
			delete(r.m, r.ring[r.next])
			r.ring[r.next] = e.key
			r.next = (r.next + 1) % r.max
		}
		r.m[e.key] = e.index
	}
}

// get returns the leaf index of emitter's event id, if it is one of the
// latest appended.
func (r *recentIndex) get(emitter, id string) (uint64, bool) {
	if r == nil {
		return 0, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	i, ok := r.m[scopedID(emitter, id)]
	return i, ok
}
