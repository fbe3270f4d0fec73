package publisher

// This file says the facts of a game in a player's words, in English,
// Turkish and Arabic: the seats as people number them (or as the platform
// names them), the variant, the date, how the game ended, and numbers in
// each language's own style. Nothing here is a flag name or a check name.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/verifier"
)

// seatLabel names seat (0 or 1) as a player reads it: the platform's label
// from settings.seatNames, else "Player 1" or "Player 2". There is no seat
// 0 in player text.
func seatLabel(l verifier.Lang, names [2]string, seat int) string {
	if seat < 0 || seat > 1 {
		return ""
	}
	if names[seat] != "" {
		return isolate(names[seat])
	}
	return isolate(text(l, "PlayerN", seat+1))
}

// isolate puts s in a first-strong isolate (FSI … PDI): a name of the
// platform's, in any script, inside a sentence of any direction, takes its
// own direction without moving the sentence's words and numbers around it
// ("ليلى 3, Mehmet 5" keeps Layla's die beside her name).
func isolate(s string) string {
	if s == "" {
		return ""
	}
	return "\u2068" + s + "\u2069"
}

// unbroken keeps an identifier in a sentence on one line: a word joiner
// after each of its hyphens ("tavla-east" is not broken after "tavla-").
func unbroken(s string) string { return strings.ReplaceAll(s, "-", "-"+wordJoiner) }

// numberRE matches what reads left to right inside a sentence of any
// direction: a dice pair, a score or a run of numbers joined by hyphens or
// dashes ("6-2", "3-1"), and a percentage ("16.7%").
var numberRE = regexp.MustCompile(`\d+(?:\.\d+)?%|\d+(?:[-–]\d+)+`)

// wordJoiner (U+2060) keeps a dice pair on one line: no line breaks at the
// hyphen of "3-1".
const wordJoiner = "\u2060"

