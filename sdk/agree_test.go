package sdk_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/internal/testonly"
	"github.com/zarlog/zarlog/rules"
	"github.com/zarlog/zarlog/sdk"
)

// The agreement of the Go SDK and the Node SDK (sdk/js, zarlog-emitter):
// for the same inputs — the same random bytes in the same order, the same
// clock, the same calls with the same arguments — both make the same event
// bytes (signatures included), the same results of every call, the same
// refusals and the same evidence file. The inputs are taken from every
// valid game of testdata (the evidence files of testdata/dice, the games in
// its proof bundles, the move-logged games of testdata/moves) and from the
// mutated games of testdata/moves (whose illegal calls both must refuse
// with the same code and rule); each game becomes a script of calls.

// An agreeStep is one call of a script, at the clock's time At (the clock
// keeps the last time set).
type agreeStep struct {
	At   string `json:"at,omitempty"`
	Call string `json:"call"`
	// new
	GameID   string          `json:"gameId,omitempty"`
	MatchID  string          `json:"matchId,omitempty"`
	GameNo   uint32          `json:"gameNo,omitempty"`
	Seats    []string        `json:"seats,omitempty"`
	Settings json.RawMessage `json:"settings,omitempty"`
	Rounds   uint64          `json:"rounds,omitempty"`
	// contribute, token, move, clientSecond
	Seat         int    `json:"seat"`
	Contribution string `json:"contribution,omitempty"`
	Token        string `json:"token,omitempty"`
	Play         string `json:"play,omitempty"`
	Second       string `json:"second,omitempty"`
	// beacon
	Round     uint64 `json:"round,omitempty"`
	Signature string `json:"signature,omitempty"`
	// end
	Result string `json:"result,omitempty"`
	Winner *int   `json:"winner,omitempty"`
	Points uint32 `json:"points,omitempty"`
}

// An agreeScript is one game: its scheme, the emitter's signer key, the
// random bytes the backend draws (in the order the SDKs draw them), and the
// calls.
type agreeScript struct {
	Name   string      `json:"name"`
	Scheme string      `json:"scheme"`
	Key    string      `json:"key"`
	Rand   string      `json:"rand"`
	Steps  []agreeStep `json:"steps"`
	source string
}

// An agreeOutput is what a script made: each call's result (or its error),
// the events' bytes, and the evidence file once the game is closed.
type agreeOutput struct {
	Name     string            `json:"name"`
	Results  []json.RawMessage `json:"results"`
	Leaves   []string          `json:"leaves"`
	Evidence string            `json:"evidence"`
}

// agreeKey is the emitter key both SDKs sign with: a fixed seed.
func agreeKey(t testing.TB) (skey string, signer note.Signer) {
	t.Helper()
	seed := testonly.Label32("key/" + emitter)
	priv := ed25519.NewKeyFromSeed(seed[:])
	vkey, err := note.NewEd25519VerifierKey(emitter, priv.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	skey = fmt.Sprintf("PRIVATE+KEY+%s+%s+%s", emitter, strings.Split(vkey, "+")[1], base64.StdEncoding.EncodeToString(append([]byte{1}, seed[:]...)))
	signer, err = note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return skey, signer
}

// agreeScripts makes the scripts from testdata.
func agreeScripts(t testing.TB, skey string) []agreeScript {
	t.Helper()
	var out []agreeScript
	for _, dir := range []string{"../testdata/dice/evidence/valid", "../testdata/moves/valid", "../testdata/moves/invalid"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no vectors in %s: %v", dir, err)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var v struct {
				Log *struct {
					Entries []struct{ Leaf string }
				}
			}
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var s agreeScript
			if v.Log != nil {
				s = scriptOfBundle(t, f, v.Log.Entries)
			} else {
				s = scriptOfEvidence(t, f, raw)
			}
			s.Key = skey
			s.source = f
			out = append(out, s)
		}
	}
	return out
}

type randBuf struct{ b []byte }

