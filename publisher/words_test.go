package publisher

import (
	"strings"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/verifier"
)

// TestResultText says every way a game can end, in every language, with
// named and unnamed seats: never a formatting error, never a missing
// text, and the points said as a number of points.
func TestResultText(t *testing.T) {
	want := map[verifier.Lang]map[uint32]string{
		English: {1: "(1 point)", 2: "(2 points)", 3: "(3 points)", 64: "(64 points)"},
		Turkish: {1: "(1 sayı)", 2: "(2 sayı)", 3: "(3 sayı)", 64: "(64 sayı)"},
		Arabic:  {1: "(نقطة واحدة)", 2: "(نقطتان)", 3: "(3 من النقاط)", 64: "(64 من النقاط)"},
	}
	for _, l := range verifier.Langs() {
		for _, names := range [][2]string{{}, {"Ayşe", "Mehmet"}} {
			for _, res := range []events.Result{events.Finished, events.Resigned, events.Abandoned} {
				for _, pts := range []uint32{1, 2, 3, 64} {
					for _, winner := range []int{0, 1, events.NoWinner} {
						s := resultText(l, &events.End{Result: res, Winner: winner, Points: pts}, names)
						if strings.Contains(s, "%!") || strings.Contains(s, "⟦") || s == "" {
							t.Errorf("%s %s winner %d, %d points: %q", l, res, winner, pts, s)
						}
						if winner != events.NoWinner && !strings.Contains(s, want[l][pts]) {
							t.Errorf("%s %s winner %d, %d points: %q does not say %q", l, res, winner, pts, s, want[l][pts])
						}
					}
				}
			}
		}
		if s := resultText(l, nil, [2]string{}); s != text(l, "ResultNone") {
			t.Errorf("%s: no end: %q", l, s)
		}
	}
	if got := text(English, "NoSuchText"); got != "⟦NoSuchText⟧" {
		t.Errorf("a missing text renders as %q, want it marked", got)
	}
}
