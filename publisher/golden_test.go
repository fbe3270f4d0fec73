package publisher

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// golden compares got with the file testdata/golden/name, or rewrites the
// file when ZARLOG_UPDATE_GOLDEN=1.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if os.Getenv("ZARLOG_UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (ZARLOG_UPDATE_GOLDEN=1 go test ./publisher -run Golden writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its golden file (ZARLOG_UPDATE_GOLDEN=1 rewrites it; review the diff)", name)
	}
}

// TestBadgeGolden pins the tile badge of the worked example's commitment
// (docs/SCHEMES.md §2) and of two other values.
func TestBadgeGolden(t *testing.T) {
	for name, h := range map[string]string{
		"worked-example": "2b2432fd9fb286c84f19b35297ab6ff81a51fbd05295b96a66ff46e7c27bc0cf",
		"zeros":          strings.Repeat("00", 32),
		"ones":           strings.Repeat("ff", 32),
	} {
		var c [32]byte
		if _, err := hex.Decode(c[:], []byte(h)); err != nil {
			t.Fatal(err)
		}
		golden(t, "badge-"+name+".svg", []byte(Badge(c)+"\n"))
	}
}

// TestBadgeSymmetry checks the derivation: the cell pattern has the eight
// symmetries of the square, the three colours differ, and the badge of a
// commitment changes when any of the bytes it reads changes.
func TestBadgeSymmetry(t *testing.T) {
	seen := map[int]bool{}
	for x := range 8 {
		for y := range 8 {
			k := badgeOctant(x, y)
			seen[k] = true
			for _, s := range [][2]int{{7 - x, y}, {x, 7 - y}, {y, x}, {7 - y, 7 - x}} {
				if badgeOctant(s[0], s[1]) != k {
					t.Errorf("cell (%d,%d) is octant %d, its mirror (%d,%d) %d", x, y, k, s[0], s[1], badgeOctant(s[0], s[1]))
				}
			}
		}
	}
	if len(seen) != 10 {
		t.Errorf("%d octant cells, want 10", len(seen))
	}
	for i := range 256 {
		c := sha256.Sum256([]byte(fmt.Sprint(i)))
		p, s, a := badgeColours(c)
		if p == s || p == a || s == a {
			t.Fatalf("commitment %x: colours %d %d %d are not distinct", c, p, s, a)
		}
		base := Badge(c)
		// Every octant cell's shape shows: change the shape bits of each.
		for k := range 10 {
			d := c
			bit := 31 - 3*k // the high shape bit of cell k in c[3..6]
			d[3+(31-bit)/8] ^= 1 << (bit % 8)
			if Badge(d) == base {
				t.Errorf("commitment %x: changing the shape of cell %d leaves the badge unchanged", c, k)
			}
		}
		// The colours and the rosette show.
		for _, d := range [][32]byte{withByte(c, 0, c[0]+1), withByte(c, 7, c[7]^1)} {
			if Badge(d) == base {
				t.Errorf("commitment %x: changing the colour or rosette byte leaves the badge unchanged", c)
			}
		}
	}
	if !regexp.MustCompile(`^<svg [^>]*viewBox="0 0 64 64"`).MatchString(Badge([32]byte{})) {
		t.Error("the badge is not a 64-unit SVG")
	}
}

// TestGamePageGolden pins the HTML of a finished game's page (a stable
// game of the fixture, built from fixed keys and labels) in each language.
func TestGamePageGolden(t *testing.T) {
	f := testFixture(t)
	srv := newTestPages(t, f, nil)
	for _, l := range []string{"en", "tr", "ar"} {
		resp, body := get(t, srv.URL+"/games/"+f.ids["tavlarena-v1"]+"?lang="+l)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", l, resp.StatusCode)
		}
		golden(t, "game-tavlarena."+l+".html", []byte(body))
	}
	_, body := get(t, srv.URL+"/games/"+f.inPlay)
	golden(t, "game-in-play.en.html", []byte(body))
}

func withByte(c [32]byte, i int, b byte) [32]byte {
	c[i] = b
	return c
}
