package events

import (
	"strconv"
	"strings"
	"time"

	"github.com/zarlog/zarlog/events/dice"
)

// The syntax of an event's values (FORMATS.md §1.1), shared by the two
// parsers: the reference parser (parseReference, parse.go) and the fast
// path (parseCanonicalFast, parse_fast.go). Each function takes a string or
// the bytes of one, so the fast path checks the input in place.

// Identifier syntax (FORMATS.md §1.1), by a table of character classes:
// the parse checks every event's id and game id, and a table lookup per
// byte is several times cheaper than comparisons and a search of the extra
// characters.
const (
	idFirst   = 1 << iota // [A-Za-z0-9]: may start an event or game id
	eventRest             // [A-Za-z0-9._:-]: may follow in an event id
	gameRest              // [A-Za-z0-9._-]: may follow in a game id
)

var idClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			t[c] = idFirst | eventRest | gameRest
		case c == '.' || c == '_' || c == '-':
			t[c] = eventRest | gameRest
		case c == ':':
			t[c] = eventRest
		}
	}
	return t
}()

// validID reports whether s is 1 to maxLen bytes, the first idFirst and
// the others of class rest.
func validID[T string | []byte](s T, rest uint8, maxLen int) bool {
	if len(s) == 0 || len(s) > maxLen || idClass[s[0]]&idFirst == 0 {
		return false
	}
	for i := 1; i < len(s); i++ {
		if idClass[s[i]]&rest == 0 {
			return false
		}
	}
	return true
}

// ValidEventID reports whether s is a valid event id:
// [A-Za-z0-9][A-Za-z0-9._:-]{0,127}.
func ValidEventID(s string) bool { return validID(s, eventRest, 128) }

// CanonicalID returns the canonical id of event seq of game:
// "<game>:<seq>", seq in decimal without leading zeros. It is the id New
// gives an event whose header names none, and so the SDK's (FORMATS.md
// §1.1). The ledger finds an event with its canonical id through its game
// and keeps no dedup record for it, so an id of that form is reserved: it
// may only be the canonical id of the event that carries it (the ledger
// refuses any other event with reserved-id).
func CanonicalID(game string, seq uint64) string {
	return game + ":" + strconv.FormatUint(seq, 10)
}

// ParseCanonicalID reports whether id has the form of a canonical id, a
// valid game id, ':' and a decimal uint64 without leading zeros, and
// returns the game and seq it names.
func ParseCanonicalID(id string) (game string, seq uint64, ok bool) {
	i := strings.LastIndexByte(id, ':')
	if i < 0 || !ValidGameID(id[:i]) {
		return "", 0, false
	}
	d := id[i+1:]
	if d == "" || len(d) > 1 && d[0] == '0' {
		return "", 0, false
	}
	seq, err := strconv.ParseUint(d, 10, 64)
	if err != nil {
		return "", 0, false
	}
	return id[:i], seq, true
}

// HasCanonicalID reports whether ev.ID is CanonicalID(ev.Game, ev.Seq),
// without building that string.
func (ev *Event) HasCanonicalID() bool {
	id := ev.ID
	if len(id) <= len(ev.Game) || id[:len(ev.Game)] != ev.Game || id[len(ev.Game)] != ':' {
		return false
	}
	var b [20]byte
	return id[len(ev.Game)+1:] == string(strconv.AppendUint(b[:0], ev.Seq, 10))
}

// ValidGameID reports whether s is a valid game id:
// [A-Za-z0-9][A-Za-z0-9._-]{0,127}. Under tavlarena-v1 and per-roll-v1 the
// game id must moreover be a lowercase UUID.
func ValidGameID(s string) bool { return validID(s, gameRest, 128) }

// ValidEmitter reports whether s is a valid emitter id: [a-z0-9][a-z0-9-]{0,62}.
func ValidEmitter(s string) bool { return validEmitter(s) }

func validEmitter[T string | []byte](s T) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || i > 0 && c == '-') {
			return false
		}
	}
	return true
}

// lowerHex decodes lowercase hex digits (an even number of them).
func lowerHex[T string | []byte](s T) ([]byte, bool) {
	if len(s)%2 != 0 {
		return nil, false
	}
	b := make([]byte, len(s)/2)
	return b, decodeLowerHex(b, s)
}

// decodeLowerHex decodes the 2·len(dst) lowercase hex digits that s starts
// with into dst.
func decodeLowerHex[T string | []byte](dst []byte, s T) bool {
	for i := range dst {
		hi, ok1 := hexDigit(s[2*i])
		lo, ok2 := hexDigit(s[2*i+1])
		if !ok1 || !ok2 {
			return false
		}
		dst[i] = hi<<4 | lo
	}
	return true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// parseUUID parses the lowercase 8-4-4-4-12 form of a UUID.
func parseUUID[T string | []byte](s T) (dice.UUID, bool) {
	var u dice.UUID
	if len(s) != 36 {
		return u, false
	}
	j := 0
	for i := 0; i < 36; {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return u, false
			}
			i++
			continue
		}
		hi, ok1 := hexDigit(s[i])
		lo, ok2 := hexDigit(s[i+1])
		if !ok1 || !ok2 {
			return u, false
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	return u, true
}

// parseTime parses the exact form YYYY-MM-DDTHH:MM:SS.mmmZ of a real UTC
// time (no leap seconds).
func parseTime[T string | []byte](s T) (time.Time, bool) {
	if len(s) != len(TimeLayout) {
		return time.Time{}, false
	}
	num := func(i, n int) int {
		v := 0
		for j := i; j < i+n; j++ {
			c := s[j]
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	const form = "    -  -  T  :  :  .   Z"
	for i := 0; i < len(form); i++ {
		if c := form[i]; c != ' ' && s[i] != c {
			return time.Time{}, false
		}
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, minute, sec, ms := num(11, 2), num(14, 2), num(17, 2), num(20, 3)
	if year < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
		sec < 0 || sec > 59 || ms < 0 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, ms*int(time.Millisecond), time.UTC)
	if t.Day() != day { // February 30 and the like
		return time.Time{}, false
	}
	return t, true
}
