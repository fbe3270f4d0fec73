// Package demo runs `zarlog demo`: a whole zarlog log service (package
// internal/serve: an embedded nats-server with JetStream, the Pebble ledger,
// the bundle publisher and the HTTP read API with the audit pages) in a fresh
// data directory with a fresh log key, and a bot game backend that plays
// real games of the three dice schemes of docs/SCHEMES.md through the SDK
// (package sdk) while the log grows. Every finished game's proof bundle is
// fetched over HTTP from /games/<id>/proof.json, as a player's browser
// fetches it, and verified with package verifier against the log's key,
// the bot's emitter key and the seal code the players were shown.
//
// The games: tavlarena-v1, anchored-v1 and per-roll-v1 in turn, with
// Western and Turkish (re-roll) openings, the five variants of docs/RULES.md
// with their moves logged (so that the ledger's rules engine checks every
// move) and chosen by rules.Choose, most played to the end on the board and
// some resigned, several at once.
//
// anchored-v1 needs a drand quicknet beacon of a round that did not exist
// when the game was sealed. Offline (the default) the demo replays quicknet
// round 657413 of 2023-09-15, whose real beacon the SDK holds
// (sdk.QuicknetBeacons): the ledger and the bot run on a replay clock that
// starts a minute before that round, and once the anchored games are sealed
// and their players' tokens logged it goes on at the real time, so that the
// beacon's round has passed and every game is played, and dated, now: only
// the anchored games' commits and tokens carry times of 2023. With relay
// URLs (Config.Relays) the clock is the real one and the anchored games wait
// a few seconds for live rounds.
//
// The log has two witnesses (witnesses.go): a zarlog witness in this
// process and torchwood's litewitness beside it (a second zarlog witness
// when litewitness cannot be built), with a policy that needs both; the
// log's checkpoints are cosigned every WitnessInterval (a public log's:
// once a minute), and each game is reported once its bundle is witnessed.
//
// The report is written for a person at a terminal: the service's identity
// and URLs, one entry per game, the count, and last the pages to open. Then
// the demo serves quietly until its context ends; with Config.Continuous
// the bot goes on playing (and reporting) a game every Pause.
package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
	"golang.org/x/mod/sumdb/note"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/drand"
	"github.com/zarlog/zarlog/internal/serve"
	"github.com/zarlog/zarlog/ledger/ingest"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/sdk"
	"github.com/zarlog/zarlog/verifier"
	"github.com/zarlog/zarlog/wire"
)

// Defaults of Config.
const (
	DefaultDir         = "demo-data"
	DefaultKeep        = 3
	DefaultHTTPAddr    = "localhost:8080"
	DefaultGames       = 10
	DefaultConcurrency = 4
	// Emitter is the bot backend's emitter id.
	Emitter = "demo-bot"
	// RelayRounds is how many rounds ahead a game anchors with live rounds
	// (Config.Relays): the players' tokens have 3 periods (9 s) to be logged.
	RelayRounds = 3
	// Pause is the pause between games once the requested games are played,
	// with Config.Continuous.
	Pause = 5 * time.Second
	// DefaultWitnessInterval is how often the demo's log has its checkpoint
	// witnessed: short, so that games are witnessed promptly (a public log
	// uses zarlog serve's default, a minute).
	DefaultWitnessInterval = 2 * time.Second
)

// RecordedRound is the quicknet round the offline demo replays: its real
// beacon is one of sdk.QuicknetBeacons.
const RecordedRound = 657413

// ReplayAnchored is how many anchored-v1 games an offline demo seals to the
// recorded round before it plays any game. All of them must be sealed
// before the replay clock reaches the round, and sealing thousands would
// hold every game back (issue: --games 100000 finished none in 45 s); the
// anchored-v1 games after these are played as the next scheme in turn.
const ReplayAnchored = 24

const timeLayout = "2006-01-02T15:04:05Z"

var quicknet = drand.Quicknet()

