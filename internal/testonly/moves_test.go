package testonly

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/publisher"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/rules/movecheck"
)

// update rewrites testdata/moves from the deterministic generator: the
// project's one golden-update switch, ZARLOG_UPDATE_GOLDEN=1.
var update = os.Getenv("ZARLOG_UPDATE_GOLDEN") == "1"

const (
	movesOrigin  = "log.zarlog.example"
	movesEmitter = "tavla-east"
)

// A moveVector is one bundle the generator writes: a played game, and the
// change that breaks it (nil for a valid vector).
type moveVector struct {
	name   string
	note   string
	game   Config
	mutate func(t *testing.T, p *Played) []events.Body
	code   events.Code // the moves check's expected rejection
	rule   string
}

// moveIndex returns the index among bodies of the k-th move event.
func moveIndex(t *testing.T, bodies []events.Body, k int) int {
	for i, b := range bodies {
		if b.Type() == events.TypeMove {
			if k == 0 {
				return i
			}
			k--
		}
	}
	t.Fatalf("no move #%d", k)
	return -1
}

// replaceMove returns bodies with the k-th move changed by f.
func replaceMove(t *testing.T, p *Played, k int, f func(events.Move) events.Move) []events.Body {
	out := slices.Clone(p.Bodies)
	i := moveIndex(t, out, k)
	out[i] = f(out[i].(events.Move))
	return out
}