func (r *randBuf) add(hexes ...string) {
	for _, h := range hexes {
		b, err := hex.DecodeString(strings.ReplaceAll(h, "-", ""))
		if err != nil {
			panic(err)
		}
		r.b = append(r.b, b...)
	}
}

// scriptOfBundle makes the calls that log a proof bundle's game, event by
// event (the vector's leaves are in log order).
func scriptOfBundle(t testing.TB, file string, entries []struct{ Leaf string }) agreeScript {
	t.Helper()
	var evs []*events.Event
	for _, e := range entries {
		ev, err := events.Parse([]byte(e.Leaf))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		evs = append(evs, ev)
	}
	s := agreeScript{Name: "bundle " + filepath.Base(file), Scheme: string(evs[0].Scheme)}
	var r randBuf
	seeds := map[string]string{} // per-roll-v1: roll id → seed
	for _, ev := range evs {
		switch b := ev.Body.(type) {
		case events.Reveal:
			r.add(hex.EncodeToString(b.Seed[:])) // the game's seed, drawn at its commit
		case events.RollReveal:
			seeds[b.RollID.String()] = hex.EncodeToString(b.Seed[:])
		}
	}
	if ev := evs[len(evs)-1]; ev.Scheme != events.PerRoll && ev.Type != events.TypeReveal {
		r.add(strings.Repeat("5a", 32)) // a game that did not reveal still drew a seed
	}
	for _, ev := range evs {
		st := agreeStep{At: ev.Time.UTC().Format(events.TimeLayout)}
		switch b := ev.Body.(type) {
		case events.TavlarenaCommit:
			st.Call, st.GameID, st.Settings = "new", ev.Game, b.Settings
			st.Seats = []string{b.Seats[0].String(), b.Seats[1].String()}
		case events.AnchoredCommit:
			st.Call, st.GameID, st.MatchID, st.GameNo, st.Settings = "new", ev.Game, b.MatchID, b.GameNo, b.Settings
			st.Rounds = b.Anchor.Round - drand.Quicknet().RoundAt(b.SealedAt)
			st.At = b.SealedAt.UTC().Format(events.TimeLayout)
		case events.PerRollCommit:
			st.Call, st.MatchID, st.Settings = "new", ev.Game, b.Settings
		case events.Contribution:
			st.Call, st.Seat, st.Contribution = "contribute", b.Seat, hex.EncodeToString(b.Contribution[:])
		case events.TokenContribution:
			st.Call, st.Seat, st.Token = "token", b.Seat, b.Token
		case events.Beacon:
			st.Call, st.Round, st.Signature = "beacon", b.Round, hex.EncodeToString(b.Signature)
			// Both SDKs record a beacon only once its round's time has come by
			// their clock (the vectors' ledgers logged it on a replay clock).
			if due := drand.Quicknet().RoundTime(b.Round).Add(time.Second); ev.Time.Before(due) {
				st.At = due.UTC().Format(events.TimeLayout)
			}
		case events.Roll:
			st.Call = "roll"
		case events.Move:
			st.Call, st.Seat, st.Play = "move", b.Seat, b.Play
		case events.End:
			st.Call, st.Result, st.Points = "end", string(b.Result), b.Points
			w := b.Winner
			st.Winner = &w
		case events.Reveal:
			st.Call = "reveal"
		case events.RollCommit:
			st.Call = "commitRoll"
			r.add(b.RollID.String(), seeds[b.RollID.String()])
		case events.RollSecond:
			if b.SecondFrom == events.FromClient {
				st.Call, st.Second = "clientSecond", hex.EncodeToString(b.Second[:])
			} else {
				st.Call = "serverSecond"
				r.add(hex.EncodeToString(b.Second[:]))
			}
		case events.RollReveal:
			st.Call = "revealRoll"
		default:
			t.Fatalf("%s: event type %s", file, ev.Type)
		}
		s.Steps = append(s.Steps, st)
	}
	s.Rand = hex.EncodeToString(r.b)
	return s
}

