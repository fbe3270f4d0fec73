package publisher

// This file serves /players/{emitter}/{id}: the games one platform (an
// emitter) logged with one seat id, and the honest answer to "are the dice
// against me?" over all of them: the player's doubles, faces and 36 rolls,
// and the chances they needed, each against what fair dice give and
// against the same numbers for their opponents, with plain words and with
// "too few rolls to tell" where that is the truth.
//
// A seat id belongs to the platform that logged it. Seat ids are public
// (every tavlarena-v1 bundle holds its two), so any emitter can log games
// with anyone's id; those games count on that emitter's page of the id,
// never on another's: the index is by emitter (Store.GamesOf), and every
// number and the name in the heading come from the page's emitter's games
// alone. /players/{id}, the address before pages were per platform, goes
// to the one platform's page, or lists the platforms when there are
// several.

import (
	"html/template"
	"net/http"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/verifier"
)

// PlayerDice are a player's dice over their games, beside their opponents'.
type PlayerDice struct {
	Games      int // games counted
	NeedGames  int // of them, games whose chances were counted
	Me, Others SeatDice
	// Name is the label the platform gave the player in their last game
	// ("" if none).
	Name string
}

// CountPlayer sums the dice of emitter's seat id over rows (rows of
// emitter's games that have id among their seats; others, another
// emitter's among them, are skipped).
func CountPlayer(emitter string, id dice.UUID, rows []GameRow) PlayerDice {
	var out PlayerDice
	for _, r := range rows {
		if !r.HasSeats || r.Emitter != emitter {
			continue
		}
		for seat := range 2 {
			if r.Seats[seat] != id {
				continue
			}
			out.Games++
			if r.Dice.NeedsCounted {
				out.NeedGames++
			}
			out.Me.add(r.Dice.Seats[seat])
			out.Others.add(r.Dice.Seats[1-seat])
			if out.Name == "" {
				out.Name = r.Names[seat]
			}
			break // a player on both seats counts once, as seat 0
		}
	}
	return out
}

// A statRow is one line of the comparison: a number for the player and
// for the opponents, each with the fair range and a verdict.
type statRow struct {
	Name        string
	Fair        string
	Me, Others  statCell
	Explanation string
}

type statCell struct {
	Value   string // "41 of 250 (16.4%)"
	Range   string // "fair dice: 12.5%–21.0%"
	Say     string // the verdict, in words
	Verdict string // within, edge-high, edge-low, high, low, toofew (a CSS class)
}

var verdictClass = map[Verdict]string{TooFew: "toofew", Within: "within", EdgeHigh: "edge-high", EdgeLow: "edge-low", High: "high", Low: "low"}

func rateCell(l verifier.Lang, k, n uint64, p float64) statCell {
	v := RateVerdict(k, n, p)
	c := statCell{Verdict: verdictClass[v], Say: text(l, "Say-"+verdictClass[v])}
	if n == 0 {
		c.Value = text(l, "NoneYet")
		return c
	}
	c.Value = text(l, "KOfN", k, n, percent(l, float64(k)/float64(n), 1))
	if n >= MinRolls {
		lo, hi := Wilson(k, n)
		c.Range = text(l, "Interval", percent(l, lo, 1), percent(l, hi, 1))
	}
	return c
}

func needCell(l verifier.Lang, c NeedCount) statCell {
	v := NeedVerdict(c)
	out := statCell{Verdict: verdictClass[v], Say: text(l, "Say-"+verdictClass[v])}
	if c.Turns == 0 {
		out.Value = text(l, "NoneYet")
		return out
	}
	out.Value = text(l, "CameOf", c.Came, c.Turns)
	lo, hi := NeedRange(c)
	out.Range = text(l, "FairCame", number(l, c.Expected, 1), number(l, lo, 0), number(l, hi, 0))
	return out
}

type playerView struct {
	base
	ID          string
	Emitter     string
	EmitterLTR  string // Emitter in a left-to-right isolate, for a sentence
	Name        string
	Dice        PlayerDice
	More        bool
	Rows        []statRow
	NeedRows    []statRow
	Games       []gameItem
	MeFaces     template.HTML
	OtherFaces  template.HTML
	MeMatrix    template.HTML
	OtherMatrix template.HTML
	Summary     string
	ChiFaces    string // a chi-square line for the player's faces, or why there is none
}

