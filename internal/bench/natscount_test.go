package bench

import (
	"maps"
	"testing"
)

func TestSubjectKind(t *testing.T) {
	for subject, want := range map[string]string{
		"zarlog.events.*":                      "zarlog.events.*",
		"zarlog.receipts.*":                    "zarlog.receipts.*",
		"_INBOX.ZARLOG_ADMISSION.abc123.*":     "admission-acks",
		"_INBOX.acme.Xy12Zq.*":                 "_INBOX.x.x.*",
		"_INBOX.9f8e7d":                        "_INBOX.x",
		"_INBOX.Qw3.>":                         "_INBOX.x.>",
		"$JS.API.CONSUMER.MSG.NEXT.S.zarlog-l": "$JS.API.CONSUMER.MSG.NEXT.S.zarlog-l",
	} {
		if got := subjectKind(subject); got != want {
			t.Errorf("subjectKind(%q) = %q, want %q", subject, got, want)
		}
	}
}

func TestNATSCountsPerEvent(t *testing.T) {
	c0 := natsCounts{"pub:emitters": 10, "sub:ingest:zarlog.events.*": 4, "gone": 7}
	c1 := natsCounts{"pub:emitters": 30, "sub:ingest:zarlog.events.*": 4, "new": 5}
	got := c1.perEvent(c0, 10)
	want := map[string]float64{"pub:emitters": 2, "new": 0.5}
	if !maps.Equal(got, want) {
		t.Errorf("perEvent = %v, want %v", got, want)
	}
}
