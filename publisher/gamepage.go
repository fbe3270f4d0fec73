package publisher

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/verifier"
)

// gameView is what game.tmpl draws.
type gameView struct {
	base
	ID       string
	Status   GameStatus
	Scheme   string
	Opponent string
	// What the game is, in player words.
	Heading      string        // "A game of tavla"
	When         string        // when it was played: its first event's time to its end's, the platform's clock
	Started      string        // its first event's time, RFC 3339, for auditors
	Ended        string        // its end's, "" without one
	Players      template.HTML // "Ayşe against Mehmet", each a link to their page where seat ids are logged
	Seats        GameSummary   // what playersHTML needs: the platform, the seat ids and names
	hidden       *HiddenNames  // the names the pages do not show
	Result       string        // how it ended
	Names        [2]string
	Seal         string        // the seal code; "" for per-roll-v1
	Commitment   string        // the commitment (tavlarena-v1) or fingerprint (anchored-v1), hex
	CommitLabel  string        // text key naming it
	Badge        template.HTML // the tile badge of the commitment (SVG)
	PerGame      bool
	Rolls        []rollRow
	PerRolls     []perRollRow
	EventsLogged int
	// The statement of what the proof shows, from package verifier.
	Proves, NotProves []string
	ProvesHead        string
	NotProvesHead     string
	FailNote          string
	Failed            []failedCheck // the checks that failed, when one did
	StatementNote     string        // text key: which keys the statement was made with
	Python            string

	LogKeyOrPlaceholder string
	EmitterKeys         string // JSON array of the emitters' vkeys, for the browser
}

// A failedCheck is a check that failed, as the statement lists it: its
// title in the page's language and its name, an identifier.
type failedCheck struct{ Title, Name string }

type rollRow struct {
	Index   int
	N       uint32
	Number  uint32 // N + 1: "roll 1" is the first, as players count
	Kind    string
	Dice    string
	DiceSVG template.HTML
	Player  string
}

type perRollRow struct {
	Index                                  int
	Number                                 int
	RollID, Commitment, Seal, Seed, Second string
	SecondFrom, Dice                       string
	DiceSVG                                template.HTML
	Counter                                string
}

func (p *Pages) gamePage(w http.ResponseWriter, r *http.Request) {
	l := Negotiate(r.URL.Query().Get("lang"), r.Header.Get("Accept-Language"))
	id, g, ok := p.game(w, r, l)
	if !ok {
		return
	}
	v := &gameView{hidden: p.cfg.HiddenNames, base: p.base(r, l, "GameTitle"), ID: id, Status: g.Status, LogKeyOrPlaceholder: p.cfg.LogKey, EmitterKeys: "[]"}
	if keys := p.emitterKeys(); len(keys) > 0 {
		b, _ := json.Marshal(keys) // strings: cannot fail
		v.EmitterKeys = string(b)
	}
	if v.LogKeyOrPlaceholder == "" {
		v.LogKeyOrPlaceholder = "VKEY"
	}
	var err error
	if g.Status == GameFinished {
		err = p.finishedView(v, g.Bundle, l)
	} else {
		err = inPlayView(v, g.Events, l)
	}
	if err != nil {
		p.log.Error("pages: the game cannot be shown", "game", id, "err", err)
		http.Error(w, "the record of this game cannot be read", http.StatusInternalServerError)
		return
	}
	v.Seats.Names = v.Names
	v.Players = playersHTML(l, v.Seats)
	v.Title = text(l, "GameTitleOf", v.Heading, v.When)
	p.render(w, http.StatusOK, "game.tmpl", v)
}

// describe fills the player-words header of v from the game's settings
// and the times of its first event and of its end (zero without one).
func (v *gameView) describe(l verifier.Lang, settings []byte, started, ended time.Time) {
	variant := ""
	if s, err := events.ParseSettings(settings); err == nil && settings != nil {
		variant = s.Variant
	}
	v.Heading = text(l, "GameHeading", variantName(l, variant))
	v.When = playedText(l, started, ended)
	if !started.IsZero() {
		v.Started = started.UTC().Format(time.RFC3339)
	}
	if !ended.IsZero() {
		v.Ended = ended.UTC().Format(time.RFC3339)
	}
	v.Names = seatNames(settings)
}

// hideNames blanks the names of v's seats that the pages do not show.
func (v *gameView) hideNames() {
	v.Seats.Names = v.Names
	v.Names = v.hidden.shown(v.Seats)
}

