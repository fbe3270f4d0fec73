//go:build js && wasm

// Command rules is package rules alone compiled to WebAssembly: the lower
// bound of what the rules engine costs as WebAssembly (without the
// movecheck adapter and package events), built only to measure it
// (tools/wasm.mjs). It is not shipped.
//
// It sets globalThis.zarlogRules.applyPlay(variant, position, seat, d0, d1,
// play), which returns "position canonical-play" or "!rule".
package main

import (
	"syscall/js"

	"github.com/zarlog/zarlog/rules"
)

func main() {
	js.Global().Set("zarlogRules", js.ValueOf(map[string]any{
		"applyPlay": js.FuncOf(func(_ js.Value, a []js.Value) any {
			v := rules.Variant(a[0].String())
			p, err := rules.ParsePosition(v, a[1].String())
			if err != nil {
				return "!position"
			}
			pl, err := rules.ParsePlay(a[5].String())
			if err != nil {
				return "!" + string(rules.RuleNotation)
			}
			np, c, err := rules.ApplyPlay(v, p, a[2].Int(), rules.Dice{a[3].Int(), a[4].Int()}, pl)
			if err != nil {
				if e, ok := err.(*rules.IllegalMoveError); ok {
					return "!" + string(e.Rule)
				}
				return "!" + err.Error()
			}
			return np.String() + " " + rules.FormatPlay(c)
		}),
	}))
	select {}
}
