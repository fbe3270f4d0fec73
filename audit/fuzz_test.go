package audit

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// FuzzParseProblem: a stored problem record never panics the auditor, and
// what it accepts encodes to a record it reads back the same.
func FuzzParseProblem(f *testing.F) {
	i := uint64(17)
	for _, p := range []Problem{
		{Time: time.Unix(1_800_000_000, 0).UTC(), Kind: ProblemGame, Game: "6f1d0c2e-7c55-4a5e-9d7f-1f0c7a8e2b11", Check: "rolls", Detail: "roll 3: logged 5-4, the seed gives 5-3", Source: "https://log.example/games/x/proof.json"},
		{Time: time.Unix(1_800_000_001, 0).UTC(), Kind: ProblemSplitView, Check: "view-consistency", Detail: "fork", Evidence: "/var/lib/e/fork-1.json"},
		{Kind: ProblemLeaf, Index: &i, Detail: "not a zarlog event"},
	} {
		b, err := json.Marshal(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseProblem(b)
		if err != nil {
			return
		}
		_ = p.String()
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := ParseProblem(again)
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip: %+v → %s → %+v, %v", p, again, q, err)
		}
	})
}