// Config configures a demo. Every field's zero value is documented.
type Config struct {
	// Dir is the folder in which each run makes a fresh data directory,
	// run-<UTC time>-<random>, with a fresh log key. Zero means DefaultDir.
	Dir string
	// Keep is how many run directories are kept in Dir, the newest; older
	// ones are deleted when a run starts. Zero means DefaultKeep; negative
	// keeps every one.
	Keep int
	// HTTPAddr is the HTTP listen address. Zero means DefaultHTTPAddr, or
	// a free port of localhost when that one is taken.
	HTTPAddr string
	// Games is how many games the bot plays (and the checker verifies)
	// before the demo either stops (Exit) or keeps serving. Zero means
	// DefaultGames.
	Games int
	// Concurrency is how many games are played at once. Zero means
	// DefaultConcurrency.
	Concurrency int
	// ReplayAnchored is how many anchored-v1 games an offline run seals
	// to the recorded round before play starts; zero means ReplayAnchored.
	// The anchored-v1 games after them are played as the next scheme.
	ReplayAnchored int
	// Exit stops the demo once Games games are published and checked.
	// Otherwise it keeps serving until ctx ends: quietly, the bot stopped,
	// or with Continuous the bot playing a game every Pause.
	Exit bool
	// Continuous keeps the bot playing, and the report growing, a game
	// every Pause after the Games games, until ctx ends (without Exit).
	// False: once the games are played the bot disconnects and the demo
	// only serves.
	Continuous bool
	// Relays are drand HTTP relay base URLs (v1 API) for live quicknet
	// rounds. Empty: the recorded round RecordedRound is replayed.
	Relays []string
	// WitnessInterval is how often the log has its checkpoint witnessed.
	// Zero means DefaultWitnessInterval.
	WitnessInterval time.Duration
	// Out receives the report: the service's identity and URLs, then one
	// entry per game. Nil discards it.
	Out io.Writer
	// Logger receives the service's logs. Nil discards them.
	Logger *slog.Logger
	// Now is the machine's clock. Nil means time.Now.
	Now func() time.Time
}

// A Result counts the games the demo finished and verified.
type Result struct {
	Games    int // games finished, or failed
	Verified int // games whose published bundle verified
}

// OK reports whether there were games and every one was played to its end
// and its published bundle verified.
func (r Result) OK() bool { return r.Games > 0 && r.Verified == r.Games }

// Run runs the demo until ctx ends, or with Exit until Games games are
// checked; then it stops the bot and the service and returns. It returns an
// error if the service cannot start or fails while running.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Games <= 0 {
		cfg.Games = DefaultGames
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.WitnessInterval <= 0 {
		cfg.WitnessInterval = DefaultWitnessInterval
	}
	d := &run{cfg: cfg}
	if len(cfg.Relays) > 0 {
		relay, err := sdk.NewRelay(sdk.RelayConfig{URLs: cfg.Relays})
		if err != nil {
			return Result{}, fmt.Errorf("drand relay: %w", err)
		}
		d.clock, d.beacons = realClock{now: cfg.Now}, relay
	} else {
		d.replay = true
		d.clock = newReplayClock(cfg.Now, replayStart())
		d.beacons = sdk.QuicknetBeacons()
	}
	return d.run(ctx)
}

// replayStart is when the replay clock starts: a minute (the SDK's
// default anchor distance) before the recorded round.
func replayStart() time.Time {
	return quicknet.RoundTime(RecordedRound - sdk.DefaultAnchorRounds).Add(time.Second)
}

// A run is one demo.
type run struct {
	cfg     Config
	clock   clock
	beacons sdk.BeaconSource
	replay  bool

	mu     sync.Mutex // over out, result and player
	result Result
	player *player // a player of the first verified tavlarena-v1 game (the scheme that logs player ids)
}

func (d *run) printf(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.cfg.Out, format, args...)
}

