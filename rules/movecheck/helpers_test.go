package movecheck_test

import (
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/internal/testonly"
)

func signer(t testing.TB) events.Signer {
	t.Helper()
	s, _, err := testonly.Key("tavla-east")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rollOf(n uint32, a, b int, kind dice.Kind) dice.Roll {
	return dice.Roll{N: n, Dice: dice.Dice{a, b}, Kind: kind}
}