// finishedView fills v from a game's proof bundle.
func (p *Pages) finishedView(v *gameView, bundle []byte, l verifier.Lang) error {
	ev, err := verifier.Parse(bundle)
	if err != nil {
		return fmt.Errorf("the proof bundle does not parse: %w", err)
	}
	v.Scheme = ev.Scheme
	if ev.Opponent == verifier.OpponentComputer {
		v.Opponent = text(l, "AgainstComputer")
	}
	sum, err := summarize(v.ID, ev) // the bundle is parsed once
	if err != nil {
		return err
	}
	v.describe(l, ev.Settings, sum.Started, sum.Ended)
	v.Seats = sum
	v.hideNames()
	v.Result = resultText(l, sum.End, v.Names)
	switch {
	case ev.Tavlarena != nil:
		t := ev.Tavlarena
		v.setSeal(t.Commitment, "Commitment")
		v.setRolls(ev.Opening, t.Rolls, l)
	case ev.Anchored != nil:
		a := ev.Anchored
		v.setSeal(a.Fingerprint, "Fingerprint")
		v.setRolls(ev.Opening, a.Rolls, l)
	case ev.PerRoll != nil:
		for i, x := range ev.PerRoll.Rolls {
			roller := dice.NewPerRoll(x.Seed, ev.PerRoll.MatchID, x.RollID, x.Second)
			_, blocks := dice.FromBlocks(func(k uint32) dice.Block { return roller.Block(0, k) })
			v.PerRolls = append(v.PerRolls, perRollRow{Index: i, Number: i + 1, RollID: x.RollID.String(), Commitment: hex.EncodeToString(x.Commitment[:]),
				Seal: dice.SealCode(x.Commitment), Seed: hex.EncodeToString(x.Seed[:]), Second: hex.EncodeToString(x.Second[:]),
				SecondFrom: text(l, "SecondFrom-"+x.SecondFrom), Dice: x.Dice.String(), DiceSVG: diceSVG(l, int(x.Dice[0]), int(x.Dice[1])), Counter: counters(blocks)})
		}
	}

	// The statement: what the Go verifier says about this very file, with
	// the keys the browser is given too (the log's and the platforms'), so
	// that the statement and the checks below it were made with the same
	// inputs.
	opt := p.statementOptions()
	rep := verifier.VerifyEvidence(ev, opt)
	switch {
	case opt.LogKey == nil:
		v.StatementNote = "StatementNoteNoKey"
	case opt.EmitterKeys != nil:
		v.StatementNote = "StatementNoteKeys"
	default:
		v.StatementNote = "StatementNote"
	}
	for _, m := range rep.Proves() {
		v.Proves = append(v.Proves, m.In(l))
	}
	for _, m := range rep.DoesNotProve() {
		v.NotProves = append(v.NotProves, m.In(l))
	}
	cat := verifier.MessageCatalog()
	v.ProvesHead, v.NotProvesHead = cat["HProves"].In(l), cat["HNotProves"].In(l)
	if rep.Exit() != 0 {
		// The checks by their titles, their names as identifiers: the
		// summary's list of names is zarlog-verify's words for a terminal.
		v.FailNote = cat["SuFailNote"].In(l)
		titles := verifier.CheckTitles()
		for _, name := range rep.Failed() {
			v.Failed = append(v.Failed, failedCheck{Title: titles[name].In(l), Name: name})
		}
	}
	prog, err := PythonChecker(ev)
	if err != nil {
		return err
	}
	v.Python = string(prog)
	return nil
}

// statementOptions are the inputs of the statement on a game page: the
// log's key and the platforms' keys, the ones the page hands to the browser,
// and the log's witness policy, which the browser fetches (a quorum not met
// yet is not a failure: WitnessesPending). A key or a policy that does not
// parse is left out, as the browser would refuse it.
func (p *Pages) statementOptions() verifier.Options {
	opt := verifier.Options{}
	if p.cfg.Witness != nil {
		if text := p.cfg.Witness.Policy(); text != nil {
			if pol, err := merkle.ParsePolicy(text); err == nil {
				opt.WitnessPolicy, opt.WitnessesPending = pol, true
			}
		}
	}
	if p.cfg.LogKey != "" {
		if k, err := verifier.ParseLogKey(p.cfg.LogKey); err == nil {
			opt.LogKey = k
		}
	}
	if keys := p.emitterKeys(); len(keys) > 0 {
		if k, err := verifier.ParseEmitterKeys(keys...); err == nil {
			opt.EmitterKeys = k
		}
	}
	return opt
}

// emitterKeys returns the emitters' keys the pages hand to the browser.
func (p *Pages) emitterKeys() []string {
	if p.cfg.EmitterKeysFunc != nil {
		return p.cfg.EmitterKeysFunc()
	}
	return p.cfg.EmitterKeys
}

// counters lists the block counters a roll used: "0" almost always.
func counters(blocks uint32) string {
	if blocks <= 1 {
		return "0"
	}
	return fmt.Sprintf("0–%d", blocks-1)
}

func (v *gameView) setSeal(c [32]byte, label string) {
	v.Seal = dice.SealCode(c)
	v.Commitment = hex.EncodeToString(c[:])
	v.CommitLabel = label
	// Generated from numbers only, and a label of ours: no user text.
	v.Badge = template.HTML(strings.Replace(Badge(c), `role="img"`,
		`role="img" aria-label="`+template.HTMLEscapeString(text(v.Lang, "TileLabel", v.Seal))+`"`, 1))
}