// stateBefore returns the rules engine's state before body i.
func stateBefore(t *testing.T, c Config, bodies []events.Body, i int) movecheck.State {
	var g *events.Game
	for j, b := range bodies[:i] {
		ev, err := events.New(c.Header(uint64(j)), b)
		if err != nil {
			t.Fatal(err)
		}
		if g, err = events.Apply(g, ev, Env(ev, uint64(j), movecheck.Checker{})); err != nil {
			t.Fatal(err)
		}
	}
	s, err := movecheck.ParseState(g.Position)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// blockedPlay returns a play of two parts, one per die, that the rules
// refuse because it lands on a point the opponent holds, for the state s.
func blockedPlay(s movecheck.State) (string, bool) {
	for q1 := 24; q1 >= 1; q1-- {
		for q2 := q1; q2 >= 1; q2-- {
			t1, t2 := q1-s.Dice[0], q2-s.Dice[1]
			if t1 < 1 || t2 < 1 || s.Position.Checkers(s.Seat, q1) == 0 || s.Position.Checkers(s.Seat, q2) == 0 {
				continue
			}
			p, err := rules.ParsePlay(fmt.Sprintf("%d/%d %d/%d", q1, t1, q2, t2))
			if err != nil {
				continue
			}
			_, _, err = rules.ApplyPlay(s.Variant, s.Position, s.Seat, s.Dice, p)
			if ie, ok := err.(*rules.IllegalMoveError); ok && ie.Rule == rules.RuleBlocked {
				return rules.FormatPlay(p), true
			}
		}
	}
	return "", false
}

func moveVectors() []moveVector {
	tav, anc, pr := events.Tavlarena, events.Anchored, events.PerRoll
	short := Config{Scheme: tav, Variant: rules.Backgammon, MaxRolls: 24}
	tavla := Config{Scheme: anc, Variant: rules.Tavla, Opening: rules.OpeningTurkishReroll}
	return []moveVector{
		{name: "moves-backgammon-tavlarena-western", note: "a whole backgammon game played by rules.Choose; the cube is in use, so the end's points are checked as the multiplier times a power of two",
			game: Config{Scheme: tav, Variant: rules.Backgammon}},
		{name: "moves-tavla-anchored-turkish-reroll", note: "a whole tavla game (no hit-and-run in the home board), anchored-v1, Turkish re-roll",
			game: tavla},
		{name: "moves-portes-per-roll-2-games", note: "a per-roll-v1 match of two portes games: the roll after the first game's last move opens the second",
			game: Config{Scheme: pr, Variant: rules.Portes, Games: 2}},
		{name: "moves-plakoto-tavlarena-turkish-reroll", note: "40 rolls of plakoto (pinning, the mother rule), then a resignation",
			game: Config{Scheme: tav, Variant: rules.Plakoto, Opening: rules.OpeningTurkishReroll, MaxRolls: 40}},
		{name: "moves-fevga-anchored-western", note: "40 rolls of fevga (no hitting, both sides run the same way), then a resignation",
			game: Config{Scheme: anc, Variant: rules.Fevga, MaxRolls: 40}},
		{name: "moves-backgammon-resigned-60-rolls", note: "60 rolls of backgammon, then the seat on turn resigns: a resignation is not checked against the board",
			game: Config{Scheme: tav, Variant: rules.Backgammon, MaxRolls: 60}},
		{name: "moves-not-logged", note: `moves are in the log but the settings do not say "moves": "logged": the moves check is skipped`,
			game: Config{Scheme: tav, Variant: rules.Portes, MaxRolls: 20, Unlogged: true}},

		{name: "moves-illegal-move", note: "a move replaced by a play that lands on a point the opponent holds",
			game: short, code: events.CodeIllegalMove, rule: string(rules.RuleBlocked),
			mutate: func(t *testing.T, p *Played) []events.Body {
				for k := 3; ; k++ {
					i := moveIndex(t, p.Bodies, k)
					if play, ok := blockedPlay(stateBefore(t, p.Config, p.Bodies, i)); ok {
						return replaceMove(t, p, k, func(m events.Move) events.Move { m.Play = play; return m })
					}
				}
			}},
		{name: "moves-move-by-wrong-seat", note: "the sixth move is logged for the other seat",
			game: short, code: events.CodeIllegalMove, rule: string(rules.RuleNotOnTurn),
			mutate: func(t *testing.T, p *Played) []events.Body {
				return replaceMove(t, p, 5, func(m events.Move) events.Move { m.Seat = 1 - m.Seat; return m })
			}},
		{name: "moves-missing-move", note: "the sixth move is dropped: the next roll comes while it is owed",
			game: short, code: events.CodeMoveOwed,
			mutate: func(t *testing.T, p *Played) []events.Body {
				out := slices.Clone(p.Bodies)
				i := moveIndex(t, out, 5)
				return slices.Delete(out, i, i+1)
			}},
		{name: "moves-non-canonical", note: "a legal play written with its parts in another order",
			game: short, code: events.CodeIllegalMove, rule: string(rules.RuleNonCanonical),
			mutate: func(t *testing.T, p *Played) []events.Body {
				for k := 0; ; k++ {
					m := p.Bodies[moveIndex(t, p.Bodies, k)].(events.Move)
					parts := strings.Split(m.Play, " ")
					if len(parts) > 1 && parts[0] != parts[len(parts)-1] {
						slices.Reverse(parts)
						return replaceMove(t, p, k, func(m events.Move) events.Move { m.Play = strings.Join(parts, " "); return m })
					}
				}
			}},
		{name: "moves-finished-not-over", note: "a game stopped after 24 rolls claims a finished result",
			game: short, code: events.CodeWrongResult, rule: string(movecheck.NotOver),
			mutate: func(t *testing.T, p *Played) []events.Body {
				out := slices.Clone(p.Bodies)
				e := out[len(out)-2].(events.End)
				e.Result = events.Finished
				out[len(out)-2] = e
				return out
			}},
		{name: "moves-wrong-winner", note: "the end of a finished tavla game names the loser",
			game: tavla, code: events.CodeWrongResult, rule: string(movecheck.WrongWinner),
			mutate: func(t *testing.T, p *Played) []events.Body {
				out := slices.Clone(p.Bodies)
				e := out[len(out)-2].(events.End)
				e.Winner = 1 - e.Winner
				out[len(out)-2] = e
				return out
			}},
		{name: "moves-wrong-points", note: "the end of a finished tavla game (no cube) claims one point more than the result",
			game: tavla, code: events.CodeWrongResult, rule: string(movecheck.WrongPoints),
			mutate: func(t *testing.T, p *Played) []events.Body {
				out := slices.Clone(p.Bodies)
				e := out[len(out)-2].(events.End)
				e.Points++
				out[len(out)-2] = e
				return out
			}},
		{name: "moves-per-roll-missing-move", note: "per-roll-v1: the sixth move is dropped, and the next roll-commit comes while it is owed",
			game: Config{Scheme: pr, Variant: rules.Tavla, MaxRolls: 20}, code: events.CodeMoveOwed,
			mutate: func(t *testing.T, p *Played) []events.Body {
				out := slices.Clone(p.Bodies)
				i := moveIndex(t, out, 5)
				return slices.Delete(out, i, i+1)
			}},
	}
}

// memLog is an in-memory tile store for the generator's log.
type memLog map[[2]int64][]byte

func (m memLog) ReadTiles(ctx context.Context, tiles []merkle.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		d, ok := m[[2]int64{int64(t.Level), int64(t.Index)}]
		if !ok {
			return nil, fmt.Errorf("%s: %w", t.Path(), merkle.ErrNotFound)
		}
		out[i] = d
	}
	return out, nil
}