func (d *run) run(ctx context.Context) (Result, error) {
	cfg := d.cfg
	dir, err := newRunDir(cfg.Dir, cfg.Now())
	if err != nil {
		return Result{}, err
	}
	keep := cfg.Keep
	if keep == 0 {
		keep = DefaultKeep
	}
	if removed, err := pruneRuns(filepath.Dir(dir), keep); err != nil {
		d.printf("could not delete old runs: %v\n", err)
	} else if removed > 0 {
		d.printf("deleted %d older run folders (keeping the newest %d: --keep)\n", removed, keep)
	}
	httpAddr, busy := cfg.HTTPAddr, false
	if httpAddr == "" {
		httpAddr, busy = freeDefault()
	}
	skey, vkey, err := merkle.GenerateKey(rand.Reader, Emitter)
	if err != nil {
		return Result{}, fmt.Errorf("emitter key: %w", err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		return Result{}, fmt.Errorf("emitter key: %w", err)
	}
	// The bot authenticates to the embedded NATS server with an nkey.
	kp, err := nkeys.CreateUser()
	if err != nil {
		return Result{}, fmt.Errorf("the bot's nkey: %w", err)
	}
	nkey, err := kp.PublicKey()
	if err != nil {
		return Result{}, fmt.Errorf("the bot's nkey: %w", err)
	}

	if cfg.WitnessInterval <= 0 {
		cfg.WitnessInterval = DefaultWitnessInterval
	}
	// The log's key, made here so that its witnesses know it before the
	// service starts.
	logSkey, logVkey, err := merkle.GenerateKey(rand.Reader, serve.DefaultOrigin)
	if err != nil {
		return Result{}, fmt.Errorf("the log key: %w", err)
	}
	keyFile := filepath.Join(dir, "log.key")
	if err := os.WriteFile(keyFile, []byte(logSkey+"\n"), 0o600); err != nil {
		return Result{}, fmt.Errorf("the log key: %w", err)
	}
	witnesses, policy, witnessNote, stopWitnesses, err := startWitnesses(context.WithoutCancel(ctx), dir, logVkey)
	if err != nil {
		return Result{}, fmt.Errorf("starting the witnesses: %w", err)
	}
	defer stopWitnesses() // after the service (deferred below, so run first)

	svcCtx, stopService := context.WithCancel(context.WithoutCancel(ctx))
	defer stopService()
	ready := make(chan serve.Info, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve.Run(svcCtx, serve.Config{
			Dir: dir, HTTPAddr: httpAddr, NATSListen: "127.0.0.1:0", AdminAddr: "127.0.0.1:0",
			NATSUsers:   []ingest.EmitterAccess{{Emitter: Emitter, NKey: nkey}},
			EmitterKeys: []string{vkey}, Now: d.clock.Now, Logger: cfg.Logger,
			WitnessPolicy: policy, WitnessInterval: cfg.WitnessInterval,
			Ready: func(i serve.Info) { ready <- i },
		})
	}()
	var info serve.Info
	select {
	case info = <-ready:
	case err := <-done:
		return Result{}, fmt.Errorf("starting the service: %w", err)
	case <-ctx.Done():
		stopService()
		<-done
		return Result{}, ctx.Err()
	}
	// A service that fails while the bot plays stops the bot too.
	playCtx, stopPlay := context.WithCancel(ctx)
	defer stopPlay()
	var serviceErr error
	stopped := make(chan struct{})
	go func() {
		serviceErr = <-done
		close(stopped)
		stopPlay()
	}()
	stop := func() error {
		stopService()
		<-stopped
		return serviceErr
	}

	d.printf("zarlog demo: a log service, and a bot backend playing %d games through the SDK\n", cfg.Games)
	d.printf("data %s (a fresh folder, with a fresh log key, every run)\n", dir)
	if busy {
		d.printf("note %s is taken: serving on a free port instead\n", DefaultHTTPAddr)
	}
	for _, line := range info.Lines() {
		if line == "key "+keyFile {
			line += " created"
		}
		if strings.HasPrefix(line, "witnessed ") {
			// Said below, with the witnesses.
			continue
		}
		d.printf("%s\n", line)
	}
	d.printf("emitter %s (the bot's event-signing key, also fresh)\n", vkey)
	for _, w := range witnesses {
		d.printf("witness %s %s (%s)\n", w.vkey, w.url, w.what)
	}
	if witnessNote != "" {
		d.printf("note %s\n", witnessNote)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(info.WitnessPolicy)), "\n") {
		d.printf("policy %s\n", line)
	}
	d.printf("witnessed %s/checkpoint.witnessed: the log has its newest checkpoint cosigned by both witnesses every %s\n"+
		"          (a public log: at most once a minute, 1,440 requests a day per witness; zarlog serve --witness-interval);\n"+
		"          each game below is checked once its proof bundle is witnessed\n", info.HTTP, cfg.WitnessInterval)
	if d.replay {
		d.printf("replay anchored-v1 games are anchored to drand quicknet round %d, published %s and recorded:\n"+
			"       the demo works offline, where no live round can be fetched, so the ledger's and the bot's\n"+
			"       clocks replay that moment: they start at %s, a minute before the round, once the log is up, and\n"+
			"       go on at the real time once the anchored games are sealed and their players' tokens logged.\n"+
			"       So those commits and tokens are dated 2023, and everything else when it happens.\n"+
			"       Give --drand-relay URL for live rounds on the real clock.\n",
			RecordedRound, quicknet.RoundTime(RecordedRound).UTC().Format(timeLayout), replayStart().UTC().Format(timeLayout))
	} else {
		d.printf("drand live quicknet rounds from %v: each anchored-v1 game waits %d rounds (%s) for its beacon\n",
			cfg.Relays, RelayRounds, RelayRounds*quicknet.Period())
	}

	err = d.play(playCtx, info, signer, vkey, nats.Nkey(nkey, kp.Sign), len(witnesses))
	if err == nil && playCtx.Err() == nil && !cfg.Exit && !cfg.Continuous {
		// The bot has played its games and disconnected: serve, quietly,
		// until Ctrl-C or a failure of the service.
		d.serving(info)
		select {
		case <-ctx.Done():
			d.printf("stopped\n")
		case <-stopped:
		}
	}
	early := false
	select {
	case <-stopped:
		early = true
	default:
	}
	if serr := stop(); serr != nil {
		err = fmt.Errorf("the service stopped: %w", serr)
	} else if early {
		err = errors.New("the service stopped while the demo ran")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.result, err
}

// play connects the bot and plays the games; with Config.Continuous (and
// not Exit) it goes on playing until ctx ends. It returns when the bot is
// done, its connection closed.
func (d *run) play(ctx context.Context, info serve.Info, signer note.Signer, vkey string, auth nats.Option, witnesses int) error {
	nc, err := sdk.Dial(info.NATS, Emitter, auth)
	if err != nil {
		return fmt.Errorf("the bot's NATS connection: %w", err)
	}
	defer nc.Close()
	logKey, err := verifier.ParseLogKey(info.VerifierKey)
	if err != nil {
		return err
	}
	// With the log's key, every receipt the bot holds (each game's commit,
	// the anchored games' tokens) is checked as a tlog-proof of its event,
	// signature included.
	client, err := sdk.New(nc, sdk.Config{Emitter: Emitter, LogKey: logKey})
	if err != nil {
		return err
	}
	defer client.Close()
	// The regulars' names are made up, and the demo's pages show them: the
	// bot publishes them (docs/PRIVACY.md).
	backend, err := sdk.NewBackend(client, sdk.GameConfig{Signer: signer, Now: d.clock.Now, PublishSeatNames: true})
	if err != nil {
		return err
	}
	ann := &announcements{}
	sub, err := nc.Subscribe(wire.Subjects{}.Proofs(Emitter), ann.handle)
	if err != nil {
		return fmt.Errorf("subscribing to the bundle announcements: %w", err)
	}
	defer sub.Unsubscribe()
	emitterKeys, err := verifier.ParseEmitterKeys(vkey)
	if err != nil {
		return err
	}
	policy, err := merkle.ParsePolicy(info.WitnessPolicy)
	if err != nil {
		return fmt.Errorf("the witness policy: %w", err)
	}
	bt := &bot{b: backend, beacons: d.beacons, clock: d.clock}
	ck := &checker{base: info.HTTP, hc: &http.Client{Timeout: 30 * time.Second}, ann: ann, witnesses: witnesses,
		options: verifier.Options{LogKey: logKey, EmitterKeys: emitterKeys, WitnessPolicy: policy}}

	// Offline, every anchored game is sealed before the replay clock
	// reaches the recorded round; then the clock goes on at the real time.
	sealed := map[int]*sdk.AnchoredGame{}
	sealErr := map[int]error{}
	rc, _ := d.clock.(*replayClock)
	if rc != nil {
		// Held while the demo set up: it runs from here, a minute before
		// the round.
		rc.Start()
	}
	if rc != nil && d.replay {
		var nos []int
		limit := d.cfg.ReplayAnchored
		if limit <= 0 {
			limit = ReplayAnchored
		}
		for no := 1; no <= d.cfg.Games && len(nos) < limit; no++ {
			if planOf(no).scheme == events.Anchored {
				nos = append(nos, no)
			}
		}
		if n := d.anchoredPlanned(); n > len(nos) {
			d.printf("replay the first %d anchored-v1 games are sealed to the recorded round before play starts; the other %d\n"+
				"       are played as the next scheme in turn, since the round has passed on the replay clock\n", len(nos), n-len(nos))
		}
		var mu sync.Mutex
		each(ctx, nos, max(d.cfg.Concurrency, 16), func(no int) {
			g, err := bt.seal(ctx, no, planOf(no), RecordedRound)
			mu.Lock()
			defer mu.Unlock()
			sealed[no], sealErr[no] = g, err
		})
		rc.Resume()
	}
	nos := make([]int, d.cfg.Games)
	for i := range nos {
		nos[i] = i + 1
	}
	each(ctx, nos, d.cfg.Concurrency, func(no int) {
		p := planOf(no)
		if d.replay && p.scheme == events.Anchored && sealed[no] == nil && sealErr[no] == nil {
			p = planOf(no + 1) // not sealed before the round: the next scheme
		}
		d.game(ctx, bt, ck, no, p, sealed[no], sealErr[no])
	})
	if err := ctx.Err(); err != nil {
		d.count()
		return nil
	}
	d.count()
	if d.cfg.Exit || !d.cfg.Continuous {
		return nil
	}
	d.serving(info)
	d.printf("continuous the bot goes on playing a game every %s", Pause)
	if d.replay {
		d.printf(" (tavlarena-v1 and per-roll-v1: the recorded drand round has passed)")
	}
	d.printf("\n")
	for no, k := d.cfg.Games+1, d.cfg.Games+1; ; no, k = no+1, k+1 {
		p := planOf(k)
		if d.replay && p.scheme == events.Anchored {
			k++ // the recorded round has passed
			p = planOf(k)
		}
		d.game(ctx, bt, ck, no, p, nil, nil)
		t := time.NewTimer(Pause)
		select {
		case <-ctx.Done():
			t.Stop()
			d.printf("stopped\n")
			return nil
		case <-t.C:
		}
	}
}

func planOf(no int) plan { return plans[(no-1)%len(plans)] }

// anchoredPlanned counts the anchored-v1 games among the games asked for.
func (d *run) anchoredPlanned() int {
	n := 0
	for no := 1; no <= d.cfg.Games; no++ {
		if planOf(no).scheme == events.Anchored {
			n++
		}
	}
	return n
}

// game plays game no after plan p and checks its bundle, and prints both.
func (d *run) game(ctx context.Context, bt *bot, ck *checker, no int, p plan, sealed *sdk.AnchoredGame, sealErr error) {
	var g *played
	err := sealErr
	if err == nil {
		switch p.scheme {
		case events.Tavlarena:
			g, err = bt.tavlarena(ctx, no, p)
		case events.Anchored:
			if sealed == nil {
				sealed, err = bt.seal(ctx, no, p, quicknet.RoundAt(bt.clock.Now())+RelayRounds)
			}
			if err == nil {
				g, err = bt.anchored(ctx, no, p, sealed)
			}
		case events.PerRoll:
			g, err = bt.perRoll(ctx, no, p)
		}
	}
	if ctx.Err() != nil {
		return // stopped: not a failure of the game
	}
	if err != nil {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.result.Games++
		id := "-"
		if g != nil {
			id = g.id
		}
		fmt.Fprintf(d.cfg.Out, "game %-3d %s: FAILED (game %s): %s\n", no, p.describe(), id, err.Error())
		return
	}
	v := ck.check(ctx, g)
	if ctx.Err() != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.result.Games++
	if v.ok {
		d.result.Verified++
		if d.player == nil && p.scheme == events.Tavlarena {
			first := seatsOf(no)[0]
			d.player = &first
		}
	}
	fmt.Fprintf(d.cfg.Out, "game %-3d %s: %d rolls (%d doubles), %s\n", no, p.describe(), g.rolls, g.doubles, result(g.end, seatsOf(no)))
	fmt.Fprintf(d.cfg.Out, "         seal %s  audit %s/games/%s\n", g.seal, ck.base, g.id)
	fmt.Fprintf(d.cfg.Out, "         %s\n", v.summary())
	if !v.ok && v.report != nil {
		fmt.Fprintf(d.cfg.Out, "%s\n", v.report.Text(verifier.English))
	}
}

// count prints how many games were verified.
func (d *run) count() {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.cfg.Out, "%d of %d games verified\n", d.result.Verified, d.result.Games)
}