// setRolls fills the roll table of a per-game scheme, with who played each
// roll (Rollers): both players' dice of an opening roll, the starter's
// re-roll, the turns in alternation.
func (v *gameView) setRolls(o dice.Opening, rolls []dice.Roll, l verifier.Lang) {
	v.PerGame = true
	who := Rollers(o, rolls)
	for i, x := range rolls {
		row := rollRow{Index: i, N: x.N, Number: x.N + 1, Kind: text(l, "Kind-"+string(x.Kind)), Dice: x.Dice.String(),
			DiceSVG: diceSVG(l, int(x.Dice[0]), int(x.Dice[1]))}
		switch {
		case i >= len(who):
			// out of sequence: the verifier says so
		case who[i] < 0:
			row.Player = text(l, "OpeningPlayers", seatLabel(l, v.Names, 0), x.Dice[0], seatLabel(l, v.Names, 1), x.Dice[1])
			row.DiceSVG = openingSVG(l, row.Player, int(x.Dice[0]), int(x.Dice[1]))
		default:
			row.Player = seatLabel(l, v.Names, who[i])
		}
		v.Rolls = append(v.Rolls, row)
	}
}

// inPlayView fills v from the events of a game that has no bundle yet: the
// seal from its commit, the rolls logged so far.
func inPlayView(v *gameView, leaves [][]byte, l verifier.Lang) error {
	v.EventsLogged = len(leaves)
	var opening dice.Opening = dice.OpeningWestern
	var rolls []dice.Roll
	for i, leaf := range leaves {
		ev, err := events.Parse(leaf)
		if err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
		v.Scheme = string(ev.Scheme)
		switch b := ev.Body.(type) {
		case events.TavlarenaCommit:
			v.setSeal(b.Commitment, "Commitment")
			opening, _ = dice.OpeningOf(b.Settings)
			v.describe(l, b.Settings, ev.Time, time.Time{})
			v.Seats = GameSummary{Emitter: ev.Emitter, Seats: b.Seats, HasSeats: true}
			v.hideNames()
		case events.AnchoredCommit:
			v.setSeal(b.Fingerprint, "Fingerprint")
			opening, _ = dice.OpeningOf(b.Settings)
			v.describe(l, b.Settings, ev.Time, time.Time{})
			v.Seats = GameSummary{Emitter: ev.Emitter}
			v.hideNames()
		case events.PerRollCommit:
			v.describe(l, b.Settings, ev.Time, time.Time{})
			v.Seats = GameSummary{Emitter: ev.Emitter}
			v.hideNames()
		case events.Roll:
			rolls = append(rolls, dice.Roll{N: b.N, Dice: b.Dice, Kind: b.Kind})
		case events.RollCommit:
			v.PerRolls = append(v.PerRolls, perRollRow{Index: len(v.PerRolls), Number: len(v.PerRolls) + 1, RollID: b.RollID.String(),
				Commitment: hex.EncodeToString(b.Commitment[:]), Seal: dice.SealCode(b.Commitment), Counter: "0"})
		case events.RollSecond:
			if k := len(v.PerRolls) - 1; k >= 0 {
				v.PerRolls[k].Second, v.PerRolls[k].SecondFrom = hex.EncodeToString(b.Second[:]), text(l, "SecondFrom-"+string(b.SecondFrom))
			}
		case events.RollReveal:
			if k := len(v.PerRolls) - 1; k >= 0 {
				v.PerRolls[k].Seed, v.PerRolls[k].Dice = hex.EncodeToString(b.Seed[:]), b.Dice.String()
				v.PerRolls[k].DiceSVG = diceSVG(l, int(b.Dice[0]), int(b.Dice[1]))
			}
		}
	}
	if v.Scheme != string(events.PerRoll) {
		v.setRolls(opening, rolls, l)
	}
	v.Result = text(l, "ResultInPlay")
	return nil
}

// Negotiate returns the page language: query (the ?lang= parameter) if it
// names one, else the first supported language of an Accept-Language
// header by its q-values, else English.
func Negotiate(query, acceptLanguage string) verifier.Lang {
	if l, ok := verifier.ParseLang(strings.ToLower(strings.TrimSpace(query))); ok {
		return l
	}
	best, bestQ := English, -1.0
	for i, part := range strings.Split(acceptLanguage, ",") {
		if i >= 32 {
			break // a header is not a place for long lists
		}
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		prim, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		l, ok := verifier.ParseLang(prim)
		if !ok {
			continue
		}
		q := 1.0
		if k, val, found := strings.Cut(strings.TrimSpace(params), "="); found && strings.TrimSpace(k) == "q" {
			q = parseQ(strings.TrimSpace(val))
		}
		if q > bestQ && q > 0 {
			best, bestQ = l, q
		}
	}
	return best
}

// parseQ parses an HTTP quality value (0 to 1, at most three decimals); an
// invalid one counts as 0.
func parseQ(s string) float64 {
	if s == "" || len(s) > 5 {
		return 0
	}
	var q float64
	switch s[0] {
	case '0':
		q = 0
	case '1':
		q = 1
	default:
		return 0
	}
	if len(s) == 1 {
		return q
	}
	if s[1] != '.' {
		return 0
	}
	scale := 0.1
	for _, c := range s[2:] {
		if c < '0' || c > '9' {
			return 0
		}
		q += float64(c-'0') * scale
		scale /= 10
	}
	if q > 1 {
		return 0
	}
	return q
}
