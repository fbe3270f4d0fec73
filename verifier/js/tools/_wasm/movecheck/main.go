//go:build js && wasm

// Command movecheck is the Go rules engine's adapter (rules/movecheck, which
// the ledger and zarlog-verify use) compiled to WebAssembly, built only to
// measure it against the JavaScript port (tools/wasm.mjs, README.md "The
// rules engine: a port, not WebAssembly"). It is not shipped: the folder's
// name keeps it out of ./... and of the pages.
//
// It sets globalThis.zarlogMovecheck = {checkRoll, checkMove, checkEnd},
// each taking a MoveInput as JSON and returning JSON.
package main

import (
	"encoding/json"
	"errors"
	"syscall/js"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
)

type input struct {
	Scheme   events.Scheme
	Settings string
	Position string
	Starter  int
	Roll     dice.Roll
	Move     events.Move
	End      events.End
}

type output struct {
	Position string `json:"position,omitempty"`
	Played   bool   `json:"played,omitempty"`
	Rule     string `json:"rule,omitempty"`
	Error    string `json:"error,omitempty"`
}

func in(args []js.Value) (events.MoveInput, events.End) {
	var i input
	if err := json.Unmarshal([]byte(args[0].String()), &i); err != nil {
		panic(err)
	}
	mi := events.MoveInput{Scheme: i.Scheme, Settings: []byte(i.Settings), Starter: i.Starter, Roll: i.Roll, Move: i.Move}
	if i.Position != "" {
		mi.Position = []byte(i.Position)
	}
	return mi, i.End
}

func out(pos []byte, played bool, err error) any {
	o := output{Position: string(pos), Played: played}
	if err != nil {
		o.Error = err.Error()
		var ime *rules.IllegalMoveError
		var rre *rules.RollError
		var rse *movecheck.ResultError
		switch {
		case errors.As(err, &ime):
			o.Rule = string(ime.Rule)
		case errors.As(err, &rre):
			o.Rule = string(rre.Rule)
		case errors.As(err, &rse):
			o.Rule = string(rse.Reason)
		}
	}
	b, _ := json.Marshal(o)
	return string(b)
}

func main() {
	var c movecheck.Checker
	js.Global().Set("zarlogMovecheck", js.ValueOf(map[string]any{
		"checkRoll": js.FuncOf(func(_ js.Value, args []js.Value) any {
			mi, _ := in(args)
			pos, played, err := c.CheckRoll(mi)
			return out(pos, played, err)
		}),
		"checkMove": js.FuncOf(func(_ js.Value, args []js.Value) any {
			mi, _ := in(args)
			pos, err := c.CheckMove(mi)
			return out(pos, false, err)
		}),
		"checkEnd": js.FuncOf(func(_ js.Value, args []js.Value) any {
			mi, end := in(args)
			return out(nil, false, c.CheckEnd(mi, end))
		}),
	}))
	select {}
}