// serving prints, last, where to look while the demo serves.
func (d *run) serving(info serve.Info) {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.cfg.Out
	fmt.Fprintf(w, "open %s/ and type a seal code from above, or open a game's audit page above\n", info.HTTP)
	if p := d.player; p != nil {
		fmt.Fprintf(w, "player %s/players/%s/%s (%s's page; every player's name on a game page links to theirs)\n", info.HTTP, Emitter, p.id, p.name)
	}
	fmt.Fprintf(w, "stats %s/stats\n", info.HTTP)
	fmt.Fprintf(w, "auditor %s/auditor.html\n", info.HTTP)
	fmt.Fprintf(w, "vkey %s\n", info.VerifierKey)
	fmt.Fprintf(w, "serving until Ctrl-C\n")
}

// result says how a game ended.
func result(e events.End, seats [2]player) string {
	pts := func(n uint32) string {
		if n == 1 {
			return "1 point"
		}
		return fmt.Sprintf("%d points", n)
	}
	switch {
	case e.Result == events.Finished && e.Winner == events.NoWinner:
		return "finished: a draw"
	case e.Result == events.Finished:
		return fmt.Sprintf("finished: %s wins %s", seats[e.Winner].name, pts(e.Points))
	case e.Result == events.Resigned:
		return fmt.Sprintf("%s resigned: %s wins %s", seats[1-e.Winner].name, seats[e.Winner].name, pts(e.Points))
	}
	return string(e.Result)
}