// playerPage serves /players/{emitter}/{id}.
func (p *Pages) playerPage(w http.ResponseWriter, r *http.Request) {
	l := Negotiate(r.URL.Query().Get("lang"), r.Header.Get("Accept-Language"))
	emitter := r.PathValue("emitter")
	id, err := dice.ParseUUID(r.PathValue("id"))
	if err != nil || !events.ValidEmitter(emitter) || p.cfg.Index == nil {
		p.notFound(w, r, l)
		return
	}
	ctx := r.Context()
	refs, err := p.cfg.Index.GamesOf(ctx, emitter, id, MaxPlayerGames+1)
	if err != nil {
		p.log.Error("pages: listing a player's games", "err", err)
		http.Error(w, "cannot list the games", http.StatusInternalServerError)
		return
	}
	if len(refs) == 0 {
		// Not this platform's player: say so, and where the id is.
		emitters, err := p.cfg.Index.EmittersOf(ctx, id, MaxPlatforms)
		if err != nil {
			p.log.Error("pages: listing a player's platforms", "err", err)
			http.Error(w, "cannot list the games", http.StatusInternalServerError)
			return
		}
		p.platforms(w, r, l, id, emitter, emitters)
		return
	}
	v := &playerView{ID: id.String(), Emitter: emitter, EmitterLTR: ltr(unbroken(emitter))}
	if len(refs) > MaxPlayerGames {
		refs, v.More = refs[:MaxPlayerGames], true
	}
	var rows []GameRow
	for _, ref := range refs {
		row, err := p.cfg.Index.Row(ctx, ref.Game)
		if err != nil {
			continue // a store being rebuilt: the game is counted once it is back
		}
		row.Names = p.cfg.HiddenNames.shown(row.GameSummary)
		rows = append(rows, row)
		if len(v.Games) < 50 {
			v.Games = append(v.Games, p.item(l, row))
		}
	}
	v.Dice = CountPlayer(emitter, id, rows)
	v.Name = v.Dice.Name
	if v.Name == "" {
		v.Name = text(l, "PlayerAnon")
	}
	v.base = p.base(r, l, "PlayerTitle", isolate(v.Name))
	v.fill(l)
	p.render(w, http.StatusOK, "player.tmpl", v)
}

// playerByID serves /players/{id}, the address of a player page before
// pages were per platform: a redirect to the page of the one platform
// that logged the id, a list of the platforms when several did, and a 404
// that says where player pages are when none did.
func (p *Pages) playerByID(w http.ResponseWriter, r *http.Request) {
	l := Negotiate(r.URL.Query().Get("lang"), r.Header.Get("Accept-Language"))
	id, err := dice.ParseUUID(r.PathValue("id"))
	if err != nil || p.cfg.Index == nil {
		p.notFound(w, r, l)
		return
	}
	emitters, err := p.cfg.Index.EmittersOf(r.Context(), id, MaxPlatforms)
	if err != nil {
		p.log.Error("pages: listing a player's platforms", "err", err)
		http.Error(w, "cannot list the games", http.StatusInternalServerError)
		return
	}
	if len(emitters) == 1 {
		// Found, not moved for good: another platform may log the id later.
		http.Redirect(w, r, playerPath(emitters[0], id)+"?lang="+string(l), http.StatusFound)
		return
	}
	p.platforms(w, r, l, id, "", emitters)
}

type platformsView struct {
	base
	ID        string
	Text      string // what the page says of the id
	Platforms []platformLink
}

type platformLink struct{ Emitter, Href string }