// keepNumbers keeps each match of numberRE in s that stands alone (not
// part of a code or a time; a date is kept whole) in one piece: a dice pair or a
// score never breaks at its hyphen (a word joiner after it), and in a
// right-to-left language (rtl) it is put in a left-to-right isolate with a
// percentage. In an Arabic sentence the bidirectional algorithm reads
// "6-2" after an Arabic word as two Arabic numbers and draws them "2-6",
// and puts the percent sign of "16.7%" on the number's left: isolated,
// they are drawn as written (TestArabicRendering).
func keepNumbers(s string, rtl bool) string {
	ms := numberRE.FindAllStringIndex(s, -1)
	if ms == nil {
		return s
	}
	// A Latin letter or a digit beside it makes it part of a code ("J3-5"
	// of a seal code); an Arabic letter does not ("و1-3", "and 1-3").
	joins := func(r rune) bool {
		return r < 0x80 && unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-–.:/_+\u2066\u2060", r)
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		x := s[m[0]:m[1]]
		before, _ := utf8.DecodeLastRuneInString(s[:m[0]])
		after, _ := utf8.DecodeRuneInString(s[m[1]:])
		pct := strings.HasSuffix(x, "%")
		if m[0] > 0 && joins(before) || !pct && m[1] < len(s) && joins(after) && after != '.' && after != ':' {
			continue
		}
		if pct && !rtl {
			continue
		}
		if !pct {
			x = strings.NewReplacer("-", "-"+wordJoiner, "–", "–"+wordJoiner).Replace(x)
		}
		if rtl {
			x = ltr(x)
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(x)
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// variantName names a variant in language l ("" for a game that names
// none).
func variantName(l verifier.Lang, v string) string {
	if v == "" {
		return text(l, "VariantNone")
	}
	return text(l, "Variant-"+v)
}

var months = [3][12]string{
	{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"},
	{"Ocak", "Şubat", "Mart", "Nisan", "Mayıs", "Haziran", "Temmuz", "Ağustos", "Eylül", "Ekim", "Kasım", "Aralık"},
	{"يناير", "فبراير", "مارس", "أبريل", "مايو", "يونيو", "يوليو", "أغسطس", "سبتمبر", "أكتوبر", "نوفمبر", "ديسمبر"},
}

// dateText writes t (UTC) as a date and time in language l: "1 December
// 2026, 16:04 UTC", "1 Aralık 2026, 16:04 UTC", "1 ديسمبر 2026، 16:04 UTC".
func dateText(l verifier.Lang, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.UTC()
	sep := ", "
	if l == Arabic {
		sep = "، "
	}
	clock := fmt.Sprintf("%02d:%02d UTC", t.Hour(), t.Minute())
	if l == Arabic {
		clock = ltr(clock) // "UTC" is Latin: keep it after the time
	}
	return fmt.Sprintf("%d %s %d%s%s", t.Day(), months[langIndex(l)][t.Month()-1], t.Year(), sep, clock)
}

// playedText writes when a game was played: from its first event's time to
// its end's, on the platform's clock ("1 December 2026, 16:04–16:31 UTC";
// "30 November 2026, 23:50 UTC – 1 December 2026, 00:12 UTC" across
// midnight), or its first event's time alone when it has no end yet.
func playedText(l verifier.Lang, start, end time.Time) string {
	if start.IsZero() {
		return dateText(l, end)
	}
	if end.IsZero() || end.Before(start) {
		return dateText(l, start)
	}
	s, e := start.UTC(), end.UTC()
	if s.Truncate(time.Minute).Equal(e.Truncate(time.Minute)) {
		return dateText(l, start)
	}
	if s.Year() == e.Year() && s.YearDay() == e.YearDay() {
		sep := ", "
		if l == Arabic {
			sep = "، "
		}
		clock := fmt.Sprintf("%02d:%02d–%02d:%02d UTC", s.Hour(), s.Minute(), e.Hour(), e.Minute())
		if l == Arabic {
			clock = ltr(clock)
		}
		return fmt.Sprintf("%d %s %d%s%s", s.Day(), months[langIndex(l)][s.Month()-1], s.Year(), sep, clock)
	}
	return dateText(l, start) + " – " + dateText(l, end)
}

// number writes x with the given decimals in language l's style: a
// decimal point in English and in Arabic, a comma in Turkish. One number
// format per language, on every page and in the scripts: digits stay 0-9
// in every language, as the seal codes, the dice and the log's key do, so
// that a number reads the same as the one a player compares it with, and
// Arabic takes the symbols that go with those digits (CLDR's Arabic with
// Latin digits: "16.7%"), the same as the numbers written in its texts;
// Arabic-Indic digits and the Arabic separators (٫ ٪) appear nowhere
// (TestArabicRendering).
func number(l verifier.Lang, x float64, decimals int) string {
	s := strconv.FormatFloat(x, 'f', decimals, 64)
	if l == Turkish {
		s = strings.Replace(s, ".", ",", 1)
	}
	return s
}

// percent writes the rate x (0 to 1) as a percentage in language l: "16.7%",
// "%16,7" (Turkish puts the sign first), "16.7%" in Arabic too (drawn left
// to right: text isolates it, keepNumbers).
func percent(l verifier.Lang, x float64, decimals int) string {
	n := number(l, 100*x, decimals)
	if l == Turkish {
		return "%" + n
	}
	return n + "%"
}

// resultText says how a game ended, in language l.
func resultText(l verifier.Lang, end *events.End, names [2]string) string {
	if end == nil {
		return text(l, "ResultNone")
	}
	switch {
	case end.Winner < 0:
		return text(l, "Result-"+string(end.Result)+"-none")
	case end.Result == events.Resigned:
		return text(l, "Result-resigned", seatLabel(l, names, 1-end.Winner), seatLabel(l, names, end.Winner), points(l, end.Points))
	default:
		return text(l, "Result-"+string(end.Result), seatLabel(l, names, end.Winner), points(l, end.Points))
	}
}

// points says a number of points in language l.
func points(l verifier.Lang, n uint32) string {
	switch n {
	case 1:
		return text(l, "Points1")
	case 2:
		return text(l, "Points2")
	}
	return text(l, "PointsN", n)
}
