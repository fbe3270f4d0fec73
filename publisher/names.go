package publisher

// This file is what the pages can do when a player's name must no longer be
// shown: the log keeps every byte for ever (docs/PRIVACY.md), but the pages
// need not show the display names a platform put into its games' settings
// ("seatNames"). An operator lists the names the pages hide: every name, a
// platform's, or one player's on one platform; the pages then say "Player
// 1" and "Player 2", and a player page has no name in its heading.

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
)

// MaxHiddenNamesFile is the largest hidden-names file ParseHiddenNames reads.
const MaxHiddenNamesFile = 16 << 20

// HiddenNames are the display names the pages do not show. The zero value
// and nil hide none. It is safe for concurrent use once parsed.
type HiddenNames struct {
	all      bool
	emitters map[string]bool
	players  map[string]map[dice.UUID]bool
}

// ParseHiddenNames reads a list of hidden names, one entry a line:
//
//	# a comment; blank lines are skipped
//	*                                             every name, of every platform
//	tavla-east                                    every name the platform tavla-east gave
//	tavla-east 5830ee4d-958f-4449-98bc-13ad18d0ccc2  one player's name on tavla-east
//
// A platform is an emitter id, a player a seat id (a UUID, any case). A
// line that is none of these is an error naming the line.
func ParseHiddenNames(b []byte) (*HiddenNames, error) {
	if len(b) > MaxHiddenNamesFile {
		return nil, fmt.Errorf("publisher: the hidden names are %d bytes, more than %d", len(b), MaxHiddenNamesFile)
	}
	h := &HiddenNames{emitters: map[string]bool{}, players: map[string]map[dice.UUID]bool{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, MaxHiddenNamesFile)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 1 && f[0] == "*":
			h.all = true
		case len(f) == 1 && events.ValidEmitter(f[0]):
			h.emitters[f[0]] = true
		case len(f) == 2 && events.ValidEmitter(f[0]):
			u, err := dice.ParseUUID(strings.ToLower(f[1]))
			if err != nil {
				return nil, fmt.Errorf("publisher: hidden names, line %d: %q is not a player id (a UUID): %w", n, f[1], err)
			}
			if h.players[f[0]] == nil {
				h.players[f[0]] = map[dice.UUID]bool{}
			}
			h.players[f[0]][u] = true
		default:
			return nil, fmt.Errorf("publisher: hidden names, line %d: %q is not \"*\", a platform (emitter id) or a platform and a player id", n, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("publisher: hidden names: %w", err)
	}
	return h, nil
}

// Hides reports whether the name the platform emitter gave to the player of
// seat id seat is hidden; hasSeat is false for a scheme without seat ids,
// whose names only "*" and the platform's entry hide.
func (h *HiddenNames) Hides(emitter string, seat dice.UUID, hasSeat bool) bool {
	if h == nil {
		return false
	}
	return h.all || h.emitters[emitter] || hasSeat && h.players[emitter][seat]
}

// shown returns the names of a game's seats as the pages may show them:
// the hidden ones blank (the pages then say "Player 1" or "Player 2").
func (h *HiddenNames) shown(sum GameSummary) [2]string {
	names := sum.Names
	for seat := range 2 {
		if h.Hides(sum.Emitter, sum.Seats[seat], sum.HasSeats) {
			names[seat] = ""
		}
	}
	return names
}
