package publisher

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/zarlog/zarlog/verifier"
)

// pips are the pip positions of each face on a 3 × 3 grid (0..2, 0..2).
var pips = [7][][2]int{
	1: {{1, 1}},
	2: {{0, 0}, {2, 2}},
	3: {{0, 0}, {1, 1}, {2, 2}},
	4: {{0, 0}, {2, 0}, {0, 2}, {2, 2}},
	5: {{0, 0}, {2, 0}, {1, 1}, {0, 2}, {2, 2}},
	6: {{0, 0}, {2, 0}, {0, 1}, {2, 1}, {0, 2}, {2, 2}},
}

// diceSVG draws the dice faces as dice with pips, left to right as a pair
// is written ("6-2": the 6 on the left, in every language), labelled for
// screen readers in language l ("6 and 2"). A face outside 1..6 is drawn
// blank. The output holds numbers only, no caller text.
func diceSVG(l verifier.Lang, faces ...int) template.HTML {
	label := make([]string, len(faces))
	for i, f := range faces {
		label[i] = fmt.Sprint(f)
	}
	and := map[verifier.Lang]string{English: " and ", Turkish: " ve ", Arabic: " و"}[l]
	return drawDice(strings.Join(label, and), false, faces...)
}

// openingSVG draws an opening roll, one die for each seat, in the order in
// which the page's language writes the seats' names: seat 0's die on the
// left, or in Arabic on the right, beside seat 0's name in the row
// (TestArabicRendering). label says both ("Ayşe 3, Mehmet 5").
func openingSVG(l verifier.Lang, label string, seat0, seat1 int) template.HTML {
	return drawDice(label, l == Arabic, seat0, seat1)
}

// drawDice draws faces as dice, the first on the left, or on the right
// when rtl; each die's rect carries its index (data-die).
func drawDice(label string, rtl bool, faces ...int) template.HTML {
	var b strings.Builder
	w := 34*len(faces) - 4
	fmt.Fprintf(&b, `<svg class="dice" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d 30" width="%d" height="30" role="img" aria-label="%s">`,
		w, w, template.HTMLEscapeString(label))
	for i, f := range faces {
		x := 34 * i
		if rtl {
			x = 34 * (len(faces) - 1 - i)
		}
		fmt.Fprintf(&b, `<rect class="die" data-die="%d" x="%d" y="1" width="28" height="28" rx="5"/>`, i, x+1)
		if f >= 1 && f <= 6 {
			for _, p := range pips[f] {
				fmt.Fprintf(&b, `<circle class="pip" cx="%d" cy="%d" r="2.8"/>`, x+7+8*p[0], 7+8*p[1])
			}
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
