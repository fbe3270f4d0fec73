package publisher

import (
	"fmt"
	"strings"
)

// The tile badge ("çini rozeti", seed 000): a small square tile drawn from a
// commitment, so that a player who saw it before the game can recognise it
// afterwards at a glance. It is deterministic and derived only from the
// commitment's bytes c[0..31]:
//
//   - Colours: three distinct colours of the İznik palette
//     (badgePalette, six glazes) on a cream ground. The primary is
//     palette[c[0] mod 6]; the secondary the one 1 + (c[1] mod 5) places
//     after it (cyclically); the accent is the (c[2] mod 4)-th of the four
//     left, in palette order.
//   - Pattern: an 8 × 8 grid of cells, symmetric under the eight
//     symmetries of the square (the tile's group, D4). A cell (x, y) folds
//     to its quadrant cell (min(x, 7−x), min(y, 7−y)) and then to the
//     octant cell (a, b) = (min, max) of those: 10 distinct cells, taken in
//     the order (0,0) (0,1) (0,2) (0,3) (1,1) (1,2) (1,3) (2,2) (2,3) (3,3).
//     Octant cell k reads the 3 bits 3k..3k+2 of c[3..6] (most significant
//     bit of c[3] first): the two high bits are the shape (none, round,
//     diamond, square), the low bit the colour (primary, secondary).
//   - The rosette: an eight-pointed star in the accent colour at the
//     centre, its points' length 9 + (c[7] mod 4) units, and a frame in the
//     primary colour.
//
// The badge identifies the commitment to about 40 bits of pattern and
// colour, like the seal code: for people comparing what they saw, not a
// substitute for the full value. TestBadgeGolden pins the output.

// badgePalette holds the six İznik glazes the badge uses.
var badgePalette = [6]string{
	"#1d4e89", // cobalt blue
	"#178f8f", // turquoise
	"#c0392b", // coral (bole) red
	"#2e7d32", // emerald green
	"#6a3d7c", // manganese purple
	"#b7862b", // ochre
}

const (
	badgeGround  = "#f6f0e1" // the cream slip
	badgeOutline = "#1b2a41"
)

// badgeColours returns the palette indexes of the primary, secondary and
// accent colours of commitment c.
func badgeColours(c [32]byte) (int, int, int) {
	p := int(c[0] % 6)
	s := (p + 1 + int(c[1]%5)) % 6
	var rest []int
	for i := range 6 {
		if i != p && i != s {
			rest = append(rest, i)
		}
	}
	return p, s, rest[c[2]%4]
}

// badgeOctant maps a cell of the 8 × 8 grid to its octant cell number
// (0..9).
func badgeOctant(x, y int) int {
	x, y = min(x, 7-x), min(y, 7-y)
	a, b := min(x, y), max(x, y)
	// Octant cells (a, b), a ≤ b ≤ 3, in row order.
	return [4]int{0, 4, 7, 9}[a] + (b - a)
}

// badgeCell returns the shape (0..3) and colour bit of octant cell k.
func badgeCell(c [32]byte, k int) (shape, colour int) {
	bits := uint32(c[3])<<24 | uint32(c[4])<<16 | uint32(c[5])<<8 | uint32(c[6])
	v := bits >> (29 - 3*k) & 7
	return int(v >> 1), int(v & 1)
}

// Badge returns the SVG tile badge of a commitment (see the derivation
// above): a 64 × 64 unit square, drawn at 96 × 96 pixels.
func Badge(c [32]byte) string {
	p, s, a := badgeColours(c)
	var b strings.Builder
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" class="tile" width="96" height="96" viewBox="0 0 64 64" role="img">`)
	fmt.Fprintf(&b, `<rect x="1" y="1" width="62" height="62" rx="3" fill="%s" stroke="%s" stroke-width="2"/>`, badgeGround, badgePalette[p])
	for y := range 8 {
		for x := range 8 {
			shape, colour := badgeCell(c, badgeOctant(x, y))
			fill := badgePalette[p]
			if colour == 1 {
				fill = badgePalette[s]
			}
			cx, cy := 4+8*x, 4+8*y
			switch shape {
			case 1:
				fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="2.6" fill="%s"/>`, cx, cy, fill)
			case 2:
				fmt.Fprintf(&b, `<path d="M%d %dl3 3-3 3-3-3z" fill="%s"/>`, cx, cy-3, fill)
			case 3:
				fmt.Fprintf(&b, `<rect x="%d" y="%d" width="6" height="6" fill="%s"/>`, cx-3, cy-3, fill)
			}
		}
	}
	r := 9 + int(c[7]%4)
	// The eight-pointed star: two squares, one turned by 45°.
	fmt.Fprintf(&b, `<g fill="%s" stroke="%s" stroke-width="0.8">`, badgePalette[a], badgeOutline)
	h := r * 7 / 10 // half the side of a square whose corners lie at distance r
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d"/>`, 32-h, 32-h, 2*h, 2*h)
	fmt.Fprintf(&b, `<path d="M32 %dL%d 32L32 %dL%d 32z"/>`, 32-r, 32+r, 32+r, 32-r)
	b.WriteString(`</g>`)
	fmt.Fprintf(&b, `<circle cx="32" cy="32" r="3" fill="%s"/>`, badgeGround)
	b.WriteString(`</svg>`)
	return b.String()
}
