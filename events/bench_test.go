package events

import "testing"

func benchParseVerify(b *testing.B, typ Type) {
	f := newFixture(b)
	var leaf []byte
	for _, ev := range tavlarenaGame(b, f) {
		if ev.Type == typ {
			leaf = mustFormat(b, ev)
			break
		}
	}
	b.SetBytes(int64(len(leaf)))
	b.ReportAllocs()
	for b.Loop() {
		ev, err := Parse(leaf)
		if err != nil {
			b.Fatal(err)
		}
		if err := Verify(ev, f.keyring); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseVerifyRoll is the ledger's per-event cost for the most
// common event (no signature).
func BenchmarkParseVerifyRoll(b *testing.B) { benchParseVerify(b, TypeRoll) }

// BenchmarkParseVerifyCommit includes an Ed25519 verification.
func BenchmarkParseVerifyCommit(b *testing.B) { benchParseVerify(b, TypeCommit) }

func BenchmarkFormatRoll(b *testing.B) {
	f := newFixture(b)
	ev := tavlarenaGame(b, f)[3]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Format(ev); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyGame applies every event of a tavlarena-v1 game (12 rolls,
// 9 moves, reveal with 12 rolls recomputed); ns/event is the mean.
func BenchmarkApplyGame(b *testing.B) {
	f := newFixture(b)
	evs := tavlarenaGame(b, f)
	envs := make([]Env, len(evs))
	for i, ev := range evs {
		envs[i] = f.env(ev, uint64(i))
	}
	b.ReportAllocs()
	for b.Loop() {
		var g *Game
		for i, ev := range evs {
			var err error
			if g, err = Apply(g, ev, envs[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}

// BenchmarkApplyRoll applies one turn roll to a game with 11 rolls logged.
func BenchmarkApplyRoll(b *testing.B) {
	f := newFixture(b)
	evs := tavlarenaGame(b, f)
	states := applyAll(b, f, evs)
	i := len(evs) - 4 // the last roll
	if evs[i].Type != TypeRoll {
		b.Fatalf("event %d is a %s", i, evs[i].Type)
	}
	env := f.env(evs[i], uint64(i))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Apply(states[i-1], evs[i], env); err != nil {
			b.Fatal(err)
		}
	}
}

func benchState(b *testing.B, decode bool) {
	f := newFixture(b)
	states := applyAll(b, f, tavlarenaGame(b, f))
	g := states[len(states)-1]
	enc := mustMarshal(b, g)
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if decode {
			var d Game
			if err := d.UnmarshalBinary(enc); err != nil {
				b.Fatal(err)
			}
		} else if _, err := g.MarshalBinary(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStateMarshal and BenchmarkStateUnmarshal encode and decode the
// final state of a tavlarena-v1 game.
func BenchmarkStateMarshal(b *testing.B)   { benchState(b, false) }
func BenchmarkStateUnmarshal(b *testing.B) { benchState(b, true) }

// BenchmarkParse parses every event of the three fixture games (a
// tavlarena-v1 game, an anchored-v1 game and a per-roll-v1 match), with
// Parse and with parseReference alone (the path Parse takes for what its fast
// path declines); ns/event is the mean.
func BenchmarkParse(b *testing.B) {
	f := newFixture(b)
	var leaves [][]byte
	for _, ev := range allEvents(b, f) {
		leaves = append(leaves, mustFormat(b, ev))
	}
	for _, bc := range []struct {
		name  string
		parse func([]byte) (*Event, error)
	}{{"Parse", Parse}, {"parseReference", parseReference}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, l := range leaves {
					if _, err := bc.parse(l); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(leaves)), "ns/event")
		})
	}
}