// platforms writes the page that lists the platforms that logged games
// with seat id id: 200 when the id was asked for without a platform and
// several have it, 404 when none has it or missing, the platform asked
// for, does not.
func (p *Pages) platforms(w http.ResponseWriter, r *http.Request, l verifier.Lang, id dice.UUID, missing string, emitters []string) {
	v := &platformsView{ID: id.String()}
	for _, e := range emitters {
		v.Platforms = append(v.Platforms, platformLink{Emitter: e, Href: playerPath(e, id) + "?lang=" + string(l)})
	}
	status := http.StatusNotFound
	switch {
	case missing != "":
		v.base = p.base(r, l, "PlatformMissingTitle")
		v.Text = text(l, "PlatformMissing", ltr(unbroken(missing)), ltr(v.ID))
		if len(emitters) > 0 {
			v.Text += " " + text(l, "PlatformOthers", len(emitters))
		}
	case len(emitters) == 0:
		v.base = p.base(r, l, "PlatformNoneTitle")
		v.Text = text(l, "PlatformNone", ltr(v.ID))
	default:
		status = http.StatusOK
		v.base = p.base(r, l, "PlatformsTitle")
		v.Text = text(l, "PlatformsIntro", len(emitters), ltr(v.ID))
	}
	p.render(w, status, "platforms.tmpl", v)
}

// fill computes the comparison rows and plots of v.Dice.
func (v *playerView) fill(l verifier.Lang) {
	me, them := v.Dice.Me, v.Dice.Others
	v.Rows = append(v.Rows, statRow{Name: text(l, "RowDoubles"), Fair: percent(l, 1.0/6, 1),
		Me: rateCell(l, me.Played.Doubles(), me.Played.Total(), 1.0/6), Others: rateCell(l, them.Played.Doubles(), them.Played.Total(), 1.0/6),
		Explanation: text(l, "RowDoublesWhy")})
	sixes := func(s SeatDice) (uint64, uint64) {
		f := s.Played.Faces()
		n := 2 * s.Played.Total()
		for i, x := range s.Opening {
			f[i] += x
			n += x
		}
		return f[5], n
	}
	k1, n1 := sixes(me)
	k2, n2 := sixes(them)
	v.Rows = append(v.Rows, statRow{Name: text(l, "RowSixes"), Fair: percent(l, 1.0/6, 1),
		Me: rateCell(l, k1, n1, 1.0/6), Others: rateCell(l, k2, n2, 1.0/6), Explanation: text(l, "RowSixesWhy")})
	for _, need := range Needs() {
		v.NeedRows = append(v.NeedRows, statRow{Name: text(l, "Need-"+need.String()),
			Me: needCell(l, me.Needs[need]), Others: needCell(l, them.Needs[need]), Explanation: text(l, "Need-"+need.String()+"-why")})
	}
	v.MeFaces, v.OtherFaces = template.HTML(facesSVG(me.Played, l)), template.HTML(facesSVG(them.Played, l))
	v.MeMatrix, v.OtherMatrix = template.HTML(matrixSVG(me.Played, l)), template.HTML(matrixSVG(them.Played, l))
	if n := 2 * me.Played.Total(); ChiSquareOK(n, 6) {
		c := testsOf(me.Played).Faces
		v.ChiFaces = text(l, "ChiFaces", number(l, c.Stat, 2), c.DF, number(l, c.P, 3))
	} else {
		v.ChiFaces = text(l, "ChiTooFew", n, MinExpected*6)
	}
	v.Summary = v.verdict(l)
}

// verdict is the one-paragraph answer at the top of the player page.
func (v *playerView) verdict(l verifier.Lang) string {
	rolls := v.Dice.Me.Played.Total()
	if rolls < MinRolls {
		return text(l, "PlayerTooFew", rolls, MinRolls)
	}
	off, edge, judged := 0, 0, 0
	for _, r := range append(append([]statRow{}, v.Rows...), v.NeedRows...) {
		switch r.Me.Verdict {
		case "high", "low":
			off++
			judged++
		case "edge-high", "edge-low":
			edge++
			judged++
		case "within":
			judged++
		}
	}
	switch {
	case off == 0 && edge == 0:
		return text(l, "PlayerWithin", rolls, v.Dice.Games)
	case off == 0:
		return text(l, "PlayerEdge", rolls, v.Dice.Games, edge, judged)
	}
	return text(l, "PlayerSomeOff", rolls, v.Dice.Games, off, judged)
}
