package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/zarlog/zarlog/bucket"
	"github.com/zarlog/zarlog/follow"
	"github.com/zarlog/zarlog/internal/bench"
	"github.com/zarlog/zarlog/internal/workload"
)

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("zarlog bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: zarlog bench [--events N] [--emitters N] [--games N] [--mix NAME] [--rate N] [--bundles N] [--checks production|structural] [--pace saturated|human] [--human-games N] [--human-duration D] [--human-rolls N] [--human-sdk-linger D] [--human-beacon-games-per-round N] [--sdk-partial-flights N] [--human-cpuprofile FILE] [--human-memprofile FILE] [--tessera] [--storage s3://BUCKET[/PREFIX]] [--follow=false] [--json] [--dir DIR] [--cpuprofile FILE] [--memprofile FILE]")
		fmt.Fprintln(stderr, "\nMeasure zarlog on this machine: events end to end (SDK → embedded NATS JetStream → ingest → ledger →")
		fmt.Fprintln(stderr, "signed checkpoint), publish→checkpoint latency, the ledger's bytes on disk per event, and the proof")
		fmt.Fprintln(stderr, "bundles' size and verify time per game; with --tessera, the ledger alone and Tessera's POSIX log on")
		fmt.Fprintln(stderr, "the same events. The ledger checks what `zarlog serve` checks (--checks production: the rules engine")
		fmt.Fprintln(stderr, "checks every move, anchored games carry real drand beacons whose BLS signatures are checked), or")
		fmt.Fprintln(stderr, "what the benchmarks checked until issue 31 (--checks structural). With --pace human, also games at a")
		fmt.Fprintln(stderr, "human pace in the same run: --human-games in play at once, each sending its next event 2-10 s after")
		fmt.Fprintln(stderr, "the previous one's receipt, with CPU per event, publish→receipt latency, RSS and batching beside the")
		fmt.Fprintln(stderr, "saturated run's. A progress bar on standard error when it is a terminal.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	var (
		cfg          bench.Config
		asJSON       bool
		cpuProfile   string
		memProfile   string
		humanProfile string
		humanHeap    string
	)
	fs.IntVar(&cfg.Events, "events", bench.DefaultEvents, "the number of events")
	fs.IntVar(&cfg.Emitters, "emitters", bench.DefaultEmitters, "the number of emitters (game backends), each with its own NATS connection")
	fs.IntVar(&cfg.Games, "games", bench.DefaultGames, "the number of games in play at once")
	fs.StringVar(&cfg.Mix, "mix", "mixed", "the schemes of the games: "+strings.Join(workload.MixNames(), ", "))
	fs.IntVar(&cfg.Rate, "rate", 0, "the offered load in events/s (0: as fast as the emitters can publish)")
	fs.IntVar(&cfg.Bundles, "bundles", bench.DefaultBundles, "how many games' bundles are built and verified per scheme")
	fs.StringVar(&cfg.Checks, "checks", bench.ChecksProduction, "what the ledger checks: production (as zarlog serve: the rules engine, real BLS-checked beacons) or structural (moves checked structurally, a fake drand chain)")
	fs.IntVar(&cfg.BeaconGamesPerRound, "beacon-games-per-round", workload.DefaultBeaconGamesPerRound, "--checks production: how many anchored-v1 games share a drand round (one BLS check per round with the ledger's beacon cache)")
	fs.Int64Var(&cfg.GameCacheBytes, "game-cache-bytes", 0, "the bytes of open games' states the ledger keeps decoded in memory, as zarlog serve --game-cache-bytes (0: the ledger's default, as zarlog serve)")
	fs.IntVar(&cfg.BeaconCache, "beacon-cache", 0, "the ledger's verified-beacon cache, in beacons (0: the ledger's default, as zarlog serve; -1: none, a BLS check per anchored-v1 game)")
	fs.StringVar(&cfg.Pace, "pace", bench.PaceSaturated, "saturated (as fast as the emitters can, then at half that rate), or human (those, then games at a human pace)")
	fs.IntVar(&cfg.Human.Games, "human-games", bench.DefaultHumanGames, "--pace human: the number of games in play at once")
	fs.DurationVar(&cfg.Human.Duration, "human-duration", bench.DefaultHumanDuration, "--pace human: how long the games are played, the first `duration` (the longest gap) not measured")
	fs.IntVar(&cfg.Human.Rolls, "human-rolls", bench.DefaultHumanRolls, "--pace human: the rolls of a per-game game (a per-roll-v1 match has half as many); the default plays the saturated run's games, 8 reproduces the runs before 2026-12-04")
	fs.DurationVar(&cfg.Human.MinGap, "human-gap-min", bench.DefaultHumanMinGap, "--pace human: the shortest pause between an event's receipt and the game's next event")
	fs.DurationVar(&cfg.Human.MaxGap, "human-gap-max", bench.DefaultHumanMaxGap, "--pace human: the longest pause")
	fs.IntVar(&cfg.Human.BeaconGamesPerRound, "human-beacon-games-per-round", 0, "--pace human, --checks production: how many anchored-v1 games share a drand round (0: as many as the pace seals in one quicknet period, 3 s, since a platform's games name the first round after their sealing)")
	fs.DurationVar(&cfg.Human.SDKLinger, "human-sdk-linger", 0, "--pace human: the most the backends' SDK lets a message that is not full wait for more events, when the emitter's recent rate predicts one within a quarter of it (sdk.Config.Linger; 0: the SDK's default, 20 ms; negative: never wait)")
	fs.BoolVar(&cfg.Tessera, "tessera", false, "also measure the ledger alone and Tessera's POSIX log on the same events")
	fs.StringVar(&cfg.Storage, "storage", "", "also run end to end with the log kept in S3-compatible object storage at `s3://BUCKET[/PREFIX]`, as zarlog serve --storage\n(under PREFIX/zarlog-bench-<time>/, left there; endpoint and credentials from AWS_ENDPOINT_URL_S3 etc.)")
	fs.IntVar(&cfg.PartialFlights, "sdk-partial-flights", 0, "how many messages each SDK client lets fly while a message that is not full waits for one of them, packing what queues meanwhile (sdk.Config.PartialFlights; 0, the SDK's default: its window, 32, every message at once; 1: group commit)")
	fs.BoolVar(&cfg.EmitterRates, "emitter-rates", false, "limit each emitter of the saturated and paced passes to the ingest's default rates, as zarlog serve does (by default no emitter is limited: the bench measures the service's capacity)")
	follow := fs.Bool("follow", true, "the SDK clients follow their events, as by default (a status request every 500 ms about those not yet reported logged); false turns it off, to measure its cost")
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fs.StringVar(&cfg.Dir, "dir", "", "scratch `directory` for the logs, removed at the end (default: a temporary one)")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write the CPU profile of the end-to-end run to `file` (go tool pprof), the one the split by stage comes from")
	fs.StringVar(&memProfile, "memprofile", "", "write the allocations of the end-to-end run to `file` (go tool pprof -sample_index=alloc_objects), those its allocations per event count, and its settling's")
	fs.StringVar(&humanHeap, "human-memprofile", "", "--pace human: write the heap profile after the human pace's measured window and its settling (the memtable flushed) to `file` (go tool pprof -sample_index=inuse_space), and the allocations profile at the window's start to file.base (go tool pprof -sample_index=alloc_space -base file.base file: the window's allocations)")
	fs.StringVar(&humanProfile, "human-cpuprofile", "", "--pace human: write the CPU profile of the human pace's measured window to `file`")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	cfg.NoFollow = !*follow
	if _, err := workload.ParseMix(cfg.Mix); err != nil {
		fmt.Fprintln(stderr, "zarlog bench: --mix:", err)
		return 2
	}
	if _, err := bench.WorkloadConfig(cfg.Checks); err != nil {
		fmt.Fprintln(stderr, "zarlog bench: --checks:", err)
		return 2
	}
	if cfg.Events < 1 || cfg.Emitters < 1 || cfg.Games < 1 || cfg.Rate < 0 || cfg.Bundles < 1 {
		fmt.Fprintln(stderr, "zarlog bench: --events, --emitters, --games and --bundles must be at least 1, --rate at least 0")
		return 2
	}
	if cfg.Storage != "" {
		if _, _, err := bucket.ParseURL(cfg.Storage); err != nil {
			fmt.Fprintln(stderr, "zarlog bench: --storage:", err)
			return 2
		}
	}
	if cfg.Pace != bench.PaceSaturated && cfg.Pace != bench.PaceHuman {
		fmt.Fprintf(stderr, "zarlog bench: --pace %q: want %s or %s\n", cfg.Pace, bench.PaceSaturated, bench.PaceHuman)
		return 2
	}
	if h := cfg.Human; h.Games < 1 || h.Rolls < 1 || h.MinGap <= 0 || h.MaxGap < h.MinGap || h.Duration <= h.MaxGap || h.BeaconGamesPerRound < 0 {
		fmt.Fprintln(stderr, "zarlog bench: --human-games and --human-rolls must be at least 1, --human-gap-min above 0, --human-gap-max at least --human-gap-min, --human-duration above --human-gap-max, --human-beacon-games-per-round not negative")
		return 2
	}
	// Tessera logs through klog: its start-up lines are not the report's.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		bar := newBar(f)
		defer bar.finish()
		cfg.Progress = bar.report
	}
	var prof *os.File
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "zarlog bench: --cpuprofile:", err)
			return 2
		}
		defer f.Close()
		prof, cfg.Profile = f, f
	}
	var mprof *os.File
	if memProfile != "" {
		f, err := os.Create(memProfile)
		if err != nil {
			fmt.Fprintln(stderr, "zarlog bench: --memprofile:", err)
			return 2
		}
		defer f.Close()
		mprof, cfg.AllocProfile = f, f
	}
	var hprof *os.File
	if humanProfile != "" {
		f, err := os.Create(humanProfile)
		if err != nil {
			fmt.Fprintln(stderr, "zarlog bench: --human-cpuprofile:", err)
			return 2
		}
		defer f.Close()
		hprof, cfg.Human.Profile = f, f
	}
	var hheap, hheapBase *os.File
	if humanHeap != "" {
		f, err := os.Create(humanHeap)
		if err != nil {
			fmt.Fprintln(stderr, "zarlog bench: --human-memprofile:", err)
			return 2
		}
		defer f.Close()
		hheap, cfg.Human.HeapProfile = f, f
		fb, err := os.Create(humanHeap + ".base")
		if err != nil {
			fmt.Fprintln(stderr, "zarlog bench: --human-memprofile:", err)
			return 2
		}
		defer fb.Close()
		hheapBase, cfg.Human.HeapProfileBase = fb, fb
	}
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "zarlog bench:", err)
		return 1
	}
	if prof != nil {
		if err := prof.Close(); err != nil {
			fmt.Fprintln(stderr, "zarlog bench: --cpuprofile:", err)
			return 1
		}
		fmt.Fprintf(stderr, "zarlog bench: the CPU profile of the end-to-end run is in %s (go tool pprof %s)\n", cpuProfile, cpuProfile)
	}
	if mprof != nil {
		if err := mprof.Close(); err != nil {
			fmt.Fprintln(stderr, "zarlog bench: --memprofile:", err)
			return 1
		}
		fmt.Fprintf(stderr, "zarlog bench: the allocations of the end-to-end run are in %s (go tool pprof -sample_index=alloc_objects %s)\n", memProfile, memProfile)
	}
	if hprof != nil {
		if err := hprof.Close(); err != nil {
			fmt.Fprintln(stderr, "zarlog bench: --human-cpuprofile:", err)
			return 1
		}
		fmt.Fprintf(stderr, "zarlog bench: the CPU profile of the human pace is in %s (go tool pprof %s)\n", humanProfile, humanProfile)
	}
	if hheap != nil {
		for _, f := range []*os.File{hheap, hheapBase} {
			if err := f.Close(); err != nil {
				fmt.Fprintln(stderr, "zarlog bench: --human-memprofile:", err)
				return 1
			}
		}
		fmt.Fprintf(stderr, "zarlog bench: the heap profile of the human pace is in %s (go tool pprof -sample_index=inuse_space %s), the window's allocations against %s.base (go tool pprof -sample_index=alloc_space -base %s.base %s)\n", humanHeap, humanHeap, humanHeap, humanHeap, humanHeap)
	}
	if asJSON {
		stdout.Write(rep.JSON())
	} else {
		fmt.Fprint(stdout, rep.Text())
	}
	return 0
}

// A bar draws the run's progress on a terminal, one line redrawn in place.
type bar struct {
	w     io.Writer
	mu    sync.Mutex
	step  string
	start time.Time
	last  time.Time
}

func newBar(w io.Writer) *bar { return &bar{w: w} }

func (b *bar) report(step string, done, total int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if step != b.step {
		if b.step != "" {
			fmt.Fprintln(b.w)
		}
		b.step, b.start = step, now
	} else if done < total && now.Sub(b.last) < 100*time.Millisecond {
		return
	}
	b.last = now
	p := follow.Progress{Stored: uint64(done), Target: uint64(max(total, 1)), Elapsed: now.Sub(b.start)}
	unit := " events "
	if step == "bundles" {
		unit = " games "
	}
	fmt.Fprintf(b.w, "\r%-20s %s", step, strings.Replace(progressBar(p, 30), " leaves ", unit, 1))
}

func (b *bar) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.step != "" {
		fmt.Fprintln(b.w)
	}
}