// generateMoves builds every move vector: the games, one log holding all of
// them one after the other (so the bundles are small), a checkpoint signed
// by the log key, and each game's bundle. It returns the files by name.
func generateMoves(t *testing.T) map[string][]byte {
	emitter, emitterVkey, err := Key(movesEmitter)
	if err != nil {
		t.Fatal(err)
	}
	logKey, logVkey, err := Key(movesOrigin)
	if err != nil {
		t.Fatal(err)
	}
	vs := moveVectors()
	b, err := merkle.NewBuilder(context.Background(), nil, merkle.State{})
	if err != nil {
		t.Fatal(err)
	}
	tiles := memLog{}
	leaves := make([][]publisher.IndexedLeaf, len(vs))
	for i, v := range vs {
		c := v.game
		c.Label = "moves/" + v.name // each vector its own game: its id, seeds, dice and moves
		p, err := Play(c)
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		bodies := p.Bodies
		if v.mutate != nil {
			bodies = v.mutate(t, p)
		}
		evs, err := Events(c, bodies, emitter)
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		for _, ev := range evs {
			leaf, err := events.Format(ev)
			if err != nil {
				t.Fatal(err)
			}
			leaves[i] = append(leaves[i], publisher.IndexedLeaf{Index: b.Size(), Leaf: leaf})
			tds, err := b.Append([][]byte{leaf})
			if err != nil {
				t.Fatal(err)
			}
			for _, td := range tds {
				tiles[[2]int64{int64(td.Tile.Level), int64(td.Tile.Index)}] = td.Data
			}
		}
	}
	cp, err := merkle.Sign(merkle.Checkpoint{Origin: movesOrigin, Size: b.Size(), Hash: b.Root()}, logKey)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Name        string   `json:"name"`
		File        string   `json:"file"`
		Exit        int      `json:"exit"`
		Failing     []string `json:"failing"`
		Note        string   `json:"note"`
		LogKey      string   `json:"logKey"`
		EmitterKeys []string `json:"emitterKeys"`
		MoveCode    string   `json:"moveCode,omitempty"`
		MoveRule    string   `json:"moveRule,omitempty"`
	}
	var manifest struct {
		Vectors []entry `json:"vectors"`
	}
	files := map[string][]byte{}
	for i, v := range vs {
		bundle, err := publisher.BuildBundle(context.Background(), tiles, leaves[i], cp)
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		e := entry{Name: v.name, Exit: 0, Failing: []string{}, Note: v.note, LogKey: logVkey, EmitterKeys: []string{emitterVkey},
			MoveCode: string(v.code), MoveRule: v.rule}
		dir := "valid"
		if v.code != "" {
			e.Exit, e.Failing, dir = 1, []string{"moves"}, "invalid"
		}
		e.File = dir + "/" + v.name + ".json"
		files[e.File] = bundle // as the publisher writes it: canonical JSON
		manifest.Vectors = append(manifest.Vectors, e)
	}
	m, err := json.MarshalIndent(manifest, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	files["manifest.json"] = append(m, '\n')
	return files
}

// TestMoveVectors regenerates testdata/moves and requires the committed
// files to be exactly what the generator writes; with ZARLOG_UPDATE_GOLDEN=1 it writes
// them. The generator is deterministic: fixed labels give the seeds, the
// keys and the strategy's randomness.
func TestMoveVectors(t *testing.T) {
	dir, err := MovesDir()
	if err != nil {
		t.Fatal(err)
	}
	files := generateMoves(t)
	if update {
		for _, sub := range []string{"valid", "invalid"} {
			old, _ := filepath.Glob(filepath.Join(dir, sub, "*.json"))
			for _, f := range old {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatalf("%v (ZARLOG_UPDATE_GOLDEN=1 go test ./internal/dicevectors -run TestMoveVectors writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("testdata/moves/%s differs from what the generator writes (ZARLOG_UPDATE_GOLDEN=1 rewrites it; review the diff)", name)
		}
	}
	vs, err := LoadMoves()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(files)-1 {
		t.Errorf("the manifest lists %d vectors, the generator wrote %d files", len(vs), len(files)-1)
	}
}