// each calls f for every element of nos, n at a time, until ctx ends.
func each(ctx context.Context, nos []int, n int, f func(no int)) {
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(n, len(nos)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for no := range work {
				f(no)
			}
		}()
	}
	sort.Ints(nos)
feed:
	for _, no := range nos {
		select {
		case work <- no:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
}

// newRunDir makes a fresh data directory under parent.
func newRunDir(parent string, now time.Time) (string, error) {
	if parent == "" {
		parent = DefaultDir
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", fmt.Errorf("data folder: %w", err)
	}
	r := random32()
	dir := filepath.Join(parent, "run-"+now.UTC().Format("20060102T150405Z")+"-"+hex.EncodeToString(r[:2]))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("data folder: %w", err)
	}
	return dir, nil
}

// pruneRuns deletes the run directories of parent beyond the newest keep
// (their names sort by start time) and returns how many it deleted. A
// negative keep deletes none.
func pruneRuns(parent string, keep int) (int, error) {
	if keep < 0 {
		return 0, nil
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return 0, err
	}
	var runs []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "run-") {
			runs = append(runs, e.Name())
		}
	}
	sort.Strings(runs)
	n := 0
	for _, r := range runs[:max(0, len(runs)-keep)] {
		if err := os.RemoveAll(filepath.Join(parent, r)); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// freeDefault returns DefaultHTTPAddr if it can be listened on, and a
// free port of localhost otherwise (busy).
func freeDefault() (addr string, busy bool) {
	ln, err := net.Listen("tcp", DefaultHTTPAddr)
	if err != nil {
		return "localhost:0", true
	}
	ln.Close()
	return DefaultHTTPAddr, false
}