// scriptOfEvidence makes the calls of a game whose evidence file is all
// there is: its seed, contributions, tokens, beacon and rolls (the rolls
// come from them), at times of its own.
func scriptOfEvidence(t testing.TB, file string, raw []byte) agreeScript {
	t.Helper()
	var e struct {
		Scheme, GameID, MatchID, Seed string
		GameNo                        uint32
		Seats, Contributions, Tokens  []string
		Settings                      json.RawMessage
		Anchor                        struct {
			Round     uint64
			Signature string
		}
		Rolls []struct {
			RollID, Seed, Second, SecondFrom string
		}
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	s := agreeScript{Name: "evidence " + filepath.Base(file), Scheme: e.Scheme}
	var r randBuf
	t0 := time.Date(2026, 12, 1, 9, 30, 0, 123e6, time.UTC)
	at := func(d time.Duration) string { return t0.Add(d).Format(events.TimeLayout) }
	winner := 0
	end := agreeStep{Call: "end", Result: "finished", Winner: &winner, Points: 1}
	switch e.Scheme {
	case "tavlarena-v1":
		r.add(e.Seed)
		s.Steps = append(s.Steps, agreeStep{At: at(0), Call: "new", GameID: e.GameID, Seats: e.Seats, Settings: e.Settings},
			agreeStep{At: at(time.Second), Call: "contribute", Seat: 1, Contribution: e.Contributions[1]},
			agreeStep{At: at(2 * time.Second), Call: "contribute", Seat: 0, Contribution: e.Contributions[0]})
		for i := range e.Rolls {
			s.Steps = append(s.Steps, agreeStep{At: at(time.Duration(3+i) * time.Second), Call: "roll"})
		}
		s.Steps = append(s.Steps, end, agreeStep{Call: "reveal"})
	case "anchored-v1":
		r.add(e.Seed)
		c := drand.Quicknet()
		due := c.RoundTime(e.Anchor.Round)
		sealed := due.Add(-10*time.Second + 250*time.Millisecond)
		if sealed.Before(c.RoundTime(1)) {
			sealed = c.RoundTime(1).Add(250 * time.Millisecond)
		}
		f := func(t time.Time) string { return t.UTC().Format(events.TimeLayout) }
		s.Steps = append(s.Steps, agreeStep{At: f(sealed), Call: "new", GameID: "game-" + strings.TrimSuffix(filepath.Base(file), ".json"),
			MatchID: e.MatchID, GameNo: e.GameNo, Settings: e.Settings, Rounds: e.Anchor.Round - c.RoundAt(sealed)},
			agreeStep{At: f(sealed.Add(time.Second)), Call: "token", Seat: 0, Token: e.Tokens[0]},
			agreeStep{At: f(sealed.Add(2 * time.Second)), Call: "token", Seat: 1, Token: e.Tokens[1]},
			agreeStep{At: f(due.Add(1500 * time.Millisecond)), Call: "beacon", Round: e.Anchor.Round, Signature: e.Anchor.Signature})
		for range e.Rolls {
			s.Steps = append(s.Steps, agreeStep{Call: "roll"})
		}
		s.Steps = append(s.Steps, end, agreeStep{Call: "reveal"})
	case "per-roll-v1":
		s.Steps = append(s.Steps, agreeStep{At: at(0), Call: "new", MatchID: e.MatchID, Settings: e.Settings})
		for i, x := range e.Rolls {
			r.add(x.RollID, x.Seed)
			s.Steps = append(s.Steps, agreeStep{At: at(time.Duration(1+3*i) * time.Second), Call: "commitRoll"})
			if x.SecondFrom == "client" {
				s.Steps = append(s.Steps, agreeStep{Call: "clientSecond", Second: x.Second})
			} else {
				r.add(x.Second)
				s.Steps = append(s.Steps, agreeStep{Call: "serverSecond"})
			}
			s.Steps = append(s.Steps, agreeStep{At: at(time.Duration(2+3*i) * time.Second), Call: "revealRoll"})
		}
		s.Steps = append(s.Steps, agreeStep{Call: "end", Result: "abandoned"})
	default:
		t.Fatalf("%s: scheme %q", file, e.Scheme)
	}
	s.Rand = hex.EncodeToString(r.b)
	return s
}

// runGoScript plays a script with the Go SDK.
func runGoScript(t testing.TB, client *sdk.Client, signer note.Signer, s agreeScript) agreeOutput {
	t.Helper()
	ctx := context.Background()
	out := agreeOutput{Name: s.Name}
	randBytes, err := hex.DecodeString(s.Rand)
	if err != nil {
		t.Fatal(err)
	}
	var now time.Time
	b, err := sdk.NewBackend(client, sdk.GameConfig{Signer: signer, Now: func() time.Time { return now }, Rand: bytes.NewReader(randBytes), SkipCommitReceipt: true})
	if err != nil {
		t.Fatal(err)
	}
	var (
		tav   *sdk.TavlarenaGame
		anc   *sdk.AnchoredGame
		match *sdk.PerRollMatch
		game  interface {
			Leaves(context.Context) ([][]byte, error)
			Evidence(context.Context) ([]byte, error)
		}
	)
	result := func(v any) { b, _ := json.Marshal(v); out.Results = append(out.Results, b) }
	for _, st := range s.Steps {
		if st.At != "" {
			if now, err = time.Parse(events.TimeLayout, st.At); err != nil {
				t.Fatal(err)
			}
		}
		var res any = map[string]any{}
		var err error
		switch st.Call {
		case "new":
			switch s.Scheme {
			case "tavlarena-v1":
				spec := sdk.TavlarenaSpec{Settings: st.Settings}
				spec.GameID, _ = dice.ParseUUID(st.GameID)
				spec.Seats[0], _ = dice.ParseUUID(st.Seats[0])
				spec.Seats[1], _ = dice.ParseUUID(st.Seats[1])
				if tav, err = b.NewTavlarena(ctx, spec); err == nil {
					game, res = tav, map[string]any{"seal": tav.SealCode()}
				}
			case "anchored-v1":
				spec := sdk.AnchoredSpec{GameID: st.GameID, MatchID: st.MatchID, GameNo: st.GameNo, Settings: st.Settings, Rounds: st.Rounds}
				if anc, err = b.NewAnchored(ctx, spec); err == nil {
					game, res = anc, map[string]any{"seal": anc.SealCode(), "round": anc.Anchor().Round}
				}
			default:
				spec := sdk.PerRollSpec{Settings: st.Settings}
				spec.MatchID, _ = dice.ParseUUID(st.MatchID)
				if match, err = b.NewPerRoll(ctx, spec); err == nil {
					game = match
				}
			}
		case "contribute":
			var c [32]byte
			hex.Decode(c[:], []byte(st.Contribution))
			err = tav.Contribute(ctx, st.Seat, c)
		case "token":
			err = anc.Token(ctx, st.Seat, st.Token)
		case "beacon":
			sig, _ := hex.DecodeString(st.Signature)
			var src *sdk.RecordedBeacons
			if src, err = sdk.NewRecordedBeacons(events.Beacon{Chain: drand.Quicknet().Hash(), Round: st.Round, Signature: sig, Randomness: drand.Randomness(sig)}); err == nil {
				err = anc.RecordBeacon(ctx, src)
			}
		case "roll":
			var r sdk.Rolled
			if tav != nil {
				r, err = tav.Roll(ctx)
			} else {
				r, err = anc.Roll(ctx)
			}
			res = map[string]any{"n": r.N, "dice": r.Dice, "kind": r.Kind, "seat": r.Seat, "next": r.Next, "starter": r.Starter}
		case "move":
			var m events.Move
			switch {
			case tav != nil:
				m, err = tav.Move(ctx, st.Seat, st.Play)
			case anc != nil:
				m, err = anc.Move(ctx, st.Seat, st.Play)
			default:
				m, err = match.Move(ctx, st.Seat, st.Play)
			}
			res = map[string]any{"n": m.N, "play": m.Play, "seat": m.Seat}
		case "end":
			e := events.End{Result: events.Result(st.Result), Winner: events.NoWinner, Points: st.Points}
			if st.Winner != nil {
				e.Winner = *st.Winner
			}
			switch {
			case tav != nil:
				err = tav.End(ctx, e)
			case anc != nil:
				err = anc.End(ctx, e)
			default:
				err = match.End(ctx, e)
			}
		case "reveal":
			if tav != nil {
				err = tav.Reveal(ctx)
			} else {
				err = anc.Reveal(ctx)
			}
		case "commitRoll":
			var c sdk.RollCommitment
			c, err = match.CommitRoll(ctx)
			res = map[string]any{"matchId": c.MatchID.String(), "rollId": c.RollID.String(), "commitment": hex.EncodeToString(c.Commitment[:])}
		case "clientSecond":
			var c [32]byte
			hex.Decode(c[:], []byte(st.Second))
			err = match.ClientSecond(ctx, c)
		case "serverSecond":
			err = match.ServerSecond(ctx)
		case "revealRoll":
			var r sdk.RevealedRoll
			r, err = match.RevealRoll(ctx)
			res = map[string]any{"index": r.Index, "rollId": r.RollID.String(), "seed": hex.EncodeToString(r.Seed[:]), "second": hex.EncodeToString(r.Second[:]),
				"secondFrom": r.SecondFrom, "dice": r.Dice, "seat": r.Seat}
		default:
			t.Fatalf("%s: call %q", s.Name, st.Call)
		}
		if err != nil {
			result(agreeError(err))
			break
		}
		result(res)
	}
	if game != nil {
		leaves, err := game.Leaves(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range leaves {
			out.Leaves = append(out.Leaves, string(l))
		}
		if ev, err := game.Evidence(ctx); err == nil {
			out.Evidence = string(ev)
		}
	}
	return out
}

// agreeError is a call's error as both runners write it: whether the SDK
// refused it (with the ledger's code and, for a move, the rule) or found it
// did not fit the game's state.
func agreeError(err error) map[string]any {
	kind := "error"
	switch {
	case errors.Is(err, sdk.ErrRefused):
		kind = "refused"
	case errors.Is(err, sdk.ErrNotNow):
		kind = "not-now"
	case errors.Is(err, sdk.ErrBeaconNotYet):
		kind = "beacon-not-yet"
	}
	r := map[string]any{"error": kind}
	if code, ok := events.CodeOf(err); ok {
		r["code"] = string(code)
	}
	var im *rules.IllegalMoveError
	if errors.As(err, &im) {
		r["code"] = "illegal-move"
		r["rule"] = string(im.Rule)
	}
	if kind == "error" {
		r["message"] = err.Error()
	}
	return r
}

// TestNodeSDKAgreement plays every script with both SDKs, each publishing
// to the same real NATS JetStream stream, and compares what they made
// byte for byte.
func TestNodeSDKAgreement(t *testing.T) {
	node := nodeSDK(t)
	skey, signer := agreeKey(t)
	scripts := agreeScripts(t, skey)
	srv := startServer(t)
	nc := dial(t, srv, emitter)
	createStream(t, nc, 0)
	client := newClient(t, nc, sdk.Config{Emitter: emitter})

	dir := t.TempDir()
	in := filepath.Join(dir, "scripts.json")
	raw, err := json.Marshal(scripts)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join("js", "tools", "agree.mjs"), "--nats", srv.ClientURL(), in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	js, err := cmd.Output()
	if err != nil {
		t.Fatalf("node tools/agree.mjs: %v\n%s", err, stderr.String())
	}
	var nodeOut []agreeOutput
	if err := json.Unmarshal(js, &nodeOut); err != nil || len(nodeOut) != len(scripts) {
		t.Fatalf("node tools/agree.mjs gave %d outputs for %d scripts: %v", len(nodeOut), len(scripts), err)
	}

	var games, leaves, signed, calls, refusals, evidence, differ int
	schemes, variants := map[string]bool{}, map[string]bool{}
	for i, s := range scripts {
		goOut := runGoScript(t, client, signer, s)
		n := nodeOut[i]
		games++
		calls += len(goOut.Results)
		same := true
		if len(n.Leaves) != len(goOut.Leaves) || len(n.Results) != len(goOut.Results) || n.Evidence != goOut.Evidence {
			same = false
		}
		for j := range min(len(n.Leaves), len(goOut.Leaves)) {
			if n.Leaves[j] != goOut.Leaves[j] {
				same = false
				t.Errorf("%s: event %d differs:\n Go   %s\n Node %s", s.Name, j, goOut.Leaves[j], n.Leaves[j])
				break
			}
		}
		for j := range min(len(n.Results), len(goOut.Results)) {
			if !jsonEqual(n.Results[j], goOut.Results[j]) {
				same = false
				t.Errorf("%s: call %d (%s) differs:\n Go   %s\n Node %s", s.Name, j, s.Steps[j].Call, goOut.Results[j], n.Results[j])
				break
			}
		}
		if !same {
			differ++
			if len(n.Leaves) != len(goOut.Leaves) || len(n.Results) != len(goOut.Results) || n.Evidence != goOut.Evidence {
				t.Errorf("%s: Go made %d events and %d results, evidence %d bytes; Node %d, %d, %d bytes", s.Name,
					len(goOut.Leaves), len(goOut.Results), len(goOut.Evidence), len(n.Leaves), len(n.Results), len(n.Evidence))
			}
			continue
		}
		leaves += len(goOut.Leaves)
		for _, l := range goOut.Leaves {
			if strings.Contains(l, `"sig":"`) {
				signed++
			}
		}
		for _, r := range goOut.Results {
			if bytes.Contains(r, []byte(`"error"`)) {
				refusals++
			}
		}
		if goOut.Evidence != "" {
			evidence++
		}
		schemes[s.Scheme] = true
		if len(s.Steps) > 0 {
			var set struct{ Variant string }
			json.Unmarshal(s.Steps[0].Settings, &set)
			if set.Variant != "" {
				variants[set.Variant] = true
			}
		}
	}
	t.Logf("%d games from testdata, %d calls: %d events byte for byte the same (%d signed), %d refusals the same, %d evidence files the same; %d games differ; schemes %v, variants %v",
		games, calls, leaves, signed, refusals, evidence, differ, keys(schemes), keys(variants))
	if len(schemes) != 3 || len(variants) != 5 {
		t.Errorf("the scripts cover schemes %v and variants %v, want all 3 and all 5", keys(schemes), keys(variants))
	}
	if refusals == 0 || evidence == 0 || signed == 0 {
		t.Errorf("%d refusals, %d evidence files, %d signed events compared: the test compares nothing", refusals, evidence, signed)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// nodeSDK returns the path of node, or skips (fails under CI) when node or
// the Node SDK's dependencies are missing.
func nodeSDK(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join("js", "node_modules", "@nats-io", "jetstream", "package.json"))
	}
	if err == nil {
		_, err = os.Stat(filepath.Join("..", "verifier", "js", "node_modules", "@noble", "curves", "package.json"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node or the Node SDK's dependencies are missing (.ci/deps installs them): %v", err)
		}
		t.Skipf("node or the Node SDK's dependencies are missing (run .ci/deps): %v", err)
	}
	return node
}

// TestNodeSDKPackage runs the Node SDK's own tests (node --test): its wire
// messages, signer keys, receipts, the roll check, and whole games of a
// device backend that zarlog-verify accepts; and its layers.
func TestNodeSDKPackage(t *testing.T) {
	node := nodeSDK(t)
	cmd := exec.Command(node, "--test", "test/")
	cmd.Dir = "js"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("# fail 0")) || bytes.Contains(out, []byte("# pass 0")) {
		t.Fatalf("node --test ran no test or failed:\n%s", out)
	}
}
