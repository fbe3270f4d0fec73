package publisher

// This file holds the small statistics behind the pages' plain words: the
// Wilson score interval of a rate, the range fair dice give a count of
// chances, and the rule that decides when a sample is too small to say
// anything. A page prints a verdict only from these.

import "math"

// z95 and z80 are the two-sided 95% and 80% normal quantiles: fair dice
// put a number within z95 standard deviations of what they give on average
// 95% of the time, within z80 80% of the time.
const (
	z95 = 1.959963984540054
	z80 = 1.2815515655446004
)

// Wilson returns the 95% Wilson score interval of a rate of k in n (0, 1
// for n = 0). It stays inside [0, 1] and is honest for small n and rates
// near 0, where the plain normal interval is not.
func Wilson(k, n uint64) (lo, hi float64) { return wilsonAt(k, n, z95) }

// wilsonAt returns the Wilson score interval of k in n for the normal
// quantile z: the rates p for which |k − np| ≤ z·√(np(1−p)).
func wilsonAt(k, n uint64, z float64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	nf, p := float64(n), float64(k)/float64(n)
	z2 := z * z
	den := 1 + z2/nf
	mid := (p + z2/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	return math.Max(0, mid-half), math.Min(1, mid+half)
}

// A Verdict is what a page says of one number against fair dice: where
// the number sits in the range fair dice give it (docs/PAGES.md §8).
type Verdict int

// Verdicts, by the number's score z: how many standard deviations it is
// from what fair dice give on average (RateScore, NeedScore).
const (
	// TooFew: too few rolls to tell either way.
	TooFew Verdict = iota
	// Within: well within what fair dice do, |z| ≤ z80: in the middle of
	// the range, where fair dice put a number 80% of the time.
	Within
	// EdgeHigh, EdgeLow: at the edge, z80 < |z| ≤ z95: inside the range
	// fair dice give 95% of the time but outside its middle 80%, above or
	// below. Fair dice put a number there 15% of the time.
	EdgeHigh
	EdgeLow
	// High, Low: outside, |z| > z95: above or below the range fair dice
	// give 95% of the time. Fair dice do this 1 time in 20 for each number
	// shown, so one such number among many is expected.
	High
	Low
)

// String returns the verdict's name: toofew, within, edge-high, edge-low,
// high or low (the CSS class of the player page's cells).
func (v Verdict) String() string {
	switch v {
	case Within:
		return "within"
	case EdgeHigh:
		return "edge-high"
	case EdgeLow:
		return "edge-low"
	case High:
		return "high"
	case Low:
		return "low"
	}
	return "toofew"
}

// MinRolls is the fewest rolls (or chances) a rate is judged on. Below it
// a page says the sample is too small; above it the intervals' coverage
// is close to the 95% they claim (TestIntervalCoverage).
const MinRolls = 30

// RateScore returns the score of k in n against the fair rate p: (k − np)
// / √(np(1−p)). |RateScore| ≤ z exactly when p is inside the Wilson
// interval of k in n at z, so the verdict is where the fair rate sits in
// the observed rate's interval, and the 95% interval a page prints holds
// the fair rate exactly when the verdict is not High or Low.
func RateScore(k, n uint64, p float64) float64 {
	return (float64(k) - float64(n)*p) / math.Sqrt(float64(n)*p*(1-p))
}

// RateVerdict judges k in n against the fair rate p (0 < p < 1).
func RateVerdict(k, n uint64, p float64) Verdict {
	if n < MinRolls {
		return TooFew
	}
	return verdictOf(RateScore(k, n, p))
}

// verdictOf places a score: well within, at the edge, or outside.
func verdictOf(z float64) Verdict {
	switch {
	case z > z95:
		return High
	case z < -z95:
		return Low
	case z > z80:
		return EdgeHigh
	case z < -z80:
		return EdgeLow
	}
	return Within
}

// NeedRange returns the range that fair dice give the number of turns whose
// roll could do what a Need names, 95% of the time, by the normal
// approximation of the Poisson binomial: Expected ± 1.96 √Variance.
func NeedRange(c NeedCount) (lo, hi float64) {
	sd := math.Sqrt(c.Variance)
	return math.Max(0, c.Expected-z95*sd), math.Min(float64(c.Turns), c.Expected+z95*sd)
}

// NeedScore returns the score of a NeedCount: (Came − Expected) /
// √Variance.
func NeedScore(c NeedCount) float64 {
	return (float64(c.Came) - c.Expected) / math.Sqrt(c.Variance)
}

// NeedVerdict judges a NeedCount against fair dice.
func NeedVerdict(c NeedCount) Verdict {
	if c.Turns < MinRolls || c.Variance < 5 {
		return TooFew
	}
	return verdictOf(NeedScore(c))
}

// MinExpected is the smallest count per cell that fair dice must be
// expected to give before a chi-square p-value is printed: the usual rule
// of thumb, below which the test's distribution is not the chi-square's.
const MinExpected = 5

// ChiSquareOK reports whether n observations over cells equally likely
// cells are enough for a chi-square test (n/cells ≥ MinExpected).
func ChiSquareOK(n uint64, cells int) bool { return n >= uint64(MinExpected*cells) }
