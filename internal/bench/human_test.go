package bench

import (
	"context"
	"math"
	mrand "math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/zarlog/zarlog/internal/workload"
	"github.com/zarlog/zarlog/sdk"
)

// TestHuman runs the human pace tiny (400 games of the saturated run's
// length, gaps of 0.2–1 s, 6 s, the SDK's default linger) and checks that
// its report has every field, with values that fit together. It asserts
// nothing about speed. (With 400 games about ten anchored-v1 games reach
// their beacon in the window.)
func TestHuman(t *testing.T) {
	m, err := Human(context.Background(), HumanConfig{Dir: t.TempDir(), Games: 400, Duration: 6 * time.Second, Warmup: 2 * time.Second,
		MinGap: 200 * time.Millisecond, MaxGap: time.Second, Emitters: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", m)
	switch {
	case m.Games != 400 || m.Emitters != 2 || m.Rolls != workload.DefaultRolls || m.MinGapMs != 200 || m.MaxGapMs != 1000 || m.SDKLingerMs != float64(sdk.DefaultLinger)/float64(time.Millisecond):
		t.Errorf("configuration %+v", m)
	case m.Preloaded <= 0:
		t.Errorf("%d events preloaded: the games should start mid-way", m.Preloaded)
	case m.MeanGameEvents < 100 || m.StartLimit <= int(m.MeanGameEvents) || m.RejectedStarts < 0:
		// 60 rolls: about 120 events a game.
		t.Errorf("games of %.1f events on average, started below event %d, %d put aside", m.MeanGameEvents, m.StartLimit, m.RejectedStarts)
	case !(0 < m.PreloadS && m.PreloadS < m.SetupS) || m.SetupCPUS <= 0:
		t.Errorf("set-up %.2f s (%.2f s of CPU), of which the preload %.2f s", m.SetupS, m.SetupCPUS, m.PreloadS)
	case m.HeldEventBytesStart <= 0 || m.HeldEventBytes >= m.HeldEventBytesStart:
		t.Errorf("the events made for the run: %d bytes at the start, %d still held at the end", m.HeldEventBytesStart, m.HeldEventBytes)
	case m.PreloadSettleS <= 0:
		t.Errorf("the preload's compactions took %v s: it was not waited for", m.PreloadSettleS)
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
	case m.BeaconGamesPerRound < 1 || m.BeaconPairings+m.BeaconCached < 1:
		t.Errorf("%d anchored-v1 games a round; %d pairing checks and %d cached answers in the window", m.BeaconGamesPerRound, m.BeaconPairings, m.BeaconCached)
	}
	checkSides(t, "human pace", m.CPUStagesMicros, m.CPUSidesMicros, true)
	if m.CPUHarnessMicros != m.CPUSidesMicros[sideHarness] {
		t.Errorf("the harness's CPU %v, its side %v", m.CPUHarnessMicros, m.CPUSidesMicros[sideHarness])
	}
	checkSettled(t, "human pace", m.CPUMicrosPerEvent, m.SettleCPUMicros, m.CPUMicrosPerEventSettled, m.SettleS)
	if runtime.GOOS == "linux" && (m.RSSBytes <= 0 || m.RSSPeakBytes < m.RSSBytes || m.RSSStartBytes <= 0 || m.RSSPeakBytes < m.RSSStartBytes) {
		t.Errorf("RSS %d, peak %d, at the start %d", m.RSSBytes, m.RSSPeakBytes, m.RSSStartBytes)
	}
	// The NATS messages by kind: every message the stream took was
	// published by an emitter, handed to the admission, acknowledged to
	// it and delivered to the ingest, about once an event per
	// EventsPerMessage (the window's edges cut a few).
	perMessage := 1 / m.EventsPerMessage
	for _, k := range []string{"pub:emitters", "sub:ingest:zarlog.events.*", "sub:ingest:admission-acks", "sub:emitters:_INBOX.x.x.*", "pub:ingest"} {
		if got := m.NATSMessages[k]; got < 0.7*perMessage {
			t.Errorf("%s: %.4f NATS messages an event, want about %.4f or more (all %v)", k, got, perMessage, m.NATSMessages)
		}
	}
	if got := m.NATSMessages["sub:ingest:zarlog.events.*"]; got > 1.3*perMessage {
		t.Errorf("the admission received %.4f messages an event, the stream %.4f", got, perMessage)
	}
	// Every event of the window is one of a game in play: at most one
	// per game per MinGap.
	if limit := float64(m.Games) * m.WindowS / 0.2; float64(m.Events) > limit {
		t.Errorf("%d events from %d games in %.1f s: more than one per game per gap", m.Events, m.Games, m.WindowS)
	}
}

// TestBeaconGamesPerPeriod: the human pace's anchored-v1 games share a
// round as a platform's games sealed within one quicknet period do: as
// many as the pace seals in three seconds, ten times as many with ten
// times the games in play, twice as many with gaps half as long, and one
// (the least) when the mix has no anchored-v1 games.
func TestBeaconGamesPerPeriod(t *testing.T) {
	wcfg, err := WorkloadConfig(ChecksProduction)
	if err != nil {
		t.Fatal(err)
	}
	wcfg.Seed, wcfg.Emitters, wcfg.Rolls = 1, 4, DefaultHumanRolls
	at := func(w workload.Config, games int, minGap, maxGap time.Duration) int {
		t.Helper()
		n, err := BeaconGamesPerPeriod(w, HumanConfig{Games: games, MinGap: minGap, MaxGap: maxGap})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	base := at(wcfg, 50_000, 2*time.Second, 10*time.Second)
	// The mixed mix: 40 % anchored-v1 games, of about 120 events 6 s
	// apart: 50,000 games in play start about 70 a second, 84 anchored
	// in three seconds.
	if base < 40 || base > 170 {
		t.Errorf("%d anchored-v1 games a round at 50,000 games in play", base)
	}
	if tenth := at(wcfg, 5_000, 2*time.Second, 10*time.Second); tenth < base/10-1 || tenth > base/10+1 {
		t.Errorf("%d games a round at 5,000 games in play, %d at 50,000", tenth, base)
	}
	if fast := at(wcfg, 50_000, time.Second, 5*time.Second); fast < 2*base-2 || fast > 2*base+2 {
		t.Errorf("%d games a round with gaps of 1-5 s, %d with 2-10 s", fast, base)
	}
	perRoll := wcfg
	perRoll.Mix, _ = workload.ParseMix("per-roll")
	if n := at(perRoll, 50_000, 2*time.Second, 10*time.Second); n != 1 {
		t.Errorf("%d games a round without anchored-v1 games, want 1", n)
	}
}

// TestHumanHeap: the schedulers' heap gives its dues back earliest first,
// pushed and popped interleaved.
func TestHumanHeap(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	var h humanHeap
	var want []int64
	for i := range 2000 {
		at := rng.Int64N(1000)
		h.push(humanDue{at: at})
		want = append(want, at)
		if i%3 == 2 { // pop one of every three
			slices.Sort(want)
			if got := h.pop().at; got != want[0] {
				t.Fatalf("pop %d: %d, want %d", i, got, want[0])
			}
			want = want[1:]
		}
	}
	slices.Sort(want)
	for _, w := range want {
		if got := h.pop().at; got != w {
			t.Fatalf("%d, want %d", got, w)
		}
	}
	if len(h) != 0 {
		t.Fatalf("%d dues left", len(h))
	}
}

// checkSettled checks a pace's settled CPU per event against its recorded
// parts: the measured time's CPU and the settling's, which took some CPU
// (the flush at least) and some time. A settled figure drawn with other boundaries than the measured
// one's end (the harness's work after the run in it, or the gap between
// the run and the settling left out) is not their sum.
func checkSettled(t *testing.T, name string, measured, settle, settled, settleS float64) {
	t.Helper()
	if settle <= 0 || settleS <= 0 || math.Abs(measured+settle-settled) > 1e-9*max(settled, 1) {
		t.Errorf("%s: %.3f µs per event measured, %.3f in the settling (%.2f s), %.3f settled: not their sum", name, measured, settle, settleS, settled)
	}
}
