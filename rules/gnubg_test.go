package rules

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// This file drives GNU Backgammon (Debian package gnubg) through its text
// interface as an independent oracle for the backgammon move generator:
//
//	gnubg -t -q            # tty mode, quiet; commands on stdin
//	set player 0 human     # nobody plays automatically
//	set player 1 human
//	new game
//	set evaluation chequerplay evaluation plies 0
//	set board <position ID>   # from the side on roll
//	set dice <a> <b>
//	hint 10000             # every legal play, one per resulting position
//
// "hint" lists every legal play (gnubg generates them all and evaluates each
// at 0 ply), or says "There are no legal moves."

// gnubgPath returns the gnubg binary, or "" if it is not installed.
func gnubgPath() string {
	if p, err := exec.LookPath("gnubg"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/games/gnubg"); err == nil {
		return "/usr/games/gnubg"
	}
	return ""
}

func needGnubg(t testing.TB) string {
	t.Helper()
	p := gnubgPath()
	if p == "" {
		t.Skip("gnubg is not installed (Debian: apt-get install gnubg); skipping the differential test against GNU Backgammon")
	}
	return p
}

// gnubgID returns GNU Backgammon's position ID of p with seat on roll: for
// the side not on roll and then the side on roll (the manual says the
// reverse; gnubg 1.07 reads it this way), for each point 1..24 and the bar, as
// many 1 bits as checkers and a 0; 80 bits, least significant bit of each
// byte first, in base64 without padding.
func gnubgID(p Position, seat int) string {
	var key [10]byte
	bit := 0
	for _, s := range []int{1 - seat, seat} {
		for q := 1; q <= 25; q++ {
			for range p.n[s][q] {
				key[bit/8] |= 1 << (bit % 8)
				bit++
			}
			bit++
		}
	}
	return base64.RawStdEncoding.EncodeToString(key[:])
}

// A gnubgQuery is one position and roll to ask gnubg about.
type gnubgQuery struct {
	pos  Position
	seat int
	dice Dice
}

var gnubgMove = regexp.MustCompile(`^\s*\d+\.\s+\S+\s+\d+-ply\s+(.+?)\s+Eq\.:`)

// askGnubg returns, for each query, gnubg's list of legal plays as printed
// ("-" alone when it says there are none).
func askGnubg(t testing.TB, bin string, qs []gnubgQuery) [][]string {
	t.Helper()
	var script strings.Builder
	script.WriteString("set player 0 human\nset player 1 human\nnew game\nset evaluation chequerplay evaluation plies 0\n")
	for _, q := range qs {
		fmt.Fprintf(&script, "set board %s\nset dice %d %d\nhint 10000\n", gnubgID(q.pos, q.seat), q.dice[0], q.dice[1])
	}
	script.WriteString("exit\ny\n")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-t", "-q")
	cmd.Stdin = strings.NewReader(script.String())
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "LANG=C", "LC_ALL=C")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil && ctx.Err() != nil {
		t.Fatalf("gnubg: %v\n%s", err, tail(out.String()))
	}
	var res [][]string
	cur := -1
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "The dice have been set to"):
			res = append(res, nil)
			cur = len(res) - 1
		case cur < 0:
		case strings.Contains(line, "There are no legal moves"):
			res[cur] = append(res[cur], EmptyPlay)
		default:
			if m := gnubgMove.FindStringSubmatch(line); m != nil {
				res[cur] = append(res[cur], m[1])
			}
		}
	}
	if len(res) != len(qs) {
		t.Fatalf("gnubg answered %d of %d queries; output ends:\n%s", len(res), len(qs), tail(out.String()))
	}
	return res
}

func tail(s string) string {
	if len(s) > 3000 {
		return s[len(s)-3000:]
	}
	return s
}

// compareWithGnubg checks that gnubg's plays and ours are the same set:
// every gnubg play must be one of ours (as CanonicalPlay reads it), and the
// counts must agree.
func compareWithGnubg(t testing.TB, q gnubgQuery, theirs []string) bool {
	t.Helper()
	ours := LegalPlays(Backgammon, q.pos, q.seat, q.dice)
	want := make([]string, len(ours))
	for i, p := range ours {
		want[i] = p.String()
	}
	var got []string
	for _, s := range theirs {
		c, err := CanonicalPlay(Backgammon, q.pos, q.seat, q.dice, s)
		if err != nil {
			t.Errorf("position %s seat %d dice %s (gnubg %s): gnubg play %q is not ours: %v", q.pos, q.seat, q.dice, gnubgID(q.pos, q.seat), s, err)
			return false
		}
		got = append(got, c)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("position %s seat %d dice %s (gnubg %s):\n gnubg %d plays %q\n ours  %d plays %q", q.pos, q.seat, q.dice, gnubgID(q.pos, q.seat), len(got), got, len(want), want)
		return false
	}
	return true
}

// randomQueries plays random games of variant v (random legal plays) and
// samples positions with a fresh random roll for the side on roll.
func randomQueries(rng *rand.Rand, v Variant, n int) []gnubgQuery {
	var out []gnubgQuery
	for len(out) < n {
		p := Start(v)
		seat := rng.IntN(2)
		for ply := 0; ply < 500 && len(out) < n; ply++ {
			d := Dice{rng.IntN(6) + 1, rng.IntN(6) + 1}
			if rng.IntN(3) == 0 {
				out = append(out, gnubgQuery{p, seat, Dice{rng.IntN(6) + 1, rng.IntN(6) + 1}})
			}
			plays := LegalPlays(v, p, seat, d)
			np, _, err := ApplyPlay(v, p, seat, d, plays[rng.IntN(len(plays))])
			if err != nil {
				panic(err)
			}
			p = np
			if p.n[seat][Off] == NumCheckers {
				break
			}
			seat = 1 - seat
		}
	}
	return out
}

func TestGnubgDifferential(t *testing.T) {
	bin := needGnubg(t)
	n := 300
	if os.Getenv("ZARLOG_SLOW") == "1" {
		n = 5000
	}
	rng := rand.New(rand.NewPCG(8, 2026))
	qs := randomQueries(rng, Backgammon, n)
	answers := askGnubg(t, bin, qs)
	bad := 0
	for i, q := range qs {
		if !compareWithGnubg(t, q, answers[i]) {
			bad++
			if bad > 10 {
				t.Fatalf("stopping after %d disagreements", bad)
			}
		}
	}
	t.Logf("%d positions agree with gnubg", len(qs)-bad)
}
