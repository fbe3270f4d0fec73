package publisher

// This file holds the small statistics behind the pages' plain words: the
// Wilson score interval of a rate, the range fair dice give a count of
// chances, and the rule that decides when a sample is too small to say
// anything. A page prints a verdict only from these.

import "math"

// z95 is the two-sided 95% normal quantile.
const z95 = 1.959963984540054

// Wilson returns the 95% Wilson score interval of a rate of k in n (0, 1
// for n = 0). It stays inside [0, 1] and is honest for small n and rates
// near 0, where the plain normal interval is not.
func Wilson(k, n uint64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	nf, p := float64(n), float64(k)/float64(n)
	z2 := z95 * z95
	den := 1 + z2/nf
	mid := (p + z2/(2*nf)) / den
	half := z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	return math.Max(0, mid-half), math.Min(1, mid+half)
}

// A Verdict is what a page says of one number against fair dice.
type Verdict int

// Verdicts.
const (
	// TooFew: too few rolls to tell either way.
	TooFew Verdict = iota
	// Within: within the range fair dice give 95% of the time.
	Within
	// High, Low: above or below that range. Fair dice do this 1 time in
	// 20 for each number shown, so one such number among many is
	// expected.
	High
	Low
)

// MinRolls is the fewest rolls (or chances) a rate is judged on. Below it
// a page says the sample is too small; above it the intervals' coverage
// is close to the 95% they claim (TestIntervalCoverage).
const MinRolls = 30

// RateVerdict judges k in n against the fair rate p by the Wilson
// interval.
func RateVerdict(k, n uint64, p float64) Verdict {
	if n < MinRolls {
		return TooFew
	}
	lo, hi := Wilson(k, n)
	switch {
	case p < lo:
		return High
	case p > hi:
		return Low
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

// NeedVerdict judges a NeedCount against fair dice.
func NeedVerdict(c NeedCount) Verdict {
	if c.Turns < MinRolls || c.Variance < 5 {
		return TooFew
	}
	lo, hi := NeedRange(c)
	switch {
	case float64(c.Came) > hi:
		return High
	case float64(c.Came) < lo:
		return Low
	}
	return Within
}

// MinExpected is the smallest count per cell that fair dice must be
// expected to give before a chi-square p-value is printed: the usual rule
// of thumb, below which the test's distribution is not the chi-square's.
const MinExpected = 5

// ChiSquareOK reports whether n observations over cells equally likely
// cells are enough for a chi-square test (n/cells ≥ MinExpected).
func ChiSquareOK(n uint64, cells int) bool { return n >= uint64(MinExpected*cells) }
