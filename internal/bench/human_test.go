package bench

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// TestHuman runs the human pace tiny (200 games, gaps of 0.2–1 s, 6 s, the
// SDK lingering 5 ms) and checks that its report has every field, with
// values that fit together. It asserts nothing about speed.
func TestHuman(t *testing.T) {
	m, err := Human(context.Background(), HumanConfig{Dir: t.TempDir(), Games: 200, Duration: 6 * time.Second, Warmup: 2 * time.Second,
		MinGap: 200 * time.Millisecond, MaxGap: time.Second, Emitters: 2, Rolls: 4, SDKLinger: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", m)
	switch {
	case m.Games != 200 || m.Emitters != 2 || m.Rolls != 4 || m.MinGapMs != 200 || m.MaxGapMs != 1000 || m.SDKLingerMs != 5:
		t.Errorf("configuration %+v", m)
	case m.Preloaded <= 0:
		t.Errorf("%d events preloaded: the games should start mid-way", m.Preloaded)
	case m.Events <= 0 || m.EventsPerSec <= 0 || m.WindowS < 3.5:
		t.Errorf("%d events, %.0f/s in a window of %.1f s", m.Events, m.EventsPerSec, m.WindowS)
	case m.CPUMicrosPerEvent <= 0:
		t.Errorf("CPU %.1f µs per event", m.CPUMicrosPerEvent)
	case m.ReceiptCount <= 0 || m.AckCount < m.ReceiptCount:
		t.Errorf("%d receipts, %d acknowledgements", m.ReceiptCount, m.AckCount)
	case !(0 < m.ReceiptP50ms && m.ReceiptP50ms <= m.ReceiptP99ms && m.ReceiptP99ms <= m.ReceiptMaxMs):
		t.Errorf("receipt latencies p50 %.1f, p99 %.1f, max %.1f ms", m.ReceiptP50ms, m.ReceiptP99ms, m.ReceiptMaxMs)
	case !(0 < m.AckP50ms && m.AckP50ms <= m.AckP99ms):
		t.Errorf("acknowledgement latencies p50 %.1f, p99 %.1f ms", m.AckP50ms, m.AckP99ms)
	case m.EventsPerAppend < 1 || m.EventsPerMessage < 1:
		t.Errorf("%.1f events per append, %.1f per message", m.EventsPerAppend, m.EventsPerMessage)
	case m.MeanBytes < 100 || m.SignedShare <= 0 || m.SignedShare >= 1:
		t.Errorf("events of %.0f bytes, %.2f signed", m.MeanBytes, m.SignedShare)
	case m.IdleGames != 0:
		t.Errorf("%d games ran out of events", m.IdleGames)
	case m.Receipts == "":
		t.Error("no description of the receipts waited for")
	}
	if runtime.GOOS == "linux" && (m.RSSBytes <= 0 || m.RSSPeakBytes < m.RSSBytes) {
		t.Errorf("RSS %d, peak %d", m.RSSBytes, m.RSSPeakBytes)
	}
	// Every event of the window is one of a game in play: at most one
	// per game per MinGap.
	if limit := float64(m.Games) * m.WindowS / 0.2; float64(m.Events) > limit {
		t.Errorf("%d events from %d games in %.1f s: more than one per game per gap", m.Events, m.Games, m.WindowS)
	}
}
