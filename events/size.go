package events

// The memory a decoded game state holds, for the stores that keep many of
// them and bound them in bytes (the ledger's cache of open games, its
// budgets of open games per emitter). It is a function of the state alone,
// the same on every machine, so a sum kept durably across restarts stays
// exact.

// The sizes of the parts of a state, in bytes, as a 64-bit Go lays them
// out (TestSizeConstants holds them to unsafe.Sizeof there). Strings and
// slices count their bytes besides. A Game's decoded position (a
// DecodingChecker's, at most MaxDecodedSize bytes) is a cache, not counted
// in Size: the sizes are the states' alone, as they were before it, so
// limits and the durable sums are unchanged. What keeps states in memory
// counts it apart (DecodedSize).
const (
	sizeGame       = 600
	sizeMove       = 32
	sizeRoll       = 40
	sizeRollRecord = 152
	sizeBeacon     = 96
	sizeEnd        = 32
	sizeFailure    = 144
	sizeLeaf       = 8
	sizeSeed       = 32
)

// MaxDecodedSize is the most memory a DecodingChecker's decoded form of a
// position may hold (rules/movecheck's: TestDecodedSize there).
const MaxDecodedSize = 256

// DecodedSize returns the memory g holds besides Size for its decoded
// position: MaxDecodedSize and the interface value that refers to it, or 0
// without one. The ledger's cache of decoded states counts it against its
// bound in bytes; it is not part of the state, and a state read back from
// storage has none.
func (g *Game) DecodedSize() int {
	if g == nil || g.decoded == nil {
		return 0
	}
	return MaxDecodedSize + 16
}

// Size returns the bytes g's state holds: the Game itself and each of its
// parts at its length (a slice's spare capacity, which appending leaves
// behind, is not counted; it is at most as much again). A nil g is 0.
//
// g must be a full state: a cut state's size is what SizeAfter kept from
// the full one's (MemSize is the memory a cut state holds).
func (g *Game) Size() int {
	if g == nil {
		return 0
	}
	if g.cut != nil {
		panic("events: Size of a cut state (Game.Cut): its size is SizeAfter's")
	}
	n := g.fixedSize() + sizeLeaf*len(g.Leaves) + sizeRoll*len(g.Rolls) + sizeRollRecord*len(g.RollRecords)
	for _, m := range g.Moves {
		n += sizeMove + len(m.Play)
	}
	return n
}

// fixedSize is Size but for the history: the parts that are replaced, not
// appended to.
func (g *Game) fixedSize() int {
	n := sizeGame + len(g.ID) + len(g.Emitter) + len(g.Settings) + len(g.MatchID) +
		len(g.Tokens[0]) + len(g.Tokens[1]) + len(g.Position)
	if g.Beacon != nil {
		n += sizeBeacon + len(g.Beacon.Signature)
	}
	if g.Pending != nil {
		n += sizeRollRecord
	}
	if g.End != nil {
		n += sizeEnd
	}
	if g.Seed != nil {
		n += sizeSeed
	}
	if g.Failure != nil {
		n += sizeFailure
	}
	return n
}

// SizeAfter returns ng.Size() for a state ng that Next or Apply returned
// from g, whose size is size (g nil: a commit's state, size 0). It walks
// only what ng's history adds to g's, so a game's size is kept in
// constant time per event. g may be a cut state (Game.Cut), ng one made
// from it: its size is the full state's.
func SizeAfter(size int, g, ng *Game) int {
	if g == nil {
		return ng.Size()
	}
	n := size - g.fixedSize() + ng.fixedSize() +
		sizeLeaf*(len(ng.Leaves)-len(g.Leaves)) + sizeRoll*(len(ng.Rolls)-len(g.Rolls)) +
		sizeRollRecord*(len(ng.RollRecords)-len(g.RollRecords))
	for _, m := range ng.Moves[len(g.Moves):] {
		n += sizeMove + len(m.Play)
	}
	return n
}
